/*
 * merge_report.c - eigstream-merge's counters, gap ranges and added
 * latency as JSON and Prometheus text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_curve_server.h"
#include "cli_text.h"
#include "merge.h"

static const char *reject_name(int r) { return protocol_reject_name((protocol_reject)r); }

static const char *const drop_names[MERGE_DROP_COUNT_] = {"duplicate", "late", "send_timeout",
                                                               "out_of_range"};

const char *merge_drop_name(merge_drop d)
{
    return (int)d >= 0 && d < MERGE_DROP_COUNT_ ? drop_names[d] : "unknown";
}

void merge_stats_gap(merge_stats *s, uint64_t first, uint64_t last)
{
    if (s->gap_ranges < MERGE_GAPS_KEPT)
        s->gaps[s->gap_ranges] = (merge_gap){first, last};
    s->gap_ranges++;
    s->gap_frames += last - first + 1;
}

void merge_stats_drop(merge_stats *s, merge_drop d)
{
    s->dropped[d]++;
}

void merge_stats_latency(merge_stats *s, double ms)
{
    s->latency_ms[s->latency_count % MERGE_LATENCY_KEPT] = ms;
    s->latency_count++;
    s->latency_sum_ms += ms;
}

/* p50 and p99 (nearest rank) of the latencies kept; 0 without any. */
static void latency_quantiles(const merge_stats *s, double *p50, double *p99)
{
    size_t n = s->latency_count < MERGE_LATENCY_KEPT ? (size_t)s->latency_count : MERGE_LATENCY_KEPT;
    *p50 = *p99 = 0.0;
    double *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (copy == NULL)
        return;
    memcpy(copy, s->latency_ms, n * sizeof *copy);
    *p50 = cli_percentile(copy, n, 50.0);
    *p99 = cli_percentile(copy, n, 99.0);
    free(copy);
}

size_t merge_report_json(const merge_stats *s, const char *const *inputs, double now_s, char *out, size_t out_bytes)
{
    cli_text w = {out, out_bytes, 0};
    double up = now_s - s->started_s, p50, p99;
    latency_quantiles(s, &p50, &p99);
    cli_text_put(&w, "{\"uptime_s\":%.3f,\"frames_in\":%llu,\"frames_out\":%llu,\"frames_per_s\":%.2f,\"held\":%zu,"
            "\"next_seq\":%llu,\"late_published\":%llu,\"epochs\":%llu,\"subscriptions\":%llu,",
        up, (unsigned long long)s->frames_in, (unsigned long long)s->frames_out,
        up > 0 ? (double)s->frames_out / up : 0.0, s->held, (unsigned long long)s->next_seq,
        (unsigned long long)s->late_published, (unsigned long long)s->epochs, (unsigned long long)s->subscriptions);
    cli_text_put(&w, "\"added_latency_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"frames\":%llu},", p50, p99,
        (unsigned long long)s->latency_count);
    cli_text_put(&w, "\"inputs\":[");
    for (size_t i = 0; i < s->inputs; i++)
        cli_text_put(&w, "%s{\"endpoint\":\"%s\",\"frames_in\":%llu}", i ? "," : "", inputs[i],
            (unsigned long long)s->in_by_input[i]);
    cli_text_put(&w, "],\"rejected_total\":%llu,\"rejected\":{", (unsigned long long)s->rejected_total);
    cli_text_json_counts(&w, reject_name, s->rejected, 1, PROTOCOL_REJECT_COUNT_, 1);
    cli_text_put(&w, "},\"dropped\":{");
    for (int d = 0; d < MERGE_DROP_COUNT_; d++)
        cli_text_put(&w, "%s\"%s\":%llu", d ? "," : "", drop_names[d], (unsigned long long)s->dropped[d]);
    cli_text_put(&w, "},\"gap_frames\":%llu,\"gap_ranges\":%llu,\"gaps\":[", (unsigned long long)s->gap_frames,
        (unsigned long long)s->gap_ranges);
    for (uint64_t g = 0; g < s->gap_ranges && g < MERGE_GAPS_KEPT; g++)
        cli_text_put(&w, "%s[%llu,%llu]", g ? "," : "", (unsigned long long)s->gaps[g].first,
            (unsigned long long)s->gaps[g].last);
    cli_text_put(&w, "],\"curve\":{\"inputs\":%s,\"output\":%s},\"auth_rejected\":", s->curve_inputs ? "true" : "false",
                 s->curve_output ? "true" : "false");
    cli_curve_server_json(&w, s->auth_rejected);
    cli_text_put(&w, "}");
    return w.used + 1;
}

