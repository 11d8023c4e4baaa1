/*
 * top_model.c - the metrics document as a struct, its summary, the p99
 * history and its sparkline (contracts in top_model.h).
 */
#include "top_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *top_strerror(top_error e)
{
    switch (e) {
    case TOP_OK: return "ok";
    case TOP_EJSON: return "not JSON";
    case TOP_ESCHEMA: return "not an eigstream.metrics.v1 document";
    case TOP_ENOMEM: return "out of memory";
    }
    return "unknown error";
}

/* Where a parse failed: the first problem wins. */
typedef struct top_reader {
    char *why;
    size_t cap;
    int failed;
} top_reader;

static void reader_fail(top_reader *r, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void reader_fail(top_reader *r, const char *format, ...)
{
    if (r->failed++ || r->why == NULL || r->cap == 0)
        return;
    va_list ap;
    va_start(ap, format);
    vsnprintf(r->why, r->cap, format, ap);
    va_end(ap);
}

/* The member key of obj (group: its name in messages), or NULL after
 * recording why when obj is not an object or key is missing. */
static json_t *member(top_reader *r, json_t *obj, const char *group, const char *key)
{
    json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (v == NULL)
        reader_fail(r, "%s%s%s: missing", group, *group ? "." : "", key);
    return v;
}

static uint64_t read_u64(top_reader *r, json_t *obj, const char *group, const char *key)
{
    json_t *v = member(r, obj, group, key);
    if (v != NULL && (!json_is_integer(v) || json_integer_value(v) < 0))
        reader_fail(r, "%s%s%s: not a count", group, *group ? "." : "", key);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v) : 0;
}

