/*
 * stage_receive.h - the receive stage and its state: the ZeroMQ input
 * (stage_receive.c), several input sockets (stage_receive_merge.c) and the
 * file input (stage_receive_file.c) share one receiver, which the pipeline
 * embeds and the receive thread alone touches while it runs (the engine
 * opens its sockets and recording before, and closes them after).
 */
#ifndef EIGSTREAM_STAGE_RECEIVE_H
#define EIGSTREAM_STAGE_RECEIVE_H

#include <stdint.h>
#include <zmq.h>

#include "dispatch_client.h"
#include "protocol.h"
#include "receive_team.h"
#include "recording.h"
#include "stage.h"

typedef struct receiver {
    const stage_context *ctx;
    void *inputs[CONFIG_INPUT_IO_THREADS_MAX]; /* input.io_threads sockets (pipeline_sockets.c) */
    /* input.pattern dispatch: socket k's credit and heartbeats (each socket is
     * a DEALER of its own to eigstream-dispatch), else NULL */
    dispatch_client *dispatch[CONFIG_INPUT_IO_THREADS_MAX];
    recording_reader *recording; /* file input (input.endpoint = "file:NAME"), else NULL */
    uint8_t *recorded_frame;     /* file input: one recorded frame's bytes */
    size_t recorded_frame_bytes;
    /* The message in hand: its payload parts (part_capacity of each), and
     * the team that copies them (input.copy_threads; NULL: the receive
     * thread alone). */
    zmq_msg_t *parts;
    receive_part *list;
    receive_team *team;
    uint64_t last_seq;           /* the last accepted frame's seq */
    int seq_seen;                /* ... once a frame was accepted */
    /* The fragmented frame being assembled in the receiver's frame buffer
     * (docs/protocol.md, "Fragmented covariance frames"). */
    struct {
        int active;
        protocol_fragments f; /* its header so far and the matrix it waits for */
        uint64_t last_ns;     /* CLOCK_MONOTONIC when it began or a fragment last joined */
    } assembly;
    log_limiter reject_limit[PROTOCOL_REJECT_COUNT_];
    log_limiter input_late_limit; /* merge: frames that came after it went on */
    pipeline_error result;        /* what the thread ended with */
} receiver;

/* The receive stage's buffers and its copy team (input.copy_threads), each
 * helper with the receive thread's realtime settings; _release frees them.
 * With several input sockets (input.io_threads > 1) there is nothing to
 * prepare: the merge's readers have their own buffers and teams. */
pipeline_error receiver_prepare(receiver *r, char *err, size_t err_bytes);
void receiver_release(receiver *r);

/* Opens the recording of a file input and checks it holds covariance frames
 * of the configured n, matrices and precision (err names the mismatch). */
pipeline_error receiver_recording_open(receiver *r, const char *name, char *err, size_t err_bytes);
void receiver_recording_close(receiver *r);

/* The copy threads input.copy_threads asks for (0: by the cores online). */
int receive_copy_threads(const receiver *r);

/* Thread bodies (arg: the receiver). Each ends on a stop request, at the end
 * of the recording, or when the input fails (r->result PIPELINE_ESOCKET),
 * after closing the form queue. */
void *receive_main(void *arg);
void *receive_merge_main(void *arg);
void *receive_file_main(void *arg);

/* ---- stage_receive.c: what the ZeroMQ and the file input share ----------------- */

/* input.pattern dispatch: sends socket k's client what is due (credit,
 * heartbeat, READY; dispatch_client_tick). The form queue's free slots, less
 * the frame rx is assembling from fragments (rx: the reader of socket k), are
 * shared out over the `sockets` clients (dispatch_client_share, turned by the
 * frames received so far). Each client counts only its own outstanding
 * credit, so together they may promise a few slots more than are free for a
 * moment; a dispatched frame then waits for its slot (receive_queue), never
 * dropped. */
void receive_dispatch_credit(receiver *rx, int k, int sockets);

/* input.pattern dispatch, on a stop: GOODBYE on socket k, then its frames
 * still on their way are received and accepted until the dispatcher's answer
 * (bounded by the heartbeat liveness), so that a daemon stopped on purpose
 * loses none. f: the frame buffer in hand (or NULL); returns the one still
 * held. */
frame *receive_dispatch_drain(receiver *rx, int k, frame *f, char *detail, size_t detail_bytes);

/* Decodes a header part into f->header and checks it against what the
 * daemon takes: a covariance frame of its n, matrices and precision, or
 * with form.input = iq an IQ cube of its channels, pulses, gates, format and
 * layout (the other kind is bad_kind). */
protocol_reject receive_check_header(const receiver *r, frame *f, const void *part, size_t part_bytes, char *detail,
                                     size_t detail_bytes);
/* Copies the payload parts back to back into f->a from byte offset on (a
 * fragment's place; 0 for a whole frame) with the CRC (when the message
 * carries one) and the NaN/Inf check of what was copied, on the receive
 * team (receive_team.h; the caller alone without one). */
receive_verdict receive_copy_payload(receiver *r, frame *f, size_t offset, const receive_part *parts, size_t count);
/* The checks once the payload is in f->a (f->part_bytes holds the part
 * sizes): sizes against the header, CRC, finite entries (none for ci16_le
 * cubes), MDL's K (IQ input always has it). */
protocol_reject receive_check_payload(const receiver *r, frame *f, size_t parts, size_t copied,
                                      const receive_verdict *scan, char *detail, size_t detail_bytes);
typedef enum receive_result {
    RECEIVE_NOTHING = 0, /* no message was waiting */
    RECEIVE_FRAME,       /* a valid frame is in f */
    RECEIVE_FRAGMENT,    /* a fragment joined the frame being assembled in f: keep f */
    RECEIVE_REJECTED,
    RECEIVE_FATAL        /* the socket or context is gone */
} receive_result;

/* Reads one whole message from socket into f (nothing waiting: NOTHING); a
 * fragment goes into its place in f, the frame being assembled there, which
 * is a FRAME once its last fragment joined. On RECEIVE_REJECTED *reason and
 * detail say why. */
receive_result receive_message(receiver *r, void *socket, frame *f, protocol_reject *reason, char *detail,
                               size_t detail_bytes);
/* Counts and logs (rate-limited) a rejected message. */
void receive_reject(receiver *r, protocol_reject reason, const char *detail);
/* Gives up the fragmented frame being assembled, if any (counted incomplete,
 * `why` in the log line), and when `stale` only one that has waited past
 * input.fragment_timeout_ms for its next fragment at now_ns. */
void receive_assembly_give_up(receiver *r, const char *why, int stale, uint64_t now_ns);
/* Counts an accepted frame and queues it under the overflow policy. */
void receive_accept(receiver *r, frame *f);
/* The same for a frame the merge had gone on without (stage_receive_merge.c):
 * counted in input_late, not as a restart; the seq seen so far stays. */
void receive_accept_late(receiver *r, frame *f);

#endif
