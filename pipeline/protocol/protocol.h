/*
 * protocol.h - eigstream wire protocol v1 (docs/protocol.md is the
 * byte-exact specification; this header and that document must agree).
 *
 * Every message is a ZeroMQ multipart message whose first part is a 64-byte
 * little-endian header. The header starts with magic "EIGS", the version and
 * the kind, so a SUB socket subscribes to one kind with a 6-byte prefix.
 *
 *   covariance (kind 1):  [header][payload] or [header][matrix 0]...[matrix count-1]
 *                         payload: count Hermitian n x n matrices, column-major,
 *                         in `storage`; payload_bytes is the sum over the parts.
 *                         With FLAG_FRAGMENT one message carries matrices
 *                         first .. first+matrices-1 of the frame (header @56,
 *                         @60), and payload_bytes and crc32c are the fragment's.
 *   eigenspace (kind 2):  [header][meta][data]
 *                         meta: protocol_stage_times then count protocol_matrix_meta
 *                         data: per matrix, n eigenvalues (ascending, real of the
 *                         element precision) then k_sent eigenvectors of n
 *                         complex elements each (column k belongs to eigenvalue
 *                         first_index + k).
 *                         payload_bytes = bytes of meta + data.
 *   IQ cube (kind 3):     [header][cube] or one part per index of the layout's
 *                         slowest dimension (per channel for cpg, per pulse
 *                         for pcg and pgc): channels n x pulses count x gates
 *                         (header @52) complex samples of a protocol_iq_format,
 *                         each worth raw * scale (header @56).
 *
 * The optional CRC32C (Castagnoli, as iSCSI/ext4) covers every part after the
 * header, in order.
 */
#ifndef EIGSTREAM_PROTOCOL_H
#define EIGSTREAM_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "eig.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PROTOCOL_MAGIC "EIGS"
#define PROTOCOL_VERSION 1
#define PROTOCOL_HEADER_BYTES 64
#define PROTOCOL_PREFIX_BYTES 6 /* magic + version + kind: the SUB filter */

typedef enum protocol_kind {
    PROTOCOL_KIND_COVARIANCE = 1,
    PROTOCOL_KIND_EIGENSPACE = 2,
    PROTOCOL_KIND_IQ = 3
} protocol_kind;

/* IQ cube sample format (kind 3, the element byte @32): the wire code and
 * its SigMF datatype name (protocol_iq_format_name). */
typedef enum protocol_iq_format {
    PROTOCOL_IQ_CF32_LE = 1, /* 8 bytes: f32 re, f32 im (the bytes of EIG_COMPLEX_FLOAT) */
    PROTOCOL_IQ_CI16_LE = 3  /* 4 bytes: i16 re, i16 im (two's complement) */
} protocol_iq_format;

/* IQ cube layout (kind 3, the storage byte @33): sample (c, p, g) of C
 * channels, P pulses, G gates is at element index
 *   cpg: (c*P + p)*G + g   (gate fastest, channel slowest)
 *   pcg: (p*C + c)*G + g
 *   pgc: (p*G + g)*C + c   (channel fastest)
 * A multipart payload splits along the slowest index (protocol_iq_parts). */
typedef enum protocol_iq_layout {
    PROTOCOL_IQ_CPG = 0,
    PROTOCOL_IQ_PCG = 1,
    PROTOCOL_IQ_PGC = 2
} protocol_iq_layout;

/* The element byte (@32) holds an eig_precision (eig.h), whose values are
 * the wire codes: 1 complex float (8 bytes: float re, float im), 2 complex
 * double (16 bytes: double re, double im); eig_element_bytes and
 * eig_precision_name serve the wire too. */

typedef enum protocol_storage {
    PROTOCOL_STORAGE_FULL = 0,         /* n*n, column-major, both triangles present */
    PROTOCOL_STORAGE_PACKED_LOWER = 1, /* n(n+1)/2, LAPACK 'L' packed */
    PROTOCOL_STORAGE_PACKED_UPPER = 2  /* n(n+1)/2, LAPACK 'U' packed */
} protocol_storage;

