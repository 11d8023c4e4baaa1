/*
 * dispatch_report.c - eigstream-dispatch's metrics as JSON (the periodic
 * line, --json) and Prometheus text exposition (--prometheus, for
 * node_exporter's textfile collector).
 */
#include <stdio.h>

#include "cli_curve_server.h"
#include "cli_text.h"
#include "dispatch.h"

static const char *reject_name(int r) { return protocol_reject_name((protocol_reject)r); }

static const char *const drop_names[DISPATCH_DROP_COUNT_] = {"queue_full", "shutdown", "fragment_orphaned",
                                                             "frame_incomplete"};

const char *dispatch_drop_name(dispatch_drop d)
{
    return (int)d >= 0 && d < DISPATCH_DROP_COUNT_ ? drop_names[d] : "unknown";
}

static const char *const side_names[DISPATCH_SIDE_COUNT_] = {"front", "back"};

const char *dispatch_side_name(dispatch_side e)
{
    return (int)e >= 0 && e < DISPATCH_SIDE_COUNT_ ? side_names[e] : "unknown";
}

/* "curve":BOOL,"auth_rejected":{"front":{REASON:N,..},"back":{..}}, */
static void json_auth(cli_text *w, const dispatch_stats *s)
{
    cli_text_put(w, "\"curve\":%s,\"auth_rejected\":{", s->curve ? "true" : "false");
    for (int e = 0; e < DISPATCH_SIDE_COUNT_; e++) {
        cli_text_put(w, "%s\"%s\":", e ? "," : "", side_names[e]);
        cli_curve_server_json(w, s->auth_rejected[e]);
    }
    cli_text_put(w, "},");
}

static void json_daemons(cli_text *w, const dispatch_daemons *t)
{
    cli_text_put(w, "\"daemons\":[");
    for (size_t i = 0; i < t->count; i++) {
        const dispatch_daemon *d = &t->d[i];
        cli_text_put(w, "%s{\"id\":\"%s\",\"state\":\"%s\",\"credit\":%llu,\"dispatched\":%llu,\"frames\":%llu,"
                     "\"redispatched\":%llu,\"readies\":%llu",
                     i ? "," : "", d->name, dispatch_death_name(d->state), (unsigned long long)d->credit,
                     (unsigned long long)d->dispatched, (unsigned long long)d->frames,
                     (unsigned long long)d->redispatched,
                     (unsigned long long)d->readies);
        if (d->frames > 0)
            cli_text_put(w, ",\"first_seq\":%llu,\"last_seq\":%llu", (unsigned long long)d->first_seq,
                (unsigned long long)d->last_seq);
        cli_text_put(w, "}");
    }
    cli_text_put(w, "]");
}

