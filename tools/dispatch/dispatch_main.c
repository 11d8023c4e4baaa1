/*
 * dispatch_main.c - eigstream-dispatch: options, sockets, the held queue and
 * the loop (dispatch.h says what the tool is; docs/scaleout.md how to run it).
 *
 * One thread, one zmq_poll loop: control messages from daemons first (they
 * bring credit), then frames from the source into a bounded queue, then as
 * many queued frames as daemons have credit for, then heartbeats and
 * liveness. A frame is handed on as the parts it came in (zero-copy: ZeroMQ
 * moves the message buffers), never decoded beyond its header.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "cli_common.h"
#include "cli_options.h"
#include "dispatch.h"
#include "transport_memory.h"

#define PARTS_MAX (1 + 100000) /* header + one part per matrix at the sim's largest */
#define POLL_MS 20

typedef struct dispatch_options {
    const char *front, *back, *json, *prometheus, *seq_log;
    int front_connect, overflow_block, queue, liveness, front_hwm;
    int64_t max_bytes;
    uint64_t frames;
    double stats_s;
} dispatch_options;

/* The frames held for want of credit: a ring of whole messages. */
typedef struct held {
    cli_message *m;
    uint64_t *seq;
    size_t cap, head, count;
} held;

typedef struct dispatcher {
    dispatch_options o;
    void *ctx, *front, *back;
    held q;
    dispatch_daemons t;
    dispatch_stats s;
    size_t *part_bytes; /* PARTS_MAX sizes, for the header checks */
    FILE *seq_log;
} dispatcher;

static const char *const overflow_names[] = {"drop_oldest", "block", NULL};

/* The command line into *o (defaults already there): -1 to go on, else the
 * exit status (0 after --help, 2 on a bad option, reported). */
static int options_parse(int argc, char **argv, dispatch_options *o)
{
    const cli_option table[] = {
        CLI_STRING("front", 0, &o->front, "E", "endpoint the source PUSHes covariance frames to (PULL)"),
        CLI_FLAG("front-connect", 0, &o->front_connect, "connect the front end to a binding source instead of binding"),
        CLI_STRING("back", 0, &o->back, "E", "endpoint daemons connect to (ROUTER, binds)"),
        CLI_INT("queue", 0, &o->queue, 1, 100000, "N", "frames held while no daemon has credit"),
        CLI_CHOICE("overflow", 0, &o->overflow_block, overflow_names, NULL,
                   "queue full: drop the oldest (counted queue_full) or stop reading the source"),
        CLI_INT("front-hwm", 0, &o->front_hwm, 1, 1000000, "H", "front end receive high-water mark (frames)"),
        CLI_INT("max-bytes", 0, &o->max_bytes, 1024, INT64_MAX, "B", "largest frame payload accepted"),
        CLI_INT("liveness", 0, &o->liveness, 1, 100, "L", "heartbeat intervals of silence before a daemon is dead"),
        CLI_DOUBLE("stats-s", 0, &o->stats_s, 0.0, 3600.0, "S", "seconds between metrics lines on stderr, 0 = none"),
        CLI_STRING("json", 0, &o->json, "FILE", "metrics JSON, rewritten with each line and at exit"),
        CLI_STRING("prometheus", 0, &o->prometheus, "FILE", "Prometheus text file, rewritten likewise"),
        CLI_STRING("seq-log", 0, &o->seq_log, "FILE", "one line per dispatched frame: seq daemon"),
        CLI_INT("frames", 0, &o->frames, 0, UINT64_MAX, "N",
                "exit once N frames came in and left, 0 = run until SIGINT/SIGTERM"),
        CLI_END};
    const cli_spec spec = {
        .prog = "eigstream-dispatch", .synopsis = "[options]", .options = table,
        .description = "Spreads one source's covariance frames over the daemons that ask for them with credit "
                       "(input.pattern = dispatch); a dead daemon gets no more. See docs/scaleout.md.",
        .epilogue = "Exit: 0 after SIGINT/SIGTERM or --frames, 1 on a socket or file error, 2 on a bad option."};
    cli_args args;
    return cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
}

