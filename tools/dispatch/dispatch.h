/*
 * dispatch.h - eigstream-dispatch: one source's covariance frames spread
 * over N daemons by credit (zguide's load-balancing broker with
 * credit-based flow control and Paranoid Pirate heartbeats; docs/scaleout.md).
 *
 *   front end  PULL (binds by default): the source PUSHes frames here; with
 *              --front E1,..,EK (2..DISPATCH_FRONTS_MAX) one PULL socket per
 *              endpoint, each on an I/O thread of its own (the front context
 *              has K; socket k pinned to thread k), for a source of K PUSH
 *              sockets; all have the same options and allow-list, and the
 *              loop reads them in turn (no socket starves the others)
 *   back end   ROUTER (binds): daemons' DEALERs connect, say READY with their
 *              free slots as credit, return credit as slots free up, and
 *              heartbeat; a frame goes to the live daemon with the most credit
 *
 * A fragmented frame (docs/protocol.md, FLAG_FRAGMENT) is routed as one: its
 * first fragment spends one credit of the daemon chosen for it, and every
 * later fragment follows to that daemon, in order, whatever its credit.
 * That needs a frame's fragments back to back, so it takes one front
 * socket: with several, where the fragments of two frames could
 * interleave, every fragment is rejected (config_mismatch), as the daemon rejects
 * them with input.io_threads > 1.
 *
 * Files: dispatch_main.c (options, sockets, the loop, what happens to each
 * message), dispatch_held.c (the held queue of frames), dispatch_open.c (the
 * fragmented frame being routed: which fragment continues it),
 * dispatch_daemons.c (the daemon table: control messages, choice, liveness),
 * dispatch_report.c (JSON, Prometheus text, the periodic line).
 *
 * With --curve-secret-key both ends are CURVE servers (cli_curve_server.h),
 * each in a ZeroMQ context of its own with its own allow-list: the sources'
 * keys on the front end, the daemons' on the back end (dispatch_side).
 *
 * Books, in messages (a whole frame is one message, a fragment one):
 * frames_in = dispatched + rejected_total + dropped_total + queued. Frames
 * sent as fragments are also counted as frames (dispatch_fragment_stats).
 */
#ifndef EIGSTREAM_DISPATCH_H
#define EIGSTREAM_DISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "auth_zap.h"
#include "cli_message.h"
#include "dispatch_control.h"
#include "protocol.h"

#define DISPATCH_DAEMONS_MAX 64
#define DISPATCH_FRONTS_MAX 8   /* --front endpoints: a PULL socket and an I/O thread each */
#define DISPATCH_ID_MAX 255 /* ZeroMQ routing ids are 1..255 bytes */
#define DISPATCH_HEARTBEAT_MS_MAX 60000 /* a READY's interval above this is taken as this: a peer cannot
                                           make itself unburiable by claiming a long interval */

/* Why a message that passed the checks was not dispatched: one counter each
 * (counted per message: a held fragmented frame dropped counts each of its
 * fragments). */
typedef enum dispatch_drop {
    DISPATCH_DROP_QUEUE_FULL = 0,  /* overflow drop_oldest: evicted, no daemon had credit */
    DISPATCH_DROP_SHUTDOWN,        /* still held when the dispatcher stopped */
    DISPATCH_DROP_FRAGMENT_ORPHANED, /* a fragment whose frame's daemon went away mid-frame */
    DISPATCH_DROP_FRAME_INCOMPLETE,  /* held fragments of a frame the source gave up before its end */
    DISPATCH_DROP_COUNT_
} dispatch_drop;

const char *dispatch_drop_name(dispatch_drop d);

/* Why a daemon stopped getting frames. */
typedef enum dispatch_death {
    DISPATCH_ALIVE = 0,
    DISPATCH_DEATH_SILENT,      /* no message for liveness x its heartbeat interval */
    DISPATCH_DEATH_UNREACHABLE, /* ZeroMQ has no connection to it any more (EHOSTUNREACH) */
    DISPATCH_DEATH_GOODBYE,     /* it said it is stopping */
    DISPATCH_DEATH_COUNT_
} dispatch_death;

const char *dispatch_death_name(dispatch_death d);

