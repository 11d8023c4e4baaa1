/*
 * eig_cuda_back.cu - back-transformation z = Q D Zr with
 * Q = H_0 H_1 ... H_{n-3}, D the phases and Zr the real eigenvectors of the
 * tridiagonal (already sorted by the qr kernel), in blocked (compact WY) form.
 *
 * The reflectors are grouped in blocks of EIG_CUDA_BACK_NB consecutive ones,
 * H_k0 ... H_{k0+nb-1} = I - V T V^H (LAPACK zlarft, forward, columnwise: V
 * holds u_k0.. in its columns, T is upper triangular with T_rr = sigma_r).
 * Two kernels:
 *   1. back_wy_kernel, grid (matrices, blocks), 256 threads: makes V canonical
 *      in ws.reflector (zero above each reflector's first row and for identity
 *      reflectors, sigma = 0, whose column the tridiagonalization never wrote),
 *      forms G = V^H V, T by the zlarft recursion, and writes Y = V T to ws.wy.
 *      Shared memory: nb (n-1) C (V) + 2 nb^2 C (G, T) + nb R.
 *   2. back_kernel, grid (matrices, ceil(n / columns)), 256 threads: a slab of
 *      `columns` columns of z lives in shared memory (n * columns C). Each
 *      column is owned by 256/columns consecutive lanes of one warp; row j
 *      belongs to lane j mod lanes for the whole kernel (no x element is ever
 *      shared between lanes). Per
 *      block (last block first): W = V^H x (nb partial dot products per lane,
 *      one x load per nb fused multiply-adds, then a shuffle all-reduce within
 *      the lanes of the column) and x -= Y W. No __syncthreads except around
 *      staging V and Y of the block in shared memory (2 nb n C), which is done
 *      when it fits ("stage"); otherwise V and Y are read from global memory
 *      (L1/L2) in the same pattern.
 * A matrix with info != 0 gets a NaN slab.
 */
#include "eig_cuda_internal.cuh"

namespace {

constexpr int NB = EIG_CUDA_BACK_NB;

/* Row r of T for a block's first `count` reflectors (LAPACK zlarft, forward,
 * columnwise): T(r, r) = sigma_r, T(r, s) = -sigma_s sum_{q=r}^{s-1} T(r, q)
 * G(q, s) for r < s with G = V^H V, 0 below the diagonal. g and t are
 * column-major with leading dimension ld; the calling thread (one per row)
 * reads only the entries of row r it has written itself. */
template <typename R, typename C>
__device__ void zlarft_row(int r, int count, const R *sigma, const C *g, C *t, int ld)
{
    for (int s = 0; s < count; ++s) {
        C v = cmake<C>(0, 0);
        if (r == s) {
            v.x = sigma[s];
        } else if (r < s) {
            C acc = cmake<C>(0, 0);
            for (int q = r; q < s; ++q)
                acc = cfma(t[r + q * ld], g[q + s * ld], acc);
            v = cscale(-sigma[s], acc);
        }
        t[r + s * ld] = v;
    }
}

/* Y = V T for block blockIdx.y of matrix blockIdx.x (see the file comment). */
template <typename R>
__global__ void __launch_bounds__(256)
    back_wy_kernel(int n, eig_cuda_workspace ws, const int *__restrict__ info_all)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    if (info_all[b] != 0)
        return;
    const int k0 = blockIdx.y * NB, kb = min(NB, n - 2 - k0), m = n - 1 - k0;
    const size_t nn = (size_t)n * n;
    C *refl = (C *)ws.reflector + (size_t)b * nn;
    C *wy = (C *)ws.wy + (size_t)b * nn;
    const R *sigma = (const R *)ws.sigma + (size_t)b * n;
    extern __shared__ double2 smem_raw[];
    C *vs = (C *)smem_raw;        /* V: column r at vs + r m, rows k0+1.. */
    C *g = vs + (size_t)NB * m;   /* G = V^H V, column-major NB x NB */
    C *t = g + NB * NB;           /* T, column-major NB x NB */
    R *sg = (R *)(t + NB * NB);   /* sigma of the block's reflectors, 0 past kb */

    for (int idx = tid; idx < NB * m; idx += nt) {
        const int r = idx / m, i = idx % m, row = k0 + 1 + i, col = k0 + r;
        C v = cmake<C>(0, 0);
        if (r < kb && row > col && sigma[col] != 0)
            v = refl[row + (size_t)col * n];
        vs[idx] = v;
        if (r < kb)
            refl[row + (size_t)col * n] = v;
    }
    if (tid < NB)
        sg[tid] = tid < kb ? sigma[k0 + tid] : (R)0;
    __syncthreads();

