/*
 * eig.h - batched Hermitian eigensolver: the public C API of eigstream.
 *
 * A plan fixes everything about a batch (matrix order n, batch count,
 * precision, job, storage, backend, threads) and owns all workspace, so that
 * executing it allocates nothing. One plan may be executed many times, from
 * one thread at a time.
 *
 *     eig_plan_params p = eig_plan_params_default();
 *     p.n = 128; p.batch = 180; p.precision = EIG_COMPLEX_DOUBLE;
 *     eig_plan *plan;
 *     eig_error e = eig_plan_create(&plan, &p);
 *     if (e == EIG_OK) e = eig_plan_execute(plan, a, w, z, info);
 *     eig_plan_destroy(&plan);
 *
 * Matrices (column-major, LAPACK conventions):
 *   EIG_STORAGE_FULL:   matrix b starts at a + b*n*n, element (i,j) at i + j*n.
 *                       Only the triangle named by uplo is read (the diagonal
 *                       included); the other triangle is never touched.
 *   EIG_STORAGE_PACKED: matrix b starts at a + b*n*(n+1)/2, in LAPACK's packed
 *                       layout: uplo = EIG_LOWER stores A(i,j), i >= j, at
 *                       i + j*(2n-j-1)/2; EIG_UPPER stores A(i,j), i <= j, at
 *                       i + j*(j+1)/2 (0-based).
 *   Elements are `float complex` / `double complex` (interleaved re, im;
 *   layout-compatible with cuFloatComplex / cuDoubleComplex and NumPy).
 *
 * Results:
 *   w:    batch * n real values (float or double by precision), ascending.
 *   z:    batch * n * n complex, column-major, ld = n; column k is the unit
 *         eigenvector of w[k]; the columns are orthonormal. NULL for values-only.
 *   info: batch ints, per matrix:
 *           0  converged;
 *         > 0  QR did not converge within 30 sweeps per eigenvalue: info is
 *              the number of eigenvalues left unconverged;
 *         < 0  invalid input (EIG_INFO_NONFINITE, EIG_INFO_NONREAL_DIAGONAL).
 *         w and z of a matrix with info != 0 are filled with NaN; the other
 *         matrices of the batch are unaffected.
 *
 * The library never prints, never aborts and never calls exit().
 */
#ifndef EIGSTREAM_EIG_H
#define EIGSTREAM_EIG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum eig_error {
    EIG_OK = 0,
    EIG_EINVAL,       /* an argument is out of range or NULL where required */
    EIG_ENOMEM,       /* host memory allocation failed */
    EIG_EMATRIX,      /* executed; one or more matrices have info != 0 */
    EIG_ENOCUDA,      /* the cuda backend was asked for but is not built in */
    EIG_ENODEVICE,    /* built with CUDA but no usable GPU is present */
    EIG_EDEVICE,      /* a CUDA call failed (device memory, launch, copy) */
    EIG_EUNSUPPORTED, /* this backend cannot do what the plan asks */
    EIG_EBACKEND      /* the backend library (LAPACK) reported an error */
} eig_error;

typedef enum eig_backend {
    EIG_BACKEND_AUTO = 0, /* cuda when built and a GPU is present, else cpu */
    EIG_BACKEND_CPU,      /* our tridiagonalization + implicit QR (Cosnuau 2014) */
    EIG_BACKEND_LAPACK,   /* LAPACKE zheevd/cheevd (zhpevd/chpevd packed) */
    EIG_BACKEND_CUDA      /* batched GPU kernels (cuda/) */
} eig_backend;

/* The one precision enum of eigstream: config, protocol and tools use it.
 * The values are the wire protocol's element codes (docs/protocol.md). */
typedef enum eig_precision {
    EIG_COMPLEX_FLOAT = 1, /* complex float in, float values out (8-byte elements) */
    EIG_COMPLEX_DOUBLE = 2 /* complex double in, double values out (16-byte elements) */
} eig_precision;

typedef enum eig_job {
    EIG_JOB_VALUES = 0, /* eigenvalues only */
    EIG_JOB_VECTORS     /* eigenvalues and eigenvectors */
} eig_job;

typedef enum eig_storage { EIG_STORAGE_FULL = 0, EIG_STORAGE_PACKED } eig_storage;

