/*
 * protocol_parts_tool.c - the C side of the cross-language protocol test.
 *
 * A "parts file" holds one multipart message: u32 LE part count, then per
 * part a u64 LE byte count and the bytes (eigstream_client.save_parts writes
 * the same format).
 *
 *   protocol_parts_tool decode PARTS OUT
 *       Decodes and checks the message with pipeline/protocol/protocol.c. Prints
 *       "ok kind=.. seq=.. ..." (eigenspace: one "matrix b status d k first"
 *       line per matrix) and writes OUT: covariance: count full n x n
 *       matrices, complex128, column-major; eigenspace: per matrix n float64
 *       values then k_sent complex128 vectors of n; IQ cube: the samples'
 *       values (raw * scale) as complex128 in (channel, pulse, gate) order,
 *       gate fastest. A covariance fragment (flag FRAGMENT) is checked like
 *       a frame of its own matrices and writes those; its line ends with
 *       "fragment=1 first=F matrices=M" (whole frames: "fragment=0 first=0
 *       matrices=count"). On a rejection prints "reject NAME" and exits 2.
 *   protocol_parts_tool reject-names
 *       Prints protocol_reject_name of every reason, in enum order, one a line.
 *   protocol_parts_tool encode-covariance PARTS n count element storage per_matrix crc seq [first matrices]
 *       With first and matrices: the fragment of the frame's matrices
 *       first .. first+matrices-1 (flag FRAGMENT, its own payload_bytes and CRC).
 *   protocol_parts_tool encode-eigenspace PARTS n count element mode crc seq
 *   protocol_parts_tool encode-iq PARTS channels pulses gates format layout per_slice crc seq
 *       Writes a message whose numbers follow closed-form patterns that
 *       tests/protocol/test_cross_language.py recomputes with NumPy.
 */
#include "protocol.h"
#include "protocol_test_header.h"

#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTS 100000

typedef struct parts {
    size_t count;
    uint8_t **data;
    size_t *bytes;
} parts;

/* Frees the parts and both arrays and empties *p; data may be NULL (a
 * message whose allocation failed half way: its bytes array is freed). */
static void parts_free(parts *p)
{
    for (size_t i = 0; p->data != NULL && i < p->count; i++)
        free(p->data[i]);
    free(p->data);
    free(p->bytes);
    memset(p, 0, sizeof *p);
}

static int read_le(FILE *f, int bytes, uint64_t *v)
{
    uint8_t b[8];
    if (fread(b, 1, (size_t)bytes, f) != (size_t)bytes)
        return -1;
    *v = 0;
    for (int i = 0; i < bytes; i++)
        *v |= (uint64_t)b[i] << (8 * i);
    return 0;
}

static int write_le(FILE *f, int bytes, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return fwrite(b, 1, (size_t)bytes, f) == (size_t)bytes ? 0 : -1;
}

static int parts_load(const char *path, parts *p)
{
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    uint64_t count;
    int rc = -1;
    if (read_le(f, 4, &count) != 0 || count > MAX_PARTS)
        goto out;
    p->data = calloc(count ? count : 1, sizeof *p->data);
    p->bytes = calloc(count ? count : 1, sizeof *p->bytes);
    if (p->data == NULL || p->bytes == NULL)
        goto out;
    for (p->count = 0; p->count < count; p->count++) {
        uint64_t len;
        if (read_le(f, 8, &len) != 0 || len > ((uint64_t)1 << 32))
            goto out;
        /* Aligned like a zmq message buffer, for the finite check. */
        p->data[p->count] = malloc(len ? len : 1);
        if (p->data[p->count] == NULL || fread(p->data[p->count], 1, len, f) != len) {
            free(p->data[p->count]);
            goto out;
        }
        p->bytes[p->count] = len;
    }
    rc = 0;
out:
    fclose(f);
    if (rc != 0)
        parts_free(p);
    return rc;
}

static int parts_save(const char *path, const parts *p)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int rc = write_le(f, 4, p->count);
    for (size_t i = 0; rc == 0 && i < p->count; i++) {
        rc = write_le(f, 8, p->bytes[i]);
        if (rc == 0 && fwrite(p->data[i], 1, p->bytes[i], f) != p->bytes[i])
            rc = -1;
    }
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

