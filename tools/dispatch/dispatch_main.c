/*
 * dispatch_main.c - eigstream-dispatch: options, sockets, the held queue and
 * the loop (dispatch.h says what the tool is; docs/scaleout.md how to run it).
 *
 * One thread, one zmq_poll loop: control messages from daemons first (they
 * bring credit), then frames from the source into a bounded queue, then as
 * many queued frames as daemons have credit for, then heartbeats and
 * liveness. The front end is one PULL socket per --front endpoint, each on
 * an I/O thread of its own, read in turn (fronts_read). A frame is handed
 * on as the parts it came in (zero-copy: ZeroMQ moves the message
 * buffers), never decoded beyond its header.
 *
 * A fragmented frame is held as one frame, its fragments joining it as they
 * come; the daemon that gets it (one credit) gets the fragments held so far,
 * and every later one is sent straight to it, whatever its credit. As the
 * source sends nothing between a frame's fragments, no other frame is held
 * or sent while one is routed, so each daemon gets a frame's fragments
 * back to back, in order. That holds on one front socket only: over
 * several, the fragments of two frames could interleave, so fragments are
 * rejected (config_mismatch) when --front lists more than one endpoint.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "cli_common.h"
#include "cli_curve_server.h"
#include "cli_endpoints.h"
#include "cli_options.h"
#include "cli_peer.h"
#include "dispatch.h"
#include "transport_memory.h"

#define PARTS_MAX (1 + 100000) /* header + one part per matrix at the sim's largest */
#define POLL_MS 20
#define FRONT_BATCH 64            /* front messages read per turn of the loop, between looks at the back end */
#define CONTROL_PART_MAX 256      /* a back-end part: a routing id (<= 255 bytes) or a control message */
#define CONTROL_MESSAGE_MAX 512   /* a back-end message: routing id + control message, with room */
#define ORPHANED_WHY "its daemon went away before its end; the rest of it is dropped (fragment_orphaned)"

typedef struct dispatch_options {
    const char *front, *back, *json, *prometheus, *seq_log;
    const char *curve_secret_key, *front_curve_allow, *back_curve_allow;
    int front_connect, overflow_block, queue, liveness, front_hwm, fragment_timeout_ms, max_credit;
    int back_io_threads; /* the back end's ZeroMQ I/O threads: its daemons' connections are spread over them */
    int redispatch_ms, redispatch_keep;
    int64_t max_bytes;
    uint64_t frames;
    double stats_s;
} dispatch_options;

typedef struct dispatcher {
    dispatch_options o;
    void *ctx, *back_ctx, *back; /* a context per end: each end's own ZAP allow-list */
    cli_endpoints fronts;        /* --front: one PULL socket per entry, in ctx */
    void *front[DISPATCH_FRONTS_MAX]; /* fronts.count sockets; front[k] on I/O thread k */
    size_t front_next;           /* the front socket read first on the next turn (round-robin) */
    cli_curve_server front_curve, back_curve;
    cli_peer *back_watch; /* the back end's connections, drained at exit (fed by
                             the ZAP handler's monitor under CURVE) */
    dispatch_held q;
    dispatch_open open; /* the fragmented frame being routed, if any */
    cli_message in;     /* the message being received; moved into q when held */
    dispatch_daemons t;
    dispatch_kept kept[DISPATCH_DAEMONS_MAX]; /* per daemon entry: frames sent, for re-dispatch */
    dispatch_kept redo;                       /* frames of dead daemons waiting for another */
    dispatch_stats s;
    size_t *part_bytes; /* PARTS_MAX sizes, for the header checks */
    FILE *seq_log;
} dispatcher;

static const char *const overflow_names[] = {"drop_oldest", "block", NULL};

_Static_assert(DISPATCH_FRONTS_MAX <= CLI_ENDPOINTS_MAX && DISPATCH_FRONTS_MAX <= AUTH_ZAP_WATCH_MAX,
               "every front socket needs a list entry and a CURVE handshake watch");

/* --front: one endpoint, taken as it is (ZeroMQ judges it when it
 * attaches), or a list of 2..DISPATCH_FRONTS_MAX checked here. 0, or -1
 * with err naming --front and the entry. */
static int fronts_parse(const char *text, cli_endpoints *fronts, char *err, size_t err_bytes)
{
    char why[CLI_ENDPOINTS_WHY_BYTES];
    if (strchr(text, ',') == NULL) {
        fronts->count = 1;
        if (snprintf(fronts->entry[0], CLI_ENDPOINT_BYTES, "%s", text) < CLI_ENDPOINT_BYTES)
            return 0;
        snprintf(err, err_bytes, "--front: longer than %d bytes", CLI_ENDPOINT_BYTES - 1);
        return -1;
    }
    if (cli_endpoints_parse(text, fronts, why, sizeof why) == 0)
        return 0;
    snprintf(err, err_bytes, "--front: %s", why);
    return -1;
}

/* The command line into *o (defaults already there) and --front's
 * endpoints into *fronts: -1 to go on, else the exit status (0 after
 * --help, 2 on a bad option, reported). */
