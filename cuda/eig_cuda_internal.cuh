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
 *      real eigenvector matrix Zr; sorts; writes w and Zr. Logged variant
 *      (large n): one chase per matrix writes a global rotation log, an
 *      apply kernel applies it to row slices of Zr.
 *   3. back:    z = Q * D * Zr, reflectors applied to column slabs in shared
 *      memory (jobs with vectors only).
 */
#ifndef EIGSTREAM_EIG_CUDA_INTERNAL_CUH
#define EIGSTREAM_EIG_CUDA_INTERNAL_CUH

#include <cublas_v2.h>
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

template <typename C>
__host__ __device__ __forceinline__ C cmake(decltype(C::x) re, decltype(C::x) im)
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
    void *subdiag;   /* chunk * n complex: the subdiagonal b_k of the Hermitian tridiagonal
                        (the panel path's columns; else NULL) */
    void *panel;     /* chunk * n * 4 EIG_CUDA_PANEL_NB complex: [V W] and [W V] of the panel
                        being reduced (the panel path; else NULL) */
    void *panel_sums; /* chunk * eig_cuda_panel_sums_per(n) complex: the Hermitian product's
                         per-tile row and column sums (the panel path; else NULL) */
    void *wy;        /* chunk * n*n complex: Y = V T per block of EIG_CUDA_BACK_NB reflectors,
                        laid out like reflector (vectors jobs; eig_cuda_back.cu) */
    void *back_gemm; /* chunk * eig_cuda_back_config.gemm_per complex: G = V^H V and T per
                        block, W = V^H X and T W (the gemm back path; else NULL) */
    void *sigma;     /* chunk * n real: H_k = I - sigma_k u_k u_k^H; 0 = identity */
    void *phase;     /* chunk * n complex: D with D^H T D real (vectors jobs) */
    void *diag;      /* chunk * n real: d of the real tridiagonal */
    void *offdiag;   /* chunk * n real: e (n-1 used) */
    void *zreal;     /* chunk * n*n real: eigenvectors of the tridiagonal, sorted (vectors) */
    int *scale_exp;  /* chunk: the matrix was scaled by 2^-scale_exp */
    int *status;     /* chunk: 0 or the negative info of the input check */
    /* logged QR (eig_cuda_qr.cu: qr_log_kernel chases once per matrix and
     * applies as the log grows, eig_cuda_qr_apply.cuh): per matrix log_cap
     * rotations (c, s) of the precision, head_cap sweep headers, n ranks and
     * one 64-bit progress word (status, headers, rotations:
     * eig_cuda_qr_apply.cuh), plus EIG_CUDA_QR_LOG_COUNTER_WORDS words after
     * the launch group's last matrix for the launch's role counters (the
     * chases and appliers claimed, the CTAs started on each SM). NULL when
     * the plan does not log. */
    void *qr_log;
    int4 *qr_head; /* (first pivot, direction, rotations per sweep, sweeps) */
    int *qr_rank;
    unsigned long long *qr_state;
} eig_cuda_workspace;

/* The logged QR launch's counters (after the progress words): chases
 * claimed, appliers claimed, then CTAs started per SM (%smid modulo
 * EIG_CUDA_QR_LOG_SM_SLOTS), as unsigned ints. */
enum { EIG_CUDA_QR_LOG_SM_SLOTS = 1024 };
enum { EIG_CUDA_QR_LOG_COUNTER_WORDS = 1 + EIG_CUDA_QR_LOG_SM_SLOTS / 2 };

/* Status in matrix b's progress word (ws.qr_state[b]) */
enum {
    EIG_CUDA_QR_LOG_RUNNING = 0, /* the chase is on (zeroed before each launch) */
    EIG_CUDA_QR_LOG_APPLY = 1,   /* log complete, eigenvalues and ranks written */
    EIG_CUDA_QR_LOG_SKIP = 2,    /* nothing to apply (bad input, no convergence) */
    EIG_CUDA_QR_LOG_OVERFLOW = 3 /* log full: the fused qr kernel redoes it */
};

/* ---- kernel configurations (chosen at plan creation) --------------------------- */

/* Columns per panel of the blocked tridiagonalization (eig_cuda_panel.cu;
 * run R2, H100: 16 against 32, tridiag 7.09 -> 6.74 ms at n = 256 c128,
 * 20.99 -> 20.21 at 384, the same at 512: the per-column work on the panel's
 * earlier columns halves, the rank-2 NB updates double). */
#define EIG_CUDA_PANEL_NB 16

/* 32 x 32 tiles in the lower triangle (diagonal included) of an n x n block,
 * and the complex elements of ws.panel_sums per matrix: 64 per tile. */
__host__ __device__ inline int eig_cuda_panel_tiles(int n)
{
    const int nb = (n + 31) / 32;
    return nb * (nb + 1) / 2;
}
__host__ __device__ inline size_t eig_cuda_panel_sums_per(int n)
{
    return (size_t)eig_cuda_panel_tiles(n) * 64;
}

