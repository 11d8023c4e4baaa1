/*
 * eig_cuda_stages.h - benchmark hook of the cuda backend (not part of the
 * plan API): runs the device entry point with CUDA events between its three
 * kernels and waits for it. Only for plans whose batch fits one launch group.
 */
#ifndef EIGSTREAM_EIG_CUDA_STAGES_H
#define EIGSTREAM_EIG_CUDA_STAGES_H

#include "eig_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* stage_ms[0] tridiagonalization (with the input check), [1] implicit QR and
 * rotation accumulation, [2] back-transformation (0 for values-only). */
eig_error eig_cuda_plan_execute_device_staged(eig_cuda_plan *plan, const void *d_a, void *d_w,
                                              void *d_z, int *d_info, void *stream,
                                              float stage_ms[3]);

#ifdef __cplusplus
}
#endif

#endif
