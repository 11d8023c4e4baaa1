/*
 * protocol.c - eigstream wire protocol v1: header, sizes, meta and CRC32C.
 *
 * Every multi-byte field is assembled byte by byte in little-endian order, so
 * the code is correct on any host byte order and never depends on struct
 * layout or alignment of the received buffer.
 */
#include "protocol.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

/* ---- little-endian byte assembly --------------------------------------------- */

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* ---- reject names ------------------------------------------------------------ */

static const char *const reject_names[PROTOCOL_REJECT_COUNT_] = {
    [PROTOCOL_OK] = "ok",
    [PROTOCOL_REJECT_PARTS] = "parts",
    [PROTOCOL_REJECT_HEADER_SIZE] = "header_size",
    [PROTOCOL_REJECT_MAGIC] = "bad_magic",
    [PROTOCOL_REJECT_VERSION] = "bad_version",
    [PROTOCOL_REJECT_KIND] = "bad_kind",
    [PROTOCOL_REJECT_FIELD] = "bad_field",
    [PROTOCOL_REJECT_SIZE] = "size_mismatch",
    [PROTOCOL_REJECT_CONFIG] = "config_mismatch",
    [PROTOCOL_REJECT_TRUNCATED] = "truncated",
    [PROTOCOL_REJECT_OVERSIZED] = "oversized",
    [PROTOCOL_REJECT_CRC] = "crc_mismatch",
    [PROTOCOL_REJECT_NONFINITE] = "nonfinite",
    [PROTOCOL_REJECT_INCOMPLETE] = "incomplete",
};

const char *protocol_reject_name(protocol_reject r)
{
    if ((int)r < 0 || r >= PROTOCOL_REJECT_COUNT_)
        return "unknown";
    return reject_names[r];
}

const char *protocol_storage_name(uint8_t storage)
{
    switch (storage) {
    case PROTOCOL_STORAGE_FULL: return "full";
    case PROTOCOL_STORAGE_PACKED_LOWER: return "packed_lower";
    case PROTOCOL_STORAGE_PACKED_UPPER: return "packed_upper";
    default: return "unknown";
    }
}

const char *protocol_mode_name(int mode)
{
    switch (mode) {
    case PROTOCOL_MODE_NONE: return "none";
    case PROTOCOL_MODE_FULL: return "full";
    case PROTOCOL_MODE_VALUES: return "values";
    case PROTOCOL_MODE_SIGNAL: return "signal";
    case PROTOCOL_MODE_NOISE: return "noise";
    default: return "unknown";
    }
}

/* ---- header --------------------------------------------------------------------- */

void protocol_header_encode(const protocol_header *h, uint8_t out[PROTOCOL_HEADER_BYTES])
{
    memset(out, 0, PROTOCOL_HEADER_BYTES);
    memcpy(out, PROTOCOL_MAGIC, 4);
    out[4] = h->version;
    out[5] = h->kind;
    put_u16(out + 6, h->header_bytes);
    put_u64(out + 8, h->seq);
    put_u64(out + 16, h->timestamp_ns);
    put_u32(out + 24, h->n);
    put_u32(out + 28, h->count);
    out[32] = h->element;
    out[33] = h->storage;
    out[34] = h->mode;
    out[35] = h->reserved0;
    uint32_t flags = h->flags;
    if (h->kind == PROTOCOL_KIND_EIGENSPACE) /* the v1.1 marker follows the field: they cannot disagree */
        flags = h->snapshots != 0 ? flags | PROTOCOL_FLAG_SNAPSHOTS : flags & ~(uint32_t)PROTOCOL_FLAG_SNAPSHOTS;
    put_u32(out + 36, flags);
    put_u64(out + 40, h->payload_bytes);
    put_u32(out + 48, h->crc32c);
    put_u32(out + 52, h->snapshots);
    if (h->kind == PROTOCOL_KIND_COVARIANCE) {
        put_u32(out + 56, h->fragment_first);
        put_u32(out + 60, h->fragment_matrices);
        return;
    }
    uint32_t scale_bits;
    memcpy(&scale_bits, &h->scale, 4); /* binary32, written little-endian like every field */
    put_u32(out + 56, scale_bits);
}

