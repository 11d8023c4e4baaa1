/*
 * top_model.h - the model behind eigstream-top: the daemon's metrics
 * document (schema eigstream.metrics.v1, docs/daemon.md, written by
 * metrics_format_json) parsed with jansson into a struct, the p99 history
 * of the last minute, the flat summary of --once --json, and the text
 * sparkline. No terminal here (top_view.h draws), so all of it is
 * unit-testable (tests/tools/test_top_model.c).
 *
 *     top_snapshot s;
 *     char why[TOP_ERROR_TEXT];
 *     if (top_snapshot_parse(text, len, &s, why, sizeof why) != TOP_OK)
 *         ...                                   // why: "frames.in: not an integer"
 *     double p99 = top_interval_quantile_us(&previous, &s, 0.99);   // since the previous document
 *     top_history_push(&h, now_s, p99);
 *
 * Never prints, aborts or exits; allocates only in top_summary_json (the
 * json_t the caller owns).
 */
#ifndef EIGSTREAM_TOP_MODEL_H
#define EIGSTREAM_TOP_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h" /* metrics_stage, METRICS_BUCKETS: the document's stages and buckets */

#define TOP_NAME_MAX 32     /* backend, precision, mode and reason names, NUL included */
#define TOP_REASONS_MAX 32  /* drop or reject reasons kept (the daemon has 4 and ~16) */
#define TOP_HISTORY_MAX 1200 /* p99 points: a minute at the 50 ms minimum interval */
#define TOP_HISTORY_SPAN_S 60.0
#define TOP_ERROR_TEXT 160

typedef enum top_error {
    TOP_OK = 0,
    TOP_EJSON,   /* not JSON */
    TOP_ESCHEMA, /* JSON, but not an eigstream.metrics.v1 document (a field missing or mistyped) */
    TOP_ENOMEM
} top_error;

const char *top_strerror(top_error e);

/* One stage's latency over the whole run, microseconds. */
typedef struct top_latency {
    uint64_t count;
    double mean_us, p50_us, p90_us, p99_us, max_us;
} top_latency;

/* Non-empty histogram buckets, ascending: upper edge in us (-1: unbounded), count. */
typedef struct top_buckets {
    size_t len;
    double upper_us[METRICS_BUCKETS];
    uint64_t count[METRICS_BUCKETS];
} top_buckets;

typedef struct top_reason {
    char name[TOP_NAME_MAX];
    uint64_t count;
} top_reason;

typedef struct top_queues {
    uint64_t capacity, form, solve, publish;
    uint64_t frames_free, frames_total, outputs_free, outputs_total;
} top_queues;

typedef struct top_frames {
    uint64_t in, out, late, dropped, rejected, in_flight, matrices_failed, overflow_blocked;
} top_frames;

/* One metrics document. */
typedef struct top_snapshot {
    uint64_t time_ns; /* the daemon's wall clock when it wrote the document */
    double uptime_s;
    char backend[TOP_NAME_MAX], precision[TOP_NAME_MAX], mode[TOP_NAME_MAX];
    int64_t n, matrices;
    top_frames frames;
    double in_per_s, out_per_s, rejected_per_s;
    top_reason dropped[TOP_REASONS_MAX], rejected[TOP_REASONS_MAX]; /* in document order */
    size_t dropped_count, rejected_count;
    top_queues queues;
    top_latency latency[METRICS_STAGE_COUNT_]; /* by metrics_stage */
    top_buckets end_to_end;                    /* buckets of latency[METRICS_STAGE_END_TO_END] */
} top_snapshot;

/* Parses the document text[0..len) into *s (zeroed first). Reasons beyond
 * TOP_REASONS_MAX and names beyond TOP_NAME_MAX - 1 bytes are cut. Returns
 * TOP_OK, or TOP_EJSON / TOP_ESCHEMA with why (cap bytes, may be NULL)
 * naming the position or the field. */
top_error top_snapshot_parse(const char *text, size_t len, top_snapshot *s, char *why, size_t cap);

/* The end-to-end quantile q in [0, 1] of the frames counted between two
 * documents of one run, in us: the upper edge of the bucket where the
 * cumulative count of the difference reaches q (the daemon's own rule),
 * clamped to cur's maximum. previous NULL: over cur's whole run. NAN when
 * no frame finished in between or the counts went down (a restart). */
double top_interval_quantile_us(const top_snapshot *previous, const top_snapshot *cur, double q);

/* The last TOP_HISTORY_SPAN_S seconds of one value (NAN: no data then). */
typedef struct top_history {
    double t_s[TOP_HISTORY_MAX]; /* monotonic seconds, ascending */
    double value[TOP_HISTORY_MAX];
    size_t len;
} top_history;

/* Appends (t_s, value) and forgets points older than t_s - TOP_HISTORY_SPAN_S
 * (and the oldest when full). t_s must not go backwards. */
void top_history_push(top_history *h, double t_s, double value);

/* Largest finite value of the history, or NAN when there is none. */
double top_history_max(const top_history *h);

/* Writes a sparkline of the last `width` points of h into buf (cap bytes,
 * NUL-terminated, cut at a whole glyph when short): one glyph per point,
 * scaled from 0 to top (<= 0 or NAN: the history's max), a space for NAN.
 * Unicode blocks U+2581..U+2588 (3 bytes each in UTF-8) unless ascii, then
 * "_.-=+*#@". Returns the glyphs written. */
size_t top_sparkline(const top_history *h, size_t width, double top, int ascii, char *buf, size_t cap);

/* The end-to-end deadline state of a latency in us against deadline_ms
 * (<= 0: none): 1 when over, else 0. */
int top_over_deadline(double latency_us, double deadline_ms);

/* The flat object --once --json prints: what the view shows, one key per
 * value ("frames_in", "end_to_end_p99_us", "stage_solve_mean_us",
 * "dropped_overflow", "queue_form"...). interval_p99_us: NAN when unknown
 * (written as null). Returns a new reference, or NULL when out of memory. */
json_t *top_summary_json(const top_snapshot *s, double deadline_ms, double interval_p99_us);

#endif
