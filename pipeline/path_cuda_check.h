/*
 * path_cuda_check.h - the self-check on the GPU (path_cuda_check.cu): the
 * ratios of eig_check_pairs (eig.h) for one matrix whose pairs are still on
 * the device, enqueued on the frame's stream after its solve. Internal to
 * the cuda path (path_cuda.cu).
 */
#ifndef EIGSTREAM_PATH_CUDA_CHECK_H
#define EIGSTREAM_PATH_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "eig.h"

/* Rows of the matrix one thread block of the check takes (8 warps, 4 rows
 * each): the rows are split over ceil(n / PATH_CUDA_CHECK_ROWS) blocks per
 * column, so that n = 128 keeps 512 blocks in flight, not 128. */
#define PATH_CUDA_CHECK_ROWS 32

/* Device scratch of one check: 3 partial sums per column and row block, and
 * the 2 ratios. */
static inline size_t path_cuda_check_scratch_bytes(int n)
{
    size_t chunks = ((size_t)n + PATH_CUDA_CHECK_ROWS - 1) / PATH_CUDA_CHECK_ROWS;
    return sizeof(double) * (3 * (size_t)n * chunks + 2);
}

/* Enqueues on stream: the ratios of matrix a (n x n in storage/uplo, only
 * that triangle read), its n values d_w (real, of the precision) and its n
 * vectors d_v (n x n column-major; NULL: values only, the trace identity),
 * into d_scratch (path_cuda_check_scratch_bytes(n)), then the two ratios
 * (residual, orthogonality: doubles) copied to h_result (pinned). Returns
 * NULL or what failed (a launch or copy error, n outside 1..EIG_CUDA_N_MAX). */
const char *path_cuda_check_enqueue(eig_precision precision, eig_storage storage, eig_uplo uplo, int n,
                                    const void *d_a, const void *d_w, const void *d_v, double *d_scratch,
                                    double *h_result, cudaStream_t stream);

#endif