void protocol_header_init(protocol_header *h, protocol_kind kind)
{
    memset(h, 0, sizeof *h);
    h->version = PROTOCOL_VERSION;
    h->kind = (uint8_t)kind;
    h->header_bytes = PROTOCOL_HEADER_BYTES;
}

/* Field checks that depend on the kind: covariance frames carry a storage and
 * no mode; eigenspace frames carry a mode and always full (0) storage; IQ
 * cubes carry a sample format, a layout, no mode and a positive scale. */
static protocol_reject check_kind_fields(const protocol_header *h)
{
    if (h->reserved0 != 0 || (h->flags & ~(uint32_t)PROTOCOL_FLAG_KNOWN) != 0)
        return PROTOCOL_REJECT_FIELD;
    if (h->kind == PROTOCOL_KIND_IQ) {
        /* NaN and Inf are not finite; > 0 refuses 0, -0 and negatives. */
        if (protocol_iq_sample_bytes(h->element) == 0 || h->storage > PROTOCOL_IQ_PGC ||
            h->mode != PROTOCOL_MODE_NONE ||
            (h->flags & (PROTOCOL_FLAG_LATE | PROTOCOL_FLAG_FRAGMENT | PROTOCOL_FLAG_CHECK_FAILED |
                         PROTOCOL_FLAG_SNAPSHOTS)) ||
            !isfinite(h->scale) ||
            !(h->scale > 0.0f))
            return PROTOCOL_REJECT_FIELD;
        return PROTOCOL_OK;
    }
    if (eig_element_bytes(h->element) == 0)
        return PROTOCOL_REJECT_FIELD;
    if (h->kind == PROTOCOL_KIND_COVARIANCE) {
        if (h->storage > PROTOCOL_STORAGE_PACKED_UPPER || h->mode != PROTOCOL_MODE_NONE)
            return PROTOCOL_REJECT_FIELD;
        if (h->flags & (PROTOCOL_FLAG_LATE | PROTOCOL_FLAG_CHECK_FAILED | PROTOCOL_FLAG_SNAPSHOTS))
            return PROTOCOL_REJECT_FIELD;
    } else {
        /* v1.1: the marker SNAPSHOTS exactly when the field carries K. */
        if (h->flags & (PROTOCOL_FLAG_FRAGMENT | PROTOCOL_FLAG_LOSSLESS))
            return PROTOCOL_REJECT_FIELD;
        if (((h->flags & PROTOCOL_FLAG_SNAPSHOTS) != 0) != (h->snapshots != 0))
            return PROTOCOL_REJECT_FIELD;
        if (h->storage != PROTOCOL_STORAGE_FULL || h->mode < PROTOCOL_MODE_FULL || h->mode > PROTOCOL_MODE_NOISE)
            return PROTOCOL_REJECT_FIELD;
    }
    return PROTOCOL_OK;
}

protocol_reject protocol_header_decode(const uint8_t *part, size_t part_bytes, protocol_header *h)
{
    return protocol_header_decode_kind(part, part_bytes, 0, h);
}

