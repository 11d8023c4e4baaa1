/*
 * merge_main.c - eigstream-merge: options, sockets and the loop (merge.h
 * says what the tool is; docs/scaleout.md how to run it).
 *
 * One thread, one zmq_poll loop over one socket per daemon (so that the
 * counts say which daemon a frame came from): each eigenspace frame is
 * checked (header, three parts), offered to the reorder window with the
 * deadline arrival + --window-ms, and whatever the window releases is
 * republished (the parts as they came: ZeroMQ moves the buffers) or
 * counted as a gap, named by seq in the log and the JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "cli_common.h"
#include "cli_curve.h"
#include "cli_message.h"
#include "cli_options.h"
#include "merge.h"
#include "reorder.h"
#include "transport_memory.h"

#define POLL_MS_MAX 100
#define REJECTS_LOGGED 10       /* log lines per reject reason; all are counted */
#define CONTROL_BYTES_MAX 256 /* an XPUB (un)subscription: a prefix of a few bytes */

static const char *const in_patterns[] = {"pull", "sub", NULL};
static const char *const out_patterns[] = {"pub", "push", NULL};
static const char *const late_policies[] = {"drop", "publish", NULL};

/* The command line into *o (defaults already there): -1 to go on, else the
 * exit status (0 after --help, 2 on a bad option or a missing --in). */
static int options_parse(int argc, char **argv, merge_options *o)
{
    const cli_option table[] = {
        CLI_STRING("in", 0, &o->inputs, "E1,E2,..", "the daemons' output endpoints, comma-separated"),
        CLI_CHOICE("in-pattern", 0, &o->in_sub, in_patterns, NULL, "input sockets: pull (daemons push) or sub"),
        CLI_FLAG("in-bind", 0, &o->in_bind, "bind each input instead of connecting to it"),
        CLI_STRING("out", 0, &o->out, "E", "endpoint the ordered frames are republished on (binds)"),
        CLI_CHOICE("out-pattern", 0, &o->out_push, out_patterns, NULL, "pub (XPUB, no silent drop) or push"),
        CLI_INT("out-hwm", 0, &o->out_hwm, 1, 1000000, "H", "output send high-water mark (frames)"),
        CLI_INT("send-timeout-ms", 0, &o->send_timeout_ms, 0, 3600000, "T",
                "a refused republish waits this long, then is counted send_timeout"),
        CLI_INT("window", 0, &o->window, 1, 1000000, "N", "reorder window: seqs held ahead of the next one out"),
        CLI_INT("window-ms", 0, &o->window_ms, 0, 3600000, "T", "how long a frame waits for the seqs before it"),
        CLI_CHOICE("late", 0, &o->late_publish, late_policies, NULL,
                   "a frame whose seq was released as a gap: drop it or publish it flagged LATE"),
        CLI_INT("epoch-confirm", 0, &o->epoch_confirm, 1, 1000000, "K",
                "frames far from the sequence that must agree before a new one (a source restart) begins"),
        CLI_INT("jump-limit", 0, &o->jump_limit, 0, 1000000000, "J",
                "seqs beyond the window still trusted to push it on; further ones wait for --epoch-confirm"),
        CLI_INT("max-bytes", 0, &o->max_bytes, 1024, INT64_MAX, "B",
                "largest message accepted from an input, all its parts summed (counted oversized)"),
        CLI_STRING("gap-log", 0, &o->gap_log, "FILE", "one line per gap named: first last (seqs, inclusive)"),
        CLI_INT("first-seq", 0, &o->first_seq, -1, INT64_MAX, "S", "the first seq expected, -1 = the first received"),
        CLI_INT("last-seq", 0, &o->last_seq, -1, INT64_MAX, "S",
                "exit once every seq up to S is out or named, -1 = never"),
        CLI_DOUBLE("stats-s", 0, &o->stats_s, 0.0, 3600.0, "S", "seconds between metrics lines on stderr, 0 = none"),
        CLI_STRING("json", 0, &o->json, "FILE", "metrics JSON, rewritten with each line and at exit"),
        CLI_STRING("prometheus", 0, &o->prometheus, "FILE", "Prometheus text file, rewritten likewise"),
        CLI_STRING("curve-server-key", 0, &o->curve_server_keys, "F1,F2,..",
                   "the daemons' CURVE public keys (BASE.key): one for every input, or one per --in in order; "
                   "needs --curve-key"),
        CLI_STRING("curve-key", 0, &o->curve_key, "FILE",
                   "this merge's CURVE key pair for its inputs (BASE.key_secret, listed in each daemon's "
                   "security.curve_allow)"),
        CLI_STRING("curve-secret-key", 0, &o->curve_secret_key, "FILE",
                   "the output's CURVE key pair (BASE.key_secret; may be --curve-key's): the output becomes a "
                   "CURVE server; needs --curve-allow"),
        CLI_STRING("curve-allow", 0, &o->curve_allow, "PATH",
                   "the consumers' public keys let in on the output (a file of keys or a directory of *.key); "
                   "others are refused and counted"),
        CLI_END};
    const cli_spec spec = {
        .prog = "eigstream-merge", .synopsis = "--in E1,E2,.. [options]", .options = table,
        .description = "Republishes the eigenspace frames of several daemons in sequence order; gaps, duplicates "
                       "and late arrivals are counted and named by seq. See docs/scaleout.md.",
        .epilogue = "Exit: 0 after SIGINT/SIGTERM (the window is flushed) or --last-seq, 1 on a socket or file "
                    "error, 2 on a bad option."};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
    if (status < 0 && o->inputs == NULL)
        return cli_fatal("eigstream-merge", "--in is required (the daemons' output endpoints)") + 1;
    if (status < 0 && o->epoch_confirm > o->window)
        return cli_fatal("eigstream-merge", "--epoch-confirm %d exceeds --window %d: no new sequence could begin",
                         o->epoch_confirm, o->window) + 1;
    if (status < 0 && (o->curve_server_keys == NULL) != (o->curve_key == NULL))
        return cli_fatal("eigstream-merge", "--curve-server-key and --curve-key go together (the inputs' CURVE)") + 1;
    if (status < 0 && (o->curve_secret_key == NULL) != (o->curve_allow == NULL))
        return cli_fatal("eigstream-merge", "--curve-secret-key and --curve-allow go together (the output's CURVE)") + 1;
    return status;
}

