/*
 * recording.c - SigMF recordings of eigstream streams: what the library's files share (errors,
 * the journal record, file and format helpers) and rings. recording.h is
 * the API, docs/recording.md the byte-exact format.
 */
#define _FILE_OFFSET_BITS 64 /* 64-bit off_t for pread/ftruncate on 32-bit hosts too */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recording_internal.h"

const char *recording_strerror(recording_error e)
{
    switch (e) {
    case RECORDING_OK: return "ok";
    case RECORDING_EINVAL: return "invalid argument";
    case RECORDING_EIO: return "I/O error";
    case RECORDING_EFORMAT: return "not a valid recording";
    case RECORDING_EVERSION: return "unsupported protocol version";
    case RECORDING_EMISMATCH: return "frame differs from the recording";
    case RECORDING_ENOMEM: return "out of memory";
    case RECORDING_ERANGE: return "frame index out of range";
    case RECORDING_ECRC: return "frame CRC32C differs from the index";
    }
    return "unknown error";
}

/* ---- little-endian fields and the journal record ------------------------------- */

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t recording_get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void recording_journal_header_encode(uint8_t out[JOURNAL_HEADER_BYTES])
{
    memset(out, 0, JOURNAL_HEADER_BYTES);
    memcpy(out, JOURNAL_MAGIC, 8);
    put_le(out + 8, RECORDING_LAYOUT_SAMPLES, 4);
}

int recording_journal_header_decode(const uint8_t in[JOURNAL_HEADER_BYTES], recording_layout *layout)
{
    uint64_t version = recording_get_le(in + 8, 4);
    if (memcmp(in, JOURNAL_MAGIC, 8) != 0 ||
        (version != RECORDING_LAYOUT_FRAMES && version != RECORDING_LAYOUT_SAMPLES))
        return -1;
    *layout = (recording_layout)version;
    return 0;
}

void recording_record_encode(const recording_frame *f, uint32_t head_crc, uint8_t out[RECORD_BYTES])
{
    memset(out, 0, RECORD_BYTES);
    memcpy(out, RECORD_MAGIC, 4);
    out[4] = RECORDING_LAYOUT_SAMPLES;
    put_le(out + 8, f->seq, 8);
    put_le(out + 16, f->timestamp_ns, 8);
    put_le(out + 24, f->received_ns, 8);
    put_le(out + 32, f->offset, 8);
    put_le(out + 40, f->bytes, 8);
    put_le(out + 48, f->parts, 4);
    put_le(out + 52, f->crc32c, 4);
    put_le(out + RECORD_HEAD_CRC_OFFSET, head_crc, 4);
    put_le(out + RECORD_CRC_OFFSET, protocol_crc32c(0, out, RECORD_CRC_OFFSET), 4);
}

int recording_record_decode(const uint8_t in[RECORD_BYTES], recording_layout layout, recording_frame *f,
                            uint32_t *head_crc)
{
    if (memcmp(in, RECORD_MAGIC, 4) != 0 || in[4] != (uint8_t)layout || in[5] || in[6] || in[7])
        return -1;
    if (recording_get_le(in + RECORD_CRC_OFFSET, 4) != protocol_crc32c(0, in, RECORD_CRC_OFFSET))
        return -1;
    f->seq = recording_get_le(in + 8, 8);
    f->timestamp_ns = recording_get_le(in + 16, 8);
    f->received_ns = recording_get_le(in + 24, 8);
    f->offset = recording_get_le(in + 32, 8);
    f->bytes = recording_get_le(in + 40, 8);
    f->parts = (uint32_t)recording_get_le(in + 48, 4);
    f->crc32c = (uint32_t)recording_get_le(in + 52, 4);
    if (head_crc != NULL)
        *head_crc = (uint32_t)recording_get_le(in + RECORD_HEAD_CRC_OFFSET, 4);
    return 0;
}

/* ---- file helpers ----------------------------------------------------------------- */

void recording_fd_close(int fd)
{
    if (fd >= 0)
        close(fd);
}

/* Writes all bytes, retrying short writes and EINTR; 0 or -1 with errno. */
int recording_write_all(int fd, const void *data, size_t bytes)
{
    const uint8_t *p = data;
    while (bytes > 0) {
        ssize_t w = write(fd, p, bytes);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        bytes -= (size_t)w;
    }
    return 0;
}

/* Reads bytes at offset; 0, or -1 with errno (EIO for a file that ends early). */
int recording_pread_all(int fd, void *data, size_t bytes, uint64_t offset)
{
    uint8_t *p = data;
    while (bytes > 0) {
        ssize_t r = pread(fd, p, bytes, (off_t)offset);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            errno = EIO;
            return -1;
        }
        p += r;
        bytes -= (size_t)r;
        offset += (uint64_t)r;
    }
    return 0;
}

/* NAME + suffix into out; -1 when it does not fit. */
int recording_path_join(char *out, size_t out_bytes, const char *name, const char *suffix)
{
    size_t a = strlen(name), b = strlen(suffix);
    if (a + b >= out_bytes)
        return -1;
    memcpy(out, name, a);
    memcpy(out + a, suffix, b + 1);
    return 0;
}

/* ---- the recording's format --------------------------------------------------------- */

const char *recording_layout_name(recording_layout layout)
{
    switch (layout) {
    case RECORDING_LAYOUT_FRAMES: return "frames";
    case RECORDING_LAYOUT_SAMPLES: return "samples";
    }
    return "unknown";
}

