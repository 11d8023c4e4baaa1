/*
 * fuzz_merge_input.c - fuzzes eigstream-merge's input parser: what a daemon
 * (or anyone who reaches a merge input) sends, before it may enter the
 * reorder window.
 *
 * Contract: the input is split into a multipart message (fuzz_parts_split),
 * each part copied into a zmq_msg_t as cli_message_receive_bounded would
 * hold it, and checked by merge_frame_check (tools/merge/merge_check.c, the
 * merge's own code) with a 1 MiB --max-bytes. The merge's scratch meta
 * buffer is kept across inputs, as the merge keeps it across frames.
 *
 * Invariants of an accepted frame: exactly three parts; the header decodes
 * as an eigenspace frame and re-encodes to the same 64 bytes; the meta part
 * is protocol_meta_bytes(count) long and re-encodes to the same bytes; every
 * matrix's k_sent and first_index are the mode's layout; the data part is
 * the sum of the matrices' bytes and the two parts sum to payload_bytes,
 * within --max-bytes; a frame with the CRC flag carries the payload's CRC32C
 * (both implementations, fuzz_payload_crc). A rejected one is never worse
 * than refused: no crash, no leak, the scratch buffer reusable.
 */
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "fuzz_support.h"
#include "merge.h"
#include "protocol.h"

#define FUZZ_MAX_BYTES (1 << 20)

static merger fuzz_merger; /* only the scratch meta and o.max_bytes are used */

static void require_accepted(const protocol_header *h, const uint8_t *const *part, const size_t *part_bytes)
{
    uint8_t again[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(h, again);
    FUZZ_REQUIRE(memcmp(again, part[0], PROTOCOL_HEADER_BYTES) == 0, "an accepted header does not re-encode");
    FUZZ_REQUIRE(h->kind == PROTOCOL_KIND_EIGENSPACE, "an accepted frame is not an eigenspace frame");
    FUZZ_REQUIRE(part_bytes[1] == protocol_meta_bytes(h->count), "an accepted meta part has the wrong size");
    protocol_matrix_meta *m = malloc(((size_t)h->count + 1) * sizeof *m);
    uint8_t *meta = malloc(part_bytes[1] + 1);
    FUZZ_REQUIRE(m != NULL && meta != NULL, "out of memory");
    protocol_stage_times t;
    FUZZ_REQUIRE(protocol_meta_decode(part[1], part_bytes[1], h->count, &t, m) == PROTOCOL_OK,
                 "an accepted meta part does not decode");
    protocol_meta_encode(&t, m, h->count, meta);
    FUZZ_REQUIRE(memcmp(meta, part[1], part_bytes[1]) == 0, "an accepted meta part does not re-encode");
    size_t sum = 0;
    for (uint32_t b = 0; b < h->count; b++) {
        uint32_t k_sent, first_index;
        sum += protocol_eigenspace_matrix_layout(h->mode, h->n, h->element, m[b].signal_dim, &k_sent, &first_index);
        FUZZ_REQUIRE(k_sent == m[b].k_sent && first_index == m[b].first_index,
                     "an accepted matrix's k_sent/first_index are not the mode's layout");
    }
    FUZZ_REQUIRE(sum == part_bytes[2], "an accepted data part is not the sum of its matrices");
    FUZZ_REQUIRE(part_bytes[1] + part_bytes[2] == h->payload_bytes, "accepted parts do not sum to payload_bytes");
    FUZZ_REQUIRE(h->payload_bytes <= FUZZ_MAX_BYTES, "an accepted frame is over --max-bytes");
    const void *payload[2] = {part[1], part[2]};
    uint32_t crc = fuzz_payload_crc(payload, part_bytes + 1, 2);
    FUZZ_REQUIRE(!(h->flags & PROTOCOL_FLAG_CRC) || crc == h->crc32c, "an accepted frame's CRC32C is wrong");
    free(meta);
    free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[FUZZ_PARTS_MAX];
    size_t part_bytes[FUZZ_PARTS_MAX];
    size_t parts = fuzz_parts_split(data, size, part, part_bytes);
    zmq_msg_t msgs[FUZZ_PARTS_MAX];
    merge_frame f;
    memset(&f, 0, sizeof f);
    f.m.part = msgs;
    f.m.cap = FUZZ_PARTS_MAX;
    for (size_t i = 0; i < parts; i++) {
        FUZZ_REQUIRE(zmq_msg_init_size(&msgs[i], part_bytes[i]) == 0, "zmq_msg_init_size");
        if (part_bytes[i] > 0)
            memcpy(zmq_msg_data(&msgs[i]), part[i], part_bytes[i]);
        f.m.bytes += part_bytes[i];
    }
    f.m.count = parts;
    f.m.oversized = f.m.bytes > FUZZ_MAX_BYTES + PROTOCOL_HEADER_BYTES;
    fuzz_merger.o.max_bytes = FUZZ_MAX_BYTES;
    protocol_header h;
    if (merge_frame_check(&fuzz_merger, &f, &h) == PROTOCOL_OK) {
        FUZZ_REQUIRE(parts == 3, "an accepted frame has other than three parts");
        require_accepted(&h, part, part_bytes);
    }
    for (size_t i = 0; i < parts; i++)
        zmq_msg_close(&msgs[i]);
    return 0;
}
