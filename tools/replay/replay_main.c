/*
 * replay_main.c - eigstream-replay: plays a recording (pipeline/recording/recording.h)
 * over ZeroMQ, or summarizes it (--info) or exports it (--to-npy).
 *
 * Each frame goes out with the part structure it was received with
 * (recording_reader_part_sizes): a copied 64-byte header, then the payload
 * parts zero-copy from a read buffer. REPLAY_BUFFERS buffers rotate; one is
 * read into again only when ZeroMQ has released every part sent from it, and
 * all are freed after the context is terminated, so a buffer outlives every
 * send from it.
 *
 * By default the header gets a fresh seq (0, 1, 2, ... per replay) and a
 * fresh source timestamp (CLOCK_REALTIME at send), so that a receiver's gap
 * and latency metrics mean something; nothing else is recomputed (the CRC
 * covers only the payload). The recorded seq and timestamp stay in the
 * recording's index (--info, the meta's eigstream index; --verbose prints
 * the mapping per frame). --keep-seq and --keep-timestamps send them unchanged.
 *
 * Pacing: the schedule is kept against one CLOCK_MONOTONIC start time and
 * slept to with clock_nanosleep(TIMER_ABSTIME), so errors do not accumulate.
 *   original  the recorded inter-frame times (received_ns, else timestamp_ns),
 *             scaled by 1/--speed; a loop starts one mean interval after the
 *             previous loop's last frame
 *   --rate R  frame j at j/R s
 *   --max     no schedule: blocking sends (PUSH: as fast as the receiver
 *             takes them, with backpressure and no loss)
 *
 * Exit status: 0 played (or interrupted by SIGINT/SIGTERM); 1 a recording,
 * socket or send error, or --info found a CRC failure; 2 usage.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "cli_common.h"
#include "cli_options.h"
#include "cli_peer.h"
#include "protocol.h"
#include "replay.h"

#define REPLAY_BUFFERS 3

typedef enum replay_pacing { REPLAY_ORIGINAL = 0, REPLAY_MAX, REPLAY_RATE } replay_pacing;

typedef struct replay_options {
    const char *name, *endpoint, *to_npy, *check; /* check: --check INPUTS */
    int pub, bind, timing, max, keep_seq, keep_timestamps, info, verbose, quiet, lossy;
    double speed, rate, start_time_s;
    uint64_t loop, start, count;
    uint32_t hwm;
    int linger_ms, wait_ms, connect_timeout_ms;
    replay_pacing pacing;
} replay_options;

/* A read buffer and the payload parts ZeroMQ still holds from it. */
typedef struct replay_buffer {
    uint8_t *data;
    atomic_long held;
} replay_buffer;

/* One replay: the frames [first, last) of the recording, looped. */
typedef struct replay {
    const replay_options *o;
    recording_reader *r;
    uint64_t first, last;
    double *offset_s;   /* per frame of the range: original-timing schedule offset */
    double loop_s;      /* original timing: one loop's length */
    replay_buffer buffer[REPLAY_BUFFERS];
    size_t buffer_bytes;
    size_t *part_bytes; /* RECORDING_PARTS_MAX entries */
    double *error_ms;   /* pacing error per frame sent */
    uint64_t sent, bytes;
    cli_peer *watch;    /* whether the socket has a receiver */
    int waited_loudly;  /* the backpressure line was printed */
} replay;

static const char *const replay_patterns[] = {"push", "pub", NULL};
static const char *const replay_timings[] = {"original", "max", NULL};