enum {
    PROTOCOL_FLAG_CRC = 1u << 0,  /* crc32c is valid and must be checked */
    PROTOCOL_FLAG_LATE = 1u << 1, /* eigenspace: published after the deadline */
    PROTOCOL_FLAG_FRAGMENT = 1u << 2, /* covariance: one fragment of a frame (header @56, @60) */
    PROTOCOL_FLAG_LOSSLESS = 1u << 3, /* covariance, IQ: the sender asks not to be dropped for overflow:
                                         the receiver waits for room (backpressure) instead */
    PROTOCOL_FLAG_CHECK_FAILED = 1u << 4, /* eigenspace: the sender's self-check of one of its matrices
                                             failed (a LAPACK ratio above 60): the results are wrong */
    PROTOCOL_FLAG_SNAPSHOTS = 1u << 5, /* eigenspace, v1.1: the snapshots field carries K (nonzero);
                                          protocol_header_encode sets it from the field */
    PROTOCOL_FLAG_KNOWN = PROTOCOL_FLAG_CRC | PROTOCOL_FLAG_LATE | PROTOCOL_FLAG_FRAGMENT | PROTOCOL_FLAG_LOSSLESS |
                          PROTOCOL_FLAG_CHECK_FAILED | PROTOCOL_FLAG_SNAPSHOTS
};

/* What an eigenspace frame carries per matrix: the wire's mode byte
 * (docs/protocol.md; covariance frames carry PROTOCOL_MODE_NONE). The one
 * enum of the concept: output.mode (config/) and the tools name it by
 * protocol_mode_name. */
typedef enum protocol_mode {
    PROTOCOL_MODE_NONE = 0,   /* covariance frames on the wire; not a setting */
    PROTOCOL_MODE_FULL = 1,   /* all n eigenvectors */
    PROTOCOL_MODE_VALUES = 2, /* eigenvalues only */
    PROTOCOL_MODE_SIGNAL = 3, /* the d eigenvectors of the largest eigenvalues */
    PROTOCOL_MODE_NOISE = 4   /* the n - d eigenvectors of the smallest */
} protocol_mode;

/* "none", "full", "values", "signal", "noise"; "unknown" for a bad value (an
 * unchecked wire byte may be passed). */
const char *protocol_mode_name(int mode);

/* The header, decoded. Offsets in docs/protocol.md. */
typedef struct protocol_header {
    uint8_t version;        /* @4 */
    uint8_t kind;           /* @5  protocol_kind */
    uint16_t header_bytes;  /* @6  always 64 in v1 */
    uint64_t seq;           /* @8  per source, +1 per frame */
    uint64_t timestamp_ns;  /* @16 source timestamp, ns since the Unix epoch */
    uint32_t n;             /* @24 matrix order */
    uint32_t count;         /* @28 matrices in the frame */
    uint8_t element;        /* @32 eig_precision */
    uint8_t storage;        /* @33 protocol_storage (eigenspace: 0) */
    uint8_t mode;           /* @34 protocol_mode (covariance: PROTOCOL_MODE_NONE) */
    uint8_t reserved0;      /* @35 zero */
    uint32_t flags;         /* @36 PROTOCOL_FLAG_* */
    uint64_t payload_bytes; /* @40 bytes in all parts after the header */
    uint32_t crc32c;        /* @48 of all parts after the header, if FLAG_CRC */
    union {
        uint32_t snapshots; /* @52 covariance: snapshots K behind each matrix (0 = unknown);
                               eigenspace: the K its matrices were formed from (0 = unknown;
                               nonzero with PROTOCOL_FLAG_SNAPSHOTS, the v1.1 marker) */
        uint32_t gates;     /* @52 IQ cube: range gates G per pulse */
    };
    float scale;            /* @56 IQ cube: sample value = raw * scale, finite and > 0;
                               other kinds: 0 (the bytes are reserved, zero) */
    uint32_t fragment_first;    /* @56 covariance with FLAG_FRAGMENT: the fragment's first matrix */
    uint32_t fragment_matrices; /* @60 covariance with FLAG_FRAGMENT: the matrices it carries;
                                   without the flag both 0 (reserved bytes) */
    /* IQ cube: @60..63 reserved, zero */
} protocol_header;

/* Eigenspace meta part: stage times (ns, CLOCK_REALTIME) then per-matrix meta. */
typedef struct protocol_stage_times {
    uint64_t received_ns;
    uint64_t solve_start_ns;
    uint64_t solve_end_ns;
    uint64_t published_ns;
} protocol_stage_times; /* 32 bytes on the wire */

typedef struct protocol_matrix_meta {
    int32_t status;       /* eig info: 0 ok, > 0 no convergence, < 0 invalid */
    uint32_t signal_dim;  /* d: fixed or MDL-estimated signal dimension */
    uint32_t k_sent;      /* eigenvectors that follow the values */
    uint32_t first_index; /* eigenvalue index of the first vector sent */
} protocol_matrix_meta; /* 16 bytes on the wire */

#define PROTOCOL_STAGE_TIMES_BYTES 32
#define PROTOCOL_MATRIX_META_BYTES 16