static int options_parse(int argc, char **argv, dispatch_options *o, cli_endpoints *fronts)
{
    const cli_option table[] = {
        CLI_STRING("front", 0, &o->front, "E",
                   "endpoint the source PUSHes covariance frames to (PULL); E1,E2,..: 2 to 8 endpoints, a PULL "
                   "socket on an I/O thread of its own for each (a source of several PUSH sockets); fragmented "
                   "frames need one"),
        CLI_FLAG("front-connect", 0, &o->front_connect,
                 "connect the front end (each endpoint) to a binding source instead of binding"),
        CLI_STRING("back", 0, &o->back, "E", "endpoint daemons connect to (ROUTER, binds)"),
        CLI_INT("queue", 0, &o->queue, 1, 100000, "N",
                "frames held while no daemon has credit (a fragmented frame with its fragments is one)"),
        CLI_CHOICE("overflow", 0, &o->overflow_block, overflow_names, NULL,
                   "queue full: drop the oldest (counted queue_full) or stop reading the source"),
        CLI_INT("front-hwm", 0, &o->front_hwm, 1, 1000000, "H", "front end receive high-water mark (frames)"),
        CLI_INT("back-io-threads", 0, &o->back_io_threads, 1, DISPATCH_DAEMONS_MAX, "T",
                "ZeroMQ I/O threads of the back end; ZeroMQ gives each daemon's connection to the least busy "
                "(one carries ~3-8 GB/s)"),
        CLI_INT("max-bytes", 0, &o->max_bytes, 1024, INT64_MAX, "B",
                "largest frame payload accepted (a fragmented frame's: all its fragments)"),
        CLI_INT("max-credit", 0, &o->max_credit, 1, 1000000, "C",
                "the most credit one daemon may hold, whatever it claims (the excess counted credit_capped)"),
        CLI_INT("redispatch-ms", 0, &o->redispatch_ms, 0, 3600000, "T",
                "a whole frame sent to a daemon that dies is sent once to another within T ms of its first "
                "send (counted redispatched), 0 = never"),
        CLI_INT("redispatch-keep", 0, &o->redispatch_keep, 1, 100000, "K",
                "frames kept per daemon for re-dispatch (its credit and what its stages hold)"),
        CLI_INT("liveness", 0, &o->liveness, 1, 100, "L", "heartbeat intervals of silence before a daemon is dead"),
        CLI_INT("fragment-timeout-ms", 0, &o->fragment_timeout_ms, 1, 3600000, "T",
                "a fragmented frame that gets no next fragment for T ms is given up (counted abandoned)"),
        CLI_DOUBLE("stats-s", 0, &o->stats_s, 0.0, 3600.0, "S", "seconds between metrics lines on stderr, 0 = none"),
        CLI_STRING("json", 0, &o->json, "FILE", "metrics JSON, rewritten with each line and at exit"),
        CLI_STRING("prometheus", 0, &o->prometheus, "FILE", "Prometheus text file, rewritten likewise"),
        CLI_STRING("seq-log", 0, &o->seq_log, "FILE",
                   "one line per dispatched message: seq daemon (a fragment: seq daemon first)"),
        CLI_INT("frames", 0, &o->frames, 0, UINT64_MAX, "N",
                "exit once N frames came in and left (fragments after a frame's first do not count), "
                "0 = run until SIGINT/SIGTERM"),
        CLI_STRING("curve-secret-key", 0, &o->curve_secret_key, "FILE",
                   "this dispatcher's CURVE key pair (BASE.key_secret, mode 0600): both ends become CURVE servers; "
                   "needs --front-curve-allow and --back-curve-allow"),
        CLI_STRING("front-curve-allow", 0, &o->front_curve_allow, "PATH",
                   "the sources' public keys let in on the front end (a file of keys or a directory of *.key)"),
        CLI_STRING("back-curve-allow", 0, &o->back_curve_allow, "PATH",
                   "the daemons' public keys let in on the back end (likewise); others are refused and counted"),
        CLI_END};
    const cli_spec spec = {
        .prog = "eigstream-dispatch", .synopsis = "[options]", .options = table,
        .description = "Spreads one source's covariance frames over the daemons that ask for them with credit "
                       "(input.pattern = dispatch); a dead daemon gets no more. See docs/scaleout.md.",
        .epilogue = "Exit: 0 after SIGINT/SIGTERM or --frames, 1 on a socket or file error, 2 on a bad option."};
    cli_args args;
    char err[1024];
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
    int curve = o->curve_secret_key != NULL;
    if (status < 0 && (curve != (o->front_curve_allow != NULL) || curve != (o->back_curve_allow != NULL)))
        return cli_fatal("eigstream-dispatch", "--curve-secret-key, --front-curve-allow and --back-curve-allow go "
                         "together: CURVE on both ends or on neither") + 1;
    if (status < 0 && fronts_parse(o->front, fronts, err, sizeof err) != 0)
        return cli_fatal("eigstream-dispatch", "%s", err) + 1;
    return status;
}

/* Counts n messages that passed the checks as dropped for why. */
static void count_dropped(dispatcher *x, dispatch_drop why, size_t n)
{
    x->s.dropped[why] += n;
    x->s.dropped_total += n;
}

/* Counts a fragmented frame that ended before all of it was dispatched;
 * the first of each kind is logged. */
static void count_frame_end(dispatcher *x, dispatch_frame_end why, uint64_t seq, const char *detail)
{
    if (x->s.fragmented.ended[why]++ == 0)
        fprintf(stderr, "eigstream-dispatch: a fragmented frame (seq %llu) %s: %s (counted; first of its kind)\n",
                (unsigned long long)seq, dispatch_frame_end_name(why), detail);
}

/* Frees the oldest held frame (all its messages) and counts them under why;
 * a fragmented one is a frame dropped as well. */
static void held_drop_oldest(dispatcher *x, dispatch_drop why)
{
    int fragmented = dispatch_held_head(&x->q)->fragmented;
    count_dropped(x, why, dispatch_held_pop(&x->q));
    x->s.fragmented.ended[DISPATCH_END_DROPPED] += (uint64_t)fragmented;
}

/* Ends the open fragmented frame before its end: the source gave it up, or
 * the dispatcher stops. Held, its fragments are dropped (frame_incomplete)
 * rather than sent to a daemon that would count it incomplete; routed, its
 * daemon has part of it and counts it incomplete itself, and is sent the
 * GOODBYE answer it may be owed. */
