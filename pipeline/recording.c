/*
 * recording.c - SigMF recordings of eigstream streams: the writer, the
 * journal, the meta (jansson), crash repair and the reader (recording.h is
 * the API, docs/recording.md the byte-exact format).
 */
#define _FILE_OFFSET_BITS 64 /* 64-bit off_t for pread/ftruncate on 32-bit hosts too */

#include "recording.h"

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

#define JOURNAL_MAGIC "EIGSJRNL"
#define JOURNAL_VERSION 1
#define JOURNAL_HEADER_BYTES 16
#define RECORD_MAGIC "EIGR"
#define RECORD_VERSION 1
#define RECORD_BYTES 64
#define RECORD_CRC_OFFSET 60
#define SIGMF_VERSION "1.2.0"
#define EXTENSION_VERSION "1.0.0"
/* Read size of the repair walk's CRC pass: large enough for few syscalls. */
#define WALK_CHUNK_BYTES (1u << 20)

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
    }
    return "unknown error";
}

/* Formats the one-line message into err (may be NULL) and returns e. */
static recording_error fail(char *err, size_t err_bytes, recording_error e, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static recording_error fail(char *err, size_t err_bytes, recording_error e, const char *format, ...)
{
    if (err != NULL && err_bytes > 0) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(err, err_bytes, format, ap);
        va_end(ap);
    }
    return e;
}

/* ---- little-endian fields and the journal record ------------------------------- */

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The 16-byte journal file header: "EIGSJRNL", u32 version, u32 zero. */
static void journal_header_encode(uint8_t out[JOURNAL_HEADER_BYTES])
{
    memset(out, 0, JOURNAL_HEADER_BYTES);
    memcpy(out, JOURNAL_MAGIC, 8);
    put_le(out + 8, JOURNAL_VERSION, 4);
}

/* One frame's 64-byte record (layout in docs/recording.md); the last 4
 * bytes are the CRC32C of the first 60, so a torn record never validates. */
static void record_encode(const recording_frame *f, uint8_t out[RECORD_BYTES])
{
    memset(out, 0, RECORD_BYTES);
    memcpy(out, RECORD_MAGIC, 4);
    out[4] = RECORD_VERSION;
    put_le(out + 8, f->seq, 8);
    put_le(out + 16, f->timestamp_ns, 8);
    put_le(out + 24, f->received_ns, 8);
    put_le(out + 32, f->offset, 8);
    put_le(out + 40, f->bytes, 8);
    put_le(out + 48, f->parts, 4);
    put_le(out + 52, f->crc32c, 4);
    put_le(out + RECORD_CRC_OFFSET, protocol_crc32c(0, out, RECORD_CRC_OFFSET), 4);
}

/* Decodes a record; 0 when magic, version, zero bytes and record CRC hold, else -1. */
static int record_decode(const uint8_t in[RECORD_BYTES], recording_frame *f)
{
    if (memcmp(in, RECORD_MAGIC, 4) != 0 || in[4] != RECORD_VERSION || in[5] || in[6] || in[7])
        return -1;
    if (get_le(in + RECORD_CRC_OFFSET, 4) != protocol_crc32c(0, in, RECORD_CRC_OFFSET))
        return -1;
    f->seq = get_le(in + 8, 8);
    f->timestamp_ns = get_le(in + 16, 8);
    f->received_ns = get_le(in + 24, 8);
    f->offset = get_le(in + 32, 8);
    f->bytes = get_le(in + 40, 8);
    f->parts = (uint32_t)get_le(in + 48, 4);
    f->crc32c = (uint32_t)get_le(in + 52, 4);
    return 0;
}

/* ---- file helpers ----------------------------------------------------------------- */

/* Writes all bytes, retrying short writes and EINTR; 0 or -1 with errno. */
static int write_all(int fd, const void *data, size_t bytes)
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
static int pread_all(int fd, void *data, size_t bytes, uint64_t offset)
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
static int path_join(char *out, size_t out_bytes, const char *name, const char *suffix)
{
    size_t a = strlen(name), b = strlen(suffix);
    if (a + b >= out_bytes)
        return -1;
    memcpy(out, name, a);
    memcpy(out + a, suffix, b + 1);
    return 0;
}

/* ---- the recording's format --------------------------------------------------------- */

static const char *kind_name(uint8_t kind)
{
    return kind == PROTOCOL_KIND_COVARIANCE ? "covariance" : kind == PROTOCOL_KIND_EIGENSPACE ? "eigenspace" : "unknown";
}

static void format_from_header(const protocol_header *h, recording_format *f)
{
    f->protocol_version = h->version;
    f->kind = h->kind;
    f->n = h->n;
    f->count = h->count;
    f->element = h->element;
    f->storage = h->storage;
    f->mode = h->mode;
}

static int format_equal(const recording_format *a, const recording_format *b)
{
    return a->protocol_version == b->protocol_version && a->kind == b->kind && a->n == b->n &&
           a->count == b->count && a->element == b->element && a->storage == b->storage && a->mode == b->mode;
}

/* Bytes of one SigMF sample: a complex element (covariance) or one real
 * number (eigenspace: values and vector components are all reals). */
static size_t sample_bytes(const recording_format *f)
{
    size_t e = eig_element_bytes(f->element);
    return f->kind == PROTOCOL_KIND_EIGENSPACE ? e / 2 : e;
}

/* Bytes of a frame that are not samples: the header, and the eigenspace meta part. */
static uint64_t frame_overhead_bytes(const recording_format *f)
{
    return PROTOCOL_HEADER_BYTES + (f->kind == PROTOCOL_KIND_EIGENSPACE ? protocol_meta_bytes(f->count) : 0);
}

static const char *sigmf_datatype(const recording_format *f, int known)
{
    if (!known)
        return "cf64_le";
    int dbl = f->element == EIG_COMPLEX_DOUBLE;
    if (f->kind == PROTOCOL_KIND_EIGENSPACE)
        return dbl ? "rf64_le" : "rf32_le";
    return dbl ? "cf64_le" : "cf32_le";
}

/* Checks a decoded header's payload_bytes against its n, count, element and
 * storage (covariance) or its meta part and sample size (eigenspace, whose
 * data size depends on each matrix's k_sent); 0 when plausible. */
static int payload_plausible(const protocol_header *h)
{
    if (h->n == 0 || h->count == 0)
        return -1;
    if (h->kind == PROTOCOL_KIND_COVARIANCE) {
        size_t matrix = protocol_matrix_bytes(h->n, h->element, h->storage);
        return matrix != 0 && h->payload_bytes / matrix == h->count && h->payload_bytes % matrix == 0 ? 0 : -1;
    }
    uint64_t meta = protocol_meta_bytes(h->count);
    size_t real = eig_element_bytes(h->element) / 2;
    return h->payload_bytes >= meta && (h->payload_bytes - meta) % real == 0 ? 0 : -1;
}

