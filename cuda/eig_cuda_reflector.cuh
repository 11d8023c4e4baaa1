/*
 * eig_cuda_reflector.cuh - what the two tridiagonalization kernels share
 * (eig_cuda_tridiag.cu: one pass over the trailing block per column;
 * eig_cuda_panel.cu: the panel path): reductions over a warp and a CTA, the
 * Householder reflector of a column, the rank-2 update of an element. Not
 * installed; device code only, in an anonymous namespace per translation
 * unit.
 */
#ifndef EIGSTREAM_EIG_CUDA_REFLECTOR_CUH
#define EIGSTREAM_EIG_CUDA_REFLECTOR_CUH

#include "eig_cuda_internal.cuh"

namespace {

/* Reduction over the 32 lanes of a warp with op (associative, commutative):
 * every lane gets the result. */
template <typename R, typename Op> __device__ __forceinline__ R warp_reduce(R v, Op op)
{
    for (int o = 16; o > 0; o >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Reduction over the CTA (blockDim.x a multiple of 32) with op, starting
 * from 0 (the identity of a sum, and of a max of values >= 0); every thread
 * gets it. scratch holds 32 values and must alternate between calls (its
 * readers are done only once every thread reached the next barrier). */
template <typename R, typename Op> __device__ R block_reduce(R v, R *scratch, Op op)
{
    v = warp_reduce(v, op);
    const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if ((threadIdx.x & 31) == 0)
        scratch[warp] = v;
    __syncthreads();
    R s = 0;
    for (int i = 0; i < warps; ++i)
        s = op(s, scratch[i]);
    return s;
}

struct reduce_add {
    template <typename R> __device__ R operator()(R a, R b) const { return a + b; }
};
struct reduce_max {
    template <typename R> __device__ R operator()(R a, R b) const { return fmax(a, b); }
};

/* Sum over the 32 lanes of a warp, every lane gets it. */
template <typename R> __device__ __forceinline__ R warp_sum(R v)
{
    return warp_reduce(v, reduce_add());
}

/* Sum over the CTA, as block_reduce. */
template <typename R> __device__ R block_sum(R v, R *scratch)
{
    return block_reduce(v, scratch, reduce_add());
}

/* Max over the CTA of values >= 0, as block_reduce. */
template <typename R> __device__ R block_max(R v, R *scratch)
{
    return block_reduce(v, scratch, reduce_max());
}

/* v - u_r conj(w_c) - w_r conj(u_c): element (r, c) of B - u w^H - w u^H */
template <typename C> __device__ __forceinline__ C rank2_update(C v, C ur, C wr, C uc, C wc)
{
    v.x -= ur.x * wc.x + ur.y * wc.y + wr.x * uc.x + wr.y * uc.y;
    v.y -= ur.y * wc.x - ur.x * wc.y + wr.y * uc.x - wr.x * uc.y;
    return v;
}

/* Householder reflector of the column x = col[0..m-1] (m >= 2) whose tail
 * col[2..] has squared norm rest2 (already reduced over the CTA): writes u
 * (u_0 = x_0 + e^{i arg x_0} |x|, u_i = x_i) to u and, when refl is not
 * NULL, to refl[0..m-1]; thread 0 writes the subdiagonal b = -e^{i arg x_0}
 * |x| and sigma = 1/(|x| (|x| + |x_0|)). A reduced column (rest2 == 0) gives
 * H = I: u = 0, sigma = 0, b = x_0, refl untouched. Returns sigma. The
 * caller synchronizes before u is read.
 * Elements i = tid, tid + nt, ... of u and refl are written by the calling
 * thread; tid 0 writes b and sigma. The reflector's scalars are computed by
 * every caller (no broadcast needed): |x| = sqrt(|x_0|^2 + rest2), no
 * cancellation since u_0 adds |x| along x_0's phase (zlarfg's stable choice). */
template <typename R, typename C>
__device__ R reflector_make_strided(const C *col, int m, R rest2, C *u, C *refl, C *b_out,
                                    R *sigma_out, int tid, int nt)
{
    const C alpha = col[0];
    if (rest2 == 0) {
        for (int i = tid; i < m; i += nt)
            u[i] = cmake<C>(0, 0);
        if (tid == 0) {
            *b_out = alpha;
            *sigma_out = 0;
        }
        return 0;
    }
    /* |x| from the squares directly (not from hypot's result): the two
     * roots run in parallel, one dependent sqrt less on the column's chain */
    const R aa = hypot(alpha.x, alpha.y);
    const R xn = sqrt(fma(alpha.x, alpha.x, fma(alpha.y, alpha.y, rest2)));
    const R inv_aa = aa > 0 ? 1 / aa : (R)0;
    const C ph = aa > 0 ? cmake<C>(alpha.x * inv_aa, alpha.y * inv_aa) : cmake<C>(1, 0);
    const R sigma = 1 / (xn * (xn + aa));
    const C u0 = cadd(alpha, cscale(xn, ph));
    for (int i = tid; i < m; i += nt) {
        const C v = i == 0 ? u0 : col[i];
        u[i] = v;
        if (refl)
            refl[i] = v;
    }
    if (tid == 0) {
        *b_out = cscale(-xn, ph);
        *sigma_out = sigma;
    }
    return sigma;
}

template <typename R, typename C>
__device__ R reflector_make(const C *col, int m, R rest2, C *u, C *refl, C *b_out, R *sigma_out)
{
    return reflector_make_strided(col, m, rest2, u, refl, b_out, sigma_out, (int)threadIdx.x,
                                  (int)blockDim.x);
}

/* The same for the caller's warp alone (each lane returns sigma); the caller
 * __syncwarp()s before u is read by other lanes. */
template <typename R, typename C>
__device__ R reflector_make_warp(const C *col, int m, R rest2, C *u, C *refl, C *b_out,
                                 R *sigma_out)
{
    return reflector_make_strided(col, m, rest2, u, refl, b_out, sigma_out,
                                  (int)(threadIdx.x & 31), 32);
}

} // namespace

#endif
