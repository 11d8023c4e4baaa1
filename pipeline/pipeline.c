/*
 * pipeline.c - create / run / stop / destroy and the counters (pipeline.h);
 * engine.h lists the files that do the rest.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "pipeline_limits.h"

void pipeline_get_counters(const pipeline *p, pipeline_counters *c)
{
    const metrics *m = &p->stats;
    memset(c, 0, sizeof *c);
    c->out = atomic_load_explicit(&m->frames_out, memory_order_acquire);
    c->in = atomic_load(&m->frames_in);
    c->late = atomic_load(&m->frames_late);
    for (int d = 0; d < METRICS_DROP_COUNT_; d++)
        c->dropped[d] = atomic_load(&m->dropped[d]);
    for (int r = 0; r < PROTOCOL_REJECT_COUNT_; r++)
        c->rejected[r] = atomic_load(&m->rejected[r]);
    c->rejected_total = metrics_rejected_total(m);
    uint64_t done = c->out + metrics_dropped_total(m);
    c->in_flight = c->in > done ? c->in - done : 0;
    c->matrices_failed = atomic_load(&m->matrices_failed);
    c->overflow_blocked = atomic_load(&m->overflow_blocked);
    c->source_restarts = atomic_load(&m->source_restarts);
    c->input_late = atomic_load(&m->input_late);
    c->solver_fallbacks = atomic_load(&m->solver_fallbacks);
    for (int r = 0; r < AUTH_ZAP_REJECT_COUNT_; r++)
    {
        c->auth_rejected[r] = atomic_load(&m->auth.rejected[r]);
        c->auth_retries[r] = atomic_load(&m->auth.retries[r]);
    }
    c->reorder_gaps = atomic_load(&m->reorder_gaps);
    c->out_of_order = atomic_load(&m->out_of_order);
    c->self_checked = atomic_load(&m->check.checked);
    c->self_check_failed = atomic_load(&m->check.failed);
    c->workers = p->worker_count;
    for (int w = 0; w < p->worker_count; w++)
    {
        c->worker_frames[w] = atomic_load(&m->worker[w].frames);
        c->worker_in_flight[w] = atomic_load(&m->worker[w].in_flight);
    }
}

int pipeline_metrics_http_port(const pipeline *p)
{
    return p->http != NULL ? metrics_http_port(p->http) : 0;
}

const char *pipeline_backend_name(const pipeline *p)
{
    return eig_backend_name(pipeline_active_path(p)->backend);
}

/* ---- create / destroy ---------------------------------------------------------------- */

/* What every frame must be and what every output looks like, from cfg. */
static void pipeline_formats_set(pipeline *p, const eigstream_config *cfg)
{
    p->shape.n = (uint32_t)cfg->solver.n;
    p->shape.matrices = (uint32_t)cfg->solver.matrices;
    p->shape.precision = cfg->solver.precision;
    p->shape.max_payload_bytes = (size_t)cfg->input.max_message_bytes;
    p->shape.format = (output_format){
        .n = p->shape.n,
        .matrices = p->shape.matrices,
        .precision = p->shape.precision,
        .mode = (uint8_t)cfg->output.mode,
        .signal_dimension = (uint32_t)cfg->output.signal_dimension,
        .snapshots = (uint32_t)cfg->output.snapshots,
        .iq_snapshots = cfg->form.input == CONFIG_FORM_INPUT_IQ ? config_form_snapshots(cfg) : 0,
    };
    p->shape.iq_input = cfg->form.input == CONFIG_FORM_INPUT_IQ;
    p->shape.iq_pulses = (uint32_t)cfg->form.pulses;
    p->shape.iq_gates = (uint32_t)cfg->form.range_gates;
    p->shape.iq_format = (uint8_t)cfg->form.iq_format;
    p->shape.iq_layout = (uint8_t)cfg->form.iq_layout;
    p->shape.part_capacity = p->shape.matrices;
    if (p->shape.iq_input) {
        if (p->shape.part_capacity < p->shape.n)
            p->shape.part_capacity = p->shape.n;
        if (p->shape.part_capacity < p->shape.iq_pulses)
            p->shape.part_capacity = p->shape.iq_pulses;
    }
}

/* What the stages see of p (stage.h), before anything that runs them. */
static void pipeline_context_set(pipeline *p)
{
    p->context = (stage_context){
        .p = p,
        .cfg = &p->cfg,
        .shape = &p->shape,
        .live = &p->live,
        .stats = &p->stats,
        .to_form = &p->to_form,
        .to_publish = &p->to_publish,
        .frames = &p->frames,
        .outputs = &p->outputs,
        .workers = p->workers,
        .worker_count = config_solver_worker_count(&p->cfg), /* pipeline_workers_create's count */
        .stop_requested = &p->stop_requested,
    };
    p->receive.ctx = &p->context;
}

