/*
 * eig_cuda_tridiag.cu - input check, scaling and Householder tridiagonalization
 * (Cosnuau 2014, reduced form), one CTA per matrix.
 *
 * CTA: cfg->threads threads (256 or 512). Per matrix b it
 *   1. reads the referenced triangle once to find max|a_ij|, NaN/Inf and the
 *      largest |Im a_ii|; a bad matrix gets info < 0 and NaN eigenvalues and
 *      stops here (ws.status tells the later kernels to skip it);
 *   2. writes the full Hermitian matrix, scaled by 2^-e so that max|a_ij| lies
 *      in [1, 2) (exact: a power of two), into shared memory when n <=
 *      smem_order, else into the global workspace ws.matrix;
 *   3. for k = 0..n-3 builds the reflector H_k = I - sigma u u^H of column k
 *      (u_0 = x_0 + e^{i arg x_0} |x|, sigma = 1/(|x| (|x| + |x_0|))), and
 *      updates the trailing block B <- H B H as B - u w^H - w u^H with
 *      p = sigma B u, w = p - (sigma/2)(u^H p) u. Once the trailing block's
 *      order drops to smem_order it moves into shared memory for good;
 *   4. phase-scales the Hermitian tridiagonal T: D = diag(D_k), D_0 = 1,
 *      D_{k+1} = D_k b_k/|b_k|, so that D^H T D has subdiagonal |b_k|.
 * Outputs in ws: diag, offdiag (real), sigma, reflector (u_k in column k),
 * phase (D), scale_exp, status.
 *
 * Shared memory (C = complex of the precision):
 *   smem_order^2 C (trailing block) + n C (u) + max(n, threads) C (p, w and
 *   matvec partials) + n C (subdiagonal b) + 128 R (reductions).
 */
#include "eig_cuda_internal.cuh"
#include "eig_cuda_reflector.cuh"