static const char replay_epilogue[] =
    "\nPacing: --timing original (the recorded inter-frame times) scaled by 1/--speed,\n"
    "--rate FPS, or --max (blocking sends: as fast as the receiver takes them).\n"
    "Lossless by default: covariance and IQ frames carry the LOSSLESS flag, so the daemon\n"
    "waits for room instead of dropping them (frame.overflow_policy), pushing back on\n"
    "the replay. --lossy sends without it; --pattern pub can always lose frames.\n"
    "No receiver within --connect-timeout-ms (at the start, or after losing it): exit 1.\n"
    "Frames get fresh seq 0, 1, ... and CLOCK_REALTIME timestamps unless --keep-seq,\n"
    "--keep-timestamps; the recorded ones stay in the recording (--info, --verbose).\n"
    "--to-npy OUT.npy: covariance -> complex (frames, count, n, n), packed storage\n"
    "expanded; eigenspace -> values (frames, count, n) real in OUT.npy and, when vectors\n"
    "are sent, OUT-vectors.npy (frames, count, n, k) with [..., i, c] = component i of\n"
    "vector c (eigenvalue first_index + c), when every matrix sends the same k.\n"
    "--check INPUTS: every eigenspace frame of NAME checked as the daemon checks one matrix\n"
    "a frame (LAPACK's residual and orthogonality ratios, threshold 60) against the covariance\n"
    "frame of its seq in the recording INPUTS; the daemon must not have formed them.\n"
    "Exit status: 0 played (every frame written to the connection and read by the receiver),\n"
    "interrupted, exported, summarized or checked; 1 a recording, socket or send error, no\n"
    "receiver, frames still queued or unread after --linger-ms, --info found a CRC failure, or --check had a frame without its input;\n"
    "2 usage; 3 --check: a matrix failed, or the daemon flagged a frame CHECK_FAILED.\n";

/* Checks the combinations of options and sets o->pacing. 0, or 2 (named). */
static int resolve_options(replay_options *o)
{
    const char *why = NULL;
    int rate = o->rate > 0, max = o->max || o->timing == 1, speed = o->speed != 1.0;
    if (rate + max + speed > 1)
        why = "--rate, --max (--timing max) and --speed exclude each other";
    else if (o->start && o->start_time_s > 0)
        why = "--start and --start-time exclude each other";
    else if ((o->info != 0) + (o->to_npy != NULL) + (o->check != NULL) > 1)
        why = "--info, --to-npy and --check exclude each other";
    if (why != NULL)
        return cli_usage_error(REPLAY_PROG, "%s", why);
    o->pacing = max ? REPLAY_MAX : rate ? REPLAY_RATE : REPLAY_ORIGINAL;
    return 0;
}

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: 0 after --help, 2 after a bad argument (named on stderr). */
static int parse_options(int argc, char **argv, replay_options *o)
{
    *o = (replay_options){.endpoint = "tcp://127.0.0.1:5550", .speed = 1.0, .loop = 1, .hwm = 4,
                          .linger_ms = 5000, .connect_timeout_ms = 5000};
    const cli_option table[] = {
        CLI_SOCKET_OPTIONS(&o->endpoint, &o->pub, replay_patterns, "socket type", &o->bind),
        CLI_CHOICE("timing", 0, &o->timing, replay_timings, NULL, "pacing: recorded times, or as fast as taken"),
        CLI_DOUBLE("speed", 0, &o->speed, 1e-6, 1e6, "F", "original timing scaled by 1/F"),
        CLI_DOUBLE("rate", 0, &o->rate, 0.0, 1e7, "FPS", "fixed frames/s instead, 0 = off"),
        CLI_FLAG("max", 0, &o->max, "as fast as the receiver takes them (blocking sends)"),
        CLI_INT("loop", 0, &o->loop, 0, UINT64_MAX, "N", "play the range N times, 0 = forever"),
        CLI_INT("start", 0, &o->start, 0, UINT64_MAX, "FRAME", "first frame (index)"),
        CLI_DOUBLE("start-time", 0, &o->start_time_s, 0.0, 1e12, "S", "first frame at S s after the first"),
        CLI_INT("count", 0, &o->count, 0, UINT64_MAX, "N", "frames from the start, 0 = to the end"),
        CLI_FLAG("keep-seq", 0, &o->keep_seq, "send the recorded seq numbers"),
        CLI_FLAG("keep-timestamps", 0, &o->keep_timestamps, "send the recorded source timestamps"),
        CLI_INT("hwm", 0, &o->hwm, 1, 1000000, "H", "send high-water mark in frames"),
        CLI_INT("linger-ms", 0, &o->linger_ms, 0, 3600000, "L", "time to flush queued frames at exit"),
        CLI_INT("wait-ms", 0, &o->wait_ms, 0, 3600000, "W", "wait before the first frame (PUB subscribers)"),
        CLI_INT("connect-timeout-ms", 0, &o->connect_timeout_ms, 0, 3600000, "T",
                "give up (exit 1) with no receiver for T ms, 0 = wait forever"),
        CLI_FLAG("lossy", 0, &o->lossy, "no LOSSLESS flag: the receiver may drop frames when behind"),
        CLI_FLAG("info", 0, &o->info, "print the recording's summary and exit"),
        CLI_STRING("to-npy", 0, &o->to_npy, "OUT.npy", "export the frames to .npy and exit"),
        CLI_STRING("check", 0, &o->check, "INPUTS",
                   "self-check every eigenspace frame of NAME against the covariance frame of its seq in the "
                   "recording INPUTS (the daemon's check, every matrix), print the result and exit"),
        CLI_FLAG("verbose", 'v', &o->verbose, "print each frame's sent and recorded seq/timestamp"),
        CLI_FLAG("quiet", 'q', &o->quiet, "only the summary line"),
        CLI_END};
    const cli_spec spec = {.prog = REPLAY_PROG, .synopsis = "[options] NAME",
                           .description = "Plays the recording NAME over ZeroMQ, prints its summary (--info)\n"
                                          "or exports it to NumPy (--to-npy).\n",
                           .options = table, .positional_max = 1, .epilogue = replay_epilogue};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
    if (status >= 0)
        return status;
    if (args.positional_count != 1)
        return cli_usage_error(REPLAY_PROG, "give the recording NAME");
    o->name = args.positional[0];
    return resolve_options(o) == 0 ? -1 : 2;
}

