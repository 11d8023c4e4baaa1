/*
 * test_top_model.c - eigstream-top's model (tools/top/top_model.h) against
 * the daemon's own document: metrics_format_json writes it from known
 * counters and latencies, top_snapshot_parse must give them back; then the
 * interval quantile, the history, the sparkline, the summary and bad input.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"
#include "test_check.h"
#include "top_model.h"

static const metrics_context context = {.backend = "lapack", .precision = "double", .mode = "signal",
                                        .n = 16, .matrices = 8, .queue_form = 1, .queue_solve = 2,
                                        .queue_publish = 3, .queue_capacity = 4, .frames_free = 10,
                                        .frames_total = 16, .outputs_free = 5, .outputs_total = 6};

/* A metrics struct with known content: end-to-end latencies of 1..100 ms. */
static void fill_metrics(metrics *m, uint64_t e2e_frames)
{
    metrics_init(m, 1000000000ull);
    for (uint64_t i = 1; i <= e2e_frames; i++) {
        metrics_histogram_observe(&m->latency[METRICS_STAGE_END_TO_END], i * 1000000ull);
        metrics_histogram_observe(&m->latency[METRICS_STAGE_SOLVE], 500000ull);
    }
    atomic_store(&m->frames_in, e2e_frames + 2);
    atomic_store(&m->frames_out, e2e_frames);
    atomic_store(&m->frames_late, 3);
    metrics_count_drop(m, METRICS_DROP_OVERFLOW);
    metrics_count_reject(m, PROTOCOL_REJECT_CRC);
    metrics_count_reject(m, PROTOCOL_REJECT_CRC);
    metrics_tick(m, 3000000000ull);
}

static top_error parse_metrics(const metrics *m, top_snapshot *s, char *why)
{
    static char text[65536];
    size_t len = metrics_format_json(m, &context, 1234567890123ull, text, sizeof text);
    CHECK(len > 0, "metrics_format_json: buffer too small");
    return top_snapshot_parse(text, len, s, why, TOP_ERROR_TEXT);
}

static uint64_t reason(const top_reason *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].name, name) == 0)
            return r[i].count;
    return UINT64_MAX;
}