/* expect_kind 0: either known kind. */
protocol_reject protocol_header_decode_kind(const uint8_t *part, size_t part_bytes, uint8_t expect_kind,
                                            protocol_header *h)
{
    if (part == NULL || part_bytes != PROTOCOL_HEADER_BYTES)
        return PROTOCOL_REJECT_HEADER_SIZE;
    if (memcmp(part, PROTOCOL_MAGIC, 4) != 0)
        return PROTOCOL_REJECT_MAGIC;
    if (part[4] != PROTOCOL_VERSION)
        return PROTOCOL_REJECT_VERSION;
    if (part[5] != PROTOCOL_KIND_COVARIANCE && part[5] != PROTOCOL_KIND_EIGENSPACE && part[5] != PROTOCOL_KIND_IQ)
        return PROTOCOL_REJECT_KIND;
    if (expect_kind != 0 && part[5] != expect_kind)
        return PROTOCOL_REJECT_KIND;

    protocol_header d;
    d.version = part[4];
    d.kind = part[5];
    d.header_bytes = get_u16(part + 6);
    d.seq = get_u64(part + 8);
    d.timestamp_ns = get_u64(part + 16);
    d.n = get_u32(part + 24);
    d.count = get_u32(part + 28);
    d.element = part[32];
    d.storage = part[33];
    d.mode = part[34];
    d.reserved0 = part[35];
    d.flags = get_u32(part + 36);
    d.payload_bytes = get_u64(part + 40);
    d.crc32c = get_u32(part + 48);
    d.snapshots = get_u32(part + 52);
    uint32_t scale_bits = get_u32(part + 56);
    memcpy(&d.scale, &scale_bits, 4);
    d.fragment_first = 0;
    d.fragment_matrices = 0;

    if (d.header_bytes != PROTOCOL_HEADER_BYTES)
        return PROTOCOL_REJECT_HEADER_SIZE;
    /* Bytes 56..59 are the IQ scale, 56..63 a covariance fragment's place;
     * otherwise reserved (zero). */
    int reserved_from = d.kind == PROTOCOL_KIND_IQ ? 60 : 56;
    if (d.kind == PROTOCOL_KIND_COVARIANCE && (d.flags & PROTOCOL_FLAG_FRAGMENT)) {
        d.fragment_first = get_u32(part + 56);
        d.fragment_matrices = get_u32(part + 60);
        reserved_from = PROTOCOL_HEADER_BYTES;
    }
    if (d.kind != PROTOCOL_KIND_IQ)
        d.scale = 0.0f;
    for (int i = reserved_from; i < PROTOCOL_HEADER_BYTES; i++)
        if (part[i] != 0)
            return PROTOCOL_REJECT_FIELD;
    protocol_reject r = check_kind_fields(&d);
    if (r != PROTOCOL_OK)
        return r;
    if (h != NULL)
        *h = d;
    return PROTOCOL_OK;
}

/* ---- sizes ---------------------------------------------------------------------- */

/* a * b, or 0 when the product does not fit in size_t (0 is never a valid size). */
static size_t mul_or_zero(size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    return a * b;
}

size_t protocol_matrix_bytes(uint32_t n, uint8_t element, uint8_t storage)
{
    size_t e = eig_element_bytes(element);
    size_t elements;
    switch (storage) {
    case PROTOCOL_STORAGE_FULL:
        elements = mul_or_zero(n, n);
        break;
    case PROTOCOL_STORAGE_PACKED_LOWER:
    case PROTOCOL_STORAGE_PACKED_UPPER:
        /* n(n+1)/2: halve the even factor first so nothing overflows early. */
        elements = (n % 2 == 0) ? mul_or_zero(n / 2, (size_t)n + 1) : mul_or_zero(n, ((size_t)n + 1) / 2);
        break;
    default:
        return 0;
    }
    return mul_or_zero(elements, e);
}

uint32_t protocol_covariance_matrices(const protocol_header *h)
{
    return (h->flags & PROTOCOL_FLAG_FRAGMENT) ? h->fragment_matrices : h->count;
}

void protocol_fragment_range(uint32_t count, uint32_t fragments, uint32_t i, uint32_t *first, uint32_t *matrices)
{
    uint32_t base = count / fragments, extra = count % fragments;
    *first = i * base + (i < extra ? i : extra);
    *matrices = base + (i < extra ? 1 : 0);
}

void protocol_fragments_begin(protocol_fragments *a, const protocol_header *h)
{
    a->frame = *h;
    a->frame.flags &= ~(uint32_t)PROTOCOL_FLAG_FRAGMENT;
    a->frame.fragment_first = a->frame.fragment_matrices = 0;
    a->frame.payload_bytes = 0;
    a->frame.crc32c = 0;
    a->next = 0;
}

int protocol_fragments_continues(const protocol_fragments *a, const protocol_header *h)
{
    const protocol_header *f = &a->frame;
    return h->seq == f->seq && h->fragment_first == a->next && h->timestamp_ns == f->timestamp_ns &&
           h->n == f->n && h->count == f->count && h->element == f->element && h->storage == f->storage &&
           h->snapshots == f->snapshots && (h->flags & PROTOCOL_FLAG_CRC) == (f->flags & PROTOCOL_FLAG_CRC);
}

