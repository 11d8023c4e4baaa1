/*
 * test_receive_team.c - the receive stage's multi-threaded copy
 * (pipeline/receive_team.h) and protocol_crc32c_combine, against oracles
 * that share no code with them: a bit-at-a-time CRC32C from the polynomial
 * (tests/crc32c_bitwise.h; RFC 3720's check value "123456789" -> 0xE3069283
 * first),
 * memcmp with the parts laid end to end, and NaN/Inf planted at known
 * elements (the first and last, around every share boundary, in a part
 * split inside an element).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c_bitwise.h"
#include "eig.h"
#include "protocol.h"
#include "receive_team.h"
#include "test_check.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_combine(void)
{
    CHECK(crc32c_bitwise((const uint8_t *)"123456789", 9) == 0xE3069283u, "reference CRC32C check value");
    uint8_t buf[9000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rng_next();
    const size_t cuts[] = {0, 1, 3, 8, 255, 4096, 8999, 9000};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        size_t k = cuts[c];
        uint32_t joined = protocol_crc32c_combine(protocol_crc32c(0, buf, k), protocol_crc32c(0, buf + k, 9000 - k),
                                                  9000 - k);
        CHECK(joined == crc32c_bitwise(buf, 9000), "combine at %zu: %08x", k, joined);
    }
}

/* A payload of doubles cut into parts of random sizes (some empty, some not
 * a multiple of 8), the parts' bytes copied out of one source buffer. */
typedef struct payload {
    uint8_t *bytes;
    size_t total;
    receive_part parts[64];
    size_t count;
} payload;

static void payload_make(payload *p, size_t total)
{
    p->total = total;
    p->bytes = malloc(total);
    double *d = (double *)p->bytes;
    for (size_t i = 0; i < total / 8; i++)
        d[i] = (double)(rng_next() % 1000000) - 5e5;
    size_t at = 0;
    p->count = 0;
    while (at < total && p->count < 63) {
        size_t n = rng_next() % 5 == 0 ? 0 : (size_t)(rng_next() % (total / 8 + 1)) + 3;
        if (n > total - at)
            n = total - at;
        p->parts[p->count++] = (receive_part){p->bytes + at, n};
        at += n;
    }
    p->parts[p->count++] = (receive_part){p->bytes + at, total - at};
}

static receive_verdict run(receive_team *t, const payload *p, uint8_t *dst, int crc)
{
    receive_job job = {.dst = dst, .parts = p->parts, .count = p->count, .total = p->total, .crc = crc,
                       .finite_as = EIG_COMPLEX_DOUBLE, .element = 8};
    memset(dst, 0xA5, p->total);
    return receive_team_run(t, &job);
}

static void test_copy(receive_team *t, size_t total, const char *what)
{
    payload p;
    payload_make(&p, total);
    uint8_t *dst = malloc(total);
    receive_verdict v = run(t, &p, dst, 1);
    CHECK(memcmp(dst, p.bytes, total) == 0, "%s: the copy differs from the parts end to end", what);
    CHECK(v.crc == crc32c_bitwise(p.bytes, total), "%s: crc %08x", what, v.crc);
    CHECK(v.finite == PROTOCOL_OK, "%s: finite payload rejected (%d)", what, (int)v.finite);
    v = run(t, &p, dst, 0);
    CHECK(v.crc == 0 && memcmp(dst, p.bytes, total) == 0, "%s: without the CRC", what);

    /* One NaN or Inf at a time: first, last, around each quarter and sixteenth. */
    size_t elements = total / 8, at[40], n = 0;
    at[n++] = 0;
    at[n++] = elements - 1;
    for (int q = 1; q < 16; q++)
        for (int d = -1; d <= 1; d++)
            if (n < 40)
                at[n++] = elements * (size_t)q / 16 + (size_t)(d + 1) - 1;
    for (size_t i = 0; i < n; i++) {
        double *d = (double *)p.bytes, saved = d[at[i]];
        d[at[i]] = i % 2 ? NAN : -INFINITY;
        v = run(t, &p, dst, 1);
        CHECK(v.finite == PROTOCOL_REJECT_NONFINITE, "%s: %s at element %zu of %zu not found", what,
              i % 2 ? "NaN" : "-Inf", at[i], elements);
        d[at[i]] = saved;
    }
    free(dst);
    free(p.bytes);
}

int main(void)
{
    test_combine();
    CHECK(receive_team_create(1) == NULL && receive_team_create(RECEIVE_TEAM_MAX + 1) == NULL,
          "a team of 1 or more than the maximum is refused");
    const int sizes[] = {2, 3, 4, 7};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        receive_team *t = receive_team_create(sizes[s]);
        CHECK(t != NULL && receive_team_threads(t) == sizes[s], "team of %d", sizes[s]);
        if (t == NULL)
            continue;
        char what[64];
        snprintf(what, sizeof what, "%d threads, 6 MB", sizes[s]);
        test_copy(t, (6u << 20) + 8 * 13, what);
        snprintf(what, sizeof what, "%d threads, below the team's threshold", sizes[s]);
        test_copy(t, 40000, what);
        for (int k = 0; k < 4; k++) /* the same team, job after job */
            test_copy(t, RECEIVE_TEAM_MIN_BYTES + 8 * (size_t)(rng_next() % 4096), "repeated jobs");
        receive_team_destroy(&t);
        CHECK(t == NULL, "destroy clears the handle");
    }
    test_copy(NULL, (5u << 20), "no team: the caller alone");
    receive_team *none = NULL;
    receive_team_destroy(&none); /* a no-op */
    return test_check_report("test_receive_team");
}
