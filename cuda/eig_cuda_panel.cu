/*
 * eig_cuda_panel.cu - the panel path of the tridiagonalization (LAPACK
 * zhetrd/zlatrd's blocked structure), for orders whose trailing matrix does
 * not fit shared memory: the unblocked kernel reads and writes the global
 * trailing matrix once per column, a panel reads it once per column and
 * writes it once per panel of EIG_CUDA_PANEL_NB columns.
 *
 * Per panel of columns j0 .. j0+NB-1 of the matrix A in ws.matrix (full
 * Hermitian, scaled, updated by the earlier panels):
 *   1. panel_kernel, one CTA per matrix, column k = j0 + i after column:
 *      column k of B = A - sum_{l<i} (v_l w_l^H + w_l v_l^H), its reflector
 *      H_k = I - sigma u u^H (the tridiag kernel's reflector_make), then
 *      p = sigma (A u - V (W^H u) - W (V^H u)) over rows and columns k+1..
 *      (one read of A's trailing block) and w = p - (sigma/2)(u^H p) u:
 *      v_i = u, w_i = w. d_k, b_k, sigma_k and u_k go where the tridiag
 *      kernel writes them (b_k to ws.subdiag);
 *   2. one cuBLAS product for the whole launch group updates rows and columns
 *      j0+NB.. of A: A -= [V W] [W V]^H (rank 2 NB; tensor cores in c128).
 * The tridiag kernel's TRIDIAG_TAIL launch then reduces the rest in shared
 * memory. A matrix with ws.status != 0 is skipped (its products compute on
 * stale workspace and nothing reads them).
 *
 * ws.panel per matrix: Y = [V W] (n x 2NB, column-major) then Z = [W V];
 * column i of V and W holds rows k+1..n-1 only (rows above are never read).
 */
#include "eig_cuda_internal.cuh"
#include "eig_cuda_reflector.cuh"