int protocol_fragments_join(protocol_fragments *a, const protocol_header *h)
{
    if (a->frame.flags & PROTOCOL_FLAG_CRC)
        a->frame.crc32c = protocol_crc32c_combine(a->frame.crc32c, h->crc32c, (size_t)h->payload_bytes);
    a->frame.payload_bytes += h->payload_bytes;
    a->next += h->fragment_matrices;
    return a->next >= a->frame.count;
}

void protocol_message_budget_begin(protocol_message_budget *b, uint64_t limit)
{
    *b = (protocol_message_budget){.limit = limit};
}

int protocol_message_budget_take(protocol_message_budget *b, uint64_t bytes)
{
    b->parts++;
    if (bytes > UINT64_MAX - b->seen) {
        /* The exact sum no longer fits: it passes every limit, UINT64_MAX too. */
        b->seen = UINT64_MAX;
        b->oversized = 1;
    } else {
        b->seen += bytes;
        if (b->seen > b->limit)
            b->oversized = 1;
    }
    return !b->oversized;
}

/* The parts after the header against a payload of `expected` bytes: their
 * sum above it (oversized, decided without overflow) or below it
 * (truncated), then, when there is more than one part, each of exactly
 * `each` bytes (size_mismatch). */
static protocol_reject check_part_sizes(const size_t *part_bytes, size_t parts, size_t expected, size_t each)
{
    size_t total = 0;
    for (size_t i = 0; i < parts; i++) {
        if (part_bytes[i] > expected - total)
            return PROTOCOL_REJECT_OVERSIZED;
        total += part_bytes[i];
    }
    if (total < expected)
        return PROTOCOL_REJECT_TRUNCATED;
    for (size_t i = 0; parts > 1 && i < parts; i++)
        if (part_bytes[i] != each)
            return PROTOCOL_REJECT_SIZE;
    return PROTOCOL_OK;
}

protocol_reject protocol_covariance_check_sizes(const protocol_header *h, const size_t *part_bytes,
                                                size_t parts, size_t max_payload_bytes)
{
    if (h->kind != PROTOCOL_KIND_COVARIANCE)
        return PROTOCOL_REJECT_KIND;
    if (h->n == 0 || h->count == 0)
        return PROTOCOL_REJECT_SIZE;
    uint32_t matrices = protocol_covariance_matrices(h);
    if ((h->flags & PROTOCOL_FLAG_FRAGMENT) &&
        (matrices == 0 || h->fragment_first >= h->count || matrices > h->count - h->fragment_first))
        return PROTOCOL_REJECT_SIZE;
    size_t matrix = protocol_matrix_bytes(h->n, h->element, h->storage);
    size_t expected = mul_or_zero(matrix, matrices);
    if (matrix == 0 || expected == 0 || h->payload_bytes != (uint64_t)expected)
        return PROTOCOL_REJECT_SIZE;
    if (max_payload_bytes != 0 && expected > max_payload_bytes)
        return PROTOCOL_REJECT_OVERSIZED;
    if (parts != 1 && parts != matrices)
        return PROTOCOL_REJECT_PARTS;
    /* One part per matrix: each must hold exactly one matrix. */
    return check_part_sizes(part_bytes, parts, expected, matrix);
}

size_t protocol_eigenspace_matrix_bytes(uint32_t n, uint8_t element, uint32_t k_sent)
{
    size_t e = eig_element_bytes(element);
    if (e == 0 || n == 0)
        return 0;
    size_t values = mul_or_zero(n, e / 2);
    size_t vectors = mul_or_zero(mul_or_zero(n, e), k_sent);
    if (values == 0 || (k_sent != 0 && vectors == 0) || vectors > SIZE_MAX - values)
        return 0;
    return values + vectors;
}