namespace {

/* Element (i, j), i >= j, of the referenced triangle as a lower-triangle value. */
template <typename C>
__device__ __forceinline__ C read_lower(const C *a, int n, int storage, int uplo, int i, int j)
{
    C v;
    if (storage == EIG_STORAGE_FULL)
        v = uplo == EIG_LOWER ? a[i + (size_t)j * n] : a[j + (size_t)i * n];
    else if (uplo == EIG_LOWER)
        v = a[i + (size_t)j * (2 * n - j - 1) / 2];
    else
        v = a[j + (size_t)i * (i + 1) / 2];
    if (uplo == EIG_UPPER)
        v.y = -v.y;
    return v;
}

/* One row's part of the sweep: columns c, c + groups, ... < c_end of the
 * block (p points at column c, consecutive columns ld apart): element
 * v -= u_r conj(w_c) + w_r conj(u_c), stored, and v unext_{c-1} accumulated.
 * Returns the first column not done. */
template <int U, typename C>
__device__ __forceinline__ int sweep_row(C *p, int ld, int c, int c_end, int groups, C ur, C wr,
                                         const C *u, const C *wv, const C *unext, C &acc0,
                                         C &acc1)
{
    const int step = groups * ld;
    for (; c + (U - 1) * groups < c_end; c += U * groups, p += U * step) {
        C v[U];
#pragma unroll
        for (int q = 0; q < U; ++q)
            v[q] = p[q * step];
#pragma unroll
        for (int q = 0; q < U; ++q) {
            const int cq = c + q * groups;
            v[q] = rank2_update(v[q], ur, wr, u[cq], wv[cq]);
            p[q * step] = v[q];
            if (q & 1)
                acc1 = cfma(v[q], unext[cq - 1], acc1);
            else
                acc0 = cfma(v[q], unext[cq - 1], acc0);
        }
    }
    for (; c < c_end; c += groups, p += step) {
        const C v0 = rank2_update(*p, ur, wr, u[c], wv[c]);
        *p = v0;
        acc0 = cfma(v0, unext[c - 1], acc0);
    }
    return c;
}

/* Step 1 of a matrix: every referenced element finite, the diagonal real
 * enough. Returns 0 and the scaling exponent e (max|a_ij| in [2^e, 2^(e+1)),
 * 0 for a zero matrix), or the negative info. Every thread of the CTA calls
 * it; red holds 128 reals (scratch of three block reductions: red, red + 64,
 * red, so the caller's next reduction takes red + 64). */
template <typename R, typename C>
__device__ int tridiag_check(const C *a, int n, int storage, int uplo, R *red, int *scale_exp)
{
    const int tid = threadIdx.x, nt = blockDim.x;
    const size_t in_elems = storage == EIG_STORAGE_FULL ? (size_t)n * n : (size_t)n * (n + 1) / 2;
    R amax = 0, dimag = 0, nonfinite = 0;
    /* n <= 512: every index of one matrix fits an int (a 64-bit division
     * per element was a visible part of these loops) */
    for (int idx = tid; idx < (int)in_elems; idx += nt) {
        if (storage == EIG_STORAGE_FULL) {
            const int i = idx % n, j = idx / n;
            if (uplo == EIG_LOWER ? i < j : i > j)
                continue;
        }
        C v = a[idx];
        if (!isfinite(v.x) || !isfinite(v.y))
            nonfinite = 1;
        else
            amax = fmax(amax, hypot(v.x, v.y));
    }
    for (int i = tid; i < n; i += nt) {
        C v = read_lower(a, n, storage, uplo, i, i);
        if (isfinite(v.y))
            dimag = fmax(dimag, fabs(v.y));
    }
    nonfinite = block_max(nonfinite, red);
    amax = block_max(amax, red + 64);
    dimag = block_max(dimag, red);
    *scale_exp = amax > 0 ? ilogb(amax) : 0;
    if (nonfinite != 0)
        return EIG_INFO_NONFINITE;
    if (dimag > (R)n * eig_cuda_limits<R>::ulp() * amax)
        return EIG_INFO_NONREAL_DIAGONAL;
    return 0;
}

/* TRIDIAG_TAIL's start: the trailing block (rows and columns k0..n-1) of the
 * global matrix G into the shared block blk (rows and columns S.. of the
 * matrix, leading dimension lds; k0 >= S), made exactly Hermitian from its
 * lower triangle (the panels' cuBLAS update leaves the two triangles
 * rounding-different), and b_0..b_{k0-1} from the global subdiagonal into
 * bs. The caller synchronizes. */
template <typename C>
__device__ void tridiag_load_tail(const C *G, int n, int k0, C *blk, int S, int lds,
                                  const C *subdiag, C *bs)
{
    const int tid = threadIdx.x, nt = blockDim.x, m = n - k0;
    for (int idx = tid; idx < m * m; idx += nt) {
        const int i = k0 + idx % m, j = k0 + idx / m;
        if (i < j)
            continue;
        C v = G[i + j * n];
        if (i == j)
            v.y = 0;
        blk[(i - S) + (j - S) * lds] = v;
        blk[(j - S) + (i - S) * lds] = cmake<C>(v.x, -v.y);
    }
    for (int k = tid; k < k0; k += nt)
        bs[k] = subdiag[k];
}

/* What one launch of tridiag_kernel does. */
enum tridiag_mode {
    TRIDIAG_WHOLE = 0, /* check, scale, copy, reduce every column, phases */
    TRIDIAG_INIT,      /* check, scale, copy the whole matrix into ws.matrix
                          (smem_order 0); the panel path's first launch */
    TRIDIAG_TAIL       /* reduce columns k0.. of ws.matrix (the panel path left
                          the trailing block there, updated; k0 >= n - smem_order),
                          phases from ws.subdiag's b_0..b_{k0-1} */
};

/* MINB = 2: at most 64 registers, so that two CTAs of 512 threads fit one SM
 * (used when their shared memory does too: c64 n = 128, c128 n = 64); the
 * sweep then handles 2 elements per step in c128 (4 would spill), else 4. */
template <typename R, int MINB>
__global__ void __launch_bounds__(512, MINB)
    tridiag_kernel(int n, int storage, int uplo, int vectors, int smem_order, int mode, int k0,
                   const typename eig_cuda_complex<R>::type *__restrict__ a_all,
                   eig_cuda_workspace ws, R *__restrict__ w_all, int *__restrict__ info_all)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    extern __shared__ double2 smem_raw[];
    C *blk = (C *)smem_raw;
    C *us = blk + (size_t)smem_order * smem_order; /* u_k and u_{k+1} */
    C *wv = us + 2 * n;
    C *ps = wv + n;
    C *bs = ps + max(n, nt);
    R *red = (R *)(bs + n);
    int toggle = 0; /* the first EIG_SCRATCH is red + 64, as tridiag_check needs */
#define EIG_SCRATCH (red + 64 * (toggle ^= 1))