/* The HTTP server when metrics.http is set; logs the dashboard's URL. */
static pipeline_error pipeline_http_start(pipeline *p, char *err, size_t err_bytes)
{
    const char *address = p->cfg.metrics.http;
    if (address[0] == '\0')
        return PIPELINE_OK;
    _Static_assert(CONFIG_ADDRESSES_MAX <= METRICS_HTTP_SCRAPERS_MAX, "every valid scraper list fits");
    const metrics_http_limits limits = {.deadline_s = p->cfg.metrics.http_deadline_s,
                                        .scrapers = p->cfg.metrics.http_scrapers};
    switch (metrics_http_start(&p->http, address, &limits, sizeof p->http_text, err, err_bytes)) {
    case METRICS_HTTP_OK: break;
    case METRICS_HTTP_EINVAL: return PIPELINE_EINVAL;
    case METRICS_HTTP_ENOMEM: return PIPELINE_ENOMEM;
    case METRICS_HTTP_ESOCKET: return PIPELINE_ESOCKET;
    case METRICS_HTTP_ETHREAD: return PIPELINE_ETHREAD;
    }
    LOG_INFO("metrics", "dashboard: http://%.*s:%d/", (int)(strrchr(address, ':') - address), address,
             metrics_http_port(p->http));
    return PIPELINE_OK;
}

pipeline_error pipeline_create(pipeline **out, const eigstream_config *cfg, char *err, size_t err_bytes)
{
    *out = NULL;
    error_text_set(err, err_bytes, "%s", "");
    /* The one validator (config/): ranges and cross-setting rules, so that
     * a programmatic configuration is held to what a file is. */
    if (config_validate(cfg, err, err_bytes) != CONFIG_OK)
        return PIPELINE_EINVAL;
    /* Before any thread or socket: libzmq asserts (aborts) when it cannot
     * open a descriptor it needs, so the limit is checked up front. */
    pipeline_error e = pipeline_check_fd_limit(cfg, err, err_bytes);
    if (e == PIPELINE_OK) /* likewise its I/O threads, and libgomp its team */
        e = pipeline_check_thread_limit(cfg, err, err_bytes);
    if (e != PIPELINE_OK)
        return e;
    pipeline *p = calloc(1, sizeof *p);
    if (p == NULL) {
        error_text_set(err, err_bytes, "out of memory");
        return PIPELINE_ENOMEM;
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->metrics_lock, NULL);
    pthread_cond_init(&p->metrics_wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&p->deal_lock, NULL);
    pthread_cond_init(&p->deal_room, NULL);

    p->cfg = *cfg;
    p->realtime.numa_node = -1;
    log_set_level(cfg->log.level);
    pipeline_formats_set(p, cfg);
    pipeline_context_set(p);
    const char *recording = config_input_file(cfg);
    pipeline_live_init(p);
    if ((recording != NULL && (e = receiver_recording_open(&p->receive, recording, err, err_bytes)) != PIPELINE_OK) ||
        (e = pipeline_workers_create(p, err, err_bytes)) != PIPELINE_OK ||
        (e = pipeline_realtime_numa(p, err, err_bytes)) != PIPELINE_OK ||
        (e = pipeline_frames_create(p, err, err_bytes)) != PIPELINE_OK ||
        (e = pipeline_sockets_open(p, err, err_bytes)) != PIPELINE_OK ||
        (e = pipeline_http_start(p, err, err_bytes)) != PIPELINE_OK) {
        if (e == PIPELINE_ENOMEM)
            pipeline_limits_explain_memory(cfg, err, err_bytes);
        pipeline_destroy(&p);
        return e;
    }
    metrics_init(&p->stats, metrics_now_ns());
    p->stats.workers = p->worker_count;
    metrics_history_init(&p->history, p->stats.start_ns);
    if ((e = pipeline_sockets_auth_start(p, err, err_bytes)) != PIPELINE_OK ||
        (e = pipeline_realtime_prepare(p, err, err_bytes)) != PIPELINE_OK ||
        (e = receiver_prepare(&p->receive, err, err_bytes)) != PIPELINE_OK) {
        pipeline_destroy(&p);
        return e;
    }
    LOG_DEBUG("pipeline", "%s path, %d solver worker(s), %zu frame buffers, %zu output buffers (%.1f MB each)",
              path_name(p->path), p->worker_count, p->frames.count, p->outputs.count,
              (double)output_data_capacity(&p->shape.format) / 1e6);
    *out = p;
    return PIPELINE_OK;
}