static double read_number(top_reader *r, json_t *obj, const char *group, const char *key)
{
    json_t *v = member(r, obj, group, key);
    if (v != NULL && !json_is_number(v))
        reader_fail(r, "%s%s%s: not a number", group, *group ? "." : "", key);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static void read_name(top_reader *r, json_t *obj, const char *key, char out[TOP_NAME_MAX])
{
    json_t *v = member(r, obj, "", key);
    if (v != NULL && !json_is_string(v))
        reader_fail(r, "%s: not a string", key);
    snprintf(out, TOP_NAME_MAX, "%s", json_is_string(v) ? json_string_value(v) : "");
}

/* The counts of an object of reasons ("dropped", "rejected"), in document order. */
static size_t read_reasons(top_reader *r, json_t *doc, const char *group, top_reason *out)
{
    json_t *obj = member(r, doc, "", group), *v;
    const char *key;
    size_t count = 0;
    if (obj != NULL && !json_is_object(obj))
        reader_fail(r, "%s: not an object", group);
    json_object_foreach(obj, key, v) {
        if (count == TOP_REASONS_MAX)
            break;
        snprintf(out[count].name, TOP_NAME_MAX, "%s", key);
        out[count++].count = read_u64(r, obj, group, key);
    }
    return count;
}

/* buckets: [[upper_us, count], ...] ascending, -1 for the unbounded one. */
static void read_buckets(top_reader *r, json_t *hist, const char *group, top_buckets *b)
{
    json_t *list = member(r, hist, group, "buckets"), *pair;
    size_t i;
    if (list != NULL && !json_is_array(list))
        reader_fail(r, "%s.buckets: not an array", group);
    json_array_foreach(list, i, pair) {
        json_t *upper = json_array_get(pair, 0), *count = json_array_get(pair, 1);
        if (b->len == METRICS_BUCKETS || json_array_size(pair) != 2 || !json_is_number(upper) ||
            !json_is_integer(count) || json_integer_value(count) < 0) {
            reader_fail(r, "%s.buckets[%zu]: not an [upper_us, count] pair", group, i);
            return;
        }
        b->upper_us[b->len] = json_number_value(upper);
        b->count[b->len++] = (uint64_t)json_integer_value(count);
    }
}

static void read_latency(top_reader *r, json_t *doc, top_snapshot *s)
{
    json_t *all = member(r, doc, "", "latency_us");
    for (int stage = 0; stage < METRICS_STAGE_COUNT_; stage++) {
        char group[64];
        const char *name = metrics_stage_name((metrics_stage)stage);
        snprintf(group, sizeof group, "latency_us.%s", name);
        json_t *h = member(r, all, "latency_us", name);
        top_latency *l = &s->latency[stage];
        l->count = read_u64(r, h, group, "count");
        l->mean_us = read_number(r, h, group, "mean");
        l->p50_us = read_number(r, h, group, "p50");
        l->p90_us = read_number(r, h, group, "p90");
        l->p99_us = read_number(r, h, group, "p99");
        l->max_us = read_number(r, h, group, "max");
        if (stage == METRICS_STAGE_END_TO_END)
            read_buckets(r, h, group, &s->end_to_end);
    }
}

static void read_counts(top_reader *r, json_t *doc, top_snapshot *s)
{
    json_t *f = member(r, doc, "", "frames"), *rates = member(r, doc, "", "rates");
    json_t *q = member(r, doc, "", "queues");
    s->frames = (top_frames){read_u64(r, f, "frames", "in"), read_u64(r, f, "frames", "out"),
                             read_u64(r, f, "frames", "late"), read_u64(r, f, "frames", "dropped"),
                             read_u64(r, f, "frames", "rejected"), read_u64(r, f, "frames", "in_flight"),
                             read_u64(r, f, "frames", "matrices_failed"),
                             read_u64(r, f, "frames", "overflow_blocked")};
    s->in_per_s = read_number(r, rates, "rates", "in_per_s");
    s->out_per_s = read_number(r, rates, "rates", "out_per_s");
    s->rejected_per_s = read_number(r, rates, "rates", "rejected_per_s");
    s->queues = (top_queues){read_u64(r, q, "queues", "capacity"), read_u64(r, q, "queues", "form"),
                             read_u64(r, q, "queues", "solve"), read_u64(r, q, "queues", "publish"),
                             read_u64(r, q, "queues", "frames_free"), read_u64(r, q, "queues", "frames_total"),
                             read_u64(r, q, "queues", "outputs_free"), read_u64(r, q, "queues", "outputs_total")};
}

top_error top_snapshot_parse(const char *text, size_t len, top_snapshot *s, char *why, size_t cap)
{
    memset(s, 0, sizeof *s);
    top_reader r = {why, cap, 0};
    json_error_t error;
    json_t *doc = json_loadb(text, len, 0, &error);
    if (doc == NULL) {
        reader_fail(&r, "line %d column %d: %s", error.line, error.column, error.text);
        return TOP_EJSON;
    }
    json_t *schema = member(&r, doc, "", "schema");
    if (schema != NULL && (!json_is_string(schema) || strcmp(json_string_value(schema), "eigstream.metrics.v1") != 0))
        reader_fail(&r, "schema: not eigstream.metrics.v1");
    s->time_ns = read_u64(&r, doc, "", "time_ns");
    s->uptime_s = read_number(&r, doc, "", "uptime_s");
    read_name(&r, doc, "backend", s->backend);
    read_name(&r, doc, "precision", s->precision);
    read_name(&r, doc, "mode", s->mode);
    s->n = (int64_t)read_u64(&r, doc, "", "n");
    s->matrices = (int64_t)read_u64(&r, doc, "", "matrices");
    read_counts(&r, doc, s);
    s->dropped_count = read_reasons(&r, doc, "dropped", s->dropped);
    s->rejected_count = read_reasons(&r, doc, "rejected", s->rejected);
    read_latency(&r, doc, s);
    json_decref(doc);
    return r.failed ? TOP_ESCHEMA : TOP_OK;
}

/* Count of cur's bucket i minus previous's bucket of the same edge (0 when
 * previous lacks it); -1 when that goes below zero. */
static int64_t bucket_delta(const top_buckets *previous, const top_buckets *cur, size_t i)
{
    uint64_t before = 0;
    for (size_t j = 0; previous != NULL && j < previous->len; j++)
        if (previous->upper_us[j] == cur->upper_us[i])
            before = previous->count[j];
    return cur->count[i] >= before ? (int64_t)(cur->count[i] - before) : -1;
}

double top_interval_quantile_us(const top_snapshot *previous, const top_snapshot *cur, double q)
{
    const top_buckets *b = &cur->end_to_end, *pb = previous ? &previous->end_to_end : NULL;
    int64_t delta[METRICS_BUCKETS];
    uint64_t total = 0;
    for (size_t i = 0; i < b->len; i++) {
        if ((delta[i] = bucket_delta(pb, b, i)) < 0)
            return NAN;
        total += (uint64_t)delta[i];
    }
    uint64_t before = previous ? previous->latency[METRICS_STAGE_END_TO_END].count : 0;
    if (total == 0 || cur->latency[METRICS_STAGE_END_TO_END].count < before)
        return NAN;
    double rank = ceil(q * (double)total);
    uint64_t seen = 0;
    double max_us = cur->latency[METRICS_STAGE_END_TO_END].max_us;
    for (size_t i = 0; i < b->len; i++) {
        seen += (uint64_t)delta[i];
        if ((double)seen >= rank && seen > 0)
            return b->upper_us[i] < 0 || b->upper_us[i] > max_us ? max_us : b->upper_us[i];
    }
    return max_us;
}

void top_history_push(top_history *h, double t_s, double value)
{
    size_t keep_from = 0;
    while (keep_from < h->len && h->t_s[keep_from] < t_s - TOP_HISTORY_SPAN_S)
        keep_from++;
    if (h->len - keep_from == TOP_HISTORY_MAX)
        keep_from++;
    if (keep_from > 0) {
        memmove(h->t_s, h->t_s + keep_from, (h->len - keep_from) * sizeof *h->t_s);
        memmove(h->value, h->value + keep_from, (h->len - keep_from) * sizeof *h->value);
        h->len -= keep_from;
    }
    h->t_s[h->len] = t_s;
    h->value[h->len++] = value;
}

double top_history_max(const top_history *h)
{
    double max = NAN;
    for (size_t i = 0; i < h->len; i++)
        if (isfinite(h->value[i]) && !(h->value[i] <= max))
            max = h->value[i];
    return max;
}

size_t top_sparkline(const top_history *h, size_t width, double top, int ascii, char *buf, size_t cap)
{
    static const char *const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588"};
    static const char levels[8] = {'_', '.', '-', '=', '+', '*', '#', '@'};
    if (!(top > 0))
        top = top_history_max(h);
    size_t first = h->len > width ? h->len - width : 0, glyphs = 0, used = 0;
    if (cap > 0)
        buf[0] = '\0';
    for (size_t i = first; i < h->len; i++) {
        double v = h->value[i];
        int level = -1; /* a space */
        if (isfinite(v) && top > 0)
            level = v >= top ? 7 : v <= 0 ? 0 : (int)ceil(v / top * 8.0) - 1; /* 8 equal steps up to top */
        level = level > 7 ? 7 : level;
        char glyph[4] = {level < 0 ? ' ' : levels[level], '\0'};
        const char *text = level >= 0 && !ascii ? blocks[level] : glyph;
        size_t bytes = strlen(text);
        if (used + bytes + 1 > cap)
            break;
        memcpy(buf + used, text, bytes + 1);
        used += bytes;
        glyphs++;
    }
    return glyphs;
}

int top_over_deadline(double latency_us, double deadline_ms)
{
    return deadline_ms > 0 && latency_us > deadline_ms * 1e3;
}