/* Picks [first, last) from --start/--start-time and --count, and the
 * original-timing offsets. 0, or -1 named on stderr. */
static int replay_plan(replay *p)
{
    const replay_options *o = p->o;
    uint64_t frames = recording_reader_frames(p->r), first = o->start;
    if (frames == 0)
        return replay_fail("%s has no frames", o->name);
    uint64_t t0 = replay_frame_time_ns(recording_reader_frame(p->r, 0));
    while (o->start_time_s > 0 && first < frames &&
           (double)(replay_frame_time_ns(recording_reader_frame(p->r, first)) - t0) < o->start_time_s * 1e9)
        first++;
    if (first >= frames)
        return replay_fail("the start is past the last frame (%llu frames)",
                         (unsigned long long)frames);
    p->first = first;
    p->last = o->count && o->count < frames - first ? first + o->count : frames;
    p->offset_s = malloc((size_t)(p->last - p->first) * sizeof *p->offset_s);
    if (p->offset_s == NULL)
        return replay_fail("out of memory");
    uint64_t start_ns = replay_frame_time_ns(recording_reader_frame(p->r, first)), previous = start_ns;
    for (uint64_t i = first; i < p->last; i++) {
        uint64_t t = replay_frame_time_ns(recording_reader_frame(p->r, i));
        previous = t > previous ? t : previous; /* a clock step back never schedules backwards */
        p->offset_s[i - first] = (double)(previous - start_ns) / 1e9 / o->speed;
    }
    uint64_t m = p->last - p->first;
    double span = p->offset_s[m - 1];
    p->loop_s = m > 1 ? span + span / (double)(m - 1) : 0.0;
    return 0;
}

/* Seconds after the start at which send number j (over all loops) is due;
 * negative for --max (no schedule). */
static double replay_due_s(const replay *p, uint64_t j)
{
    uint64_t m = p->last - p->first;
    if (p->o->pacing == REPLAY_MAX)
        return -1.0;
    if (p->o->pacing == REPLAY_RATE)
        return (double)j / p->o->rate;
    return (double)(j / m) * p->loop_s + p->offset_s[j % m];
}

static void replay_buffer_release(void *data, void *hint)
{
    /* Called by ZeroMQ (an I/O thread) when it no longer needs a part. */
    (void)data;
    atomic_fetch_sub(&((replay_buffer *)hint)->held, 1);
}

/* Fails (-1, named on stderr) once the socket has had no receiver for
 * --connect-timeout-ms; 0 while one is there or the bound is not reached. */