    const size_t nn = (size_t)n * n;
    const size_t in_elems = storage == EIG_STORAGE_FULL ? nn : (size_t)n * (n + 1) / 2;
    const C *a = a_all + (size_t)b * in_elems;
    R *diag = (R *)ws.diag + (size_t)b * n;

    const int S = max(0, n - smem_order), lds = n - S;
    C *G = S > 0 || mode == TRIDIAG_TAIL ? (C *)ws.matrix + (size_t)b * nn : nullptr;
/* n <= 512: every index of one matrix fits an int (cheaper than size_t math) */
#define AT(i, j)                                                                                   \
    (*((i) >= S && (j) >= S ? blk + ((i) - S) + ((j) - S) * lds : G + (i) + (j) * n))
    int scale_exp;
    if (mode == TRIDIAG_TAIL) {
        if (ws.status[b] != 0)
            return;
        scale_exp = ws.scale_exp[b];
        tridiag_load_tail(G, n, k0, blk, S, lds, (const C *)ws.subdiag + (size_t)b * n, bs);
    } else {
        const int status = tridiag_check<R>(a, n, storage, uplo, red, &scale_exp);
        if (status != 0) {
            R *w = w_all + (size_t)b * n;
            for (int i = tid; i < n; i += nt)
                w[i] = (R)NAN;
            if (tid == 0) {
                info_all[b] = status;
                ws.status[b] = status;
            }
            return;
        }
        /* 2. full Hermitian copy, scaled. Rows and columns S..n-1 (the last
         * smem_order) live in shared memory from the start (blk, leading
         * dimension lds); an element with row or column < S lives in the
         * global workspace G (n x n layout, only that L-shaped part used), so
         * the sweeps of the first S columns touch global memory only along
         * the L. */
        const R scale = scalbn((R)1, -scale_exp);
        for (int idx = tid; idx < (int)nn; idx += nt) {
            const int i = idx % n, j = idx / n;
            if (i < j)
                continue;
            C v = read_lower(a, n, storage, uplo, i, j);
            v = cscale(scale, v);
            if (i == j)
                v.y = 0;
            AT(i, j) = v;
            AT(j, i) = cmake<C>(v.x, -v.y);
        }
        if (mode == TRIDIAG_INIT) {
            if (tid == 0) {
                ws.scale_exp[b] = scale_exp;
                ws.status[b] = 0;
            }
            return;
        }
    }
    __syncthreads();

