/*
 * eig_backend_cuda.h - the cuda backend as the plan dispatcher (eig_plan.c)
 * calls it: declared here, next to the cpu and lapack backends of
 * eig_internal.h, implemented in cuda/ (eig_cuda_plan.cu), which includes
 * this header. Not installed, not public; C and C++ (no complex.h).
 *
 * eig/ calls these only when built with EIGSTREAM_HAVE_CUDA. The plan state
 * is opaque to eig/; every function returns an eig_error and never prints
 * or aborts.
 */
#ifndef EIGSTREAM_EIG_BACKEND_CUDA_H
#define EIGSTREAM_EIG_BACKEND_CUDA_H

#include "eig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eig_cuda_plan eig_cuda_plan;

/* Number of usable CUDA devices; 0 when no driver or GPU (never an error). */
int eig_cuda_runtime_device_count(void);

/* Validates params for the GPU (params->backend is EIG_BACKEND_CUDA, the
 * generic ranges already checked by eig_plan.c are checked again), picks
 * kernels, allocates all device workspace, and pinned host staging unless
 * params->device_only. */
eig_error eig_cuda_plan_create(eig_cuda_plan **out, const eig_plan_params *params);

/* Host buffers in and out; synchronous. Same contract as eig_plan_execute
 * (EIG_EUNSUPPORTED for a device_only plan). */
eig_error eig_cuda_plan_execute(eig_cuda_plan *plan, const void *a, void *w, void *z,
                                int *info);

/* Device buffers, d_a in the given storage and triangle, enqueued on stream
 * (a cudaStream_t) without synchronizing. Same contract as
 * eig_plan_execute_device_layout. */
eig_error eig_cuda_plan_execute_device(eig_cuda_plan *plan, eig_storage storage, eig_uplo uplo,
                                       const void *d_a, void *d_w, void *d_z, int *d_info,
                                       void *stream);

/* Waits for the plan's own stream and frees everything; NULL is a no-op. */
void eig_cuda_plan_destroy(eig_cuda_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