static int replay_check_receiver(replay *p)
{
    const replay_options *o = p->o;
    double absent = cli_peer_absent_s(p->watch);
    if (o->connect_timeout_ms > 0 && absent * 1e3 >= o->connect_timeout_ms)
        return replay_fail("no receiver at %s for %.1f s (is the daemon running, its input.endpoint this "
                           "one?): giving up after %llu frames queued", o->endpoint, absent,
                           (unsigned long long)p->sent);
    return 0;
}

/* Prints once, unless quiet, that the receiver is holding the replay back. */
static void replay_note_backpressure(replay *p, double since)
{
    if (p->o->quiet || p->waited_loudly || cli_monotonic_s() - since < 10.0)
        return;
    fprintf(stderr, REPLAY_PROG ": the receiver at %s has taken nothing for 10 s (backpressure: it is busy "
                    "or stopped reading); still waiting, Ctrl-C stops\n", p->o->endpoint);
    p->waited_loudly = 1;
}

/* Waits until ZeroMQ holds no part of b: it has written every part sent
 * from b to the connection, or dropped them with a lost connection. Gives up
 * without a receiver (replay_check_receiver), on a signal, or at `deadline`
 * (CLOCK_MONOTONIC s; < 0: none). 0 released, 1 stopped or past the
 * deadline, -1 no receiver (named). */
static int replay_buffer_wait(replay *p, replay_buffer *b, double deadline)
{
    double since = cli_monotonic_s();
    while (atomic_load(&b->held) > 0) {
        if (deadline < 0 && cli_stop_requested)
            return 1;
        if (deadline >= 0 && cli_monotonic_s() >= deadline)
            return 1;
        if (deadline < 0 && (replay_check_receiver(p) != 0))
            return -1;
        replay_note_backpressure(p, since);
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* Waits until the socket takes a message (a receiver with room). 0, 1 on a
 * signal, -1 without a receiver for --connect-timeout-ms (named). */
static int replay_wait_writable(replay *p, void *sock)
{
    double since = cli_monotonic_s();
    for (;;) {
        zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLOUT};
        int ready = zmq_poll(&item, 1, 100);
        if (ready > 0 && (item.revents & ZMQ_POLLOUT))
            return 0;
        if (cli_stop_requested)
            return 1;
        if (ready < 0 && zmq_errno() != EINTR)
            return replay_fail("poll: %s", zmq_strerror(zmq_errno()));
        if (replay_check_receiver(p) != 0)
            return -1;
        replay_note_backpressure(p, since);
    }
}

/* Sends the header (seq and timestamp restamped unless kept; LOSSLESS set on
 * covariance and IQ frames unless --lossy, cleared with it) then the payload
 * parts of the frame in b, zero-copy. The socket must be writable
 * (replay_wait_writable): ZeroMQ applies the high-water mark to a message's
 * first part only, so the rest never blocks. 0, or -1 with errno. */
static int replay_send_frame(replay *p, void *sock, replay_buffer *b, size_t parts, uint64_t seq)
{
    protocol_header h;
    uint8_t header[PROTOCOL_HEADER_BYTES];
    if (protocol_header_decode(b->data, PROTOCOL_HEADER_BYTES, &h) != PROTOCOL_OK) {
        errno = EPROTO;
        return -1;
    }
    h.seq = p->o->keep_seq ? h.seq : seq;
    h.timestamp_ns = p->o->keep_timestamps ? h.timestamp_ns : cli_realtime_ns();
    h.flags &= ~(uint32_t)PROTOCOL_FLAG_LOSSLESS;
    if (!p->o->lossy && h.kind != PROTOCOL_KIND_EIGENSPACE)
        h.flags |= PROTOCOL_FLAG_LOSSLESS;
    protocol_header_encode(&h, header);
    int rc;
    while ((rc = zmq_send(sock, header, sizeof header, parts ? ZMQ_SNDMORE | ZMQ_DONTWAIT : ZMQ_DONTWAIT)) < 0 &&
           errno == EINTR) {
    }
    if (rc < 0)
        return -1;
    size_t offset = PROTOCOL_HEADER_BYTES;
    for (size_t i = 0; i < parts; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init_data(&msg, b->data + offset, p->part_bytes[i], replay_buffer_release, b) != 0)
            return -1;
        atomic_fetch_add(&b->held, 1);
        offset += p->part_bytes[i];
        /* once the header is queued the rest must follow: retry on EINTR */
        while ((rc = zmq_msg_send(&msg, sock, i + 1 < parts ? ZMQ_SNDMORE : 0)) < 0 && errno == EINTR) {
        }
        if (rc < 0) {
            zmq_msg_close(&msg);
            return -1;
        }
    }
    return 0;
}