/* Splits a comma-separated list into out[0..*count), each strndup'ed: 0,
 * or -1 when empty, an item is empty, there are more than max, or out of
 * memory (what was split is still in out, for the caller to free). */
static int list_split(const char *text, char **out, size_t max, size_t *count)
{
    const char *p = text;
    *count = 0;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        if (len == 0 || *count == max)
            return -1;
        out[*count] = strndup(p, len);
        if (out[(*count)++] == NULL)
            return -1;
        p += len + (p[len] == ',');
    }
    return *count > 0 ? 0 : -1;
}

/* Input i as a CURVE client of its daemon (--curve-server-key: one key
 * file for all, or one per input): 0 (also without CURVE), or -1, reported. */
static int input_curve(merger *x, size_t i)
{
    char *keys[MERGE_INPUTS_MAX] = {0}, err[1024];
    size_t count = 0;
    int rc = 0;
    if (x->o.curve_server_keys != NULL &&
        (list_split(x->o.curve_server_keys, keys, MERGE_INPUTS_MAX, &count) != 0 ||
         (count != 1 && count != x->inputs))) {
        fprintf(stderr, "eigstream-merge: --curve-server-key: expected one key file or %zu (one per --in), got \"%s\"\n",
                x->inputs, x->o.curve_server_keys);
        rc = -1;
    }
    const cli_curve curve = {.server_key = count > 0 ? keys[count == 1 ? 0 : i] : NULL, .client_key = x->o.curve_key};
    if (rc == 0 && cli_curve_apply(&curve, x->in[i], err, sizeof err) != 0) {
        fprintf(stderr, "eigstream-merge: input %s: %s\n", x->endpoints[i], err);
        rc = -1;
    }
    for (size_t k = 0; k < count; k++)
        free(keys[k]);
    return rc;
}