static void open_end(dispatcher *x, const char *why, uint64_t now)
{
    dispatch_open *o = &x->open;
    if (o->state == DISPATCH_OPEN_HELD) {
        count_dropped(x, DISPATCH_DROP_FRAME_INCOMPLETE, dispatch_held_pop_tail(&x->q));
        count_frame_end(x, DISPATCH_END_ABANDONED, o->f.frame.seq, why);
    } else if (o->state == DISPATCH_OPEN_ROUTED) {
        dispatch_daemon *d = &x->t.d[o->to];
        if (dispatch_daemons_takes_rest(d))
            count_frame_end(x, DISPATCH_END_ABANDONED, o->f.frame.seq, why);
        else
            count_frame_end(x, DISPATCH_END_ORPHANED, o->f.frame.seq, ORPHANED_WHY);
        dispatch_daemons_frame_ended(x->back, d, now);
    }
    o->state = DISPATCH_OPEN_NONE;
}

/* The dispatcher's own minimal checks of a covariance message: the header
 * (protocol_header_decode_kind), the part sizes it implies, and a
 * fragmented frame's whole size against --max-bytes; the CRC and the payload
 * stay the daemon's. *decoded says whether *h holds the decoded header. */
static protocol_reject frame_check(dispatcher *x, const cli_message *m, protocol_header *h, int *decoded)
{
    *decoded = 0;
    if (m->count == 0)
        return PROTOCOL_REJECT_PARTS;
    protocol_reject r = protocol_header_decode_kind(zmq_msg_data(&m->part[0]), zmq_msg_size(&m->part[0]),
                                                    PROTOCOL_KIND_COVARIANCE, h);
    if (r != PROTOCOL_OK)
        return r;
    *decoded = 1;
    if (m->extra > 0)
        return PROTOCOL_REJECT_PARTS;
    for (size_t i = 1; i < m->count; i++)
        x->part_bytes[i - 1] = zmq_msg_size(&m->part[i]);
    r = protocol_covariance_check_sizes(h, x->part_bytes, m->count - 1, (size_t)x->o.max_bytes);
    /* The sizes passed, so the matrix bytes are valid and count >= 1. */
    if (r == PROTOCOL_OK && (h->flags & PROTOCOL_FLAG_FRAGMENT) &&
        protocol_matrix_bytes(h->n, h->element, h->storage) > (size_t)x->o.max_bytes / h->count)
        r = PROTOCOL_REJECT_OVERSIZED;
    return r;
}

/* Counts and frees x->in, rejected for r; the first of each reason is
 * logged, with detail when not NULL. */
static void reject(dispatcher *x, protocol_reject r, const char *detail)
{
    if (x->s.rejected[r]++ == 0)
        fprintf(stderr, "eigstream-dispatch: rejected a message: %s%s%s (counted; first of its kind)\n",
                protocol_reject_name(r), detail != NULL ? ": " : "", detail != NULL ? detail : "");
    x->s.rejected_total++;
    cli_message_release(&x->in);
}

/* Sends message m to d: its routing id, then the parts as they came. 0 when
 * sent; -1 with errno when ZeroMQ refused the routing id (nothing sent). */
static int send_message(dispatcher *x, dispatch_daemon *d, cli_message *m)
{
    if (zmq_send(x->back, d->id, d->id_bytes, ZMQ_SNDMORE | ZMQ_DONTWAIT) != (int)d->id_bytes)
        return -1;
    /* Past the routing id the message is the daemon's: its parts follow. */
    for (size_t i = 0; i < m->count; i++)
        while (zmq_msg_send(&m->part[i], x->back, i + 1 < m->count ? ZMQ_SNDMORE : 0) < 0 && errno == EINTR)
            ;
    return 0;
}

/* Books one message of frame seq sent to d; first is a fragment's first
 * matrix, or -1 for a whole frame (the seq log's third column). */
static void count_sent(dispatcher *x, dispatch_daemon *d, uint64_t seq, int64_t first, uint64_t now)
{
    d->dispatched++;
    d->last_sent_ns = now;
    x->s.dispatched++;
    if (x->seq_log == NULL)
        return;
    if (first < 0)
        fprintf(x->seq_log, "%llu %s\n", (unsigned long long)seq, d->name);
    else
        fprintf(x->seq_log, "%llu %s %lld\n", (unsigned long long)seq, d->name, (long long)first);
}

/* Sends the oldest held frame to d, one credit: each of its messages. The
 * number of messages sent: 0 when ZeroMQ refused the first (the frame stays
 * held, nothing spent), fewer than all when d's connection went mid-frame. */
static size_t send_held(dispatcher *x, dispatch_daemon *d, uint64_t now)
{
    dispatch_held_frame *f = dispatch_held_head(&x->q);
    dispatch_kept *kept = &x->kept[d - x->t.d];
    /* A whole frame is kept (its buffers shared) before the send moves
     * its parts; fragmented frames are not re-dispatched. */
    int keep = x->o.redispatch_ms > 0 && !f->fragmented && dispatch_kept_push(kept, &f->m[0], f->seq, now) == 0;
    size_t sent = 0;
    for (; sent < f->count; sent++) {
        int64_t first = -1; /* read before the send: ZeroMQ takes the parts */
        protocol_header h;
        if (f->fragmented &&
            protocol_header_decode(zmq_msg_data(&f->m[sent].part[0]), PROTOCOL_HEADER_BYTES, &h) == PROTOCOL_OK)
            first = h.fragment_first;
        if (send_message(x, d, &f->m[sent]) != 0)
            break;
        count_sent(x, d, f->seq, first, now);
    }
    if (sent == 0 && keep)
        dispatch_kept_pop_newest(kept);
    d->holding = kept->count;
    if (sent == 0)
        return 0;
    if (d->frames++ == 0)
        d->first_seq = f->seq;
    d->last_seq = f->seq;
    d->credit--;
    d->last_turn = ++x->t.turns;
    return sent;
}

/* The kept frames of daemon entry i go to the re-dispatch queue (those
 * past --redispatch-ms are released, counted expired). */