size_t dispatch_report_json(const dispatch_stats *s, const dispatch_daemons *t, double now_s, char *out,
                            size_t out_bytes)
{
    cli_text w = {out, out_bytes, 0};
    double up = now_s - s->started_s;
    cli_text_put(&w, "{\"uptime_s\":%.3f,\"frames_in\":%llu,\"frames_per_s\":%.2f,\"dispatched\":%llu,\"resent\":%llu,"
            "\"redispatched\":%llu,\"redispatch_expired\":%llu,\"queued\":%zu,\"queued_frames\":%zu,\"blocked_s\":%.3f,\"daemons_alive\":%zu,",
        up, (unsigned long long)s->frames_in, up > 0 ? (double)s->dispatched / up : 0.0,
        (unsigned long long)s->dispatched, (unsigned long long)s->resent, (unsigned long long)s->redispatched,
        (unsigned long long)s->redispatch_expired, s->queued, s->queued_frames,
        (double)s->blocked_ns / 1e9, dispatch_daemons_alive(t));
    cli_text_put(&w, "\"rejected_total\":%llu,\"rejected\":{", (unsigned long long)s->rejected_total);
    cli_text_json_counts(&w, reject_name, s->rejected, 1, PROTOCOL_REJECT_COUNT_, 1);
    cli_text_put(&w, "},\"dropped_total\":%llu,\"dropped\":{", (unsigned long long)s->dropped_total);
    for (int d = 0; d < DISPATCH_DROP_COUNT_; d++)
        cli_text_put(&w, "%s\"%s\":%llu", d ? "," : "", drop_names[d], (unsigned long long)s->dropped[d]);
    const dispatch_fragment_stats *f = &s->fragmented;
    cli_text_put(&w, "},\"fragmented_frames\":{\"started\":%llu,\"dispatched\":%llu,\"in_progress\":%llu",
                 (unsigned long long)f->started, (unsigned long long)f->dispatched,
                 (unsigned long long)f->in_progress);
    for (int e = 0; e < DISPATCH_END_COUNT_; e++)
        cli_text_put(&w, ",\"%s\":%llu", dispatch_frame_end_name((dispatch_frame_end)e),
                     (unsigned long long)f->ended[e]);
    cli_text_put(&w, "},\"control_errors\":{");
    for (int e = 1; e < DISPATCH_CONTROL_ERROR_COUNT_; e++)
        cli_text_put(&w, "%s\"%s\":%llu", e > 1 ? "," : "", dispatch_control_strerror((dispatch_control_error)e),
            (unsigned long long)t->control_errors[e]);
    cli_text_put(&w, "},\"unknown_peer_messages\":%llu,\"table_full\":%llu,\"credit_capped\":%llu,"
                 "\"departed\":{\"daemons\":%llu,\"dispatched\":%llu,\"frames\":%llu},",
                 (unsigned long long)t->unknown_peers, (unsigned long long)t->table_full,
                 (unsigned long long)t->credit_capped, (unsigned long long)t->departed.daemons,
                 (unsigned long long)t->departed.dispatched, (unsigned long long)t->departed.frames);
    json_auth(&w, s);
    json_daemons(&w, t);
    cli_text_put(&w, "}");
    return w.used + 1;
}

int dispatch_report_json_file(const dispatch_stats *s, const dispatch_daemons *t, double now_s, const char *path)
{
    static char text[64 * 1024];
    cli_text w = {text, sizeof text, dispatch_report_json(s, t, now_s, text, sizeof text) - 1};
    cli_text_put(&w, "\n");
    return cli_text_write(&w, path);
}