/* Element b of an array of complex float or double, as double complex. */
static double complex element_at(const uint8_t *base, uint8_t element, size_t index)
{
    if (element == EIG_COMPLEX_DOUBLE) {
        double v[2];
        memcpy(v, base + index * 16, 16);
        return CMPLX(v[0], v[1]);
    }
    float v[2];
    memcpy(v, base + index * 8, 8);
    return CMPLX(v[0], v[1]);
}

static double real_at(const uint8_t *base, uint8_t element, size_t index)
{
    if (element == EIG_COMPLEX_DOUBLE) {
        double v;
        memcpy(&v, base + index * 8, 8);
        return v;
    }
    float v;
    memcpy(&v, base + index * 4, 4);
    return v;
}

static int reject(protocol_reject r)
{
    printf("reject %s\n", protocol_reject_name(r));
    return 2;
}

/* Expands matrix b of a covariance payload to full column-major complex128. */
static void covariance_expand(const uint8_t *m, const protocol_header *h, double complex *out)
{
    uint32_t n = h->n;
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t i = 0; i < n; i++) {
            double complex v;
            if (h->storage == PROTOCOL_STORAGE_FULL)
                v = element_at(m, h->element, i + (size_t)j * n);
            else if (h->storage == PROTOCOL_STORAGE_PACKED_LOWER)
                v = i >= j ? element_at(m, h->element, i + (size_t)j * (2 * n - j - 1) / 2)
                           : conj(element_at(m, h->element, j + (size_t)i * (2 * n - i - 1) / 2));
            else
                v = i <= j ? element_at(m, h->element, i + (size_t)j * (j + 1) / 2)
                           : conj(element_at(m, h->element, j + (size_t)i * (i + 1) / 2));
            out[i + (size_t)j * n] = v;
        }
}

/* Sample i of a cube as raw * scale (double complex). */
static double complex iq_sample(const uint8_t *base, uint8_t format, size_t i, float scale)
{
    if (format == PROTOCOL_IQ_CI16_LE) {
        const uint8_t *q = base + i * 4;
        int16_t re = (int16_t)(uint16_t)(q[0] | q[1] << 8), im = (int16_t)(uint16_t)(q[2] | q[3] << 8);
        return CMPLX((double)re * scale, (double)im * scale);
    }
    float v[2];
    memcpy(v, base + i * 8, 8);
    return CMPLX((double)v[0] * scale, (double)v[1] * scale);
}

/* Checks an IQ message's payload (sizes, CRC, finite) and writes its values. */
static int decode_iq(const protocol_header *h, const parts *p, const char *out_path)
{
    const void *const *payload = (const void *const *)(p->data + 1);
    size_t payload_parts = p->count - 1;
    protocol_reject r = protocol_iq_check_sizes(h, p->bytes + 1, payload_parts, 0);
    if (r == PROTOCOL_OK)
        r = protocol_check_crc(h, payload, p->bytes + 1, payload_parts);
    for (size_t i = 0; r == PROTOCOL_OK && h->element == PROTOCOL_IQ_CF32_LE && i < payload_parts; i++)
        r = protocol_check_finite(p->data[1 + i], p->bytes[1 + i], EIG_COMPLEX_FLOAT);
    if (r != PROTOCOL_OK)
        return reject(r);
    uint8_t *cube = malloc(h->payload_bytes);
    FILE *out = fopen(out_path, "wb");
    int rc = cube == NULL || out == NULL;
    size_t at = 0;
    for (size_t i = 0; !rc && i < payload_parts; at += p->bytes[1 + i], i++)
        memcpy(cube + at, p->data[1 + i], p->bytes[1 + i]);
    for (uint32_t c = 0; !rc && c < h->n; c++)
        for (uint32_t q = 0; !rc && q < h->count; q++)
            for (uint32_t g = 0; !rc && g < h->gates; g++) {
                size_t i = protocol_iq_index(h->storage, h->n, h->count, h->gates, c, q, g);
                double complex v = iq_sample(cube, h->element, i, h->scale);
                rc = fwrite(&v, sizeof v, 1, out) != 1;
            }
    if (out != NULL && fclose(out) != 0)
        rc = 1;
    free(cube);
    if (rc == 0)
        printf("ok kind=3 seq=%llu timestamp=%llu channels=%u pulses=%u gates=%u format=%s layout=%s scale=%.9g "
               "crc=%u parts=%zu\n",
               (unsigned long long)h->seq, (unsigned long long)h->timestamp_ns, h->n, h->count, h->gates,
               protocol_iq_format_name(h->element), protocol_iq_layout_name(h->storage), (double)h->scale,
               h->flags & PROTOCOL_FLAG_CRC, p->count);
    return rc;
}