/* An empty ring of cap messages; 0, or -1 when out of memory (held_free
 * still frees what was allocated). */
static int held_init(held *q, size_t cap)
{
    q->m = calloc(cap, sizeof *q->m);
    q->seq = calloc(cap, sizeof *q->seq);
    q->cap = cap;
    return q->m != NULL && q->seq != NULL ? 0 : -1;
}

/* Frees the ring and every part still in it. */
static void held_free(held *q)
{
    for (size_t i = 0; q->m != NULL && i < q->cap; i++)
        cli_message_free(&q->m[i]);
    free(q->m);
    free(q->seq);
    memset(q, 0, sizeof *q);
}

/* Frees the oldest held frame (its parts) and counts it under why. */
static void held_drop_oldest(dispatcher *x, dispatch_drop why)
{
    cli_message_release(&x->q.m[x->q.head]);
    x->q.head = (x->q.head + 1) % x->q.cap;
    x->q.count--;
    x->s.dropped[why]++;
    x->s.dropped_total++;
}

/* The dispatcher's own minimal checks of a covariance frame: the header
 * (protocol_header_decode_kind) and the part sizes it implies; the CRC and
 * the payload stay the daemon's. */
static protocol_reject frame_check(dispatcher *x, const cli_message *m, uint64_t *seq)
{
    protocol_header h;
    if (m->count == 0)
        return PROTOCOL_REJECT_PARTS;
    protocol_reject r = protocol_header_decode_kind(zmq_msg_data(&m->part[0]), zmq_msg_size(&m->part[0]),
                                                    PROTOCOL_KIND_COVARIANCE, &h);
    if (r != PROTOCOL_OK)
        return r;
    if (m->extra > 0)
        return PROTOCOL_REJECT_PARTS;
    for (size_t i = 1; i < m->count; i++)
        x->part_bytes[i - 1] = zmq_msg_size(&m->part[i]);
    *seq = h.seq;
    return protocol_covariance_check_sizes(&h, x->part_bytes, m->count - 1, (size_t)x->o.max_bytes);
}

/* Takes one message from the front end: rejected (counted, freed) or held,
 * evicting the oldest when the queue is full. -1 on a socket failure. */
static int front_receive(dispatcher *x)
{
    if (x->q.count == x->q.cap)
        held_drop_oldest(x, DISPATCH_DROP_QUEUE_FULL); /* only reached under drop_oldest */
    size_t tail = (x->q.head + x->q.count) % x->q.cap;
    cli_message *m = &x->q.m[tail];
    if (cli_message_receive(x->front, m, PARTS_MAX) != 0)
        return errno == EINTR ? 0 : -1;
    x->s.frames_in++;
    uint64_t seq = 0;
    protocol_reject r = frame_check(x, m, &seq);
    if (r != PROTOCOL_OK) {
        if (x->s.rejected[r]++ == 0)
            fprintf(stderr, "eigstream-dispatch: rejected a frame: %s (counted; first of its kind)\n",
                    protocol_reject_name(r));
        x->s.rejected_total++;
        cli_message_release(m);
        return 0;
    }
    x->q.seq[tail] = seq;
    x->q.count++;
    return 0;
}

/* Sends the oldest held frame to d: its routing id, then the parts as they
 * came. 0 when sent; -1 with errno when ZeroMQ refused the first part (the
 * frame stays held). */
static int send_frame(dispatcher *x, dispatch_daemon *d)
{
    cli_message *m = &x->q.m[x->q.head];
    if (zmq_send(x->back, d->id, d->id_bytes, ZMQ_SNDMORE | ZMQ_DONTWAIT) != (int)d->id_bytes)
        return -1;
    /* Past the routing id the message is the daemon's: its parts follow. */
    for (size_t i = 0; i < m->count; i++)
        while (zmq_msg_send(&m->part[i], x->back, i + 1 < m->count ? ZMQ_SNDMORE : 0) < 0 && errno == EINTR)
            ;
    return 0;
}

