/*
 * recording_read.c - the recording reader: meta parsing and checks, part
 * sizes, frames read back with their CRC checked (recording.h). Both
 * layouts (recording_internal.h): samples, a frame's head from its journal
 * record and its samples from the data file; frames (recordings before
 * 2026-11-27), the whole frame from the data file.
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

/* ---- reader ------------------------------------------------------------------------- */

struct recording_reader {
    char name[RECORDING_PATH_MAX];
    recording_layout layout;
    int data_fd, journal_fd;     /* journal: layout samples only, else -1 */
    uint64_t data_size;
    uint64_t head_bytes;         /* a frame's bytes that are not samples */
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
    error_text_set(c->err, c->err_bytes, "%s: %s%s%s %s, must be %s", c->file, where, where[0] ? "." : "",
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
    error_text_set(c->err, c->err_bytes, "%s: %s%s%s %s, must be a non-negative integer", c->file, where,
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

static const char *kind_name_int(int v) { return recording_kind_name((uint8_t)v); }
static const char *element_name_int(int v) { return eig_precision_name((eig_precision)v); }
static const char *storage_name_int(int v) { return protocol_storage_name((uint8_t)v); }

/* A global string field that must name one of the codes first..last; -1 with EFORMAT otherwise. */
static int meta_code(const meta_context *c, json_t *global, const char *key, int first, int last,
                     const char *(*name)(int))
{
    json_t *v = meta_field(c, global, "global", key, JSON_STRING);
    int code = v == NULL ? -1 : code_of_name(json_string_value(v), first, last, name);
    if (v != NULL && code < 0)
        error_text_set(c->err, c->err_bytes, "%s: global.%s \"%s\" is not a known value", c->file, key,
             json_string_value(v));
    return code;
}

static const char *iq_format_name_int(int v) { return protocol_iq_format_name(v); }
static const char *iq_layout_name_int(int v) { return protocol_iq_layout_name(v); }

/* The fields of f's kind from global: element and storage (covariance),
 * element and mode (eigenspace), sample format, layout and gates (IQ:
 * eigstream:element, eigstream:iq_layout, eigstream:gates). 0, or -1 with
 * EFORMAT named. */
static int reader_parse_kind_fields(const meta_context *c, json_t *global, recording_format *f)
{
    int element, storage = PROTOCOL_STORAGE_FULL, mode = PROTOCOL_MODE_NONE;
    uint64_t gates = 0;
    if (f->kind == PROTOCOL_KIND_IQ) {
        element = meta_code(c, global, "eigstream:element", PROTOCOL_IQ_CF32_LE, PROTOCOL_IQ_CI16_LE,
                            iq_format_name_int);
        storage = element < 0 ? -1
                              : meta_code(c, global, "eigstream:iq_layout", PROTOCOL_IQ_CPG, PROTOCOL_IQ_PGC,
                                          iq_layout_name_int);
        if (storage >= 0 && meta_u64(c, global, "global", "eigstream:gates", &gates) != 0)
            return -1;
        if (storage >= 0 && (gates == 0 || gates > UINT32_MAX)) {
            error_text_set(c->err, c->err_bytes, "%s: global.eigstream:gates out of range", c->file);
            return -1;
        }
    } else {
        element = meta_code(c, global, "eigstream:element", EIG_COMPLEX_FLOAT, EIG_COMPLEX_DOUBLE, element_name_int);
        if (element >= 0 && f->kind == PROTOCOL_KIND_COVARIANCE)
            storage = meta_code(c, global, "eigstream:storage", PROTOCOL_STORAGE_FULL, PROTOCOL_STORAGE_PACKED_UPPER,
                                storage_name_int);
        else if (element >= 0)
            mode = meta_code(c, global, "eigstream:mode", PROTOCOL_MODE_FULL, PROTOCOL_MODE_NOISE, protocol_mode_name);
    }
    if (element < 0 || storage < 0 || mode < 0)
        return -1;
    f->element = (uint8_t)element;
    f->storage = (uint8_t)storage;
    f->mode = (uint8_t)mode;
    f->gates = (uint32_t)gates;
    return 0;
}

/* global.eigstream:layout into r->layout: absent (a recording before
 * 2026-11-27) is frames. 0, or -1 with EFORMAT named. */
static int reader_parse_layout(recording_reader *r, const meta_context *c, json_t *global)
{
    json_t *v = json_object_get(global, "eigstream:layout");
    r->layout = RECORDING_LAYOUT_FRAMES;
    if (v == NULL)
        return 0;
    const char *text = json_string_value(v);
    if (text != NULL && strcmp(text, recording_layout_name(RECORDING_LAYOUT_SAMPLES)) == 0)
        r->layout = RECORDING_LAYOUT_SAMPLES;
    else if (text == NULL || strcmp(text, recording_layout_name(RECORDING_LAYOUT_FRAMES)) != 0) {
        error_text_set(c->err, c->err_bytes, "%s: global.eigstream:layout must be \"samples\" or \"frames\"",
                       c->file);
        return -1;
    }
    return 0;
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
        return ERROR_TEXT_FAIL(RECORDING_EVERSION, c->err, c->err_bytes,
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
    int kind = meta_code(c, global, "eigstream:kind", PROTOCOL_KIND_COVARIANCE, PROTOCOL_KIND_IQ, kind_name_int);
    if (kind < 0 || meta_u64(c, global, "global", "eigstream:n", &n) ||
        meta_u64(c, global, "global", "eigstream:count", &count) ||
        meta_u64(c, global, "global", "eigstream:truncated_bytes", &r->truncated_bytes))
        return RECORDING_EFORMAT;
    if (n == 0 || n > UINT32_MAX || count == 0 || count > UINT32_MAX)
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, c->err, c->err_bytes, "%s: global.eigstream:n or count out of range", c->file);
    *f = (recording_format){.protocol_version = (uint8_t)version, .kind = (uint8_t)kind, .n = (uint32_t)n,
                            .count = (uint32_t)count};
    if (reader_parse_kind_fields(c, global, f) != 0 || reader_parse_layout(r, c, global) != 0)
        return RECORDING_EFORMAT;
    const char *datatype = json_string_value(json_object_get(global, "core:datatype"));
    if (strcmp(datatype, recording_sigmf_datatype(f, 1)) != 0)
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, c->err, c->err_bytes, "%s: global.core:datatype \"%s\", %s frames of "
                               "eigstream:element \"%s\" are \"%s\"", c->file, datatype, recording_kind_name(f->kind),
                               json_string_value(json_object_get(global, "eigstream:element")),
                               recording_sigmf_datatype(f, 1));
    json_t *d = json_object_get(global, "core:description");
    r->description = strdup(json_is_string(d) ? json_string_value(d) : "");
    return r->description == NULL ? ERROR_TEXT_FAIL(RECORDING_ENOMEM, c->err, c->err_bytes, "%s: out of memory", c->file)
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
        /* Divided, not multiplied: matrix * parts wraps for a hostile n (2^29
         * complex floats x 8 parts is 2^64 bytes, "equal" to an empty payload). */
        return matrix != 0 && payload % matrix == 0 && payload / matrix == parts ? 0 : -1;
    }
    if (f->kind == PROTOCOL_KIND_IQ) {
        /* One part, or one per slice of the layout (protocol_iq_parts). */
        protocol_header h = {.kind = PROTOCOL_KIND_IQ, .n = f->n, .count = f->count, .gates = f->gates,
                             .element = f->element, .storage = f->storage, .payload_bytes = payload};
        uint32_t slices = protocol_iq_parts(&h);
        size_t cube = protocol_iq_cube_bytes(f->n, f->count, f->gates, f->element);
        if (cube == 0 || payload != cube || slices == 0 || (parts != 1 && parts != slices))
            return -1;
        for (uint32_t i = 0; part_bytes != NULL && i < parts; i++)
            part_bytes[i] = parts == 1 ? cube : cube / slices;
        return 0;
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
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, c->err, c->err_bytes, "%s: global.eigstream:frames %" PRIu64
                    " but eigstream:index has %zu entries", c->file, frames, json_array_size(index));
    r->index = calloc(frames ? (size_t)frames : 1, sizeof *r->index);
    if (r->index == NULL)
        return ERROR_TEXT_FAIL(RECORDING_ENOMEM, c->err, c->err_bytes, "%s: out of memory for the index", c->file);
    uint64_t end = 0, parts;
    r->head_bytes = recording_frame_overhead_bytes(&r->format);
    /* What of a frame the data file holds: its samples, or all of it. */
    uint64_t outside = r->layout == RECORDING_LAYOUT_SAMPLES ? r->head_bytes : 0;
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
                                     : ERROR_TEXT_FAIL(RECORDING_EFORMAT, c->err, c->err_bytes, "%s: %s is not an object",
                                            c->file, where);
        f->parts = (uint32_t)parts;
        f->crc32c = (uint32_t)crc;
        if (f->offset < end || f->bytes < r->head_bytes || f->offset > r->data_size ||
            f->bytes - outside > r->data_size - f->offset)
            return ERROR_TEXT_FAIL(RECORDING_EFORMAT, c->err, c->err_bytes,
                        "%s: %s (offset %" PRIu64 ", %" PRIu64 " bytes) overlaps the previous frame or lies outside "
                        "the data file (%" PRIu64 " bytes)", c->file, where, f->offset, f->bytes, r->data_size);
        if (crc > UINT32_MAX || parts == 0 || parts > RECORDING_PARTS_MAX ||
            part_sizes(&r->format, f->bytes, f->parts, NULL, 0) != 0)
            return ERROR_TEXT_FAIL(RECORDING_EFORMAT, c->err, c->err_bytes, "%s: %s: crc32c or parts (%" PRIu64 ") out of range",
                        c->file, where, parts);
        end = f->offset + f->bytes - outside;
    }
    r->frames = frames;
    return RECORDING_OK;
}