    /* 3. reflectors, one pass over the trailing block per column (look-ahead:
     * column k+1 is updated and its reflector formed first, then one sweep
     * applies step k's rank-2 update to the rest and accumulates B u_{k+1}).
     * Per column the serial chain (w_k from the partial products, column
     * k+1, its norm, u_{k+1}) runs in warp 0 alone with shuffle reductions,
     * so a column costs two __syncthreads: one after that chain, one after
     * the sweep. sigma lives in warp 0's registers (the sweep does not use it). */
    C *refl = vectors ? (C *)ws.reflector + (size_t)b * nn : nullptr;
    R *sigma_out = (R *)ws.sigma + (size_t)b * n;
    C *u = us, *unext = us + n;
    R sigma = 0;
    if (n - k0 >= 3) {
        R part = 0;
        for (int i = k0 + 2 + tid; i < n; i += nt) {
            const C v = AT(i, k0);
            part = fma(v.x, v.x, fma(v.y, v.y, part));
        }
        const R rest2 = block_sum(part, EIG_SCRATCH);
        if (tid == 0)
            diag[k0] = AT(k0, k0).x;
        sigma = reflector_make(&AT(k0 + 1, k0), n - k0 - 1, rest2, u,
                               refl ? refl + (k0 + 1) + (size_t)k0 * n : nullptr, bs + k0,
                               sigma_out + k0);
        __syncthreads();
        /* partial products of B u_k0 over rows and columns k0+1..n-1 */
        const int m = n - k0 - 1;
        const int rows_threads = min(nt, (m + 31) & ~31), groups = nt / rows_threads;
        const int g = tid / rows_threads, r0 = tid % rows_threads;
        if (g < groups)
            for (int r = r0; r < m; r += rows_threads) {
                C acc0 = cmake<C>(0, 0), acc1 = cmake<C>(0, 0);
                int c = g;
                for (; c + groups < m; c += 2 * groups) {
                    acc0 = cfma(AT(k0 + 1 + r, k0 + 1 + c), u[c], acc0);
                    acc1 = cfma(AT(k0 + 1 + r, k0 + 1 + c + groups), u[c + groups], acc1);
                }
                if (c < m)
                    acc0 = cfma(AT(k0 + 1 + r, k0 + 1 + c), u[c], acc0);
                ps[g * m + r] = cadd(acc0, acc1);
            }
        __syncthreads();
    }
    for (int k = k0; k < n - 2; ++k) {
        const int m = n - k - 1; /* order of the block updated by step k */
        if (tid < 32) {
            const int lane = tid;
            /* w = p - (sigma/2)(u^H p) u with p = sigma P, P = B u the sum of
             * the partial products: K = (sigma^2/2) u^H P (real: B Hermitian) */
            const int groups = nt / min(nt, (m + 31) & ~31);
            R kpart = 0;
            for (int r = lane; r < m; r += 32) {
                C acc = ps[r];
                for (int gg = 1; gg < groups; ++gg)
                    acc = cadd(acc, ps[gg * m + r]);
                wv[r] = acc;
                const C ur = u[r];
                kpart = fma(ur.x, acc.x, fma(ur.y, acc.y, kpart));
            }
            const R K = (R)0.5 * sigma * sigma * warp_sum(kpart);
            for (int r = lane; r < m; r += 32)
                wv[r] = csub(cscale(sigma, wv[r]), cscale(K, u[r]));
            __syncwarp();
            if (k + 1 == n - 2) {
                /* last step: update the final 2x2 block, no next reflector */
                if (lane < 4) {
                    const int r = lane & 1, c = lane >> 1;
                    AT(k + 1 + r, k + 1 + c) =
                        rank2_update(AT(k + 1 + r, k + 1 + c), u[r], wv[r], u[c], wv[c]);
                }
            } else {
                /* column k+1 (rows k+1..n-1), then its reflector u_{k+1} */
                const C u0 = u[0], w0 = wv[0];
                R part = 0;
                for (int r = lane; r < m; r += 32) {
                    const C v = rank2_update(AT(k + 1 + r, k + 1), u[r], wv[r], u0, w0);
                    AT(k + 1 + r, k + 1) = v;
                    if (r >= 2)
                        part = fma(v.x, v.x, fma(v.y, v.y, part));
                }
                const R rest2 = warp_sum(part);
                __syncwarp();
                if (lane == 0)
                    diag[k + 1] = AT(k + 1, k + 1).x;
                sigma = reflector_make_warp(&AT(k + 2, k + 1), m - 1, rest2, unext,
                                            refl ? refl + (k + 2) + (size_t)(k + 1) * n : nullptr,
                                            bs + k + 1, sigma_out + k + 1);
            }
        }
        __syncthreads();
        if (k + 1 == n - 2)
            break;
        /* one sweep over rows and columns k+2..n-1: B -= u w^H + w u^H and
         * partial products of the updated B with u_{k+1} */
        {
            const int mm = m - 1;
            const int rows_threads = min(nt, (mm + 31) & ~31), groups = nt / rows_threads;
            const int g = tid / rows_threads, r0 = tid % rows_threads;
            /* U elements per step, all loaded before any store: the stores
             * may alias, so U is the memory-level parallelism of the global
             * part */
            constexpr int U = MINB == 2 ? 2 : 4;
            if (g < groups)
                for (int r = 1 + r0; r < m; r += rows_threads) {
                    const int i = k + 1 + r;
                    const C ur = u[r], wr = wv[r];
                    C acc0 = cmake<C>(0, 0), acc1 = cmake<C>(0, 0);
                    /* columns c < split of this row are in G, the rest in blk */
                    const int split = i < S ? m : max(1, min(m, S - (k + 1)));
                    int c = 1 + g;
                    if (c < split)
                        c = sweep_row<U>(G + i + (k + 1 + c) * n, n, c, split, groups, ur, wr, u,
                                         wv, unext, acc0, acc1);
                    if (c < m)
                        c = sweep_row<U>(blk + (i - S) + (k + 1 + c - S) * lds, lds, c, m, groups,
                                         ur, wr, u, wv, unext, acc0, acc1);
                    ps[g * mm + (r - 1)] = cadd(acc0, acc1);
                }
        }
        __syncthreads();
        C *swap = u;
        u = unext;
        unext = swap;
    }
    if (tid < 32) {
        const int lane = tid;
        if (lane == 0) {
            if (n >= 2) {
                diag[n - 2] = AT(n - 2, n - 2).x;
                bs[n - 2] = AT(n - 1, n - 2);
            }
            diag[n - 1] = AT(n - 1, n - 1).x;
        }
#undef AT
        __syncwarp();
        /* 4. phases: D^H T D is real with subdiagonal |b_k|. D_{k+1} is the
         * product of the units b_j/|b_j|, j <= k: each lane multiplies its
         * chunk of consecutive units, a warp scan (complex products commute)
         * gives the chunk prefixes, then each lane writes its chunk. */
        R *offdiag = (R *)ws.offdiag + (size_t)b * n;
        C *phase = vectors ? (C *)ws.phase + (size_t)b * n : nullptr;
        const int per = (n - 1 + 31) / 32, kb = lane * per, ke = min(n - 1, kb + per);
        C run = cmake<C>(1, 0);
        for (int k = kb; k < ke; ++k) {
            const C bk = bs[k];
            const R ab = hypot(bk.x, bk.y);
            offdiag[k] = ab;
            if (ab > 0)
                run = cmul(run, cscale(1 / ab, bk));
        }
        for (int o = 1; o < 32; o <<= 1) {
            const C t = cmake<C>(__shfl_up_sync(0xffffffffu, run.x, o),
                                 __shfl_up_sync(0xffffffffu, run.y, o));
            if (lane >= o)
                run = cmul(t, run);
        }
        C dk = cmake<C>(__shfl_up_sync(0xffffffffu, run.x, 1),
                        __shfl_up_sync(0xffffffffu, run.y, 1));
        if (lane == 0)
            dk = cmake<C>(1, 0);
        if (phase) {
            if (lane == 0)
                phase[0] = cmake<C>(1, 0);
            for (int k = kb; k < ke; ++k) {
                const C bk = bs[k];
                const R ab = hypot(bk.x, bk.y);
                if (ab > 0)
                    dk = cmul(dk, cscale(1 / ab, bk));
                phase[k + 1] = dk;
            }
        }
        if (lane == 0) {
            offdiag[n - 1] = 0;
            ws.scale_exp[b] = scale_exp;
            ws.status[b] = 0;
        }
    }
#undef EIG_SCRATCH
}

} // namespace

