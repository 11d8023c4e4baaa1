/*
 * recording.h - recordings of eigstream streams: SigMF files whose data file
 * holds every frame's samples and nothing else, an index that replay needs,
 * and a journal that holds the rest of each frame's wire bytes and makes a
 * recording survive its recorder's death. Used by eigstream-record,
 * eigstream-replay and the daemon's file input (docs/recording.md is the
 * format's reference).
 *
 * A recording NAME is three files:
 *   NAME.sigmf-data   samples only, frame after frame (covariance: the
 *                     payload, the matrices; eigenspace: the data part):
 *                     what a SigMF reader reads whole
 *   NAME.sigmf-meta   SigMF 1.x metadata (JSON, written with jansson):
 *                     global core:datatype, core:version, core:recorder,
 *                     core:description, core:num_channels, core:extensions;
 *                     one capture per frame (core:sample_start, core:datetime);
 *                     annotations; and the "eigstream:" namespace (protocol
 *                     version, kind, n, count, element, storage, mode, layout,
 *                     frames, truncated_bytes, and the per-frame index: seq,
 *                     timestamp_ns, received_ns, offset, bytes, parts, crc32c)
 *   NAME.sigmf-index  the journal: per frame a 64-byte little-endian record
 *                     and the frame's head (its 64-byte header; eigenspace:
 *                     and its meta part), appended after the frame's samples
 *                     are written, so that every journaled frame is complete
 *                     (layout in docs/recording.md)
 * Recordings written before 2026-11-27 (layout "frames": whole frames in the
 * data file, a journal of records only) are still read and repaired.
 * The meta is written when the recording is closed; recording_repair
 * rebuilds it from the journal (and, past the journal's last frame, from the
 * frame headers in the data file) after a crash, and says how many bytes of
 * a cut frame it left out. Offsets and sizes are 64-bit: recordings over
 * 4 GiB work.
 *
 * Covariance, eigenspace and IQ cube frames are recorded. Every frame of one
 * recording has the same kind, n, count, element, storage (covariance; IQ:
 * the layout), gates (IQ) and mode (eigenspace): the first frame fixes them
 * and recording_writer_append refuses a frame that differs
 * (RECORDING_EMISMATCH).
 *
 * Errors are values (recording_error) with a one-line message in err
 * (RECORDING_ERROR_MAX bytes) naming the file and what is wrong; the library
 * never prints or exits.
 */
#ifndef EIGSTREAM_RECORDING_H
#define EIGSTREAM_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECORDING_ERROR_MAX 512
#define RECORDING_PATH_MAX 1024
/* Most payload parts a recorded frame may have (header excluded). */
#define RECORDING_PARTS_MAX 100001

typedef enum recording_error {
    RECORDING_OK = 0,
    RECORDING_EINVAL,    /* an argument is NULL or out of range */
    RECORDING_EIO,       /* a file cannot be opened, read or written (disk full, RLIMIT_FSIZE: errno named) */
    RECORDING_EFORMAT,   /* a meta, journal or data file is not what this format says (named) */
    RECORDING_EVERSION,  /* a recording of a protocol version this build does not read */
    RECORDING_EMISMATCH, /* a frame differs from the recording's kind, n, count, element, storage or mode */
    RECORDING_ENOMEM,
    RECORDING_ERANGE,    /* a frame index past the end */
    RECORDING_ECRC       /* a frame's payload differs from the index's CRC32C (the data file changed) */
} recording_error;

const char *recording_strerror(recording_error e);

/* What every frame of a recording is (from its first frame). An IQ cube
 * (kind iq): n channels, count pulses, gates range gates, element its
 * protocol_iq_format, storage its protocol_iq_layout. */
typedef struct recording_format {
    uint8_t protocol_version;
    uint8_t kind;     /* protocol_kind */
    uint32_t n, count;
    uint32_t gates;   /* IQ cubes; 0 otherwise */
    uint8_t element;  /* eig_precision (IQ: protocol_iq_format) */
    uint8_t storage;  /* protocol_storage (covariance; IQ: protocol_iq_layout) */
    uint8_t mode;     /* protocol_mode (eigenspace) */
} recording_format;

/* "covariance", "eigenspace", "iq" ("unknown" otherwise): eigstream:kind. */
const char *recording_kind_name(uint8_t kind);

/* "covariance n=4 matrices=3 double full", "eigenspace n=4 matrices=3 float
 * signal", "iq channels=4 pulses=8 gates=16 ci16_le pcg": what an error
 * about a recording's frames names. */
void recording_format_describe(const recording_format *f, char *out, size_t out_bytes);

/* One frame of the index. */
typedef struct recording_frame {
    uint64_t seq;          /* the frame header's seq */
    uint64_t timestamp_ns; /* the frame header's source timestamp */
    uint64_t received_ns;  /* CLOCK_REALTIME when the recorder received it */
    uint64_t offset;       /* of its samples in NAME.sigmf-data (layout frames: of its header) */
    uint64_t bytes;        /* header + payload */
    uint32_t parts;        /* message parts after the header, as received */
    uint32_t crc32c;       /* CRC32C of all bytes after the header (always computed) */
} recording_frame;