int dispatch_report_prometheus_file(const dispatch_stats *s, const dispatch_daemons *t, double now_s,
                                    const char *path)
{
    static char text[64 * 1024];
    cli_text w = {text, sizeof text, 0};
    (void)now_s;
    cli_text_prometheus_one(&w, "eigstream_dispatch_frames_in_total", "counter",
                            "Messages received from the source: a whole frame or one fragment each.",
                            (unsigned long long)s->frames_in);
    cli_text_prometheus_header(&w, "eigstream_dispatch_rejected_total", "counter",
                               "Messages whose header failed the checks, by reason.");
    for (int r = 1; r < PROTOCOL_REJECT_COUNT_; r++)
        cli_text_put(&w, "eigstream_dispatch_rejected_total{reason=\"%s\"} %llu\n",
                     protocol_reject_name((protocol_reject)r), (unsigned long long)s->rejected[r]);
    cli_text_prometheus_header(&w, "eigstream_dispatch_dropped_total", "counter",
                               "Accepted messages never dispatched, by reason.");
    for (int d = 0; d < DISPATCH_DROP_COUNT_; d++)
        cli_text_put(&w, "eigstream_dispatch_dropped_total{reason=\"%s\"} %llu\n", drop_names[d],
                     (unsigned long long)s->dropped[d]);
    cli_text_prometheus_one(&w, "eigstream_dispatch_queued", "gauge", "Messages held for want of credit.",
                            (unsigned long long)s->queued);
    cli_text_prometheus_one(&w, "eigstream_dispatch_queued_frames", "gauge",
                            "Frames held for want of credit (a fragmented one with its fragments is one).",
                            (unsigned long long)s->queued_frames);
    const dispatch_fragment_stats *f = &s->fragmented;
    cli_text_prometheus_one(&w, "eigstream_dispatch_fragmented_frames_started_total", "counter",
                            "Fragmented frames whose first fragment was accepted.",
                            (unsigned long long)f->started);
    cli_text_prometheus_header(&w, "eigstream_dispatch_fragmented_frames_total", "counter",
                               "Fragmented frames by outcome: dispatched whole to one daemon, or ended short.");
    cli_text_put(&w, "eigstream_dispatch_fragmented_frames_total{outcome=\"dispatched\"} %llu\n",
                 (unsigned long long)f->dispatched);
    for (int e = 0; e < DISPATCH_END_COUNT_; e++)
        cli_text_put(&w, "eigstream_dispatch_fragmented_frames_total{outcome=\"%s\"} %llu\n",
                     dispatch_frame_end_name((dispatch_frame_end)e), (unsigned long long)f->ended[e]);
    cli_text_prometheus_one(&w, "eigstream_dispatch_fragmented_frames_in_progress", "gauge",
                            "Fragmented frames held, or routed and not yet at their end.",
                            (unsigned long long)f->in_progress);
    cli_text_prometheus_one(&w, "eigstream_dispatch_daemons_alive", "gauge", "Daemons that get frames.",
                            (unsigned long long)dispatch_daemons_alive(t));
    cli_text_prometheus_header(&w, "eigstream_dispatch_dispatched_total", "counter",
                               "Messages sent to each daemon: whole frames and fragments.");
    for (size_t i = 0; i < t->count; i++)
        cli_text_put(&w, "eigstream_dispatch_dispatched_total{daemon=\"%s\"} %llu\n", t->d[i].name,
                     (unsigned long long)t->d[i].dispatched);
    cli_text_prometheus_header(&w, "eigstream_dispatch_frames_total", "counter",
                               "Frames given to each daemon, one credit each (a fragmented one at its first fragment).");
    for (size_t i = 0; i < t->count; i++)
        cli_text_put(&w, "eigstream_dispatch_frames_total{daemon=\"%s\"} %llu\n", t->d[i].name,
                     (unsigned long long)t->d[i].frames);
    cli_text_prometheus_header(&w, "eigstream_dispatch_credit", "gauge", "Frames each daemon may still be sent.");
    for (size_t i = 0; i < t->count; i++)
        cli_text_put(&w, "eigstream_dispatch_credit{daemon=\"%s\"} %llu\n", t->d[i].name,
                     (unsigned long long)t->d[i].credit);
    const cli_prometheus_metric books[] = {
        {"eigstream_dispatch_redispatched_total", "counter",
         "Frames of a daemon that left sent once more, to another daemon (--redispatch-ms).", s->redispatched},
        {"eigstream_dispatch_redispatch_expired_total", "counter",
         "Frames of a daemon that left whose --redispatch-ms passed before another had credit.",
         s->redispatch_expired},
        {"eigstream_dispatch_credit_capped_total", "counter", "Credit a daemon asked for above --max-credit, not granted.",
         t->credit_capped},
        {"eigstream_dispatch_table_full_total", "counter", "READYs refused because every daemon entry was alive.",
         t->table_full},
        {"eigstream_dispatch_departed_daemons_total", "counter", "Daemon entries reclaimed after their daemon left.",
         t->departed.daemons},
    };
    cli_text_prometheus_many(&w, books, sizeof books / sizeof books[0]);
    cli_text_prometheus_header(&w, "eigstream_dispatch_auth_rejected_total", "counter",
                               "Peers refused by an end's CURVE handshake or ZAP allow-list, by end and reason.");
    for (int e = 0; e < DISPATCH_SIDE_COUNT_; e++) {
        char labels[32];
        snprintf(labels, sizeof labels, "end=\"%s\",", side_names[e]);
        cli_curve_server_prometheus(&w, "eigstream_dispatch_auth_rejected_total", labels, s->auth_rejected[e]);
    }
    return cli_text_write(&w, path);
}
