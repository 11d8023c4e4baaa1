/*
 * pipeline_service.c - what running as a service asks of the pipeline
 * (pipeline.h): the warm-up solve before READY, the stages' health for the
 * watchdog, and the live settings a configuration reload replaces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_internal.h"

/* ---- warm-up ---------------------------------------------------------------------- */

/* f->a <- `matrices` FULL matrices diag(1, 2, ..., n) in the precision. */
static void warm_up_fill(const pipeline *p, frame *f)
{
    size_t n = p->n, element = eig_element_bytes(p->precision);
    size_t matrix_bytes = n * n * element;
    memset(f->a, 0, p->matrices * matrix_bytes);
    for (size_t b = 0; b < p->matrices; b++) {
        uint8_t *a = (uint8_t *)f->a + b * matrix_bytes;
        for (size_t k = 0; k < n; k++) {
            uint8_t *diagonal = a + (k * n + k) * element; /* the real part comes first */
            if (p->precision == EIG_COMPLEX_DOUBLE)
                *(double *)(void *)diagonal = (double)(k + 1);
            else
                *(float *)(void *)diagonal = (float)(k + 1);
        }
    }
    memset(&f->header, 0, sizeof f->header);
    f->header.n = p->n;
    f->header.count = p->matrices;
    f->header.element = p->precision;
    f->header.storage = PROTOCOL_STORAGE_FULL;
    f->header.payload_bytes = p->matrices * matrix_bytes;
}

/* The solve's answer against the exact one: ascending values 1..n, info 0.
 * Tolerance: a few ulps of the largest value per the precision's epsilon. */
static pipeline_error warm_up_check(const pipeline *p, const frame *f, char *err, size_t err_bytes)
{
    double eps = p->precision == EIG_COMPLEX_DOUBLE ? 2.2e-16 : 1.2e-7;
    double tolerance = 16.0 * eps * p->n;
    for (size_t b = 0; b < p->matrices; b++) {
        if (f->info[b] != 0) {
            pipeline_set_error(err, err_bytes, "warm-up solve: matrix %zu has info %d", b, f->info[b]);
            return PIPELINE_ESOLVER;
        }
        for (size_t k = 0; k < p->n; k++) {
            size_t i = b * p->n + k;
            double w = p->precision == EIG_COMPLEX_DOUBLE ? ((const double *)f->w)[i] : ((const float *)f->w)[i];
            if (!(fabs(w - (double)(k + 1)) <= tolerance)) {
                pipeline_set_error(err, err_bytes, "warm-up solve: eigenvalue %zu of diag(1..%u) is %.17g", k,
                                   p->n, w);
                return PIPELINE_ESOLVER;
            }
        }
    }
    return PIPELINE_OK;
}

pipeline_error pipeline_warm_up(pipeline *p, char *err, size_t err_bytes)
{
    frame *f = NULL;
    char why[192];
    if (pool_get(&p->frames, (void **)&f) != POOL_OK) {
        pipeline_set_error(err, err_bytes, "warm-up: no frame buffer");
        return PIPELINE_EINVAL;
    }
    warm_up_fill(p, f);
    f->path = pipeline_active_path(p);
    pipeline_error e = path_form(f->path, f, why, sizeof why);
    if (e == PIPELINE_OK)
        e = path_solve(f->path, f, why, sizeof why);
    if (e != PIPELINE_OK)
        pipeline_set_error(err, err_bytes, "warm-up solve: %s", why);
    else
        e = warm_up_check(p, f, err, err_bytes);
    pipeline_frame_release(p, f);
    return e;
}

/* ---- health ----------------------------------------------------------------------- */

void pipeline_check_health(const pipeline *p, uint64_t stall_ns, pipeline_health *h)
{
    uint64_t now = metrics_now_ns();
    memset(h, 0, sizeof *h);
    h->healthy = 1;
    /* Downstream first: a stage upstream of a stalled one may only be
     * waiting for it (the solve step waits for a free output buffer). */
    for (int i = PIPELINE_STAGE_COUNT_ - 1; i >= 0; i--) {
        const stage *s = &p->stages[i];
        uint64_t since = atomic_load_explicit(&s->busy_since_ns, memory_order_acquire);
        if (since == 0 || now < since || now - since <= stall_ns)
            continue;
        h->healthy = 0;
        h->stalled_stage = s->name;
        h->stalled_ns = now - since;
        h->stalled_seq = atomic_load_explicit(&s->busy_seq, memory_order_relaxed);
        return;
    }
}

/* ---- live settings ----------------------------------------------------------------- */

const pipeline_live *pipeline_live_get(const pipeline *p)
{
    return atomic_load_explicit(&((pipeline *)p)->live, memory_order_acquire);
}

static pipeline_live *live_from(const eigstream_config *cfg)
{
    pipeline_live *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->deadline_ms = cfg->frame.deadline_ms;
    l->late_policy = cfg->frame.late_policy;
    l->overflow_policy = cfg->frame.overflow_policy;
    l->metrics_interval_ms = cfg->metrics.interval_ms;
    return l;
}

pipeline_error pipeline_live_init(pipeline *p)
{
    pipeline_live *l = live_from(&p->cfg);
    if (l == NULL)
        return PIPELINE_ENOMEM;
    atomic_store_explicit(&p->live, l, memory_order_release);
    return PIPELINE_OK;
}

void pipeline_live_free(pipeline *p)
{
    pipeline_live *l = atomic_exchange(&p->live, NULL);
    while (l != NULL) {
        pipeline_live *older = l->retired;
        free(l);
        l = older;
    }
}

pipeline_error pipeline_apply_live(pipeline *p, const eigstream_config *cfg)
{
    pipeline_live *l = live_from(cfg);
    if (l == NULL)
        return PIPELINE_ENOMEM;
    l->retired = atomic_load_explicit(&p->live, memory_order_relaxed);
    atomic_store_explicit(&p->live, l, memory_order_release);
    log_set_level(cfg->log.level);
    return PIPELINE_OK;
}
