/*
 * test_protocol.c - unit tests of the wire protocol v1 codec (pipeline/protocol/protocol.c).
 *
 * Oracles: the published CRC32C check value and a bit-at-a-time reference
 * CRC (tests/crc32c_bitwise.h); hand-computed byte offsets and sizes from docs/protocol.md.
 * Every rejection reason is produced by a crafted message and its name checked.
 */
#include "protocol.h"
#include "crc32c_bitwise.h"
#include "protocol_test_header.h"
#include "test_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Expects reason `want` from `got`, naming both on failure. */
#define CHECK_REJECT(got, want, what)                                                     \
    do {                                                                                  \
        protocol_reject got_ = (got);                                                     \
        CHECK(got_ == (want), "%s: got %s, want %s", what, protocol_reject_name(got_),    \
              protocol_reject_name(want));                                                \
    } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void test_crc(void)
{
    const char *check = "123456789";
    CHECK(protocol_crc32c(0, check, 9) == 0xE3069283u, "crc32c(\"123456789\") = %08x", protocol_crc32c(0, check, 9));
    CHECK(protocol_crc32c_portable(0, check, 9) == 0xE3069283u, "portable = %08x",
          protocol_crc32c_portable(0, check, 9));
    CHECK(protocol_crc32c(0, NULL, 0) == 0, "empty crc");

    /* 32 zero bytes: the iSCSI (RFC 3720 B.4) test vector. */
    uint8_t zeros[32] = {0};
    CHECK(protocol_crc32c(0, zeros, 32) == 0x8A9136AAu, "32 zeros = %08x", protocol_crc32c(0, zeros, 32));

    /* Every alignment and tail length, one-shot and split, against the bitwise oracle. */
    enum { LEN = 1000 };
    uint8_t *buf = malloc(LEN + 8);
    CHECK(buf != NULL, "malloc");
    if (buf == NULL)
        return;
    for (size_t i = 0; i < LEN + 8; i++)
        buf[i] = (uint8_t)rng_u32();
    for (size_t off = 0; off < 8; off++) {
        for (size_t len = 0; len < 80; len++) {
            uint32_t want = crc32c_bitwise(buf + off, len);
            CHECK(protocol_crc32c(0, buf + off, len) == want, "off %zu len %zu", off, len);
            CHECK(protocol_crc32c_portable(0, buf + off, len) == want, "portable off %zu len %zu", off, len);
        }
        uint32_t want = crc32c_bitwise(buf + off, LEN);
        size_t split = 3 + 97 * off;
        uint32_t c = protocol_crc32c(0, buf + off, split);
        c = protocol_crc32c(c, buf + off + split, LEN - split);
        CHECK(c == want, "incremental off %zu: %08x vs %08x", off, c, want);
        c = protocol_crc32c_portable(0, buf + off, split);
        c = protocol_crc32c(c, buf + off + split, LEN - split);
        CHECK(c == want, "mixed incremental off %zu", off);
    }
    const void *parts[3] = {buf, buf + 10, buf + 500};
    size_t sizes[3] = {10, 490, 500};
    CHECK(protocol_payload_crc32c(parts, sizes, 3) == crc32c_bitwise(buf, LEN), "payload crc over parts");
    free(buf);
}

static void test_names(void)
{
    static const char *const want[PROTOCOL_REJECT_COUNT_] = {
        "ok",       "parts",         "header_size",     "bad_magic", "bad_version", "bad_kind",
        "bad_field", "size_mismatch", "config_mismatch", "truncated", "oversized",   "crc_mismatch",
        "nonfinite", "incomplete"};
    for (int r = 0; r < PROTOCOL_REJECT_COUNT_; r++)
        CHECK(strcmp(protocol_reject_name((protocol_reject)r), want[r]) == 0, "name %d = %s", r,
              protocol_reject_name((protocol_reject)r));
    CHECK(strcmp(protocol_reject_name(PROTOCOL_REJECT_COUNT_), "unknown") == 0, "out of range name");
    CHECK(strcmp(protocol_storage_name(PROTOCOL_STORAGE_PACKED_UPPER), "packed_upper") == 0, "storage name");
    CHECK(strcmp(protocol_mode_name(PROTOCOL_MODE_NOISE), "noise") == 0, "mode name");
    CHECK(strcmp(eig_precision_name(EIG_COMPLEX_FLOAT), "float") == 0, "element name");
}

static protocol_header sample_covariance(void)
{
    protocol_header h;
    protocol_header_init(&h, PROTOCOL_KIND_COVARIANCE);
    h.seq = 0x0102030405060708ull;
    h.timestamp_ns = 1763700000123456789ull;
    h.n = 128;
    h.count = 180;
    h.element = EIG_COMPLEX_DOUBLE;
    h.storage = PROTOCOL_STORAGE_PACKED_LOWER;
    h.flags = PROTOCOL_FLAG_CRC;
    h.payload_bytes = 180ull * 128 * 129 / 2 * 16;
    h.crc32c = 0xDEADBEEFu;
    h.snapshots = 256;
    return h;
}

/* A small valid eigenspace header (8 x 8 complex double, full mode). */
static protocol_header small_eigenspace(void)
{
    protocol_header e = test_header(PROTOCOL_KIND_EIGENSPACE, 8, 1, EIG_COMPLEX_DOUBLE);
    e.mode = PROTOCOL_MODE_FULL;
    return e;
}