/* Reads frame `index` into buffer b and its part sizes. 0 (also when a
 * signal stopped the wait for b), or -1 named. */
static int replay_read_frame(replay *p, uint64_t index, replay_buffer *b, size_t *parts)
{
    char err[RECORDING_ERROR_MAX];
    int waited = replay_buffer_wait(p, b, -1.0);
    if (waited != 0 || cli_stop_requested)
        return waited < 0 ? -1 : 0;
    if (recording_reader_read(p->r, index, b->data, p->buffer_bytes, err, sizeof err) != RECORDING_OK)
        return replay_fail("%s", err);
    recording_error e = recording_reader_part_sizes(p->r, index, p->part_bytes, RECORDING_PARTS_MAX, parts);
    if (e != RECORDING_OK)
        return replay_fail("frame %llu: part sizes: %s", (unsigned long long)index,
                         recording_strerror(e));
    return 0;
}

/* Plays send number j (frame first + j % m): read, wait for its time, send.
 * 0, or -1 named on stderr. */
static int replay_one(replay *p, void *sock, uint64_t j, double start)
{
    uint64_t index = p->first + j % (p->last - p->first);
    replay_buffer *b = &p->buffer[j % REPLAY_BUFFERS];
    size_t parts = 0;
    if (replay_read_frame(p, index, b, &parts) != 0)
        return -1;
    double due = replay_due_s(p, j);
    if (due >= 0)
        cli_sleep_until(start + due);
    int writable = cli_stop_requested ? 1 : replay_wait_writable(p, sock);
    if (writable != 0)
        return writable < 0 ? -1 : 0;
    if (replay_send_frame(p, sock, b, parts, p->sent) != 0) {
        if (errno == EINTR)
            return 0;
        return replay_fail("send frame %llu: %s", (unsigned long long)index, zmq_strerror(errno));
    }
    if (due >= 0)
        p->error_ms[p->sent] = (cli_monotonic_s() - start - due) * 1e3;
    const recording_frame *f = recording_reader_frame(p->r, index);
    if (p->o->verbose)
        fprintf(stderr, REPLAY_PROG ": sent seq %llu = frame %llu (recorded seq %llu, timestamp_ns %llu)\n",
                (unsigned long long)(p->o->keep_seq ? f->seq : p->sent), (unsigned long long)index,
                (unsigned long long)f->seq, (unsigned long long)f->timestamp_ns);
    p->sent++;
    p->bytes += f->bytes;
    return 0;
}

/* Sends the range --loop times (0 = until a signal), reporting every second
 * unless quiet. 0, or -1 named on stderr. */
static int replay_loop(replay *p, void *sock, double start)
{
    const replay_options *o = p->o;
    uint64_t m = p->last - p->first, total = o->loop ? o->loop * m : 0;
    double last_report = start;
    uint64_t sent_at_report = 0, bytes_at_report = 0;
    for (uint64_t j = 0; !cli_stop_requested && (total == 0 || j < total); j++) {
        if (p->sent % 4096 == 0 && p->o->pacing != REPLAY_MAX) {
            double *e = realloc(p->error_ms, (size_t)(p->sent + 4096) * sizeof *e);
            if (e == NULL)
                return replay_fail("out of memory");
            p->error_ms = e;
        }
        if (replay_one(p, sock, j, start) != 0)
            return -1;
        double t = cli_monotonic_s();
        if (!o->quiet && t - last_report >= 1.0) {
            fprintf(stderr, REPLAY_PROG ": %llu frames sent, %.1f frames/s, %.1f MB/s, loop %llu\n",
                    (unsigned long long)p->sent, (double)(p->sent - sent_at_report) / (t - last_report),
                    (double)(p->bytes - bytes_at_report) / 1e6 / (t - last_report), (unsigned long long)(j / m + 1));
            last_report = t;
            sent_at_report = p->sent;
            bytes_at_report = p->bytes;
        }
    }
    return 0;
}