typedef struct eig_cuda_tridiag_config {
    int threads;     /* CTA size */
    /* panel path: columns 0..panel_end-1 (a multiple of EIG_CUDA_PANEL_NB)
     * are reduced panel by panel with the trailing matrix in global memory
     * (a rank-2nb cuBLAS update per panel), the rest by the tridiag kernel
     * from panel_end on; 0 = the tridiag kernel alone */
    int panel_end;
    int smem_order;  /* largest trailing-block order held in shared memory */
    size_t smem;     /* dynamic shared memory bytes */
    bool two_per_sm; /* smem <= half the opt-in limit: the 64-register variant */
} eig_cuda_tridiag_config;

typedef struct eig_cuda_qr_config {
    int consumer_warps; /* 0 for values-only; rows per CTA = 32 * consumer_warps */
    int row_chunks;     /* CTAs per matrix (each re-runs the chase, bit-identically) */
    size_t smem;
    int group_min;      /* smallest block order chased by a multishift group */
    int bulges;         /* most bulges per group (8, 16 or 32) */
    bool serial_shifts; /* fused kernel: a group's shifts by one lane's QL, not
                           by every lane's quadrisection (c128 vectors, run M1) */
    /* logged path (vectors): one chase per matrix and its appliers in one
     * launch; matrices whose log would pass log_cap / head_cap take the
     * fused kernel */
    bool logged;
    int log_cap, head_cap;
    bool wave;          /* wavefront appliers (qr_log_kernel WAVE): a group's
                           bulges applied at once, slices of apply_rows */
    int apply_rows;     /* Zr rows per applier CTA: 32 or 64 (two per lane),
                           32, 48 or 64 with wavefront appliers */
    int apply_chunk;    /* rotations per staged log chunk (two buffers) */
    size_t chase_smem, apply_smem;
    int sms;            /* the device's SMs: at most ceil(count / sms) chases start on one */
} eig_cuda_qr_config;

/* Rows of Zr per warp of the wavefront appliers (eig_cuda_qr_apply.cuh); a
 * CTA's slice (apply_rows) is 32, 48 or 64 rows: 4, 6 or 8 such warps. */
enum { EIG_CUDA_QR_WAVE_ROWS = 8 };

/* Reflectors per compact-WY block of the back-transformation. */
#define EIG_CUDA_BACK_NB 16

/* Reflectors per block of the gemm back path (cuBLAS products of rank 32). */
#define EIG_CUDA_BACK_GEMM_NB 32

typedef struct eig_cuda_back_config {
    int threads;
    int columns;    /* columns of z per CTA (a slab) */
    bool stage;     /* V and Y of a block staged in shared memory */
    size_t smem;    /* back_kernel */
    size_t wy_smem; /* back_wy_kernel (forms Y = V T) */
    /* gemm path: blocks of EIG_CUDA_BACK_GEMM_NB reflectors applied to the
     * whole launch group by cuBLAS strided-batched products (the plan's
     * handle, stream and workspace set by the launcher) */
    bool gemm;
    size_t gemm_per; /* complex elements of ws.back_gemm per matrix */
} eig_cuda_back_config;

/* Each launcher validates nothing (the plan did), launches on stream and
 * returns cudaGetLastError(). `a` etc. point at the chunk's first matrix. */
/* The panel path needs cuBLAS (blas; else NULL): cudaErrorUnknown stands
 * for a cuBLAS failure. */
template <typename R>
cudaError_t eig_cuda_tridiag_launch(const eig_cuda_tridiag_config *cfg, int n, int count,
                                    eig_storage storage, eig_uplo uplo, int vectors,
                                    const void *a, const eig_cuda_workspace *ws,
                                    const struct eig_cuda_blas *blas, void *w, int *info,
                                    cudaStream_t stream);
/* The panel path's columns j0 .. j0 + EIG_CUDA_PANEL_NB - 1 for `count`
 * matrices (eig_cuda_panel.cu): reflectors, d and b of those columns, then
 * the trailing matrix's rank-2nb update by cuBLAS. */
template <typename R>
cudaError_t eig_cuda_panel_launch(int n, int j0, int count, int vectors,
                                  const eig_cuda_workspace *ws, const struct eig_cuda_blas *blas,
                                  cudaStream_t stream);
template <typename R>
size_t eig_cuda_tridiag_smem(int n, int threads, int smem_order);
template <typename R> cudaError_t eig_cuda_tridiag_set_smem(size_t bytes);

template <typename R>
cudaError_t eig_cuda_qr_launch(const eig_cuda_qr_config *cfg, int n, int count,
                               const eig_cuda_workspace *ws, void *w, int *info,
                               cudaStream_t stream);
template <typename R> size_t eig_cuda_qr_smem(int n, int consumer_warps);
template <typename R> cudaError_t eig_cuda_qr_set_smem(int consumer_warps, size_t bytes);
/* logged path: the chase's and an applier's shared memory (a qr_log_kernel
 * CTA holds both) */
template <typename R> size_t eig_cuda_qr_chase_smem(int n);
template <typename R> size_t eig_cuda_qr_apply_smem(int n, int rows, int chunk);
template <typename R> size_t eig_cuda_qr_wave_smem(int n, int rows);
template <typename R> cudaError_t eig_cuda_qr_log_set_smem(const eig_cuda_qr_config *cfg);

