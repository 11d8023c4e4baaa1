/*
 * top_main.c - eigstream-top: a live terminal view of a running daemon from
 * its metrics PUB socket (the JSON document of docs/daemon.md), or with
 * --once --json the next document's summary on stdout.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "cli_common.h"
#include "cli_options.h"
#include "top_model.h"
#include "top_view.h"

#define TOP_DOCUMENT_MAX (1u << 20) /* the daemon's documents are ~5 kB */

enum { TOP_EXIT_OK = 0, TOP_EXIT_FAIL = 1, TOP_EXIT_USAGE = 2 };

typedef struct top_options {
    const char *endpoint;
    int once, json, ascii;
    double timeout_s, deadline_ms;
} top_options;

/* What the tool knows: the latest document and the p99 history, and what
 * the screen shows of them (frozen while paused). */
typedef struct top_state {
    top_snapshot cur, shown;
    int have;
    double interval_p99_us, last_document_s;
    top_history p99, shown_p99;
    char problem[TOP_ERROR_TEXT];
    int has_problem;
} top_state;

static const char top_epilogue[] =
    "\nKeys: q quits, p pauses (the view stops; documents are still read).\n"
    "The deadline is not in the metrics document: give the daemon's frame.deadline_ms.\n"
    "Exit status: 0 after q, SIGINT/SIGTERM or a printed --once document;\n"
    "1 no document within --timeout (--once), a bad document (--once), a socket\n"
    "or terminal error; 2 usage (bad option, bad endpoint).\n";

/* Returns -1 to go on, else the exit status (0 after --help, 2 after a bad argument). */
static int parse_options(int argc, char **argv, top_options *o)
{
    *o = (top_options){.endpoint = "tcp://127.0.0.1:5552", .timeout_s = 10.0, .deadline_ms = 1000.0};
    const cli_option table[] = {
        CLI_STRING("endpoint", 0, &o->endpoint, "E", "the daemon's metrics endpoint (SUB, connect)"),
        CLI_FLAG("once", 0, &o->once, "print the next document and exit (needs --json)"),
        CLI_FLAG("json", 0, &o->json, "with --once: the flat summary object of the view, as JSON"),
        CLI_DOUBLE("timeout", 0, &o->timeout_s, 0.0, 1e6, "S",
                   "seconds without a document: --once exits 1, the view warns (0 = never)"),
        CLI_DOUBLE("deadline-ms", 0, &o->deadline_ms, 0.0, 3600000.0, "MS",
                   "end-to-end deadline drawn and coloured against, 0 = none"),
        CLI_FLAG("ascii", 0, &o->ascii, "ASCII sparkline (default: Unicode blocks in a UTF-8 locale)"),
        CLI_END};
    const cli_spec spec = {.prog = "eigstream-top", .synopsis = "[options]",
                           .description = "Live view of a running eigstream daemon from its metrics socket.\n",
                           .options = table, .epilogue = top_epilogue};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, TOP_EXIT_USAGE);
    if (status < 0 && o->once != o->json) {
        fprintf(stderr, "eigstream-top: --once and --json go together (try --help)\n");
        return TOP_EXIT_USAGE;
    }
    return status;
}

/* Waits up to timeout_ms (-1: forever) for one document into buf (cap
 * bytes, NUL-terminated). Returns its length, 0 when none came (timeout or
 * a signal), -1 with zmq_errno() on a socket error. */
static long receive_document(void *sock, long timeout_ms, char *buf, size_t cap)
{
    zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
    int ready = zmq_poll(&item, 1, timeout_ms);
    if (ready <= 0)
        return ready < 0 && zmq_errno() != EINTR ? -1 : 0;
    int len = zmq_recv(sock, buf, cap - 1, ZMQ_DONTWAIT);
    if (len < 0)
        return zmq_errno() == EAGAIN || zmq_errno() == EINTR ? 0 : -1;
    size_t kept = (size_t)len < cap - 1 ? (size_t)len : cap - 1; /* longer: cut, then rejected as JSON */
    buf[kept] = '\0';
    return (long)kept;
}

/* Takes one document into the state; a bad one only sets the problem. */
static void state_update(top_state *st, const char *text, size_t len, double now_s)
{
    top_snapshot next;
    top_error e = top_snapshot_parse(text, len, &next, st->problem, sizeof st->problem);
    st->last_document_s = now_s;
    st->has_problem = e != TOP_OK;
    if (e != TOP_OK)
        return;
    st->interval_p99_us = top_interval_quantile_us(st->have ? &st->cur : NULL, &next, 0.99);
    st->cur = next;
    st->have = 1;
    top_history_push(&st->p99, now_s, st->interval_p99_us);
}

