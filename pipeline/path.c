/*
 * path.c - picks a frame path and dispatches to it (path.h).
 */
#include <stdio.h>

#include "path.h"

pipeline_error path_create(path **out, const path_params *params, char *err, size_t err_bytes)
{
    *out = NULL;
    eig_backend backend = eig_backend_resolve(params->backend, (int)params->n);
#ifdef EIGSTREAM_PIPELINE_CUDA
    if (backend == EIG_BACKEND_CUDA)
        return path_cuda_create(out, params, err, err_bytes);
#endif
    return path_host_create(out, params, backend, err, err_bytes);
}

void path_destroy(path **p)
{
    if (p == NULL || *p == NULL)
        return;
    (*p)->ops->destroy(*p);
    *p = NULL;
}

const char *path_name(const path *p)
{
    return p->ops->name;
}

void *path_buffer_alloc(path *p, size_t bytes)
{
    return p->ops->buffer_alloc(p, bytes == 0 ? 64 : bytes);
}

void path_buffer_free(path *p, void *ptr)
{
    if (ptr != NULL)
        p->ops->buffer_free(p, ptr);
}

pipeline_error path_form(path *p, frame *f, char *err, size_t err_bytes)
{
    return p->ops->form(p, f, err, err_bytes);
}

pipeline_error path_solve(path *p, frame *f, char *err, size_t err_bytes)
{
    return p->ops->solve(p, f, err, err_bytes);
}

pipeline_error path_output_start(path *p, frame *f, output_buffer *out, char *err, size_t err_bytes)
{
    return p->ops->output_start(p, f, out, err, err_bytes);
}

pipeline_error path_output_wait(path *p, frame *f, char *err, size_t err_bytes)
{
    return p->ops->output_wait(p, f, err, err_bytes);
}

void path_release(path *p, frame *f)
{
    p->ops->release(p, f);
}

eig_plan_params path_plan_params(const path_params *params, eig_backend backend)
{
    eig_plan_params pp = eig_plan_params_default();
    pp.n = (int)params->n;
    pp.batch = (int)params->matrices;
    pp.precision = params->precision;
    pp.job = params->need_vectors ? EIG_JOB_VECTORS : EIG_JOB_VALUES;
    pp.storage = EIG_STORAGE_FULL; /* after forming; the cuda path picks the layout per frame */
    pp.uplo = EIG_LOWER;
    pp.backend = backend;
    pp.threads = params->cpu_threads;
    pp.device = params->gpu_device;
    return pp;
}

void path_plan_error(char *err, size_t err_bytes, const path_params *params, eig_error e)
{
    if (e == EIG_ENODEVICE || e == EIG_ENOCUDA)
        snprintf(err, err_bytes, "solver.backend = %s: %s (eigstream built %s CUDA, %d usable GPU)",
                 eig_backend_name(params->backend), eig_strerror(e), eig_cuda_built() ? "with" : "without",
                 eig_cuda_device_count());
    else
        snprintf(err, err_bytes, "solver plan (n=%u, matrices=%u, %s, backend %s): %s", params->n,
                 params->matrices, eig_precision_name(params->precision), eig_backend_name(params->backend),
                 eig_strerror(e));
}
