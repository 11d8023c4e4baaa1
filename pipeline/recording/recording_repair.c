/*
 * recording_repair.c - rebuilds the meta of a recording whose recorder died
 * (recording.h), in the layout its journal names: samples, from the
 * journal's records and heads alone (the data file holds no headers to
 * walk); frames (recordings before 2026-11-27), from the journal and then
 * the frame headers in the data file.
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

/* ---- repair ------------------------------------------------------------------------- */

typedef struct repair_state {
    const char *name;
    int data_fd;
    uint64_t data_size;
    recording_format format;
    int format_known;
    recording_frame *index;
    uint64_t frames, capacity;
    uint64_t end; /* end in the data file of the last complete frame accepted */
} repair_state;

/* Reads and checks the frame header at offset: it decodes, matches the
 * recording's format (the first one fixes it), has a plausible payload size
 * and the frame lies wholly inside the data file. 0 and *h, or -1. */
static int repair_frame_header(repair_state *s, uint64_t offset, protocol_header *h)
{
    uint8_t header[PROTOCOL_HEADER_BYTES];
    if (offset > s->data_size || s->data_size - offset < PROTOCOL_HEADER_BYTES ||
        recording_pread_all(s->data_fd, header, sizeof header, offset) != 0)
        return -1;
    if (protocol_header_decode(header, sizeof header, h) != PROTOCOL_OK || recording_payload_plausible(h) != 0)
        return -1;
    if (h->payload_bytes > s->data_size - offset - PROTOCOL_HEADER_BYTES)
        return -1;
    recording_format f;
    recording_format_from_header(h, &f);
    if (s->format_known && !recording_format_equal(&f, &s->format))
        return -1;
    s->format = f;
    s->format_known = 1;
    return 0;
}

/* Adds f, which takes in_data bytes of the data file from f->offset on. */
static recording_error repair_add(repair_state *s, const recording_frame *f, uint64_t in_data, char *err,
                                  size_t err_bytes)
{
    if (recording_index_reserve(&s->index, s->frames, &s->capacity) != 0)
        return ERROR_TEXT_FAIL(RECORDING_ENOMEM, err, err_bytes, "%s: out of memory for the index", s->name);
    s->index[s->frames++] = *f;
    s->end = f->offset + in_data;
    return RECORDING_OK;
}

/* Reads NAME.sigmf-index whole into *journal (*bytes) and its layout; a
 * missing journal is empty (layout frames: only a walk can find frames). */
static recording_error repair_journal_load(const char *name, uint8_t **journal, uint64_t *bytes,
                                           recording_layout *layout, char *err, size_t err_bytes)
{
    *layout = RECORDING_LAYOUT_FRAMES;
    char path[RECORDING_PATH_MAX];
    *journal = NULL;
    *bytes = 0;
    recording_path_join(path, sizeof path, name, ".sigmf-index");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? RECORDING_OK : ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    struct stat st;
    recording_error e = RECORDING_OK;
    if (fstat(fd, &st) != 0)
        e = ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    else if (st.st_size > 0 && (*journal = malloc((size_t)st.st_size)) == NULL)
        e = ERROR_TEXT_FAIL(RECORDING_ENOMEM, err, err_bytes, "%s: out of memory", path);
    else if (st.st_size > 0 && recording_pread_all(fd, *journal, (size_t)st.st_size, 0) != 0)
        e = ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", path, strerror(errno));
    else if (st.st_size >= JOURNAL_HEADER_BYTES && recording_journal_header_decode(*journal, layout) != 0)
        e = ERROR_TEXT_FAIL(RECORDING_EFORMAT, err, err_bytes, "%s: not an eigstream journal (magic), or version %"
                            PRIu64 " (this build reads %d and %d)", path, recording_get_le(*journal + 8, 4),
                            RECORDING_LAYOUT_FRAMES, RECORDING_LAYOUT_SAMPLES);
    close(fd);
    if (e != RECORDING_OK) {
        free(*journal);
        *journal = NULL;
        return e;
    }
    *bytes = (uint64_t)st.st_size;
    return RECORDING_OK;
}

/* Layout frames: takes the journal's records in order while each is intact
 * (record CRC), follows the previous frame, and points at a complete frame
 * whose header agrees with it; the first that does not ends the journal's
 * part. */
static recording_error repair_journal_frames(repair_state *s, const uint8_t *journal, uint64_t bytes, char *err,
                                             size_t err_bytes)
{
    recording_error e = RECORDING_OK;
    for (uint64_t at = JOURNAL_HEADER_BYTES; e == RECORDING_OK && at + RECORD_BYTES <= bytes; at += RECORD_BYTES) {
        recording_frame f;
        protocol_header h;
        if (recording_record_decode(journal + at, RECORDING_LAYOUT_FRAMES, &f, NULL) != 0 || f.offset < s->end ||
            f.bytes < PROTOCOL_HEADER_BYTES)
            break;
        if (repair_frame_header(s, f.offset, &h) != 0 || h.payload_bytes != f.bytes - PROTOCOL_HEADER_BYTES ||
            h.seq != f.seq || f.parts == 0 || f.parts > RECORDING_PARTS_MAX)
            break;
        e = repair_add(s, &f, f.bytes, err, err_bytes);
    }
    return e;
}

/* Layout samples: whether the record f with the decoded header h of its
 * head (head bytes) is the next frame: they agree, it follows the previous
 * frame's samples, its samples lie wholly in the data file, and its format
 * is the recording's (the first fixes it). */
