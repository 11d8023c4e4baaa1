/*
 * path_cuda_check.cu - the self-check kernels (path_cuda_check.h).
 *
 * check_columns: one thread block of CHECK_THREADS per column j of the
 * matrix and block of PATH_CUDA_CHECK_ROWS rows (grid n x chunks); each row
 * i by one warp, its lanes over l, so that what a row reads runs along a
 * column (A(i,l) = conj A(l,i): column i of A; v_i: column i of V) and a
 * warp has few rows after one another (a thread per row reading along rows,
 * 128 blocks at n = 128, was latency-bound: ~30 us of GPU time on an H200):
 *   residual column  sum_i |sum_l A(i,l) v_lj - w_j v_ij|
 *   orthogonality    sum_i |v_i^H v_j - delta_ij|
 *   norm column      sum_i |A(i,j)|
 * each as a partial sum over the block's rows.
 * with v_j in shared memory (n elements of T: at most 512 x 16 = 8 KiB at
 * EIG_CUDA_N_MAX, under the 48 KiB every device gives without opting in),
 * plus CHECK_THREADS doubles for the block's sums (2 KiB). Values only
 * (no vectors): each block its norm column; column 0's blocks also the
 * partial sums of sum w - trace A.
 * check_ratios: one block of CHECK_THREADS adds each column's partial sums
 * and reduces the n columns (max, NaN wins) into the two ratios, as
 * eig_check_pairs (eig/eig_check.c) defines
 * them: the same numbers on either side, to rounding. Every sum in double.
 * O(n^3) operations on n blocks: for n = 32 under ten microseconds of GPU
 * time, measured by the cuda path between two events (f->check.ns).
 */
#include "path_cuda_check.h"

#include <cuComplex.h>
#include <float.h>