template <typename R> size_t eig_cuda_tridiag_smem(int n, int threads, int smem_order)
{
    typedef typename eig_cuda_complex<R>::type C;
    size_t cplx = (size_t)smem_order * smem_order + 3 * (size_t)n +
                  (size_t)(n > threads ? n : threads) + (size_t)n;
    return cplx * sizeof(C) + 128 * sizeof(R);
}

template <typename R> cudaError_t eig_cuda_tridiag_set_smem(size_t bytes)
{
    cudaError_t e = cudaFuncSetAttribute(tridiag_kernel<R, 1>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e != cudaSuccess)
        return e;
    return cudaFuncSetAttribute(tridiag_kernel<R, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)bytes);
}

namespace {

template <typename R>
cudaError_t tridiag_kernel_launch(const eig_cuda_tridiag_config *cfg, int n, int count,
                                  eig_storage storage, eig_uplo uplo, int vectors, int mode,
                                  int k0, const void *a, const eig_cuda_workspace *ws, void *w,
                                  int *info, cudaStream_t stream)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int order = mode == TRIDIAG_INIT ? 0 : cfg->smem_order;
    const size_t smem = mode == TRIDIAG_INIT ? eig_cuda_tridiag_smem<R>(n, cfg->threads, 0)
                                             : cfg->smem;
    if (cfg->two_per_sm)
        tridiag_kernel<R, 2><<<count, cfg->threads, smem, stream>>>(
            n, (int)storage, (int)uplo, vectors, order, mode, k0, (const C *)a, *ws, (R *)w, info);
    else
        tridiag_kernel<R, 1><<<count, cfg->threads, smem, stream>>>(
            n, (int)storage, (int)uplo, vectors, order, mode, k0, (const C *)a, *ws, (R *)w, info);
    return cudaGetLastError();
}

} // namespace