/* --once --json: the next document's summary on stdout. */
static int run_once(void *sock, const top_options *o, char *buf)
{
    double start = cli_monotonic_s();
    while (!cli_stop_requested) {
        double left_s = o->timeout_s > 0 ? o->timeout_s - (cli_monotonic_s() - start) : 1.0;
        if (left_s <= 0)
            break;
        long len = receive_document(sock, (long)ceil(left_s * 1e3), buf, TOP_DOCUMENT_MAX);
        if (len < 0)
            return cli_fatal("eigstream-top", "receive: %s", zmq_strerror(zmq_errno()));
        if (len == 0)
            continue;
        top_snapshot s;
        char why[TOP_ERROR_TEXT] = "";
        top_error e = top_snapshot_parse(buf, (size_t)len, &s, why, sizeof why);
        json_t *summary = e == TOP_OK ? top_summary_json(&s, o->deadline_ms, NAN) : NULL;
        if (e != TOP_OK)
            return cli_fatal("eigstream-top", "%s: %s: %s", o->endpoint, top_strerror(e), why);
        if (summary == NULL || json_dumpf(summary, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12)) != 0 ||
            puts("") == EOF || fflush(stdout) != 0) {
            json_decref(summary);
            return cli_fatal("eigstream-top", "cannot write the summary");
        }
        json_decref(summary);
        return TOP_EXIT_OK;
    }
    return cli_fatal("eigstream-top", "no metrics document from %s within %g s (is the daemon running with "
                     "metrics.endpoint there?)", o->endpoint, o->timeout_s);
}

/* Reads the keys waiting; returns 1 when q was pressed. */
static int handle_keys(top_view_state *v)
{
    for (int key = top_view_key(); key >= 0; key = top_view_key()) {
        if (key == 'q' || key == 'Q')
            return 1;
        if (key == 'p' || key == 'P')
            v->paused = !v->paused;
    }
    return 0;
}

/* Points v at what to draw: the latest state, or the frozen one when paused. */
static void view_update(top_view_state *v, top_state *st, double now_s)
{
    if (!v->paused) {
        st->shown = st->cur;
        st->shown_p99 = st->p99;
        v->snapshot = st->have ? &st->shown : NULL;
        v->interval_p99_us = st->interval_p99_us;
        v->problem = st->has_problem ? st->problem : NULL;
    }
    v->silent_s = now_s - st->last_document_s;
}

/* The live view until q or a signal. */
static int run_view(void *sock, const top_options *o, char *buf)
{
    top_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return cli_fatal("eigstream-top", "out of memory");
    if (top_view_open() != 0) {
        free(st);
        return cli_fatal("eigstream-top", "cannot use the terminal (TERM=%s); --once --json needs none",
                         getenv("TERM") ? getenv("TERM") : "");
    }
    top_view_state v = {.endpoint = o->endpoint, .p99 = &st->shown_p99, .deadline_ms = o->deadline_ms,
                        .interval_p99_us = NAN, .stale_s = o->timeout_s > 0 ? o->timeout_s : INFINITY,
                        .ascii = o->ascii};
    int rc = TOP_EXIT_OK;
    st->last_document_s = cli_monotonic_s();
    while (!cli_stop_requested && !handle_keys(&v)) {
        long len = receive_document(sock, 250, buf, TOP_DOCUMENT_MAX);
        if (len < 0) {
            rc = TOP_EXIT_FAIL;
            break;
        }
        double now = cli_monotonic_s();
        if (len > 0)
            state_update(st, buf, (size_t)len, now);
        view_update(&v, st, now);
        top_view_draw(&v);
    }
    int err = zmq_errno();
    top_view_close();
    free(st);
    if (rc != TOP_EXIT_OK)
        cli_fatal("eigstream-top", "receive: %s", zmq_strerror(err));
    return rc;
}

/* The locale's own encoding draws Unicode blocks only when it is UTF-8. */
static int locale_is_utf8(void)
{
    const char *name = setlocale(LC_CTYPE, "");
    return name != NULL && (strstr(name, "UTF-8") != NULL || strstr(name, "utf8") != NULL);
}

int main(int argc, char **argv)
{
    top_options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    o.ascii |= !locale_is_utf8();
    void *ctx = NULL, *sock = NULL;
    char *buf = malloc(TOP_DOCUMENT_MAX);
    int rc = TOP_EXIT_FAIL;
    if (buf == NULL || cli_socket_create(&ctx, &sock, ZMQ_SUB) != 0) {
        cli_fatal("eigstream-top", "%s", buf ? zmq_strerror(zmq_errno()) : "out of memory");
        goto done;
    }
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_SUBSCRIBE, "", 0);
    if (cli_socket_attach(sock, o.endpoint, 0) != 0) {
        cli_fatal("eigstream-top", "bad endpoint %s: %s", o.endpoint, zmq_strerror(zmq_errno()));
        rc = TOP_EXIT_USAGE;
        goto done;
    }
    cli_stop_on_signals();
    rc = o.once ? run_once(sock, &o, buf) : run_view(sock, &o, buf);
done:
    cli_socket_close(&ctx, &sock);
    free(buf);
    return rc;
}