/* A socket with its options; NULL (zmq_errno set) on failure. */
static void *socket_with(void *ctx, int type, int linger, int hwm_option, int hwm)
{
    void *s = zmq_socket(ctx, type);
    if (s == NULL)
        return NULL;
    if (zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(s, hwm_option, &hwm, sizeof hwm) != 0) {
        zmq_close(s);
        return NULL;
    }
    return s;
}

/* The output as a CURVE server (--curve-secret-key, --curve-allow) with
 * its ZAP handler started; 0 (also without CURVE), or -1, reported. */
static int output_curve(merger *x)
{
    const cli_curve_server_files files = {x->o.curve_secret_key, "--curve-secret-key", x->o.curve_allow,
                                          "--curve-allow"};
    char err[1024];
    if (cli_curve_server_open(&x->out_curve, x->ctx, &files, err, sizeof err) != 0)
        goto failed;
    /* under CURVE the handshake counter's monitor (a socket has one) feeds
     * the output's connection watch */
    if (cli_curve_server_on(&x->out_curve) && connection_watch_create_fed(&x->out_watch) != 0) {
        snprintf(err, sizeof err, "output: out of memory");
        goto failed;
    }
    if (cli_curve_server_secure(&x->out_curve, x->out, "output", x->out_watch, err, sizeof err) != 0 ||
        cli_curve_server_start(&x->out_curve, err, sizeof err) != 0)
        goto failed;
    return 0;
failed:
    fprintf(stderr, "eigstream-merge: %s\n", err);
    return -1;
}

/* One input socket per endpoint (connected, or bound with --in-bind) and
 * the bound output: 0; -1 on a ZeroMQ error (zmq_errno says which); -2
 * when an endpoint or a CURVE file failed (reported here). */
static int sockets_open(merger *x)
{
    static const uint8_t prefix[PROTOCOL_PREFIX_BYTES] = {'E', 'I', 'G', 'S', PROTOCOL_VERSION,
                                                          PROTOCOL_KIND_EIGENSPACE};
    x->ctx = zmq_ctx_new();
    if (x->ctx == NULL)
        return -1;
    /* A part over the whole message's bound closes the connection in ZeroMQ;
     * the sum of the parts is checked as they are read (input_receive). */
    int64_t max_part = x->o.max_bytes, max_control = CONTROL_BYTES_MAX;
    for (size_t i = 0; i < x->inputs; i++) {
        x->in[i] = socket_with(x->ctx, x->o.in_sub ? ZMQ_SUB : ZMQ_PULL, 0, ZMQ_RCVHWM, 1000);
        if (x->in[i] == NULL || (x->o.in_sub && zmq_setsockopt(x->in[i], ZMQ_SUBSCRIBE, prefix, sizeof prefix) != 0) ||
            zmq_setsockopt(x->in[i], ZMQ_MAXMSGSIZE, &max_part, sizeof max_part) != 0)
            return -1;
        if (input_curve(x, i) != 0)
            return -2;
        if (cli_socket_attach(x->in[i], x->endpoints[i], x->o.in_bind) != 0) {
            fprintf(stderr, "eigstream-merge: input %s: %s\n", x->endpoints[i], zmq_strerror(zmq_errno()));
            return -2;
        }
    }
    /* XPUB with NODROP: a subscriber at its HWM refuses the send instead of
     * losing the frame silently; the bounded wait then counts it. */
    int one = 1, timeout = x->o.send_timeout_ms;
    x->out = socket_with(x->ctx, x->o.out_push ? ZMQ_PUSH : ZMQ_XPUB, 1000, ZMQ_SNDHWM, x->o.out_hwm);
    if (x->o.curve_secret_key != NULL)
        max_control = CLI_CURVE_HANDSHAKE_BYTES;
    if (x->out == NULL || zmq_setsockopt(x->out, ZMQ_SNDTIMEO, &timeout, sizeof timeout) != 0 ||
        zmq_setsockopt(x->out, ZMQ_MAXMSGSIZE, &max_control, sizeof max_control) != 0 ||
        (!x->o.out_push && (zmq_setsockopt(x->out, ZMQ_XPUB_NODROP, &one, sizeof one) != 0 ||
                            zmq_setsockopt(x->out, ZMQ_XPUB_VERBOSER, &one, sizeof one) != 0)))
        return -1;
    if (output_curve(x) != 0)
        return -2;
    if (x->out_watch == NULL && cli_peer_create(x->ctx, x->out, &x->out_watch) != 0)
        return -1;
    if (cli_socket_attach(x->out, x->o.out, 1) != 0) {
        fprintf(stderr, "eigstream-merge: output %s: %s\n", x->o.out, zmq_strerror(zmq_errno()));
        return -2;
    }
    return 0;
}

