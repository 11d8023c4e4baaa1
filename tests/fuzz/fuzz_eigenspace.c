/*
 * fuzz_eigenspace.c - fuzzes what a client (eigstream-sink, the Python
 * client's C twin) does with an eigenspace message from the daemon.
 *
 * Contract: the input is split into a multipart message (fuzz_parts_split:
 * header, meta, data) and goes through eigstream-sink's checks in its order
 * (tools/sink/sink_main.c handle_frame, which has no pure function of its
 * own, so the protocol functions it calls are called here):
 * protocol_header_decode, the kind, protocol_meta_decode,
 * protocol_eigenspace_check_sizes (with a 1 MiB maximum), protocol_check_crc,
 * and per matrix protocol_matrix_meta_check, protocol_mode_layout.
 *
 * Invariants: a decoded header and meta re-encode to the same bytes; an
 * accepted frame's data part holds exactly the sum of
 * protocol_eigenspace_matrix_bytes over its matrices; each accepted matrix's
 * k_sent and first_index are the ones protocol_mode_layout gives and its
 * vectors stay inside the n eigenvalues.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "protocol.h"

#define FUZZ_MAX_PAYLOAD_BYTES (1u << 20)

/* Checks an accepted frame's matrices against the mode and the data part. */
static void require_accepted_layout(const protocol_header *h, const protocol_matrix_meta *m, size_t data_bytes)
{
    size_t sum = 0;
    for (uint32_t b = 0; b < h->count; b++) {
        uint32_t k_sent, first_index;
        FUZZ_REQUIRE(protocol_matrix_meta_check(h->n, h->mode, &m[b]) == PROTOCOL_OK,
                     "an accepted matrix fails its meta check");
        FUZZ_REQUIRE(protocol_mode_layout(h->mode, h->n, m[b].signal_dim, &k_sent, &first_index) == 0,
                     "an accepted frame's mode has no layout");
        FUZZ_REQUIRE(k_sent == m[b].k_sent && first_index == m[b].first_index,
                     "accepted k_sent/first_index differ from the mode's layout");
        FUZZ_REQUIRE((uint64_t)first_index + k_sent <= h->n, "accepted vectors past the n eigenvalues");
        sum += protocol_eigenspace_matrix_bytes(h->n, h->element, m[b].k_sent);
    }
    FUZZ_REQUIRE(sum == data_bytes, "the data part is not the sum of the matrices' bytes");
    FUZZ_REQUIRE(protocol_meta_bytes(h->count) + sum == h->payload_bytes, "parts do not sum to payload_bytes");
}

/* Decodes the meta part (count entries, when its size fits) and checks that
 * it re-encodes to the same bytes. Returns the meta (caller frees) or NULL. */
static protocol_matrix_meta *meta_decode(const protocol_header *h, const uint8_t *part, size_t bytes)
{
    /* Only a meta part of the right size can decode: allocating for count
     * before knowing that would let one header ask for 64 GiB. */
    if (bytes != protocol_meta_bytes(h->count))
        return NULL;
    protocol_stage_times t;
    protocol_matrix_meta *m = malloc(((size_t)h->count + 1) * sizeof *m);
    uint8_t *again = malloc(bytes);
    if (m != NULL && again != NULL && protocol_meta_decode(part, bytes, h->count, &t, m) == PROTOCOL_OK) {
        protocol_meta_encode(&t, m, h->count, again);
        FUZZ_REQUIRE(memcmp(again, part, bytes) == 0, "a decoded meta does not re-encode to the same bytes");
        free(again);
        return m;
    }
    free(again);
    free(m);
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[FUZZ_PARTS_MAX];
    size_t part_bytes[FUZZ_PARTS_MAX];
    protocol_header h;
    size_t parts = fuzz_message_split(data, size, part, part_bytes, &h, PROTOCOL_KIND_EIGENSPACE);
    if (parts < 2)
        return 0;

    protocol_matrix_meta *m = meta_decode(&h, part[1], part_bytes[1]);
    if (m == NULL)
        return 0;
    const void *payload[FUZZ_PARTS_MAX];
    for (size_t i = 1; i < parts; i++)
        payload[i - 1] = part[i];
    if (protocol_eigenspace_check_sizes(&h, m, part_bytes + 1, parts - 1, FUZZ_MAX_PAYLOAD_BYTES) == PROTOCOL_OK) {
        require_accepted_layout(&h, m, part_bytes[2]);
        uint32_t crc = protocol_payload_crc32c(payload, part_bytes + 1, 2);
        protocol_reject r = protocol_check_crc(&h, payload, part_bytes + 1, 2);
        FUZZ_REQUIRE((r == PROTOCOL_OK) == (!(h.flags & PROTOCOL_FLAG_CRC) || crc == h.crc32c),
                     "protocol_check_crc disagrees with the payload's CRC32C");
    }
    free(m);
    return 0;
}
