/*
 * recording_write.c - the recording writer: data, journal, meta at close
 * (recording.h). Layout samples (docs/recording.md): a frame's samples go to
 * the data file (covariance: the whole payload; eigenspace: the data part),
 * then its journal record and head (the header; eigenspace: and the meta
 * part) to the journal.
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

/* ---- writer ------------------------------------------------------------------------- */

struct recording_writer {
    char name[RECORDING_PATH_MAX];
    char *description, *recorder;
    int data_fd, journal_fd;
    recording_format format;
    int format_known;
    recording_frame *index; /* frames entries of capacity */
    uint64_t frames, capacity;
    uint64_t data_bytes;    /* end of the last complete frame's samples */
    uint64_t journal_bytes; /* end of the last complete record */
    recording_error failed; /* RECORDING_OK, or the error that stopped appends */
    char failure[RECORDING_ERROR_MAX];
};

static void writer_free(recording_writer *w)
{
    recording_fd_close(w->data_fd);
    recording_fd_close(w->journal_fd);
    free(w->description);
    free(w->recorder);
    free(w->index);
    free(w);
}

/* Creates (truncates) NAME+suffix for writing; the fd, or -1 with the message in err. */
static int create_file(const char *name, const char *suffix, char *err, size_t err_bytes)
{
    char path[RECORDING_PATH_MAX];
    if (recording_path_join(path, sizeof path, name, suffix)) {
        error_text_set(err, err_bytes, "%s: recording name too long", name);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        error_text_set(err, err_bytes, "%s: %s", path, strerror(errno));
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
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_writer_open: out is NULL");
    *out = NULL;
    if (params == NULL || params->path == NULL || params->path[0] == '\0')
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_writer_open: no recording path");
    if (strlen(params->path) + 16 > RECORDING_PATH_MAX)
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "%s: recording name too long", params->path);
    recording_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return ERROR_TEXT_FAIL(RECORDING_ENOMEM, err, err_bytes, "%s: out of memory", params->path);
    w->data_fd = w->journal_fd = -1;
    snprintf(w->name, sizeof w->name, "%s", params->path);
    w->description = strdup_or_null(params->description);
    w->recorder = strdup_or_null(params->recorder);
    if ((params->description && !w->description) || (params->recorder && !w->recorder)) {
        writer_free(w);
        return ERROR_TEXT_FAIL(RECORDING_ENOMEM, err, err_bytes, "%s: out of memory", params->path);
    }
    char meta[RECORDING_PATH_MAX];
    recording_path_join(meta, sizeof meta, w->name, ".sigmf-meta");
    if (unlink(meta) != 0 && errno != ENOENT) {
        int e = errno;
        writer_free(w);
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: cannot remove the stale meta: %s", meta, strerror(e));
    }
    w->data_fd = create_file(w->name, ".sigmf-data", err, err_bytes);
    w->journal_fd = w->data_fd < 0 ? -1 : create_file(w->name, ".sigmf-index", err, err_bytes);
    uint8_t head[JOURNAL_HEADER_BYTES];
    recording_journal_header_encode(head);
    if (w->journal_fd >= 0 && recording_write_all(w->journal_fd, head, sizeof head) != 0)
        error_text_set(err, err_bytes, "%s.sigmf-index: %s", w->name, strerror(errno));
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
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, err, err_bytes, "%s: frame header rejected: %s", w->name,
                    protocol_reject_name(r));
    /* A record is a whole frame (docs/recording.md). */
    if (h->flags & PROTOCOL_FLAG_FRAGMENT)
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, err, err_bytes,
                              "%s: frame seq %" PRIu64 " is a fragment: recordings hold whole frames", w->name, h->seq);
    uint64_t total = 0;
    for (size_t i = 0; i < parts; i++)
        total += part_bytes[i];
    if (h->kind == PROTOCOL_KIND_COVARIANCE)
        r = protocol_covariance_check_sizes(h, part_bytes, parts, 0);
    else if (h->kind == PROTOCOL_KIND_IQ)
        r = protocol_iq_check_sizes(h, part_bytes, parts, 0);
    else if (parts != 2 || part_bytes[0] != protocol_meta_bytes(h->count) || recording_payload_plausible(h) != 0)
        r = PROTOCOL_REJECT_SIZE;
    if (r == PROTOCOL_OK && total != h->payload_bytes)
        r = PROTOCOL_REJECT_SIZE;
    if (r != PROTOCOL_OK)
        return ERROR_TEXT_FAIL(RECORDING_EFORMAT, err, err_bytes, "%s: frame seq %" PRIu64 ": parts disagree with the header: %s",
                    w->name, h->seq, protocol_reject_name(r));
    recording_format f;
    recording_format_from_header(h, &f);
    if (w->format_known && !recording_format_equal(&f, &w->format)) {
        char got[160], want[160];
        recording_format_describe(&f, got, sizeof got);
        recording_format_describe(&w->format, want, sizeof want);
        return ERROR_TEXT_FAIL(RECORDING_EMISMATCH, err, err_bytes, "%s: frame seq %" PRIu64 " (%s) differs from the "
                               "recording (%s)", w->name, h->seq, got, want);
    }
    return RECORDING_OK;
}

