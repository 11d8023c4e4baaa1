/*
 * eig_cuda_internal.cuh - what the plan (eig_cuda_plan.cu) shares with the
 * three kernels of the cuda backend. Not installed; C++ (templates on the real
 * type R = float or double, one source for both precisions).
 *
 * Pipeline per chunk of matrices (docs/gpu.md has the design and budgets):
 *   1. tridiag: check + scale + Householder tridiagonalization, one CTA per
 *      matrix; writes d, e (real, after phase scaling), phases, reflectors.
 *   2. qr:      implicit QL/QR (dsteqr's algorithm) on the real tridiagonal;
 *      one lane chases the bulge and logs each rotation in shared memory
 *      while consumer warps apply the previous log to a 32-row slice of the
 *      real eigenvector matrix Zr; sorts; writes w and Zr.
 *   3. back:    z = Q * D * Zr, reflectors applied to column slabs in shared
 *      memory (jobs with vectors only).
 */
#ifndef EIGSTREAM_EIG_CUDA_INTERNAL_CUH
#define EIGSTREAM_EIG_CUDA_INTERNAL_CUH

#include <cuda_runtime.h>

#include <cfloat>

#include "eig.h"

/* ---- complex helpers --------------------------------------------------------- */

template <typename R> struct eig_cuda_complex;
template <> struct eig_cuda_complex<float> {
    typedef float2 type;
};
template <> struct eig_cuda_complex<double> {
    typedef double2 type;
};

template <typename R> struct eig_cuda_limits;
template <> struct eig_cuda_limits<float> {
    static __host__ __device__ constexpr float eps() { return FLT_EPSILON * 0.5f; }
    static __host__ __device__ constexpr float ulp() { return FLT_EPSILON; }
    static __host__ __device__ constexpr float safmin() { return FLT_MIN; }
    /* f*f + g*g is computed directly when max(|f|,|g|) lies in [tiny, huge] */
    static __host__ __device__ constexpr float rot_tiny() { return 1e-17f; }
    static __host__ __device__ constexpr float rot_huge() { return 1e17f; }
};
template <> struct eig_cuda_limits<double> {
    static __host__ __device__ constexpr double eps() { return DBL_EPSILON * 0.5; }
    static __host__ __device__ constexpr double ulp() { return DBL_EPSILON; }
    static __host__ __device__ constexpr double safmin() { return DBL_MIN; }
    static __host__ __device__ constexpr double rot_tiny() { return 1e-140; }
    static __host__ __device__ constexpr double rot_huge() { return 1e140; }
};