/* Why a message was rejected: one counter per reason in the metrics. */
typedef enum protocol_reject {
    PROTOCOL_OK = 0,
    PROTOCOL_REJECT_PARTS,        /* wrong number of parts */
    PROTOCOL_REJECT_HEADER_SIZE,  /* first part is not 64 bytes */
    PROTOCOL_REJECT_MAGIC,        /* bad magic */
    PROTOCOL_REJECT_VERSION,      /* unknown protocol version */
    PROTOCOL_REJECT_KIND,         /* unknown or unexpected kind */
    PROTOCOL_REJECT_FIELD,        /* bad element/storage/mode/flags/reserved bytes */
    PROTOCOL_REJECT_SIZE,         /* n/count/payload_bytes disagree with each other */
    PROTOCOL_REJECT_CONFIG,       /* n/count/element disagree with the configuration */
    PROTOCOL_REJECT_TRUNCATED,    /* payload shorter than payload_bytes */
    PROTOCOL_REJECT_OVERSIZED,    /* payload longer than payload_bytes or max size */
    PROTOCOL_REJECT_CRC,          /* CRC32C mismatch */
    PROTOCOL_REJECT_NONFINITE,    /* NaN or Inf in a matrix */
    PROTOCOL_REJECT_INCOMPLETE,   /* a fragment that joins no frame, or a frame whose fragments stopped */
    PROTOCOL_REJECT_COUNT_        /* number of reasons */
} protocol_reject;

/* Short stable name of a reason ("bad_magic", "crc_mismatch", ...), used as
 * the metrics key and in log lines; never NULL. */
const char *protocol_reject_name(protocol_reject r);

/* Encodes h into out[64] (magic written here; reserved bytes zeroed). An
 * eigenspace header's PROTOCOL_FLAG_SNAPSHOTS is written from its snapshots
 * field (set iff nonzero), whatever h->flags holds. */
void protocol_header_encode(const protocol_header *h, uint8_t out[PROTOCOL_HEADER_BYTES]);

/* Decodes and checks one header part: size, magic, version, known kind,
 * element, storage, mode, flags, zero reserved bytes. Does not check the
 * payload. Returns PROTOCOL_OK and fills *h, or the reason. */
protocol_reject protocol_header_decode(const uint8_t *part, size_t part_bytes, protocol_header *h);
/* The same for a receiver that takes one kind only: a known kind other than
 * expect_kind is PROTOCOL_REJECT_KIND, checked right after the kind byte and
 * before the kind's fields (docs/protocol.md's check order), so that an
 * eigenspace frame sent to a covariance input is bad_kind, never bad_field. */
protocol_reject protocol_header_decode_kind(const uint8_t *part, size_t part_bytes, uint8_t expect_kind,
                                            protocol_header *h);

/* The solver's storage and triangle for a frame's protocol_storage; -1 for
 * a bad value (0 otherwise). */
int protocol_storage_layout(uint8_t storage, eig_storage *eig_storage_out, eig_uplo *uplo_out);

/* Bytes of one matrix in the given storage, 0 on bad enums. */
size_t protocol_matrix_bytes(uint32_t n, uint8_t element, uint8_t storage);

/* The matrices a covariance message carries: fragment_matrices for a
 * fragment, count for a whole frame. */
uint32_t protocol_covariance_matrices(const protocol_header *h);

/* ---- fragments (docs/protocol.md, "Fragmented covariance frames") ------------- */

/* Fragment i of a frame of count matrices sent as `fragments` (1..count):
 * its first matrix and its matrix count. The split every sender here uses:
 * as even as can be, the first count % fragments one matrix larger. */
void protocol_fragment_range(uint32_t count, uint32_t fragments, uint32_t i, uint32_t *first, uint32_t *matrices);

/* A frame put together from its fragments, by the receiver's rules in one
 * place (the daemon, eigstream-dispatch, eigstream-record; whether one is
 * being put together at all is the caller's to track). frame: the frame's
 * header as its first fragment gave it, FRAGMENT cleared, first and
 * matrices 0, payload_bytes and crc32c those of the fragments joined so far
 * (the whole frame's once complete); next: the matrix the next fragment
 * must start at. */
typedef struct protocol_fragments {
    protocol_header frame;
    uint32_t next;
} protocol_fragments;

/* Begins the frame of first fragment h (first 0): nothing joined yet. */
void protocol_fragments_begin(protocol_fragments *a, const protocol_header *h);
/* Whether fragment h continues that frame: its seq, the next matrix, and
 * the frame's timestamp, n, count, element, storage, snapshots and CRC flag. */