static void test_parse_daemon_document(void)
{
    metrics m;
    fill_metrics(&m, 100);
    top_snapshot s;
    char why[TOP_ERROR_TEXT] = "";
    top_error e = parse_metrics(&m, &s, why);
    CHECK(e == TOP_OK, "parse: %s: %s", top_strerror(e), why);
    CHECK(strcmp(s.backend, "lapack") == 0 && strcmp(s.mode, "signal") == 0 && s.n == 16 && s.matrices == 8,
          "identity %s %s %lld %lld", s.backend, s.mode, (long long)s.n, (long long)s.matrices);
    CHECK(s.time_ns == 1234567890123ull && fabs(s.uptime_s - 2.0) < 1e-9, "time %llu uptime %g",
          (unsigned long long)s.time_ns, s.uptime_s);
    CHECK(s.frames.in == 102 && s.frames.out == 100 && s.frames.late == 3 && s.frames.dropped == 1 &&
              s.frames.rejected == 2 && s.frames.in_flight == 1,
          "frames in %llu out %llu", (unsigned long long)s.frames.in, (unsigned long long)s.frames.out);
    CHECK(fabs(s.in_per_s - 51.0) < 1e-9 && fabs(s.out_per_s - 50.0) < 1e-9, "rates %g %g", s.in_per_s,
          s.out_per_s);
    CHECK(reason(s.dropped, s.dropped_count, metrics_drop_name(METRICS_DROP_OVERFLOW)) == 1 &&
              reason(s.rejected, s.rejected_count, protocol_reject_name(PROTOCOL_REJECT_CRC)) == 2,
          "reasons: %zu dropped, %zu rejected", s.dropped_count, s.rejected_count);
    CHECK(s.dropped_count == METRICS_DROP_COUNT_ && s.rejected_count == PROTOCOL_REJECT_COUNT_ - 1,
          "reason counts %zu %zu", s.dropped_count, s.rejected_count);
    CHECK(s.queues.capacity == 4 && s.queues.form == 1 && s.queues.publish == 3 && s.queues.outputs_total == 6,
          "queues");
    const top_latency *e2e = &s.latency[METRICS_STAGE_END_TO_END];
    const metrics_histogram *h = &m.latency[METRICS_STAGE_END_TO_END];
    CHECK(e2e->count == 100 && fabs(e2e->max_us - 100000.0) < 0.1 && fabs(e2e->mean_us - 50500.0) < 0.1,
          "end to end count %llu max %g mean %g", (unsigned long long)e2e->count, e2e->max_us, e2e->mean_us);
    CHECK(fabs(e2e->p99_us - (double)metrics_histogram_quantile_ns(h, 0.99) / 1e3) < 0.1, "p99 %g", e2e->p99_us);
    CHECK(fabs(s.latency[METRICS_STAGE_SOLVE].mean_us - 500.0) < 0.1, "solve mean %g",
          s.latency[METRICS_STAGE_SOLVE].mean_us);
    uint64_t total = 0;
    for (size_t i = 0; i < s.end_to_end.len; i++)
        total += s.end_to_end.count[i];
    CHECK(total == 100 && s.end_to_end.len > 1, "buckets: %zu, total %llu", s.end_to_end.len,
          (unsigned long long)total);
    /* Over the whole run, the interval quantile is the daemon's quantile. */
    CHECK(fabs(top_interval_quantile_us(NULL, &s, 0.99) - e2e->p99_us) < 0.1, "whole-run interval p99 %g",
          top_interval_quantile_us(NULL, &s, 0.99));
}

/* 100 frames of 1..100 ms, then 50 more of 1 ms: the interval p99 is ~1 ms. */
static void test_interval_quantile(void)
{
    metrics m;
    fill_metrics(&m, 100);
    top_snapshot before, after;
    char why[TOP_ERROR_TEXT];
    CHECK(parse_metrics(&m, &before, why) == TOP_OK, "before: %s", why);
    for (int i = 0; i < 50; i++)
        metrics_histogram_observe(&m.latency[METRICS_STAGE_END_TO_END], 1000000ull);
    CHECK(parse_metrics(&m, &after, why) == TOP_OK, "after: %s", why);
    double q = top_interval_quantile_us(&before, &after, 0.99);
    double edge = (double)metrics_bucket_upper_ns(metrics_bucket_index(1000000ull)) / 1e3;
    CHECK(q == edge, "interval p99 %g us, want the 1 ms bucket's edge %g", q, edge);
    CHECK(isnan(top_interval_quantile_us(&after, &after, 0.99)), "no new frames: NAN");
    CHECK(isnan(top_interval_quantile_us(&after, &before, 0.99)), "counts going down (restart): NAN");
}

static void test_history_and_sparkline(void)
{
    static top_history h;
    for (int i = 0; i < 8; i++)
        top_history_push(&h, (double)i, (double)(i + 1));
    top_history_push(&h, 8.0, NAN);
    char buf[64];
    size_t glyphs = top_sparkline(&h, 20, 8.0, 1, buf, sizeof buf);
    CHECK(glyphs == 9 && strcmp(buf, "_.-=+*#@ ") == 0, "ascii sparkline '%s' (%zu)", buf, glyphs);
    glyphs = top_sparkline(&h, 2, 0.0, 0, buf, sizeof buf);
    CHECK(glyphs == 2 && strcmp(buf, "\u2588 ") == 0, "unicode sparkline '%s'", buf);
    glyphs = top_sparkline(&h, 20, 8.0, 0, buf, 7);
    CHECK(glyphs == 2 && strlen(buf) == 6, "cut at a whole glyph: %zu glyphs, %zu bytes", glyphs, strlen(buf));
    CHECK(top_history_max(&h) == 8.0, "max %g", top_history_max(&h));
    top_history_push(&h, 68.5, 1.0); /* forgets everything older than 8.5 s */
    CHECK(h.len == 1 && h.value[0] == 1.0, "history after a minute: %zu points", h.len);
    for (int i = 0; i < TOP_HISTORY_MAX + 5; i++)
        top_history_push(&h, 100.0 + i * 0.001, 2.0);
    CHECK(h.len == TOP_HISTORY_MAX, "full history %zu", h.len);
    CHECK(top_over_deadline(1500.0, 1.0) && !top_over_deadline(900.0, 1.0) && !top_over_deadline(1e9, 0.0),
          "deadline");
}