/* ---- meta (SigMF, jansson) ---------------------------------------------------------- */

/* What the meta is written from: the writer's state, or repair's. */
typedef struct meta_source {
    const char *description, *recorder;
    recording_format format;
    int format_known;
    const recording_frame *index;
    uint64_t frames;
    uint64_t truncated_bytes;
} meta_source;

/* A uint64 as JSON: an integer, or a decimal string above INT64_MAX
 * (jansson integers are signed 64-bit); json_get_u64 reads both. */
static json_t *json_u64(uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)v);
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    return json_string(text);
}

/* Adds key: value to obj; returns -1 when value is NULL (jansson out of memory). */
static int json_put(json_t *obj, const char *key, json_t *value)
{
    return value == NULL ? -1 : json_object_set_new(obj, key, value);
}

/* ns since the Unix epoch as ISO 8601 UTC with nanoseconds ("...05.123456789Z"). */
static void iso8601_ns(uint64_t ns, char *out, size_t out_bytes)
{
    time_t seconds = (time_t)(ns / 1000000000u);
    struct tm tm;
    char date[40] = "1970-01-01T00:00:00";
    if (gmtime_r(&seconds, &tm) != NULL)
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, out_bytes, "%s.%09uZ", date, (unsigned)(ns % 1000000000u));
}

