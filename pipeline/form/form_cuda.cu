/*
 * form_cuda.cu - forming kernels of the cuda frame path: unpack a packed
 * frame to full storage, forward-backward averaging, diagonal loading.
 * Same definitions as form.c (the host path); declared in form.h.
 *
 * All three: one thread block per matrix (blockIdx.x), 256 threads striding
 * over the matrix's lower-triangle elements; nothing in shared memory except
 * the trace reduction of diagonal loading (256 doubles, 2 KB). Elements are
 * float2 / double2 (interleaved re, im, as on the wire).
 */
#include <cuda_runtime.h>

#include "form.h"
#include "protocol.h"

namespace {

constexpr int kThreads = 256;

/* Lower triangle (i >= j) of full matrix b from LAPACK packed storage.
 * Lower: A(i,j) at i + j(2n-j-1)/2. Upper: A(j,i), j <= i, at j + i(i+1)/2,
 * and A(i,j) = conj(A(j,i)). */
template <typename C>
__global__ void unpack_kernel(const C *__restrict__ packed, C *__restrict__ full, int n, int lower)
{
    size_t b = blockIdx.x;
    const C *src = packed + b * (size_t)n * (n + 1) / 2;
    C *dst = full + b * (size_t)n * n;
    for (int idx = threadIdx.x; idx < n * n; idx += blockDim.x) {
        int i = idx % n, j = idx / n;
        if (i < j)
            continue;
        C v;
        if (lower) {
            v = src[i + (size_t)j * (2 * n - j - 1) / 2];
        } else {
            v = src[j + (size_t)i * (i + 1) / 2];
            v.y = -v.y;
        }
        dst[idx] = v;
    }
}

/* (R + J conj(R) J)/2 on the lower triangle: element (i,j) pairs with
 * (n-1-j, n-1-i), also lower; each pair is averaged once by the thread of its
 * lower-indexed member, so no two threads touch the same element. */
template <typename C>
__global__ void forward_backward_kernel(C *a, int n)
{
    C *m = a + (size_t)blockIdx.x * n * n;
    for (int idx = threadIdx.x; idx < n * n; idx += blockDim.x) {
        int i = idx % n, j = idx / n;
        if (i < j)
            continue;
        int mirror = (n - 1 - j) + (n - 1 - i) * n;
        if (mirror <= idx)
            continue;
        C x = m[idx], y = m[mirror], mean;
        mean.x = (x.x + y.x) / 2;
        mean.y = (x.y + y.y) / 2;
        m[idx] = mean;
        m[mirror] = mean;
    }
}

/* R <- R + factor * trace(R)/n * I; the trace is summed in double. */
template <typename C>
__global__ void diagonal_loading_kernel(C *a, int n, double factor)
{
    __shared__ double partial[kThreads];
    C *m = a + (size_t)blockIdx.x * n * n;
    double sum = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sum += (double)m[i + (size_t)i * n].x;
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half)
            partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    double load = factor * partial[0] / n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        m[i + (size_t)i * n].x += (decltype(m[0].x))load;
}

/* NULL when the launch went, else why it did not. */
const char *launched()
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

} // namespace

extern "C" const char *form_cuda_unpack(const void *d_packed, void *d_full, uint32_t n, uint32_t matrices,
                                        uint8_t element, uint8_t storage, void *stream)
{
    int lower = storage == PROTOCOL_STORAGE_PACKED_LOWER;
    cudaStream_t s = (cudaStream_t)stream;
    if (element == EIG_COMPLEX_FLOAT)
        unpack_kernel<float2><<<matrices, kThreads, 0, s>>>((const float2 *)d_packed, (float2 *)d_full, (int)n, lower);
    else
        unpack_kernel<double2><<<matrices, kThreads, 0, s>>>((const double2 *)d_packed, (double2 *)d_full, (int)n,
                                                            lower);
    return launched();
}

extern "C" const char *form_cuda_forward_backward(void *d_a, uint32_t n, uint32_t matrices, uint8_t element,
                                                  void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (element == EIG_COMPLEX_FLOAT)
        forward_backward_kernel<float2><<<matrices, kThreads, 0, s>>>((float2 *)d_a, (int)n);
    else
        forward_backward_kernel<double2><<<matrices, kThreads, 0, s>>>((double2 *)d_a, (int)n);
    return launched();
}

extern "C" const char *form_cuda_diagonal_loading(void *d_a, uint32_t n, uint32_t matrices, uint8_t element,
                                                  double factor, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (element == EIG_COMPLEX_FLOAT)
        diagonal_loading_kernel<float2><<<matrices, kThreads, 0, s>>>((float2 *)d_a, (int)n, factor);
    else
        diagonal_loading_kernel<double2><<<matrices, kThreads, 0, s>>>((double2 *)d_a, (int)n, factor);
    return launched();
}