static int decode(const char *in_path, const char *out_path)
{
    parts p;
    if (parts_load(in_path, &p) != 0) {
        fprintf(stderr, "cannot read parts file %s\n", in_path);
        return 1;
    }
    int rc = 1;
    FILE *out = NULL;
    double complex *full = NULL;
    protocol_matrix_meta *meta = NULL;
    protocol_header h;
    protocol_reject r = p.count == 0 ? PROTOCOL_REJECT_PARTS : protocol_header_decode(p.data[0], p.bytes[0], &h);
    if (r != PROTOCOL_OK) {
        rc = reject(r);
        goto done;
    }
    const void *const *payload = (const void *const *)(p.data + 1);
    size_t payload_parts = p.count - 1;
    if (h.kind == PROTOCOL_KIND_IQ) {
        rc = decode_iq(&h, &p, out_path);
        goto done;
    }
    if (h.kind == PROTOCOL_KIND_COVARIANCE) {
        r = protocol_covariance_check_sizes(&h, p.bytes + 1, payload_parts, 0);
        if (r == PROTOCOL_OK)
            r = protocol_check_crc(&h, payload, p.bytes + 1, payload_parts);
        for (size_t i = 0; r == PROTOCOL_OK && i < payload_parts; i++)
            r = protocol_check_finite(p.data[1 + i], p.bytes[1 + i], h.element);
        if (r != PROTOCOL_OK) {
            rc = reject(r);
            goto done;
        }
        size_t matrix = protocol_matrix_bytes(h.n, h.element, h.storage);
        full = malloc((size_t)h.n * h.n * sizeof *full);
        out = fopen(out_path, "wb");
        if (full == NULL || out == NULL)
            goto done;
        uint32_t matrices = protocol_covariance_matrices(&h);
        for (uint32_t b = 0; b < matrices; b++) {
            const uint8_t *m = payload_parts == 1 ? p.data[1] + (size_t)b * matrix : p.data[1 + b];
            covariance_expand(m, &h, full);
            if (fwrite(full, sizeof *full, (size_t)h.n * h.n, out) != (size_t)h.n * h.n)
                goto done;
        }
        printf("ok kind=1 seq=%llu timestamp=%llu n=%u count=%u element=%s storage=%s crc=%u snapshots=%u parts=%zu "
               "fragment=%u first=%u matrices=%u\n",
               (unsigned long long)h.seq, (unsigned long long)h.timestamp_ns, h.n, h.count,
               eig_precision_name(h.element), protocol_storage_name(h.storage), h.flags & PROTOCOL_FLAG_CRC,
               h.snapshots, p.count, (h.flags & PROTOCOL_FLAG_FRAGMENT) ? 1u : 0u, h.fragment_first, matrices);
        rc = 0;
        goto done;
    }

    /* Eigenspace: [header][meta][data]. */
    if (payload_parts != 2) {
        rc = reject(PROTOCOL_REJECT_PARTS);
        goto done;
    }
    protocol_stage_times t;
    meta = malloc((size_t)h.count * sizeof *meta + 1);
    if (meta == NULL)
        goto done;
    r = protocol_meta_decode(p.data[1], p.bytes[1], h.count, &t, meta);
    if (r == PROTOCOL_OK)
        r = protocol_eigenspace_check_sizes(&h, meta, p.bytes + 1, payload_parts, 0);
    if (r == PROTOCOL_OK)
        r = protocol_check_crc(&h, payload, p.bytes + 1, payload_parts);
    if (r != PROTOCOL_OK) {
        rc = reject(r);
        goto done;
    }
    out = fopen(out_path, "wb");
    if (out == NULL)
        goto done;
    printf("ok kind=2 seq=%llu timestamp=%llu n=%u count=%u element=%s mode=%s crc=%u late=%u "
           "received=%llu solve_start=%llu solve_end=%llu published=%llu\n",
           (unsigned long long)h.seq, (unsigned long long)h.timestamp_ns, h.n, h.count,
           eig_precision_name(h.element), protocol_mode_name(h.mode), h.flags & PROTOCOL_FLAG_CRC,
           (h.flags & PROTOCOL_FLAG_LATE) ? 1u : 0u, (unsigned long long)t.received_ns,
           (unsigned long long)t.solve_start_ns, (unsigned long long)t.solve_end_ns,
           (unsigned long long)t.published_ns);
    const uint8_t *d = p.data[2];
    for (uint32_t b = 0; b < h.count; b++) {
        printf("matrix %u %d %u %u %u\n", b, meta[b].status, meta[b].signal_dim, meta[b].k_sent,
               meta[b].first_index);
        for (uint32_t i = 0; i < h.n; i++) {
            double v = real_at(d, h.element, i);
            if (fwrite(&v, sizeof v, 1, out) != 1)
                goto done;
        }
        d += (size_t)h.n * eig_element_bytes(h.element) / 2;
        for (size_t i = 0; i < (size_t)h.n * meta[b].k_sent; i++) {
            double complex v = element_at(d, h.element, i);
            if (fwrite(&v, sizeof v, 1, out) != 1)
                goto done;
        }
        d += (size_t)h.n * meta[b].k_sent * eig_element_bytes(h.element);
    }
    rc = 0;
done:
    if (out != NULL && fclose(out) != 0 && rc == 0)
        rc = 1;
    free(full);
    free(meta);
    parts_free(&p);
    return rc;
}

