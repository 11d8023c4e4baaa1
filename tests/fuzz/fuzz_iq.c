/*
 * fuzz_iq.c - fuzzes what the daemon does with an IQ cube message (kind 3)
 * from the network (form.input = iq).
 *
 * Contract: the input is split into a multipart message (fuzz_parts_split:
 * part 0 the header, the rest the payload parts) and goes through the
 * receive stage's checks in its order (pipeline/stage_receive.c,
 * docs/protocol.md "What a receiver must reject"): protocol_header_decode,
 * the kind, protocol_iq_check_sizes (with a 1 MiB maximum),
 * protocol_check_crc, then (cf32_le only) protocol_check_finite.
 *
 * Invariants: a decoded header re-encodes to the same 64 bytes
 * (fuzz_message_split); a decoded IQ header is bad_kind to a covariance
 * receiver, has a known format and layout and a finite scale > 0, and meets
 * a configuration made of its own fields; an accepted message's parts add
 * up to payload_bytes = channels * pulses * gates * sample bytes, in one
 * part or one equal part per index of the layout's slowest dimension; an
 * accepted CRC matches the payload's CRC32C (both implementations).
 */
#include <math.h>

#include "fuzz_support.h"
#include "protocol.h"

#define FUZZ_MAX_PAYLOAD_BYTES (1u << 20)

/* Checks the sizes of a message that passed protocol_iq_check_sizes. */
static void require_sizes_add_up(const protocol_header *h, const size_t *part_bytes, size_t parts)
{
    size_t cube = protocol_iq_cube_bytes(h->n, h->count, h->gates, h->element), sum = 0;
    uint32_t slices = protocol_iq_parts(h);
    FUZZ_REQUIRE(cube > 0 && slices > 0, "accepted sizes of an empty cube");
    FUZZ_REQUIRE(parts == 1 || parts == slices, "accepted a part count neither 1 nor the slowest dimension");
    for (size_t i = 0; i < parts; i++) {
        FUZZ_REQUIRE(parts == 1 || part_bytes[i] * slices == cube, "a slice part of another size");
        sum += part_bytes[i];
    }
    FUZZ_REQUIRE(sum == h->payload_bytes && sum == cube, "parts do not sum to the cube's bytes");
    FUZZ_REQUIRE(sum <= FUZZ_MAX_PAYLOAD_BYTES, "accepted a payload over the maximum");
}

/* The header invariants of a decoded IQ header. */
static void require_header(const protocol_header *h, const uint8_t *part0, size_t part0_bytes)
{
    FUZZ_REQUIRE(protocol_iq_sample_bytes(h->element) > 0, "decoded an unknown sample format");
    FUZZ_REQUIRE(protocol_iq_parts(h) == (h->storage == PROTOCOL_IQ_CPG ? h->n : h->count) &&
                     h->storage <= PROTOCOL_IQ_PGC, "decoded an unknown layout");
    FUZZ_REQUIRE(isfinite(h->scale) && h->scale > 0.0f, "decoded a scale that is not finite and > 0");
    FUZZ_REQUIRE(!(h->flags & PROTOCOL_FLAG_LATE), "decoded LATE on an IQ frame");
    FUZZ_REQUIRE(protocol_header_decode_kind(part0, part0_bytes, PROTOCOL_KIND_COVARIANCE, NULL) ==
                     PROTOCOL_REJECT_KIND, "an IQ header is not bad_kind to a covariance receiver");
    FUZZ_REQUIRE(protocol_iq_check_config(h, h->n, h->count, h->gates, h->element, h->storage) == PROTOCOL_OK,
                 "a header does not meet the configuration of its own fields");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[FUZZ_PARTS_MAX];
    size_t part_bytes[FUZZ_PARTS_MAX];
    protocol_header h;
    size_t parts = fuzz_message_split(data, size, part, part_bytes, &h, PROTOCOL_KIND_IQ);
    if (parts == 0)
        return 0;
    require_header(&h, part[0], part_bytes[0]);

    if (!fuzz_payload_accepted(&h, part, part_bytes, parts, FUZZ_MAX_PAYLOAD_BYTES, protocol_iq_check_sizes,
                               require_sizes_add_up))
        return 0;
    for (size_t i = 1; h.element == PROTOCOL_IQ_CF32_LE && i < parts; i++)
        if (protocol_check_finite(part[i], part_bytes[i], EIG_COMPLEX_FLOAT) != PROTOCOL_OK)
            return 0;
    return 0;
}