    /* G_rs = u_r^H u_s for r < s: one warp per pair, lanes over rows */
    const int lane = tid & 31, warp = tid >> 5, warps = nt >> 5;
    for (int pair = warp; pair < NB * NB; pair += warps) {
        const int r = pair % NB, s = pair / NB;
        if (r >= s)
            continue;
        C acc = cmake<C>(0, 0);
        for (int i = lane; i < m; i += 32)
            acc = cfmac(vs[r * m + i], vs[s * m + i], acc);
        for (int o = 16; o > 0; o >>= 1) {
            acc.x += __shfl_xor_sync(0xffffffffu, acc.x, o);
            acc.y += __shfl_xor_sync(0xffffffffu, acc.y, o);
        }
        if (lane == 0)
            g[r + s * NB] = acc;
    }
    __syncthreads();

    /* T: lane r owns row r (sigma is 0 past kb: those columns are 0) */
    if (tid < NB)
        zlarft_row(tid, NB, sg, g, t, NB);
    __syncthreads();

    for (int idx = tid; idx < kb * m; idx += nt) {
        const int s = idx / m, i = idx % m;
        C acc = cmake<C>(0, 0);
        for (int r = 0; r <= s; ++r)
            acc = cfma(vs[r * m + i], t[r + s * NB], acc);
        wy[(k0 + 1 + i) + (size_t)(k0 + s) * n] = acc;
    }
}

/* One level of a reduce-scatter over the lanes t and t ^ o (o = 0: nothing):
 * the lane with bit o set keeps the upper HALF of w[0 .. 2 HALF) and adds
 * its partner's, the other the lower half; base tracks the first index kept. */
template <int HALF, typename C>
__device__ __forceinline__ void butterfly_level(C (&w)[NB], int t, int o, int &base)
{
    if (o == 0)
        return;
    const bool upper = (t & o) != 0;
#pragma unroll
    for (int q = 0; q < HALF; ++q) {
        const C send = upper ? w[q] : w[q + HALF];
        const C keep = upper ? w[q + HALF] : w[q];
        w[q].x = keep.x + __shfl_xor_sync(0xffffffffu, send.x, o);
        w[q].y = keep.y + __shfl_xor_sync(0xffffffffu, send.y, o);
    }
    if (upper)
        base += HALF;
}