static json_t *meta_index_entry(const recording_frame *f)
{
    json_t *e = json_object();
    if (e == NULL)
        return NULL;
    int bad = json_put(e, "seq", json_u64(f->seq)) | json_put(e, "timestamp_ns", json_u64(f->timestamp_ns)) |
              json_put(e, "received_ns", json_u64(f->received_ns)) | json_put(e, "offset", json_u64(f->offset)) |
              json_put(e, "bytes", json_u64(f->bytes)) | json_put(e, "parts", json_integer(f->parts)) |
              json_put(e, "crc32c", json_integer(f->crc32c));
    if (bad) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* The "global" object: SigMF core fields and the eigstream namespace. */
static json_t *meta_global(const meta_source *m)
{
    const recording_format *f = &m->format;
    json_t *g = json_object(), *ext = json_object(), *exts = json_array(), *index = json_array();
    int bad = g == NULL || ext == NULL || exts == NULL || index == NULL;
    bad |= json_put(ext, "name", json_string("eigstream")) | json_put(ext, "version", json_string(EXTENSION_VERSION)) |
           json_put(ext, "optional", json_true()) | json_array_append(exts, ext);
    bad |= json_put(g, "core:datatype", json_string(sigmf_datatype(f, m->format_known))) |
           json_put(g, "core:version", json_string(SIGMF_VERSION)) |
           json_put(g, "core:recorder", json_string(m->recorder ? m->recorder : "eigstream")) |
           json_put(g, "core:description", json_string(m->description ? m->description : "")) |
           json_put(g, "core:num_channels", json_integer(1)) | json_put(g, "core:extensions", json_incref(exts));
    bad |= json_put(g, "eigstream:protocol_version", json_integer(m->format_known ? f->protocol_version : PROTOCOL_VERSION)) |
           json_put(g, "eigstream:kind", json_string(m->format_known ? kind_name(f->kind) : "unknown")) |
           json_put(g, "eigstream:n", json_integer(f->n)) | json_put(g, "eigstream:count", json_integer(f->count)) |
           json_put(g, "eigstream:element", json_string(m->format_known ? eig_precision_name(f->element) : "unknown"));
    if (m->format_known && f->kind == PROTOCOL_KIND_COVARIANCE)
        bad |= json_put(g, "eigstream:storage", json_string(protocol_storage_name(f->storage)));
    if (m->format_known && f->kind == PROTOCOL_KIND_EIGENSPACE)
        bad |= json_put(g, "eigstream:mode", json_string(config_output_mode_name(f->mode)));
    bad |= json_put(g, "eigstream:frames", json_u64(m->frames)) |
           json_put(g, "eigstream:truncated_bytes", json_u64(m->truncated_bytes));
    for (uint64_t i = 0; i < m->frames && !bad; i++)
        bad |= json_array_append_new(index, meta_index_entry(&m->index[i]));
    bad |= json_put(g, "eigstream:index", json_incref(index));
    json_decref(ext);
    json_decref(exts);
    json_decref(index);
    if (bad) {
        json_decref(g);
        return NULL;
    }
    return g;
}

static json_t *meta_annotation_gap(uint64_t sample_start, uint64_t sample_count, uint64_t prev_seq, uint64_t seq)
{
    char comment[128];
    snprintf(comment, sizeof comment, "sequence gap: seq %" PRIu64 " follows seq %" PRIu64, seq, prev_seq);
    json_t *a = json_object();
    if (a == NULL || json_put(a, "core:sample_start", json_u64(sample_start)) |
                         json_put(a, "core:sample_count", json_u64(sample_count)) |
                         json_put(a, "core:comment", json_string(comment)) |
                         json_put(a, "core:label", json_string("eigstream:gap"))) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* captures (one per frame: sample_start, header_bytes, datetime) and
 * annotations (one per sequence gap) into root; 0 or -1 (out of memory). */
static int meta_captures(const meta_source *m, json_t *root)
{
    json_t *captures = json_array(), *annotations = json_array();
    int bad = captures == NULL || annotations == NULL;
    uint64_t sample = 0, overhead = frame_overhead_bytes(&m->format);
    size_t size = m->format_known ? sample_bytes(&m->format) : 1;
    for (uint64_t i = 0; i < m->frames && !bad; i++) {
        const recording_frame *f = &m->index[i];
        uint64_t samples = (f->bytes - overhead) / size;
        char when[64];
        iso8601_ns(f->timestamp_ns, when, sizeof when);
        json_t *c = json_object();
        bad |= c == NULL || json_put(c, "core:sample_start", json_u64(sample)) |
                                json_put(c, "core:header_bytes", json_u64(overhead)) |
                                json_put(c, "core:datetime", json_string(when));
        bad |= json_array_append_new(captures, c);
        if (i > 0 && f->seq != m->index[i - 1].seq + 1)
            bad |= json_array_append_new(annotations, meta_annotation_gap(sample, samples, m->index[i - 1].seq, f->seq));
        sample += samples;
    }
    bad |= json_put(root, "captures", json_incref(captures)) | json_put(root, "annotations", json_incref(annotations));
    json_decref(captures);
    json_decref(annotations);
    return bad ? -1 : 0;
}

/* fsync of the folder holding path, so that a rename survives a power cut. */
static void sync_parent_folder(const char *path)
{
    char folder[RECORDING_PATH_MAX];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (slash == folder)
        slash[1] = '\0';
    else if (slash != NULL)
        *slash = '\0';
    else
        snprintf(folder, sizeof folder, ".");
    int fd = open(folder, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems refuse fsync on folders */
        close(fd);
    }
}

/* Writes NAME.sigmf-meta atomically: NAME.sigmf-meta.tmp, fsync, rename. */
static recording_error meta_write(const char *name, const meta_source *m, char *err, size_t err_bytes)
{
    char path[RECORDING_PATH_MAX], tmp[RECORDING_PATH_MAX];
    if (path_join(path, sizeof path, name, ".sigmf-meta") || path_join(tmp, sizeof tmp, name, ".sigmf-meta.tmp"))
        return fail(err, err_bytes, RECORDING_EINVAL, "%s: recording name too long", name);
    json_t *root = json_object(), *global = meta_global(m);
    if (root == NULL || json_put(root, "global", global) || meta_captures(m, root)) {
        json_decref(root == NULL ? global : root);
        return fail(err, err_bytes, RECORDING_ENOMEM, "%s: out of memory building the meta", path);
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        json_decref(root);
        return fail(err, err_bytes, RECORDING_EIO, "%s: %s", tmp, strerror(errno));
    }
    int bad = json_dumpfd(root, fd, JSON_INDENT(1)) != 0 || write_all(fd, "\n", 1) != 0 || fsync(fd) != 0;
    int saved = errno;
    bad |= close(fd) != 0;
    json_decref(root);
    if (bad || rename(tmp, path) != 0) {
        saved = bad ? saved : errno;
        unlink(tmp);
        return fail(err, err_bytes, RECORDING_EIO, "%s: %s", path, strerror(saved));
    }
    sync_parent_folder(path);
    return RECORDING_OK;
}

/* ---- writer ------------------------------------------------------------------------- */

struct recording_writer {
    char name[RECORDING_PATH_MAX];
    char *description, *recorder;
    int data_fd, journal_fd;
    recording_format format;
    int format_known;
    recording_frame *index; /* frames entries of capacity */
    uint64_t frames, capacity;
    uint64_t data_bytes;    /* end of the last complete frame */
    uint64_t journal_bytes; /* end of the last complete record */
    recording_error failed; /* RECORDING_OK, or the error that stopped appends */
    char failure[RECORDING_ERROR_MAX];
};

static void writer_free(recording_writer *w)
{
    if (w->data_fd >= 0)
        close(w->data_fd);
    if (w->journal_fd >= 0)
        close(w->journal_fd);
    free(w->description);
    free(w->recorder);
    free(w->index);
    free(w);
}

/* Creates (truncates) NAME+suffix for writing; the fd, or -1 with the message in err. */
static int create_file(const char *name, const char *suffix, char *err, size_t err_bytes)
{
    char path[RECORDING_PATH_MAX];
    if (path_join(path, sizeof path, name, suffix)) {
        fail(err, err_bytes, RECORDING_EINVAL, "%s: recording name too long", name);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail(err, err_bytes, RECORDING_EIO, "%s: %s", path, strerror(errno));
    return fd;
}

static char *strdup_or_null(const char *s)
{
    return s == NULL ? NULL : strdup(s);
}

recording_error recording_writer_open(recording_writer **out, const recording_writer_params *params, char *err,
                                      size_t err_bytes)
{
    if (out == NULL)
        return fail(err, err_bytes, RECORDING_EINVAL, "recording_writer_open: out is NULL");
    *out = NULL;
    if (params == NULL || params->path == NULL || params->path[0] == '\0')
        return fail(err, err_bytes, RECORDING_EINVAL, "recording_writer_open: no recording path");
    if (strlen(params->path) + 16 > RECORDING_PATH_MAX)
        return fail(err, err_bytes, RECORDING_EINVAL, "%s: recording name too long", params->path);
    recording_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return fail(err, err_bytes, RECORDING_ENOMEM, "%s: out of memory", params->path);
    w->data_fd = w->journal_fd = -1;
    snprintf(w->name, sizeof w->name, "%s", params->path);
    w->description = strdup_or_null(params->description);
    w->recorder = strdup_or_null(params->recorder);
    if ((params->description && !w->description) || (params->recorder && !w->recorder)) {
        writer_free(w);
        return fail(err, err_bytes, RECORDING_ENOMEM, "%s: out of memory", params->path);
    }
    char meta[RECORDING_PATH_MAX];
    path_join(meta, sizeof meta, w->name, ".sigmf-meta");
    if (unlink(meta) != 0 && errno != ENOENT) {
        int e = errno;
        writer_free(w);
        return fail(err, err_bytes, RECORDING_EIO, "%s: cannot remove the stale meta: %s", meta, strerror(e));
    }
    w->data_fd = create_file(w->name, ".sigmf-data", err, err_bytes);
    w->journal_fd = w->data_fd < 0 ? -1 : create_file(w->name, ".sigmf-index", err, err_bytes);
    uint8_t head[JOURNAL_HEADER_BYTES];
    journal_header_encode(head);
    if (w->journal_fd >= 0 && write_all(w->journal_fd, head, sizeof head) != 0)
        fail(err, err_bytes, RECORDING_EIO, "%s.sigmf-index: %s", w->name, strerror(errno));
    else if (w->journal_fd >= 0) {
        w->journal_bytes = JOURNAL_HEADER_BYTES;
        *out = w;
        return RECORDING_OK;
    }
    writer_free(w);
    return RECORDING_EIO;
}

/* Checks the header and part layout of a frame to append and fills *h:
 * EFORMAT for a header the codec rejects or sizes that disagree, EMISMATCH
 * for a frame unlike the recording's first. */
static recording_error append_check(const recording_writer *w, const uint8_t *header, const size_t *part_bytes,
                                    size_t parts, protocol_header *h, char *err, size_t err_bytes)
{
    protocol_reject r = protocol_header_decode(header, PROTOCOL_HEADER_BYTES, h);
    if (r != PROTOCOL_OK)
        return fail(err, err_bytes, RECORDING_EFORMAT, "%s: frame header rejected: %s", w->name,
                    protocol_reject_name(r));
    uint64_t total = 0;
    for (size_t i = 0; i < parts; i++)
        total += part_bytes[i];
    if (h->kind == PROTOCOL_KIND_COVARIANCE)
        r = protocol_covariance_check_sizes(h, part_bytes, parts, 0);
    else if (parts != 2 || part_bytes[0] != protocol_meta_bytes(h->count) || payload_plausible(h) != 0)
        r = PROTOCOL_REJECT_SIZE;
    if (r == PROTOCOL_OK && total != h->payload_bytes)
        r = PROTOCOL_REJECT_SIZE;
    if (r != PROTOCOL_OK)
        return fail(err, err_bytes, RECORDING_EFORMAT, "%s: frame seq %" PRIu64 ": parts disagree with the header: %s",
                    w->name, h->seq, protocol_reject_name(r));
    recording_format f;
    format_from_header(h, &f);
    if (w->format_known && !format_equal(&f, &w->format))
        return fail(err, err_bytes, RECORDING_EMISMATCH,
                    "%s: frame seq %" PRIu64 " (%s n=%" PRIu32 " count=%" PRIu32 " %s %s %s) differs from the recording "
                    "(%s n=%" PRIu32 " count=%" PRIu32 " %s %s %s)", w->name, h->seq, kind_name(f.kind), f.n, f.count,
                    eig_precision_name(f.element), protocol_storage_name(f.storage), config_output_mode_name(f.mode),
                    kind_name(w->format.kind), w->format.n, w->format.count, eig_precision_name(w->format.element),
                    protocol_storage_name(w->format.storage), config_output_mode_name(w->format.mode));
    return RECORDING_OK;
}

/* Room for one more index entry; -1 when out of memory. */
static int index_reserve(recording_frame **index, uint64_t frames, uint64_t *capacity)
{
    if (frames < *capacity)
        return 0;
    uint64_t grown = *capacity ? *capacity * 2 : 1024;
    recording_frame *p = realloc(*index, (size_t)grown * sizeof *p);
    if (p == NULL)
        return -1;
    *index = p;
    *capacity = grown;
    return 0;
}

/* After a failed write: cuts both files back to their last complete frame and
 * record, and stops the writer. Returns RECORDING_EIO with the errno named. */
static recording_error append_failed(recording_writer *w, const char *file, int error, char *err, size_t err_bytes)
{
    /* When the cut fails too, the meta (index) and repair (journal) still
     * describe only complete frames; the tail is then truncated_bytes. */
    int cut = ftruncate(w->data_fd, (off_t)w->data_bytes) == 0;
    cut &= ftruncate(w->journal_fd, (off_t)w->journal_bytes) == 0;
    w->failed = RECORDING_EIO;
    fail(w->failure, sizeof w->failure, RECORDING_EIO, "%s%s: %s (after %" PRIu64 " frames%s)", w->name, file,
         strerror(error), w->frames, cut ? "" : "; cutting the partial frame off failed");
    return fail(err, err_bytes, RECORDING_EIO, "%s", w->failure);
}

recording_error recording_writer_append(recording_writer *w, const uint8_t *header, const void *const *part,
                                        const size_t *part_bytes, size_t parts, uint64_t received_ns,
                                        char *err, size_t err_bytes)
{
    if (w == NULL || header == NULL || part == NULL || part_bytes == NULL || parts == 0 || parts > RECORDING_PARTS_MAX)
        return fail(err, err_bytes, RECORDING_EINVAL, "recording_writer_append: NULL argument or parts out of range");
    for (size_t i = 0; i < parts; i++)
        if (part[i] == NULL && part_bytes[i] > 0)
            return fail(err, err_bytes, RECORDING_EINVAL, "recording_writer_append: part %zu is NULL", i);
    if (w->failed != RECORDING_OK)
        return fail(err, err_bytes, w->failed, "%s (the writer stopped)", w->failure);
    protocol_header h;
    recording_error e = append_check(w, header, part_bytes, parts, &h, err, err_bytes);
    if (e != RECORDING_OK)
        return e;
    if (index_reserve(&w->index, w->frames, &w->capacity) != 0)
        return fail(err, err_bytes, RECORDING_ENOMEM, "%s: out of memory for the index", w->name);

    recording_frame f = {.seq = h.seq, .timestamp_ns = h.timestamp_ns, .received_ns = received_ns,
                         .offset = w->data_bytes, .bytes = PROTOCOL_HEADER_BYTES + h.payload_bytes,
                         .parts = (uint32_t)parts, .crc32c = 0};
    if (write_all(w->data_fd, header, PROTOCOL_HEADER_BYTES) != 0)
        return append_failed(w, ".sigmf-data", errno, err, err_bytes);
    for (size_t i = 0; i < parts; i++) {
        if (part_bytes[i] == 0)
            continue;
        if (write_all(w->data_fd, part[i], part_bytes[i]) != 0)
            return append_failed(w, ".sigmf-data", errno, err, err_bytes);
        f.crc32c = protocol_crc32c(f.crc32c, part[i], part_bytes[i]);
    }
    uint8_t record[RECORD_BYTES];
    record_encode(&f, record);
    if (write_all(w->journal_fd, record, sizeof record) != 0)
        return append_failed(w, ".sigmf-index", errno, err, err_bytes);

    if (!w->format_known)
        format_from_header(&h, &w->format);
    w->format_known = 1;
    w->index[w->frames++] = f;
    w->data_bytes += f.bytes;
    w->journal_bytes += RECORD_BYTES;
    return RECORDING_OK;
}

uint64_t recording_writer_frames(const recording_writer *w)
{
    return w == NULL ? 0 : w->frames;
}

uint64_t recording_writer_bytes(const recording_writer *w)
{
    return w == NULL ? 0 : w->data_bytes;
}

/* fsync then close fd (-1 is fine); 0 or the errno of the first failure. */
static int sync_close(int fd)
{
    if (fd < 0)
        return 0;
    int e = fsync(fd) != 0 ? errno : 0;
    if (close(fd) != 0 && e == 0)
        e = errno;
    return e;
}

recording_error recording_writer_close(recording_writer **wp, char *err, size_t err_bytes)
{
    if (wp == NULL || *wp == NULL)
        return fail(err, err_bytes, RECORDING_EINVAL, "recording_writer_close: no writer");
    recording_writer *w = *wp;
    *wp = NULL;
    recording_error first = w->failed;
    if (first != RECORDING_OK)
        fail(err, err_bytes, first, "%s", w->failure);
    /* A tail that append_failed could not cut off is recorded, not hidden. */
    struct stat st;
    uint64_t truncated = 0;
    if (fstat(w->data_fd, &st) == 0 && (uint64_t)st.st_size > w->data_bytes)
        truncated = (uint64_t)st.st_size - w->data_bytes;
    /* The data reaches the disk before the meta that describes it. */
    int data_error = sync_close(w->data_fd), journal_error = sync_close(w->journal_fd);
    w->data_fd = w->journal_fd = -1;
    if (first == RECORDING_OK && (data_error || journal_error))
        first = fail(err, err_bytes, RECORDING_EIO, "%s: closing the %s file: %s", w->name,
                     data_error ? "data" : "journal", strerror(data_error ? data_error : journal_error));
    meta_source m = {.description = w->description, .recorder = w->recorder, .format = w->format,
                     .format_known = w->format_known, .index = w->index, .frames = w->frames, .truncated_bytes = truncated};
    char meta_err[RECORDING_ERROR_MAX];
    recording_error e = meta_write(w->name, &m, meta_err, sizeof meta_err);
    if (e != RECORDING_OK && first == RECORDING_OK)
        first = fail(err, err_bytes, e, "%s", meta_err);
    writer_free(w);
    return first;
}

/* ---- repair ------------------------------------------------------------------------- */

typedef struct repair_state {
    const char *name;
    int data_fd;
    uint64_t data_size;
    recording_format format;
    int format_known;
    recording_frame *index;
    uint64_t frames, capacity;
    uint64_t end; /* end of the last complete frame accepted */
} repair_state;

/* Reads and checks the frame header at offset: it decodes, matches the
 * recording's format (the first one fixes it), has a plausible payload size
 * and the frame lies wholly inside the data file. 0 and *h, or -1. */
static int repair_frame_header(repair_state *s, uint64_t offset, protocol_header *h)
{
    uint8_t header[PROTOCOL_HEADER_BYTES];
    if (offset > s->data_size || s->data_size - offset < PROTOCOL_HEADER_BYTES ||
        pread_all(s->data_fd, header, sizeof header, offset) != 0)
        return -1;
    if (protocol_header_decode(header, sizeof header, h) != PROTOCOL_OK || payload_plausible(h) != 0)
        return -1;
    if (h->payload_bytes > s->data_size - offset - PROTOCOL_HEADER_BYTES)
        return -1;
    recording_format f;
    format_from_header(h, &f);
    if (s->format_known && !format_equal(&f, &s->format))
        return -1;
    s->format = f;
    s->format_known = 1;
    return 0;
}

static recording_error repair_add(repair_state *s, const recording_frame *f, char *err, size_t err_bytes)
{
    if (index_reserve(&s->index, s->frames, &s->capacity) != 0)
        return fail(err, err_bytes, RECORDING_ENOMEM, "%s: out of memory for the index", s->name);
    s->index[s->frames++] = *f;
    s->end = f->offset + f->bytes;
    return RECORDING_OK;
}

/* Reads NAME.sigmf-index whole into *journal (*bytes); a missing journal is empty. */
static recording_error repair_journal_load(const char *name, uint8_t **journal, uint64_t *bytes, char *err,
                                           size_t err_bytes)
{
    char path[RECORDING_PATH_MAX];
    *journal = NULL;
    *bytes = 0;
    path_join(path, sizeof path, name, ".sigmf-index");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? RECORDING_OK : fail(err, err_bytes, RECORDING_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    recording_error e = RECORDING_OK;
    if (fstat(fd, &st) != 0)
        e = fail(err, err_bytes, RECORDING_EIO, "%s: %s", path, strerror(errno));
    else if (st.st_size > 0 && (*journal = malloc((size_t)st.st_size)) == NULL)
        e = fail(err, err_bytes, RECORDING_ENOMEM, "%s: out of memory", path);
    else if (st.st_size > 0 && pread_all(fd, *journal, (size_t)st.st_size, 0) != 0)
        e = fail(err, err_bytes, RECORDING_EIO, "%s: %s", path, strerror(errno));
    else if (st.st_size >= JOURNAL_HEADER_BYTES && memcmp(*journal, JOURNAL_MAGIC, 8) != 0)
        e = fail(err, err_bytes, RECORDING_EFORMAT, "%s: not an eigstream journal (magic)", path);
    else if (st.st_size >= JOURNAL_HEADER_BYTES && get_le(*journal + 8, 4) != JOURNAL_VERSION)
        e = fail(err, err_bytes, RECORDING_EFORMAT, "%s: journal version %" PRIu64 ", this build reads %d", path,
                 get_le(*journal + 8, 4), JOURNAL_VERSION);
    close(fd);
    if (e != RECORDING_OK) {
        free(*journal);
        *journal = NULL;
        return e;
    }
    *bytes = (uint64_t)st.st_size;
    return RECORDING_OK;
}

/* Takes the journal's records in order while each is intact (record CRC),
 * follows the previous frame, and points at a complete frame whose header
 * agrees with it; the first that does not ends the journal's part. */
static recording_error repair_journal(repair_state *s, char *err, size_t err_bytes)
{
    uint8_t *journal;
    uint64_t bytes;
    recording_error e = repair_journal_load(s->name, &journal, &bytes, err, err_bytes);
    for (uint64_t at = JOURNAL_HEADER_BYTES; e == RECORDING_OK && at + RECORD_BYTES <= bytes; at += RECORD_BYTES) {
        recording_frame f;
        protocol_header h;
        if (record_decode(journal + at, &f) != 0 || f.offset < s->end || f.bytes < PROTOCOL_HEADER_BYTES)
            break;
        if (repair_frame_header(s, f.offset, &h) != 0 || h.payload_bytes != f.bytes - PROTOCOL_HEADER_BYTES ||
            h.seq != f.seq || f.parts == 0 || f.parts > RECORDING_PARTS_MAX)
            break;
        e = repair_add(s, &f, err, err_bytes);
    }
    free(journal);
    return e;
}

/* Past the journal: complete frames found by their headers' payload_bytes,
 * their CRC computed here; received_ns 0 (unknown); parts 1 for covariance
 * (part boundaries are not in the data file), 2 for eigenspace (always
 * meta + data, the boundary follows from count). */
static recording_error repair_walk(repair_state *s, char *err, size_t err_bytes)
{
    uint8_t *chunk = malloc(WALK_CHUNK_BYTES);
    if (chunk == NULL)
        return fail(err, err_bytes, RECORDING_ENOMEM, "%s: out of memory", s->name);
    recording_error e = RECORDING_OK;
    protocol_header h;
    s->format_known = s->frames > 0; /* a journal record refused after its header fixed it */
    while (e == RECORDING_OK && repair_frame_header(s, s->end, &h) == 0) {
        recording_frame f = {.seq = h.seq, .timestamp_ns = h.timestamp_ns, .received_ns = 0, .offset = s->end,
                             .bytes = PROTOCOL_HEADER_BYTES + h.payload_bytes,
                             .parts = h.kind == PROTOCOL_KIND_EIGENSPACE ? 2 : 1, .crc32c = 0};
        for (uint64_t done = 0; done < h.payload_bytes && e == RECORDING_OK;) {
            size_t want = h.payload_bytes - done < WALK_CHUNK_BYTES ? (size_t)(h.payload_bytes - done) : WALK_CHUNK_BYTES;
            if (pread_all(s->data_fd, chunk, want, f.offset + PROTOCOL_HEADER_BYTES + done) != 0)
                e = fail(err, err_bytes, RECORDING_EIO, "%s.sigmf-data: %s", s->name, strerror(errno));
            f.crc32c = protocol_crc32c(f.crc32c, chunk, want);
            done += want;
        }
        if (e == RECORDING_OK)
            e = repair_add(s, &f, err, err_bytes);
    }
    free(chunk);
    return e;
}

recording_error recording_repair(const char *path, uint64_t *frames, uint64_t *cut_bytes, char *err,
                                 size_t err_bytes)
{
    if (path == NULL || path[0] == '\0' || strlen(path) + 16 > RECORDING_PATH_MAX)
        return fail(err, err_bytes, RECORDING_EINVAL, "recording_repair: no recording name, or too long");
    char data[RECORDING_PATH_MAX];
    path_join(data, sizeof data, path, ".sigmf-data");
    repair_state s = {.name = path, .data_fd = open(data, O_RDONLY | O_CLOEXEC)};
    if (s.data_fd < 0)
        return fail(err, err_bytes, RECORDING_EIO, "%s: %s", data, strerror(errno));
    struct stat st;
    recording_error e = RECORDING_OK;
    if (fstat(s.data_fd, &st) != 0)
        e = fail(err, err_bytes, RECORDING_EIO, "%s: %s", data, strerror(errno));
    s.data_size = e == RECORDING_OK ? (uint64_t)st.st_size : 0;
    if (e == RECORDING_OK)
        e = repair_journal(&s, err, err_bytes);
    if (e == RECORDING_OK)
        e = repair_walk(&s, err, err_bytes);
    close(s.data_fd);
    if (e == RECORDING_OK) {
        meta_source m = {.description = "", .recorder = "eigstream recording_repair", .format = s.format,
                         .format_known = s.format_known, .index = s.index, .frames = s.frames,
                         .truncated_bytes = s.data_size - s.end};
        e = meta_write(path, &m, err, err_bytes);
    }
    if (e == RECORDING_OK && frames != NULL)
        *frames = s.frames;
    if (e == RECORDING_OK && cut_bytes != NULL)
        *cut_bytes = s.data_size - s.end;
    free(s.index);
    return e;
}

/* ---- reader ------------------------------------------------------------------------- */

struct recording_reader {
    char name[RECORDING_PATH_MAX];
    int data_fd;
    uint64_t data_size;
    recording_format format;
    char *description;
    uint64_t truncated_bytes;
    recording_frame *index;
    uint64_t frames;
};

/* Where a field error is reported: the meta file and the JSON path. */
typedef struct meta_context {
    const char *file;
    char *err;
    size_t err_bytes;
} meta_context;

/* obj[key] when present with the JSON type, else NULL and EFORMAT naming it. */
static json_t *meta_field(const meta_context *c, json_t *obj, const char *where, const char *key, json_type type)
{
    static const char *const type_names[] = {"an object", "an array", "a string", "an integer", "a real",
                                             "a boolean", "a boolean", "null"};
    json_t *v = json_object_get(obj, key);
    if (v != NULL && (json_typeof(v) == type || (type == JSON_TRUE && json_typeof(v) == JSON_FALSE)))
        return v;
    fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: %s%s%s %s, must be %s", c->file, where, where[0] ? "." : "",
         key, v == NULL ? "missing" : "has the wrong type", type_names[type]);
    return NULL;
}

/* A uint64 field written by json_u64 (an integer >= 0, or a decimal string); 0 or -1. */
static int meta_u64(const meta_context *c, json_t *obj, const char *where, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    const char *text = json_string_value(v);
    char *end = NULL;
    errno = 0;
    if (text != NULL && text[0] >= '0' && text[0] <= '9') {
        unsigned long long value = strtoull(text, &end, 10);
        if (errno == 0 && *end == '\0') {
            *out = value;
            return 0;
        }
    }
    fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: %s%s%s %s, must be a non-negative integer", c->file, where,
         where[0] ? "." : "", key, v == NULL ? "missing" : "has the wrong type or value");
    return -1;
}

/* Code first..last whose name(code) is text; -1 when none. */
static int code_of_name(const char *text, int first, int last, const char *(*name)(int))
{
    for (int code = first; text != NULL && code <= last; code++)
        if (strcmp(text, name(code)) == 0)
            return code;
    return -1;
}

static const char *kind_name_int(int v) { return kind_name((uint8_t)v); }
static const char *element_name_int(int v) { return eig_precision_name((eig_precision)v); }
static const char *storage_name_int(int v) { return protocol_storage_name((uint8_t)v); }

/* A global string field that must name one of the codes first..last; -1 with EFORMAT otherwise. */
static int meta_code(const meta_context *c, json_t *global, const char *key, int first, int last,
                     const char *(*name)(int))
{
    json_t *v = meta_field(c, global, "global", key, JSON_STRING);
    int code = v == NULL ? -1 : code_of_name(json_string_value(v), first, last, name);
    if (v != NULL && code < 0)
        fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: global.%s \"%s\" is not a known value", c->file, key,
             json_string_value(v));
    return code;
}

/* The recording_format from global (eigstream namespace), the description,
 * truncated_bytes; checks core:datatype and core:version. */
static recording_error reader_parse_global(recording_reader *r, const meta_context *c, json_t *global)
{
    uint64_t version, n, count;
    if (!meta_field(c, global, "global", "core:datatype", JSON_STRING) ||
        !meta_field(c, global, "global", "core:version", JSON_STRING) ||
        meta_u64(c, global, "global", "eigstream:protocol_version", &version))
        return RECORDING_EFORMAT;
    if (version != PROTOCOL_VERSION)
        return fail(c->err, c->err_bytes, RECORDING_EVERSION,
                    "%s: global.eigstream:protocol_version is %" PRIu64 ", this build reads %d", c->file, version,
                    PROTOCOL_VERSION);
    recording_format *f = &r->format;
    uint64_t frames;
    json_t *kind_text = json_object_get(global, "eigstream:kind");
    if (meta_u64(c, global, "global", "eigstream:frames", &frames) == 0 && frames == 0 &&
        json_is_string(kind_text) && strcmp(json_string_value(kind_text), "unknown") == 0) {
        /* A recording closed before its first frame: no format to check. */
        *f = (recording_format){.protocol_version = PROTOCOL_VERSION};
        r->description = strdup("");
        return r->description == NULL ? RECORDING_ENOMEM : RECORDING_OK;
    }
    int kind = meta_code(c, global, "eigstream:kind", PROTOCOL_KIND_COVARIANCE, PROTOCOL_KIND_EIGENSPACE, kind_name_int);
    int element = kind < 0 ? -1 : meta_code(c, global, "eigstream:element", EIG_COMPLEX_FLOAT, EIG_COMPLEX_DOUBLE,
                                             element_name_int);
    if (element < 0 || meta_u64(c, global, "global", "eigstream:n", &n) ||
        meta_u64(c, global, "global", "eigstream:count", &count) ||
        meta_u64(c, global, "global", "eigstream:truncated_bytes", &r->truncated_bytes))
        return RECORDING_EFORMAT;
    if (n == 0 || n > UINT32_MAX || count == 0 || count > UINT32_MAX)
        return fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: global.eigstream:n or count out of range", c->file);
    int storage = PROTOCOL_STORAGE_FULL, mode = CONFIG_MODE_NONE;
    if (kind == PROTOCOL_KIND_COVARIANCE)
        storage = meta_code(c, global, "eigstream:storage", PROTOCOL_STORAGE_FULL, PROTOCOL_STORAGE_PACKED_UPPER,
                            storage_name_int);
    else
        mode = meta_code(c, global, "eigstream:mode", CONFIG_MODE_FULL, CONFIG_MODE_NOISE, config_output_mode_name);
    if (storage < 0 || mode < 0)
        return RECORDING_EFORMAT;
    *f = (recording_format){.protocol_version = (uint8_t)version, .kind = (uint8_t)kind, .n = (uint32_t)n,
                            .count = (uint32_t)count, .element = (uint8_t)element, .storage = (uint8_t)storage,
                            .mode = (uint8_t)mode};
    const char *datatype = json_string_value(json_object_get(global, "core:datatype"));
    if (strcmp(datatype, sigmf_datatype(f, 1)) != 0)
        return fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: global.core:datatype \"%s\", %s %s frames are \"%s\"",
                    c->file, datatype, element_name_int(element), kind_name(f->kind), sigmf_datatype(f, 1));
    json_t *d = json_object_get(global, "core:description");
    r->description = strdup(json_is_string(d) ? json_string_value(d) : "");
    return r->description == NULL ? fail(c->err, c->err_bytes, RECORDING_ENOMEM, "%s: out of memory", c->file)
                                  : RECORDING_OK;
}

