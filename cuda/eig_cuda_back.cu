/*
 * eig_cuda_back.cu - back-transformation z = Q D Zr with
 * Q = H_0 H_1 ... H_{n-3}, D the phases and Zr the real eigenvectors of the
 * tridiagonal (already sorted by the qr kernel).
 *
 * Grid (matrices, ceil(n / columns)); CTA = threads; a slab of `columns`
 * columns of z lives in shared memory (n * columns complex). Each column is
 * owned by threads/columns consecutive lanes of one warp, which split its rows
 * round-robin (row i belongs to lane i mod lanes, always): the dot product u^H x of a reflector is a shuffle reduction
 * within those lanes and the rank-1 update touches only their own rows, so the
 * reflector loop needs no __syncthreads at all. Reflector vectors are read
 * from the workspace (L1/L2: every column group reads the same u_k).
 * A matrix with info != 0 gets a NaN slab.
 */
#include "eig_cuda_internal.cuh"

namespace {

template <typename R>
__global__ void __launch_bounds__(256)
    back_kernel(int n, int columns, eig_cuda_workspace ws,
                typename eig_cuda_complex<R>::type *__restrict__ z_all,
                const int *__restrict__ info_all)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int b = blockIdx.x, tid = threadIdx.x;
    const int tpc = blockDim.x / columns; /* lanes per column: 8, 16 or 32 */
    const int c = tid / tpc, t = tid % tpc;
    const int col = blockIdx.y * columns + c;
    const size_t nn = (size_t)n * n;
    C *z = z_all + (size_t)b * nn;

    if (info_all[b] != 0) {
        if (col < n)
            for (int i = t; i < n; i += tpc)
                z[i + (size_t)col * n] = cmake<C>((R)NAN, (R)NAN);
        return;
    }
    extern __shared__ double2 smem_raw[];
    C *x = (C *)smem_raw + (size_t)c * n;
    const R *zr = (const R *)ws.zreal + (size_t)b * nn;
    const C *phase = (const C *)ws.phase + (size_t)b * n;
    const C *refl = (const C *)ws.reflector + (size_t)b * nn;
    const R *sigma = (const R *)ws.sigma + (size_t)b * n;
    for (int i = t; i < n; i += tpc)
        x[i] = col < n ? cscale(zr[i + (size_t)col * n], phase[i]) : cmake<C>(0, 0);

    for (int k = n - 3; k >= 0; --k) {
        const R sg = sigma[k];
        if (sg == 0)
            continue;
        const C *u = refl + (size_t)k * n;
        /* rows i = t (mod tpc) stay with this lane for the whole loop: the
         * x elements are never shared between lanes */
        const int i0 = k + 1 + ((t - (k + 1)) % tpc + tpc) % tpc;
        C dot = cmake<C>(0, 0);
        for (int i = i0; i < n; i += tpc)
            dot = cfmac(u[i], x[i], dot);
        for (int o = tpc >> 1; o > 0; o >>= 1) {
            dot.x += __shfl_xor_sync(0xffffffffu, dot.x, o);
            dot.y += __shfl_xor_sync(0xffffffffu, dot.y, o);
        }
        dot = cscale(sg, dot);
        for (int i = i0; i < n; i += tpc)
            x[i] = csub(x[i], cmul(dot, u[i]));
    }
    if (col < n)
        for (int i = t; i < n; i += tpc)
            z[i + (size_t)col * n] = x[i];
}

} // namespace

template <typename R> size_t eig_cuda_back_smem(int n, int columns)
{
    typedef typename eig_cuda_complex<R>::type C;
    return (size_t)n * columns * sizeof(C);
}

template <typename R> cudaError_t eig_cuda_back_set_smem(size_t bytes)
{
    return cudaFuncSetAttribute(back_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)bytes);
}

template <typename R>
cudaError_t eig_cuda_back_launch(const eig_cuda_back_config *cfg, int n, int count,
                                 const eig_cuda_workspace *ws, void *z, const int *info,
                                 cudaStream_t stream)
{
    typedef typename eig_cuda_complex<R>::type C;
    dim3 grid(count, (n + cfg->columns - 1) / cfg->columns);
    back_kernel<R><<<grid, cfg->threads, cfg->smem, stream>>>(n, cfg->columns, *ws, (C *)z,
                                                              info);
    return cudaGetLastError();
}

#define EIG_CUDA_BACK_INSTANTIATE(R)                                                              \
    template size_t eig_cuda_back_smem<R>(int, int);                                             \
    template cudaError_t eig_cuda_back_set_smem<R>(size_t);                                      \
    template cudaError_t eig_cuda_back_launch<R>(const eig_cuda_back_config *, int, int,         \
                                                 const eig_cuda_workspace *, void *,             \
                                                 const int *, cudaStream_t);
EIG_CUDA_BACK_INSTANTIATE(float)
EIG_CUDA_BACK_INSTANTIATE(double)