/* at most 128 registers: two CTAs of 256 threads per SM */
template <typename R, bool STAGE>
__global__ void __launch_bounds__(256, 2)
    back_kernel(int n, int columns, eig_cuda_workspace ws,
                typename eig_cuda_complex<R>::type *__restrict__ z_all,
                const int *__restrict__ info_all)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    const int tpc = nt / columns; /* lanes per column: 8, 16 or 32 */
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
    C *vs = (C *)smem_raw + (size_t)columns * n; /* staged V, NB columns of ld n */
    C *ys = vs + (size_t)NB * n;                  /* staged Y */
    C *wsm = (C *)smem_raw + (size_t)columns * n + (STAGE ? 2 * (size_t)NB * n : 0) +
             (size_t)c * NB; /* this column's reduced W */
    const R *zr = (const R *)ws.zreal + (size_t)b * nn;
    const C *phase = (const C *)ws.phase + (size_t)b * n;
    const C *refl = (const C *)ws.reflector + (size_t)b * nn;
    const C *wy = (const C *)ws.wy + (size_t)b * nn;
    for (int i = t; i < n; i += tpc)
        x[i] = col < n ? cscale(zr[i + (size_t)col * n], phase[i]) : cmake<C>(0, 0);

    const int blocks = n > 2 ? (n - 2 + NB - 1) / NB : 0;
    for (int blk = blocks - 1; blk >= 0; --blk) {
        const int k0 = blk * NB, kb = min(NB, n - 2 - k0), m = n - 1 - k0;
        const C *v, *y;
        if (STAGE) {
            __syncthreads(); /* the previous block's V, Y are no longer read */
            for (int idx = tid; idx < NB * m; idx += nt) {
                const int r = idx / m, i = idx % m;
                const size_t at = (size_t)(k0 + 1 + i) + (size_t)(k0 + r) * n;
                const bool in = r < kb;
                vs[r * n + i] = in ? refl[at] : cmake<C>(0, 0);
                ys[r * n + i] = in ? wy[at] : cmake<C>(0, 0);
            }
            __syncthreads();
            v = vs;
            y = ys;
        } else {
            v = refl + (k0 + 1) + (size_t)k0 * n;
            y = wy + (k0 + 1) + (size_t)k0 * n;
        }
        /* row j of x belongs to lane j mod tpc in every block and in the
         * initial and final loops, so x is never shared between lanes;
         * j0 is this lane's first row >= k0 + 1, V and Y are indexed by
         * j - (k0 + 1) */
        const int j0 = k0 + 1 + ((t - (k0 + 1)) % tpc + tpc) % tpc;
        C *xb = x + k0 + 1;

        /* W = V^H x: each lane its rows, then all-reduce over the column's lanes */
        C w[NB];
#pragma unroll
        for (int r = 0; r < NB; ++r)
            w[r] = cmake<C>(0, 0);
        for (int i = j0 - (k0 + 1); i < m; i += tpc) {
            const C xi = xb[i];
#pragma unroll
            for (int r = 0; r < NB; ++r)
                if (STAGE || r < kb)
                    w[r] = cfmac(v[r * n + i], xi, w[r]);
        }
        /* reduce-scatter butterfly: each level halves the values a lane
         * carries (NB -> NB/2 -> ...), so a lane ends with the sums of
         * max(NB/tpc, 1) consecutive r starting at `base` */
        int base = 0;
        butterfly_level<NB / 2>(w, t, tpc >> 1, base);
        butterfly_level<NB / 4>(w, t, tpc >> 2, base);
        butterfly_level<NB / 8>(w, t, tpc >> 3, base);
        butterfly_level<NB / 16>(w, t, tpc >> 4, base);
        for (int o = tpc >> 5; o > 0; o >>= 1) { /* tpc = 32: lane pairs share one r */
            w[0].x += __shfl_xor_sync(0xffffffffu, w[0].x, o);
            w[0].y += __shfl_xor_sync(0xffffffffu, w[0].y, o);
        }
        /* all-gather through shared memory (the column's lanes are one warp) */
        __syncwarp();
        if ((t & (max(tpc / NB, 1) - 1)) == 0) {
            wsm[base] = w[0];
            if (tpc < NB)
                wsm[base + 1] = w[1];
        }
        __syncwarp();
#pragma unroll
        for (int r = 0; r < NB; ++r)
            w[r] = wsm[r];

        /* x -= Y W (two partial sums: half the dependent chain) */
        for (int i = j0 - (k0 + 1); i < m; i += tpc) {
            C a0 = cmake<C>(0, 0), a1 = cmake<C>(0, 0);
#pragma unroll
            for (int r = 0; r < NB; r += 2) {
                if (STAGE || r < kb)
                    a0 = cfma(y[r * n + i], w[r], a0);
                if (STAGE || r + 1 < kb)
                    a1 = cfma(y[(r + 1) * n + i], w[r + 1], a1);
            }
            xb[i] = csub(xb[i], cadd(a0, a1));
        }
    }
    if (col < n)
        for (int i = t; i < n; i += tpc)
            z[i + (size_t)col * n] = x[i];
}

/* ---- gemm path ------------------------------------------------------------ */

constexpr int GNB = EIG_CUDA_BACK_GEMM_NB;

/* Blocks of GNB reflectors (n - 2 reflectors in all). */
__host__ __device__ inline int gemm_blocks(int n)
{
    return n > 2 ? (n - 2 + GNB - 1) / GNB : 0;
}

/* Matrix blockIdx.y, columns blockIdx.x * 8 .. + 7 (one warp each): column
 * col of x = D Zr (NaN for a matrix with info != 0), and, for col < n - 2,
 * reflector column col made canonical for its block (zero in rows k0+1..col
 * and wholly zero when sigma = 0: the tridiagonalization writes only rows
 * col+1.. of a reflector it formed). */
template <typename R>
__global__ void __launch_bounds__(256)
    back_gemm_init_kernel(int n, eig_cuda_workspace ws,
                          typename eig_cuda_complex<R>::type *__restrict__ z_all,
                          const int *__restrict__ info_all)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int b = blockIdx.y, lane = threadIdx.x & 31;
    const int col = blockIdx.x * 8 + (threadIdx.x >> 5);
    if (col >= n)
        return;
    const size_t nn = (size_t)n * n;
    C *x = z_all + b * nn + (size_t)col * n;
    if (info_all[b] != 0) {
        for (int i = lane; i < n; i += 32)
            x[i] = cmake<C>((R)NAN, (R)NAN);
        return;
    }
    const R *zr = (const R *)ws.zreal + b * nn + (size_t)col * n;
    const C *phase = (const C *)ws.phase + (size_t)b * n;
    for (int i = lane; i < n; i += 32)
        x[i] = cscale(zr[i], phase[i]);
    if (col >= n - 2)
        return;
    C *v = (C *)ws.reflector + b * nn + (size_t)col * n;
    const int k0 = col / GNB * GNB;
    const int last = ((const R *)ws.sigma)[(size_t)b * n + col] == 0 ? n - 1 : col;
    for (int i = k0 + 1 + lane; i <= last; i += 32)
        v[i] = cmake<C>(0, 0);
}

