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
 *      (A u reads the lower triangle of A's trailing block once: each element
 *      of a 32 x 32 tile serves its row and, conjugated, its column) and
 *      w = p - (sigma/2)(u^H p) u:
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
    return (2 * (size_t)n + 4 * PNB + 2) * sizeof(C) + 128 * sizeof(R);
}

/* Index of tile (I, J) among eig_cuda_panel_tiles' tiles of a block, ordered
 * by column block J, then row block I = J..nb-1. */
__device__ __forceinline__ int panel_tile(int nb, int I, int J)
{
    return J * nb - J * (J - 1) / 2 + (I - J);
}

template <typename C> __device__ __forceinline__ C cshfl_xor(C v, int mask)
{
    return cmake<C>(__shfl_xor_sync(0xffffffffu, v.x, mask), __shfl_xor_sync(0xffffffffu, v.y, mask));
}

/* Sum over the warp's lanes of t[c], c < 8, by a reduce-scatter butterfly
 * (9 complex shuffles instead of 40): every lane returns the sum of column
 * c = (lane >> 2) & 7. t is overwritten. */
template <typename C> __device__ __forceinline__ C warp_transpose_sum8(C (&t)[8], int lane)
{
    const bool b4 = lane & 16, b3 = lane & 8, b2 = lane & 4;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const C send = b4 ? t[k] : t[k + 4], keep = b4 ? t[k + 4] : t[k];
        t[k] = cadd(keep, cshfl_xor(send, 16));
    }
#pragma unroll
    for (int k = 0; k < 2; ++k) {
        const C send = b3 ? t[k] : t[k + 2], keep = b3 ? t[k + 2] : t[k];
        t[k] = cadd(keep, cshfl_xor(send, 8));
    }
    const C send = b2 ? t[0] : t[1], keep = b2 ? t[1] : t[0];
    C s = cadd(keep, cshfl_xor(send, 4));
    s = cadd(s, cshfl_xor(s, 2));
    return cadd(s, cshfl_xor(s, 1));
}

/* The Hermitian product of the trailing block T (rows and columns k+1..,
 * order m, column-major from g with leading dimension n) with u, reading its
 * lower triangle once: each warp takes a contiguous range of the 32 x 32
 * tiles; lane l holds row 32 I + l, loads 8 columns at a time and forms
 * both T_IJ u_J (its row) and T_IJ^H u_I (a transposed warp sum per column;
 * none for a diagonal tile, whose row part reads the whole tile). Per tile,
 * the row part goes to tile_sums[tile][0..31] and the column part to
 * [32..63]; panel_sum_rows adds them in a fixed order (deterministic: no
 * atomics). */
template <typename C>
__device__ void panel_matvec(const C *g, int n, int m, const C *u, C *tile_sums)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int nb = (m + 31) / 32, tiles = eig_cuda_panel_tiles(m);
    const int first = warp * tiles / warps, last = (warp + 1) * tiles / warps;
    int J = 0, start = 0; /* start: the index of tile (J, J) */
    while (first < last && start + (nb - J) <= first)
        start += nb - J++;
    int I = J + (first - start);
    const C zero = cmake<C>(0, 0);
    for (int t = first; t < last; ++t) {
        const int i = 32 * I + lane;
        const bool row_ok = i < m;
        const C ui = row_ok ? u[i] : zero;
        C row = zero;
        C *sums = tile_sums + (size_t)t * 64;
#pragma unroll 1
        for (int q = 0; q < 4; ++q) {
            const int j0 = 32 * J + 8 * q;
            C v[8];
#pragma unroll
            for (int c = 0; c < 8; ++c)
                v[c] = row_ok && j0 + c < m ? g[i + (j0 + c) * n] : zero;
#pragma unroll
            for (int c = 0; c < 8; ++c)
                row = cfma(v[c], j0 + c < m ? u[j0 + c] : zero, row);
            if (I != J) {
#pragma unroll
                for (int c = 0; c < 8; ++c)
                    v[c] = cmulc(v[c], ui); /* conj(T_ij) u_i */
                const C colsum = warp_transpose_sum8(v, lane);
                if ((lane & 3) == 0)
                    sums[32 + 8 * q + ((lane >> 2) & 7)] = colsum;
            }
        }
        sums[lane] = row;
        if (++I == nb) {
            ++J;
            I = J;
        }
    }
}