namespace {

constexpr int PNB = EIG_CUDA_PANEL_NB;
constexpr int PANEL_THREADS = 512; /* >= n: one row per thread where a row each is needed */

template <typename R> size_t panel_smem(int n)
{
    typedef typename eig_cuda_complex<R>::type C;
    const size_t cplx = 2 * (size_t)n + (size_t)(n > PANEL_THREADS ? n : PANEL_THREADS) + 4 * PNB;
    return cplx * sizeof(C) + 128 * sizeof(R);
}

/* Partial products of the trailing block (rows and columns k+1.., order m,
 * column-major from g with leading dimension n) with u: the CTA's threads
 * over rows, `groups` thread groups over columns, ps[g m + r]. Four loads in
 * flight per thread. */
template <typename C>
__device__ void panel_matvec(const C *g, int n, int m, const C *u, C *ps)
{
    const int tid = threadIdx.x, nt = blockDim.x;
    const int rows_threads = min(nt, (m + 31) & ~31), groups = nt / rows_threads;
    const int grp = tid / rows_threads, r0 = tid % rows_threads;
    if (grp >= groups)
        return;
    for (int r = r0; r < m; r += rows_threads) {
        const C *p = g + r;
        C acc0 = cmake<C>(0, 0), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        int c = grp;
        for (; c + 3 * groups < m; c += 4 * groups) {
            const C v0 = p[c * n], v1 = p[(c + groups) * n];
            const C v2 = p[(c + 2 * groups) * n], v3 = p[(c + 3 * groups) * n];
            acc0 = cfma(v0, u[c], acc0);
            acc1 = cfma(v1, u[c + groups], acc1);
            acc2 = cfma(v2, u[c + 2 * groups], acc2);
            acc3 = cfma(v3, u[c + 3 * groups], acc3);
        }
        for (; c < m; c += groups)
            acc0 = cfma(p[c * n], u[c], acc0);
        ps[grp * m + r] = cadd(cadd(acc0, acc1), cadd(acc2, acc3));
    }
}

template <typename R>
__global__ void __launch_bounds__(PANEL_THREADS, 2)
    panel_kernel(int n, int j0, int vectors, eig_cuda_workspace ws)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    if (ws.status[b] != 0)
        return;
    extern __shared__ double2 smem_raw[];
    C *col = (C *)smem_raw; /* column k of B, rows k..n-1 */
    C *u = col + n;         /* u_k, rows k+1..n-1 */
    C *ps = u + n;          /* matvec partials */
    C *t = ps + max(n, nt); /* W^H u, then V^H u */
    C *vk = t + 2 * PNB;    /* row k of V, then of W */
    R *red = (R *)(vk + 2 * PNB);
    int toggle = 0;
#define EIG_SCRATCH (red + 64 * (toggle ^= 1))
    const size_t nn = (size_t)n * n;
    const C *G = (const C *)ws.matrix + (size_t)b * nn;
    C *Y = (C *)ws.panel + (size_t)b * n * 4 * PNB; /* [V W] */
    C *Z = Y + (size_t)n * 2 * PNB;                 /* [W V] */
    R *diag = (R *)ws.diag + (size_t)b * n, *sigma_out = (R *)ws.sigma + (size_t)b * n;
    C *sub = (C *)ws.subdiag + (size_t)b * n;
    C *refl = vectors ? (C *)ws.reflector + (size_t)b * nn : nullptr;
    const int warp = tid >> 5, lane = tid & 31, warps = nt >> 5;
    for (int i = 0; i < PNB; ++i) {
        const int k = j0 + i, m = n - k - 1; /* m >= 2: the plan leaves >= 3 columns */
        if (tid < i) {
            vk[tid] = Y[k + tid * n];
            vk[PNB + tid] = Y[k + (PNB + tid) * n];
        }
        __syncthreads();
        /* column k of B (rows k..n-1) and the squared norm of rows k+2.. */
        R part = 0;
        for (int r = tid; r <= m; r += nt) {
            C x = G[(k + r) + (size_t)k * n];
            for (int l = 0; l < i; ++l)
                x = rank2_update(x, Y[(k + r) + l * n], Y[(k + r) + (PNB + l) * n], vk[l],
                                 vk[PNB + l]);
            col[r] = x;
            if (r >= 2)
                part = fma(x.x, x.x, fma(x.y, x.y, part));
        }
        const R rest2 = block_sum(part, EIG_SCRATCH);
        if (tid == 0)
            diag[k] = col[0].x;
        const R sigma = reflector_make(col + 1, m, rest2, u,
                                       refl ? refl + (k + 1) + (size_t)k * n : nullptr, sub + k,
                                       sigma_out + k);
        __syncthreads();
        for (int r = tid; r < m; r += nt) {
            Y[(k + 1 + r) + i * n] = u[r];
            Z[(k + 1 + r) + (PNB + i) * n] = u[r];
        }
        panel_matvec(G + (k + 1) + (size_t)(k + 1) * n, n, m, u, ps);
        /* t_l = w_l^H u, t_{NB+l} = v_l^H u for l < i: a warp per product */
        for (int q = warp; q < 2 * i; q += warps) {
            const int l = q < i ? q : q - i, column = q < i ? PNB + l : l;
            const C *y = Y + (k + 1) + column * n;
            C acc = cmake<C>(0, 0);
            for (int r = lane; r < m; r += 32)
                acc = cfmac(y[r], u[r], acc);
            acc = cmake<C>(warp_sum(acc.x), warp_sum(acc.y));
            if (lane == 0)
                t[q < i ? l : PNB + l] = acc;
        }
        __syncthreads();
        /* p = sigma (A u - V t_w - W t_v), K = (sigma^2/2) u^H P, w = p - K u
         * (one row per thread: m < n <= PANEL_THREADS) */
        const int groups = nt / min(nt, (m + 31) & ~31);
        C P = cmake<C>(0, 0);
        R kpart = 0;
        if (tid < m) {
            for (int g = 0; g < groups; ++g)
                P = cadd(P, ps[g * m + tid]);
            for (int l = 0; l < i; ++l) {
                P = csub(P, cmul(Y[(k + 1 + tid) + l * n], t[l]));
                P = csub(P, cmul(Y[(k + 1 + tid) + (PNB + l) * n], t[PNB + l]));
            }
            kpart = u[tid].x * P.x + u[tid].y * P.y;
        }
        const R K = (R)0.5 * sigma * sigma * block_sum(kpart, EIG_SCRATCH);
        if (tid < m) {
            const C w = csub(cscale(sigma, P), cscale(K, u[tid]));
            Y[(k + 1 + tid) + (PNB + i) * n] = w;
            Z[(k + 1 + tid) + i * n] = w;
        }
        __syncthreads();
    }
#undef EIG_SCRATCH
}

} // namespace

template <typename R>
cudaError_t eig_cuda_panel_launch(int n, int j0, int count, int vectors,
                                  const eig_cuda_workspace *ws, const eig_cuda_blas *blas,
                                  cudaStream_t stream)
{
    typedef typename eig_cuda_complex<R>::type C;
    panel_kernel<R><<<count, PANEL_THREADS, panel_smem<R>(n), stream>>>(n, j0, vectors, *ws);
    cudaError_t e = cudaGetLastError();
    const int j1 = j0 + PNB, mt = n - j1;
    if (e != cudaSuccess || mt <= 0)
        return e;
    if (!eig_cuda_blas_bind(blas, stream))
        return cudaErrorUnknown;
    const long long nn = (long long)n * n, per = (long long)n * 4 * PNB;
    C *y = (C *)ws->panel + j1, *z = y + (size_t)n * 2 * PNB, *a = (C *)ws->matrix;
    const cublasStatus_t st = eig_cuda_gemm_strided(
        blas->handle, CUBLAS_OP_N, CUBLAS_OP_C, mt, mt, 2 * PNB, cmake<C>(-1, 0), y, n, per, z,
        n, per, cmake<C>(1, 0), a + j1 + (size_t)j1 * n, n, nn, count);
    return st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

template cudaError_t eig_cuda_panel_launch<float>(int, int, int, int, const eig_cuda_workspace *,
                                                  const eig_cuda_blas *, cudaStream_t);
template cudaError_t eig_cuda_panel_launch<double>(int, int, int, int, const eig_cuda_workspace *,
                                                   const eig_cuda_blas *, cudaStream_t);