static void redispatch_collect(dispatcher *x, size_t i, uint64_t now, const char *why)
{
    dispatch_kept *k = &x->kept[i];
    uint64_t horizon = (uint64_t)x->o.redispatch_ms * 1000000u;
    x->s.redispatch_expired += dispatch_kept_expire(k, now > horizon ? now - horizon : 0);
    if (k->count > 0)
        fprintf(stderr, "eigstream-dispatch: daemon %s %s: its %zu latest frames (seq %llu..) are sent again to "
                "another daemon\n", x->t.d[i].name, why, k->count, (unsigned long long)dispatch_kept_oldest(k)->seq);
    while (dispatch_kept_move_oldest(k, &x->redo) == 0)
        ;
    x->t.d[i].holding = 0;
}

/* What the daemons' states say about their kept frames: a daemon gone
 * silent or unreachable, or READY again under its name, may have lost
 * them (re-dispatched); one gone by GOODBYE publishes all it had
 * (released); a live one's frames past --redispatch-ms are released. */
static void redispatch_scan(dispatcher *x, uint64_t now)
{
    uint64_t horizon = (uint64_t)x->o.redispatch_ms * 1000000u;
    for (size_t i = 0; i < x->t.count; i++) {
        dispatch_daemon *d = &x->t.d[i];
        if (x->kept[i].count == 0) {
            d->readied_again = 0;
            continue;
        }
        if (d->state == DISPATCH_DEATH_GOODBYE)
            (void)dispatch_kept_expire(&x->kept[i], UINT64_MAX);
        else if (d->state != DISPATCH_ALIVE)
            redispatch_collect(x, i, now, dispatch_death_name(d->state));
        else if (d->readied_again)
            redispatch_collect(x, i, now, "said READY again (restarted?)");
        else
            (void)dispatch_kept_expire(&x->kept[i], now > horizon ? now - horizon : 0);
        d->readied_again = 0;
        d->holding = x->kept[i].count;
    }
}

/* Sends the frames waiting for re-dispatch, oldest first, each once, to the
 * daemons with the most credit (one credit each); a frame past
 * --redispatch-ms is released, counted expired. */
static void redispatch_send(dispatcher *x, uint64_t now)
{
    uint64_t horizon = (uint64_t)x->o.redispatch_ms * 1000000u;
    dispatch_kept_frame *f;
    dispatch_daemon *d;
    while ((f = dispatch_kept_oldest(&x->redo)) != NULL) {
        if (f->sent_ns + horizon < now) {
            x->s.redispatch_expired++;
            dispatch_kept_pop(&x->redo);
            continue;
        }
        if ((d = dispatch_daemons_pick(&x->t)) == NULL)
            return;
        if (send_message(x, d, &f->m) != 0) {
            dispatch_daemons_bury(&x->t, d, DISPATCH_DEATH_UNREACHABLE);
            continue;
        }
        d->redispatched++;
        d->credit--;
        d->last_sent_ns = now;
        d->last_turn = ++x->t.turns;
        x->s.redispatched++;
        if (x->seq_log != NULL)
            fprintf(x->seq_log, "%llu %s redispatched\n", (unsigned long long)f->seq, d->name);
        dispatch_kept_pop(&x->redo);
    }
}

/* Hands held frames to the daemons with the most credit until either runs
 * out. The open fragmented frame, when held, is the newest (nothing of
 * another frame comes between its fragments): once sent it is routed, and
 * its later fragments follow to the same daemon (fragment_follow). */
static void dispatch_queued(dispatcher *x, uint64_t now)
{
    dispatch_daemon *d;
    if (x->o.redispatch_ms > 0) {
        redispatch_scan(x, now);
        redispatch_send(x, now);
    }
    while (x->q.count > 0 && (d = dispatch_daemons_pick(&x->t)) != NULL) {
        size_t total = dispatch_held_head(&x->q)->count, sent = send_held(x, d, now);
        if (sent == 0) {
            /* EHOSTUNREACH: its connection is gone; EAGAIN: its pipe is full
             * although it gave credit. Either way it gets nothing more until
             * it says READY again; the frame goes to another daemon. */
            dispatch_daemons_bury(&x->t, d, DISPATCH_DEATH_UNREACHABLE);
            x->s.resent++;
            continue;
        }
        int fragmented = dispatch_held_head(&x->q)->fragmented;
        uint64_t seq = dispatch_held_head(&x->q)->seq;
        int open = x->open.state == DISPATCH_OPEN_HELD && x->q.count == 1;
        (void)dispatch_held_pop(&x->q); /* the sent parts are ZeroMQ's; any others are closed here */
        if (sent < total) {
            /* Its connection went between two fragments: the rest cannot follow. */
            dispatch_daemons_bury(&x->t, d, DISPATCH_DEATH_UNREACHABLE);
            count_dropped(x, DISPATCH_DROP_FRAGMENT_ORPHANED, total - sent);
            count_frame_end(x, DISPATCH_END_ORPHANED, seq, ORPHANED_WHY);
            if (open) {
                x->open.state = DISPATCH_OPEN_ORPHANED;
                x->open.to = (size_t)(d - x->t.d);
            }
        } else if (open) {
            x->open.state = DISPATCH_OPEN_ROUTED;
            x->open.to = (size_t)(d - x->t.d);
            d->mid_frame = 1;
        } else if (fragmented) {
            x->s.fragmented.dispatched++;
        }
    }
}

/* Holds x->in, a whole frame or a first fragment, as a new frame, evicting
 * the oldest when the queue is full (only under drop_oldest: under block the
 * front end is not read then). An evicted frame is never the open one: a new
 * frame ends that first. 0, or -1 when out of memory. */
static int hold(dispatcher *x, const protocol_header *h, int fragment, uint64_t now)
{
    if (x->q.count == x->q.cap)
        held_drop_oldest(x, DISPATCH_DROP_QUEUE_FULL);
    if (dispatch_held_push(&x->q, &x->in, h->seq, fragment) != 0) {
        cli_message_release(&x->in);
        errno = ENOMEM;
        return -1;
    }
    if (fragment) {
        x->s.fragmented.started++;
        (void)dispatch_open_take(&x->open, h, now); /* a one-fragment frame is complete at once */
    }
    return 0;
}