/* ---- writing --------------------------------------------------------------------- */

typedef struct recording_writer recording_writer;

typedef struct recording_writer_params {
    const char *path;        /* NAME, without an extension */
    const char *description; /* core:description; NULL = none */
    const char *recorder;    /* core:recorder, e.g. "eigstream-record 0.1.0" */
} recording_writer_params;

/* Creates NAME.sigmf-data and NAME.sigmf-index (replacing existing ones) and
 * removes a stale NAME.sigmf-meta. On failure *out is NULL. */
recording_error recording_writer_open(recording_writer **out, const recording_writer_params *params, char *err,
                                      size_t err_bytes);

/* Appends one frame: header (64 bytes, as received; it is decoded to check
 * it and to fix the recording's format on the first frame) then `parts`
 * payload parts. Writes the bytes, then the journal record. On an I/O error
 * the data file is truncated back to the end of the last complete frame, the
 * writer refuses further frames, and what was recorded stays valid. The
 * caller ignores SIGXFSZ (signal(SIGXFSZ, SIG_IGN)) so that a file reaching
 * RLIMIT_FSIZE gives EFBIG here instead of killing the process; the library
 * changes no signal disposition. */
recording_error recording_writer_append(recording_writer *w, const uint8_t *header, const void *const *part,
                                        const size_t *part_bytes, size_t parts, uint64_t received_ns,
                                        char *err, size_t err_bytes);

/* Frames and bytes (data file) appended so far. */
uint64_t recording_writer_frames(const recording_writer *w);
uint64_t recording_writer_bytes(const recording_writer *w);

/* Writes NAME.sigmf-meta (atomically: a temporary file renamed over it),
 * closes the files and frees *w (NULL afterwards). A recording with no frame
 * is closed with an empty index and core:datatype of the kind unknown
 * ("cf64_le"). Returns the first error met, the meta written regardless of an
 * earlier append error (so what was recorded stays replayable). */
recording_error recording_writer_close(recording_writer **w, char *err, size_t err_bytes);

/* Rebuilds NAME.sigmf-meta of a recording whose recorder died: the journal's
 * records, each with its whole head, whose samples lie wholly in the data
 * file; *cut_bytes (may be NULL) gets the data file's bytes after the last
 * of them, which the meta's eigstream:truncated_bytes records. A recording
 * of layout frames (before 2026-11-27) gets, past its journal, the further
 * complete frames found by walking the data file's frame headers, with
 * received_ns 0 (unknown) and parts 1 (covariance: the part boundaries are
 * not in the data file) or 2 (eigenspace: meta and data). The rebuilt meta
 * has core:description "" and core:recorder "eigstream recording_repair". */
recording_error recording_repair(const char *path, uint64_t *frames, uint64_t *cut_bytes, char *err,
                                 size_t err_bytes);

/* ---- reading --------------------------------------------------------------------- */

typedef struct recording_reader recording_reader;

/* Opens a recording from NAME, NAME.sigmf-meta or NAME.sigmf-data: parses
 * the meta (RECORDING_EFORMAT naming the field when a required SigMF or
 * eigstream field is missing or of the wrong type; RECORDING_EVERSION for a
 * protocol version other than PROTOCOL_VERSION; a missing meta says to run
 * eigstream-record --repair) and checks the index against the data file's
 * size. */
recording_error recording_reader_open(recording_reader **out, const char *path, char *err, size_t err_bytes);
void recording_reader_close(recording_reader **r);

const recording_format *recording_reader_format(const recording_reader *r);
uint64_t recording_reader_frames(const recording_reader *r);
const recording_frame *recording_reader_frame(const recording_reader *r, uint64_t index);
/* core:description (may be ""), eigstream:truncated_bytes. */
const char *recording_reader_description(const recording_reader *r);
uint64_t recording_reader_truncated_bytes(const recording_reader *r);

/* Sizes of frame index's payload parts as it was received (parts entries,
 * RECORDING_PARTS_MAX at most): one part; one per matrix; meta and data. */
recording_error recording_reader_part_sizes(const recording_reader *r, uint64_t index, size_t *part_bytes,
                                            size_t max_parts, size_t *parts);

/* Reads frame index's bytes (header and payload, frame->bytes of them) into
 * buf (buf_bytes >= frame->bytes). Checks the frame's header against the
 * index (RECORDING_EFORMAT) and the CRC32C of the payload against the index
 * (RECORDING_ECRC naming the frame when it differs). */
recording_error recording_reader_read(recording_reader *r, uint64_t index, void *buf, size_t buf_bytes, char *err,
                                      size_t err_bytes);

/* ---- ring ------------------------------------------------------------------------- */

/* The file name of part `number` of a split recording: NAME-000001, ... */
void recording_ring_name(const char *path, uint64_t number, char *out, size_t out_bytes);

/* Deletes the three files of recording `name` (missing files are fine). */
recording_error recording_remove(const char *name, char *err, size_t err_bytes);

#ifdef __cplusplus
}
#endif

#endif
