/*
 * pipeline_service.c - what running as a service asks of the pipeline
 * (pipeline.h): the warm-up solve before READY, the stages' health for the
 * watchdog, and the live settings a configuration reload replaces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* ---- warm-up ---------------------------------------------------------------------- */

/* f->a <- `matrices` FULL matrices diag(1, 2, ..., n) in the precision. */
static void warm_up_fill_covariance(const pipeline *p, frame *f)
{
    size_t n = p->shape.n, element = eig_element_bytes(p->shape.precision);
    size_t matrix_bytes = n * n * element;
    memset(f->a, 0, p->shape.matrices * matrix_bytes);
    for (size_t b = 0; b < p->shape.matrices; b++) {
        uint8_t *a = (uint8_t *)f->a + b * matrix_bytes;
        for (size_t k = 0; k < n; k++) {
            uint8_t *diagonal = a + (k * n + k) * element; /* the real part comes first */
            if (p->shape.precision == EIG_COMPLEX_DOUBLE)
                *(double *)(void *)diagonal = (double)(k + 1);
            else
                *(float *)(void *)diagonal = (float)(k + 1);
        }
    }
    memset(&f->header, 0, sizeof f->header);
    f->header.kind = PROTOCOL_KIND_COVARIANCE;
    f->header.n = p->shape.n;
    f->header.count = p->shape.matrices;
    f->header.element = p->shape.precision;
    f->header.storage = PROTOCOL_STORAGE_FULL;
    f->header.payload_bytes = p->shape.matrices * matrix_bytes;
}

/* IQ input (form.input = iq): f->a <- an all-zero cube of the configured
 * channels, pulses, gates, format and layout (zero in every sample format),
 * scale 1. Its formed matrices are zero whatever the window, the FFT and
 * the conditioning, so every eigenvalue must come back 0. */
static void warm_up_fill_iq(const pipeline *p, frame *f)
{
    size_t bytes = protocol_iq_cube_bytes(p->shape.n, p->shape.iq_pulses, p->shape.iq_gates, p->shape.iq_format);
    memset(f->a, 0, bytes);
    memset(&f->header, 0, sizeof f->header);
    f->header.kind = PROTOCOL_KIND_IQ;
    f->header.n = p->shape.n;
    f->header.count = p->shape.iq_pulses;
    f->header.gates = p->shape.iq_gates;
    f->header.element = p->shape.iq_format;
    f->header.storage = p->shape.iq_layout;
    f->header.scale = 1.0f;
    f->header.payload_bytes = bytes;
}

/* The solve's answer against the exact one: ascending values 1..n (IQ
 * input: all 0), info 0. Tolerance: a few ulps of the largest value per the
 * precision's epsilon. */
static pipeline_error warm_up_check(const pipeline *p, const frame *f, const char *where, char *err,
                                    size_t err_bytes)
{
    double eps = p->shape.precision == EIG_COMPLEX_DOUBLE ? 2.2e-16 : 1.2e-7;
    double tolerance = 16.0 * eps * p->shape.n;
    for (size_t b = 0; b < p->shape.matrices; b++) {
        if (f->info[b] != 0) {
            error_text_set(err, err_bytes, "warm-up solve%s: matrix %zu has info %d", where, b, f->info[b]);
            return PIPELINE_ESOLVER;
        }
        for (size_t k = 0; k < p->shape.n; k++) {
            size_t i = b * p->shape.n + k;
            double w = p->shape.precision == EIG_COMPLEX_DOUBLE ? ((const double *)f->w)[i] : ((const float *)f->w)[i];
            double exact = p->shape.iq_input ? 0.0 : (double)(k + 1);
            if (!(fabs(w - exact) <= tolerance)) {
                error_text_set(err, err_bytes, "warm-up solve%s: eigenvalue %zu is %.17g, not %g (%s)", where, k,
                                   w, exact, p->shape.iq_input ? "an all-zero IQ cube" : "diag(1..n)");
                return PIPELINE_ESOLVER;
            }
        }
    }
    return PIPELINE_OK;
}