/* A covariance header of count 4 x 4 complex float matrices, full storage,
 * no payload size set. */
static protocol_header small_covariance(uint32_t count)
{
    protocol_header h = test_header(PROTOCOL_KIND_COVARIANCE, 4, count, EIG_COMPLEX_FLOAT);
    h.storage = PROTOCOL_STORAGE_FULL;
    return h;
}

static void test_header_layout(void)
{
    protocol_header h = sample_covariance();
    uint8_t b[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&h, b);
    /* Offsets from docs/protocol.md, assembled here independently. */
    CHECK(memcmp(b, "EIGS", 4) == 0, "magic");
    CHECK(b[4] == 1 && b[5] == 1, "version, kind");
    CHECK(b[6] == 64 && b[7] == 0, "header_bytes");
    CHECK(b[8] == 0x08 && b[15] == 0x01, "seq little-endian");
    CHECK(b[24] == 128 && b[25] == 0 && b[28] == 180, "n, count");
    CHECK(b[32] == 2 && b[33] == 1 && b[34] == 0 && b[35] == 0, "element storage mode reserved");
    CHECK(b[36] == 1 && b[37] == 0, "flags");
    uint64_t pb = 0;
    for (int i = 0; i < 8; i++)
        pb |= (uint64_t)b[40 + i] << (8 * i);
    CHECK(pb == 23777280ull, "payload_bytes %llu", (unsigned long long)pb);
    CHECK(b[48] == 0xEF && b[51] == 0xDE, "crc");
    CHECK(b[52] == 0 && b[53] == 1, "snapshots 256");
    for (int i = 56; i < 64; i++)
        CHECK(b[i] == 0, "reserved byte %d", i);

    protocol_header d;
    CHECK_REJECT(protocol_header_decode(b, sizeof b, &d), PROTOCOL_OK, "round trip");
    CHECK((d.version == 1 && d.kind == 1 && d.header_bytes == 64 && d.seq == h.seq && d.timestamp_ns == h.timestamp_ns && d.n == h.n &&
                                            d.count == h.count && d.element == h.element &&
                                            d.storage == h.storage && d.flags == h.flags &&
                                            d.payload_bytes == h.payload_bytes && d.crc32c == h.crc32c &&
                                            d.snapshots == h.snapshots && d.mode == 0),
          "decoded fields differ");

    protocol_header e;
    protocol_header_init(&e, PROTOCOL_KIND_EIGENSPACE);
    e.n = 128;
    e.count = 2;
    e.element = EIG_COMPLEX_FLOAT;
    e.mode = PROTOCOL_MODE_NOISE;
    e.flags = PROTOCOL_FLAG_CRC | PROTOCOL_FLAG_LATE;
    protocol_header_encode(&e, b);
    CHECK(b[5] == 2 && b[34] == 4 && b[36] == 3, "eigenspace bytes");
    CHECK_REJECT(protocol_header_decode(b, sizeof b, &d), PROTOCOL_OK, "eigenspace round trip");
    CHECK(d.mode == PROTOCOL_MODE_NOISE && d.flags == 3 && d.kind == 2, "eigenspace fields");
}

/* Encodes h, applies one byte edit, decodes: the reason must be `want`. */
static void expect_header_reject(protocol_header h, int offset, uint8_t value, protocol_reject want,
                                 const char *what)
{
    uint8_t b[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&h, b);
    if (offset >= 0)
        b[offset] = value;
    protocol_header d;
    CHECK_REJECT(protocol_header_decode(b, sizeof b, &d), want, what);
}