/* Room for one more index entry; -1 when out of memory. */
int recording_index_reserve(recording_frame **index, uint64_t frames, uint64_t *capacity)
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
    error_text_set(w->failure, sizeof w->failure, "%s%s: %s (after %" PRIu64 " frames%s)", w->name, file,
         strerror(error), w->frames, cut ? "" : "; cutting the partial frame off failed");
    return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s", w->failure);
}

recording_error recording_writer_append(recording_writer *w, const uint8_t *header, const void *const *part,
                                        const size_t *part_bytes, size_t parts, uint64_t received_ns,
                                        char *err, size_t err_bytes)
{
    if (w == NULL || header == NULL || part == NULL || part_bytes == NULL || parts == 0 || parts > RECORDING_PARTS_MAX)
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_writer_append: NULL argument or parts out of range");
    for (size_t i = 0; i < parts; i++)
        if (part[i] == NULL && part_bytes[i] > 0)
            return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_writer_append: part %zu is NULL", i);
    if (w->failed != RECORDING_OK)
        return ERROR_TEXT_FAIL(w->failed, err, err_bytes, "%s (the writer stopped)", w->failure);
    protocol_header h;
    recording_error e = append_check(w, header, part_bytes, parts, &h, err, err_bytes);
    if (e != RECORDING_OK)
        return e;
    if (recording_index_reserve(&w->index, w->frames, &w->capacity) != 0)
        return ERROR_TEXT_FAIL(RECORDING_ENOMEM, err, err_bytes, "%s: out of memory for the index", w->name);

    /* Eigenspace: part 0 is the meta part (append_check), head, not samples. */
    size_t first_sample_part = h.kind == PROTOCOL_KIND_EIGENSPACE ? 1 : 0;
    recording_frame f = {.seq = h.seq, .timestamp_ns = h.timestamp_ns, .received_ns = received_ns,
                         .offset = w->data_bytes, .bytes = PROTOCOL_HEADER_BYTES + h.payload_bytes,
                         .parts = (uint32_t)parts, .crc32c = 0};
    uint64_t samples = 0;
    for (size_t i = 0; i < parts; i++) {
        f.crc32c = protocol_crc32c(f.crc32c, part[i], part_bytes[i]);
        if (i < first_sample_part || part_bytes[i] == 0)
            continue;
        if (recording_write_all(w->data_fd, part[i], part_bytes[i]) != 0)
            return append_failed(w, ".sigmf-data", errno, err, err_bytes);
        samples += part_bytes[i];
    }
    uint32_t head_crc = protocol_crc32c(0, header, PROTOCOL_HEADER_BYTES);
    if (first_sample_part)
        head_crc = protocol_crc32c(head_crc, part[0], part_bytes[0]);
    uint8_t record[RECORD_BYTES];
    recording_record_encode(&f, head_crc, record);
    if (recording_write_all(w->journal_fd, record, sizeof record) != 0 ||
        recording_write_all(w->journal_fd, header, PROTOCOL_HEADER_BYTES) != 0 ||
        (first_sample_part && recording_write_all(w->journal_fd, part[0], part_bytes[0]) != 0))
        return append_failed(w, ".sigmf-index", errno, err, err_bytes);

    if (!w->format_known)
        recording_format_from_header(&h, &w->format);
    w->format_known = 1;
    w->index[w->frames++] = f;
    w->data_bytes += samples;
    w->journal_bytes += RECORD_BYTES + recording_head_bytes(&h);
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
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_writer_close: no writer");
    recording_writer *w = *wp;
    *wp = NULL;
    recording_error first = w->failed;
    if (first != RECORDING_OK)
        error_text_set(err, err_bytes, "%s", w->failure);
    /* A tail that append_failed could not cut off is recorded, not hidden. */
    struct stat st;
    uint64_t truncated = 0;
    if (fstat(w->data_fd, &st) == 0 && (uint64_t)st.st_size > w->data_bytes)
        truncated = (uint64_t)st.st_size - w->data_bytes;
    /* The data reaches the disk before the meta that describes it. */
    int data_error = sync_close(w->data_fd), journal_error = sync_close(w->journal_fd);
    w->data_fd = w->journal_fd = -1;
    if (first == RECORDING_OK && (data_error || journal_error))
        first = ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: closing the %s file: %s", w->name,
                     data_error ? "data" : "journal", strerror(data_error ? data_error : journal_error));
    meta_source m = {.layout = RECORDING_LAYOUT_SAMPLES, .description = w->description, .recorder = w->recorder, .format = w->format,
                     .format_known = w->format_known, .index = w->index, .frames = w->frames, .truncated_bytes = truncated};
    char meta_err[RECORDING_ERROR_MAX];
    recording_error e = recording_meta_write(w->name, &m, meta_err, sizeof meta_err);
    if (e != RECORDING_OK && first == RECORDING_OK)
        first = ERROR_TEXT_FAIL(e, err, err_bytes, "%s", meta_err);
    writer_free(w);
    return first;
}
