/*
 * recording_meta.c - the SigMF meta of a recording, written with jansson
 * (recording_internal.h).
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

/* ---- meta (SigMF, jansson) ---------------------------------------------------------- */


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

/* eigstream:element: the precision ("float", "double"), an IQ cube's sample
 * format ("cf32_le", "ci16_le"), "unknown" before the first frame. */
static const char *meta_element_name(const meta_source *m)
{
    if (!m->format_known)
        return "unknown";
    if (m->format.kind == PROTOCOL_KIND_IQ)
        return protocol_iq_format_name(m->format.element);
    return eig_precision_name((eig_precision)m->format.element);
}

/* The "global" object: SigMF core fields and the eigstream namespace. */
static json_t *meta_global(const meta_source *m)
{
    const recording_format *f = &m->format;
    json_t *g = json_object(), *ext = json_object(), *exts = json_array(), *index = json_array();
    int bad = g == NULL || ext == NULL || exts == NULL || index == NULL;
    bad |= json_put(ext, "name", json_string("eigstream")) | json_put(ext, "version", json_string(EXTENSION_VERSION)) |
           json_put(ext, "optional", json_true()) | json_array_append(exts, ext);
    bad |= json_put(g, "core:datatype", json_string(recording_sigmf_datatype(f, m->format_known))) |
           json_put(g, "core:version", json_string(SIGMF_VERSION)) |
           json_put(g, "core:recorder", json_string(m->recorder ? m->recorder : "eigstream")) |
           json_put(g, "core:description", json_string(m->description ? m->description : "")) |
           json_put(g, "core:num_channels", json_integer(1)) | json_put(g, "core:extensions", json_incref(exts));
    bad |= json_put(g, "eigstream:protocol_version", json_integer(m->format_known ? f->protocol_version : PROTOCOL_VERSION)) |
           json_put(g, "eigstream:kind", json_string(m->format_known ? recording_kind_name(f->kind) : "unknown")) |
           json_put(g, "eigstream:n", json_integer(f->n)) | json_put(g, "eigstream:count", json_integer(f->count)) |
           json_put(g, "eigstream:element", json_string(meta_element_name(m)));
    if (m->format_known && f->kind == PROTOCOL_KIND_COVARIANCE)
        bad |= json_put(g, "eigstream:storage", json_string(protocol_storage_name(f->storage)));
    if (m->format_known && f->kind == PROTOCOL_KIND_EIGENSPACE)
        bad |= json_put(g, "eigstream:mode", json_string(protocol_mode_name(f->mode)));
    if (m->format_known && f->kind == PROTOCOL_KIND_IQ)
        bad |= json_put(g, "eigstream:gates", json_integer(f->gates)) |
               json_put(g, "eigstream:iq_layout", json_string(protocol_iq_layout_name(f->storage)));
    bad |= json_put(g, "eigstream:layout", json_string(recording_layout_name(m->layout))) |
           json_put(g, "eigstream:frames", json_u64(m->frames)) |
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

/* captures (one per frame: sample_start, datetime; layout frames also
 * header_bytes, the frame's bytes before its samples) and annotations (one
 * per sequence gap) into root; 0 or -1 (out of memory). */
static int meta_captures(const meta_source *m, json_t *root)
{
    json_t *captures = json_array(), *annotations = json_array();
    int bad = captures == NULL || annotations == NULL;
    uint64_t sample = 0, overhead = recording_frame_overhead_bytes(&m->format);
    size_t size = m->format_known ? recording_sample_bytes(&m->format) : 1;
    for (uint64_t i = 0; i < m->frames && !bad; i++) {
        const recording_frame *f = &m->index[i];
        uint64_t samples = (f->bytes - overhead) / size;
        char when[64];
        iso8601_ns(f->timestamp_ns, when, sizeof when);
        json_t *c = json_object();
        bad |= c == NULL || json_put(c, "core:sample_start", json_u64(sample)) |
                                json_put(c, "core:datetime", json_string(when));
        if (m->layout == RECORDING_LAYOUT_FRAMES)
            bad |= json_put(c, "core:header_bytes", json_u64(overhead));
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
recording_error recording_meta_write(const char *name, const meta_source *m, char *err, size_t err_bytes)
{
    char path[RECORDING_PATH_MAX], tmp[RECORDING_PATH_MAX];
    if (recording_path_join(path, sizeof path, name, ".sigmf-meta") || recording_path_join(tmp, sizeof tmp, name, ".sigmf-meta.tmp"))
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "%s: recording name too long", name);
    json_t *root = json_object(), *global = meta_global(m);
    if (root == NULL || json_put(root, "global", global) || meta_captures(m, root)) {
        json_decref(root == NULL ? global : root);
        return ERROR_TEXT_FAIL(RECORDING_ENOMEM, err, err_bytes, "%s: out of memory building the meta", path);
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        json_decref(root);
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", tmp, strerror(errno));
    }
    int bad = json_dumpfd(root, fd, JSON_INDENT(1)) != 0 || recording_write_all(fd, "\n", 1) != 0 || fsync(fd) != 0;
    int saved = errno;
    bad |= close(fd) != 0;
    json_decref(root);
    if (bad || rename(tmp, path) != 0) {
        saved = bad ? saved : errno;
        unlink(tmp);
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", path, strerror(saved));
    }
    sync_parent_folder(path);
    return RECORDING_OK;
}
