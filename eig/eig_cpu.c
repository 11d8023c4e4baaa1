/*
 * eig_cpu.c - the cpu backend: our own batched Hermitian eigensolver
 * (Householder tridiagonalization in Cosnuau's reduced form, the phase
 * scaling to a real tridiagonal, implicit Wilkinson-shift QR, back-
 * transformation by our own blocked product), one matrix per OpenMP thread. The algorithm lives
 * in eig_cpu.proto.c, written once and compiled here for complex double and
 * complex float.
 *
 * Workspace: one block per thread of the team, carved at plan creation and
 * reused for every matrix; execute allocates nothing.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "eig_internal.h"

/* QR sweeps allowed per eigenvalue: EIG_QR_MAX_SWEEPS. The library never
 * defines it; tests/eig builds a test-only copy of this file with
 * -DEIG_CPU_QR_SWEEPS=0 to drive the non-convergence path. */
#ifndef EIG_CPU_QR_SWEEPS
#define EIG_CPU_QR_SWEEPS EIG_QR_MAX_SWEEPS
#endif

struct eig_cpu_plan {
    eig_plan_params params;
    int threads;              /* resolved thread count (>= 1) */
    int team;                 /* threads used on a batch: min(threads, batch) */
    size_t rotation_capacity; /* rotations recorded before a flush into Zr */
    size_t workspace_bytes;   /* per thread */
    unsigned char **workspace; /* team blocks */
};

/* The hot loops (rotations, Householder updates, Q formation) would be SSE2
 * only without -march. GCC's function clones pick an AVX2 or AVX-512 build
 * of each at load time on CPUs that have one, and the baseline elsewhere, so
 * the binary stays portable. Not under the sanitizers: the clones' ifunc
 * resolvers run during relocation, before the sanitizer runtime starts, and
 * ThreadSanitizer's instrumentation of them crashes the process at load. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define EIG_CPU_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define EIG_CPU_CLONES
#endif

/* The back-transformation kernel is built once per vector width rather than
 * cloned (eig_cpu.proto.c says why): an explicit AVX-512 build chosen at run
 * time, and the 32-byte build cloned for AVX2 and the baseline. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define EIG_CPU_CLONES_AVX2 __attribute__((target_clones("default", "avx2")))
#define EIG_CPU_TARGET_AVX512 __attribute__((target("avx512f")))
static int eig_cpu_has_avx512(void)
{
    return __builtin_cpu_supports("avx512f");
}
#else
#define EIG_CPU_CLONES_AVX2
#endif

/* Flush-to-zero and denormals-are-zero for the calling thread (x86 MXCSR
 * bits 15 and 6) while one matrix is solved; _leave restores the caller's
 * setting. Elsewhere both are no-ops. Why: eig_cpu_solve_one. */
#if defined(__x86_64__) || (defined(__SSE2__) && defined(__i386__))
#include <xmmintrin.h>
static unsigned eig_cpu_fp_flush_enter(void)
{
    unsigned before = _mm_getcsr();
    _mm_setcsr(before | 0x8040u);
    return before;
}
static void eig_cpu_fp_flush_leave(unsigned before)
{
    _mm_setcsr(before);
}
#else
static unsigned eig_cpu_fp_flush_enter(void)
{
    return 0;
}
static void eig_cpu_fp_flush_leave(unsigned before)
{
    (void)before;
}
#endif

static size_t eig_cpu_round_up(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

#define EIG_T double complex
#define EIG_R double
#define EIG_FN(x) x##_z
#define EIG_EPS DBL_EPSILON
#define EIG_SAFMIN DBL_MIN
#define EIG_CREAL creal
#define EIG_CIMAG cimag
#define EIG_HYPOT hypot
#define EIG_FABS fabs
#define EIG_SQRT sqrt
/* 32 rows of doubles, 64 of floats: four 64-byte vectors per column piece,
 * enough independent FMA chains to hide the latency of the carried column,
 * and 32 KB of Zr rows at n = 128, inside L1 */
#define EIG_CPU_ROW_BLOCK 32
#include "eig_cpu.proto.c"
#undef EIG_T
#undef EIG_R
#undef EIG_FN
#undef EIG_EPS
#undef EIG_SAFMIN
#undef EIG_CREAL
#undef EIG_CIMAG
#undef EIG_HYPOT
#undef EIG_FABS
#undef EIG_SQRT
#undef EIG_CPU_ROW_BLOCK

#define EIG_T float complex
#define EIG_R float
#define EIG_FN(x) x##_c
#define EIG_EPS FLT_EPSILON
#define EIG_SAFMIN FLT_MIN
#define EIG_CREAL crealf
#define EIG_CIMAG cimagf
#define EIG_HYPOT hypotf
#define EIG_FABS fabsf
#define EIG_SQRT sqrtf
#define EIG_CPU_ROW_BLOCK 64
#include "eig_cpu.proto.c"

void eig_cpu_plan_destroy(eig_cpu_plan *plan)
{
    if (plan == NULL)
        return;
    if (plan->workspace != NULL)
        for (int t = 0; t < plan->team; t++)
            free(plan->workspace[t]);
    free(plan->workspace);
    free(plan);
}

eig_error eig_cpu_plan_create(eig_cpu_plan **out, const eig_plan_params *params, int threads)
{
    *out = NULL;
    eig_cpu_plan *plan = calloc(1, sizeof(*plan));
    if (plan == NULL)
        return EIG_ENOMEM;
    plan->params = *params;
    plan->threads = threads;
    plan->team = eig_threads_team(threads, params->batch);
    const int n = params->n;
    const int vectors = params->job == EIG_JOB_VECTORS;
    if (vectors) {
        /* a QR run records about n^2 rotations; beyond the cap they are
         * applied in several passes, which costs time, not correctness */
        size_t nn2 = 2 * (size_t)n * (size_t)n, cap = (size_t)1 << 21;
        plan->rotation_capacity = nn2 < cap ? nn2 : cap;
        if (plan->rotation_capacity < 4 * (size_t)n)
            plan->rotation_capacity = 4 * (size_t)n;
    }
    plan->workspace_bytes =
        params->precision == EIG_COMPLEX_DOUBLE
            ? eig_cpu_work_carve_z(n, vectors, plan->rotation_capacity, NULL, NULL)
            : eig_cpu_work_carve_c(n, vectors, plan->rotation_capacity, NULL, NULL);
    plan->workspace = calloc((size_t)plan->team, sizeof(*plan->workspace));
    if (plan->workspace == NULL) {
        eig_cpu_plan_destroy(plan);
        return EIG_ENOMEM;
    }
    for (int t = 0; t < plan->team; t++) {
        plan->workspace[t] = aligned_alloc(64, plan->workspace_bytes);
        if (plan->workspace[t] == NULL) {
            eig_cpu_plan_destroy(plan);
            return EIG_ENOMEM;
        }
    }
    *out = plan;
    return EIG_OK;
}

eig_error eig_cpu_plan_execute(eig_cpu_plan *plan, const void *a, void *w, void *z, int *info)
{
    if (plan->params.precision == EIG_COMPLEX_DOUBLE)
        return eig_cpu_execute_z(plan, a, w, z, info);
    return eig_cpu_execute_c(plan, a, w, z, info);
}
