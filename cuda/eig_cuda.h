/*
 * eig_cuda.h - the cuda backend as seen by the plan dispatcher in eig/.
 *
 * Internal: only eig/eig_plan.c (and GPU tests/bench) include this. Built only
 * when EIGSTREAM_HAVE_CUDA is defined; eig/ never calls these otherwise.
 * State is opaque to eig/; every function returns an eig_error and never
 * prints or aborts.
 */
#ifndef EIGSTREAM_EIG_CUDA_H
#define EIGSTREAM_EIG_CUDA_H

#include "eig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eig_cuda_plan eig_cuda_plan;

/* Number of usable CUDA devices; 0 when no driver or GPU (never an error). */
int eig_cuda_runtime_device_count(void);

/* Validates params for the GPU (params->backend is EIG_BACKEND_CUDA), picks
 * kernels, allocates all device and pinned host workspace. */
eig_error eig_cuda_plan_create(eig_cuda_plan **out, const eig_plan_params *params);

/* Host buffers in and out; synchronous. Same contract as eig_plan_execute. */
eig_error eig_cuda_plan_execute(eig_cuda_plan *plan, const void *a, void *w, void *z,
                                int *info);

/* Device buffers, asynchronous on stream (cudaStream_t). */
eig_error eig_cuda_plan_execute_device(eig_cuda_plan *plan, const void *d_a, void *d_w,
                                       void *d_z, int *d_info, void *stream);

void eig_cuda_plan_destroy(eig_cuda_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