int protocol_storage_layout(uint8_t storage, eig_storage *eig_storage_out, eig_uplo *uplo_out)
{
    switch (storage) {
    case PROTOCOL_STORAGE_FULL: *eig_storage_out = EIG_STORAGE_FULL; *uplo_out = EIG_LOWER; return 0;
    case PROTOCOL_STORAGE_PACKED_LOWER: *eig_storage_out = EIG_STORAGE_PACKED; *uplo_out = EIG_LOWER; return 0;
    case PROTOCOL_STORAGE_PACKED_UPPER: *eig_storage_out = EIG_STORAGE_PACKED; *uplo_out = EIG_UPPER; return 0;
    default: return -1;
    }
}

int protocol_mode_layout(uint8_t mode, uint32_t n, uint32_t signal_dim, uint32_t *k_sent, uint32_t *first_index)
{
    uint32_t d = signal_dim > n ? n : signal_dim;
    switch (mode) {
    case PROTOCOL_MODE_FULL: *k_sent = n; *first_index = 0; return 0;
    case PROTOCOL_MODE_VALUES: *k_sent = 0; *first_index = 0; return 0;
    case PROTOCOL_MODE_SIGNAL: *k_sent = d; *first_index = n - d; return 0; /* the d largest */
    case PROTOCOL_MODE_NOISE: *k_sent = n - d; *first_index = 0; return 0;  /* the n-d smallest */
    default: *k_sent = 0; *first_index = 0; return -1;
    }
}

size_t protocol_eigenspace_matrix_layout(uint8_t mode, uint32_t n, uint8_t element, uint32_t signal_dim,
                                         uint32_t *k_sent, uint32_t *first_index)
{
    if (protocol_mode_layout(mode, n, signal_dim, k_sent, first_index) != 0)
        return 0;
    return protocol_eigenspace_matrix_bytes(n, element, *k_sent);
}

protocol_reject protocol_matrix_meta_check(uint32_t n, uint8_t mode, const protocol_matrix_meta *m)
{
    uint32_t k_sent, first_index;
    if (m->signal_dim > n || protocol_mode_layout(mode, n, m->signal_dim, &k_sent, &first_index) != 0)
        return PROTOCOL_REJECT_FIELD;
    return m->k_sent == k_sent && m->first_index == first_index ? PROTOCOL_OK : PROTOCOL_REJECT_FIELD;
}

protocol_reject protocol_eigenspace_check_sizes(const protocol_header *h, const protocol_matrix_meta *m,
                                                const size_t *part_bytes, size_t parts,
                                                size_t max_payload_bytes)
{
    if (h->kind != PROTOCOL_KIND_EIGENSPACE)
        return PROTOCOL_REJECT_KIND;
    if (parts != 2)
        return PROTOCOL_REJECT_PARTS;
    if (h->n == 0 || h->count == 0)
        return PROTOCOL_REJECT_SIZE;
    size_t meta = protocol_meta_bytes(h->count);
    if (meta == 0 || part_bytes[0] != meta)
        return PROTOCOL_REJECT_SIZE;

    size_t data = 0;
    for (uint32_t b = 0; b < h->count; b++) {
        protocol_reject r = protocol_matrix_meta_check(h->n, h->mode, &m[b]);
        if (r != PROTOCOL_OK)
            return r;
        size_t one = protocol_eigenspace_matrix_bytes(h->n, h->element, m[b].k_sent);
        if (one == 0 || one > SIZE_MAX - data)
            return PROTOCOL_REJECT_SIZE;
        data += one;
    }
    if (data > SIZE_MAX - meta || h->payload_bytes != (uint64_t)(meta + data))
        return PROTOCOL_REJECT_SIZE;
    if (max_payload_bytes != 0 && meta + data > max_payload_bytes)
        return PROTOCOL_REJECT_OVERSIZED;
    if (part_bytes[1] < data)
        return PROTOCOL_REJECT_TRUNCATED;
    if (part_bytes[1] > data)
        return PROTOCOL_REJECT_OVERSIZED;
    return PROTOCOL_OK;
}

/* ---- eigenspace meta -------------------------------------------------------------- */

size_t protocol_meta_bytes(uint32_t count)
{
    return PROTOCOL_STAGE_TIMES_BYTES + (size_t)count * PROTOCOL_MATRIX_META_BYTES;
}