/* Part sizes of a frame of `bytes` bytes received in `parts` parts (see
 * recording_reader_part_sizes); 0, or -1 for a part count the kind never has. */
static int part_sizes(const recording_format *f, uint64_t bytes, uint32_t parts, size_t *part_bytes,
                      size_t max_parts)
{
    uint64_t payload = bytes - PROTOCOL_HEADER_BYTES;
    if (parts > max_parts && part_bytes != NULL)
        return -1;
    if (f->kind == PROTOCOL_KIND_COVARIANCE && parts == 1) {
        if (part_bytes)
            part_bytes[0] = (size_t)payload;
        return 0;
    }
    if (f->kind == PROTOCOL_KIND_COVARIANCE && parts == f->count) {
        size_t matrix = protocol_matrix_bytes(f->n, f->element, f->storage);
        for (uint32_t i = 0; part_bytes != NULL && i < parts; i++)
            part_bytes[i] = matrix;
        return matrix != 0 && payload == (uint64_t)matrix * parts ? 0 : -1;
    }
    if (f->kind == PROTOCOL_KIND_EIGENSPACE && parts == 2 && payload >= protocol_meta_bytes(f->count)) {
        if (part_bytes) {
            part_bytes[0] = protocol_meta_bytes(f->count);
            part_bytes[1] = (size_t)(payload - part_bytes[0]);
        }
        return 0;
    }
    return -1;
}