/* Stores v as element `index` of a complex float or double array. */
static void element_put(uint8_t *base, uint8_t element, size_t index, double complex v)
{
    if (element == EIG_COMPLEX_DOUBLE) {
        double x[2] = {creal(v), cimag(v)};
        memcpy(base + index * 16, x, 16);
    } else {
        float x[2] = {(float)creal(v), (float)cimag(v)};
        memcpy(base + index * 8, x, 8);
    }
}

static void real_put(uint8_t *base, uint8_t element, size_t index, double v)
{
    if (element == EIG_COMPLEX_DOUBLE) {
        memcpy(base + index * 8, &v, 8);
    } else {
        float x = (float)v;
        memcpy(base + index * 4, &x, 4);
    }
}

/* The pattern (dyadic, so exact in float): A(i,j), i > j, of matrix b. */
static double complex pattern_covariance(uint32_t b, uint32_t i, uint32_t j)
{
    if (i == j)
        return b + i;
    if (i > j)
        return CMPLX((b + 1) * 0.5 + i * 0.25 + j * 0.0625, (double)(i - j) * 0.03125 + b * 0.5);
    return conj(pattern_covariance(b, j, i));
}

/* A covariance message of the pattern: the whole frame of count matrices
 * (fragment_matrices 0), or the fragment of its matrices first ..
 * first+fragment_matrices-1, which must lie within it. */
static int encode_covariance(const char *path, uint32_t n, uint32_t count, uint8_t element, uint8_t storage,
                             int per_matrix, int crc, uint64_t seq, uint32_t first, uint32_t fragment_matrices)
{
    size_t matrix = protocol_matrix_bytes(n, element, storage);
    uint32_t sent = fragment_matrices ? fragment_matrices : count;
    if (matrix == 0 || count == 0 || first >= count || sent > count - first)
        return 1;
    parts p = {0};
    p.count = per_matrix ? 1 + (size_t)sent : 2;
    p.data = calloc(p.count, sizeof *p.data);
    p.bytes = calloc(p.count, sizeof *p.bytes);
    int rc = 1;
    if (p.data == NULL || p.bytes == NULL)
        goto done;
    for (size_t i = 1; i < p.count; i++) {
        p.bytes[i] = per_matrix ? matrix : matrix * sent;
        p.data[i] = malloc(p.bytes[i]);
        if (p.data[i] == NULL)
            goto done;
    }
    for (uint32_t b = 0; b < sent; b++) {
        uint8_t *m = per_matrix ? p.data[1 + b] : p.data[1] + (size_t)b * matrix;
        size_t k = 0;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t lo = storage == PROTOCOL_STORAGE_PACKED_LOWER ? j : 0;
            uint32_t hi = storage == PROTOCOL_STORAGE_PACKED_UPPER ? j + 1 : n;
            for (uint32_t i = lo; i < hi; i++)
                element_put(m, element, k++, pattern_covariance(first + b, i, j));
        }
    }
    protocol_header h = test_header(PROTOCOL_KIND_COVARIANCE, n, count, element);
    h.seq = seq;
    h.timestamp_ns = 1000000000ull * seq + 7;
    h.storage = storage;
    h.snapshots = 64;
    if (fragment_matrices)
        test_header_fragment(&h, first, fragment_matrices);
    test_header_payload(&h, (const void *const *)(p.data + 1), p.bytes + 1, p.count - 1, crc);
    p.data[0] = malloc(PROTOCOL_HEADER_BYTES);
    if (p.data[0] == NULL)
        goto done;
    p.bytes[0] = PROTOCOL_HEADER_BYTES;
    protocol_header_encode(&h, p.data[0]);
    rc = parts_save(path, &p) == 0 ? 0 : 1;