/* Receives one message from input i: a checked eigenspace frame goes to the
 * window, anything else is counted by reason. -1 on a socket failure. */
static int input_receive(merger *x, size_t i, uint64_t now)
{
    merge_frame *f = x->free[--x->free_count];
    if (cli_message_receive_bounded(x->in[i], &f->m, 4, (size_t)x->o.max_bytes) != 0) {
        x->free[x->free_count++] = f;
        return errno == EINTR ? 0 : -1;
    }
    f->arrival_ns = now;
    x->s.frames_in++;
    x->s.in_by_input[i]++;
    protocol_header h;
    protocol_reject r = merge_frame_check(x, f, &h);
    if (r != PROTOCOL_OK) {
        /* Damaged frames never reach the window, so a bad copy cannot
         * displace the good frame of its seq. */
        x->s.rejected_total++;
        if (x->s.rejected[r]++ < REJECTS_LOGGED)
            fprintf(stderr, "eigstream-merge: rejected a message from %s: %s%s\n", x->endpoints[i],
                    protocol_reject_name(r), x->s.rejected[r] == REJECTS_LOGGED ? " (no more of these logged)" : "");
        if (f->m.oversized)
            (void)transport_return_memory();
        merge_recycle(x, f);
        return 0;
    }
    f->seq = h.seq;
    f->timestamp_ns = h.timestamp_ns;
    merge_sequence_offer(x, f, now);
    return 0;
}

/* The metrics: one JSON line on stderr when line, and the --json and
 * --prometheus files; a file that cannot be written is reported, not fatal. */
static void report(merger *x, int line)
{
    double now = cli_monotonic_s();
    const char *const *inputs = (const char *const *)x->endpoints;
    x->s.held = reorder_held(x->w) + x->cand.count;
    x->s.next_seq = reorder_next(x->w);
    x->s.curve_inputs = x->o.curve_server_keys != NULL;
    x->s.curve_output = cli_curve_server_on(&x->out_curve);
    cli_curve_server_counts(&x->out_curve, x->s.auth_rejected);
    if (line) {
        static char text[128 * 1024];
        if (merge_report_json(&x->s, inputs, now, text, sizeof text) <= sizeof text)
            fprintf(stderr, "eigstream-merge: %s\n", text);
    }
    if (x->o.json != NULL && merge_report_json_file(&x->s, inputs, now, x->o.json) != 0)
        fprintf(stderr, "eigstream-merge: cannot write %s: %s\n", x->o.json, strerror(errno));
    if (x->o.prometheus != NULL && merge_report_prometheus_file(&x->s, inputs, now, x->o.prometheus) != 0)
        fprintf(stderr, "eigstream-merge: cannot write %s: %s\n", x->o.prometheus, strerror(errno));
}

/* How long the poll may sleep: until the window stops waiting for a gap. */
static int poll_timeout_ms(const merger *x, uint64_t now)
{
    uint64_t deadline;
    if (!merge_sequence_deadline(x, &deadline))
        return POLL_MS_MAX;
    if (deadline <= now)
        return 0;
    uint64_t ms = (deadline - now + 999999) / 1000000;
    return ms < POLL_MS_MAX ? (int)ms : POLL_MS_MAX;
}

/* The XPUB's (un)subscriptions (every one, a leaver's too: ZMQ_XPUB_VERBOSER), counted as
 * the subscriptions gauge; by the time one is read ZeroMQ applies it, so a
 * consumer counted here gets every frame published after. */
static void output_subscriptions(merger *x)
{
    uint8_t sub[CONTROL_BYTES_MAX];
    int bytes;
    while ((bytes = zmq_recv(x->out, sub, sizeof sub, ZMQ_DONTWAIT)) >= 0) {
        if (bytes > 0 && sub[0] == 1)
            x->s.subscriptions++;
        else if (bytes > 0 && sub[0] == 0 && x->s.subscriptions > 0)
            x->s.subscriptions--;
    }
}