/* Creates the socket, starts watching its peers (p->watch), attaches it and
 * waits for a receiver (--connect-timeout-ms). A connecting PUSH queues only
 * on completed connections (ZMQ_IMMEDIATE), so frames never pile up for an
 * endpoint nobody serves. 0, or -1 named on stderr. */
static int replay_socket_open(replay *p, void **ctx, void **sock)
{
    const replay_options *o = p->o;
    if (cli_socket_create(ctx, sock, o->pub ? ZMQ_PUB : ZMQ_PUSH) != 0)
        return replay_fail("zmq: %s", zmq_strerror(zmq_errno()));
    int hwm = (int)o->hwm, immediate = 1;
    if (zmq_setsockopt(*sock, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(*sock, ZMQ_LINGER, &o->linger_ms, sizeof o->linger_ms) != 0 ||
        zmq_setsockopt(*sock, ZMQ_IMMEDIATE, &immediate, sizeof immediate) != 0)
        return replay_fail("socket options: %s", zmq_strerror(zmq_errno()));
    if (cli_peer_create(*ctx, *sock, &p->watch) != 0)
        return replay_fail("socket monitor: %s", zmq_strerror(zmq_errno()));
    if (cli_socket_attach(*sock, o->endpoint, o->bind) != 0)
        return replay_fail("%s %s: %s", o->bind ? "bind" : "connect", o->endpoint,
                         zmq_strerror(zmq_errno()));
    if (cli_peer_wait(p->watch, o->connect_timeout_ms > 0 ? o->connect_timeout_ms : -1) != 0 && !cli_stop_requested)
        return replay_fail("no receiver at %s after %d ms (is the daemon running, its input.endpoint this "
                           "one?): nothing sent", o->endpoint, o->connect_timeout_ms);
    return 0;
}

/* Warns on stderr, before anything is sent, when frames may be lost. */
static void replay_warn_loss(const replay_options *o)
{
    if (o->pub)
        fprintf(stderr, REPLAY_PROG ": WARNING: --pattern pub can lose frames: PUB drops what a subscriber's "
                        "high-water mark does not hold, and whatever comes before it subscribes\n");
    if (o->lossy)
        fprintf(stderr, REPLAY_PROG ": WARNING: --lossy: frames go without the LOSSLESS flag; a daemon that "
                        "falls behind drops them (frame.overflow_policy drop_oldest, the default), counted "
                        "only in its metrics\n");
}

/* Waits, until deadline (cli_monotonic_s), for ZeroMQ to write out the
 * frames still queued; returns how many of the sent frames it did not (the
 * buffer of each of the last REPLAY_BUFFERS frames still held). */
static uint64_t replay_flush(replay *p, double deadline)
{
    uint64_t unwritten = 0, recent = p->sent < REPLAY_BUFFERS ? p->sent : REPLAY_BUFFERS;
    for (uint64_t k = 0; k < recent; k++) {
        replay_buffer *b = &p->buffer[(p->sent - 1 - k) % REPLAY_BUFFERS];
        unwritten += replay_buffer_wait(p, b, deadline) != 0;
    }
    return unwritten;
}

/* The summary line on stdout: frames handed to ZeroMQ, how many of them it
 * wrote to the connection, and how many were still queued (dropped) at exit. */
static void replay_summary(replay *p, double elapsed, uint64_t unwritten)
{
    char pacing[128] = "pacing n/a (--max)";
    if (p->o->pacing != REPLAY_MAX)
        snprintf(pacing, sizeof pacing, "pacing error p50 %.3f ms p99 %.3f ms",
                 cli_percentile(p->error_ms, (size_t)p->sent, 50), cli_percentile(p->error_ms, (size_t)p->sent, 99));
    printf(REPLAY_PROG ": sent %llu frames (%.1f MB) in %.3f s: %.2f frames/s, %.1f MB/s; %s%s\n"
           REPLAY_PROG ": %llu frames written to the connection, %llu still queued at exit (not delivered)%s\n",
           (unsigned long long)p->sent, (double)p->bytes / 1e6, elapsed,
           elapsed > 0 ? (double)p->sent / elapsed : 0.0, elapsed > 0 ? (double)p->bytes / 1e6 / elapsed : 0.0,
           pacing, cli_stop_requested ? " (interrupted)" : "", (unsigned long long)(p->sent - unwritten),
           (unsigned long long)unwritten, p->o->lossy || p->o->pub ? "; loss possible (--lossy, pub)" : "");
    fflush(stdout);
}

/* Allocates the buffers and part sizes of a replay. 0, or -1 named. */
static int replay_alloc(replay *p)
{
    p->part_bytes = malloc((size_t)RECORDING_PARTS_MAX * sizeof *p->part_bytes);
    if (p->part_bytes == NULL)
        return replay_fail("out of memory");
    for (int i = 0; i < REPLAY_BUFFERS; i++) {
        atomic_init(&p->buffer[i].held, 0);
        p->buffer[i].data = replay_buffer_alloc(p->r, p->first, p->last, &p->buffer_bytes);
        if (p->buffer[i].data == NULL)
            return -1;
    }
    return 0;
}

/* Plays the recording. Exit status: 0 every frame sent was written and read (or a
 * signal stopped the replay), 1 an error, no receiver, or frames still
 * queued after --linger-ms. */
static int replay_play(const replay_options *o)
{
    replay p = {.o = o};
    void *ctx = NULL, *sock = NULL;
    int rc = 1;
    cli_stop_on_signals();
    if (replay_open(o->name, &p.r) != 0 || replay_plan(&p) != 0 || replay_alloc(&p) != 0)
        goto done;
    replay_warn_loss(o);
    if (replay_socket_open(&p, &ctx, &sock) != 0)
        goto done;
    if (o->wait_ms > 0)
        cli_sleep_until(cli_monotonic_s() + o->wait_ms / 1e3);
    double start = cli_monotonic_s();
    int loop = replay_loop(&p, sock, start);
    /* one --linger-ms for everything at exit: the flush, the receiver's
     * read of what was written (cli_peer_drain says why), then the close
     * drops what is left (ZMQ_LINGER 0), after which the buffers may go */
    double deadline = cli_monotonic_s() + o->linger_ms / 1e3;
    uint64_t unwritten = replay_flush(&p, deadline);
    long unread = unwritten == 0 && cli_peer_drain(p.watch, deadline) != 0 ? cli_peer_unread(p.watch) : 0;
    int no_linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &no_linger, sizeof no_linger);
    cli_peer_destroy(&p.watch);
    cli_socket_close(&ctx, &sock);
    if (unwritten > 0)
        fprintf(stderr, REPLAY_PROG ": %llu frames still queued after --linger-ms %d were dropped: the receiver "
                        "did not take them\n", (unsigned long long)unwritten, o->linger_ms);
    if (unread > 0)
        fprintf(stderr, REPLAY_PROG ": %ld bytes written were still unread by the receiver after --linger-ms %d: "
                        "the last frames may not have been delivered\n", unread, o->linger_ms);
    replay_summary(&p, cli_monotonic_s() - start, unwritten);
    rc = loop == 0 && ((unwritten == 0 && unread == 0) || cli_stop_requested) ? 0 : 1;
done:
    cli_peer_destroy(&p.watch);
    cli_socket_close(&ctx, &sock);
    for (int i = 0; i < REPLAY_BUFFERS; i++)
        free(p.buffer[i].data);
    free(p.part_bytes);
    free(p.offset_s);
    free(p.error_ms);
    recording_reader_close(&p.r);
    return rc;
}

/* The tool once its options are parsed (CLI_MAIN below); the exit status. */
static int tool_main(replay_options *o)
{
    if (o->info)
        return replay_info(o->name);
    if (o->check != NULL)
        return replay_check(o->name, o->check);
    if (o->to_npy)
        return replay_export_npy(o->name, o->to_npy);
    return replay_play(o);
}

CLI_MAIN(main, replay_options, parse_options, tool_main)