/* The open frame's next fragment (x->in): appended while the frame is held;
 * sent straight to the frame's daemon once routed, without credit; dropped
 * as fragment_orphaned when that daemon is gone (the frame then counted
 * orphaned, once). 0, or -1 when out of memory. */
static int fragment_follow(dispatcher *x, const protocol_header *h, uint64_t now)
{
    dispatch_open *o = &x->open;
    if (o->state == DISPATCH_OPEN_HELD) {
        if (dispatch_held_append(&x->q, &x->in) != 0) {
            cli_message_release(&x->in);
            errno = ENOMEM;
            return -1;
        }
        (void)dispatch_open_take(o, h, now);
        return 0;
    }
    dispatch_daemon *d = &x->t.d[o->to];
    if (o->state == DISPATCH_OPEN_ROUTED && dispatch_daemons_takes_rest(d)) {
        if (send_message(x, d, &x->in) == 0) {
            count_sent(x, d, h->seq, h->fragment_first, now);
            cli_message_release(&x->in);
            if (dispatch_open_take(o, h, now)) {
                x->s.fragmented.dispatched++;
                dispatch_daemons_frame_ended(x->back, d, now);
            }
            return 0;
        }
        d->goodbye_owed = 0; /* unreachable: no answer can reach it either */
        if (d->state == DISPATCH_ALIVE)
            dispatch_daemons_bury(&x->t, d, DISPATCH_DEATH_UNREACHABLE);
    }
    if (o->state == DISPATCH_OPEN_ROUTED) {
        count_frame_end(x, DISPATCH_END_ORPHANED, o->f.frame.seq, ORPHANED_WHY);
        dispatch_daemons_frame_ended(x->back, d, now);
        o->state = DISPATCH_OPEN_ORPHANED;
    }
    count_dropped(x, DISPATCH_DROP_FRAGMENT_ORPHANED, 1);
    cli_message_release(&x->in);
    (void)dispatch_open_take(o, h, now);
    return 0;
}

/* Takes one message from front socket sock: rejected (counted, freed),
 * held, sent after its frame's first fragment, or dropped (counted). -1 on
 * a socket failure or when out of memory. */
static int front_receive(dispatcher *x, void *sock, uint64_t now)
{
    /* The whole message is bounded as its parts are read (the rest is
     * discarded unkept); each part by ZMQ_MAXMSGSIZE before that. */
    if (cli_message_receive_bounded(sock, &x->in, PARTS_MAX, (size_t)x->o.max_bytes + PROTOCOL_HEADER_BYTES) != 0)
        return errno == EINTR ? 0 : -1;
    x->s.frames_in++;
    if (x->in.oversized) {
        x->s.frames_begun++;
        reject(x, PROTOCOL_REJECT_OVERSIZED, NULL);
        (void)transport_return_memory(); /* what ZeroMQ held of it goes back to the system */
        return 0;
    }
    protocol_header h;
    int decoded = 0;
    protocol_reject r = frame_check(x, &x->in, &h, &decoded);
    int fragment = decoded && (h.flags & PROTOCOL_FLAG_FRAGMENT);
    if (!fragment || h.fragment_first == 0)
        x->s.frames_begun++;
    if (r != PROTOCOL_OK) {
        /* The receiver's rule: a frame one of whose fragments fails is given up. */
        if (fragment && x->open.state != DISPATCH_OPEN_NONE && h.seq == x->open.f.frame.seq)
            open_end(x, "a fragment of it failed the checks", now);
        reject(x, r, NULL);
        return 0;
    }
    /* A frame's fragments come in order on one connection, and the open
     * frame (dispatch_open.c) follows one frame at a time: over several
     * front sockets the fragments of two frames could interleave. The
     * daemon refuses them likewise with input.io_threads > 1. */
    if (fragment && x->fronts.count > 1) {
        char detail[160];
        snprintf(detail, sizeof detail, "a fragment (seq %llu, matrix %u): fragmented frames need one front endpoint "
                 "(--front lists %d)", (unsigned long long)h.seq, h.fragment_first, x->fronts.count);
        reject(x, PROTOCOL_REJECT_CONFIG, detail);
        return 0;
    }
    int ends_open = 0;
    dispatch_step step = dispatch_open_step(&x->open, &h, &ends_open);
    if (ends_open)
        open_end(x, step == DISPATCH_STEP_STRAY ? "a fragment of it came out of place" : "a new frame began", now);
    switch (step) {
    case DISPATCH_STEP_WHOLE:
    case DISPATCH_STEP_START:
        return hold(x, &h, step == DISPATCH_STEP_START, now);
    case DISPATCH_STEP_CONTINUE:
    case DISPATCH_STEP_ORPHANED:
        return fragment_follow(x, &h, now);
    case DISPATCH_STEP_STRAY:
        break;
    }
    reject(x, PROTOCOL_REJECT_INCOMPLETE, NULL);
    return 0;
}

/* Reads every waiting control message from the back end. -1 on a socket failure. */
static int back_receive(dispatcher *x, uint64_t now)
{
    cli_message m = {0};
    int rc = 0;
    for (;;) {
        int events = 0;
        size_t size = sizeof events;
        if (zmq_getsockopt(x->back, ZMQ_EVENTS, &events, &size) != 0) {
            rc = errno == EINTR ? 0 : -1;
            break;
        }
        if (!(events & ZMQ_POLLIN))
            break;
        if (cli_message_receive_bounded(x->back, &m, 3, CONTROL_MESSAGE_MAX) != 0) {
            rc = errno == EINTR ? 0 : -1;
            break;
        }
        (void)dispatch_daemons_receive(&x->t, x->back, &m, now);
        cli_message_release(&m);
    }
    cli_message_free(&m);
    return rc;
}

