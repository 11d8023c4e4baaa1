/*
 * crc32c_bitwise.h - the tests' oracle for CRC32C: the reflected polynomial
 * 0x82F63B78 applied one bit at a time, sharing nothing with the table and
 * SSE 4.2 versions it checks (protocol_crc32c) or with their combination.
 */
#ifndef EIGSTREAM_TEST_CRC32C_BITWISE_H
#define EIGSTREAM_TEST_CRC32C_BITWISE_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t crc32c_bitwise(const uint8_t *p, size_t bytes)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < bytes; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

#endif