static int repair_next_samples(repair_state *s, const protocol_header *h, const recording_frame *f, uint64_t head)
{
    if (recording_payload_plausible(h) != 0 || h->seq != f->seq || f->bytes != PROTOCOL_HEADER_BYTES + h->payload_bytes ||
        f->bytes < head || f->offset != s->end || f->bytes - head > s->data_size - f->offset || f->parts == 0 ||
        f->parts > RECORDING_PARTS_MAX)
        return 0;
    recording_format format;
    recording_format_from_header(h, &format);
    if (s->format_known && !recording_format_equal(&format, &s->format))
        return 0;
    s->format = format;
    s->format_known = 1;
    return 1;
}

/* Layout samples: the journal's records in order while each is intact, its
 * head whole with the CRC its record gives, and the next frame
 * (repair_next_samples); nothing past them (the data file has no headers). */
static recording_error repair_journal_samples(repair_state *s, const uint8_t *journal, uint64_t bytes, char *err,
                                              size_t err_bytes)
{
    recording_error e = RECORDING_OK;
    uint64_t at = JOURNAL_HEADER_BYTES;
    while (e == RECORDING_OK && at + RECORD_BYTES + PROTOCOL_HEADER_BYTES <= bytes) {
        recording_frame f;
        protocol_header h;
        uint32_t head_crc;
        const uint8_t *head = journal + at + RECORD_BYTES;
        if (recording_record_decode(journal + at, RECORDING_LAYOUT_SAMPLES, &f, &head_crc) != 0 ||
            protocol_header_decode(head, PROTOCOL_HEADER_BYTES, &h) != PROTOCOL_OK)
            break;
        uint64_t head_bytes = recording_head_bytes(&h);
        if (head_bytes > bytes - at - RECORD_BYTES || head_crc != protocol_crc32c(0, head, (size_t)head_bytes) ||
            !repair_next_samples(s, &h, &f, head_bytes))
            break;
        e = repair_add(s, &f, f.bytes - head_bytes, err, err_bytes);
        at += RECORD_BYTES + head_bytes;
    }
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
        return ERROR_TEXT_FAIL(RECORDING_ENOMEM, err, err_bytes, "%s: out of memory", s->name);
    recording_error e = RECORDING_OK;
    protocol_header h;
    s->format_known = s->frames > 0; /* a journal record refused after its header fixed it */
    while (e == RECORDING_OK && repair_frame_header(s, s->end, &h) == 0) {
        recording_frame f = {.seq = h.seq, .timestamp_ns = h.timestamp_ns, .received_ns = 0, .offset = s->end,
                             .bytes = PROTOCOL_HEADER_BYTES + h.payload_bytes,
                             .parts = h.kind == PROTOCOL_KIND_EIGENSPACE ? 2 : 1, .crc32c = 0};
        for (uint64_t done = 0; done < h.payload_bytes && e == RECORDING_OK;) {
            size_t want = h.payload_bytes - done < WALK_CHUNK_BYTES ? (size_t)(h.payload_bytes - done) : WALK_CHUNK_BYTES;
            if (recording_pread_all(s->data_fd, chunk, want, f.offset + PROTOCOL_HEADER_BYTES + done) != 0)
                e = ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s.sigmf-data: %s", s->name, strerror(errno));
            f.crc32c = protocol_crc32c(f.crc32c, chunk, want);
            done += want;
        }
        if (e == RECORDING_OK)
            e = repair_add(s, &f, f.bytes, err, err_bytes);
    }
    free(chunk);
    return e;
}

recording_error recording_repair(const char *path, uint64_t *frames, uint64_t *cut_bytes, char *err,
                                 size_t err_bytes)
{
    if (path == NULL || path[0] == '\0' || strlen(path) + 16 > RECORDING_PATH_MAX)
        return ERROR_TEXT_FAIL(RECORDING_EINVAL, err, err_bytes, "recording_repair: no recording name, or too long");
    char data[RECORDING_PATH_MAX];
    recording_path_join(data, sizeof data, path, ".sigmf-data");
    repair_state s = {.name = path, .data_fd = open(data, O_RDONLY | O_CLOEXEC)};
    if (s.data_fd < 0)
        return ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", data, strerror(errno));
    struct stat st;
    recording_error e = RECORDING_OK;
    if (fstat(s.data_fd, &st) != 0)
        e = ERROR_TEXT_FAIL(RECORDING_EIO, err, err_bytes, "%s: %s", data, strerror(errno));
    s.data_size = e == RECORDING_OK ? (uint64_t)st.st_size : 0;
    uint8_t *journal = NULL;
    uint64_t journal_bytes = 0;
    recording_layout layout = RECORDING_LAYOUT_FRAMES;
    if (e == RECORDING_OK)
        e = repair_journal_load(path, &journal, &journal_bytes, &layout, err, err_bytes);
    if (e == RECORDING_OK && layout == RECORDING_LAYOUT_SAMPLES)
        e = repair_journal_samples(&s, journal, journal_bytes, err, err_bytes);
    else if (e == RECORDING_OK) {
        e = repair_journal_frames(&s, journal, journal_bytes, err, err_bytes);
        if (e == RECORDING_OK)
            e = repair_walk(&s, err, err_bytes);
    }
    free(journal);
    close(s.data_fd);
    if (e == RECORDING_OK) {
        meta_source m = {.layout = layout, .description = "", .recorder = "eigstream recording_repair", .format = s.format,
                         .format_known = s.format_known, .index = s.index, .frames = s.frames,
                         .truncated_bytes = s.data_size - s.end};
        e = recording_meta_write(path, &m, err, err_bytes);
    }
    if (e == RECORDING_OK && frames != NULL)
        *frames = s.frames;
    if (e == RECORDING_OK && cut_bytes != NULL)
        *cut_bytes = s.data_size - s.end;
    free(s.index);
    return e;
}
