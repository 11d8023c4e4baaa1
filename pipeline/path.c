/*
 * path.c - picks a frame path and dispatches to it (path.h).
 */
#include <stdio.h>

#include "path.h"

pipeline_error path_create(path **out, const path_params *params, char *err, size_t err_bytes)
{
    *out = NULL;
    eig_backend backend = eig_backend_resolve(params->backend, (int)params->n);
    /* Asked for cuda where no GPU answers (none, or a driver the runtime
     * cannot use): the one message naming the backend and the GPU count,
     * before any CUDA call gives a less telling one. */
    if (backend == EIG_BACKEND_CUDA && eig_cuda_device_count() == 0) {
        path_plan_error(err, err_bytes, params, eig_cuda_built() ? EIG_ENODEVICE : EIG_ENOCUDA);
        return PIPELINE_ESOLVER;
    }
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

const char *path_device_name(const path *p)
{
    return p->device_name[0] != '\0' ? p->device_name : "none";
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

pipeline_error path_check_start(path *p, frame *f, char *err, size_t err_bytes)
{
    return p->ops->check_start(p, f, err, err_bytes);
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