done:
    parts_free(&p);
    return rc;
}

static int encode_eigenspace(const char *path, uint32_t n, uint32_t count, uint8_t element, uint8_t mode,
                             int crc, uint64_t seq)
{
    protocol_matrix_meta *meta = calloc(count, sizeof *meta);
    parts p = {0};
    int rc = 1;
    p.count = 3;
    p.data = calloc(3, sizeof *p.data);
    p.bytes = calloc(3, sizeof *p.bytes);
    if (meta == NULL || p.data == NULL || p.bytes == NULL)
        goto done;
    size_t data = 0;
    for (uint32_t b = 0; b < count; b++) {
        uint32_t d = b % (n + 1);
        meta[b].status = (b % 5 == 3) ? (int32_t)b : (b % 7 == 6 ? -1 : 0);
        meta[b].signal_dim = d;
        meta[b].k_sent = mode == PROTOCOL_MODE_FULL ? n : mode == PROTOCOL_MODE_SIGNAL ? d
                         : mode == PROTOCOL_MODE_NOISE ? n - d : 0;
        meta[b].first_index = mode == PROTOCOL_MODE_SIGNAL ? n - d : 0;
        data += protocol_eigenspace_matrix_bytes(n, element, meta[b].k_sent);
    }
    p.bytes[1] = protocol_meta_bytes(count);
    p.bytes[2] = data;
    p.data[1] = malloc(p.bytes[1]);
    p.data[2] = malloc(data ? data : 1);
    p.data[0] = malloc(PROTOCOL_HEADER_BYTES);
    p.bytes[0] = PROTOCOL_HEADER_BYTES;
    if (p.data[0] == NULL || p.data[1] == NULL || p.data[2] == NULL)
        goto done;
    protocol_stage_times t = {seq * 10 + 1, seq * 10 + 2, seq * 10 + 3, seq * 10 + 4};
    protocol_meta_encode(&t, meta, count, p.data[1]);
    uint8_t *dp = p.data[2];
    for (uint32_t b = 0; b < count; b++) {
        for (uint32_t i = 0; i < n; i++)
            real_put(dp, element, i, b + i * 0.5);
        dp += (size_t)n * eig_element_bytes(element) / 2;
        for (uint32_t k = 0; k < meta[b].k_sent; k++)
            for (uint32_t i = 0; i < n; i++)
                element_put(dp, element, i + (size_t)k * n,
                            CMPLX(i + 0.5 * (k + meta[b].first_index), b * 0.25 - i));
        dp += (size_t)n * meta[b].k_sent * eig_element_bytes(element);
    }
    protocol_header h = test_header(PROTOCOL_KIND_EIGENSPACE, n, count, element);
    h.seq = seq;
    h.timestamp_ns = seq * 10;
    h.mode = mode;
    h.flags = PROTOCOL_FLAG_LATE;
    test_header_payload(&h, (const void *const *)(p.data + 1), p.bytes + 1, 2, crc);
    protocol_header_encode(&h, p.data[0]);
    rc = parts_save(path, &p) == 0 ? 0 : 1;
done:
    free(meta);
    parts_free(&p);
    return rc;
}

/* The raw pattern of sample (c, p, g): exact in both formats; ci16 wraps
 * through the whole int16 range (negative values included). */
static void iq_pattern_put(uint8_t *base, uint8_t format, size_t i, uint32_t c, uint32_t p, uint32_t g)
{
    if (format == PROTOCOL_IQ_CI16_LE) {
        int re = (int)((c * 1031u + p * 97u + g * 13u) % 65536u) - 32768;
        int im = (int)((c * 7u + p * 211u + g * 3u + 12345u) % 65536u) - 32768;
        uint8_t *q = base + i * 4;
        q[0] = (uint8_t)re, q[1] = (uint8_t)((unsigned)re >> 8), q[2] = (uint8_t)im, q[3] = (uint8_t)((unsigned)im >> 8);
        return;
    }
    float v[2] = {(float)c + 0.5f * (float)p + 0.25f * (float)g, 0.125f * (float)g - (float)c};
    memcpy(base + i * 8, v, 8);
}

