/*
 * dispatch_report.c - eigstream-dispatch's metrics as JSON (the periodic
 * line, --json) and Prometheus text exposition (--prometheus, for
 * node_exporter's textfile collector).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"

static const char *const drop_names[DISPATCH_DROP_COUNT_] = {"queue_full", "shutdown"};

const char *dispatch_drop_name(dispatch_drop d)
{
    return (int)d >= 0 && d < DISPATCH_DROP_COUNT_ ? drop_names[d] : "unknown";
}

/* Appends to a fixed buffer, counting what would not fit. */
typedef struct writer {
    char *out;
    size_t bytes, used;
} writer;

static void put(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(writer *w, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    size_t room = w->used < w->bytes ? w->bytes - w->used : 0;
    int n = vsnprintf(room ? w->out + w->used : NULL, room, fmt, args);
    va_end(args);
    if (n > 0)
        w->used += (size_t)n;
}

static void json_daemons(writer *w, const dispatch_daemons *t)
{
    put(w, "\"daemons\":[");
    for (size_t i = 0; i < t->count; i++) {
        const dispatch_daemon *d = &t->d[i];
        put(w, "%s{\"id\":\"%s\",\"state\":\"%s\",\"credit\":%llu,\"dispatched\":%llu,\"readies\":%llu", i ? "," : "",
            d->name, dispatch_death_name(d->state), (unsigned long long)d->credit,
            (unsigned long long)d->dispatched, (unsigned long long)d->readies);
        if (d->dispatched > 0)
            put(w, ",\"first_seq\":%llu,\"last_seq\":%llu", (unsigned long long)d->first_seq,
                (unsigned long long)d->last_seq);
        put(w, "}");
    }
    put(w, "]");
}

size_t dispatch_report_json(const dispatch_stats *s, const dispatch_daemons *t, double now_s, char *out,
                            size_t out_bytes)
{
    writer w = {out, out_bytes, 0};
    double up = now_s - s->started_s;
    put(&w, "{\"uptime_s\":%.3f,\"frames_in\":%llu,\"frames_per_s\":%.2f,\"dispatched\":%llu,\"resent\":%llu,"
            "\"queued\":%zu,\"blocked_s\":%.3f,\"daemons_alive\":%zu,",
        up, (unsigned long long)s->frames_in, up > 0 ? (double)s->dispatched / up : 0.0,
        (unsigned long long)s->dispatched, (unsigned long long)s->resent, s->queued, (double)s->blocked_ns / 1e9,
        dispatch_daemons_alive(t));
    put(&w, "\"rejected_total\":%llu,\"rejected\":{", (unsigned long long)s->rejected_total);
    for (int r = 1, first = 1; r < PROTOCOL_REJECT_COUNT_; r++)
        if (s->rejected[r] > 0) {
            put(&w, "%s\"%s\":%llu", first ? "" : ",", protocol_reject_name((protocol_reject)r),
                (unsigned long long)s->rejected[r]);
            first = 0;
        }
    put(&w, "},\"dropped_total\":%llu,\"dropped\":{", (unsigned long long)s->dropped_total);
    for (int d = 0; d < DISPATCH_DROP_COUNT_; d++)
        put(&w, "%s\"%s\":%llu", d ? "," : "", drop_names[d], (unsigned long long)s->dropped[d]);
    put(&w, "},\"control_errors\":{");
    for (int e = 1; e < DISPATCH_CONTROL_ERROR_COUNT_; e++)
        put(&w, "%s\"%s\":%llu", e > 1 ? "," : "", dispatch_control_strerror((dispatch_control_error)e),
            (unsigned long long)t->control_errors[e]);
    put(&w, "},\"unknown_peer_messages\":%llu,", (unsigned long long)t->unknown_peers);
    json_daemons(&w, t);
    put(&w, "}");
    return w.used + 1;
}

/* Writes text to path through path.tmp and rename, so a reader never sees
 * half a file. */
static int write_atomically(const char *path, const char *text, size_t bytes)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    int ok = fwrite(text, 1, bytes, f) == bytes;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0)
        return -1;
    return 0;
}

int dispatch_report_json_file(const dispatch_stats *s, const dispatch_daemons *t, double now_s, const char *path)
{
    static char text[64 * 1024];
    size_t need = dispatch_report_json(s, t, now_s, text, sizeof text - 1);
    if (need > sizeof text - 1) {
        errno = ENOSPC;
        return -1;
    }
    strcat(text, "\n");
    return write_atomically(path, text, need);
}

int dispatch_report_prometheus_file(const dispatch_stats *s, const dispatch_daemons *t, double now_s,
                                    const char *path)
{
    static char text[64 * 1024];
    writer w = {text, sizeof text, 0};
    (void)now_s;
    put(&w, "# HELP eigstream_dispatch_frames_in_total Covariance frames received from the source.\n"
            "# TYPE eigstream_dispatch_frames_in_total counter\neigstream_dispatch_frames_in_total %llu\n",
        (unsigned long long)s->frames_in);
    put(&w, "# HELP eigstream_dispatch_rejected_total Frames whose header failed the checks, by reason.\n"
            "# TYPE eigstream_dispatch_rejected_total counter\n");
    for (int r = 1; r < PROTOCOL_REJECT_COUNT_; r++)
        put(&w, "eigstream_dispatch_rejected_total{reason=\"%s\"} %llu\n", protocol_reject_name((protocol_reject)r),
            (unsigned long long)s->rejected[r]);
    put(&w, "# HELP eigstream_dispatch_dropped_total Accepted frames never dispatched, by reason.\n"
            "# TYPE eigstream_dispatch_dropped_total counter\n");
    for (int d = 0; d < DISPATCH_DROP_COUNT_; d++)
        put(&w, "eigstream_dispatch_dropped_total{reason=\"%s\"} %llu\n", drop_names[d],
            (unsigned long long)s->dropped[d]);
    put(&w, "# HELP eigstream_dispatch_queued Frames held for want of credit.\n"
            "# TYPE eigstream_dispatch_queued gauge\neigstream_dispatch_queued %zu\n", s->queued);
    put(&w, "# HELP eigstream_dispatch_daemons_alive Daemons that get frames.\n"
            "# TYPE eigstream_dispatch_daemons_alive gauge\neigstream_dispatch_daemons_alive %zu\n",
        dispatch_daemons_alive(t));
    put(&w, "# HELP eigstream_dispatch_dispatched_total Frames sent to each daemon.\n"
            "# TYPE eigstream_dispatch_dispatched_total counter\n");
    for (size_t i = 0; i < t->count; i++)
        put(&w, "eigstream_dispatch_dispatched_total{daemon=\"%s\"} %llu\n", t->d[i].name,
            (unsigned long long)t->d[i].dispatched);
    put(&w, "# HELP eigstream_dispatch_credit Frames each daemon may still be sent.\n"
            "# TYPE eigstream_dispatch_credit gauge\n");
    for (size_t i = 0; i < t->count; i++)
        put(&w, "eigstream_dispatch_credit{daemon=\"%s\"} %llu\n", t->d[i].name, (unsigned long long)t->d[i].credit);
    if (w.used >= sizeof text) {
        errno = ENOSPC;
        return -1;
    }
    return write_atomically(path, text, w.used);
}