/* The metrics: one JSON line on stderr when line, and the --json and
 * --prometheus files; a file that cannot be written is reported, not fatal. */
static void report(dispatcher *x, int line)
{
    double now = cli_monotonic_s();
    x->s.queued = x->q.messages;
    x->s.queued_frames = x->q.count;
    x->s.curve = cli_curve_server_on(&x->front_curve);
    cli_curve_server_counts(&x->front_curve, x->s.auth_rejected[DISPATCH_SIDE_FRONT]);
    cli_curve_server_counts(&x->back_curve, x->s.auth_rejected[DISPATCH_SIDE_BACK]);
    x->s.fragmented.in_progress = x->open.state == DISPATCH_OPEN_ROUTED;
    for (size_t i = 0; i < x->q.count; i++)
        x->s.fragmented.in_progress += (uint64_t)x->q.f[(x->q.head + i) % x->q.cap].fragmented;
    if (line) {
        static char text[64 * 1024];
        if (dispatch_report_json(&x->s, &x->t, now, text, sizeof text) <= sizeof text)
            fprintf(stderr, "eigstream-dispatch: %s\n", text);
    }
    if (x->o.json != NULL && dispatch_report_json_file(&x->s, &x->t, now, x->o.json) != 0)
        fprintf(stderr, "eigstream-dispatch: cannot write %s: %s\n", x->o.json, strerror(errno));
    if (x->o.prometheus != NULL && dispatch_report_prometheus_file(&x->s, &x->t, now, x->o.prometheus) != 0)
        fprintf(stderr, "eigstream-dispatch: cannot write %s: %s\n", x->o.prometheus, strerror(errno));
}

/* One end's context, with io_threads I/O threads (set before the first
 * socket starts them), and its CURVE handler when its files are set
 * (cli_curve_server.h: one allow-list per context, so each end has its
 * own); -1 on a ZeroMQ error (zmq_errno says which), -2 on a CURVE one
 * (reported here). */
static int end_open(void **ctx, int io_threads, cli_curve_server *curve, const cli_curve_server_files *files)
{
    char err[1024];
    *ctx = zmq_ctx_new();
    if (*ctx == NULL || zmq_ctx_set(*ctx, ZMQ_IO_THREADS, io_threads) != 0)
        return -1;
    if (cli_curve_server_open(curve, *ctx, files, err, sizeof err) != 0) {
        fprintf(stderr, "eigstream-dispatch: %s\n", err);
        return -2;
    }
    return 0;
}

/* A socket of type in ctx, a CURVE server under curve's handler when CURVE
 * is on (role names it in the log; its handshake monitor feeds watch when
 * not NULL); -1 or -2 as end_open. */
static int end_socket(void *ctx, void **sock, int type, cli_curve_server *curve, cli_peer *watch,
                      const char *role)
{
    char err[1024];
    *sock = zmq_socket(ctx, type);
    if (*sock == NULL)
        return -1;
    if (cli_curve_server_secure(curve, *sock, role, watch, err, sizeof err) != 0) {
        fprintf(stderr, "eigstream-dispatch: %s\n", err);
        return -2;
    }
    return 0;
}

/* Starts curve's handler, after its end's last socket; 0 or -2 (reported). */
static int end_start(cli_curve_server *curve)
{
    char err[1024];
    if (cli_curve_server_start(curve, err, sizeof err) != 0) {
        fprintf(stderr, "eigstream-dispatch: %s\n", err);
        return -2;
    }
    return 0;
}

/* The front end: a context with an I/O thread per --front endpoint and a
 * PULL socket per endpoint, socket k served by I/O thread k (ZMQ_AFFINITY),
 * so that each connection's bytes are moved by a thread of their own. All
 * have the same options and the same CURVE allow-list. Not yet attached.
 * 0, -1 or -2 as end_open. */