/* The tridiag kernel alone, or (panel path) its TRIDIAG_INIT launch, the
 * panels of columns 0..panel_end-1 and its TRIDIAG_TAIL launch. */
template <typename R>
cudaError_t eig_cuda_tridiag_launch(const eig_cuda_tridiag_config *cfg, int n, int count,
                                    eig_storage storage, eig_uplo uplo, int vectors,
                                    const void *a, const eig_cuda_workspace *ws,
                                    const eig_cuda_blas *blas, void *w, int *info,
                                    cudaStream_t stream)
{
    if (cfg->panel_end == 0)
        return tridiag_kernel_launch<R>(cfg, n, count, storage, uplo, vectors, TRIDIAG_WHOLE, 0,
                                        a, ws, w, info, stream);
    cudaError_t e = tridiag_kernel_launch<R>(cfg, n, count, storage, uplo, vectors, TRIDIAG_INIT,
                                             0, a, ws, w, info, stream);
    for (int j0 = 0; j0 < cfg->panel_end && e == cudaSuccess; j0 += EIG_CUDA_PANEL_NB)
        e = eig_cuda_panel_launch<R>(n, j0, count, vectors, ws, blas, stream);
    if (e != cudaSuccess)
        return e;
    return tridiag_kernel_launch<R>(cfg, n, count, storage, uplo, vectors, TRIDIAG_TAIL,
                                    cfg->panel_end, a, ws, w, info, stream);
}

#define EIG_CUDA_TRIDIAG_INSTANTIATE(R)                                                           \
    template size_t eig_cuda_tridiag_smem<R>(int, int, int);                                     \
    template cudaError_t eig_cuda_tridiag_set_smem<R>(size_t);                                   \
    template cudaError_t eig_cuda_tridiag_launch<R>(                                              \
        const eig_cuda_tridiag_config *, int, int, eig_storage, eig_uplo, int, const void *,      \
        const eig_cuda_workspace *, const eig_cuda_blas *, void *, int *, cudaStream_t);
EIG_CUDA_TRIDIAG_INSTANTIATE(float)
EIG_CUDA_TRIDIAG_INSTANTIATE(double)