void pipeline_destroy(pipeline **pp)
{
    pipeline *p = pp != NULL ? *pp : NULL;
    if (p == NULL)
        return;
    metrics_http_stop(&p->http); /* first: it reads nothing else, but nothing may outlive it */
    pipeline_sockets_close(p);
    receiver_release(&p->receive);
    if (p->path != NULL)
        pipeline_frames_destroy(p);
    pipeline_workers_destroy(p);
    receiver_recording_close(&p->receive);
    pthread_cond_destroy(&p->deal_room);
    pthread_mutex_destroy(&p->deal_lock);
    pthread_cond_destroy(&p->metrics_wake);
    pthread_mutex_destroy(&p->metrics_lock);
    free(p);
    *pp = NULL;
}

/* ---- run / stop -------------------------------------------------------------------- */

void pipeline_stop(pipeline *p)
{
    atomic_store(&p->stop_requested, 1);
}

static void log_accounting(pipeline *p)
{
    pipeline_counters c;
    pipeline_get_counters(p, &c);
    uint64_t dropped = 0;
    char reasons[256];
    size_t len = 0;
    for (int d = 0; d < METRICS_DROP_COUNT_; d++) {
        dropped += c.dropped[d];
        int w = snprintf(reasons + len, sizeof reasons - len, "%s%s=%llu", d ? " " : "",
                         metrics_drop_name((metrics_drop_reason)d), (unsigned long long)c.dropped[d]);
        if (w > 0 && (size_t)w < sizeof reasons - len)
            len += (size_t)w;
    }
    LOG_INFO("pipeline", "accounting: in=%llu out=%llu (late %llu) dropped=%llu (%s) in_flight=%llu rejected=%llu",
             (unsigned long long)c.in, (unsigned long long)c.out, (unsigned long long)c.late,
             (unsigned long long)dropped, reasons, (unsigned long long)c.in_flight,
             (unsigned long long)c.rejected_total);
}

static void metrics_thread_stop(pipeline *p)
{
    pthread_mutex_lock(&p->metrics_lock);
    atomic_store(&p->metrics_stop, 1);
    pthread_cond_signal(&p->metrics_wake);
    pthread_mutex_unlock(&p->metrics_lock);
}

/* Starts the metrics thread, the stages and the receiver, in that order
 * (each stage is waiting on its queue before frames arrive). On failure,
 * unblocks and joins what runs and returns PIPELINE_ETHREAD. */
static pipeline_error threads_start(pipeline *p)
{
    char limits[256];
    pipeline_limits_threads_text(limits, sizeof limits);
    int rc = pthread_create(&p->metrics_thread, NULL, pipeline_metrics_main, p);
    if (rc != 0) {
        LOG_ERROR("pipeline", "cannot start the metrics thread: %s (%s)", strerror(rc), limits);
        return PIPELINE_ETHREAD;
    }
    rc = pipeline_workers_start(p);
    if (rc == 0) {
        rc = pthread_create(&p->receive_thread, NULL,
                            p->receive.recording != NULL  ? receive_file_main
                            : p->cfg.input.io_threads > 1 ? receive_merge_main
                                                          : receive_main,
                            &p->receive);
        if (rc == 0) {
            pipeline_realtime_thread(p, p->receive_thread, CONFIG_THREAD_RECEIVE, -1);
            return PIPELINE_OK;
        }
        /* The stages run: closing the form queue drains and ends them. */
        queue_close(&p->to_form);
        pipeline_workers_join(p);
    }
    LOG_ERROR("pipeline", "cannot start a stage thread: %s (%s)", strerror(rc), limits);
    metrics_thread_stop(p);
    pthread_join(p->metrics_thread, NULL);
    return PIPELINE_ETHREAD;
}

pipeline_error pipeline_run(pipeline *p)
{
    if (p->ran)
        return PIPELINE_EINVAL;
    p->ran = 1;
    pipeline_error e = threads_start(p);
    if (e != PIPELINE_OK)
        return e;
    /* Shutdown drains in stage order: each stage exits when its input queue
     * is closed and empty, then closes its output queue. */
    pthread_join(p->receive_thread, NULL);
    e = p->receive.result;
    pipeline_error stages = pipeline_workers_join(p);
    if (e == PIPELINE_OK)
        e = stages;
    pipeline_sockets_flush(p);
    metrics_thread_stop(p);
    pthread_join(p->metrics_thread, NULL);
    log_accounting(p);
    return e;
}