static void test_header_rejects(void)
{
    protocol_header h = sample_covariance();
    protocol_header e = small_eigenspace();

    uint8_t b[PROTOCOL_HEADER_BYTES + 1] = {0};
    protocol_header_encode(&h, b);
    CHECK_REJECT(protocol_header_decode(b, 63, NULL), PROTOCOL_REJECT_HEADER_SIZE, "63-byte part");
    CHECK_REJECT(protocol_header_decode(b, 65, NULL), PROTOCOL_REJECT_HEADER_SIZE, "65-byte part");
    CHECK_REJECT(protocol_header_decode(NULL, 64, NULL), PROTOCOL_REJECT_HEADER_SIZE, "NULL part");
    expect_header_reject(h, 6, 65, PROTOCOL_REJECT_HEADER_SIZE, "header_bytes field 65");
    expect_header_reject(h, 0, 'X', PROTOCOL_REJECT_MAGIC, "magic XIGS");
    expect_header_reject(h, 3, 's', PROTOCOL_REJECT_MAGIC, "magic EIGs");
    expect_header_reject(h, 4, 2, PROTOCOL_REJECT_VERSION, "version 2");
    expect_header_reject(h, 4, 0, PROTOCOL_REJECT_VERSION, "version 0");
    expect_header_reject(h, 5, 0, PROTOCOL_REJECT_KIND, "kind 0");
    expect_header_reject(h, 5, 4, PROTOCOL_REJECT_KIND, "kind 4");
    expect_header_reject(h, 32, 0, PROTOCOL_REJECT_FIELD, "element 0");
    expect_header_reject(h, 32, 3, PROTOCOL_REJECT_FIELD, "element 3");
    expect_header_reject(h, 33, 3, PROTOCOL_REJECT_FIELD, "covariance storage 3");
    expect_header_reject(h, 34, 1, PROTOCOL_REJECT_FIELD, "covariance mode 1");
    expect_header_reject(h, 35, 1, PROTOCOL_REJECT_FIELD, "reserved0");
    expect_header_reject(h, 36, 1 | 16, PROTOCOL_REJECT_FIELD, "unknown flag bit 4");
    expect_header_reject(h, 39, 0x80, PROTOCOL_REJECT_FIELD, "unknown flag bit 31");
    expect_header_reject(h, 36, 2, PROTOCOL_REJECT_FIELD, "LATE on covariance");
    expect_header_reject(h, 36, 1 | 8, PROTOCOL_OK, "LOSSLESS on covariance");
    for (int i = 56; i < 64; i++)
        expect_header_reject(h, i, 1, PROTOCOL_REJECT_FIELD, "reserved tail byte");
    expect_header_reject(e, -1, 0, PROTOCOL_OK, "eigenspace ok");
    expect_header_reject(e, 33, 1, PROTOCOL_REJECT_FIELD, "eigenspace storage 1");
    expect_header_reject(e, 34, 0, PROTOCOL_REJECT_FIELD, "eigenspace mode 0");
    expect_header_reject(e, 34, 5, PROTOCOL_REJECT_FIELD, "eigenspace mode 5");
    expect_header_reject(e, 52, 1, PROTOCOL_REJECT_FIELD, "eigenspace snapshots K without SNAPSHOTS");
    expect_header_reject(e, 56, 1, PROTOCOL_REJECT_FIELD, "eigenspace byte 56");
    expect_header_reject(e, 36, 2, PROTOCOL_OK, "LATE on eigenspace");
    expect_header_reject(e, 36, 8, PROTOCOL_REJECT_FIELD, "LOSSLESS on eigenspace");
}

static void test_sizes(void)
{
    CHECK(eig_element_bytes(EIG_COMPLEX_FLOAT) == 8, "cf bytes");
    CHECK(eig_element_bytes(EIG_COMPLEX_DOUBLE) == 16, "cd bytes");
    CHECK(eig_element_bytes(0) == 0 && eig_element_bytes(3) == 0, "bad element bytes");
    CHECK(protocol_matrix_bytes(128, 2, 0) == 262144, "128 full double");
    CHECK(protocol_matrix_bytes(128, 2, 1) == 132096, "128 packed double");
    CHECK(protocol_matrix_bytes(127, 1, 2) == 127 * 64 * 8, "127 packed float");
    CHECK(protocol_matrix_bytes(128, 2, 3) == 0, "bad storage");
    CHECK(protocol_matrix_bytes(128, 9, 0) == 0, "bad element");
    CHECK(180 * protocol_matrix_bytes(128, 2, 0) == 47185920, "47.2 MB frame");
    if (sizeof(size_t) == 8)
        CHECK(protocol_matrix_bytes(0xFFFFFFFFu, 2, 0) == 0, "overflow gives 0");
    CHECK(protocol_meta_bytes(180) == 32 + 2880, "meta bytes");
    CHECK(protocol_eigenspace_matrix_bytes(128, 2, 128) == 128 * 8 + 128 * 128 * 16, "full eig bytes");
    CHECK(protocol_eigenspace_matrix_bytes(128, 1, 0) == 128 * 4, "values eig bytes float");

    protocol_header h = small_covariance(3);
    h.payload_bytes = 3 * 16 * 8;
    size_t one[1] = {384};
    size_t three[3] = {128, 128, 128};
    CHECK_REJECT(protocol_covariance_check_sizes(&h, one, 1, 0), PROTOCOL_OK, "one part");
    CHECK_REJECT(protocol_covariance_check_sizes(&h, three, 3, 0), PROTOCOL_OK, "per-matrix parts");
    CHECK_REJECT(protocol_covariance_check_sizes(&h, three, 2, 0), PROTOCOL_REJECT_PARTS, "2 parts of 3");
    CHECK_REJECT(protocol_covariance_check_sizes(&h, three, 0, 0), PROTOCOL_REJECT_PARTS, "no payload part");
    size_t short1[1] = {383};
    CHECK_REJECT(protocol_covariance_check_sizes(&h, short1, 1, 0), PROTOCOL_REJECT_TRUNCATED, "short part");
    size_t long1[1] = {385};
    CHECK_REJECT(protocol_covariance_check_sizes(&h, long1, 1, 0), PROTOCOL_REJECT_OVERSIZED, "long part");
    size_t uneven[3] = {120, 136, 128};
    CHECK_REJECT(protocol_covariance_check_sizes(&h, uneven, 3, 0), PROTOCOL_REJECT_SIZE, "uneven parts");
    CHECK_REJECT(protocol_covariance_check_sizes(&h, one, 1, 383), PROTOCOL_REJECT_OVERSIZED, "max payload");
    CHECK_REJECT(protocol_covariance_check_sizes(&h, one, 1, 384), PROTOCOL_OK, "at max payload");
    protocol_header bad = h;
    bad.payload_bytes = 383;
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "payload_bytes");
    bad = h;
    bad.n = 0;
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "n = 0");
    bad = h;
    bad.count = 0;
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "count = 0");
    bad = h;
    bad.kind = PROTOCOL_KIND_EIGENSPACE;
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_KIND, "eigenspace");

    CHECK_REJECT(protocol_check_config(&h, 4, 3, EIG_COMPLEX_FLOAT), PROTOCOL_OK, "config");
    CHECK_REJECT(protocol_check_config(&h, 0, 0, 0), PROTOCOL_OK, "config any");
    CHECK_REJECT(protocol_check_config(&h, 128, 3, 0), PROTOCOL_REJECT_CONFIG, "config n");
    CHECK_REJECT(protocol_check_config(&h, 4, 180, 0), PROTOCOL_REJECT_CONFIG, "config count");
    CHECK_REJECT(protocol_check_config(&h, 0, 0, EIG_COMPLEX_DOUBLE), PROTOCOL_REJECT_CONFIG,
                 "config element");
}

