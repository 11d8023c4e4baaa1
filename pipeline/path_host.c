/*
 * path_host.c - the host frame path (path.h): forming in place in the
 * frame's payload buffer (form.h), or for IQ input from the cube in f->a
 * into f->formed (form_iq.h, frame.h), one eig_plan_execute per frame on the
 * configured backend, and the values and the vectors the mode sends copied
 * into the output buffer in the solve stage, so that the output is ready
 * when path_output_start returns.
 *
 * The eigenvectors of all matrices land in one workspace owned by the path
 * (matrices * n * n elements), not in every frame: the solve stage is the
 * only user and copies what it sends before it solves the next frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "form.h"
#include "form_iq.h"
#include "log.h"
#include "path.h"

typedef struct path_host {
    path base;
    eig_plan *plan; /* FULL, lower: every frame after forming */
    form_iq *iq;    /* IQ input: the forming plan (FFTW plans, workspace); NULL otherwise */
    void *z;        /* eigenvectors of the frame being solved (vectors jobs) */
    size_t element_bytes, real_bytes;
} path_host;

static void *host_buffer_alloc(path *p, size_t bytes)
{
    (void)p;
    void *ptr = NULL;
    if (posix_memalign(&ptr, 64, bytes) != 0)
        return NULL;
    /* Zeroing also faults every page in now rather than on the first frames. */
    memset(ptr, 0, bytes);
    return ptr;
}

static void host_buffer_free(path *p, void *ptr)
{
    (void)p;
    free(ptr);
}

/* The matrices the solver reads: formed from the cube, or the payload. */
static void *host_matrices(const path *p, const frame *f)
{
    return p->params.iq_input ? f->formed : f->a;
}

/* IQ input: the cube in f->a (the receiver checked its sizes, format and
 * layout against the configuration) formed into f->formed. */
static pipeline_error host_form_iq(path_host *h, frame *f, char *err, size_t err_bytes)
{
    const form_iq_params *q = &h->base.params.iq;
    size_t cube_bytes = protocol_iq_cube_bytes(q->channels, q->pulses, q->gates, q->format);
    size_t formed_bytes = (size_t)h->base.params.matrices * h->base.params.n * h->base.params.n * h->element_bytes;
    if (f->formed == NULL || f->formed_bytes < formed_bytes || f->header.payload_bytes != cube_bytes) {
        snprintf(err, err_bytes, "IQ frame of %llu bytes (want %zu) or no buffer for its %zu formed bytes",
                 (unsigned long long)f->header.payload_bytes, cube_bytes, formed_bytes);
        return PIPELINE_EINVAL;
    }
    form_iq_error e = form_iq_execute(h->iq, f->a, f->header.scale, f->formed);
    if (e != FORM_IQ_OK) {
        snprintf(err, err_bytes, "IQ forming (scale %g): %s", (double)f->header.scale, form_iq_strerror(e));
        return PIPELINE_EINVAL;
    }
    return PIPELINE_OK;
}

static pipeline_error host_form(path *p, frame *f, char *err, size_t err_bytes)
{
    const path_params *q = &p->params;
    if (q->iq_input) {
        pipeline_error e = host_form_iq((path_host *)p, f, err, err_bytes);
        if (e != PIPELINE_OK)
            return e;
    } else {
        form_unpack_in_place(f->a, q->n, q->matrices, q->precision, f->header.storage);
    }
    void *a = host_matrices(p, f);
    if (q->forward_backward)
        form_forward_backward(a, q->n, q->matrices, q->precision);
    if (q->diagonal_loading)
        form_diagonal_loading(a, q->n, q->matrices, q->precision, q->loading_factor);
    return PIPELINE_OK;
}

static pipeline_error host_solve(path *p, frame *f, char *err, size_t err_bytes)
{
    path_host *h = (path_host *)p;
    eig_error e = eig_plan_execute(h->plan, host_matrices(p, f), f->w, h->z, f->info);
    if (e == EIG_OK || e == EIG_EMATRIX) /* per-matrix failures travel in info */
        return PIPELINE_OK;
    snprintf(err, err_bytes, "eig_plan_execute: %s", eig_strerror(e));
    return PIPELINE_ESOLVER;
}

static uint64_t host_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The self-check on the host, done on return: every pair of the matrix
 * (its n values alone when the mode computes no vectors), read from the
 * matrices the solver read (formed, full lower) and the workspace. */
static pipeline_error host_check_start(path *p, frame *f, char *err, size_t err_bytes)
{
    path_host *h = (path_host *)p;
    size_t n = p->params.n, b = f->check.matrix;
    uint64_t start = host_now_ns();
    const uint8_t *a = (const uint8_t *)host_matrices(p, f) + b * n * n * h->element_bytes;
    const uint8_t *w = (const uint8_t *)f->w + b * n * h->real_bytes;
    const uint8_t *v = h->z != NULL ? (const uint8_t *)h->z + b * n * n * h->element_bytes : NULL;
    eig_check_ratios r;
    eig_error e = eig_check_pairs(p->params.precision, EIG_STORAGE_FULL, EIG_LOWER, (int)n, a, (int)n, w, v, &r);
    if (e != EIG_OK) {
        snprintf(err, err_bytes, "self-check of matrix %zu: %s", b, eig_strerror(e));
        return PIPELINE_EINVAL;
    }
    f->check.residual = r.residual;
    f->check.orthogonality = r.orthogonality;
    f->check.ns = host_now_ns() - start;
    f->check.state = FRAME_CHECK_DONE;
    return PIPELINE_OK;
}

