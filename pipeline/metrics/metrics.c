/*
 * metrics.c - lock-free counters, log-bucket histograms, rates and the JSON
 * document (see metrics.h).
 */
#include "metrics.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define RELAXED memory_order_relaxed

uint64_t metrics_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t metrics_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int metrics_bucket_index(uint64_t ns)
{
    if (ns < 1000)
        return 0;
    /* floor(4 log2(us)) + 1; the tiny offset keeps exact powers of two in the
     * bucket they start, whatever log2 rounds to. */
    double position = METRICS_BUCKETS_PER_OCTAVE * log2((double)ns / 1000.0) + 1e-9;
    int i = (int)floor(position) + 1;
    return i >= METRICS_BUCKETS - 1 ? METRICS_BUCKETS - 1 : i;
}

uint64_t metrics_bucket_upper_ns(int bucket)
{
    if (bucket <= 0)
        return 1000;
    if (bucket >= METRICS_BUCKETS - 1)
        return UINT64_MAX;
    return (uint64_t)ceil(1000.0 * exp2((double)bucket / METRICS_BUCKETS_PER_OCTAVE));
}

void metrics_histogram_observe(metrics_histogram *h, uint64_t ns)
{
    atomic_fetch_add_explicit(&h->bucket[metrics_bucket_index(ns)], 1, RELAXED);
    atomic_fetch_add_explicit(&h->count, 1, RELAXED);
    atomic_fetch_add_explicit(&h->sum_ns, ns, RELAXED);
    uint64_t max = atomic_load_explicit(&h->max_ns, RELAXED);
    while (ns > max && !atomic_compare_exchange_weak_explicit(&h->max_ns, &max, ns, RELAXED, RELAXED))
        ;
}

uint64_t metrics_histogram_snapshot(const metrics_histogram *h, uint64_t counts[METRICS_BUCKETS])
{
    uint64_t total = 0;
    for (int i = 0; i < METRICS_BUCKETS; i++) {
        counts[i] = atomic_load_explicit(&h->bucket[i], RELAXED);
        total += counts[i];
    }
    return total;
}

uint64_t metrics_histogram_quantile_ns(const metrics_histogram *h, double q)
{
    uint64_t counts[METRICS_BUCKETS];
    /* One pass to snapshot, so that the rank and the walk agree. */
    metrics_histogram_snapshot(h, counts);
    return metrics_buckets_quantile_ns(counts, q, atomic_load_explicit(&h->max_ns, RELAXED));
}

uint64_t metrics_buckets_quantile_ns(const uint64_t counts[METRICS_BUCKETS], double q, uint64_t max)
{
    uint64_t total = 0;
    for (int i = 0; i < METRICS_BUCKETS; i++)
        total += counts[i];
    if (total == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)total);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (int i = 0; i < METRICS_BUCKETS; i++) {
        seen += counts[i];
        if (seen >= rank) {
            uint64_t upper = metrics_bucket_upper_ns(i);
            return upper < max ? upper : max;
        }
    }
    return max;
}

const char *metrics_stage_name(metrics_stage s)
{
    switch (s) {
    case METRICS_STAGE_RECEIVE: return "receive";
    case METRICS_STAGE_FORM: return "form";
    case METRICS_STAGE_SOLVE: return "solve";
    case METRICS_STAGE_PUBLISH: return "publish";
    case METRICS_STAGE_END_TO_END: return "end_to_end";
    case METRICS_STAGE_COUNT_: break;
    }
    return "unknown";
}

const char *metrics_drop_name(metrics_drop_reason d)
{
    switch (d) {
    case METRICS_DROP_OVERFLOW: return "overflow";
    case METRICS_DROP_LATE: return "late";
    case METRICS_DROP_SOLVER: return "solver_error";
    case METRICS_DROP_SEND: return "send_failed";
    case METRICS_DROP_SUBSCRIBER: return "subscriber_slow";
    case METRICS_DROP_COUNT_: break;
    }
    return "unknown";
}

void metrics_init(metrics *m, uint64_t now_ns)
{
    memset(m, 0, sizeof *m);
    m->start_ns = now_ns;
    m->last_tick_ns = now_ns;
}

void metrics_count_drop(metrics *m, metrics_drop_reason d)
{
    atomic_fetch_add_explicit(&m->dropped[d], 1, RELAXED);
}

void metrics_count_reject(metrics *m, protocol_reject r)
{
    atomic_fetch_add_explicit(&m->rejected[r], 1, RELAXED);
}

uint64_t metrics_dropped_total(const metrics *m)
{
    uint64_t total = 0;
    for (int d = 0; d < METRICS_DROP_COUNT_; d++)
        total += atomic_load_explicit(&m->dropped[d], RELAXED);
    return total;
}

uint64_t metrics_rejected_total(const metrics *m)
{
    uint64_t total = 0;
    for (int r = 1; r < PROTOCOL_REJECT_COUNT_; r++)
        total += atomic_load_explicit(&m->rejected[r], RELAXED);
    return total;
}