template <typename C> __device__ __forceinline__ C cmake(decltype(C::x) re, decltype(C::x) im)
{
    C c;
    c.x = re;
    c.y = im;
    return c;
}
template <typename C> __device__ __forceinline__ C cadd(C a, C b)
{
    return cmake<C>(a.x + b.x, a.y + b.y);
}
template <typename C> __device__ __forceinline__ C csub(C a, C b)
{
    return cmake<C>(a.x - b.x, a.y - b.y);
}
template <typename C> __device__ __forceinline__ C cmul(C a, C b)
{
    return cmake<C>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
/* conj(a) * b */
template <typename C> __device__ __forceinline__ C cmulc(C a, C b)
{
    return cmake<C>(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}
/* acc + a * b */
template <typename C> __device__ __forceinline__ C cfma(C a, C b, C acc)
{
    return cmake<C>(fma(a.x, b.x, fma(-a.y, b.y, acc.x)), fma(a.x, b.y, fma(a.y, b.x, acc.y)));
}
/* acc + conj(a) * b */
template <typename C> __device__ __forceinline__ C cfmac(C a, C b, C acc)
{
    return cmake<C>(fma(a.x, b.x, fma(a.y, b.y, acc.x)), fma(a.x, b.y, fma(-a.y, b.x, acc.y)));
}
template <typename C> __device__ __forceinline__ C cscale(decltype(C::x) s, C a)
{
    return cmake<C>(s * a.x, s * a.y);
}

/* ---- workspace ------------------------------------------------------------------ */

/* Device workspace for `chunk` matrices of order n (all allocated at plan
 * creation). Complex arrays are of the plan's precision. */
typedef struct eig_cuda_workspace {
    void *matrix;    /* chunk * n*n complex: trailing matrix while too big for smem; may be NULL */
    void *reflector; /* chunk * n*n complex: u_k in column k, rows k+1..n-1 (vectors jobs) */
    void *wy;        /* chunk * n*n complex: Y = V T per block of EIG_CUDA_BACK_NB reflectors,
                        laid out like reflector (vectors jobs; eig_cuda_back.cu) */
    void *sigma;     /* chunk * n real: H_k = I - sigma_k u_k u_k^H; 0 = identity */
    void *phase;     /* chunk * n complex: D with D^H T D real (vectors jobs) */
    void *diag;      /* chunk * n real: d of the real tridiagonal */
    void *offdiag;   /* chunk * n real: e (n-1 used) */
    void *zreal;     /* chunk * n*n real: eigenvectors of the tridiagonal, sorted (vectors) */
    int *scale_exp;  /* chunk: the matrix was scaled by 2^-scale_exp */
    int *status;     /* chunk: 0 or the negative info of the input check */
} eig_cuda_workspace;

/* ---- kernel configurations (chosen at plan creation) --------------------------- */

typedef struct eig_cuda_tridiag_config {
    int threads;     /* CTA size */
    int smem_order;  /* largest trailing-block order held in shared memory */
    size_t smem;     /* dynamic shared memory bytes */
    bool two_per_sm; /* smem <= half the opt-in limit: the 64-register variant */
} eig_cuda_tridiag_config;

typedef struct eig_cuda_qr_config {
    int consumer_warps; /* 0 for values-only; rows per CTA = 32 * consumer_warps */
    int row_chunks;     /* CTAs per matrix (each re-runs the chase, bit-identically) */
    size_t smem;
} eig_cuda_qr_config;

/* Reflectors per compact-WY block of the back-transformation. */
#define EIG_CUDA_BACK_NB 16

typedef struct eig_cuda_back_config {
    int threads;
    int columns;    /* columns of z per CTA (a slab) */
    bool stage;     /* V and Y of a block staged in shared memory */
    size_t smem;    /* back_kernel */
    size_t wy_smem; /* back_wy_kernel (forms Y = V T) */
} eig_cuda_back_config;

/* Each launcher validates nothing (the plan did), launches on stream and
 * returns cudaGetLastError(). `a` etc. point at the chunk's first matrix. */
template <typename R>
cudaError_t eig_cuda_tridiag_launch(const eig_cuda_tridiag_config *cfg, int n, int count,
                                    eig_storage storage, eig_uplo uplo, int vectors,
                                    const void *a, const eig_cuda_workspace *ws, void *w,
                                    int *info, cudaStream_t stream);
template <typename R>
size_t eig_cuda_tridiag_smem(int n, int threads, int smem_order);
template <typename R> cudaError_t eig_cuda_tridiag_set_smem(size_t bytes);

template <typename R>
cudaError_t eig_cuda_qr_launch(const eig_cuda_qr_config *cfg, int n, int count,
                               const eig_cuda_workspace *ws, void *w, int *info,
                               cudaStream_t stream);
template <typename R> size_t eig_cuda_qr_smem(int n, int consumer_warps);
template <typename R> cudaError_t eig_cuda_qr_set_smem(int consumer_warps, size_t bytes);

template <typename R>
cudaError_t eig_cuda_back_launch(const eig_cuda_back_config *cfg, int n, int count,
                                 const eig_cuda_workspace *ws, void *z, const int *info,
                                 cudaStream_t stream);
template <typename R> size_t eig_cuda_back_smem(int n, int columns, bool stage);
/* Picks columns / stage / shared memory; false when nothing fits optin. */
template <typename R> bool eig_cuda_back_choose(int n, int optin, eig_cuda_back_config *cfg);
template <typename R> cudaError_t eig_cuda_back_set_smem(const eig_cuda_back_config *cfg);

#endif