/* Fragments (FLAG_FRAGMENT): the place at @56/@60, kinds that may not carry
 * the flag, and the size rules with the fragment's matrices. */
static void test_fragments(void)
{
    protocol_header h = sample_covariance();
    h.flags = PROTOCOL_FLAG_CRC | PROTOCOL_FLAG_FRAGMENT;
    h.fragment_first = 0x01020304u;
    h.fragment_matrices = 45;
    uint8_t b[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&h, b);
    CHECK(b[36] == 5 && b[56] == 0x04 && b[59] == 0x01 && b[60] == 45 && b[63] == 0, "fragment bytes");
    protocol_header d;
    CHECK_REJECT(protocol_header_decode(b, sizeof b, &d), PROTOCOL_OK, "fragment round trip");
    CHECK(d.fragment_first == h.fragment_first && d.fragment_matrices == 45 && d.flags == h.flags,
          "fragment fields decoded");
    CHECK(protocol_covariance_matrices(&d) == 45, "fragment matrices");
    h.flags = PROTOCOL_FLAG_CRC;
    CHECK(protocol_covariance_matrices(&h) == 180, "whole frame matrices");

    expect_header_reject(small_eigenspace(), 36, 4, PROTOCOL_REJECT_FIELD, "FRAGMENT on eigenspace");

    protocol_header f = small_covariance(5);
    f.flags = PROTOCOL_FLAG_FRAGMENT;
    f.fragment_first = 3;
    f.fragment_matrices = 2;
    f.payload_bytes = 2 * 16 * 8;
    size_t one[1] = {256};
    size_t two[2] = {128, 128};
    size_t five[5] = {128, 128, 128, 128, 128};
    CHECK_REJECT(protocol_covariance_check_sizes(&f, one, 1, 0), PROTOCOL_OK, "fragment, one part");
    CHECK_REJECT(protocol_covariance_check_sizes(&f, two, 2, 0), PROTOCOL_OK, "fragment, per-matrix parts");
    CHECK_REJECT(protocol_covariance_check_sizes(&f, five, 5, 0), PROTOCOL_REJECT_PARTS,
                 "fragment with the frame's part count");
    CHECK_REJECT(protocol_covariance_check_sizes(&f, one, 1, 255), PROTOCOL_REJECT_OVERSIZED,
                 "fragment above the maximum");
    protocol_header bad = f;
    bad.fragment_matrices = 3; /* 3 + 3 > 5 */
    bad.payload_bytes = 3 * 128;
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "past the frame's end");
    bad = f;
    bad.fragment_matrices = 0;
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "no matrices");
    bad = f;
    bad.fragment_first = 5;
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "first = count");
    bad = f;
    bad.fragment_first = 0xFFFFFFFFu;
    bad.fragment_matrices = 2;
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "first overflows");
    bad = f;
    bad.payload_bytes = 5 * 128; /* the frame's bytes, not the fragment's */
    CHECK_REJECT(protocol_covariance_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "frame's payload_bytes");
}

/* The split and the assembly rules: 10 matrices in 4 fragments are 3, 3, 2,
 * 2 (worked by hand); joined, their payload_bytes sum and their CRCs give the
 * bitwise CRC of the whole payload; a fragment out of place or of another
 * timestamp does not continue the frame. */
