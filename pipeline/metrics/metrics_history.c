/*
 * metrics_history.c - the ring of per-interval points (metrics_history.h).
 */
#include "metrics_history.h"

#include <stddef.h>
#include <string.h>

#define RELAXED memory_order_relaxed

void metrics_history_init(metrics_history *h, uint64_t now_ns)
{
    memset(h, 0, sizeof *h);
    h->last_time_ns = now_ns;
}

/* The end-to-end quantiles of the interval, from the bucket change. */
static void record_end_to_end(metrics_history *h, const metrics *m, metrics_history_point *pt)
{
    const metrics_histogram *e2e = &m->latency[METRICS_STAGE_END_TO_END];
    uint64_t now[METRICS_BUCKETS], delta[METRICS_BUCKETS];
    metrics_histogram_snapshot(e2e, now);
    int highest = -1;
    for (int i = 0; i < METRICS_BUCKETS; i++) {
        delta[i] = now[i] - h->last_buckets[i];
        if (delta[i] != 0)
            highest = i;
    }
    memcpy(h->last_buckets, now, sizeof now);
    uint64_t max = atomic_load_explicit(&e2e->max_ns, RELAXED);
    pt->end_to_end_p50_us = 1e-3 * (double)metrics_buckets_quantile_ns(delta, 0.50, max);
    pt->end_to_end_p99_us = 1e-3 * (double)metrics_buckets_quantile_ns(delta, 0.99, max);
    if (highest >= 0) {
        uint64_t upper = metrics_bucket_upper_ns(highest);
        pt->end_to_end_max_us = 1e-3 * (double)(upper < max ? upper : max);
    }
}

void metrics_history_record(metrics_history *h, const metrics *m, uint64_t now_ns)
{
    metrics_history_point *pt = &h->points[h->next];
    memset(pt, 0, sizeof *pt);
    pt->uptime_s = (double)(now_ns - m->start_ns) * 1e-9;
    pt->in_per_s = m->rate_in;
    pt->out_per_s = m->rate_out;
    double seconds = (double)(now_ns - h->last_time_ns) * 1e-9;
    uint64_t dropped = metrics_dropped_total(m), rejected = metrics_rejected_total(m);
    if (seconds > 0.0) {
        pt->dropped_per_s = (double)(dropped - h->last_dropped) / seconds;
        pt->rejected_per_s = (double)(rejected - h->last_rejected) / seconds;
    }
    h->last_time_ns = now_ns;
    h->last_dropped = dropped;
    h->last_rejected = rejected;
    record_end_to_end(h, m, pt);
    for (int s = 0; s < METRICS_STAGE_END_TO_END; s++) {
        uint64_t count = atomic_load_explicit(&m->latency[s].count, RELAXED);
        uint64_t sum = atomic_load_explicit(&m->latency[s].sum_ns, RELAXED);
        if (count > h->last_count[s] && sum >= h->last_sum_ns[s])
            pt->stage_mean_us[s] = 1e-3 * (double)(sum - h->last_sum_ns[s]) / (double)(count - h->last_count[s]);
        h->last_count[s] = count;
        h->last_sum_ns[s] = sum;
    }
    h->next = (h->next + 1) % METRICS_HISTORY_POINTS;
    if (h->count < METRICS_HISTORY_POINTS)
        h->count++;
}

/* One field of every point, oldest first, as "name":[...]. */
static void put_series(const metrics_history *h, metrics_writer *w, const char *name, size_t offset)
{
    metrics_put(w, ",\"%s\":[", name);
    int first = (h->next - h->count + METRICS_HISTORY_POINTS) % METRICS_HISTORY_POINTS;
    for (int k = 0; k < h->count; k++) {
        const char *point = (const char *)&h->points[(first + k) % METRICS_HISTORY_POINTS];
        double value;
        memcpy(&value, point + offset, sizeof value);
        metrics_put(w, "%s%.6g", k ? "," : "", value);
    }
    metrics_put(w, "]");
}

void metrics_history_format_json(const metrics_history *h, metrics_writer *w)
{
    static const struct {
        const char *name;
        size_t offset;
    } fields[] = {
        {"uptime_s", offsetof(metrics_history_point, uptime_s)},
        {"in_per_s", offsetof(metrics_history_point, in_per_s)},
        {"out_per_s", offsetof(metrics_history_point, out_per_s)},
        {"dropped_per_s", offsetof(metrics_history_point, dropped_per_s)},
        {"rejected_per_s", offsetof(metrics_history_point, rejected_per_s)},
        {"end_to_end_p50_us", offsetof(metrics_history_point, end_to_end_p50_us)},
        {"end_to_end_p99_us", offsetof(metrics_history_point, end_to_end_p99_us)},
        {"end_to_end_max_us", offsetof(metrics_history_point, end_to_end_max_us)},
        {"receive_mean_us", offsetof(metrics_history_point, stage_mean_us[METRICS_STAGE_RECEIVE])},
        {"form_mean_us", offsetof(metrics_history_point, stage_mean_us[METRICS_STAGE_FORM])},
        {"solve_mean_us", offsetof(metrics_history_point, stage_mean_us[METRICS_STAGE_SOLVE])},
        {"publish_mean_us", offsetof(metrics_history_point, stage_mean_us[METRICS_STAGE_PUBLISH])},
    };
    metrics_put(w, "\"history\":{\"points\":%d", h->count);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        put_series(h, w, fields[i].name, fields[i].offset);
    metrics_put(w, "}");
}