void protocol_meta_encode(const protocol_stage_times *t, const protocol_matrix_meta *m,
                          uint32_t count, uint8_t *out)
{
    put_u64(out + 0, t->received_ns);
    put_u64(out + 8, t->solve_start_ns);
    put_u64(out + 16, t->solve_end_ns);
    put_u64(out + 24, t->published_ns);
    uint8_t *p = out + PROTOCOL_STAGE_TIMES_BYTES;
    for (uint32_t b = 0; b < count; b++, p += PROTOCOL_MATRIX_META_BYTES) {
        put_u32(p + 0, (uint32_t)m[b].status);
        put_u32(p + 4, m[b].signal_dim);
        put_u32(p + 8, m[b].k_sent);
        put_u32(p + 12, m[b].first_index);
    }
}

protocol_reject protocol_meta_decode(const uint8_t *in, size_t bytes, uint32_t count,
                                     protocol_stage_times *t, protocol_matrix_meta *m)
{
    size_t expected = protocol_meta_bytes(count);
    if (bytes < expected)
        return PROTOCOL_REJECT_TRUNCATED;
    if (bytes > expected)
        return PROTOCOL_REJECT_OVERSIZED;
    if (t != NULL) {
        t->received_ns = get_u64(in + 0);
        t->solve_start_ns = get_u64(in + 8);
        t->solve_end_ns = get_u64(in + 16);
        t->published_ns = get_u64(in + 24);
    }
    if (m != NULL) {
        const uint8_t *p = in + PROTOCOL_STAGE_TIMES_BYTES;
        for (uint32_t b = 0; b < count; b++, p += PROTOCOL_MATRIX_META_BYTES) {
            /* Two's complement reinterpretation, defined for every value. */
            uint32_t s = get_u32(p);
            m[b].status = s <= INT32_MAX ? (int32_t)s : (int32_t)(s - 0x80000000u) - INT32_MAX - 1;
            m[b].signal_dim = get_u32(p + 4);
            m[b].k_sent = get_u32(p + 8);
            m[b].first_index = get_u32(p + 12);
        }
    }
    return PROTOCOL_OK;
}

/* ---- receiver checks ---------------------------------------------------------------- */

protocol_reject protocol_check_finite(const void *data, size_t bytes, uint8_t element)
{
    /* A binary32/64 value is NaN or Inf exactly when its exponent bits are
     * all ones; the integer test vectorizes where isfinite() does not. The
     * elements are little-endian on the wire, as on every host eigstream
     * targets. */
    const uint8_t *p = data;
    uint64_t bad = 0;
    if (element == EIG_COMPLEX_DOUBLE) {
        const uint64_t exponent = 0x7FF0000000000000ull;
        for (size_t i = 0; i + 8 <= bytes; i += 8) {
            uint64_t x; /* memcpy: no aliasing of the caller's doubles */
            memcpy(&x, p + i, 8);
            bad |= (x & exponent) == exponent;
        }
    } else if (element == EIG_COMPLEX_FLOAT) {
        const uint32_t exponent = 0x7F800000u;
        for (size_t i = 0; i + 4 <= bytes; i += 4) {
            uint32_t x;
            memcpy(&x, p + i, 4);
            bad |= (x & exponent) == exponent;
        }
    } else {
        bad = 1;
    }
    return bad ? PROTOCOL_REJECT_NONFINITE : PROTOCOL_OK;
}

protocol_reject protocol_check_config(const protocol_header *h, uint32_t n, uint32_t count,
                                      uint8_t element)
{
    if ((n != 0 && h->n != n) || (count != 0 && h->count != count) ||
        (element != 0 && h->element != element))
        return PROTOCOL_REJECT_CONFIG;
    return PROTOCOL_OK;
}

uint32_t protocol_payload_crc32c(const void *const *part, const size_t *part_bytes, size_t parts)
{
    uint32_t crc = 0;
    for (size_t i = 0; i < parts; i++)
        crc = protocol_crc32c(crc, part[i], part_bytes[i]);
    return crc;
}