/* Layout samples: opens NAME.sigmf-index, which holds the frames' heads,
 * and checks its header and that it holds a record and head per frame. */
static recording_error reader_open_journal(recording_reader *r, char *err, size_t err_bytes)
{
    if (r->layout != RECORDING_LAYOUT_SAMPLES || r->frames == 0)
        return RECORDING_OK;
    char path[RECORDING_PATH_MAX];
    recording_path_join(path, sizeof path, r->name, ".sigmf-index");
    r->journal_fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    uint8_t head[JOURNAL_HEADER_BYTES];
    recording_layout layout;
    if (r->journal_fd < 0 || fstat(r->journal_fd, &st) != 0)
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s (the frames' headers are there: a recording "
                               "is its three files)", path, strerror(errno));
    if (recording_pread_all(r->journal_fd, head, sizeof head, 0) != 0 ||
        recording_journal_header_decode(head, &layout) != 0 || layout != RECORDING_LAYOUT_SAMPLES)
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, err, err_bytes, "%s: not a journal of layout samples", path);
    uint64_t stride = RECORD_BYTES + r->head_bytes;
    if (((uint64_t)st.st_size - JOURNAL_HEADER_BYTES) / stride < r->frames)
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, err, err_bytes, "%s: %" PRIu64 " bytes hold fewer than the %" PRIu64
                               " frames of the meta", path, (uint64_t)st.st_size, r->frames);
    return RECORDING_OK;
}