int merge_report_json_file(const merge_stats *s, const char *const *inputs, double now_s, const char *path)
{
    static char text[128 * 1024];
    cli_text w = {text, sizeof text, merge_report_json(s, inputs, now_s, text, sizeof text) - 1};
    cli_text_put(&w, "\n");
    return cli_text_write(&w, path);
}

int merge_report_prometheus_file(const merge_stats *s, const char *const *inputs, double now_s, const char *path)
{
    static char text[32 * 1024];
    cli_text w = {text, sizeof text, 0};
    double p50, p99;
    (void)now_s;
    latency_quantiles(s, &p50, &p99);
    cli_text_prometheus_header(&w, "eigstream_merge_frames_in_total", "counter", "Eigenspace frames received, by input.");
    for (size_t i = 0; i < s->inputs; i++)
        cli_text_put(&w, "eigstream_merge_frames_in_total{input=\"%s\"} %llu\n", inputs[i],
                     (unsigned long long)s->in_by_input[i]);
    const cli_prometheus_metric books[] = {
        {"eigstream_merge_frames_out_total", "counter", "Frames republished in sequence order.", s->frames_out},
        {"eigstream_merge_gap_frames_total", "counter", "Sequence numbers never received within the window.",
         s->gap_frames},
        {"eigstream_merge_rejected_total", "counter", "Messages that are not eigenspace frames.", s->rejected_total},
        {"eigstream_merge_epochs_total", "counter",
         "Sequences begun: the first, then one per source restart or confirmed jump.", s->epochs},
        {"eigstream_merge_held", "gauge", "Frames waiting in the reorder window.", s->held},
        {"eigstream_merge_subscriptions", "gauge", "Subscriptions on the output (pub): made, less those withdrawn or whose consumer left.",
         s->subscriptions},
    };
    cli_text_prometheus_many(&w, books, sizeof books / sizeof books[0]);
    cli_text_prometheus_header(&w, "eigstream_merge_dropped_total", "counter",
                               "Received frames not republished in order, by reason.");
    for (int d = 0; d < MERGE_DROP_COUNT_; d++)
        cli_text_put(&w, "eigstream_merge_dropped_total{reason=\"%s\"} %llu\n", drop_names[d],
                     (unsigned long long)s->dropped[d]);
    cli_text_prometheus_header(&w, "eigstream_merge_added_latency_seconds", "summary",
                               "Arrival to republish (quantiles over the last frames, at most 100000).");
    cli_text_put(&w,
                 "eigstream_merge_added_latency_seconds{quantile=\"0.5\"} %.6f\n"
                 "eigstream_merge_added_latency_seconds{quantile=\"0.99\"} %.6f\n"
                 "eigstream_merge_added_latency_seconds_sum %.6f\neigstream_merge_added_latency_seconds_count %llu\n",
                 p50 / 1e3, p99 / 1e3, s->latency_sum_ms / 1e3, (unsigned long long)s->latency_count);
    cli_text_prometheus_header(&w, "eigstream_merge_auth_rejected_total", "counter",
                               "Consumers refused by the output's CURVE handshake or ZAP allow-list, by reason.");
    cli_curve_server_prometheus(&w, "eigstream_merge_auth_rejected_total", "", s->auth_rejected);
    return cli_text_write(&w, path);
}