/* One warm-up frame formed and solved on worker w's path. */
static pipeline_error warm_up_worker(pipeline *p, const pipeline_worker *w, char *err, size_t err_bytes)
{
    frame *f = NULL;
    char why[192], where[32] = "";
    if (p->worker_count > 1)
        snprintf(where, sizeof where, " (worker %d)", w->index);
    if (pool_get(&p->frames, (void **)&f) != POOL_OK) {
        error_text_set(err, err_bytes, "warm-up%s: no frame buffer", where);
        return PIPELINE_EINVAL;
    }
    if (p->shape.iq_input)
        warm_up_fill_iq(p, f);
    else
        warm_up_fill_covariance(p, f);
    f->path = pipeline_worker_path(w);
    pipeline_error e = path_form(f->path, f, why, sizeof why);
    if (e == PIPELINE_OK)
        e = path_solve(f->path, f, why, sizeof why);
    if (e != PIPELINE_OK)
        error_text_set(err, err_bytes, "warm-up solve%s: %s", where, why);
    else
        e = warm_up_check(p, f, where, err, err_bytes);
    pipeline_frame_release(p, f);
    return e;
}

pipeline_error pipeline_warm_up(pipeline *p, char *err, size_t err_bytes)
{
    /* Every worker: each has its own plan, streams and device slots. */
    for (int i = 0; i < p->worker_count; i++) {
        pipeline_error e = warm_up_worker(p, &p->workers[i], err, err_bytes);
        if (e != PIPELINE_OK)
            return e;
    }
    return PIPELINE_OK;
}

/* ---- health ----------------------------------------------------------------------- */

/* h <- s when s is stalled (its frame in the step longer than stall_ns) and
 * longer than the stage h names already. */
static void health_consider(const stage *s, uint64_t now, uint64_t stall_ns, pipeline_health *h)
{
    uint64_t since = atomic_load_explicit(&s->busy_since_ns, memory_order_acquire);
    if (since == 0 || now < since || now - since <= stall_ns || (!h->healthy && now - since <= h->stalled_ns))
        return;
    h->healthy = 0;
    h->stalled_stage = s->label;
    h->stalled_ns = now - since;
    h->stalled_seq = atomic_load_explicit(&s->busy_seq, memory_order_relaxed);
}

void pipeline_check_health(const pipeline *p, uint64_t stall_ns, pipeline_health *h)
{
    uint64_t now = metrics_now_ns();
    memset(h, 0, sizeof *h);
    h->healthy = 1;
    /* Downstream first: a stage upstream of a stalled one may only be
     * waiting for it (the solve step waits for a free output buffer). */
    health_consider(&p->publish.stage, now, stall_ns, h);
    if (!h->healthy)
        return;
    for (int w = 0; w < p->worker_count; w++)
        health_consider(&p->workers[w].solve, now, stall_ns, h);
    if (!h->healthy)
        return;
    for (int w = 0; w < p->worker_count; w++)
        health_consider(&p->workers[w].form, now, stall_ns, h);
}

/* ---- live settings ----------------------------------------------------------------- */

static void live_store(pipeline_live *l, const eigstream_config *cfg)
{
    atomic_store(&l->deadline_ms, cfg->frame.deadline_ms);
    atomic_store(&l->late_policy, cfg->frame.late_policy);
    atomic_store(&l->overflow_policy, cfg->frame.overflow_policy);
    atomic_store(&l->metrics_interval_ms, cfg->metrics.interval_ms);
}

void pipeline_live_init(pipeline *p)
{
    live_store(&p->live, &p->cfg);
}

pipeline_error pipeline_apply_live(pipeline *p, const eigstream_config *cfg)
{
    live_store(&p->live, cfg);
    log_set_level(cfg->log.level);
    return PIPELINE_OK;
}