/* global.eigstream:index into r->index: every entry's fields, frames in
 * increasing non-overlapping order inside the data file, part counts the
 * kind has. */
static recording_error reader_parse_index(recording_reader *r, const meta_context *c, json_t *global)
{
    json_t *index = meta_field(c, global, "global", "eigstream:index", JSON_ARRAY);
    uint64_t frames;
    if (index == NULL || meta_u64(c, global, "global", "eigstream:frames", &frames))
        return RECORDING_EFORMAT;
    if (frames != json_array_size(index))
        return fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: global.eigstream:frames %" PRIu64
                    " but eigstream:index has %zu entries", c->file, frames, json_array_size(index));
    r->index = calloc(frames ? (size_t)frames : 1, sizeof *r->index);
    if (r->index == NULL)
        return fail(c->err, c->err_bytes, RECORDING_ENOMEM, "%s: out of memory for the index", c->file);
    uint64_t end = 0, parts;
    for (uint64_t i = 0; i < frames; i++) {
        json_t *e = json_array_get(index, (size_t)i);
        recording_frame *f = &r->index[i];
        char where[64];
        snprintf(where, sizeof where, "global.eigstream:index[%" PRIu64 "]", i);
        uint64_t crc;
        if (!json_is_object(e) || meta_u64(c, e, where, "seq", &f->seq) ||
            meta_u64(c, e, where, "timestamp_ns", &f->timestamp_ns) ||
            meta_u64(c, e, where, "received_ns", &f->received_ns) || meta_u64(c, e, where, "offset", &f->offset) ||
            meta_u64(c, e, where, "bytes", &f->bytes) || meta_u64(c, e, where, "parts", &parts) ||
            meta_u64(c, e, where, "crc32c", &crc))
            return json_is_object(e) ? RECORDING_EFORMAT
                                     : fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: %s is not an object",
                                            c->file, where);
        f->parts = (uint32_t)parts;
        f->crc32c = (uint32_t)crc;
        if (f->offset < end || f->bytes < PROTOCOL_HEADER_BYTES || f->offset > r->data_size ||
            f->bytes > r->data_size - f->offset)
            return fail(c->err, c->err_bytes, RECORDING_EFORMAT,
                        "%s: %s (offset %" PRIu64 ", %" PRIu64 " bytes) overlaps the previous frame or lies outside "
                        "the data file (%" PRIu64 " bytes)", c->file, where, f->offset, f->bytes, r->data_size);
        if (crc > UINT32_MAX || parts == 0 || parts > RECORDING_PARTS_MAX ||
            part_sizes(&r->format, f->bytes, f->parts, NULL, 0) != 0)
            return fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: %s: crc32c or parts (%" PRIu64 ") out of range",
                        c->file, where, parts);
        end = f->offset + f->bytes;
    }
    r->frames = frames;
    return RECORDING_OK;
}