/* Applies `count` rotations of one sweep, logged as (c, s) pairs at cs with
 * stride `stride`, to the row of Zr at z (columns `rows` apart): pivots
 * first, first+dir, ... (dir = -1: QL, rotation (c, -s) logged; +1: QR).
 * The column shared by consecutive rotations stays in a register: one load
 * and one store per rotation. Splitting a sweep into consecutive parts
 * gives the same result bit for bit. Host and device (harness). */
template <typename R, typename R2>
__host__ __device__ __forceinline__ void eig_cuda_apply_sweep(R *z, int rows, const R2 *cs,
                                                              int count, int first, int dir,
                                                              int stride = 1)
{
    if (count <= 0)
        return;
    if (dir < 0) { /* pivots first, first-1, ...: z_{j+1} is carried downwards */
        R carry = z[(first + 1) * rows];
        R2 rot = cs[0];
        R zj = z[first * rows];
        for (int q = 0; q < count; ++q) {
            const int j = first - q;
            const R2 rot_next = cs[(q + 1 < count ? q + 1 : q) * stride];
            const R zj_next = z[(j > 0 ? j - 1 : 0) * rows];
            z[(j + 1) * rows] = rot.x * carry - rot.y * zj;
            carry = rot.y * carry + rot.x * zj;
            rot = rot_next;
            zj = zj_next;
        }
        z[(first - count + 1) * rows] = carry;
    } else { /* pivots first, first+1, ...: z_j is carried upwards */
        R carry = z[first * rows];
        R2 rot = cs[0];
        R zj1 = z[(first + 1) * rows];
        for (int q = 0; q < count; ++q) {
            const int j = first + q;
            const R2 rot_next = cs[(q + 1 < count ? q + 1 : q) * stride];
            const R zj1_next = z[(q + 1 < count ? j + 2 : j + 1) * rows];
            z[j * rows] = rot.y * zj1 + rot.x * carry;
            carry = rot.x * zj1 - rot.y * carry;
            rot = rot_next;
            zj1 = zj1_next;
        }
        z[(first + count) * rows] = carry;
    }
}

/* The cuBLAS handle and its workspace, used by the gemm path only (NULL
 * otherwise); the launcher binds them to stream. */
typedef struct eig_cuda_blas {
    cublasHandle_t handle;
    void *workspace;
    size_t workspace_bytes;
} eig_cuda_blas;

/* C_i = alpha op(A_i) op(B_i) + beta C_i for i < count, in the precision of
 * the complex type. */
inline cublasStatus_t eig_cuda_gemm_strided(cublasHandle_t h, cublasOperation_t ta,
                                            cublasOperation_t tb, int m, int n, int k,
                                            double2 alpha, const double2 *a, int lda, long long sa,
                                            const double2 *b, int ldb, long long sb, double2 beta,
                                            double2 *c, int ldc, long long sc, int count)
{
    return cublasZgemmStridedBatched(h, ta, tb, m, n, k, &alpha, a, lda, sa, b, ldb, sb, &beta, c,
                                     ldc, sc, count);
}
inline cublasStatus_t eig_cuda_gemm_strided(cublasHandle_t h, cublasOperation_t ta,
                                            cublasOperation_t tb, int m, int n, int k,
                                            float2 alpha, const float2 *a, int lda, long long sa,
                                            const float2 *b, int ldb, long long sb, float2 beta,
                                            float2 *c, int ldc, long long sc, int count)
{
    return cublasCgemmStridedBatched(h, ta, tb, m, n, k, &alpha, a, lda, sa, b, ldb, sb, &beta, c,
                                     ldc, sc, count);
}

/* Binds the plan's cuBLAS handle to stream and its workspace; false on a
 * cuBLAS failure. */
inline bool eig_cuda_blas_bind(const eig_cuda_blas *blas, cudaStream_t stream)
{
    return cublasSetStream(blas->handle, stream) == CUBLAS_STATUS_SUCCESS &&
           cublasSetWorkspace(blas->handle, blas->workspace, blas->workspace_bytes) ==
               CUBLAS_STATUS_SUCCESS;
}

/* The gemm path needs cuBLAS: cudaErrorUnknown stands for a cuBLAS failure. */
template <typename R>
cudaError_t eig_cuda_back_launch(const eig_cuda_back_config *cfg, int n, int count,
                                 const eig_cuda_workspace *ws, const eig_cuda_blas *blas, void *z,
                                 const int *info, cudaStream_t stream);
/* Complex elements of ws.back_gemm per matrix for the gemm path. */
size_t eig_cuda_back_gemm_per(int n);
template <typename R> size_t eig_cuda_back_smem(int n, int columns, bool stage);
/* Picks columns / stage / shared memory; false when nothing fits optin. */
template <typename R> bool eig_cuda_back_choose(int n, int optin, eig_cuda_back_config *cfg);
template <typename R> cudaError_t eig_cuda_back_set_smem(const eig_cuda_back_config *cfg);

#endif