protocol_reject protocol_check_crc(const protocol_header *h, const void *const *part,
                                   const size_t *part_bytes, size_t parts)
{
    if (!(h->flags & PROTOCOL_FLAG_CRC))
        return PROTOCOL_OK;
    return protocol_payload_crc32c(part, part_bytes, parts) == h->crc32c ? PROTOCOL_OK : PROTOCOL_REJECT_CRC;
}

/* ---- IQ cube ------------------------------------------------------------------------ */

/* The one name table of each, indexed by wire code; NULL = not a code. */
static const char *const iq_format_names[] = {[PROTOCOL_IQ_CF32_LE] = "cf32_le", [PROTOCOL_IQ_CI16_LE] = "ci16_le"};
static const char *const iq_layout_names[] = {[PROTOCOL_IQ_CPG] = "cpg", [PROTOCOL_IQ_PCG] = "pcg",
                                              [PROTOCOL_IQ_PGC] = "pgc"};

const char *protocol_iq_format_name(int format)
{
    int count = (int)(sizeof iq_format_names / sizeof iq_format_names[0]);
    return format >= 0 && format < count && iq_format_names[format] ? iq_format_names[format] : "unknown";
}

const char *protocol_iq_layout_name(int layout)
{
    int count = (int)(sizeof iq_layout_names / sizeof iq_layout_names[0]);
    return layout >= 0 && layout < count ? iq_layout_names[layout] : "unknown";
}

size_t protocol_iq_sample_bytes(uint8_t format)
{
    switch (format) {
    case PROTOCOL_IQ_CF32_LE: return 8;
    case PROTOCOL_IQ_CI16_LE: return 4;
    default: return 0;
    }
}

size_t protocol_iq_cube_bytes(uint32_t channels, uint32_t pulses, uint32_t gates, uint8_t format)
{
    return mul_or_zero(mul_or_zero(mul_or_zero(channels, pulses), gates), protocol_iq_sample_bytes(format));
}

size_t protocol_iq_index(uint8_t layout, uint32_t channels, uint32_t pulses, uint32_t gates, uint32_t c, uint32_t p,
                         uint32_t g)
{
    switch (layout) {
    case PROTOCOL_IQ_CPG: return ((size_t)c * pulses + p) * gates + g;
    case PROTOCOL_IQ_PCG: return ((size_t)p * channels + c) * gates + g;
    default: return ((size_t)p * gates + g) * channels + c;
    }
}

uint32_t protocol_iq_parts(const protocol_header *h)
{
    switch (h->storage) {
    case PROTOCOL_IQ_CPG: return h->n;
    case PROTOCOL_IQ_PCG:
    case PROTOCOL_IQ_PGC: return h->count;
    default: return 0;
    }
}

protocol_reject protocol_iq_check_sizes(const protocol_header *h, const size_t *part_bytes, size_t parts,
                                        size_t max_payload_bytes)
{
    if (h->kind != PROTOCOL_KIND_IQ)
        return PROTOCOL_REJECT_KIND;
    size_t expected = protocol_iq_cube_bytes(h->n, h->count, h->gates, h->element);
    uint32_t slices = protocol_iq_parts(h);
    if (expected == 0 || slices == 0 || h->payload_bytes != (uint64_t)expected)
        return PROTOCOL_REJECT_SIZE;
    if (max_payload_bytes != 0 && expected > max_payload_bytes)
        return PROTOCOL_REJECT_OVERSIZED;
    if (parts != 1 && parts != slices)
        return PROTOCOL_REJECT_PARTS;
    /* One part per slice: each holds exactly one slice. */
    return check_part_sizes(part_bytes, parts, expected, expected / slices);
}

protocol_reject protocol_iq_check_config(const protocol_header *h, uint32_t channels, uint32_t pulses,
                                         uint32_t gates, uint8_t format, uint8_t layout)
{
    if (h->n != channels || h->count != pulses || h->gates != gates || h->element != format ||
        h->storage != layout)
        return PROTOCOL_REJECT_CONFIG;
    return PROTOCOL_OK;
}

/* ---- CRC32C ------------------------------------------------------------------------ */

/* Castagnoli polynomial, reflected. */
#define CRC32C_POLY 0x82F63B78u