typedef enum eig_uplo { EIG_LOWER = 0, EIG_UPPER } eig_uplo;

/* Per-matrix info codes for invalid input (info < 0). */
enum {
    EIG_INFO_NONFINITE = -1,       /* a NaN or Inf in the referenced triangle */
    EIG_INFO_NONREAL_DIAGONAL = -2 /* |Im a_ii| > n * ulp * max|a_ij| */
};

/* Sweeps of implicit QR allowed per eigenvalue before giving up (LAPACK's MAXIT). */
#define EIG_QR_MAX_SWEEPS 30

/* Largest n any backend accepts; the cuda backend stops at EIG_CUDA_N_MAX
 * (its kernels keep a matrix's working set in one SM's shared memory). */
#define EIG_N_MAX 4096
#define EIG_CUDA_N_MAX 512

/* How the cuda backend runs implicit QR on the tridiagonal (docs/gpu.md). */
typedef enum eig_cuda_qr_path {
    EIG_CUDA_QR_PATH_AUTO = 0, /* logged for vectors jobs at n > 64 (when its shared
                                  memory fits the device; complex double from
                                  n = 448 with wavefront appliers), else fused */
    EIG_CUDA_QR_PATH_FUSED,    /* one kernel: each CTA re-runs the chase and applies
                                  its rotations to a row slice of the vectors */
    EIG_CUDA_QR_PATH_LOGGED,   /* one chase per matrix writes a rotation log,
                                  appliers apply it sweep after sweep
                                  (vectors jobs; a values-only job stays fused) */
    EIG_CUDA_QR_PATH_WAVEFRONT /* the logged path whose appliers run the bulges
                                  of a multishift group at once, as a wavefront
                                  (vectors jobs; docs/gpu.md, run R3) */
} eig_cuda_qr_path;

/* How the cuda backend applies the Householder reflectors to the eigenvectors
 * (docs/gpu.md, "back-transformation"). */
typedef enum eig_cuda_back_path {
    EIG_CUDA_BACK_PATH_AUTO = 0, /* gemm from n = 192, and from n = 96 (complex
                                    double) or 128 (complex float) when the batch
                                    has at least one matrix per SM; else slabs */
    EIG_CUDA_BACK_PATH_SLABS,    /* one kernel: column slabs of the vectors in shared
                                    memory, blocks of 16 reflectors */
    EIG_CUDA_BACK_PATH_GEMM      /* blocks of 32 reflectors applied to the whole
                                    batch by cuBLAS batched matrix products */
} eig_cuda_back_path;

/* How the cuda backend tridiagonalizes (docs/gpu.md, "tridiag"). */
typedef enum eig_cuda_tridiag_path {
    EIG_CUDA_TRIDIAG_PATH_AUTO = 0, /* panel from n = 256 (complex double) or
                                       384 (complex float), else sweep */
    EIG_CUDA_TRIDIAG_PATH_SWEEP,    /* one kernel: one pass over the trailing
                                       block per column (shared memory where
                                       it fits, else global) */
    EIG_CUDA_TRIDIAG_PATH_PANEL     /* panels of 16 columns with the trailing
                                       matrix in global memory, updated once
                                       per panel by a cuBLAS product, the last
                                       columns in shared memory (when forced,
                                       every panel that leaves >= 3 columns) */
} eig_cuda_tridiag_path;

/* Tuning of the cuda backend (ignored by the others). Every field 0 is the
 * plan's own choice, the measured default of docs/gpu.md; tests and the
 * benchmark set them to reach a path or compare choices. */
typedef struct eig_cuda_tuning {
    eig_cuda_qr_path qr_path; /* default EIG_CUDA_QR_PATH_AUTO */
    int qr_log_cap;           /* rotations logged per matrix, 0..EIG_CUDA_TUNING_MAX;
                                 0 = 3 n^2 up to n = 256, 2 n^2 above. A matrix
                                 whose log would pass it takes the fused kernel. */
    int qr_group_min;         /* smallest block order chased by a multishift
                                 group, 0..EIG_CUDA_TUNING_MAX; 0 = single-shift
                                 sweeps up to n = 64, the kernel's default above;
                                 above n: single-shift sweeps only */
    int qr_bulges;            /* most bulges chased at once by a group: 8, 16 or
                                 32; 0 = 8 on the fused vectors path and on the
                                 complex double logged path from n = 384 (not
                                 with wavefront appliers), 16 elsewhere
                                 (docs/gpu.md, runs M1, R1 and R3) */
    eig_cuda_back_path back_path; /* default EIG_CUDA_BACK_PATH_AUTO */
    eig_cuda_tridiag_path tridiag_path; /* default EIG_CUDA_TRIDIAG_PATH_AUTO (since ABI 2) */
} eig_cuda_tuning;