/* Checks the SigMF top level (global, captures, annotations) and one capture per frame. */
static recording_error reader_parse_meta(recording_reader *r, const meta_context *c, json_t *root)
{
    json_t *global = json_is_object(root) ? meta_field(c, root, "", "global", JSON_OBJECT) : NULL;
    if (!json_is_object(root))
        return fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: the top level is not a JSON object", c->file);
    json_t *captures = global ? meta_field(c, root, "", "captures", JSON_ARRAY) : NULL;
    if (captures == NULL || meta_field(c, root, "", "annotations", JSON_ARRAY) == NULL)
        return RECORDING_EFORMAT;
    recording_error e = reader_parse_global(r, c, global);
    if (e == RECORDING_OK)
        e = reader_parse_index(r, c, global);
    if (e == RECORDING_OK && json_array_size(captures) != r->frames)
        e = fail(c->err, c->err_bytes, RECORDING_EFORMAT, "%s: %zu captures for %" PRIu64 " frames", c->file,
                 json_array_size(captures), r->frames);
    return e;
}

/* NAME from NAME, NAME.sigmf-meta or NAME.sigmf-data; -1 when too long. */
static int reader_name(const char *path, char *name, size_t name_bytes)
{
    if (strlen(path) + 16 > name_bytes)
        return -1;
    snprintf(name, name_bytes, "%s", path);
    size_t len = strlen(name), suffix = strlen(".sigmf-meta");
    if (len > suffix && (strcmp(name + len - suffix, ".sigmf-meta") == 0 ||
                         strcmp(name + len - suffix, ".sigmf-data") == 0))
        name[len - suffix] = '\0';
    return 0;
}