/* Checks the SigMF top level (global, captures, annotations) and one capture per frame. */
static recording_error reader_parse_meta(recording_reader *r, const meta_context *c, json_t *root)
{
    json_t *global = json_is_object(root) ? meta_field(c, root, "", "global", JSON_OBJECT) : NULL;
    if (!json_is_object(root))
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, c->err, c->err_bytes, "%s: the top level is not a JSON object", c->file);
    json_t *captures = global ? meta_field(c, root, "", "captures", JSON_ARRAY) : NULL;
    if (captures == NULL || meta_field(c, root, "", "annotations", JSON_ARRAY) == NULL)
        return RECORDING_EFORMAT;
    recording_error e = reader_parse_global(r, c, global);
    if (e == RECORDING_OK)
        e = reader_parse_index(r, c, global);
    if (e == RECORDING_OK)
        e = reader_open_journal(r, c->err, c->err_bytes);
    if (e == RECORDING_OK && json_array_size(captures) != r->frames)
        e = ERROR_TEXT_FAIL(RECORDING_EFORMAT, c->err, c->err_bytes, "%s: %zu captures for %" PRIu64 " frames", c->file,
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
    recording_path_join(data, sizeof data, r->name, ".sigmf-data");
    recording_path_join(meta, RECORDING_PATH_MAX, r->name, ".sigmf-meta");
    if (access(meta, F_OK) != 0 && errno == ENOENT)
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: missing (a recorder that died leaves none: run "
                    "eigstream-record --repair %s)", meta, r->name);
    r->data_fd = open(data, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (r->data_fd < 0 || fstat(r->data_fd, &st) != 0)
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", data, strerror(errno));
    r->data_size = (uint64_t)st.st_size;
    json_error_t jerr;
    *root = json_load_file(meta, JSON_REJECT_DUPLICATES, &jerr);
    if (*root == NULL)
        return ERROR_TEXT_FAIL(errno == ENOENT ? RECORDING_EIO : RECORDING_EFORMAT, err, err_bytes, "%s:%d: %s", meta,
                    jerr.line, jerr.text);
    return RECORDING_OK;
}

recording_error recording_reader_open(recording_reader **out, const char *path, char *err, size_t err_bytes)
{
    if (out == NULL || path == NULL)
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_reader_open: NULL argument");
    *out = NULL;
    recording_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return ERROR_TEXT_FAIL(RECORDING_ENOMEM, err, err_bytes, "%s: out of memory", path);
    r->data_fd = r->journal_fd = -1;
    if (reader_name(path, r->name, sizeof r->name) != 0) {
        free(r);
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "%s: recording name too long", path);
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
    recording_fd_close(r->data_fd);
    recording_fd_close(r->journal_fd);
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

/* Frame index's bytes into buf, as on the wire: layout frames, from the
 * data file; layout samples, its head from the journal (its record intact
 * and agreeing with the index, the head's CRC matching) then its samples. */
static recording_error reader_fetch(const recording_reader *r, uint64_t index, uint8_t *buf, char *err,
                                    size_t err_bytes)
{
    const recording_frame *f = &r->index[index];
    if (r->layout == RECORDING_LAYOUT_FRAMES) {
        if (recording_pread_all(r->data_fd, buf, (size_t)f->bytes, f->offset) == 0)
            return RECORDING_OK;
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s.sigmf-data: frame %" PRIu64 ": %s", r->name, index,
                               strerror(errno));
    }
    uint8_t record[RECORD_BYTES];
    uint64_t at = JOURNAL_HEADER_BYTES + index * (RECORD_BYTES + r->head_bytes);
    recording_frame j;
    uint32_t head_crc;
    if (recording_pread_all(r->journal_fd, record, sizeof record, at) != 0 ||
        recording_pread_all(r->journal_fd, buf, (size_t)r->head_bytes, at + RECORD_BYTES) != 0)
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s.sigmf-index: frame %" PRIu64 ": %s", r->name, index,
                               strerror(errno));
    if (recording_record_decode(record, RECORDING_LAYOUT_SAMPLES, &j, &head_crc) != 0 || j.seq != f->seq ||
        j.offset != f->offset || j.bytes != f->bytes)
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, err, err_bytes, "%s.sigmf-index: frame %" PRIu64 ": its record is "
                               "damaged or disagrees with the meta", r->name, index);
    if (head_crc != protocol_crc32c(0, buf, (size_t)r->head_bytes))
        return ERROR_TEXT_FAIL(RECORDING_ECRC, err, err_bytes, "%s.sigmf-index: frame %" PRIu64 " seq %" PRIu64
                               ": its head (header and meta) differs from its CRC32C", r->name, index, f->seq);
    if (recording_pread_all(r->data_fd, buf + r->head_bytes, (size_t)(f->bytes - r->head_bytes), f->offset) != 0)
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s.sigmf-data: frame %" PRIu64 ": %s", r->name, index,
                               strerror(errno));
    return RECORDING_OK;
}