/* Upper bound of the integer fields of eig_cuda_tuning. */
#define EIG_CUDA_TUNING_MAX (1 << 30)

typedef struct eig_plan_params {
    int n;                   /* matrix order, 1..EIG_N_MAX */
    int batch;               /* number of matrices, >= 1 */
    eig_precision precision; /* default EIG_COMPLEX_DOUBLE */
    eig_job job;             /* default EIG_JOB_VECTORS */
    eig_storage storage;     /* default EIG_STORAGE_FULL */
    eig_uplo uplo;           /* default EIG_LOWER */
    eig_backend backend;     /* default EIG_BACKEND_AUTO */
    int threads;             /* CPU threads; 0 = all online cores */
    int device;              /* CUDA device ordinal (cuda backend) */
    int device_only;         /* 0 (default) or 1: the plan is only executed on
                                device buffers (eig_plan_execute_device*), so a
                                cuda plan allocates no pinned host staging and
                                no device copies for eig_plan_execute, which
                                then returns EIG_EUNSUPPORTED. The cpu and
                                lapack backends refuse it at create with
                                EIG_EUNSUPPORTED; AUTO resolves as usual and
                                fails the same way without a GPU. */
    eig_cuda_tuning cuda;    /* cuda backend tuning; default all 0 */
} eig_plan_params;

typedef struct eig_plan eig_plan;

/* Defaults as documented on each field of eig_plan_params (n = batch = 1). */
eig_plan_params eig_plan_params_default(void);

/* Creates a plan and all its workspace. On success *out is a new plan the
 * caller destroys with eig_plan_destroy; on failure *out is NULL. */
eig_error eig_plan_create(eig_plan **out, const eig_plan_params *params);

/* Solves the batch on host buffers (any backend). a is read only; w, info
 * are required; z is required for EIG_JOB_VECTORS and ignored otherwise.
 * Returns EIG_OK when every matrix has info == 0, EIG_EMATRIX when some do not
 * (their results are NaN, the rest valid), another code when nothing ran
 * (EIG_EUNSUPPORTED for a device_only plan). */
eig_error eig_plan_execute(eig_plan *plan, const void *a, void *w, void *z, int *info);

/* cuda backend only: the same on device-resident buffers, enqueued on the
 * caller's stream (a cudaStream_t; NULL for the legacy default stream) and
 * returning without synchronizing. Per-matrix info lands in d_info when the
 * stream reaches it; the caller reads it to learn of bad matrices. Returns
 * EIG_EUNSUPPORTED for other backends. */
eig_error eig_plan_execute_device(eig_plan *plan, const void *d_a, void *d_w, void *d_z,
                                  int *d_info, void *stream);

/* cuda backend only: eig_plan_execute_device with d_a read in the given
 * storage and triangle instead of the plan's own (the plan's storage and uplo
 * are ignored), so that one plan serves full and both packed layouts of the
 * same n, batch, precision and job. A cuda plan reads packed input in place:
 * any layout needs no workspace beyond the plan's. Returns EIG_EINVAL for a
 * bad storage or uplo, EIG_EUNSUPPORTED for other backends. */
eig_error eig_plan_execute_device_layout(eig_plan *plan, eig_storage storage, eig_uplo uplo,
                                         const void *d_a, void *d_w, void *d_z, int *d_info,
                                         void *stream);

/* Destroys the plan and sets *plan to NULL; a NULL or *NULL plan is a no-op. */
void eig_plan_destroy(eig_plan **plan);

/* ---- checking computed eigenpairs ---------------------------------------------------- */