int protocol_fragments_continues(const protocol_fragments *a, const protocol_header *h);
/* Joins fragment h, already checked (its crc32c, when flagged, matches its
 * payload): payload_bytes summed, the CRCs joined (protocol_crc32c_combine).
 * 1 when the frame is now whole, else 0. */
int protocol_fragments_join(protocol_fragments *a, const protocol_header *h);

/* ---- the receive loop's bound on one message ------------------------------ */

/* A multipart message's payload parts (after its header), counted as the
 * receiver reads them: once their sum passes limit (input.max_message_bytes)
 * the message is oversized, and the receiver releases the parts it held and
 * every further part as it reads it, so that it never holds more than limit
 * bytes of one message (plus the part in hand). Sums saturate. */
typedef struct protocol_message_budget {
    uint64_t limit; /* most payload bytes one message may carry */
    uint64_t seen;  /* payload bytes of the parts read so far (saturating) */
    uint64_t parts; /* payload parts read so far */
    int oversized;  /* seen passed limit; stays set */
} protocol_message_budget;

void protocol_message_budget_begin(protocol_message_budget *b, uint64_t limit);
/* Counts one payload part of `bytes`. 1 while the message is within its
 * limit (the part may be held), 0 from the part that passes it on (release
 * it and every part held). */
int protocol_message_budget_take(protocol_message_budget *b, uint64_t bytes);

/* Checks the sizes of a decoded covariance header against each other and the
 * part layout: parts after the header must be 1 (whole payload) or count (one
 * per matrix, each of one matrix's bytes), summing to payload_bytes, which must
 * equal count * matrix bytes and not exceed max_payload_bytes (0 = no limit).
 * A fragment (FLAG_FRAGMENT) is checked the same way with its own matrices
 * in place of count, which must be >= 1 and end within the frame
 * (size_mismatch). part_bytes lists the sizes of the payload parts. */
protocol_reject protocol_covariance_check_sizes(const protocol_header *h, const size_t *part_bytes,
                                                size_t parts, size_t max_payload_bytes);

/* CRC32C, incremental: crc = protocol_crc32c(0, p, len); crc = protocol_crc32c(crc, q, len2). */
uint32_t protocol_crc32c(uint32_t crc, const void *data, size_t bytes);
/* The CRC32C of A followed by B from crc_a = protocol_crc32c(0, A, ..),
 * crc_b = protocol_crc32c(0, B, ..) and B's length: what lets pieces of one
 * payload be summed on different threads. O(log bytes_b). */
uint32_t protocol_crc32c_combine(uint32_t crc_a, uint32_t crc_b, size_t bytes_b);

/* Eigenspace meta part codec (little-endian, 32 + 16*count bytes). */
size_t protocol_meta_bytes(uint32_t count);
void protocol_meta_encode(const protocol_stage_times *t, const protocol_matrix_meta *m,
                          uint32_t count, uint8_t *out);
protocol_reject protocol_meta_decode(const uint8_t *in, size_t bytes, uint32_t count,
                                     protocol_stage_times *t, protocol_matrix_meta *m);

/* ---- additions (v1, same wire format) ----------------------------------------- */

/* Zeroes *h and sets version, kind and header_bytes. */
void protocol_header_init(protocol_header *h, protocol_kind kind);

/* "full", "packed_lower", "packed_upper" ("unknown" for a bad value); never NULL. */
const char *protocol_storage_name(uint8_t storage);

/* Bytes of one matrix's data in an eigenspace frame: n real values of the
 * element precision then k_sent vectors of n complex elements; 0 on a bad
 * element, n == 0 or overflow. */
size_t protocol_eigenspace_matrix_bytes(uint32_t n, uint8_t element, uint32_t k_sent);

/* The eigenvectors an output mode sends for a matrix of signal dimension d
 * (docs/protocol.md), the one place this layout is computed: full: k_sent = n,
 * first_index = 0; values: 0, 0; signal: d, n - d (the d largest); noise:
 * n - d, 0 (the n - d smallest). d above n counts as n. Returns 0, or -1 (and
 * 0, 0) for a mode that is not an output mode. */
int protocol_mode_layout(uint8_t mode, uint32_t n, uint32_t signal_dim, uint32_t *k_sent, uint32_t *first_index);

/* A sender's one call per matrix: k_sent and first_index as
 * protocol_mode_layout gives them, and the matrix's data bytes as
 * protocol_eigenspace_matrix_bytes gives them for k_sent; 0 (and k_sent,
 * first_index 0) for a mode that is not an output mode or a bad element. */
