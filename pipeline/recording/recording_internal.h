/*
 * recording_internal.h - what the files of the recording library share
 * (recording.c: errors, the journal record, file and format helpers, rings;
 * recording_meta.c: the SigMF meta; recording_write.c; recording_repair.c;
 * recording_read.c). Not installed: tools and the daemon use recording.h.
 */
#ifndef EIGSTREAM_RECORDING_INTERNAL_H
#define EIGSTREAM_RECORDING_INTERNAL_H

#include <jansson.h>

#include "error_text.h" /* ERROR_TEXT_FAIL: err and the recording_error */
#include "recording.h"

#define JOURNAL_MAGIC "EIGSJRNL"
#define JOURNAL_HEADER_BYTES 16
#define RECORD_MAGIC "EIGR"
#define RECORD_BYTES 64
#define RECORD_HEAD_CRC_OFFSET 56 /* layout samples: CRC32C of the head after the record */
#define RECORD_CRC_OFFSET 60

/* Where a frame's bytes live; the journal's and each record's version.
 * frames (recordings before 2026-11-27): the data file holds whole frames,
 * header and all. samples (written now): the data file holds samples only
 * (SigMF readers read it whole); each journal record is followed by the
 * frame's head, the bytes that are not samples (the header; eigenspace: and
 * the meta part), which replay puts back in front of the samples. */
typedef enum recording_layout {
    RECORDING_LAYOUT_FRAMES = 1,
    RECORDING_LAYOUT_SAMPLES = 2
} recording_layout;
#define SIGMF_VERSION "1.2.0"
#define EXTENSION_VERSION "1.1.0" /* 1.1: eigstream:layout */
/* Read size of the repair walk's CRC pass: large enough for few syscalls. */
#define WALK_CHUNK_BYTES (1u << 20)

/* What the meta is written from: the writer's state, or repair's. */
typedef struct meta_source {
    recording_layout layout;
    const char *description, *recorder;
    recording_format format;
    int format_known;
    const recording_frame *index;
    uint64_t frames;
    uint64_t truncated_bytes;
} meta_source;


/* Closes fd unless it is -1 (a file not opened). */
void recording_fd_close(int fd);

/* Writes all bytes, retrying short writes and EINTR; 0 or -1 with errno. */
int recording_write_all(int fd, const void *data, size_t bytes);

/* NAME + suffix into out; -1 when it does not fit. */
int recording_path_join(char *out, size_t out_bytes, const char *name, const char *suffix);

/* Reads bytes at offset; 0, or -1 with errno (EIO for a file that ends early). */
int recording_pread_all(int fd, void *data, size_t bytes, uint64_t offset);

/* A little-endian unsigned integer of 1..8 bytes. */
uint64_t recording_get_le(const uint8_t *p, int bytes);

/* One frame's 64-byte record of layout samples (docs/recording.md):
 * head_crc (the CRC32C of the head that follows it) at 56; the last 4
 * bytes are the CRC32C of the first 60, so a torn record never validates. */
void recording_record_encode(const recording_frame *f, uint32_t head_crc, uint8_t out[RECORD_BYTES]);

/* The 16-byte journal file header: "EIGSJRNL", u32 version (the layout
 * written: RECORDING_LAYOUT_SAMPLES), u32 zero. */
void recording_journal_header_encode(uint8_t out[JOURNAL_HEADER_BYTES]);

/* Decodes a record of `layout`; 0 when magic, version, zero bytes and record
 * CRC hold, else -1. *head_crc (layout samples) may be NULL. */
int recording_record_decode(const uint8_t in[RECORD_BYTES], recording_layout layout, recording_frame *f,
                            uint32_t *head_crc);

/* The journal's layout from its 16-byte header; 0 when the magic and a known
 * version hold, else -1. */
int recording_journal_header_decode(const uint8_t in[JOURNAL_HEADER_BYTES], recording_layout *layout);

/* A frame's head bytes (layout samples), from its decoded header: the
 * header, and for an eigenspace frame its meta part. */
uint64_t recording_head_bytes(const protocol_header *h);

/* Writes NAME.sigmf-meta atomically: NAME.sigmf-meta.tmp, fsync, rename. */
recording_error recording_meta_write(const char *name, const meta_source *m, char *err, size_t err_bytes);

/* Checks a decoded header's payload_bytes against its n, count, element and
 * storage (covariance) or its meta part and sample size (eigenspace, whose
 * data size depends on each matrix's k_sent); 0 when plausible. */
int recording_payload_plausible(const protocol_header *h);

/* The recording's format from a frame header; 1 when two formats are the
 * same (what recording_writer_append requires of every frame). */
void recording_format_from_header(const protocol_header *h, recording_format *f);
int recording_format_equal(const recording_format *a, const recording_format *b);

/* core:datatype of the format ("cf64_le", "rf32_le", ...; "cf64_le" when
 * known is 0: a recording without frames). */
const char *recording_sigmf_datatype(const recording_format *f, int known);

/* "frames", "samples" (the meta's eigstream:layout); "unknown" otherwise. */
const char *recording_layout_name(recording_layout layout);


/* Bytes of one SigMF sample: a complex element (covariance) or one real
 * number (eigenspace: values and vector components are all reals). */
size_t recording_sample_bytes(const recording_format *f);

/* Bytes of a frame that are not samples: the header, and the eigenspace meta part. */
uint64_t recording_frame_overhead_bytes(const recording_format *f);

/* Room for one more index entry; -1 when out of memory. */
int recording_index_reserve(recording_frame **index, uint64_t frames, uint64_t *capacity);

#endif