/* An IQ message of the pattern above, scale 0.25, one part or one per slice. */
static int encode_iq(const char *path, uint32_t C, uint32_t P, uint32_t G, uint8_t format, uint8_t layout,
                     int per_slice, int crc, uint64_t seq)
{
    protocol_header h = test_header(PROTOCOL_KIND_IQ, C, P, format);
    h.seq = seq;
    h.timestamp_ns = 1000000000ull * seq + 11;
    h.gates = G;
    h.storage = layout;
    h.scale = 0.25f;
    size_t cube = protocol_iq_cube_bytes(C, P, G, format);
    uint32_t slices = protocol_iq_parts(&h);
    if (cube == 0 || slices == 0)
        return 1;
    uint8_t *all = malloc(cube);
    parts p = {0};
    p.count = per_slice ? 1 + (size_t)slices : 2;
    p.data = calloc(p.count, sizeof *p.data);
    p.bytes = calloc(p.count, sizeof *p.bytes);
    int rc = 1;
    if (all == NULL || p.data == NULL || p.bytes == NULL)
        goto done;
    for (uint32_t c = 0; c < C; c++)
        for (uint32_t q = 0; q < P; q++)
            for (uint32_t g = 0; g < G; g++)
                iq_pattern_put(all, format, protocol_iq_index(layout, C, P, G, c, q, g), c, q, g);
    for (size_t i = 1; i < p.count; i++) {
        p.bytes[i] = cube / (p.count - 1);
        if ((p.data[i] = malloc(p.bytes[i])) == NULL)
            goto done;
        memcpy(p.data[i], all + (i - 1) * p.bytes[i], p.bytes[i]);
    }
    test_header_payload(&h, (const void *const *)(p.data + 1), p.bytes + 1, p.count - 1, crc);
    if ((p.data[0] = malloc(PROTOCOL_HEADER_BYTES)) == NULL)
        goto done;
    p.bytes[0] = PROTOCOL_HEADER_BYTES;
    protocol_header_encode(&h, p.data[0]);
    rc = parts_save(path, &p) == 0 ? 0 : 1;
done:
    free(all);
    parts_free(&p);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "decode") == 0)
        return decode(argv[2], argv[3]);
    if (argc == 2 && strcmp(argv[1], "reject-names") == 0) {
        for (int r = 0; r < PROTOCOL_REJECT_COUNT_; r++)
            printf("%s\n", protocol_reject_name((protocol_reject)r));
        return 0;
    }
    if ((argc == 10 || argc == 12) && strcmp(argv[1], "encode-covariance") == 0)
        return encode_covariance(argv[2], (uint32_t)strtoul(argv[3], NULL, 10), (uint32_t)strtoul(argv[4], NULL, 10),
                                 (uint8_t)atoi(argv[5]), (uint8_t)atoi(argv[6]), atoi(argv[7]), atoi(argv[8]),
                                 strtoull(argv[9], NULL, 10), argc == 12 ? (uint32_t)strtoul(argv[10], NULL, 10) : 0,
                                 argc == 12 ? (uint32_t)strtoul(argv[11], NULL, 10) : 0);
    if (argc == 9 && strcmp(argv[1], "encode-eigenspace") == 0)
        return encode_eigenspace(argv[2], (uint32_t)strtoul(argv[3], NULL, 10), (uint32_t)strtoul(argv[4], NULL, 10),
                                 (uint8_t)atoi(argv[5]), (uint8_t)atoi(argv[6]), atoi(argv[7]),
                                 strtoull(argv[8], NULL, 10));
    if (argc == 11 && strcmp(argv[1], "encode-iq") == 0)
        return encode_iq(argv[2], (uint32_t)strtoul(argv[3], NULL, 10), (uint32_t)strtoul(argv[4], NULL, 10),
                         (uint32_t)strtoul(argv[5], NULL, 10), (uint8_t)atoi(argv[6]), (uint8_t)atoi(argv[7]),
                         atoi(argv[8]), atoi(argv[9]), strtoull(argv[10], NULL, 10));
    fprintf(stderr, "usage: %s decode PARTS OUT | reject-names"
                    " | encode-covariance PARTS n count element storage per_matrix crc seq [first matrices]"
                    " | encode-eigenspace PARTS n count element mode crc seq"
                    " | encode-iq PARTS channels pulses gates format layout per_slice crc seq\n",
            argv[0]);
    return 64;
}