const char *recording_kind_name(uint8_t kind)
{
    switch (kind) {
    case PROTOCOL_KIND_COVARIANCE: return "covariance";
    case PROTOCOL_KIND_EIGENSPACE: return "eigenspace";
    case PROTOCOL_KIND_IQ: return "iq";
    }
    return "unknown";
}

void recording_format_from_header(const protocol_header *h, recording_format *f)
{
    f->protocol_version = h->version;
    f->kind = h->kind;
    f->n = h->n;
    f->count = h->count;
    f->gates = h->kind == PROTOCOL_KIND_IQ ? h->gates : 0;
    f->element = h->element;
    f->storage = h->storage;
    f->mode = h->mode;
}

void recording_format_describe(const recording_format *f, char *out, size_t out_bytes)
{
    if (f->kind == PROTOCOL_KIND_IQ)
        snprintf(out, out_bytes, "iq channels=%" PRIu32 " pulses=%" PRIu32 " gates=%" PRIu32 " %s %s", f->n, f->count,
                 f->gates, protocol_iq_format_name(f->element), protocol_iq_layout_name(f->storage));
    else
        snprintf(out, out_bytes, "%s n=%" PRIu32 " matrices=%" PRIu32 " %s %s", recording_kind_name(f->kind), f->n,
                 f->count, eig_precision_name((eig_precision)f->element),
                 f->kind == PROTOCOL_KIND_COVARIANCE ? protocol_storage_name(f->storage) : protocol_mode_name(f->mode));
}

int recording_format_equal(const recording_format *a, const recording_format *b)
{
    return a->protocol_version == b->protocol_version && a->kind == b->kind && a->n == b->n &&
           a->count == b->count && a->gates == b->gates && a->element == b->element && a->storage == b->storage &&
           a->mode == b->mode;
}

/* Bytes of one SigMF sample: a complex element (covariance), one real
 * number (eigenspace: values and vector components are all reals), an IQ
 * sample of the cube's format. */
size_t recording_sample_bytes(const recording_format *f)
{
    if (f->kind == PROTOCOL_KIND_IQ)
        return protocol_iq_sample_bytes(f->element);
    size_t e = eig_element_bytes(f->element);
    return f->kind == PROTOCOL_KIND_EIGENSPACE ? e / 2 : e;
}

/* Bytes of a frame that are not samples: the header, and the eigenspace meta part. */
uint64_t recording_frame_overhead_bytes(const recording_format *f)
{
    return PROTOCOL_HEADER_BYTES + (f->kind == PROTOCOL_KIND_EIGENSPACE ? protocol_meta_bytes(f->count) : 0);
}

const char *recording_sigmf_datatype(const recording_format *f, int known)
{
    if (!known)
        return "cf64_le";
    if (f->kind == PROTOCOL_KIND_IQ)
        return protocol_iq_format_name(f->element); /* the wire's names are SigMF's: cf32_le, ci16_le */
    int dbl = f->element == EIG_COMPLEX_DOUBLE;
    if (f->kind == PROTOCOL_KIND_EIGENSPACE)
        return dbl ? "rf64_le" : "rf32_le";
    return dbl ? "cf64_le" : "cf32_le";
}

uint64_t recording_head_bytes(const protocol_header *h)
{
    recording_format f;
    recording_format_from_header(h, &f);
    return recording_frame_overhead_bytes(&f);
}

/* Checks a decoded header's payload_bytes against its n, count, element and
 * storage (covariance) or its meta part and sample size (eigenspace, whose
 * data size depends on each matrix's k_sent); 0 when plausible. */
int recording_payload_plausible(const protocol_header *h)
{
    if (h->n == 0 || h->count == 0)
        return -1;
    if (h->kind == PROTOCOL_KIND_IQ) {
        size_t cube = protocol_iq_cube_bytes(h->n, h->count, h->gates, h->element);
        return cube != 0 && h->payload_bytes == cube ? 0 : -1;
    }
    if (h->kind == PROTOCOL_KIND_COVARIANCE) {
        size_t matrix = protocol_matrix_bytes(h->n, h->element, h->storage);
        return matrix != 0 && h->payload_bytes / matrix == h->count && h->payload_bytes % matrix == 0 ? 0 : -1;
    }
    uint64_t meta = protocol_meta_bytes(h->count);
    size_t real = eig_element_bytes(h->element) / 2;
    return h->payload_bytes >= meta && (h->payload_bytes - meta) % real == 0 ? 0 : -1;
}

/* ---- ring and removal ------------------------------------------------------------ */

void recording_ring_name(const char *path, uint64_t number, char *out, size_t out_bytes)
{
    if (out == NULL || out_bytes == 0)
        return;
    snprintf(out, out_bytes, "%s-%06" PRIu64, path ? path : "", number);
}

recording_error recording_remove(const char *name, char *err, size_t err_bytes)
{
    static const char *const suffixes[] = {".sigmf-data", ".sigmf-meta", ".sigmf-index", ".sigmf-meta.tmp"};
    if (name == NULL || name[0] == '\0')
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_remove: no recording name");
    recording_error e = RECORDING_OK;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char path[RECORDING_PATH_MAX];
        if (recording_path_join(path, sizeof path, name, suffixes[i]) != 0)
            return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "%s: recording name too long", name);
        if (unlink(path) != 0 && errno != ENOENT && e == RECORDING_OK)
            e = ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    }
    return e;
}