void metrics_tick(metrics *m, uint64_t now_ns)
{
    uint64_t in = atomic_load_explicit(&m->frames_in, RELAXED);
    uint64_t out = atomic_load_explicit(&m->frames_out, RELAXED);
    uint64_t rejected = metrics_rejected_total(m);
    double seconds = (double)(now_ns - m->last_tick_ns) * 1e-9;
    if (seconds > 0.0) {
        m->rate_in = (double)(in - m->last_in) / seconds;
        m->rate_out = (double)(out - m->last_out) / seconds;
        m->rate_rejected = (double)(rejected - m->last_rejected) / seconds;
    }
    for (int w = 0; w < m->workers; w++) {
        metrics_worker *k = &m->worker[w];
        uint64_t busy = atomic_load_explicit(&k->busy_ns, RELAXED);
        if (now_ns > m->last_tick_ns)
            k->load = (double)(busy - k->last_busy_ns) / (double)(now_ns - m->last_tick_ns);
        k->last_busy_ns = busy;
    }
    m->last_tick_ns = now_ns;
    m->last_in = in;
    m->last_out = out;
    m->last_rejected = rejected;
}

void metrics_put(metrics_writer *w, const char *fmt, ...)
{
    if (w->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(w->buf + w->len, w->cap - w->len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= w->cap - w->len)
        w->overflow = 1;
    else
        w->len += (size_t)k;
}

static double us(uint64_t ns)
{
    return (double)ns * 1e-3;
}

static void put_histogram(metrics_writer *w, const metrics_histogram *h)
{
    uint64_t count = atomic_load_explicit(&h->count, RELAXED);
    uint64_t sum = atomic_load_explicit(&h->sum_ns, RELAXED);
    metrics_put(w, "{\"count\":%llu,\"mean\":%.1f,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"max\":%.1f,\"buckets\":[",
        (unsigned long long)count, count ? us(sum) / (double)count : 0.0,
        us(metrics_histogram_quantile_ns(h, 0.50)), us(metrics_histogram_quantile_ns(h, 0.90)),
        us(metrics_histogram_quantile_ns(h, 0.99)), us(atomic_load_explicit(&h->max_ns, RELAXED)));
    /* Non-empty buckets only, as [upper edge in us (-1: unbounded), count]. */
    int first = 1;
    for (int i = 0; i < METRICS_BUCKETS; i++) {
        uint64_t c = atomic_load_explicit(&h->bucket[i], RELAXED);
        if (c == 0)
            continue;
        uint64_t upper = metrics_bucket_upper_ns(i);
        metrics_put(w, "%s[%.1f,%llu]", first ? "" : ",", upper == UINT64_MAX ? -1.0 : us(upper),
            (unsigned long long)c);
        first = 0;
    }
    metrics_put(w, "]}");
}

/* JSON has no Inf or NaN: a ratio that was one (a NaN counts as +Inf) is
 * written as the largest double, which every reader takes as above 60. */
static double json_number(double x)
{
    return isfinite(x) ? x : DBL_MAX;
}

size_t metrics_format_json(const metrics *m, const metrics_context *c, uint64_t now_realtime_ns,
                           char *buf, size_t cap)
{
    metrics_writer w = {buf, cap, 0, 0};
    if (cap == 0)
        return 0;
    uint64_t in = atomic_load_explicit(&m->frames_in, RELAXED);
    uint64_t out = atomic_load_explicit(&m->frames_out, RELAXED);
    uint64_t dropped = metrics_dropped_total(m);
    metrics_put(&w, "{\"schema\":\"eigstream.metrics.v1\",\"time_ns\":%llu,\"uptime_s\":%.3f,",
        (unsigned long long)now_realtime_ns, (double)(m->last_tick_ns - m->start_ns) * 1e-9);
    metrics_put(&w, "\"backend\":\"%s\",\"precision\":\"%s\",\"mode\":\"%s\",\"n\":%d,\"matrices\":%d,",
        c->backend, c->precision, c->mode, c->n, c->matrices);
    metrics_put(&w, "\"frames\":{\"in\":%llu,\"out\":%llu,\"late\":%llu,\"dropped\":%llu,\"rejected\":%llu,"
            "\"in_flight\":%llu,\"matrices_failed\":%llu,\"matrices_nonconvergence\":%llu,"
            "\"matrices_invalid\":%llu,\"overflow_blocked\":%llu,\"source_restarts\":%llu,\"input_late\":%llu},",
        (unsigned long long)in, (unsigned long long)out,
        (unsigned long long)atomic_load_explicit(&m->frames_late, RELAXED),
        (unsigned long long)dropped, (unsigned long long)metrics_rejected_total(m),
        (unsigned long long)(in >= out + dropped ? in - out - dropped : 0),
        (unsigned long long)atomic_load_explicit(&m->matrices_failed, RELAXED),
        (unsigned long long)atomic_load_explicit(&m->matrices_nonconvergence, RELAXED),
        (unsigned long long)atomic_load_explicit(&m->matrices_invalid, RELAXED),
        (unsigned long long)atomic_load_explicit(&m->overflow_blocked, RELAXED),
        (unsigned long long)atomic_load_explicit(&m->source_restarts, RELAXED),
        (unsigned long long)atomic_load_explicit(&m->input_late, RELAXED));
    metrics_put(&w, "\"solver_fallbacks\":%llu,",
        (unsigned long long)atomic_load_explicit(&m->solver_fallbacks, RELAXED));
    metrics_put(&w, "\"reorder\":{\"gaps\":%llu,\"out_of_order\":%llu},\"workers\":[",
        (unsigned long long)atomic_load_explicit(&m->reorder_gaps, RELAXED),
        (unsigned long long)atomic_load_explicit(&m->out_of_order, RELAXED));
    for (int k = 0; k < c->workers; k++)
        metrics_put(&w, "%s{\"worker\":%d,\"device\":\"%s\",\"frames\":%llu,\"in_flight\":%d,\"busy_s\":%.6f,"
            "\"load\":%.4f}", k ? "," : "", k, c->worker_device[k],
            (unsigned long long)atomic_load_explicit(&m->worker[k].frames, RELAXED),
            atomic_load_explicit(&m->worker[k].in_flight, RELAXED),
            (double)atomic_load_explicit(&m->worker[k].busy_ns, RELAXED) * 1e-9, m->worker[k].load);
    metrics_put(&w, "],");
    metrics_put(&w, "\"rates\":{\"in_per_s\":%.3f,\"out_per_s\":%.3f,\"rejected_per_s\":%.3f},", m->rate_in,
        m->rate_out, m->rate_rejected);
    metrics_put(&w, "\"dropped\":{");
    for (int d = 0; d < METRICS_DROP_COUNT_; d++)
        metrics_put(&w, "%s\"%s\":%llu", d ? "," : "", metrics_drop_name((metrics_drop_reason)d),
            (unsigned long long)atomic_load_explicit(&m->dropped[d], RELAXED));
    metrics_put(&w, "},\"rejected\":{");
    for (int r = 1; r < PROTOCOL_REJECT_COUNT_; r++)
        metrics_put(&w, "%s\"%s\":%llu", r > 1 ? "," : "", protocol_reject_name((protocol_reject)r),
            (unsigned long long)atomic_load_explicit(&m->rejected[r], RELAXED));
    metrics_put(&w, "},\"auth_rejected\":{");
    for (int r = 0; r < AUTH_ZAP_REJECT_COUNT_; r++)
        metrics_put(&w, "%s\"%s\":%llu", r ? "," : "", auth_zap_reject_name((auth_zap_reject)r),
            (unsigned long long)atomic_load_explicit(&m->auth.rejected[r], RELAXED));
    metrics_put(&w, "},\"auth_retries\":{");
    for (int r = 0; r < AUTH_ZAP_REJECT_COUNT_; r++)
        metrics_put(&w, "%s\"%s\":%llu", r ? "," : "", auth_zap_reject_name((auth_zap_reject)r),
            (unsigned long long)atomic_load_explicit(&m->auth.retries[r], RELAXED));
    metrics_put(&w, "},\"queues\":{\"capacity\":%zu,\"form\":%zu,\"solve\":%zu,\"publish\":%zu,"
            "\"frames_free\":%zu,\"frames_total\":%zu,\"outputs_free\":%zu,\"outputs_total\":%zu},",
        c->queue_capacity, c->queue_form, c->queue_solve, c->queue_publish, c->frames_free,
        c->frames_total, c->outputs_free, c->outputs_total);
    const metrics_check *k = &m->check;
    uint64_t checked = atomic_load_explicit(&k->checked, memory_order_acquire);
    metrics_put(&w, "\"self_check\":{\"checked\":%llu,\"failed\":%llu,\"residual_max\":%.6g,"
            "\"orthogonality_max\":%.6g,\"cost_mean_us\":%.3f,\"cost_max_us\":%.3f},",
        (unsigned long long)checked, (unsigned long long)atomic_load_explicit(&k->failed, RELAXED),
        json_number(metrics_ratio_max(&k->residual)), json_number(metrics_ratio_max(&k->orthogonality)),
        checked ? (double)atomic_load_explicit(&k->cost_ns, RELAXED) * 1e-3 / (double)checked : 0.0,
        (double)atomic_load_explicit(&k->cost_max_ns, RELAXED) * 1e-3);
    metrics_put(&w, "\"latency_us\":{");
    for (int s = 0; s < METRICS_STAGE_COUNT_; s++) {
        metrics_put(&w, "%s\"%s\":", s ? "," : "", metrics_stage_name((metrics_stage)s));
        put_histogram(&w, &m->latency[s]);
    }
    metrics_put(&w, "}}");
    return w.overflow ? 0 : w.len;
}