typedef struct dispatch_daemon {
    uint8_t id[DISPATCH_ID_MAX];
    size_t id_bytes;
    char name[2 * DISPATCH_ID_MAX + 1]; /* the id if printable, else its hex */
    dispatch_death state;
    uint64_t credit;                    /* frames it may still be sent */
    uint64_t interval_ns;               /* its heartbeat interval (READY) */
    uint64_t last_heard_ns, last_sent_ns;
    uint64_t dispatched;                /* messages sent to it: whole frames and fragments */
    uint64_t frames;                    /* frames it was given (one credit each): whole, or first fragments */
    uint64_t redispatched;              /* frames of a dead daemon sent to it again (one credit each) */
    uint64_t readies, first_seq, last_seq;
    uint64_t last_turn;                 /* dispatch_daemons.turns when it was last sent a frame */
    size_t holding;   /* frames kept for re-dispatch (the caller's count; an entry holding any is not reclaimed) */
    int mid_frame;    /* set by the caller while a fragmented frame is routed to it */
    int goodbye_owed; /* it said GOODBYE mid-frame: answered once that frame ends */
    int readied_again; /* READY came while it was alive: it may have restarted under its name and lost
                          what it held (the caller re-dispatches its kept frames and clears this) */
} dispatch_daemon;

/* What the daemons whose entries were reclaimed had been sent, so that the
 * books still balance: dispatched = the sum over the table + departed. */
typedef struct dispatch_departed {
    uint64_t daemons, dispatched, frames;
} dispatch_departed;

typedef struct dispatch_daemons {
    dispatch_daemon d[DISPATCH_DAEMONS_MAX];
    size_t count;
    uint64_t liveness;
    uint64_t max_credit;         /* --max-credit: the most credit a daemon may hold */
    uint64_t credit_capped;      /* credit a daemon claimed above max_credit (not granted) */
    dispatch_departed departed;  /* entries reclaimed: a new READY took the slot of a daemon gone */
    uint64_t control_errors[DISPATCH_CONTROL_ERROR_COUNT_];
    uint64_t unknown_peers;      /* CREDIT or HEARTBEAT from a peer that never said READY */
    uint64_t table_full;         /* READY refused: DISPATCH_DAEMONS_MAX daemons known */
    uint64_t turns;              /* frames dispatched so far: the clock of last_turn */
} dispatch_daemons;

/* The table is bounded (DISPATCH_DAEMONS_MAX entries) and reclaimed: a
 * READY under a new id takes a free entry, or the entry of the daemon gone
 * longest (not one that still owes the end of a frame), whose counts move
 * to `departed`; only when every entry is alive is it refused (table_full).
 * A READY under a known id (the same daemon back, or restarted under the
 * same name) reuses its entry. A daemon's credit never exceeds max_credit,
 * whatever READY and CREDIT claim; the excess is counted credit_capped.
 *
 * Handles one message from the back end (parts[0] the routing id, then the
 * control message). Returns the daemon it concerns, or NULL. Logs
 * arrivals, departures and malformed messages. A daemon's GOODBYE is
 * answered with GOODBYE on router: behind every frame sent to it, so the
 * daemon knows when the last one has arrived. When it is mid_frame, the
 * answer waits (goodbye_owed) until the caller ends that frame with
 * dispatch_daemons_frame_ended, so that a frame's last fragments still reach it. */
dispatch_daemon *dispatch_daemons_receive(dispatch_daemons *t, void *router, const cli_message *m, uint64_t now_ns);

/* The live daemon with the most credit, or NULL when none has credit. Ties
 * go to the one sent a frame least recently, so that idle daemons take
 * turns rather than the first one taking every frame. */
dispatch_daemon *dispatch_daemons_pick(dispatch_daemons *t);

/* Marks d dead for `why` and logs it with what it was sent. */
void dispatch_daemons_bury(dispatch_daemons *t, dispatch_daemon *d, dispatch_death why);

/* Sends a HEARTBEAT to each live daemon silent from our side for its
 * interval, and buries those not heard from for liveness intervals. */
void dispatch_daemons_tick(dispatch_daemons *t, void *router, uint64_t now_ns);

/* Sends one control message of type to d (never blocks); 0 when sent. */
int dispatch_daemons_send_control(void *router, dispatch_daemon *d, uint8_t type, uint64_t now_ns);

size_t dispatch_daemons_alive(const dispatch_daemons *t);

/* The fragmented frame routed to d ended (complete or not): clears
 * mid_frame and sends the GOODBYE answer it owes, if any. */
void dispatch_daemons_frame_ended(void *router, dispatch_daemon *d, uint64_t now_ns);

/* Whether the rest of a frame routed to d may still be sent to it: alive, or
 * gone by GOODBYE with the answer still owed. */
int dispatch_daemons_takes_rest(const dispatch_daemon *d);

/* The held queue: frames waiting for credit, oldest first (dispatch_held.c).
 * A frame is one message, or the fragments of one fragmented frame that have
 * come so far. Messages are moved in and out by swapping cli_message structs,
 * so each slot keeps its part array for reuse. Never prints. */