/* Per matrix: its n values, then columns first_index .. first_index +
 * k_sent - 1 of its eigenvectors, which are contiguous (column-major). */
static pipeline_error host_output_start(path *p, frame *f, output_buffer *out, char *err, size_t err_bytes)
{
    path_host *h = (path_host *)p;
    size_t n = p->params.n;
    size_t values_bytes = n * h->real_bytes, column_bytes = n * h->element_bytes;
    uint8_t *dst = out->data;
    (void)err;
    (void)err_bytes;
    for (uint32_t b = 0; b < p->params.matrices; b++) {
        const protocol_matrix_meta *m = &out->matrix_meta[b];
        memcpy(dst, (const uint8_t *)f->w + b * values_bytes, values_bytes);
        dst += values_bytes;
        if (m->k_sent > 0) {
            memcpy(dst, (const uint8_t *)h->z + (b * n + m->first_index) * column_bytes, m->k_sent * column_bytes);
            dst += m->k_sent * column_bytes;
        }
    }
    return PIPELINE_OK;
}

static pipeline_error host_output_wait(path *p, frame *f, char *err, size_t err_bytes)
{
    (void)p;
    (void)f;
    (void)err;
    (void)err_bytes;
    return PIPELINE_OK; /* ready since path_output_start */
}

static void host_release(path *p, frame *f)
{
    (void)p;
    (void)f; /* the host path holds nothing per frame */
}

static void host_destroy(path *p)
{
    path_host *h = (path_host *)p;
    eig_plan_destroy(&h->plan);
    form_iq_destroy(&h->iq);
    free(h->z);
    free(h);
}

static const path_ops host_ops = {
    .name = "host",
    .buffer_alloc = host_buffer_alloc,
    .buffer_free = host_buffer_free,
    .form = host_form,
    .solve = host_solve,
    .check_start = host_check_start,
    .output_start = host_output_start,
    .output_wait = host_output_wait,
    .release = host_release,
    .destroy = host_destroy,
};

/* The IQ forming plan (FFTW planning with wisdom: may take seconds on a
 * first start). A wisdom file that could not be read or saved is logged, not
 * fatal (form_iq.h). */
static pipeline_error host_iq_create(path_host *h, char *err, size_t err_bytes)
{
    const path_params *q = &h->base.params;
    if (form_iq_check_solver(&q->iq, q->n, q->matrices, q->precision, err, err_bytes) != FORM_IQ_OK)
        return PIPELINE_EINVAL;
    char why[224];
    form_iq_error e = form_iq_create(&h->iq, &q->iq, why, sizeof why);
    if (e != FORM_IQ_OK) {
        snprintf(err, err_bytes, "IQ forming plan: %s", why);
        return e == FORM_IQ_ENOMEM ? PIPELINE_ENOMEM : PIPELINE_EINVAL;
    }
    if (form_iq_wisdom_note(h->iq) != NULL)
        LOG_WARN("form", "%s", form_iq_wisdom_note(h->iq));
    return PIPELINE_OK;
}

pipeline_error path_host_create(path **out, const path_params *params, eig_backend backend, char *err,
                                size_t err_bytes)
{
    *out = NULL;
    path_host *h = calloc(1, sizeof *h);
    if (h == NULL) {
        snprintf(err, err_bytes, "out of memory");
        return PIPELINE_ENOMEM;
    }
    h->base.ops = &host_ops;
    h->base.params = *params;
    h->base.backend = backend;
    h->element_bytes = eig_element_bytes(params->precision);
    h->real_bytes = h->element_bytes / 2;

    eig_plan_params pp = path_plan_params(params, backend);
    eig_error e = eig_plan_create(&h->plan, &pp);
    if (e != EIG_OK) {
        path_plan_error(err, err_bytes, params, e);
        host_destroy(&h->base);
        return PIPELINE_ESOLVER;
    }
    if (params->iq_input) {
        pipeline_error pe = host_iq_create(h, err, err_bytes);
        if (pe != PIPELINE_OK) {
            host_destroy(&h->base);
            return pe;
        }
    }
    if (params->need_vectors) {
        size_t bytes = (size_t)params->matrices * params->n * params->n * h->element_bytes;
        h->z = host_buffer_alloc(&h->base, bytes);
        if (h->z == NULL) {
            snprintf(err, err_bytes, "cannot allocate the eigenvector workspace (%.1f MB)", (double)bytes / 1e6);
            host_destroy(&h->base);
            return PIPELINE_ENOMEM;
        }
    }
    *out = &h->base;
    return PIPELINE_OK;
}