/* Row r < m of T u from the tile sums: the row parts of tiles (B, 0..B) and
 * the column parts of tiles (B+1.., B), B = r / 32, in that order. The
 * caller synchronizes after panel_matvec. */
template <typename C> __device__ C panel_sum_row(const C *tile_sums, int m, int r)
{
    const int nb = (m + 31) / 32, B = r >> 5, l = r & 31;
    C p = cmake<C>(0, 0);
    for (int J = 0; J <= B; ++J)
        p = cadd(p, tile_sums[(size_t)panel_tile(nb, B, J) * 64 + l]);
    for (int I = B + 1; I < nb; ++I)
        p = cadd(p, tile_sums[(size_t)panel_tile(nb, I, B) * 64 + 32 + l]);
    return p;
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
    C *t = u + n;           /* W^H u, then V^H u */
    C *vk = t + 2 * PNB;    /* row k+1 of V, then of W */
    C *w_first = vk + 2 * PNB; /* w_k's row k+1 */
    R *red = (R *)(w_first + 2);
    int toggle = 0;
#define EIG_SCRATCH (red + 64 * (toggle ^= 1))
    const size_t nn = (size_t)n * n;
    const C *G = (const C *)ws.matrix + (size_t)b * nn;
    C *Y = (C *)ws.panel + (size_t)b * n * 4 * PNB; /* [V W] */
    C *Z = Y + (size_t)n * 2 * PNB;                 /* [W V] */
    C *tile_sums = (C *)ws.panel_sums + (size_t)b * eig_cuda_panel_sums_per(n);
    R *diag = (R *)ws.diag + (size_t)b * n, *sigma_out = (R *)ws.sigma + (size_t)b * n;
    C *sub = (C *)ws.subdiag + (size_t)b * n;
    C *refl = vectors ? (C *)ws.reflector + (size_t)b * nn : nullptr;
    const int warp = tid >> 5, lane = tid & 31, warps = nt >> 5;
    /* column j0 of B = A (rows j0..n-1); later columns are formed while the
     * previous one's w is (below: their rows of V and W are read once for
     * both) */
    R part = 0;
    for (int r = tid; r < n - j0; r += nt) {
        const C x = G[(j0 + r) + (size_t)j0 * n];
        col[r] = x;
        if (r >= 2)
            part = fma(x.x, x.x, fma(x.y, x.y, part));
    }
    for (int i = 0; i < PNB; ++i) {
        const int k = j0 + i, m = n - k - 1; /* m >= 2: the plan leaves >= 3 columns */
        const bool next = i + 1 < PNB;       /* column k+1 is in this panel */
        if (tid < i) {
            vk[tid] = Y[(k + 1) + tid * n];
            vk[PNB + tid] = Y[(k + 1) + (PNB + tid) * n];
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
        panel_matvec(G + (k + 1) + (size_t)(k + 1) * n, n, m, u, tile_sums);
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
        /* one row per thread (m < n <= PANEL_THREADS): P = A u - V t_w - W t_v,
         * K = (sigma^2/2) u^H P, w = sigma P - K u; and row k+1+tid of column
         * k+1 of B from the same rows of V and W */
        const int row = k + 1 + tid;
        C P = cmake<C>(0, 0), x = P;
        R kpart = 0;
        if (tid < m) {
            P = panel_sum_row(tile_sums, m, tid);
            if (next)
                x = G[row + (size_t)(k + 1) * n];
            for (int l = 0; l < i; ++l) {
                const C vl = Y[row + l * n], wl = Y[row + (PNB + l) * n];
                P = csub(P, cmul(vl, t[l]));
                P = csub(P, cmul(wl, t[PNB + l]));
                if (next)
                    x = rank2_update(x, vl, wl, vk[l], vk[PNB + l]);
            }
            kpart = u[tid].x * P.x + u[tid].y * P.y;
        }
        const R K = (R)0.5 * sigma * sigma * block_sum(kpart, EIG_SCRATCH);
        C w = P;
        if (tid < m) {
            w = csub(cscale(sigma, P), cscale(K, u[tid]));
            Y[row + (PNB + i) * n] = w;
            Z[row + i * n] = w;
            if (tid == 0)
                *w_first = w;
        }
        __syncthreads();
        part = 0;
        if (next && tid < m) {
            x = rank2_update(x, u[tid], w, u[0], *w_first);
            col[tid] = x;
            if (tid >= 2)
                part = fma(x.x, x.x, fma(x.y, x.y, part));
        }
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