/* T of block blockIdx.y of matrix blockIdx.x from G = V^H V (zlarft,
 * forward, columnwise: T_ss = sigma_s, T(0:s, s) = -sigma_s T(0:s, 0:s)
 * G(0:s, s)); one warp, lane r owns row r of T. G and T are GNB x GNB,
 * column-major, in the matrix's back_gemm area; only the leading kb x kb
 * part is read later. */
template <typename R>
__global__ void __launch_bounds__(32)
    back_gemm_t_kernel(int n, size_t per, eig_cuda_workspace ws, const int *__restrict__ info_all)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int b = blockIdx.x, blk = blockIdx.y, r = threadIdx.x;
    if (info_all[b] != 0)
        return;
    const int k0 = blk * GNB, kb = min(GNB, n - 2 - k0);
    const int blocks = gemm_blocks(n);
    C *area = (C *)ws.back_gemm + (size_t)b * per;
    const C *g = area + (size_t)blk * GNB * GNB;
    C *t = area + (size_t)(blocks + blk) * GNB * GNB;
    zlarft_row(r, kb, (const R *)ws.sigma + (size_t)b * n + k0, g, t, GNB);
}

/* The gemm path for `count` matrices (see eig_cuda_back_launch). Per block,
 * last first: W = V^H X, W2 = T W, X -= V W2 on rows k0+1.. of X. */
template <typename R>
cudaError_t back_gemm_launch(const eig_cuda_back_config *cfg, int n, int count,
                             const eig_cuda_workspace *ws, const eig_cuda_blas *blas,
                             typename eig_cuda_complex<R>::type *z, const int *info,
                             cudaStream_t stream)
{
    typedef typename eig_cuda_complex<R>::type C;
    const dim3 init_grid((n + 7) / 8, count);
    back_gemm_init_kernel<R><<<init_grid, 256, 0, stream>>>(n, *ws, z, info);
    cudaError_t e = cudaGetLastError();
    const int blocks = gemm_blocks(n);
    if (e != cudaSuccess || blocks == 0)
        return e;
    cublasHandle_t h = blas->handle;
    if (!eig_cuda_blas_bind(blas, stream))
        return cudaErrorUnknown;
    const long long nn = (long long)n * n, per = (long long)cfg->gemm_per;
    const C one = cmake<C>(1, 0), zero = cmake<C>(0, 0), minus_one = cmake<C>(-1, 0);
    C *area = (C *)ws->back_gemm, *refl = (C *)ws->reflector;
    C *w = area + (size_t)2 * blocks * GNB * GNB, *w2 = w + (size_t)GNB * n;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int blk = 0; blk < blocks && st == CUBLAS_STATUS_SUCCESS; ++blk) {
        const int k0 = blk * GNB, kb = min(GNB, n - 2 - k0), m = n - 1 - k0;
        const C *v = refl + (k0 + 1) + (size_t)k0 * n;
        st = eig_cuda_gemm_strided(h, CUBLAS_OP_C, CUBLAS_OP_N, kb, kb, m, one, v, n, nn, v, n, nn, zero,
                          area + (size_t)blk * GNB * GNB, GNB, per, count);
    }
    if (st != CUBLAS_STATUS_SUCCESS)
        return cudaErrorUnknown;
    back_gemm_t_kernel<R><<<dim3(count, blocks), 32, 0, stream>>>(n, cfg->gemm_per, *ws, info);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    for (int blk = blocks - 1; blk >= 0 && st == CUBLAS_STATUS_SUCCESS; --blk) {
        const int k0 = blk * GNB, kb = min(GNB, n - 2 - k0), m = n - 1 - k0;
        const C *v = refl + (k0 + 1) + (size_t)k0 * n;
        const C *t = area + (size_t)(blocks + blk) * GNB * GNB;
        C *x = z + (k0 + 1);
        st = eig_cuda_gemm_strided(h, CUBLAS_OP_C, CUBLAS_OP_N, kb, n, m, one, v, n, nn, x, n, nn, zero, w,
                          GNB, per, count);
        if (st == CUBLAS_STATUS_SUCCESS)
            st = eig_cuda_gemm_strided(h, CUBLAS_OP_N, CUBLAS_OP_N, kb, n, kb, one, t, GNB, per, w, GNB,
                              per, zero, w2, GNB, per, count);
        if (st == CUBLAS_STATUS_SUCCESS)
            st = eig_cuda_gemm_strided(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, kb, minus_one, v, n, nn, w2, GNB,
                              per, one, x, n, nn, count);
    }
    return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