static int fronts_open(dispatcher *x)
{
    int linger = 0, hwm = x->o.front_hwm;
    int64_t max_message = x->o.max_bytes + PROTOCOL_HEADER_BYTES;
    const cli_curve_server_files files = {x->o.curve_secret_key, "--curve-secret-key", x->o.front_curve_allow,
                                          "--front-curve-allow"};
    int rc = end_open(&x->ctx, x->fronts.count, &x->front_curve, &files);
    for (int k = 0; rc == 0 && k < x->fronts.count; k++) {
        uint64_t affinity = (uint64_t)1 << k;
        rc = end_socket(x->ctx, &x->front[k], ZMQ_PULL, &x->front_curve, NULL, "front");
        if (rc == 0 && (zmq_setsockopt(x->front[k], ZMQ_AFFINITY, &affinity, sizeof affinity) != 0 ||
                        zmq_setsockopt(x->front[k], ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 ||
                        zmq_setsockopt(x->front[k], ZMQ_MAXMSGSIZE, &max_message, sizeof max_message) != 0 ||
                        zmq_setsockopt(x->front[k], ZMQ_LINGER, &linger, sizeof linger) != 0))
            rc = -1;
    }
    return rc == 0 ? end_start(&x->front_curve) : rc;
}

/* The back end: its context and ROUTER, not yet attached; 0, -1 or -2 as
 * end_open. */
static int back_open(dispatcher *x)
{
    int one = 1, hwm = 100000, linger = 1000;
    int64_t max_control = CONTROL_PART_MAX;
    const cli_curve_server_files files = {x->o.curve_secret_key, "--curve-secret-key", x->o.back_curve_allow,
                                          "--back-curve-allow"};
    int rc = end_open(&x->back_ctx, x->o.back_io_threads, &x->back_curve, &files);
    /* the daemons' connections are watched for the drain at exit; under
     * CURVE through the handshake counter's monitor (a socket has one) */
    if (rc == 0 && cli_curve_server_on(&x->back_curve) && connection_watch_create_fed(&x->back_watch) != 0) {
        fprintf(stderr, "eigstream-dispatch: back: out of memory\n");
        return -2;
    }
    if (rc == 0)
        rc = end_socket(x->back_ctx, &x->back, ZMQ_ROUTER, &x->back_curve, x->back_watch, "back");
    if (rc == 0 && x->back_watch == NULL && cli_peer_create(x->back_ctx, x->back, &x->back_watch) != 0)
        rc = -1;
    if (rc == 0)
        rc = end_start(&x->back_curve);
    if (rc != 0)
        return rc;
    if (cli_curve_server_on(&x->back_curve))
        max_control = CLI_CURVE_HANDSHAKE_BYTES;
    /* ROUTER_MANDATORY: a send to a daemon whose connection is gone fails
     * (EHOSTUNREACH) instead of vanishing, so the frame goes elsewhere.
     * ROUTER_HANDOVER: a daemon reconnecting under its name takes it over.
     * The back end's HWM is large: credit, not the HWM, bounds what a
     * daemon is sent. */
    if (zmq_setsockopt(x->back, ZMQ_ROUTER_MANDATORY, &one, sizeof one) != 0 ||
        zmq_setsockopt(x->back, ZMQ_ROUTER_HANDOVER, &one, sizeof one) != 0 ||
        zmq_setsockopt(x->back, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(x->back, ZMQ_MAXMSGSIZE, &max_control, sizeof max_control) != 0 ||
        zmq_setsockopt(x->back, ZMQ_LINGER, &linger, sizeof linger) != 0)
        return -1;
    return 0;
}

/* Creates, configures and attaches every socket: front socket k to the
 * k-th --front endpoint, the back end to --back. 0; -1 on a ZeroMQ error
 * (zmq_errno says which); -2 when an endpoint cannot be bound or connected
 * or a CURVE file is refused (reported here, naming it). */
static int sockets_open(dispatcher *x)
{
    int rc = fronts_open(x);
    if (rc == 0)
        rc = back_open(x);
    if (rc != 0)
        return rc;
    for (int k = 0; k < x->fronts.count; k++)
        if (cli_socket_attach(x->front[k], x->fronts.entry[k], !x->o.front_connect) != 0) {
            fprintf(stderr, "eigstream-dispatch: front end %s: %s\n", x->fronts.entry[k], zmq_strerror(zmq_errno()));
            return -2;
        }
    if (cli_socket_attach(x->back, x->o.back, 1) != 0) {
        fprintf(stderr, "eigstream-dispatch: back end %s: %s\n", x->o.back, zmq_strerror(zmq_errno()));
        return -2;
    }
    return 0;
}

/* Reads up to FRONT_BATCH messages from the front sockets that poll found
 * readable (items[k] is socket k), one from each in turn, starting at
 * x->front_next: a busy socket cannot starve the others, and the next turn
 * starts after the last socket read. Each frame is offered to the daemons
 * at once: it waits in the queue only while no one has credit. Stops when
 * the queue is full under --overflow block. -1 on a socket failure. */
static int fronts_read(dispatcher *x, const zmq_pollitem_t *items, uint64_t now)
{
    size_t count = (size_t)x->fronts.count, readable = 0;
    int ready[DISPATCH_FRONTS_MAX];
    for (size_t k = 0; k < count; k++)
        readable += (size_t)(ready[k] = (items[k].revents & ZMQ_POLLIN) != 0);
    for (int budget = FRONT_BATCH; budget > 0 && readable > 0;) {
        if (x->o.overflow_block && x->q.count == x->q.cap)
            break;
        size_t k = x->front_next;
        x->front_next = (k + 1) % count;
        if (!ready[k])
            continue;
        int events = 0;
        size_t size = sizeof events;
        if (zmq_getsockopt(x->front[k], ZMQ_EVENTS, &events, &size) != 0 || !(events & ZMQ_POLLIN)) {
            ready[k] = 0; /* drained since the poll */
            readable--;
            continue;
        }
        if (front_receive(x, x->front[k], now) != 0)
            return -1;
        dispatch_queued(x, now);
        budget--;
    }
    return 0;
}

/* The loop; 0 on a stop request or --frames, -1 on a socket failure. */
static int run(dispatcher *x)
{
    double next_report = cli_monotonic_s() + x->o.stats_s;
    zmq_pollitem_t items[1 + DISPATCH_FRONTS_MAX] = {{.socket = x->back, .events = ZMQ_POLLIN}};
    int item_count = 1 + x->fronts.count;
    while (!cli_stop_requested) {
        int front_open = x->q.count < x->q.cap || !x->o.overflow_block;
        for (int k = 0; k < x->fronts.count; k++)
            items[1 + k] = (zmq_pollitem_t){.socket = x->front[k], .events = front_open ? ZMQ_POLLIN : 0};
        uint64_t before = (uint64_t)(cli_monotonic_s() * 1e9);
        if (zmq_poll(items, item_count, POLL_MS) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        uint64_t now = (uint64_t)(cli_monotonic_s() * 1e9);
        if (!front_open)
            x->s.blocked_ns += now - before;
        /* Control messages first: they bring credit. */
        if (back_receive(x, now) != 0)
            return -1;
        dispatch_queued(x, now);
        if (fronts_read(x, items + 1, now) != 0)
            return -1;
        /* The fragment timeout runs only while the source is read: under
         * --overflow block its next fragment may be waiting on our side. */
        if (x->open.state != DISPATCH_OPEN_NONE && !front_open)
            x->open.last_ns = now;
        else if (x->open.state != DISPATCH_OPEN_NONE &&
                 now - x->open.last_ns > (uint64_t)x->o.fragment_timeout_ms * 1000000u)
            open_end(x, "no next fragment within --fragment-timeout-ms", now);
        dispatch_daemons_tick(&x->t, x->back, now);
        if (x->o.stats_s > 0 && cli_monotonic_s() >= next_report) {
            report(x, 1);
            next_report += x->o.stats_s;
        }
        if (x->o.frames > 0 && x->s.frames_begun >= x->o.frames && x->q.count == 0 &&
            x->open.state == DISPATCH_OPEN_NONE)
            break;
    }
    return 0;
}

/* At exit: frames still held are counted as dropped (shutdown; the open
 * fragmented frame among them when held), a frame still being routed as
 * abandoned, and every live daemon is told GOODBYE so that it offers READY
 * to the next dispatcher. */
static void shut_down(dispatcher *x)
{
    uint64_t now = (uint64_t)(cli_monotonic_s() * 1e9);
    if (x->open.state == DISPATCH_OPEN_HELD)
        x->open.state = DISPATCH_OPEN_NONE; /* dropped with the queue just below */
    open_end(x, "the dispatcher stopped", now);
    while (x->q.count > 0)
        held_drop_oldest(x, DISPATCH_DROP_SHUTDOWN);
    for (size_t i = 0; i < x->t.count; i++)
        if (x->t.d[i].state == DISPATCH_ALIVE)
            (void)dispatch_daemons_send_control(x->back, &x->t.d[i], DISPATCH_CONTROL_GOODBYE, now);
}

/* Exit 0 after SIGINT/SIGTERM or --frames, 1 on a socket or file error, 2
 * on a bad option. */
int main(int argc, char **argv)
{
    dispatcher x = {.o = {.front = "tcp://*:5550", .back = "tcp://*:5560", .queue = 8, .liveness = 3,
                          .front_hwm = 4, .back_io_threads = 4, .max_bytes = 128ll << 20, .stats_s = 5.0, .overflow_block = 0,
                          .fragment_timeout_ms = 1000, .max_credit = 64, .redispatch_ms = 1000,
                          .redispatch_keep = 16}};
    int status = options_parse(argc, argv, &x.o, &x.fronts);
    if (status >= 0)
        return status;
    (void)transport_tune_allocator(); /* frames of tens of MB; best effort (transport_memory.h) */
    cli_stop_on_signals();
    x.t.liveness = (uint64_t)x.o.liveness;
    x.t.max_credit = (uint64_t)x.o.max_credit;
    x.s.started_s = cli_monotonic_s();
    x.part_bytes = malloc(PARTS_MAX * sizeof *x.part_bytes);
    if (x.part_bytes == NULL || dispatch_held_init(&x.q, (size_t)x.o.queue) != 0 ||
        dispatch_kept_init(&x.redo, 8 * (size_t)x.o.redispatch_keep) != 0)
        return cli_fatal("eigstream-dispatch", "out of memory");
    for (size_t i = 0; i < DISPATCH_DAEMONS_MAX; i++)
        if (dispatch_kept_init(&x.kept[i], (size_t)x.o.redispatch_keep) != 0)
            return cli_fatal("eigstream-dispatch", "out of memory");
    if (x.o.seq_log != NULL && (x.seq_log = fopen(x.o.seq_log, "w")) == NULL)
        return cli_fatal("eigstream-dispatch", "cannot open %s: %s", x.o.seq_log, strerror(errno));
    if (x.seq_log != NULL)
        setvbuf(x.seq_log, NULL, _IOLBF, 0); /* whole lines, readable while it runs */
    int rc = sockets_open(&x);
    if (rc == -1)
        fprintf(stderr, "eigstream-dispatch: zmq: %s\n", zmq_strerror(zmq_errno()));
    if (rc == 0) {
        fprintf(stderr, "eigstream-dispatch: front %s (%s), back %s, queue %d (%s), CURVE %s\n", x.o.front,
                x.o.front_connect ? "connect" : "bind", x.o.back, x.o.queue, overflow_names[x.o.overflow_block],
                cli_curve_server_on(&x.front_curve) ? "on both ends" : "off");
        rc = run(&x);
        if (rc != 0)
            fprintf(stderr, "eigstream-dispatch: socket failure: %s\n", zmq_strerror(zmq_errno()));
        shut_down(&x);
        /* the back end's linger, 1 s, for the daemons to read the frames and
         * GOODBYEs sent them: an IPC receiver at its HWM loses what it has
         * not read when the sender closes (connection_watch.h says why) */
        if (connection_watch_drain(x.back_watch, (uint64_t)((cli_monotonic_s() + 1.0) * 1e9), NULL) != 0)
            fprintf(stderr, "eigstream-dispatch: %ld bytes sent to the daemons still unread after 1 s: the "
                            "last frames may not be delivered\n",
                    cli_peer_unread(x.back_watch));
        report(&x, 1);
    }
    if (x.seq_log != NULL && fclose(x.seq_log) != 0)
        rc = -1;
    dispatch_held_free(&x.q);
    x.s.redispatch_expired += x.redo.count; /* still waiting at exit */
    dispatch_kept_free(&x.redo);
    for (size_t i = 0; i < DISPATCH_DAEMONS_MAX; i++)
        dispatch_kept_free(&x.kept[i]);
    cli_message_free(&x.in);
    free(x.part_bytes);
    for (int k = 0; k < x.fronts.count; k++)
        if (x.front[k] != NULL)
            zmq_close(x.front[k]);
    /* the back end's watch: with a monitor of its own, before its socket
     * closes; fed by the ZAP thread (CURVE), after that thread has stopped */
    if (!cli_curve_server_on(&x.back_curve))
        cli_peer_destroy(&x.back_watch);
    if (x.back != NULL)
        zmq_close(x.back);
    cli_curve_server_close(&x.front_curve); /* the handlers' sockets, before their contexts end */
    cli_curve_server_close(&x.back_curve);
    cli_peer_destroy(&x.back_watch);
    if (x.ctx != NULL)
        zmq_ctx_term(x.ctx);
    if (x.back_ctx != NULL)
        zmq_ctx_term(x.back_ctx);
    return rc == 0 ? 0 : 1;
}