/* Slicing-by-8 tables: table[0] is the classic byte table; table[k][b] is the
 * CRC of byte b followed by k zero bytes, so eight bytes fold in one step. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

static void crc_table_build(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++)
            c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1u)));
        crc_table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            crc_table[k][b] = (crc_table[k - 1][b] >> 8) ^ crc_table[0][crc_table[k - 1][b] & 0xFF];
}

/* Works on the inverted register; the caller does the pre/post inversion. */
static uint32_t crc32c_slice8(uint32_t c, const uint8_t *p, size_t bytes)
{
    while (bytes > 0 && ((uintptr_t)p & 7) != 0) {
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xFF];
        bytes--;
    }
    while (bytes >= 8) {
        uint32_t lo = c ^ get_u32(p);
        uint32_t hi = get_u32(p + 4);
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
            crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
            crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
        p += 8;
        bytes -= 8;
    }
    while (bytes-- > 0)
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xFF];
    return c;
}

uint32_t protocol_crc32c_portable(uint32_t crc, const void *data, size_t bytes)
{
    pthread_once(&crc_table_once, crc_table_build);
    return ~crc32c_slice8(~crc, data, bytes);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define CRC32C_HAVE_SSE42 1

/* SSE4.2 crc32 instruction (the same polynomial, reflected). Three independent
 * streams would hide the instruction's 3-cycle latency; one stream already
 * runs at ~3x the table version, which is enough to stay far off the
 * critical path of a 47 MB frame. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t c, const uint8_t *p, size_t bytes)
{
    while (bytes > 0 && ((uintptr_t)p & 7) != 0) {
        c = _mm_crc32_u8(c, *p++);
        bytes--;
    }
    uint64_t c64 = c;
    while (bytes >= 8) {
        uint64_t v;
        memcpy(&v, p, 8); /* x86 is little-endian: the wire order */
        c64 = _mm_crc32_u64(c64, v);
        p += 8;
        bytes -= 8;
    }
    c = (uint32_t)c64;
    while (bytes-- > 0)
        c = _mm_crc32_u8(c, *p++);
    return c;
}

static int crc_use_sse42;
static pthread_once_t crc_detect_once = PTHREAD_ONCE_INIT;

static void crc_detect(void)
{
    __builtin_cpu_init();
    crc_use_sse42 = __builtin_cpu_supports("sse4.2") ? 1 : 0;
}
#endif

uint32_t protocol_crc32c(uint32_t crc, const void *data, size_t bytes)
{
#ifdef CRC32C_HAVE_SSE42
    pthread_once(&crc_detect_once, crc_detect);
    if (crc_use_sse42)
        return ~crc32c_sse42(~crc, data, bytes);
#endif
    return protocol_crc32c_portable(crc, data, bytes);
}

/* CRC arithmetic is in GF(2)[x] modulo the CRC32C polynomial, in the
 * reflected bit order of the register: bit 31 holds x^0, bit 0 x^31. The
 * register of A||B is that of A multiplied by x^(8|B|), plus that of B (the
 * initial and final inversions cancel between the two). */
static uint32_t crc32c_multiply(uint32_t a, uint32_t b)
{
    uint32_t product = 0;
    for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
        if (a & bit)
            product ^= b;
        b = (b >> 1) ^ (CRC32C_POLY & (0u - (b & 1u))); /* b *= x */
    }
    return product;
}

uint32_t protocol_crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t bytes_b)
{
    uint32_t shift = 1u << 31;      /* x^0 */
    uint32_t power = 1u << (31 - 8); /* x^8: one byte */
    for (size_t n = bytes_b; n != 0; n >>= 1) {
        if (n & 1)
            shift = crc32c_multiply(shift, power);
        power = crc32c_multiply(power, power); /* x^(8 * 2^k) */
    }
    return crc32c_multiply(shift, crc_a) ^ crc_b;
}

const char *protocol_crc32c_implementation(void)
{
#ifdef CRC32C_HAVE_SSE42
    pthread_once(&crc_detect_once, crc_detect);
    if (crc_use_sse42)
        return "sse4.2";
#endif
    return "slicing-by-8";
}