template <typename R> size_t back_wy_smem(int n)
{
    typedef typename eig_cuda_complex<R>::type C;
    const size_t rows = n > 1 ? (size_t)n - 1 : 1;
    return ((size_t)NB * rows + 2 * NB * NB) * sizeof(C) + NB * sizeof(R);
}

} // namespace

template <typename R> size_t eig_cuda_back_smem(int n, int columns, bool stage)
{
    typedef typename eig_cuda_complex<R>::type C;
    const size_t slab = (size_t)n * columns * sizeof(C);
    const size_t staged = stage ? 2 * (size_t)NB * n * sizeof(C) : 0;
    return slab + staged + (size_t)columns * NB * sizeof(C);
}

/* Largest slab that fits half the opt-in limit (two CTAs per SM) with V and Y
 * staged, else the whole limit staged, else the whole limit unstaged. */
template <typename R> bool eig_cuda_back_choose(int n, int optin, eig_cuda_back_config *cfg)
{
    const size_t limits[3] = {(size_t)optin / 2 - 1024, (size_t)optin, (size_t)optin};
    const bool stages[3] = {true, true, false};
    cfg->threads = 256;
    for (int pass = 0; pass < 3; ++pass)
        for (int columns = 32; columns >= 8; columns /= 2)
            if (eig_cuda_back_smem<R>(n, columns, stages[pass]) <= limits[pass]) {
                cfg->columns = columns;
                cfg->stage = stages[pass];
                cfg->smem = eig_cuda_back_smem<R>(n, columns, stages[pass]);
                cfg->wy_smem = back_wy_smem<R>(n);
                return cfg->wy_smem <= (size_t)optin;
            }
    return false;
}

template <typename R> cudaError_t eig_cuda_back_set_smem(const eig_cuda_back_config *cfg)
{
    cudaError_t e = cudaFuncSetAttribute(back_wy_kernel<R>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)cfg->wy_smem);
    if (e != cudaSuccess)
        return e;
    return cfg->stage ? cudaFuncSetAttribute(back_kernel<R, true>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)cfg->smem)
                      : cudaFuncSetAttribute(back_kernel<R, false>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)cfg->smem);
}

size_t eig_cuda_back_gemm_per(int n)
{
    return 2 * (size_t)gemm_blocks(n) * GNB * GNB + 2 * (size_t)GNB * n;
}

template <typename R>
cudaError_t eig_cuda_back_launch(const eig_cuda_back_config *cfg, int n, int count,
                                 const eig_cuda_workspace *ws, const eig_cuda_blas *blas, void *z,
                                 const int *info, cudaStream_t stream)
{
    typedef typename eig_cuda_complex<R>::type C;
    if (cfg->gemm)
        return back_gemm_launch<R>(cfg, n, count, ws, blas, (C *)z, info, stream);
    if (n > 2) {
        dim3 wy_grid(count, (n - 2 + NB - 1) / NB);
        back_wy_kernel<R><<<wy_grid, 256, cfg->wy_smem, stream>>>(n, *ws, info);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
    }
    dim3 grid(count, (n + cfg->columns - 1) / cfg->columns);
    if (cfg->stage)
        back_kernel<R, true><<<grid, cfg->threads, cfg->smem, stream>>>(n, cfg->columns, *ws,
                                                                        (C *)z, info);
    else
        back_kernel<R, false><<<grid, cfg->threads, cfg->smem, stream>>>(n, cfg->columns, *ws,
                                                                         (C *)z, info);
    return cudaGetLastError();
}

#define EIG_CUDA_BACK_INSTANTIATE(R)                                                              \
    template size_t eig_cuda_back_smem<R>(int, int, bool);                                       \
    template bool eig_cuda_back_choose<R>(int, int, eig_cuda_back_config *);                     \
    template cudaError_t eig_cuda_back_set_smem<R>(const eig_cuda_back_config *);                \
    template cudaError_t eig_cuda_back_launch<R>(const eig_cuda_back_config *, int, int,         \
                                                 const eig_cuda_workspace *,                     \
                                                 const eig_cuda_blas *, void *, const int *,     \
                                                 cudaStream_t);
EIG_CUDA_BACK_INSTANTIATE(float)
EIG_CUDA_BACK_INSTANTIATE(double)
