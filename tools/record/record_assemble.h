/*
 * record_assemble.h - eigstream-record's assembly of fragmented covariance
 * frames (docs/protocol.md, "Fragmented covariance frames") into the whole
 * frames a recording holds (a record is a whole frame: docs/recording.md).
 *
 * The rules are the daemon's receiver's (pipeline/stage_receive.c): one frame
 * is assembled at a time; a fragment with first = 0 starts a frame (giving up
 * one still incomplete); the next fragment of that frame (same seq, first =
 * the next matrix, same timestamp, n, count, element, storage, snapshots and
 * CRC flag) joins it after its checks (sizes, and its own CRC when flagged);
 * any other fragment is skipped as `incomplete`, leaving the frame being
 * assembled as it was; a fragment that fails a check is skipped and gives its
 * frame up. The caller gives a frame up when a whole covariance frame comes in
 * between, when no fragment came for its bound, and at exit
 * (record_assembly_give_up, record_assembly_stale).
 *
 *     record_assembly a;
 *     record_assembly_init(&a, 128u << 20);
 *     record_fragment_outcome out;
 *     switch (record_assembly_take(&a, &h, part, part_bytes, parts, received_ns, now_s, &out)) {
 *     case RECORD_FRAGMENT_COMPLETE: ... record a.f.frame, a.payload (a.f.frame.payload_bytes), a.received_ns ...
 *     ...
 *     }
 *     ... out.gave_up[0 .. out.gave_up_count-1]: frames given up, each which and why ...
 *     record_assembly_free(&a);
 *
 * The assembled frame's header: FRAGMENT cleared, first and matrices 0,
 * payload_bytes the whole frame's, the CRC flag as the fragments had it and
 * crc32c that of the whole payload (the fragments' CRCs joined with
 * protocol_crc32c_combine); the payload is one contiguous buffer; received_ns
 * is the last fragment's. Finiteness is not checked (eigstream-record records
 * whole frames with NaN too). Never prints.
 */
#ifndef EIGSTREAM_RECORD_ASSEMBLE_H
#define EIGSTREAM_RECORD_ASSEMBLE_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

#define RECORD_WHY_MAX 256

typedef enum record_fragment_result {
    RECORD_FRAGMENT_JOINED = 0, /* taken; its frame waits for the next fragment */
    RECORD_FRAGMENT_COMPLETE,   /* taken, and its frame is whole: a.f.frame, a.payload, a.received_ns */
    RECORD_FRAGMENT_SKIPPED,    /* not taken: outcome.skipped says why */
    RECORD_FRAGMENT_ENOMEM      /* no memory for the frame (it is given up) */
} record_fragment_result;

/* What one fragment did besides its result, each line without a newline. A
 * fragment gives up at most two frames: a first fragment the frame it
 * interrupts, then its own when it fails a check. */
typedef struct record_fragment_outcome {
    char skipped[RECORD_WHY_MAX];    /* RECORD_FRAGMENT_SKIPPED: the reject name, the fragment, why */
    char gave_up[2][RECORD_WHY_MAX]; /* gave_up_count frames given up: seq, matrices joined, why */
    int gave_up_count;
} record_fragment_outcome;

typedef struct record_assembly {
    uint64_t max_frame_bytes; /* largest frame payload assembled; a fragment of a larger frame: oversized */
    int active;               /* a frame is being assembled */
    protocol_fragments f;     /* its header so far (the whole frame's once complete) and the matrix it
                                 waits for (protocol.h) */
    double last_s;            /* monotonic seconds when its last fragment joined */
    uint64_t received_ns;     /* CLOCK_REALTIME receipt of its last fragment */
    uint8_t *payload;         /* the frame's payload, matrices 0 .. next-1 filled */
    size_t capacity;          /* bytes allocated at payload: at most max_frame_bytes */
} record_assembly;

/* An empty assembly that takes frames of at most max_frame_bytes payload. */
void record_assembly_init(record_assembly *a, uint64_t max_frame_bytes);

/* Frees the buffer; *a is empty (and must be initialized again to be used). */
void record_assembly_free(record_assembly *a);

/* Takes one fragment: h its decoded header (FRAGMENT set, kind covariance),
 * part[0 .. parts-1] its payload parts of part_bytes[] bytes (parts = 0 for
 * a message whose parts could not all be kept: rejected `parts` after the
 * header's size checks, as the daemon does); received_ns its CLOCK_REALTIME
 * receipt, now_s the monotonic time. Fills *out and returns the result; the
 * fragment's bytes are copied, the caller keeps its parts. */
record_fragment_result record_assembly_take(record_assembly *a, const protocol_header *h, const void *const *part,
                                            const size_t *part_bytes, size_t parts, uint64_t received_ns,
                                            double now_s, record_fragment_outcome *out);

/* Gives up the frame being assembled, if any, for the reason why: writes one
 * line (its seq, the matrices it had, why) to gave_up and returns 1; returns
 * 0 (gave_up untouched) when no frame is being assembled. */
int record_assembly_give_up(record_assembly *a, const char *why, char *gave_up, size_t gave_up_bytes);

/* 1 when a frame is being assembled and its last fragment joined more than
 * timeout_s before now_s (give it up), else 0. */
int record_assembly_stale(const record_assembly *a, double now_s, double timeout_s);

#endif
