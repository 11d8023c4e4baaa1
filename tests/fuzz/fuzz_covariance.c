/*
 * fuzz_covariance.c - fuzzes what the daemon does with a covariance message
 * from the network.
 *
 * Contract: the input is split into a multipart message (fuzz_parts_split:
 * part 0 the header, the rest the payload parts) and goes through the
 * receive stage's checks in its order (pipeline/stage_receive.c,
 * docs/protocol.md "What a receiver must reject"): protocol_header_decode,
 * the kind, protocol_covariance_check_sizes (with a 1 MiB maximum),
 * protocol_check_crc, then protocol_check_finite over the payload.
 *
 * Invariants: a decoded header re-encodes to the same 64 bytes; an accepted
 * message's part sizes add up to payload_bytes = matrices * matrix bytes, in
 * one part or one matrix per part (matrices: count, or a fragment's own,
 * which lies within the frame); the SSE4.2 and table CRC32C agree; an
 * accepted CRC matches the payload's CRC32C.
 */
#include "fuzz_support.h"
#include "protocol.h"

#define FUZZ_MAX_PAYLOAD_BYTES (1u << 20)

/* Checks the sizes of a message that passed protocol_covariance_check_sizes. */
static void require_sizes_add_up(const protocol_header *h, const size_t *part_bytes, size_t parts)
{
    size_t matrix = protocol_matrix_bytes(h->n, h->element, h->storage), sum = 0;
    uint32_t matrices = protocol_covariance_matrices(h);
    FUZZ_REQUIRE(matrix > 0 && h->count > 0 && matrices > 0, "accepted sizes of an empty matrix or frame");
    if (h->flags & PROTOCOL_FLAG_FRAGMENT)
        FUZZ_REQUIRE((uint64_t)h->fragment_first + matrices <= h->count, "accepted a fragment past its frame's end");
    for (size_t i = 0; i < parts; i++) {
        FUZZ_REQUIRE(parts == 1 || part_bytes[i] == matrix, "a per-matrix part of another size");
        sum += part_bytes[i];
    }
    FUZZ_REQUIRE(parts == 1 || parts == matrices, "accepted a part count neither 1 nor the matrices");
    FUZZ_REQUIRE(sum == h->payload_bytes, "parts do not sum to payload_bytes");
    FUZZ_REQUIRE(h->payload_bytes == (uint64_t)matrices * matrix, "payload_bytes is not matrices * matrix bytes");
    FUZZ_REQUIRE(sum <= FUZZ_MAX_PAYLOAD_BYTES, "accepted a payload over the maximum");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[FUZZ_PARTS_MAX];
    size_t part_bytes[FUZZ_PARTS_MAX];
    protocol_header h;
    size_t parts = fuzz_message_split(data, size, part, part_bytes, &h, PROTOCOL_KIND_COVARIANCE);
    if (parts == 0)
        return 0;

    if (!fuzz_payload_accepted(&h, part, part_bytes, parts, FUZZ_MAX_PAYLOAD_BYTES, protocol_covariance_check_sizes,
                               require_sizes_add_up))
        return 0;
    for (size_t i = 1; i < parts; i++)
        if (protocol_check_finite(part[i], part_bytes[i], h.element) != PROTOCOL_OK)
            return 0;
    return 0;
}