namespace {

constexpr int CHECK_THREADS = 256;
constexpr int WARP = 32;
static_assert(PATH_CUDA_CHECK_ROWS % (CHECK_THREADS / WARP) == 0, "every warp of a block takes as many rows");

template <typename T> struct cx;
template <> struct cx<cuFloatComplex> {
    using real = float;
    __device__ static cuDoubleComplex wide(cuFloatComplex x) { return make_cuDoubleComplex(x.x, x.y); }
    static constexpr double eps = FLT_EPSILON;
};
template <> struct cx<cuDoubleComplex> {
    using real = double;
    __device__ static cuDoubleComplex wide(cuDoubleComplex x) { return x; }
    static constexpr double eps = DBL_EPSILON;
};

/* A(i, j) of the Hermitian matrix from its stored triangle (eig.h layouts). */
template <typename T>
__device__ cuDoubleComplex element(const T *a, int n, eig_storage storage, eig_uplo uplo, int i, int j)
{
    bool stored = uplo == EIG_LOWER ? i >= j : i <= j;
    int r = stored ? i : j, c = stored ? j : i;
    size_t at = storage == EIG_STORAGE_FULL ? (size_t)r + (size_t)c * n
                : uplo == EIG_LOWER         ? (size_t)r + (size_t)c * (2 * (size_t)n - c - 1) / 2
                                            : (size_t)r + (size_t)c * (c + 1) / 2;
    cuDoubleComplex x = cx<T>::wide(a[at]);
    return stored ? x : cuConj(x);
}

/* The block's sum of x over its threads, in sums[0..CHECK_THREADS). */
__device__ double block_sum(double *sums, double x)
{
    sums[threadIdx.x] = x;
    __syncthreads();
    for (int half = CHECK_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            sums[threadIdx.x] += sums[threadIdx.x + half];
        __syncthreads();
    }
    double total = sums[0];
    __syncthreads();
    return total;
}

/* The warp's sum of x, in lane 0. */
__device__ double warp_sum(double x)
{
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        x += __shfl_down_sync(0xffffffffu, x, offset);
    return x;
}

template <typename T>
__global__ void __launch_bounds__(CHECK_THREADS)
check_columns(const T *a, int n, eig_storage storage, eig_uplo uplo, const typename cx<T>::real *w, const T *v,
              double *columns)
{
    extern __shared__ unsigned char shared_bytes[];
    T *vj = reinterpret_cast<T *>(shared_bytes);
    __shared__ double sums[CHECK_THREADS];
    const int j = blockIdx.x, lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    const int first = blockIdx.y * PATH_CUDA_CHECK_ROWS, end = min(n, first + PATH_CUDA_CHECK_ROWS);
    double norm = 0, res = 0, orth = 0;
    for (int i = first + threadIdx.x; i < end; i += blockDim.x)
        norm += cuCabs(element(a, n, storage, uplo, i, j));
    if (v != nullptr) {
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            vj[i] = v[(size_t)j * n + i];
        __syncthreads();
        const double wj = w[j];
        /* Warp-uniform i: every lane reaches the shuffles. */
        for (int i = first + warp; i < end; i += CHECK_THREADS / WARP) {
            cuDoubleComplex r = make_cuDoubleComplex(0, 0), g = r;
            const T *vi = v + (size_t)i * n;
#pragma unroll 4
            for (int l = lane; l < n; l += WARP) {
                cuDoubleComplex x = cx<T>::wide(vj[l]);
                r = cuCfma(cuConj(element(a, n, storage, uplo, l, i)), x, r);
                g = cuCfma(cuConj(cx<T>::wide(vi[l])), x, g);
            }
            double rx = warp_sum(r.x), ry = warp_sum(r.y), gx = warp_sum(g.x), gy = warp_sum(g.y);
            if (lane == 0) {
                cuDoubleComplex vij = cx<T>::wide(vj[i]);
                res += cuCabs(make_cuDoubleComplex(rx - wj * vij.x, ry - wj * vij.y));
                orth += cuCabs(make_cuDoubleComplex(gx - (i == j ? 1.0 : 0.0), gy));
            }
        }
    } else if (j == 0) {
        for (int i = first + threadIdx.x; i < end; i += blockDim.x)
            res += w[i] - cuCreal(element(a, n, storage, uplo, i, i));
    }
    norm = block_sum(sums, norm);
    res = block_sum(sums, res);
    orth = block_sum(sums, orth);
    if (threadIdx.x == 0) {
        double *partial = columns + 3 * ((size_t)j * gridDim.y + blockIdx.y);
        partial[0] = res;
        partial[1] = orth;
        partial[2] = norm;
    }
}

/* max with a NaN propagating, as eig_check.c's !(x <= max). */
__device__ double nan_max(double m, double x)
{
    return !(x <= m) ? x : m;
}

/* columns: 3 partial sums per column and row block (check_columns); a
 * column's sums are added first (values only: the trace residual of column
 * 0 then taken in magnitude), then the columns reduced. */
__global__ void __launch_bounds__(CHECK_THREADS)
check_ratios(const double *columns, int n, int chunks, bool vectors, double eps, double *result)
{
    __shared__ double maxima[3][CHECK_THREADS];
    double m[3] = {0, 0, 0};
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        for (int q = 0; q < 3; q++) {
            double sum = 0;
            for (int k = 0; k < chunks; k++)
                sum += columns[3 * ((size_t)j * chunks + k) + q];
            m[q] = nan_max(m[q], q == 0 && !vectors ? fabs(sum) : sum);
        }
    for (int q = 0; q < 3; q++)
        maxima[q][threadIdx.x] = m[q];
    __syncthreads();
    for (int half = CHECK_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            for (int q = 0; q < 3; q++)
                maxima[q][threadIdx.x] = nan_max(maxima[q][threadIdx.x], maxima[q][threadIdx.x + half]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        double norm = maxima[2][0];
        double scale = isnan(norm) ? norm : (norm > DBL_MIN ? norm : DBL_MIN) * n * eps;
        result[0] = maxima[0][0] / scale;
        result[1] = maxima[1][0] / (n * eps);
    }
}

template <typename T>
const char *enqueue(eig_storage storage, eig_uplo uplo, int n, const void *d_a, const void *d_w, const void *d_v,
                    double *d_scratch, double *h_result, cudaStream_t stream)
{
    size_t shared = d_v != nullptr ? sizeof(T) * (size_t)n : 0;
    const int chunks = (n + PATH_CUDA_CHECK_ROWS - 1) / PATH_CUDA_CHECK_ROWS;
    check_columns<T><<<dim3(n, chunks), CHECK_THREADS, shared, stream>>>(
        static_cast<const T *>(d_a), n, storage, uplo, static_cast<const typename cx<T>::real *>(d_w),
        static_cast<const T *>(d_v), d_scratch);
    if (cudaGetLastError() != cudaSuccess)
        return "self-check: check_columns launch";
    double *d_result = d_scratch + 3 * (size_t)n * chunks;
    check_ratios<<<1, CHECK_THREADS, 0, stream>>>(d_scratch, n, chunks, d_v != nullptr, cx<T>::eps, d_result);
    if (cudaGetLastError() != cudaSuccess)
        return "self-check: check_ratios launch";
    if (cudaMemcpyAsync(h_result, d_result, 2 * sizeof(double), cudaMemcpyDeviceToHost, stream) != cudaSuccess)
        return "self-check: result copy";
    return nullptr;
}

} // namespace

const char *path_cuda_check_enqueue(eig_precision precision, eig_storage storage, eig_uplo uplo, int n,
                                    const void *d_a, const void *d_w, const void *d_v, double *d_scratch,
                                    double *h_result, cudaStream_t stream)
{
    /* v_j in shared memory: 8 KiB at EIG_CUDA_N_MAX, within the default 48 KiB. */
    static_assert(sizeof(cuDoubleComplex) * EIG_CUDA_N_MAX <= 48 * 1024, "v_j fits the default shared memory");
    if (n < 1 || n > EIG_CUDA_N_MAX)
        return "self-check: n outside 1..EIG_CUDA_N_MAX";
    if (precision == EIG_COMPLEX_DOUBLE)
        return enqueue<cuDoubleComplex>(storage, uplo, n, d_a, d_w, d_v, d_scratch, h_result, stream);
    return enqueue<cuFloatComplex>(storage, uplo, n, d_a, d_w, d_v, d_scratch, h_result, stream);
}