recording_error recording_reader_read(recording_reader *r, uint64_t index, void *buf, size_t buf_bytes, char *err,
                                      size_t err_bytes)
{
    if (r == NULL || buf == NULL)
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_reader_read: NULL argument");
    if (index >= r->frames)
        return ERROR_TEXT_FAIL(RECORDING_ERANGE, err, err_bytes, "%s: frame %" PRIu64 " of %" PRIu64, r->name, index, r->frames);
    const recording_frame *f = &r->index[index];
    if (buf_bytes < f->bytes)
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "%s: frame %" PRIu64 " has %" PRIu64 " bytes, buffer %zu",
                    r->name, index, f->bytes, buf_bytes);
    recording_error e = reader_fetch(r, index, buf, err, err_bytes);
    if (e != RECORDING_OK)
        return e;
    protocol_header h;
    const uint8_t *bytes = buf;
    if (protocol_header_decode(bytes, PROTOCOL_HEADER_BYTES, &h) != PROTOCOL_OK || h.seq != f->seq ||
        h.payload_bytes != f->bytes - PROTOCOL_HEADER_BYTES)
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, err, err_bytes, "%s.sigmf-data: frame %" PRIu64 " (offset %" PRIu64
                    "): its header disagrees with the index", r->name, index, f->offset);
    uint32_t crc = protocol_crc32c(0, bytes + PROTOCOL_HEADER_BYTES, (size_t)(f->bytes - PROTOCOL_HEADER_BYTES));
    if (crc != f->crc32c)
        return ERROR_TEXT_FAIL(RECORDING_ECRC, err, err_bytes, "%s.sigmf-data: frame %" PRIu64 " seq %" PRIu64
                    ": CRC32C 0x%08" PRIx32 ", index says 0x%08" PRIx32, r->name, index, f->seq, crc, f->crc32c);
    return RECORDING_OK;
}
