/*
 * eig_cuda_phases.h - the three phases of a cuda plan, one launch group at a
 * time: what eig_cuda_plan_execute_device enqueues, exposed inside cuda/ and
 * to tools that time the phases apart (tools/bench/bench_cuda.cu records CUDA
 * events between them). Not installed, not part of the plan API: the caller
 * makes the plan's device current and orders the launches itself.
 */
#ifndef EIGSTREAM_EIG_CUDA_PHASES_H
#define EIGSTREAM_EIG_CUDA_PHASES_H

#include <cuda_runtime_api.h>

#include "eig_backend_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum eig_cuda_phase {
    EIG_CUDA_PHASE_TRIDIAG = 0, /* input check, scaling, Householder tridiagonalization */
    EIG_CUDA_PHASE_QR,          /* implicit QR: eigenvalues, rotations accumulated in Zr */
    EIG_CUDA_PHASE_BACK,        /* back-transformation z = Q D Zr (vectors jobs; else nothing) */
    EIG_CUDA_PHASE_COUNT
} eig_cuda_phase;

/* Matrices per launch group: the plan's workspace holds this many (the whole
 * batch when it fits the plan's workspace budget). */
size_t eig_cuda_plan_group_size(const eig_cuda_plan *plan);

/* Enqueues one phase for the launch group of matrices first .. first+count-1
 * (1 <= count <= the group size, within the batch) on stream. d_a (in the
 * given storage and triangle), d_w, d_z, d_info are the whole batch's, as
 * for eig_cuda_plan_execute_device. The workspace is shared: the phases of a
 * group go in order, and a group's tridiagonalization after the previous
 * group's last phase, on one stream. Returns EIG_EINVAL for a bad phase,
 * layout or group, EIG_EDEVICE when the launch fails. */
eig_error eig_cuda_plan_enqueue_phase(eig_cuda_plan *plan, eig_cuda_phase phase,
                                      eig_storage storage, eig_uplo uplo, size_t first, int count,
                                      const void *d_a, void *d_w, void *d_z, int *d_info,
                                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