/* The loop; 0 on a stop request or --last-seq, -1 on a socket failure. */
static int run(merger *x)
{
    zmq_pollitem_t items[MERGE_INPUTS_MAX + 1];
    double next_report = cli_monotonic_s() + x->o.stats_s;
    for (size_t i = 0; i < x->inputs; i++)
        items[i] = (zmq_pollitem_t){.socket = x->in[i], .events = ZMQ_POLLIN};
    items[x->inputs] = (zmq_pollitem_t){.socket = x->out, .events = x->o.out_push ? 0 : ZMQ_POLLIN};
    while (!cli_stop_requested && !x->done) {
        if (zmq_poll(items, (int)x->inputs + 1, poll_timeout_ms(x, merge_now_ns())) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        uint64_t now = merge_now_ns();
        for (size_t i = 0; i < x->inputs; i++)
            if ((items[i].revents & ZMQ_POLLIN) && input_receive(x, i, now) != 0)
                return -1;
        if (items[x->inputs].revents & ZMQ_POLLIN)
            output_subscriptions(x);
        merge_sequence_release(x, now);
        x->done = x->o.last_seq >= 0 && x->started && reorder_next(x->w) > (uint64_t)x->o.last_seq;
        if (x->o.stats_s > 0 && cli_monotonic_s() >= next_report) {
            report(x, 1);
            next_report += x->o.stats_s;
        }
    }
    return 0;
}

/* At exit: what the window holds goes out in order, the gaps between named;
 * with --last-seq, the seqs after the last one received up to it too. */
static void flush(merger *x)
{
    merge_sequence_release(x, UINT64_MAX);
    uint64_t next = reorder_next(x->w);
    if (x->o.last_seq >= 0 && x->started && next <= (uint64_t)x->o.last_seq) {
        merge_stats_gap(&x->s, next, (uint64_t)x->o.last_seq);
        fprintf(stderr, "eigstream-merge: gap: seq %llu..%lld (%llu frames) never arrived before the stop\n",
                (unsigned long long)next, (long long)x->o.last_seq,
                (unsigned long long)((uint64_t)x->o.last_seq - next + 1));
        if (x->gap_log != NULL)
            fprintf(x->gap_log, "%llu %lld\n", (unsigned long long)next, (long long)x->o.last_seq);
    }
}

/* The number of frames the merge may hold: the window's, the candidate's
 * and the one being received. */
static size_t frames_total(const merger *x)
{
    return 2 * (size_t)x->o.window + 1;
}

/* The reorder window, its frames on the free stack, the candidate's array,
 * the recent seqs and the latency ring: 0, or -1 when out of memory. */
static int window_create(merger *x)
{
    size_t n = frames_total(x);
    x->frames = calloc(n, sizeof *x->frames);
    x->free = calloc(n, sizeof *x->free);
    x->cand.f = calloc(2 * (size_t)x->o.window, sizeof *x->cand.f);
    x->pops = calloc(2 * (size_t)x->o.window + 1, sizeof *x->pops);
    x->recent = calloc((size_t)x->o.window, sizeof *x->recent);
    x->s.latency_ms = calloc(MERGE_LATENCY_KEPT, sizeof *x->s.latency_ms);
    if (x->frames == NULL || x->free == NULL || x->cand.f == NULL || x->pops == NULL || x->recent == NULL || x->s.latency_ms == NULL ||
        reorder_create(&x->w, (size_t)x->o.window) != REORDER_OK)
        return -1;
    for (size_t i = 0; i < n; i++)
        x->free[x->free_count++] = &x->frames[i];
    if (x->o.first_seq >= 0) {
        if (reorder_start(x->w, (uint64_t)x->o.first_seq) != REORDER_OK)
            return -1;
        x->started = 1;
        x->epoch_first = (uint64_t)x->o.first_seq;
        x->s.epochs = 1;
    }
    return 0;
}

/* Frees everything main created, sockets and context last. */
static void merger_free(merger *x)
{
    for (size_t i = 0; x->frames != NULL && i < frames_total(x); i++)
        cli_message_free(&x->frames[i].m);
    free(x->frames);
    free(x->free);
    free(x->cand.f);
    free(x->pops);
    free(x->recent);
    free(x->meta);
    if (x->gap_log != NULL)
        fclose(x->gap_log);
    free(x->s.latency_ms);
    reorder_destroy(&x->w);
    for (size_t i = 0; i < x->inputs; i++) {
        if (x->in[i] != NULL)
            zmq_close(x->in[i]);
        free(x->endpoints[i]);
    }
    /* the output's watch: with a monitor of its own, before its socket
     * closes; fed by the ZAP thread (CURVE), after that thread has stopped */
    if (!cli_curve_server_on(&x->out_curve))
        cli_peer_destroy(&x->out_watch);
    if (x->out != NULL)
        zmq_close(x->out);
    cli_curve_server_close(&x->out_curve); /* the handler's sockets, before the context ends */
    cli_peer_destroy(&x->out_watch);
    if (x->ctx != NULL)
        zmq_ctx_term(x->ctx);
}

/* Exit 0 after SIGINT/SIGTERM or --last-seq, 1 on a socket or memory
 * error, 2 on a bad option. */
int main(int argc, char **argv)
{
    merger x = {.o = {.out = "tcp://*:5580", .window = 64, .window_ms = 1000, .send_timeout_ms = 1000,
                      .out_hwm = 16, .first_seq = -1, .last_seq = -1, .stats_s = 5.0, .epoch_confirm = 3,
                      .jump_limit = 64, .max_bytes = 1ll << 30}};
    int status = options_parse(argc, argv, &x.o);
    if (status >= 0)
        return status;
    (void)transport_tune_allocator(); /* frames of tens of MB; best effort (transport_memory.h) */
    if (list_split(x.o.inputs, x.endpoints, MERGE_INPUTS_MAX, &x.inputs) != 0)
        return cli_fatal("eigstream-merge", "--in: expected 1 to %d comma-separated endpoints, got \"%s\"",
                         MERGE_INPUTS_MAX, x.o.inputs);
    if (x.o.gap_log != NULL && (x.gap_log = fopen(x.o.gap_log, "w")) == NULL)
        return cli_fatal("eigstream-merge", "cannot open %s: %s", x.o.gap_log, strerror(errno));
    if (x.gap_log != NULL)
        setvbuf(x.gap_log, NULL, _IOLBF, 0); /* whole lines, readable while it runs */
    cli_stop_on_signals();
    x.s.inputs = x.inputs;
    x.s.started_s = cli_monotonic_s();
    int rc = window_create(&x);
    if (rc != 0)
        fprintf(stderr, "eigstream-merge: out of memory for a window of %d frames\n", x.o.window);
    if (rc == 0 && (rc = sockets_open(&x)) == -1)
        fprintf(stderr, "eigstream-merge: zmq: %s\n", zmq_strerror(zmq_errno()));
    if (rc == 0) {
        fprintf(stderr, "eigstream-merge: %zu inputs (%s, CURVE %s), out %s (%s, CURVE %s), window %d frames / %d ms\n",
                x.inputs, in_patterns[x.o.in_sub], x.o.curve_server_keys != NULL ? "on" : "off", x.o.out,
                out_patterns[x.o.out_push], cli_curve_server_on(&x.out_curve) ? "on" : "off", x.o.window,
                x.o.window_ms);
        rc = run(&x);
        if (rc != 0)
            fprintf(stderr, "eigstream-merge: socket failure: %s\n", zmq_strerror(zmq_errno()));
        flush(&x);
        /* the output's linger, 1 s, for the receivers to read the last
         * frames (connection_watch.h says why); a stop is how the merge
         * ends, so the signal does not cut this short */
        if (connection_watch_drain(x.out_watch, (uint64_t)((cli_monotonic_s() + 1.0) * 1e9), NULL) != 0)
            fprintf(stderr, "eigstream-merge: %ld bytes of published frames still unread by the output's "
                            "receivers after 1 s: the last frames may not be delivered\n",
                    cli_peer_unread(x.out_watch));
        report(&x, 1);
    }
    merger_free(&x);
    return rc == 0 ? 0 : 1;
}