static void test_fragment_assembly(void)
{
    static const uint32_t want_first[4] = {0, 3, 6, 8}, want_matrices[4] = {3, 3, 2, 2};
    uint8_t payload[10 * 128];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 31 + 7);
    protocol_header frame = small_covariance(10);
    frame.flags = PROTOCOL_FLAG_CRC | PROTOCOL_FLAG_FRAGMENT;
    frame.seq = 42;
    protocol_fragments a;
    int whole = 0;
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t first, matrices;
        protocol_fragment_range(10, 4, i, &first, &matrices);
        CHECK(first == want_first[i] && matrices == want_matrices[i], "fragment %u: first %u matrices %u", i, first,
              matrices);
        protocol_header h = frame;
        h.fragment_first = first;
        h.fragment_matrices = matrices;
        h.payload_bytes = matrices * 128u;
        h.crc32c = crc32c_bitwise(payload + first * 128u, matrices * 128u);
        if (i == 0)
            protocol_fragments_begin(&a, &h);
        else
            CHECK(protocol_fragments_continues(&a, &h), "fragment %u continues", i);
        protocol_header other = h;
        other.fragment_first += 1;
        CHECK(!protocol_fragments_continues(&a, &other), "fragment %u out of place", i);
        other = h;
        other.timestamp_ns += 1;
        CHECK(!protocol_fragments_continues(&a, &other), "fragment %u of another timestamp", i);
        whole = protocol_fragments_join(&a, &h);
        CHECK(whole == (i == 3), "fragment %u: whole %d", i, whole);
    }
    CHECK(!(a.frame.flags & PROTOCOL_FLAG_FRAGMENT) && a.frame.fragment_first == 0 && a.frame.fragment_matrices == 0,
          "the frame's header is a whole frame's");
    CHECK(a.frame.payload_bytes == sizeof payload, "payload_bytes %llu", (unsigned long long)a.frame.payload_bytes);
    CHECK(a.frame.crc32c == crc32c_bitwise(payload, sizeof payload), "joined CRC");
    uint8_t b[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&a.frame, b);
    CHECK_REJECT(protocol_header_decode(b, sizeof b, NULL), PROTOCOL_OK, "the frame's header decodes");
}

static void test_meta_and_eigenspace(void)
{
    enum { COUNT = 4, N = 6 };
    protocol_stage_times t = {1, 2, 3, 0xFFFFFFFFFFFFFFFFull};
    protocol_matrix_meta m[COUNT] = {{0, 2, 2, 4}, {-1, 0, 0, 6}, {7, 6, 6, 0}, {INT32_MIN, 0, 0, 6}};
    uint8_t buf[32 + 16 * COUNT];
    protocol_meta_encode(&t, m, COUNT, buf);
    CHECK(buf[32] == 0 && buf[36] == 2 && buf[40] == 2 && buf[44] == 4, "meta bytes matrix 0");
    CHECK(buf[48] == 0xFF && buf[51] == 0xFF, "status -1 two's complement");
    protocol_stage_times t2;
    protocol_matrix_meta m2[COUNT];
    CHECK_REJECT(protocol_meta_decode(buf, sizeof buf, COUNT, &t2, m2), PROTOCOL_OK, "meta round trip");
    CHECK(t2.received_ns == 1 && t2.solve_start_ns == 2 && t2.solve_end_ns == 3 && t2.published_ns == t.published_ns,
          "stage times");
    for (int b = 0; b < COUNT; b++)
        CHECK(m2[b].status == m[b].status && m2[b].signal_dim == m[b].signal_dim && m2[b].k_sent == m[b].k_sent &&
                  m2[b].first_index == m[b].first_index,
              "meta %d", b);
    CHECK_REJECT(protocol_meta_decode(buf, sizeof buf - 1, COUNT, &t2, m2), PROTOCOL_REJECT_TRUNCATED, "short meta");
    CHECK_REJECT(protocol_meta_decode(buf, sizeof buf, COUNT - 1, &t2, m2), PROTOCOL_REJECT_OVERSIZED, "long meta");

    /* Mode rules, n = 6, d = 2. */
    protocol_matrix_meta full = {0, 2, N, 0}, values = {0, 2, 0, 0}, signal = {0, 2, 2, 4}, noise = {0, 2, 4, 0};
    CHECK_REJECT(protocol_matrix_meta_check(N, PROTOCOL_MODE_FULL, &full), PROTOCOL_OK, "full");
    CHECK_REJECT(protocol_matrix_meta_check(N, PROTOCOL_MODE_VALUES, &values), PROTOCOL_OK, "values");
    CHECK_REJECT(protocol_matrix_meta_check(N, PROTOCOL_MODE_SIGNAL, &signal), PROTOCOL_OK, "signal");
    CHECK_REJECT(protocol_matrix_meta_check(N, PROTOCOL_MODE_NOISE, &noise), PROTOCOL_OK, "noise");
    CHECK_REJECT(protocol_matrix_meta_check(N, PROTOCOL_MODE_SIGNAL, &noise), PROTOCOL_REJECT_FIELD, "noise as signal");
    CHECK_REJECT(protocol_matrix_meta_check(N, PROTOCOL_MODE_FULL, &signal), PROTOCOL_REJECT_FIELD, "signal as full");
    protocol_matrix_meta big = {0, N + 1, 0, 0};
    CHECK_REJECT(protocol_matrix_meta_check(N, PROTOCOL_MODE_VALUES, &big), PROTOCOL_REJECT_FIELD, "d > n");

    protocol_header h;
    protocol_header_init(&h, PROTOCOL_KIND_EIGENSPACE);
    h.n = N;
    h.count = 2;
    h.element = EIG_COMPLEX_DOUBLE;
    h.mode = PROTOCOL_MODE_SIGNAL;
    protocol_matrix_meta sm[2] = {{0, 2, 2, 4}, {0, 0, 0, 6}};
    size_t data = (N * 8 + 2 * N * 16) + N * 8;
    h.payload_bytes = 32 + 2 * 16 + data;
    size_t parts[2] = {64, data};
    CHECK_REJECT(protocol_eigenspace_check_sizes(&h, sm, parts, 2, 0), PROTOCOL_OK, "eigenspace sizes");
    CHECK_REJECT(protocol_eigenspace_check_sizes(&h, sm, parts, 1, 0), PROTOCOL_REJECT_PARTS, "eigenspace 1 part");
    size_t short_data[2] = {64, data - 1};
    CHECK_REJECT(protocol_eigenspace_check_sizes(&h, sm, short_data, 2, 0), PROTOCOL_REJECT_TRUNCATED, "short data");
    size_t long_data[2] = {64, data + 1};
    CHECK_REJECT(protocol_eigenspace_check_sizes(&h, sm, long_data, 2, 0), PROTOCOL_REJECT_OVERSIZED, "long data");
    size_t bad_meta[2] = {63, data};
    CHECK_REJECT(protocol_eigenspace_check_sizes(&h, sm, bad_meta, 2, 0), PROTOCOL_REJECT_SIZE, "meta part size");
    CHECK_REJECT(protocol_eigenspace_check_sizes(&h, sm, parts, 2, 100), PROTOCOL_REJECT_OVERSIZED, "max payload");
    protocol_header bad = h;
    bad.payload_bytes++;
    CHECK_REJECT(protocol_eigenspace_check_sizes(&bad, sm, parts, 2, 0), PROTOCOL_REJECT_SIZE, "payload_bytes");
    sm[1].first_index = 5;
    CHECK_REJECT(protocol_eigenspace_check_sizes(&h, sm, parts, 2, 0), PROTOCOL_REJECT_FIELD, "first_index");
}