typedef struct dispatch_held_frame {
    cli_message *m;  /* count messages in arrival order; cap allocated */
    size_t count, cap;
    uint64_t seq;
    int fragmented;  /* its messages are fragments (FLAG_FRAGMENT) */
} dispatch_held_frame;

typedef struct dispatch_held {
    dispatch_held_frame *f; /* a ring of cap frames */
    size_t cap, head, count;
    size_t messages;        /* over all held frames */
} dispatch_held;

/* An empty queue of `frames` frames: 0, or -1 when out of memory
 * (dispatch_held_free still frees what was allocated). */
int dispatch_held_init(dispatch_held *q, size_t frames);
/* Frees the queue and every part still held. */
void dispatch_held_free(dispatch_held *q);
/* Takes *m (swapped with an empty message, which *m is afterwards) as a new
 * frame at the tail; the queue must not be full. 0, or -1 when out of memory
 * (*m is kept by the caller then). */
int dispatch_held_push(dispatch_held *q, cli_message *m, uint64_t seq, int fragmented);
/* Takes *m likewise as the next message of the tail frame (a fragment that
 * continues it); the queue must not be empty. 0, or -1 when out of memory. */
int dispatch_held_append(dispatch_held *q, cli_message *m);
/* The oldest and the newest held frame; NULL when empty. */
dispatch_held_frame *dispatch_held_head(dispatch_held *q);
dispatch_held_frame *dispatch_held_tail(dispatch_held *q);
/* Closes the parts of the oldest (newest) frame and removes it; returns how
 * many messages it held (0 when empty). Sent parts are closed harmlessly. */
size_t dispatch_held_pop(dispatch_held *q);
size_t dispatch_held_pop_tail(dispatch_held *q);

/* Frames kept after they were sent (dispatch_kept.c), oldest first, in a
 * ring: per daemon, what it may still hold, for re-dispatch when it dies
 * (--redispatch-ms); and the frames waiting to be re-dispatched. A kept
 * frame shares the sent frame's buffers (zmq_msg_copy). Never prints. */
typedef struct dispatch_kept_frame {
    cli_message m;
    uint64_t seq, sent_ns; /* sent_ns: when it was first sent */
} dispatch_kept_frame;

typedef struct dispatch_kept {
    dispatch_kept_frame *f;
    size_t cap, head, count;
} dispatch_kept;

/* An empty ring of `frames` frames: 0, or -1 when out of memory. */
int dispatch_kept_init(dispatch_kept *k, size_t frames);
void dispatch_kept_free(dispatch_kept *k);
/* Keeps a copy of m's parts (references, no bytes copied) as the newest,
 * releasing the oldest when full. 0, or -1 (nothing kept). */
int dispatch_kept_push(dispatch_kept *k, const cli_message *m, uint64_t seq, uint64_t now_ns);
/* Moves the oldest frame of from to the newest of to (released there first
 * when full). 0, or -1 when from is empty. */
int dispatch_kept_move_oldest(dispatch_kept *from, dispatch_kept *to);
dispatch_kept_frame *dispatch_kept_oldest(dispatch_kept *k);
/* Releases the oldest (the newest) frame. */
void dispatch_kept_pop(dispatch_kept *k);
void dispatch_kept_pop_newest(dispatch_kept *k);
/* Releases the frames first sent before sent_before_ns; how many. */
size_t dispatch_kept_expire(dispatch_kept *k, uint64_t sent_before_ns);

/* The fragmented frame being routed (dispatch_open.c): at most one, as a
 * source sends a frame's fragments back to back with nothing in between. */
typedef enum dispatch_open_state {
    DISPATCH_OPEN_NONE = 0, /* none: the next fragment must have first = 0 */
    DISPATCH_OPEN_HELD,     /* its fragments so far are the held queue's tail frame */
    DISPATCH_OPEN_ROUTED,   /* its first went to daemon `to`: the rest follow there at once */
    DISPATCH_OPEN_ORPHANED, /* daemon `to` went away mid-frame: the rest are dropped */
} dispatch_open_state;

typedef struct dispatch_open {
    dispatch_open_state state;
    protocol_fragments f; /* its header (its first fragment's) and the matrix its next fragment starts at */
    size_t to;         /* ROUTED, ORPHANED: the daemon's index in dispatch_daemons.d */
    uint64_t last_ns;  /* when its latest fragment came (for --fragment-timeout-ms) */
} dispatch_open;

