/*
 * metrics_history.h - the recent past the dashboard plots: one point per
 * metrics interval (the last METRICS_HISTORY_POINTS, 300 s at the default
 * 1 s interval), computed by the metrics thread from the change of the
 * counters and histograms since the previous point, so that serving it
 * costs only a copy.
 */
#ifndef EIGSTREAM_METRICS_HISTORY_H
#define EIGSTREAM_METRICS_HISTORY_H

#include <stdint.h>

#include "metrics.h"

#define METRICS_HISTORY_POINTS 300

/* One interval. Latencies in us; quantiles and max are bucket upper edges
 * (at most 19 % high, see metrics.h) over the frames published in the
 * interval, 0 when none was. */
typedef struct metrics_history_point {
    double uptime_s;
    double in_per_s, out_per_s, dropped_per_s, rejected_per_s;
    double end_to_end_p50_us, end_to_end_p99_us, end_to_end_max_us;
    double stage_mean_us[METRICS_STAGE_END_TO_END]; /* receive, form, solve, publish */
} metrics_history_point;

/* A ring of points plus the totals at the last point. Owned by the metrics
 * thread; zero it (or metrics_history_init) before the first record. */
typedef struct metrics_history {
    metrics_history_point points[METRICS_HISTORY_POINTS];
    int next, count; /* ring position and number of valid points */
    uint64_t last_time_ns, last_dropped, last_rejected;
    uint64_t last_buckets[METRICS_BUCKETS]; /* end to end */
    uint64_t last_count[METRICS_STAGE_COUNT_], last_sum_ns[METRICS_STAGE_COUNT_];
} metrics_history;

void metrics_history_init(metrics_history *h, uint64_t now_ns);
/* Appends the point for the interval that ends at now_ns: rates from m's
 * (already ticked) rate_in/rate_out, the rest from the change since the
 * previous record. */
void metrics_history_record(metrics_history *h, const metrics *m, uint64_t now_ns);
/* Appends "history":{"interval_points":N,"uptime_s":[...],"in_per_s":[...],...}
 * (one array per field of metrics_history_point, oldest first) to w. */
void metrics_history_format_json(const metrics_history *h, metrics_writer *w);

#endif
