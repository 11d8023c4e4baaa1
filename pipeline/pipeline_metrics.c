/*
 * pipeline_metrics.c - the periodic metrics task: every metrics.interval_ms
 * it computes the rates and formats the JSON document once, then sends it
 * on the metrics socket; with metrics.http set it also records the
 * dashboard's history point and formats the Prometheus and /api/metrics
 * documents, which the HTTP server only copies.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "deadline.h"
#include "metrics_prometheus.h"
#include "engine.h"
#include "process_stats.h"

#ifndef EIGSTREAM_VERSION
#define EIGSTREAM_VERSION "unknown"
#endif

static void metrics_fill_context(pipeline *p, metrics_context *c)
{
    c->backend = eig_backend_name(pipeline_active_path(p)->backend);
    c->precision = eig_precision_name(p->shape.precision);
    c->mode = protocol_mode_name(p->shape.format.mode);
    c->n = (int)p->shape.n;
    c->matrices = (int)p->shape.matrices;
    c->queue_form = queue_depth(&p->to_form);
    c->queue_solve = 0;
    for (int w = 0; w < p->worker_count; w++) {
        c->queue_solve += queue_depth(&p->workers[w].to_solve);
        c->worker_device[w] = path_device_name(pipeline_worker_path(&p->workers[w]));
    }
    c->workers = p->worker_count;
    c->queue_publish = queue_depth(&p->to_publish);
    c->queue_capacity = p->to_form.capacity;
    c->frames_free = pool_available(&p->frames);
    c->frames_total = p->frames.count;
    c->outputs_free = pool_available(&p->outputs);
    c->outputs_total = p->outputs.count;
    c->version = EIGSTREAM_VERSION;
    c->gpu = path_device_name(p->path);
    c->deadline_s = pipeline_live_get(p)->deadline_ms * 1e-3;
    c->http = NULL; /* metrics_http_refresh reads the server's counts for its documents */
}

/* /api/metrics: the JSON document of this interval (json_len bytes in
 * p->metrics_text, the same numbers the metrics socket sends) with the
 * dashboard's keys added before its closing brace. */
static size_t format_api_json(pipeline *p, const metrics_context *c, size_t json_len)
{
    memcpy(p->http_text, p->metrics_text, json_len - 1);
    metrics_writer w = {p->http_text, sizeof p->http_text, json_len - 1, 0};
    metrics_put(&w, ",\"version\":\"%s\",\"gpu\":\"%s\",\"deadline_ms\":%d,\"interval_ms\":%d,", c->version,
                c->gpu, pipeline_live_get(p)->deadline_ms, pipeline_live_get(p)->metrics_interval_ms);
    metrics_history_format_json(&p->history, &w);
    metrics_put(&w, "}");
    return w.overflow ? 0 : w.len;
}

/* The HTTP documents, formatted here so that a scrape only copies them;
 * record: add this interval to the dashboard's history. */
static void metrics_http_refresh(pipeline *p, metrics_context *c, size_t json_len, int record)
{
    if (p->http == NULL)
        return;
    metrics_http_counts http;
    metrics_http_counts_read(p->http, &http);
    c->http = &http;
    if (record)
        metrics_history_record(&p->history, &p->stats, p->stats.last_tick_ns);
    process_stats ps;
    if (process_stats_read(&ps) != 0)
        LOG_DEBUG("metrics", "process stats: %s", strerror(errno));
    size_t len = metrics_format_prometheus(&p->stats, c, &ps, p->http_text, sizeof p->http_text);
    if (len == 0 || metrics_http_publish(p->http, METRICS_HTTP_PROMETHEUS, p->http_text, len) != 0)
        LOG_ERROR("metrics", "Prometheus document larger than %zu bytes", sizeof p->http_text);
    len = format_api_json(p, c, json_len);
    if (len == 0 || metrics_http_publish(p->http, METRICS_HTTP_API_JSON, p->http_text, len) != 0)
        LOG_ERROR("metrics", "/api/metrics document larger than %zu bytes", sizeof p->http_text);
    c->http = NULL;
}

/* The periodic task: rates, the JSON document, the HTTP documents, then
 * the send (no lock). tick = 0 (the thread's start): the documents only,
 * nothing counted as an interval and nothing sent. */
static void metrics_publish(pipeline *p, int tick)
{
    metrics_context c;
    metrics_fill_context(p, &c);
    pthread_mutex_lock(&p->metrics_lock);
    if (tick)
        metrics_tick(&p->stats, metrics_now_ns());
    size_t len = metrics_format_json(&p->stats, &c, metrics_realtime_ns(), p->metrics_text,
                                     sizeof p->metrics_text);
    pthread_mutex_unlock(&p->metrics_lock);
    if (len == 0) {
        LOG_ERROR("metrics", "document larger than %zu bytes", sizeof p->metrics_text);
        return;
    }
    metrics_http_refresh(p, &c, len, tick);
    if (!tick)
        return;
    LOG_DEBUG("metrics", "in %.1f/s out %.1f/s rejected %.1f/s", p->stats.rate_in, p->stats.rate_out,
              p->stats.rate_rejected);
    if (p->metrics_socket != NULL)
        pipeline_subscriptions_apply(p, p->metrics_socket, (const uint8_t *)"", 0);
    if (p->metrics_socket != NULL && zmq_send(p->metrics_socket, p->metrics_text, len, ZMQ_DONTWAIT) < 0 &&
        errno != EAGAIN)
        LOG_WARN("metrics", "send failed: %s", zmq_strerror(errno));
}

void *pipeline_metrics_main(void *arg)
{
    pipeline *p = arg;
    metrics_publish(p, 0); /* the HTTP documents exist from the start */
    pthread_mutex_lock(&p->metrics_lock);
    while (!atomic_load(&p->metrics_stop)) {
        struct timespec until = deadline_after_ms(pipeline_live_get(p)->metrics_interval_ms);
        int rc = 0;
        while (!atomic_load(&p->metrics_stop) && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&p->metrics_wake, &p->metrics_lock, &until);
        if (atomic_load(&p->metrics_stop))
            break;
        pthread_mutex_unlock(&p->metrics_lock);
        metrics_publish(p, 1);
        pthread_mutex_lock(&p->metrics_lock);
    }
    pthread_mutex_unlock(&p->metrics_lock);
    metrics_publish(p, 1); /* the final counts */
    return NULL;
}

size_t pipeline_metrics_json(pipeline *p, char *buf, size_t cap)
{
    metrics_context c;
    metrics_fill_context(p, &c);
    pthread_mutex_lock(&p->metrics_lock);
    size_t len = metrics_format_json(&p->stats, &c, metrics_realtime_ns(), buf, cap);
    pthread_mutex_unlock(&p->metrics_lock);
    return len;
}