static void test_summary(void)
{
    metrics m;
    fill_metrics(&m, 100);
    top_snapshot s;
    char why[TOP_ERROR_TEXT];
    CHECK(parse_metrics(&m, &s, why) == TOP_OK, "parse: %s", why);
    json_t *j = top_summary_json(&s, 50.0, NAN);
    CHECK(j != NULL, "summary");
    if (j == NULL)
        return;
    CHECK(json_integer_value(json_object_get(j, "frames_in")) == 102, "frames_in");
    CHECK(json_integer_value(json_object_get(j, "rejected_crc_mismatch")) == 2, "rejected_crc_mismatch");
    CHECK(json_integer_value(json_object_get(j, "dropped_overflow")) == 1, "dropped_overflow");
    CHECK(json_is_true(json_object_get(j, "over_deadline")), "p99 ~100 ms over a 50 ms deadline");
    CHECK(json_is_null(json_object_get(j, "end_to_end_interval_p99_us")), "NAN as null");
    CHECK(fabs(json_real_value(json_object_get(j, "stage_solve_mean_us")) - 500.0) < 0.1, "stage_solve_mean_us");
    CHECK(strcmp(json_string_value(json_object_get(j, "backend")), "lapack") == 0, "backend");
    CHECK(json_integer_value(json_object_get(j, "queue_capacity")) == 4, "queue_capacity");
    json_decref(j);
}

static void test_bad_documents(void)
{
    static const char *const cases[][2] = {
        {"{\"schema\":", "line 1"},
        {"[1,2]", "schema: missing"},
        {"{\"schema\":\"other.v2\"}", "schema: not eigstream.metrics.v1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        top_snapshot s;
        char why[TOP_ERROR_TEXT] = "";
        top_error e = top_snapshot_parse(cases[i][0], strlen(cases[i][0]), &s, why, sizeof why);
        CHECK(e != TOP_OK && strstr(why, cases[i][1]) != NULL, "case %zu: %s: '%s'", i, top_strerror(e), why);
    }
    /* A real document with one field of the wrong type names that field. */
    metrics m;
    fill_metrics(&m, 3);
    char text[65536];
    size_t len = metrics_format_json(&m, &context, 1, text, sizeof text);
    char *in = strstr(text, "\"in\":");
    if (in != NULL)
        memcpy(in, "\"in\":\"", 6); /* "in":"5,... : still JSON? no: the string runs on */
    top_snapshot s;
    char why[TOP_ERROR_TEXT] = "";
    CHECK(top_snapshot_parse(text, len, &s, why, sizeof why) == TOP_EJSON, "broken document: %s", why);
    len = metrics_format_json(&m, &context, 1, text, sizeof text);
    char *n = strstr(text, "\"n\":16");
    if (n != NULL)
        memcpy(n, "\"n\":-1", 6);
    CHECK(top_snapshot_parse(text, len, &s, why, sizeof why) == TOP_ESCHEMA && strcmp(why, "n: not a count") == 0,
          "negative n: '%s'", why);
}

int main(void)
{
    test_parse_daemon_document();
    test_interval_quantile();
    test_history_and_sparkline();
    test_summary();
    test_bad_documents();
    return test_check_report("test_top_model");
}
