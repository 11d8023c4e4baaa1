/*
 * protocol_test_header.h - the frame headers that the protocol tests, the
 * parts tool and the fuzz corpus generator build: the fields every kind
 * shares, and the payload size and CRC of a frame's parts.
 *
 *     protocol_header h = test_header(PROTOCOL_KIND_COVARIANCE, 4, 2, EIG_COMPLEX_FLOAT);
 *     h.storage = PROTOCOL_STORAGE_FULL;
 *     test_header_payload(&h, part, part_bytes, parts, 1);
 */
#ifndef EIGSTREAM_TEST_PROTOCOL_HEADER_H
#define EIGSTREAM_TEST_PROTOCOL_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

/* A header of kind as protocol_header_init makes it, with n (the matrix
 * order, or IQ channels), count (matrices, or IQ pulses) and element (the
 * precision, or the IQ sample format) set. */
static inline protocol_header test_header(protocol_kind kind, uint32_t n, uint32_t count, uint8_t element)
{
    protocol_header h;
    protocol_header_init(&h, kind);
    h.n = n;
    h.count = count;
    h.element = element;
    return h;
}

/* Marks h a fragment: the matrices [first, first + matrices) of its frame. */
static inline void test_header_fragment(protocol_header *h, uint32_t first, uint32_t matrices)
{
    h->flags |= PROTOCOL_FLAG_FRAGMENT;
    h->fragment_first = first;
    h->fragment_matrices = matrices;
}

/* Sets h's payload_bytes to the parts' total and, with crc, the CRC flag and
 * the parts' CRC32C (protocol_payload_crc32c); without crc neither is set. */
static inline void test_header_payload(protocol_header *h, const void *const *part, const size_t *part_bytes,
                                       size_t parts, int crc)
{
    h->payload_bytes = 0;
    for (size_t i = 0; i < parts; i++)
        h->payload_bytes += part_bytes[i];
    if (crc) {
        h->flags |= PROTOCOL_FLAG_CRC;
        h->crc32c = protocol_payload_crc32c(part, part_bytes, parts);
    }
}

#endif