static void test_finite_and_crc_check(void)
{
    double z[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float f[4] = {1, 2, 3, 4};
    CHECK_REJECT(protocol_check_finite(z, sizeof z, EIG_COMPLEX_DOUBLE), PROTOCOL_OK, "finite double");
    CHECK_REJECT(protocol_check_finite(f, sizeof f, EIG_COMPLEX_FLOAT), PROTOCOL_OK, "finite float");
    z[5] = NAN;
    CHECK_REJECT(protocol_check_finite(z, sizeof z, EIG_COMPLEX_DOUBLE), PROTOCOL_REJECT_NONFINITE,
                 "NaN imaginary part");
    f[0] = -INFINITY;
    CHECK_REJECT(protocol_check_finite(f, sizeof f, EIG_COMPLEX_FLOAT), PROTOCOL_REJECT_NONFINITE,
                 "-Inf real part");

    uint8_t payload[100];
    for (int i = 0; i < 100; i++)
        payload[i] = (uint8_t)(i * 7);
    const void *part[1] = {payload};
    size_t bytes[1] = {100};
    protocol_header h = sample_covariance();
    h.crc32c = crc32c_bitwise(payload, 100);
    CHECK_REJECT(protocol_check_crc(&h, part, bytes, 1), PROTOCOL_OK, "crc ok");
    payload[50] ^= 0x10;
    CHECK_REJECT(protocol_check_crc(&h, part, bytes, 1), PROTOCOL_REJECT_CRC, "one bit flipped");
    h.flags = 0;
    CHECK_REJECT(protocol_check_crc(&h, part, bytes, 1), PROTOCOL_OK, "no CRC flag: not checked");
}

/* An IQ cube header: 4 channels, 3 pulses, 5 gates of ci16_le in pcg. */
static protocol_header sample_iq(void)
{
    protocol_header h;
    protocol_header_init(&h, PROTOCOL_KIND_IQ);
    h.seq = 9;
    h.timestamp_ns = 1763700000000000001ull;
    h.n = 4;
    h.count = 3;
    h.gates = 5;
    h.element = PROTOCOL_IQ_CI16_LE;
    h.storage = PROTOCOL_IQ_PCG;
    h.flags = PROTOCOL_FLAG_CRC;
    h.payload_bytes = 4 * 3 * 5 * 4;
    h.crc32c = 0x01020304u;
    h.scale = 0.5f;
    return h;
}

/* Offsets of docs/protocol.md's kind-3 table, byte by byte; the field rejects. */
static void test_iq_header(void)
{
    protocol_header h = sample_iq();
    uint8_t b[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&h, b);
    CHECK(b[5] == 3, "kind byte 3");
    CHECK(b[24] == 4 && b[28] == 3 && b[32] == 3 && b[33] == 1 && b[34] == 0, "C, P, format, layout, mode");
    CHECK(b[52] == 5 && b[53] == 0 && b[54] == 0 && b[55] == 0, "gates @52");
    /* 0.5f = 0x3F000000, little-endian */
    CHECK(b[56] == 0x00 && b[57] == 0x00 && b[58] == 0x00 && b[59] == 0x3F, "scale @56: %02x %02x %02x %02x",
          b[56], b[57], b[58], b[59]);
    CHECK(b[60] == 0 && b[61] == 0 && b[62] == 0 && b[63] == 0, "reserved tail");
    protocol_header d;
    CHECK_REJECT(protocol_header_decode(b, sizeof b, &d), PROTOCOL_OK, "iq decode");
    CHECK(d.kind == PROTOCOL_KIND_IQ && d.gates == 5 && d.scale == 0.5f && d.n == 4 && d.count == 3 &&
              d.element == PROTOCOL_IQ_CI16_LE && d.storage == PROTOCOL_IQ_PCG && d.crc32c == 0x01020304u,
          "iq round trip");
    CHECK_REJECT(protocol_header_decode_kind(b, sizeof b, PROTOCOL_KIND_COVARIANCE, NULL), PROTOCOL_REJECT_KIND,
                 "iq to a covariance input");
    protocol_header c = sample_covariance();
    protocol_header_encode(&c, b);
    CHECK_REJECT(protocol_header_decode_kind(b, sizeof b, PROTOCOL_KIND_IQ, NULL), PROTOCOL_REJECT_KIND,
                 "covariance to an iq input");

    expect_header_reject(h, 32, PROTOCOL_IQ_CF32_LE, PROTOCOL_OK, "cf32_le");
    expect_header_reject(h, 32, 2, PROTOCOL_REJECT_FIELD, "format 2 (complex double is no IQ format)");
    expect_header_reject(h, 32, 0, PROTOCOL_REJECT_FIELD, "format 0");
    expect_header_reject(h, 33, 2, PROTOCOL_OK, "layout pgc");
    expect_header_reject(h, 33, 3, PROTOCOL_REJECT_FIELD, "layout 3");
    expect_header_reject(h, 34, 1, PROTOCOL_REJECT_FIELD, "iq mode 1");
    expect_header_reject(h, 36, 2, PROTOCOL_REJECT_FIELD, "LATE on iq");
    expect_header_reject(h, 36, 4, PROTOCOL_REJECT_FIELD, "FRAGMENT on iq");
    expect_header_reject(h, 59, 0xBF, PROTOCOL_REJECT_FIELD, "scale -0.5");
    expect_header_reject(h, 59, 0x7F, PROTOCOL_OK, "scale 2^127");
    expect_header_reject(h, 58, 0x80, PROTOCOL_OK, "scale 0.75");
    for (int i = 60; i < 64; i++)
        expect_header_reject(h, i, 1, PROTOCOL_REJECT_FIELD, "iq reserved tail byte");
    const float bad_scales[] = {0.0f, -0.0f, -1.0f, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_scales / sizeof bad_scales[0]; i++) {
        protocol_header s = h;
        s.scale = bad_scales[i];
        expect_header_reject(s, -1, 0, PROTOCOL_REJECT_FIELD, "scale not finite > 0");
    }
    CHECK(strcmp(protocol_iq_format_name(PROTOCOL_IQ_CI16_LE), "ci16_le") == 0 &&
              strcmp(protocol_iq_format_name(PROTOCOL_IQ_CF32_LE), "cf32_le") == 0 &&
              strcmp(protocol_iq_format_name(2), "unknown") == 0 && strcmp(protocol_iq_format_name(-1), "unknown") == 0,
          "format names");
    CHECK(strcmp(protocol_iq_layout_name(0), "cpg") == 0 && strcmp(protocol_iq_layout_name(1), "pcg") == 0 &&
              strcmp(protocol_iq_layout_name(2), "pgc") == 0 && strcmp(protocol_iq_layout_name(3), "unknown") == 0,
          "layout names");
}

/* Sizes, parts (1 or the slowest index's count: C for cpg, P for pcg/pgc), config. */
static void test_iq_sizes(void)
{
    protocol_header h = sample_iq(); /* 4 x 3 x 5 ci16: 240 bytes */
    CHECK(protocol_iq_cube_bytes(128, 180, 256, PROTOCOL_IQ_CI16_LE) == 23592960, "23.6 MB ci16 cube");
    CHECK(protocol_iq_cube_bytes(4, 3, 5, PROTOCOL_IQ_CF32_LE) == 480, "cf32 cube");
    CHECK(protocol_iq_cube_bytes(4, 3, 5, 2) == 0 && protocol_iq_cube_bytes(0, 3, 5, 1) == 0, "bad cube");
    if (sizeof(size_t) == 8)
        CHECK(protocol_iq_cube_bytes(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 1) == 0, "cube overflow gives 0");
    size_t one[1] = {240};
    size_t pulses[3] = {80, 80, 80};
    size_t channels[4] = {60, 60, 60, 60};
    CHECK(protocol_iq_parts(&h) == 3, "pcg slices per pulse");
    CHECK_REJECT(protocol_iq_check_sizes(&h, one, 1, 0), PROTOCOL_OK, "one part");
    CHECK_REJECT(protocol_iq_check_sizes(&h, pulses, 3, 0), PROTOCOL_OK, "one part per pulse");
    CHECK_REJECT(protocol_iq_check_sizes(&h, channels, 4, 0), PROTOCOL_REJECT_PARTS, "per channel in pcg");
    h.storage = PROTOCOL_IQ_PGC;
    CHECK_REJECT(protocol_iq_check_sizes(&h, pulses, 3, 0), PROTOCOL_OK, "pgc per pulse");
    h.storage = PROTOCOL_IQ_CPG;
    CHECK(protocol_iq_parts(&h) == 4, "cpg slices per channel");
    CHECK_REJECT(protocol_iq_check_sizes(&h, channels, 4, 0), PROTOCOL_OK, "cpg per channel");
    CHECK_REJECT(protocol_iq_check_sizes(&h, pulses, 3, 0), PROTOCOL_REJECT_PARTS, "per pulse in cpg");
    size_t uneven[4] = {56, 64, 60, 60};
    CHECK_REJECT(protocol_iq_check_sizes(&h, uneven, 4, 0), PROTOCOL_REJECT_SIZE, "uneven slices");
    size_t short4[4] = {60, 60, 60, 59};
    CHECK_REJECT(protocol_iq_check_sizes(&h, short4, 4, 0), PROTOCOL_REJECT_TRUNCATED, "short slice");
    size_t long1[1] = {241};
    CHECK_REJECT(protocol_iq_check_sizes(&h, long1, 1, 0), PROTOCOL_REJECT_OVERSIZED, "long part");
    CHECK_REJECT(protocol_iq_check_sizes(&h, one, 1, 239), PROTOCOL_REJECT_OVERSIZED, "max payload");
    CHECK_REJECT(protocol_iq_check_sizes(&h, one, 0, 0), PROTOCOL_REJECT_PARTS, "no payload part");
    protocol_header bad = h;
    bad.payload_bytes = 480;
    CHECK_REJECT(protocol_iq_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "payload_bytes of cf32");
    bad = h;
    bad.gates = 0;
    CHECK_REJECT(protocol_iq_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_SIZE, "gates 0");
    bad = h;
    bad.kind = PROTOCOL_KIND_COVARIANCE;
    CHECK_REJECT(protocol_iq_check_sizes(&bad, one, 1, 0), PROTOCOL_REJECT_KIND, "not iq");

    h = sample_iq();
    CHECK_REJECT(protocol_iq_check_config(&h, 4, 3, 5, PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_PCG), PROTOCOL_OK, "config");
    CHECK_REJECT(protocol_iq_check_config(&h, 8, 3, 5, PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_PCG), PROTOCOL_REJECT_CONFIG,
                 "config channels");
    CHECK_REJECT(protocol_iq_check_config(&h, 4, 4, 5, PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_PCG), PROTOCOL_REJECT_CONFIG,
                 "config pulses");
    CHECK_REJECT(protocol_iq_check_config(&h, 4, 3, 6, PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_PCG), PROTOCOL_REJECT_CONFIG,
                 "config gates");
    CHECK_REJECT(protocol_iq_check_config(&h, 4, 3, 5, PROTOCOL_IQ_CF32_LE, PROTOCOL_IQ_PCG), PROTOCOL_REJECT_CONFIG,
                 "config format");
    CHECK_REJECT(protocol_iq_check_config(&h, 4, 3, 5, PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_CPG), PROTOCOL_REJECT_CONFIG,
                 "config layout");
}

/* v1.1's marker (docs/protocol.md, Versioning): an eigenspace header carries
 * flag SNAPSHOTS (bit 5, outside the bits 0..4 a v1.0 receiver knows, so it
 * refuses the frame instead of misreading K) exactly when its snapshots field
 * holds K; a header with K unknown is byte for byte a v1.0 one. */
static void test_snapshots_marker(void)
{
    uint8_t b[PROTOCOL_HEADER_BYTES];
    protocol_header e = small_eigenspace(), d;
    e.flags = PROTOCOL_FLAG_CRC;
    e.snapshots = 256;
    protocol_header_encode(&e, b);
    CHECK(b[36] == 0x21 && b[37] == 0 && b[52] == 0 && b[53] == 1 && b[54] == 0,
          "K = 256: flags byte 0x%02x (want 0x21), snapshots bytes %02x %02x", b[36], b[52], b[53]);
    CHECK((b[36] & ~0x1Fu) != 0, "K = 256: no flag outside v1.0's bits 0..4: a v1.0 receiver would misread it");
    CHECK_REJECT(protocol_header_decode(b, sizeof b, &d), PROTOCOL_OK, "K = 256 round trip");
    CHECK(d.snapshots == 256 && d.flags == (PROTOCOL_FLAG_CRC | PROTOCOL_FLAG_SNAPSHOTS),
          "K = 256 decoded: snapshots %u flags 0x%x", d.snapshots, d.flags);
    e.snapshots = 0;
    e.flags = PROTOCOL_FLAG_CRC | PROTOCOL_FLAG_SNAPSHOTS;
    protocol_header_encode(&e, b);
    CHECK(b[36] == 0x01, "K unknown: flags byte 0x%02x, want 0x01 (a v1.0 header)", b[36]);
    expect_header_reject(e, 36, 0x21, PROTOCOL_REJECT_FIELD, "SNAPSHOTS with snapshots 0");
    e.snapshots = 7;
    expect_header_reject(e, 36, 0x01, PROTOCOL_REJECT_FIELD, "K without SNAPSHOTS");
    expect_header_reject(e, 36, 0x41, PROTOCOL_REJECT_FIELD, "unknown flag bit 6 on eigenspace");
    expect_header_reject(sample_covariance(), 36, 0x21, PROTOCOL_REJECT_FIELD, "SNAPSHOTS on covariance");
    expect_header_reject(sample_iq(), 36, 0x21, PROTOCOL_REJECT_FIELD, "SNAPSHOTS on an IQ cube");
}

int main(void)
{
    test_crc();
    test_names();
    test_header_layout();
    test_header_rejects();
    test_sizes();
    test_fragments();
    test_fragment_assembly();
    test_meta_and_eigenspace();
    test_finite_and_crc_check();
    test_iq_header();
    test_iq_sizes();
    test_snapshots_marker();
    printf("crc32c: %s\n", protocol_crc32c_implementation());
    return test_check_report("test_protocol");
}