/* LAPACK's zhet21 ratios on k eigenpairs (A v_j = w_j v_j, j < k) of one
 * matrix a (storage and uplo as eig_plan_params: only that triangle read):
 *   residual      = ||A V - V diag(w)||_1 / (max(||A||_1, DBL_MIN) n eps)
 *   orthogonality = ||V^H V - I_k||_1 / (n eps)
 * eps the precision's (FLT_EPSILON, DBL_EPSILON); sums in double; a NaN
 * anywhere gives NaN. A correct solve stays below EIG_CHECK_THRESHOLD
 * (LAPACK's sep.in threshold). w: k real values of the precision; v: n x k
 * column-major (ld n). Values only (v NULL, k = n): residual = |sum w -
 * trace A| / (the same scale), orthogonality 0. k = 0: both 0. Allocates
 * nothing; O(k n^2) operations. EIG_EINVAL for bad enums, n outside
 * 1..EIG_CHECK_N_MAX, k outside 0..n, NULL buffers. */
#define EIG_CHECK_THRESHOLD 60.0
#define EIG_CHECK_N_MAX EIG_N_MAX
typedef struct eig_check_ratios {
    double residual, orthogonality;
} eig_check_ratios;
eig_error eig_check_pairs(eig_precision precision, eig_storage storage, eig_uplo uplo, int n, const void *a, int k,
                          const void *w, const void *v, eig_check_ratios *out);

/* The parameters the plan was created with, the backend resolved (never AUTO). */
const eig_plan_params *eig_plan_get_params(const eig_plan *plan);

/* Human-readable message for an error code; never NULL. */
const char *eig_strerror(eig_error e);

/* "auto", "cpu", "lapack", "cuda"; eig_backend_parse returns EIG_EINVAL for
 * an unknown name. */
const char *eig_backend_name(eig_backend b);
eig_error eig_backend_parse(const char *name, eig_backend *out);

/* Largest n the backend accepts: EIG_CUDA_N_MAX for cuda, EIG_N_MAX for the
 * others (auto falls back to cpu above EIG_CUDA_N_MAX); 0 for a bad value. */
int eig_backend_n_max(eig_backend b);

/* The backend a plan of order n with this backend runs on: AUTO becomes
 * cuda when built in, a GPU is present and n <= EIG_CUDA_N_MAX, else cpu;
 * the others stay as given. */
eig_backend eig_backend_resolve(eig_backend b, int n);

/* "auto", "fused", "logged" ("unknown" for a bad value); the parse takes
 * them case-insensitively and returns EIG_EINVAL for others. */
const char *eig_cuda_qr_path_name(eig_cuda_qr_path path);
eig_error eig_cuda_qr_path_parse(const char *name, eig_cuda_qr_path *out);
/* "auto", "slabs", "gemm"; parsed as eig_cuda_qr_path_parse does. */
const char *eig_cuda_back_path_name(eig_cuda_back_path path);
eig_error eig_cuda_back_path_parse(const char *name, eig_cuda_back_path *out);
/* "auto", "sweep", "panel"; parsed as eig_cuda_qr_path_parse does. */
const char *eig_cuda_tridiag_path_name(eig_cuda_tridiag_path path);
eig_error eig_cuda_tridiag_path_parse(const char *name, eig_cuda_tridiag_path *out);

/* "float", "double" ("unknown" for a bad value; inline, so that the wire
 * codec and tools use the one name table without linking the solver). */
static inline const char *eig_precision_name(eig_precision p)
{
    switch (p) {
    case EIG_COMPLEX_FLOAT: return "float";
    case EIG_COMPLEX_DOUBLE: return "double";
    }
    return "unknown";
}

/* Takes the names above (case-insensitive); EIG_EINVAL for others. */
eig_error eig_precision_parse(const char *name, eig_precision *out);

/* Bytes of one complex element of the precision (8, 16), 0 for a bad value
 * (an unchecked wire byte may be passed). */
static inline size_t eig_element_bytes(eig_precision p)
{
    switch (p) {
    case EIG_COMPLEX_FLOAT: return 8;
    case EIG_COMPLEX_DOUBLE: return 16;
    }
    return 0;
}

/* 1 when the library was built with the cuda backend, else 0. */
int eig_cuda_built(void);

/* Number of usable CUDA devices (0 without CUDA, driver or GPU). */
int eig_cuda_device_count(void);

#ifdef __cplusplus
}
#endif

#endif
