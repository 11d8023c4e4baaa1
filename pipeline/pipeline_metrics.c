/*
 * pipeline_metrics.c - the periodic metrics task: every metrics.interval_ms
 * it computes the rates and formats the JSON document once, then sends it
 * on the metrics socket; readers of the document copy what it formatted.
 */
#include <errno.h>
#include <time.h>
#include <zmq.h>

#include "pipeline_internal.h"

static void metrics_fill_context(pipeline *p, metrics_context *c)
{
    c->backend = eig_backend_name(p->path->backend);
    c->precision = eig_precision_name(p->precision);
    c->mode = config_output_mode_name(p->format.mode);
    c->n = (int)p->n;
    c->matrices = (int)p->matrices;
    c->queue_form = queue_depth(&p->to_form);
    c->queue_solve = queue_depth(&p->to_solve);
    c->queue_publish = queue_depth(&p->to_publish);
    c->queue_capacity = p->to_form.capacity;
    c->frames_free = pool_available(&p->frames);
    c->frames_total = p->frames.count;
    c->outputs_free = pool_available(&p->outputs);
    c->outputs_total = p->outputs.count;
}

/* The periodic task: rates, then the JSON document, then the send (no lock). */
static void metrics_publish(pipeline *p)
{
    metrics_context c;
    metrics_fill_context(p, &c);
    pthread_mutex_lock(&p->metrics_lock);
    metrics_tick(&p->stats, metrics_now_ns());
    size_t len = metrics_format_json(&p->stats, &c, metrics_realtime_ns(), p->metrics_text,
                                     sizeof p->metrics_text);
    pthread_mutex_unlock(&p->metrics_lock);
    if (len == 0) {
        LOG_ERROR("metrics", "document larger than %zu bytes", sizeof p->metrics_text);
        return;
    }
    LOG_DEBUG("metrics", "in %.1f/s out %.1f/s rejected %.1f/s", p->stats.rate_in, p->stats.rate_out,
              p->stats.rate_rejected);
    if (p->metrics_socket != NULL && zmq_send(p->metrics_socket, p->metrics_text, len, ZMQ_DONTWAIT) < 0 &&
        errno != EAGAIN)
        LOG_WARN("metrics", "send failed: %s", zmq_strerror(errno));
}

/* CLOCK_MONOTONIC now + ms (the condition variable's clock). */
static struct timespec deadline_after_ms(long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return until;
}

void *pipeline_metrics_main(void *arg)
{
    pipeline *p = arg;
    pthread_mutex_lock(&p->metrics_lock);
    while (!atomic_load(&p->metrics_stop)) {
        struct timespec until = deadline_after_ms(p->cfg.metrics.interval_ms);
        int rc = 0;
        while (!atomic_load(&p->metrics_stop) && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&p->metrics_wake, &p->metrics_lock, &until);
        if (atomic_load(&p->metrics_stop))
            break;
        pthread_mutex_unlock(&p->metrics_lock);
        metrics_publish(p);
        pthread_mutex_lock(&p->metrics_lock);
    }
    pthread_mutex_unlock(&p->metrics_lock);
    metrics_publish(p); /* the final counts */
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
