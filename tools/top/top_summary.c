/*
 * top_summary.c - the flat summary object of eigstream-top --once --json
 * (contract in top_model.h): every value the view shows, one key each.
 */
#include <math.h>
#include <stdio.h>

#include "top_model.h"

/* Sets key to a new value; a NULL value (out of memory) counts as a failure. */
static int set(json_t *obj, const char *key, json_t *value)
{
    return value == NULL ? -1 : json_object_set_new(obj, key, value);
}

static json_t *count(uint64_t v)
{
    return json_integer((json_int_t)v);
}

/* A finite number, or null. */
static json_t *number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* "<prefix>_<name>" = count, for each reason. */
static int set_reasons(json_t *obj, const char *prefix, const top_reason *r, size_t n)
{
    int fail = 0;
    for (size_t i = 0; i < n; i++) {
        char key[TOP_NAME_MAX + 16];
        snprintf(key, sizeof key, "%s_%s", prefix, r[i].name);
        fail |= set(obj, key, count(r[i].count));
    }
    return fail;
}

static int set_identity(json_t *obj, const top_snapshot *s)
{
    return set(obj, "schema", json_string("eigstream.top.summary.v1")) |
           set(obj, "time_ns", count(s->time_ns)) | set(obj, "uptime_s", number(s->uptime_s)) |
           set(obj, "backend", json_string(s->backend)) | set(obj, "precision", json_string(s->precision)) |
           set(obj, "mode", json_string(s->mode)) | set(obj, "n", json_integer(s->n)) |
           set(obj, "matrices", json_integer(s->matrices));
}

static int set_frames(json_t *obj, const top_snapshot *s)
{
    const top_frames *f = &s->frames;
    const top_queues *q = &s->queues;
    return set(obj, "frames_in", count(f->in)) | set(obj, "frames_out", count(f->out)) |
           set(obj, "frames_late", count(f->late)) | set(obj, "frames_dropped", count(f->dropped)) |
           set(obj, "frames_rejected", count(f->rejected)) | set(obj, "frames_in_flight", count(f->in_flight)) |
           set(obj, "matrices_failed", count(f->matrices_failed)) |
           set(obj, "overflow_blocked", count(f->overflow_blocked)) | set(obj, "in_per_s", number(s->in_per_s)) |
           set(obj, "out_per_s", number(s->out_per_s)) | set(obj, "rejected_per_s", number(s->rejected_per_s)) |
           set(obj, "queue_capacity", count(q->capacity)) | set(obj, "queue_form", count(q->form)) |
           set(obj, "queue_solve", count(q->solve)) | set(obj, "queue_publish", count(q->publish)) |
           set(obj, "frames_free", count(q->frames_free)) | set(obj, "frames_total", count(q->frames_total)) |
           set(obj, "outputs_free", count(q->outputs_free)) | set(obj, "outputs_total", count(q->outputs_total));
}

static int set_latency(json_t *obj, const top_snapshot *s, double deadline_ms, double interval_p99_us)
{
    const top_latency *e = &s->latency[METRICS_STAGE_END_TO_END];
    int fail = set(obj, "end_to_end_count", count(e->count)) | set(obj, "end_to_end_p50_us", number(e->p50_us)) |
               set(obj, "end_to_end_p99_us", number(e->p99_us)) | set(obj, "end_to_end_max_us", number(e->max_us)) |
               set(obj, "end_to_end_interval_p99_us", number(interval_p99_us)) |
               set(obj, "deadline_ms", deadline_ms > 0 ? json_real(deadline_ms) : json_null()) |
               set(obj, "over_deadline", json_boolean(top_over_deadline(e->p99_us, deadline_ms)));
    for (int stage = 0; stage < METRICS_STAGE_END_TO_END; stage++) {
        char key[64];
        const char *name = metrics_stage_name((metrics_stage)stage);
        snprintf(key, sizeof key, "stage_%s_mean_us", name);
        fail |= set(obj, key, number(s->latency[stage].mean_us));
        snprintf(key, sizeof key, "stage_%s_p99_us", name);
        fail |= set(obj, key, number(s->latency[stage].p99_us));
    }
    return fail;
}

json_t *top_summary_json(const top_snapshot *s, double deadline_ms, double interval_p99_us)
{
    json_t *obj = json_object();
    if (obj == NULL)
        return NULL;
    int fail = set_identity(obj, s) | set_frames(obj, s) | set_latency(obj, s, deadline_ms, interval_p99_us) |
               set_reasons(obj, "dropped", s->dropped, s->dropped_count) |
               set_reasons(obj, "rejected", s->rejected, s->rejected_count);
    if (fail) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}