size_t protocol_eigenspace_matrix_layout(uint8_t mode, uint32_t n, uint8_t element, uint32_t signal_dim,
                                         uint32_t *k_sent, uint32_t *first_index);

/* Checks one matrix's meta against the output mode: signal_dim <= n and
 * k_sent, first_index as protocol_mode_layout says; PROTOCOL_REJECT_FIELD
 * otherwise. */
protocol_reject protocol_matrix_meta_check(uint32_t n, uint8_t mode, const protocol_matrix_meta *m);

/* Checks a decoded eigenspace header, its decoded meta (count entries) and
 * the sizes of the two parts after the header (meta, data) against each other
 * and max_payload_bytes (0 = no limit). */
protocol_reject protocol_eigenspace_check_sizes(const protocol_header *h, const protocol_matrix_meta *m,
                                                const size_t *part_bytes, size_t parts,
                                                size_t max_payload_bytes);

/* PROTOCOL_OK when every real and imaginary part of the elements in data is
 * finite, else PROTOCOL_REJECT_NONFINITE (also for a bad element); data
 * needs no alignment. */
protocol_reject protocol_check_finite(const void *data, size_t bytes, uint8_t element);

/* PROTOCOL_REJECT_CONFIG when h's n, count or element differ from what the
 * receiver is configured for (a 0 argument accepts any value), else OK. */
protocol_reject protocol_check_config(const protocol_header *h, uint32_t n, uint32_t count,
                                      uint8_t element);

/* CRC32C of all parts after the header, in order (part[i] of part_bytes[i]). */
uint32_t protocol_payload_crc32c(const void *const *part, const size_t *part_bytes, size_t parts);

/* PROTOCOL_OK when h has no FLAG_CRC or its crc32c matches the parts after
 * the header, else PROTOCOL_REJECT_CRC. Check sizes first. */
protocol_reject protocol_check_crc(const protocol_header *h, const void *const *part,
                                   const size_t *part_bytes, size_t parts);

/* ---- IQ cube (kind 3) ---------------------------------------------------------- */

/* "cf32_le", "ci16_le" (SigMF datatypes); "unknown" for another value; never NULL. */
const char *protocol_iq_format_name(int format);
/* "cpg", "pcg", "pgc"; "unknown" for another value; never NULL. */
const char *protocol_iq_layout_name(int layout);
/* Bytes of one complex sample: 8 (cf32_le), 4 (ci16_le), 0 for another value. */
size_t protocol_iq_sample_bytes(uint8_t format);
/* Bytes of a channels x pulses x gates cube; 0 on a bad format, a zero
 * dimension or overflow of size_t. */
size_t protocol_iq_cube_bytes(uint32_t channels, uint32_t pulses, uint32_t gates, uint8_t format);
/* Element index of sample (c, p, g) in a cube of the layout (above; a layout
 * other than cpg and pcg is taken as pgc). */
size_t protocol_iq_index(uint8_t layout, uint32_t channels, uint32_t pulses, uint32_t gates, uint32_t c, uint32_t p,
                         uint32_t g);
/* The part count of a one-part-per-slice payload: the layout's slowest
 * dimension (channels n for cpg, pulses count for pcg and pgc); 0 for a bad
 * layout. A payload is 1 part or this many parts of equal size. */
uint32_t protocol_iq_parts(const protocol_header *h);

/* Checks the sizes of a decoded IQ header against each other and the part
 * layout, in the order of docs/protocol.md: n, count or gates 0 and
 * payload_bytes != the cube's bytes (size_mismatch), above max_payload_bytes
 * (0 = no limit: oversized); then the part count, 1 or protocol_iq_parts
 * (parts), their sum (oversized, truncated) and each slice part's size
 * (size_mismatch). part_bytes lists the sizes of the payload parts. */
protocol_reject protocol_iq_check_sizes(const protocol_header *h, const size_t *part_bytes, size_t parts,
                                        size_t max_payload_bytes);

/* PROTOCOL_REJECT_CONFIG when h's channels (n), pulses (count), gates,
 * format (element) or layout (storage) differ from the receiver's, else OK. */
protocol_reject protocol_iq_check_config(const protocol_header *h, uint32_t channels, uint32_t pulses,
                                         uint32_t gates, uint8_t format, uint8_t layout);

/* The table-driven CRC32C (same result as protocol_crc32c, which uses the
 * SSE4.2 instruction when the CPU has it), and the name of the one in use. */
uint32_t protocol_crc32c_portable(uint32_t crc, const void *data, size_t bytes);
const char *protocol_crc32c_implementation(void);

#ifdef __cplusplus
}
#endif

#endif