/* Opens the data file and loads the meta JSON of r->name. */
static recording_error reader_load(recording_reader *r, json_t **root, char *meta, char *err, size_t err_bytes)
{
    char data[RECORDING_PATH_MAX];
    path_join(data, sizeof data, r->name, ".sigmf-data");
    path_join(meta, RECORDING_PATH_MAX, r->name, ".sigmf-meta");
    if (access(meta, F_OK) != 0 && errno == ENOENT)
        return fail(err, err_bytes, RECORDING_EIO, "%s: missing (a recorder that died leaves none: run "
                    "eigstream-record --repair %s)", meta, r->name);
    r->data_fd = open(data, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (r->data_fd < 0 || fstat(r->data_fd, &st) != 0)
        return fail(err, err_bytes, RECORDING_EIO, "%s: %s", data, strerror(errno));
    r->data_size = (uint64_t)st.st_size;
    json_error_t jerr;
    *root = json_load_file(meta, JSON_REJECT_DUPLICATES, &jerr);
    if (*root == NULL)
        return fail(err, err_bytes, errno == ENOENT ? RECORDING_EIO : RECORDING_EFORMAT, "%s:%d: %s", meta,
                    jerr.line, jerr.text);
    return RECORDING_OK;
}

recording_error recording_reader_open(recording_reader **out, const char *path, char *err, size_t err_bytes)
{
    if (out == NULL || path == NULL)
        return fail(err, err_bytes, RECORDING_EINVAL, "recording_reader_open: NULL argument");
    *out = NULL;
    recording_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return fail(err, err_bytes, RECORDING_ENOMEM, "%s: out of memory", path);
    r->data_fd = -1;
    if (reader_name(path, r->name, sizeof r->name) != 0) {
        free(r);
        return fail(err, err_bytes, RECORDING_EINVAL, "%s: recording name too long", path);
    }
    char meta[RECORDING_PATH_MAX];
    json_t *root = NULL;
    recording_error e = reader_load(r, &root, meta, err, err_bytes);
    if (e == RECORDING_OK) {
        meta_context c = {.file = meta, .err = err, .err_bytes = err_bytes};
        e = reader_parse_meta(r, &c, root);
    }
    json_decref(root);
    if (e != RECORDING_OK) {
        recording_reader_close(&r);
        return e;
    }
    *out = r;
    return RECORDING_OK;
}

void recording_reader_close(recording_reader **rp)
{
    if (rp == NULL || *rp == NULL)
        return;
    recording_reader *r = *rp;
    if (r->data_fd >= 0)
        close(r->data_fd);
    free(r->description);
    free(r->index);
    free(r);
    *rp = NULL;
}

const recording_format *recording_reader_format(const recording_reader *r)
{
    return r == NULL ? NULL : &r->format;
}

uint64_t recording_reader_frames(const recording_reader *r)
{
    return r == NULL ? 0 : r->frames;
}

const recording_frame *recording_reader_frame(const recording_reader *r, uint64_t index)
{
    return r == NULL || index >= r->frames ? NULL : &r->index[index];
}

const char *recording_reader_description(const recording_reader *r)
{
    return r == NULL || r->description == NULL ? "" : r->description;
}

uint64_t recording_reader_truncated_bytes(const recording_reader *r)
{
    return r == NULL ? 0 : r->truncated_bytes;
}

recording_error recording_reader_part_sizes(const recording_reader *r, uint64_t index, size_t *part_bytes,
                                            size_t max_parts, size_t *parts)
{
    if (r == NULL || part_bytes == NULL || parts == NULL)
        return RECORDING_EINVAL;
    if (index >= r->frames)
        return RECORDING_ERANGE;
    const recording_frame *f = &r->index[index];
    if (f->parts > max_parts)
        return RECORDING_EINVAL;
    if (part_sizes(&r->format, f->bytes, f->parts, part_bytes, max_parts) != 0)
        return RECORDING_EFORMAT;
    *parts = f->parts;
    return RECORDING_OK;
}

recording_error recording_reader_read(recording_reader *r, uint64_t index, void *buf, size_t buf_bytes, char *err,
                                      size_t err_bytes)
{
    if (r == NULL || buf == NULL)
        return fail(err, err_bytes, RECORDING_EINVAL, "recording_reader_read: NULL argument");
    if (index >= r->frames)
        return fail(err, err_bytes, RECORDING_ERANGE, "%s: frame %" PRIu64 " of %" PRIu64, r->name, index, r->frames);
    const recording_frame *f = &r->index[index];
    if (buf_bytes < f->bytes)
        return fail(err, err_bytes, RECORDING_EINVAL, "%s: frame %" PRIu64 " has %" PRIu64 " bytes, buffer %zu",
                    r->name, index, f->bytes, buf_bytes);
    if (pread_all(r->data_fd, buf, (size_t)f->bytes, f->offset) != 0)
        return fail(err, err_bytes, RECORDING_EIO, "%s.sigmf-data: frame %" PRIu64 ": %s", r->name, index,
                    strerror(errno));
    protocol_header h;
    const uint8_t *bytes = buf;
    if (protocol_header_decode(bytes, PROTOCOL_HEADER_BYTES, &h) != PROTOCOL_OK || h.seq != f->seq ||
        h.payload_bytes != f->bytes - PROTOCOL_HEADER_BYTES)
        return fail(err, err_bytes, RECORDING_EFORMAT, "%s.sigmf-data: frame %" PRIu64 " (offset %" PRIu64
                    "): its header disagrees with the index", r->name, index, f->offset);
    uint32_t crc = protocol_crc32c(0, bytes + PROTOCOL_HEADER_BYTES, (size_t)(f->bytes - PROTOCOL_HEADER_BYTES));
    if (crc != f->crc32c)
        return fail(err, err_bytes, RECORDING_EFORMAT, "%s.sigmf-data: frame %" PRIu64 " seq %" PRIu64
                    ": CRC32C 0x%08" PRIx32 ", index says 0x%08" PRIx32, r->name, index, f->seq, crc, f->crc32c);
    return RECORDING_OK;
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
        return fail(err, err_bytes, RECORDING_EINVAL, "recording_remove: no recording name");
    recording_error e = RECORDING_OK;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char path[RECORDING_PATH_MAX];
        if (path_join(path, sizeof path, name, suffixes[i]) != 0)
            return fail(err, err_bytes, RECORDING_EINVAL, "%s: recording name too long", name);
        if (unlink(path) != 0 && errno != ENOENT && e == RECORDING_OK)
            e = fail(err, err_bytes, RECORDING_EIO, "%s: %s", path, strerror(errno));
    }
    return e;
}
