/*
 * metrics_prometheus.c - the Prometheus text format (metrics_prometheus.h).
 * Names follow the Prometheus conventions: eigstream_ prefix, base units
 * (seconds, bytes), _total on counters, one label per dimension.
 */
#include "metrics_prometheus.h"

#include <stdio.h>

#define RELAXED memory_order_relaxed

/* The exposed histogram edges: bucket indexes FIRST, FIRST + STEP, ... LAST
 * of metrics.h's histogram, upper edges 2^(i/4) us: 16 us ... 2^24 us. */
#define PROMETHEUS_BUCKET_FIRST 16
#define PROMETHEUS_BUCKET_LAST 96
#define PROMETHEUS_BUCKET_STEP 2

static void put_family(metrics_writer *w, const char *name, const char *type, const char *help)
{
    metrics_put(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter family with one label: name{label="names(i)"} values[i] for i in
 * [first, count). */
static void put_labelled(metrics_writer *w, const char *name, const char *help, const char *label,
                         const char *(*names)(int), int first, int count, const _Atomic uint64_t *values)
{
    put_family(w, name, "counter", help);
    for (int i = first; i < count; i++)
        metrics_put(w, "%s{%s=\"%s\"} %llu\n", name, label, names(i),
                    (unsigned long long)atomic_load_explicit(&values[i], RELAXED));
}

static const char *drop_name(int i) { return metrics_drop_name((metrics_drop_reason)i); }
static const char *auth_name(int i) { return auth_zap_reject_name((auth_zap_reject)i); }
static const char *reject_name(int i) { return protocol_reject_name((protocol_reject)i); }

static void put_counter(metrics_writer *w, const char *name, const char *help, const _Atomic uint64_t *value)
{
    put_family(w, name, "counter", help);
    metrics_put(w, "%s %llu\n", name, (unsigned long long)atomic_load_explicit(value, RELAXED));
}

static void put_gauge(metrics_writer *w, const char *name, const char *help, double value)
{
    put_family(w, name, "gauge", help);
    metrics_put(w, "%s %.17g\n", name, value);
}

/* A label value with \ " and newline escaped, as the format asks. */
static void put_label_value(metrics_writer *w, const char *value)
{
    for (const char *c = value; *c != '\0'; c++) {
        if (*c == '\\' || *c == '"')
            metrics_put(w, "\\%c", *c);
        else if (*c == '\n')
            metrics_put(w, "\\n");
        else
            metrics_put(w, "%c", *c);
    }
}

/* One histogram series; label is `stage="form"` or "" (no labels). */
static void put_histogram(metrics_writer *w, const char *name, const char *label, const metrics_histogram *h)
{
    uint64_t counts[METRICS_BUCKETS];
    uint64_t total = metrics_histogram_snapshot(h, counts);
    const char *sep = label[0] != '\0' ? "," : "";
    uint64_t cumulative = 0;
    int next = 0;
    for (int i = PROMETHEUS_BUCKET_FIRST; i <= PROMETHEUS_BUCKET_LAST; i += PROMETHEUS_BUCKET_STEP) {
        while (next <= i)
            cumulative += counts[next++];
        metrics_put(w, "%s_bucket{%s%sle=\"%.9g\"} %llu\n", name, label, sep,
                    (double)metrics_bucket_upper_ns(i) * 1e-9, (unsigned long long)cumulative);
    }
    metrics_put(w, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, label, sep, (unsigned long long)total);
    const char *open = label[0] != '\0' ? "{" : "";
    const char *close = label[0] != '\0' ? "}" : "";
    metrics_put(w, "%s_sum%s%s%s %.9f\n", name, open, label, close,
                (double)atomic_load_explicit(&h->sum_ns, RELAXED) * 1e-9);
    metrics_put(w, "%s_count%s%s%s %llu\n", name, open, label, close, (unsigned long long)total);
}

static void put_frame_counters(metrics_writer *w, const metrics *m)
{
    put_counter(w, "eigstream_frames_received_total", "Frames accepted (passed validation).", &m->frames_in);
    put_counter(w, "eigstream_frames_published_total", "Frames published, late ones included.",
                &m->frames_out);
    put_counter(w, "eigstream_frames_late_total", "Frames published past frame.deadline_ms (flagged late).",
                &m->frames_late);
    put_counter(w, "eigstream_overflow_blocked_total",
                "Times the receiver waited for room (frame.overflow_policy block).", &m->overflow_blocked);
    put_counter(w, "eigstream_source_restarts_total",
                "Accepted frames whose seq did not increase: the source restarted (not a loss).",
                &m->source_restarts);
    put_counter(w, "eigstream_input_late_total",
                "Frames that came on one input connection after the merge had gone on past their seq "
                "(input.reorder_ms); passed on out of seq order (not a loss).",
                &m->input_late);
    put_counter(w, "eigstream_subscriptions_refused_total",
                "Subscriptions the output and metrics PUB sockets refused: not a prefix of what the socket "
                "sends, so never held (docs/operations.md, Limits).",
                &m->subscriptions_refused);
    put_counter(w, "eigstream_solver_fallbacks_total",
                "Switches to the host path after a frame path error (solver.fallback cpu).", &m->solver_fallbacks);
    put_counter(w, "eigstream_reorder_gaps_total",
                "Frames the reorder window stopped waiting for (a later frame's deadline passed); each is "
                "published out of order or dropped late.", &m->reorder_gaps);
    put_counter(w, "eigstream_frames_out_of_order_total", "Frames published after a later frame (flagged late).",
                &m->out_of_order);
    put_labelled(w, "eigstream_frames_dropped_total", "Accepted frames not published, by reason.", "reason",
                 drop_name, 0, METRICS_DROP_COUNT_, m->dropped);
    put_labelled(w, "eigstream_auth_rejected_total",
                 "Clients refused by the CURVE sockets (security.*), by reason: a peer's first refusal on a socket "
                 "in 60 s.", "reason", auth_name, 0, AUTH_ZAP_REJECT_COUNT_, m->auth.rejected);
    put_labelled(w, "eigstream_auth_retries_total",
                 "Refused handshakes of a peer refused on that socket for that reason within 60 s (its reconnects), "
                 "by reason; not in eigstream_auth_rejected_total.", "reason", auth_name, 0, AUTH_ZAP_REJECT_COUNT_,
                 m->auth.retries);
    /* From 1: reason 0 is PROTOCOL_OK. */
    put_labelled(w, "eigstream_frames_rejected_total", "Messages rejected by validation, by reason.", "reason",
                 reject_name, 1, PROTOCOL_REJECT_COUNT_, m->rejected);
    put_family(w, "eigstream_matrices_failed_total", "counter",
               "Matrices published with a nonzero solver info, by status.");
    metrics_put(w, "eigstream_matrices_failed_total{status=\"nonconvergence\"} %llu\n",
                (unsigned long long)atomic_load_explicit(&m->matrices_nonconvergence, RELAXED));
    metrics_put(w, "eigstream_matrices_failed_total{status=\"invalid_input\"} %llu\n",
                (unsigned long long)atomic_load_explicit(&m->matrices_invalid, RELAXED));
}

static void put_latencies(metrics_writer *w, const metrics *m)
{
    put_family(w, "eigstream_stage_latency_seconds", "histogram",
               "Time a frame spends in each stage (receive: first part to queued).");
    for (int s = METRICS_STAGE_RECEIVE; s <= METRICS_STAGE_PUBLISH; s++) {
        char label[32];
        snprintf(label, sizeof label, "stage=\"%s\"", metrics_stage_name((metrics_stage)s));
        put_histogram(w, "eigstream_stage_latency_seconds", label, &m->latency[s]);
    }
    put_family(w, "eigstream_end_to_end_latency_seconds", "histogram",
               "First part received to output handed to ZeroMQ, per published frame.");
    put_histogram(w, "eigstream_end_to_end_latency_seconds", "", &m->latency[METRICS_STAGE_END_TO_END]);
}

static void put_gauges(metrics_writer *w, const metrics *m, const metrics_context *c)
{
    put_family(w, "eigstream_queue_depth", "gauge", "Frames waiting in each inter-stage queue.");
    metrics_put(w, "eigstream_queue_depth{queue=\"form\"} %zu\neigstream_queue_depth{queue=\"solve\"} %zu\n"
                   "eigstream_queue_depth{queue=\"publish\"} %zu\n",
                c->queue_form, c->queue_solve, c->queue_publish);
    put_gauge(w, "eigstream_queue_capacity", "Capacity of each inter-stage queue (frame.queue_depth).",
              (double)c->queue_capacity);
    uint64_t in = atomic_load_explicit(&m->frames_in, RELAXED);
    uint64_t done = atomic_load_explicit(&m->frames_out, RELAXED) + metrics_dropped_total(m);
    put_gauge(w, "eigstream_frames_in_flight", "Frames accepted and not yet published or dropped.",
              in > done ? (double)(in - done) : 0.0);
    put_gauge(w, "eigstream_deadline_seconds", "The deadline of a frame (frame.deadline_ms).", c->deadline_s);
    put_gauge(w, "eigstream_frame_buffers_free", "Free frame buffers in the pool.", (double)c->frames_free);
    put_gauge(w, "eigstream_frame_buffers", "Frame buffers in the pool.", (double)c->frames_total);
    put_gauge(w, "eigstream_output_buffers_free", "Free output buffers in the pool.", (double)c->outputs_free);
    put_gauge(w, "eigstream_output_buffers", "Output buffers in the pool.", (double)c->outputs_total);
    put_family(w, "eigstream_build_info", "gauge", "Version, solver backend, precision and GPU; always 1.");
    metrics_put(w, "eigstream_build_info{version=\"");
    put_label_value(w, c->version);
    metrics_put(w, "\",backend=\"%s\",precision=\"%s\",gpu=\"", c->backend, c->precision);
    put_label_value(w, c->gpu);
    metrics_put(w, "\"} 1\n");
}

/* One series per solver worker: worker="0",device="NVIDIA H100 ..." (or
 * "none" on the host path). */
static void put_worker_label(metrics_writer *w, const char *name, const metrics_context *c, int k)
{
    metrics_put(w, "%s{worker=\"%d\",device=\"", name, k);
    put_label_value(w, c->worker_device[k]);
    metrics_put(w, "\"} ");
}

static void put_workers(metrics_writer *w, const metrics *m, const metrics_context *c)
{
    put_family(w, "eigstream_worker_frames_total", "counter", "Frames dealt to each solver worker.");
    for (int k = 0; k < c->workers; k++) {
        put_worker_label(w, "eigstream_worker_frames_total", c, k);
        metrics_put(w, "%llu\n", (unsigned long long)atomic_load_explicit(&m->worker[k].frames, RELAXED));
    }
    put_family(w, "eigstream_worker_busy_seconds_total", "counter", "Time each solver worker spent in its solve step.");
    for (int k = 0; k < c->workers; k++) {
        put_worker_label(w, "eigstream_worker_busy_seconds_total", c, k);
        metrics_put(w, "%.9f\n", (double)atomic_load_explicit(&m->worker[k].busy_ns, RELAXED) * 1e-9);
    }
    put_family(w, "eigstream_worker_in_flight", "gauge", "Frames dealt to each solver worker, not yet solved.");
    for (int k = 0; k < c->workers; k++) {
        put_worker_label(w, "eigstream_worker_in_flight", c, k);
        metrics_put(w, "%d\n", atomic_load_explicit(&m->worker[k].in_flight, RELAXED));
    }
    put_family(w, "eigstream_worker_load_ratio", "gauge",
               "Share of the last metrics interval each solver worker spent solving (0..1).");
    for (int k = 0; k < c->workers; k++) {
        put_worker_label(w, "eigstream_worker_load_ratio", c, k);
        metrics_put(w, "%.6f\n", m->worker[k].load);
    }
}

/* One ratio histogram series over metrics_check_edges. */
static void put_ratio_histogram(metrics_writer *w, const char *name, const char *ratio,
                                const metrics_ratio_histogram *h)
{
    uint64_t cumulative = 0;
    for (int b = 0; b < METRICS_CHECK_EDGES; b++) {
        cumulative += atomic_load_explicit(&h->bucket[b], RELAXED);
        metrics_put(w, "%s_bucket{ratio=\"%s\",le=\"%g\"} %llu\n", name, ratio, metrics_check_edges[b],
                    (unsigned long long)cumulative);
    }
    cumulative += atomic_load_explicit(&h->bucket[METRICS_CHECK_EDGES], RELAXED);
    metrics_put(w, "%s_bucket{ratio=\"%s\",le=\"+Inf\"} %llu\n", name, ratio, (unsigned long long)cumulative);
    metrics_put(w, "%s_sum{ratio=\"%s\"} %.6f\n%s_count{ratio=\"%s\"} %llu\n", name, ratio,
                (double)atomic_load_explicit(&h->sum_micro, RELAXED) * 1e-6, name, ratio,
                (unsigned long long)cumulative);
}

/* The self-check (metrics_check.h): counters, the ratios, the cost. */
static void put_check(metrics_writer *w, const metrics_check *c)
{
    put_counter(w, "eigstream_self_check_matrices_total",
                "Matrices whose eigenpairs the daemon checked as it published (one a frame, rotating).",
                &c->checked);
    put_counter(w, "eigstream_self_check_failures_total",
                "Checked matrices with a ratio above the LAPACK threshold 60 (or NaN): wrong results, "
                "published with the CHECK_FAILED flag.", &c->failed);
    put_family(w, "eigstream_self_check_ratio", "histogram",
               "The self-check's LAPACK ratios: residual ||A V - V W||_1 / (||A||_1 n eps) (values mode: "
               "|sum w - trace A| on the same scale), orthogonality ||V^H V - I||_1 / (n eps).");
    put_ratio_histogram(w, "eigstream_self_check_ratio", "residual", &c->residual);
    put_ratio_histogram(w, "eigstream_self_check_ratio", "orthogonality", &c->orthogonality);
    put_family(w, "eigstream_self_check_seconds_total", "counter",
               "Time the self-checks took (GPU time on the cuda path, wall time on the host).");
    metrics_put(w, "eigstream_self_check_seconds_total %.9f\n",
                (double)atomic_load_explicit(&c->cost_ns, RELAXED) * 1e-9);
}

static const char *http_refusal_name(int i) { return metrics_http_refusal_name((metrics_http_refusal)i); }

/* The HTTP server's own guard (metrics_http.h): refusals by reason, connections open. */
static void put_http(metrics_writer *w, const metrics_http_counts *h)
{
    put_family(w, "eigstream_http_refused_total", "counter",
               "HTTP connections refused (per_address, full) or cut (deadline: not answered within "
               "metrics.http_deadline_s), by reason.");
    for (int r = 0; r < METRICS_HTTP_REFUSAL_COUNT_; r++)
        metrics_put(w, "eigstream_http_refused_total{reason=\"%s\"} %llu\n", http_refusal_name(r),
                    (unsigned long long)h->refused[r]);
    put_family(w, "eigstream_http_connections", "gauge", "HTTP connections open, by client class.");
    metrics_put(w, "eigstream_http_connections{client=\"scraper\"} %d\neigstream_http_connections{client=\"other\"} %d\n",
                h->open_scrapers, h->open - h->open_scrapers);
}

static void put_process(metrics_writer *w, const process_stats *ps)
{
    put_family(w, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
    metrics_put(w, "process_cpu_seconds_total %.2f\n", ps->cpu_seconds);
    put_gauge(w, "process_resident_memory_bytes", "Resident memory size in bytes.", (double)ps->resident_bytes);
    put_gauge(w, "process_virtual_memory_bytes", "Virtual memory size in bytes.", (double)ps->virtual_bytes);
    put_gauge(w, "process_open_fds", "Number of open file descriptors.", (double)ps->open_fds);
    put_gauge(w, "process_max_fds", "Maximum number of open file descriptors.", (double)ps->max_fds);
    put_gauge(w, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
              ps->start_time_s);
}

size_t metrics_format_prometheus(const metrics *m, const metrics_context *c, const process_stats *ps,
                                 char *buf, size_t cap)
{
    if (cap == 0)
        return 0;
    metrics_writer w = {buf, cap, 0, 0};
    buf[0] = '\0';
    put_frame_counters(&w, m);
    put_latencies(&w, m);
    put_gauges(&w, m, c);
    put_workers(&w, m, c);
    put_check(&w, &m->check);
    if (c->http != NULL)
        put_http(&w, c->http);
    put_process(&w, ps);
    return w.overflow ? 0 : w.len;
}