/* Hands held frames to the daemons with the most credit until either runs out. */
static void dispatch_held(dispatcher *x, uint64_t now)
{
    dispatch_daemon *d;
    while (x->q.count > 0 && (d = dispatch_daemons_pick(&x->t)) != NULL) {
        if (send_frame(x, d) != 0) {
            /* EHOSTUNREACH: its connection is gone; EAGAIN: its pipe is full
             * although it gave credit. Either way it gets nothing more until
             * it says READY again; the frame goes to another daemon. */
            dispatch_daemons_bury(&x->t, d, DISPATCH_DEATH_UNREACHABLE);
            x->s.resent++;
            continue;
        }
        uint64_t seq = x->q.seq[x->q.head];
        if (d->dispatched++ == 0)
            d->first_seq = seq;
        d->last_seq = seq;
        d->credit--;
        d->last_sent_ns = now;
        d->last_turn = ++x->t.turns;
        x->s.dispatched++;
        if (x->seq_log != NULL)
            fprintf(x->seq_log, "%llu %s\n", (unsigned long long)seq, d->name);
        cli_message_release(&x->q.m[x->q.head]);
        x->q.head = (x->q.head + 1) % x->q.cap;
        x->q.count--;
    }
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
        if (cli_message_receive(x->back, &m, 3) != 0) {
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
    x->s.queued = x->q.count;
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

/* Creates, configures and attaches both sockets: 0; -1 on a ZeroMQ error
 * (zmq_errno says which); -2 when an endpoint cannot be bound or connected
 * (reported here, naming it). */
static int sockets_open(dispatcher *x)
{
    int one = 1, linger = 0, hwm = x->o.front_hwm, back_hwm = 100000;
    int64_t max_message = x->o.max_bytes + PROTOCOL_HEADER_BYTES;
    x->ctx = zmq_ctx_new();
    if (x->ctx == NULL)
        return -1;
    x->front = zmq_socket(x->ctx, ZMQ_PULL);
    x->back = zmq_socket(x->ctx, ZMQ_ROUTER);
    if (x->front == NULL || x->back == NULL)
        return -1;
    /* ROUTER_MANDATORY: a send to a daemon whose connection is gone fails
     * (EHOSTUNREACH) instead of vanishing, so the frame goes elsewhere.
     * ROUTER_HANDOVER: a daemon reconnecting under its name takes it over.
     * The back end's HWM is large: credit, not the HWM, bounds what a
     * daemon is sent. */
    if (zmq_setsockopt(x->front, ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(x->front, ZMQ_MAXMSGSIZE, &max_message, sizeof max_message) != 0 ||
        zmq_setsockopt(x->front, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(x->back, ZMQ_ROUTER_MANDATORY, &one, sizeof one) != 0 ||
        zmq_setsockopt(x->back, ZMQ_ROUTER_HANDOVER, &one, sizeof one) != 0 ||
        zmq_setsockopt(x->back, ZMQ_SNDHWM, &back_hwm, sizeof back_hwm) != 0)
        return -1;
    linger = 1000;
    if (zmq_setsockopt(x->back, ZMQ_LINGER, &linger, sizeof linger) != 0)
        return -1;
    if (cli_socket_attach(x->front, x->o.front, !x->o.front_connect) != 0) {
        fprintf(stderr, "eigstream-dispatch: front end %s: %s\n", x->o.front, zmq_strerror(zmq_errno()));
        return -2;
    }
    if (cli_socket_attach(x->back, x->o.back, 1) != 0) {
        fprintf(stderr, "eigstream-dispatch: back end %s: %s\n", x->o.back, zmq_strerror(zmq_errno()));
        return -2;
    }
    return 0;
}

/* The loop; 0 on a stop request or --frames, -1 on a socket failure. */
static int run(dispatcher *x)
{
    double next_report = cli_monotonic_s() + x->o.stats_s;
    while (!cli_stop_requested) {
        int front_open = x->q.count < x->q.cap || !x->o.overflow_block;
        zmq_pollitem_t items[2] = {{.socket = x->back, .events = ZMQ_POLLIN},
                                   {.socket = x->front, .events = front_open ? ZMQ_POLLIN : 0}};
        uint64_t before = (uint64_t)(cli_monotonic_s() * 1e9);
        if (zmq_poll(items, 2, POLL_MS) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        uint64_t now = (uint64_t)(cli_monotonic_s() * 1e9);
        if (!front_open)
            x->s.blocked_ns += now - before;
        if (back_receive(x, now) != 0)
            return -1;
        dispatch_held(x, now);
        /* One frame at a time from the source, each offered to the daemons
         * at once: a frame waits in the queue only while no one has credit. */
        for (int i = 0; i < 64 && (items[1].revents & ZMQ_POLLIN); i++) {
            if (x->o.overflow_block && x->q.count == x->q.cap)
                break;
            int events = 0;
            size_t size = sizeof events;
            if (zmq_getsockopt(x->front, ZMQ_EVENTS, &events, &size) != 0 || !(events & ZMQ_POLLIN))
                break;
            if (front_receive(x) != 0)
                return -1;
            dispatch_held(x, now);
        }
        dispatch_daemons_tick(&x->t, x->back, now);
        if (x->o.stats_s > 0 && cli_monotonic_s() >= next_report) {
            report(x, 1);
            next_report += x->o.stats_s;
        }
        if (x->o.frames > 0 && x->s.frames_in >= x->o.frames && x->q.count == 0)
            break;
    }
    return 0;
}

/* At exit: frames still held are counted as dropped (shutdown), and every
 * live daemon is told GOODBYE so that it offers READY to the next dispatcher. */
static void shut_down(dispatcher *x)
{
    uint64_t now = (uint64_t)(cli_monotonic_s() * 1e9);
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
                          .front_hwm = 4, .max_bytes = 128ll << 20, .stats_s = 5.0, .overflow_block = 0}};
    int status = options_parse(argc, argv, &x.o);
    if (status >= 0)
        return status;
    (void)transport_tune_allocator(); /* frames of tens of MB; best effort (transport_memory.h) */
    cli_stop_on_signals();
    x.t.liveness = (uint64_t)x.o.liveness;
    x.s.started_s = cli_monotonic_s();
    x.part_bytes = malloc(PARTS_MAX * sizeof *x.part_bytes);
    if (x.part_bytes == NULL || held_init(&x.q, (size_t)x.o.queue) != 0)
        return cli_fatal("eigstream-dispatch", "out of memory");
    if (x.o.seq_log != NULL && (x.seq_log = fopen(x.o.seq_log, "w")) == NULL)
        return cli_fatal("eigstream-dispatch", "cannot open %s: %s", x.o.seq_log, strerror(errno));
    if (x.seq_log != NULL)
        setvbuf(x.seq_log, NULL, _IOLBF, 0); /* whole lines, readable while it runs */
    int rc = sockets_open(&x);
    if (rc == -1)
        fprintf(stderr, "eigstream-dispatch: zmq: %s\n", zmq_strerror(zmq_errno()));
    if (rc == 0) {
        fprintf(stderr, "eigstream-dispatch: front %s (%s), back %s, queue %d (%s)\n", x.o.front,
                x.o.front_connect ? "connect" : "bind", x.o.back, x.o.queue, overflow_names[x.o.overflow_block]);
        rc = run(&x);
        if (rc != 0)
            fprintf(stderr, "eigstream-dispatch: socket failure: %s\n", zmq_strerror(zmq_errno()));
        shut_down(&x);
        report(&x, 1);
    }
    if (x.seq_log != NULL && fclose(x.seq_log) != 0)
        rc = -1;
    held_free(&x.q);
    free(x.part_bytes);
    if (x.front != NULL)
        zmq_close(x.front);
    if (x.back != NULL)
        zmq_close(x.back);
    if (x.ctx != NULL)
        zmq_ctx_term(x.ctx);
    return rc == 0 ? 0 : 1;
}