/* What a message whose header and sizes passed the checks is. */
typedef enum dispatch_step {
    DISPATCH_STEP_WHOLE = 0, /* not a fragment: a whole frame, held as ever */
    DISPATCH_STEP_START,     /* a fragment with first = 0: a new frame, held */
    DISPATCH_STEP_CONTINUE,  /* the open frame's next fragment (HELD: appended; ROUTED: sent to its daemon) */
    DISPATCH_STEP_ORPHANED,  /* the open frame's next fragment, its daemon gone: dropped fragment_orphaned */
    DISPATCH_STEP_STRAY,     /* first > 0 and continuing nothing: rejected incomplete */
} dispatch_step;

/* Classifies h against the open frame o; pure (changes nothing). Sets
 * *ends_open to 1 when o must end before h is taken: a whole frame or a new
 * first fragment came while o was open (the source gave o up), or a fragment
 * of o's seq out of place (o cannot be finished in order). */
dispatch_step dispatch_open_step(const dispatch_open *o, const protocol_header *h, int *ends_open);

/* Takes fragment h of START or CONTINUE into o (its place, last_ns = now).
 * Returns 1 when h ends the frame (first + matrices = count): o is NONE
 * again, its frame complete; 0 while more is to come. */
int dispatch_open_take(dispatch_open *o, const protocol_header *h, uint64_t now_ns);

/* How the fragmented frames went (counted per frame; the messages are in the
 * message books as well): started = dispatched + ended by each reason + in
 * progress (held, or routed and not yet at its end). */
typedef enum dispatch_frame_end {
    DISPATCH_END_ABANDONED = 0, /* the source stopped it before its end: a new frame began, a fragment of
                                   it failed the checks or came out of place, --fragment-timeout-ms passed,
                                   or the dispatcher stopped while it was being routed */
    DISPATCH_END_ORPHANED,      /* the daemon it was routed to went away before its end */
    DISPATCH_END_DROPPED,       /* dropped while held (queue_full, shutdown, frame_incomplete) */
    DISPATCH_END_COUNT_
} dispatch_frame_end;

const char *dispatch_frame_end_name(dispatch_frame_end e);

typedef struct dispatch_fragment_stats {
    uint64_t started;    /* first fragments accepted */
    uint64_t dispatched; /* frames every fragment of which went to one daemon */
    uint64_t ended[DISPATCH_END_COUNT_];
    uint64_t in_progress; /* gauge: held, or routed and not yet at its end */
} dispatch_fragment_stats;

/* The dispatcher's two ends, each a CURVE server with its own allow-list
 * when --curve-secret-key is set: the sources' keys on the front, the
 * daemons' on the back, so that a source's key cannot pose as a daemon. */
typedef enum dispatch_side {
    DISPATCH_SIDE_FRONT = 0, /* "front": the source's PUSH */
    DISPATCH_SIDE_BACK,      /* "back": the daemons' DEALERs */
    DISPATCH_SIDE_COUNT_
} dispatch_side;

const char *dispatch_side_name(dispatch_side e);

/* Everything the reports show. The message books: frames_in = dispatched +
 * rejected_total + dropped_total + queued. */
typedef struct dispatch_stats {
    uint64_t frames_in, dispatched, rejected_total, dropped_total, resent; /* messages */
    /* Re-dispatch (outside the message books: second sends of frames
     * already dispatched): sent again to another daemon, and those whose
     * --redispatch-ms passed before one had credit. */
    uint64_t redispatched, redispatch_expired;
    uint64_t frames_begun; /* messages but fragments with first > 0: what --frames counts */
    uint64_t rejected[PROTOCOL_REJECT_COUNT_];
    uint64_t dropped[DISPATCH_DROP_COUNT_];
    uint64_t blocked_ns;  /* overflow block: time the front end was not read */
    size_t queued;        /* messages held */
    size_t queued_frames; /* frames held */
    dispatch_fragment_stats fragmented;
    int curve;            /* CURVE on both ends */
    uint64_t auth_rejected[DISPATCH_SIDE_COUNT_][AUTH_ZAP_REJECT_COUNT_]; /* peers refused, by end and reason */
    double started_s;
} dispatch_stats;

/* The metrics as one JSON object (no newline) into out; the bytes needed. */
size_t dispatch_report_json(const dispatch_stats *s, const dispatch_daemons *t, double now_s, char *out,
                            size_t out_bytes);
/* Writes the JSON to path (replaced atomically); 0, or -1 with errno. */
int dispatch_report_json_file(const dispatch_stats *s, const dispatch_daemons *t, double now_s, const char *path);
/* Writes Prometheus text exposition to path (replaced atomically); 0 or -1. */
int dispatch_report_prometheus_file(const dispatch_stats *s, const dispatch_daemons *t, double now_s,
                                    const char *path);

#endif
