/*
 * test_gpu_eig.c - accuracy of the cuda backend against LAPACK (zheevd via
 * LAPACKE, in double for both precisions) and the cpu backend, on the LAPACK
 * test matrix types 1-22 of tools/workload, plus invalid matrices.
 *
 * For each size and precision one batch holds every type (a subset at n >=
 * 256) followed by three bad matrices (NaN, Inf, non-real diagonal) and one
 * good matrix whose UNREFERENCED triangle is NaN. Checked:
 *   - host entry point, vectors, full lower: info per matrix, residual and
 *     orthogonality ratios <= 60, eigenvalues vs zheevd and vs the cpu backend
 *     <= 60 (n ulp |A|), NaN outputs for the bad matrices;
 *   - full upper, packed lower, packed upper (vectors): info, eigenvalues,
 *     residual (n <= 128);
 *   - values only: info and eigenvalues;
 *   - the device entry point on a stream: the same results bit for bit.
 * Without a usable GPU it prints why and exits 77 (ctest SKIP).
 * Options (every plan of the run gets them; the test's own, not the library's):
 *   --sizes 1,5,64      these sizes only (compute-sanitizer runs); the
 *                       environment's EIGSTREAM_GPU_TEST_SIZES does the same
 *   --qr-path P         auto (default), fused, logged or wavefront (eig_cuda_tuning)
 *   --qr-log-cap N      rotations logged per matrix: a small cap forces the
 *                       logged path's overflow fallback to the fused kernel
 *   --qr-group-min N    smallest block order chased by a multishift group
 *                       (20 reaches the groups at the small sizes too)
 *   --qr-bulges N       most bulges per group: 8, 16 or 32
 *   --back-path P       auto (default), slabs or gemm (the back-transformation)
 *   --tridiag-path P    auto (default), sweep or panel (the tridiagonalization;
 *                       panel at small n reaches every panel boundary)
 * Each failure names the matrix type, size, precision, variant and ratio.
 */
#include <complex.h>
#include <cuda_runtime_api.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig.h"
#include "test_check.h"
#include "workload.h"

#define SKIP_CODE 77
#define N_BAD 4 /* NaN, Inf, non-real diagonal, NaN in the unreferenced triangle */

static eig_cuda_tuning tuning; /* from the command line, all 0 by default */


/* 96: the logged QR path with a half-empty 64-row slice */
static const int default_sizes[] = {1, 2, 3, 5, 20, 64, 96, 128, 192, 256, 384, 512};
static const int big_types[] = {2, 3, 8, 9, 10, 11, 12, 13, 16, 19, 20, 21, 22};

typedef struct batch {
    int n, count, ntypes;
    eig_precision prec;
    size_t csize, rsize;
    int type[64];    /* matrix type of each good matrix; negative codes for bad ones */
    void *full;      /* count * n*n complex, both triangles */
    double *w_ref;   /* count * n, zheevd on the double matrix */
} batch;

static const char *prec_name(eig_precision p)
{
    return p == EIG_COMPLEX_DOUBLE ? "c128" : "c64";
}

static double real_at(const batch *bt, const void *w, size_t i)
{
    return bt->prec == EIG_COMPLEX_DOUBLE ? ((const double *)w)[i] : ((const float *)w)[i];
}

static double complex elem(const batch *bt, const void *m, size_t i)
{
    if (bt->prec == EIG_COMPLEX_DOUBLE)
        return ((const double complex *)m)[i];
    return ((const float complex *)m)[i];
}

static void set_elem(const batch *bt, void *m, size_t i, double complex v)
{
    if (bt->prec == EIG_COMPLEX_DOUBLE)
        ((double complex *)m)[i] = v;
    else
        ((float complex *)m)[i] = (float complex)v;
}

/* zheevd on the matrix in double (the float matrix upcast exactly). */
static int oracle(const batch *bt, const void *a, double *w)
{
    int n = bt->n;
    double complex *ad = malloc((size_t)n * n * sizeof(*ad));
    if (ad == NULL)
        return -1;
    for (size_t i = 0; i < (size_t)n * n; ++i)
        ad[i] = elem(bt, a, i);
    int e = LAPACKE_zheevd(LAPACK_COL_MAJOR, 'N', 'L', n, ad, n, w);
    free(ad);
    return e;
}

static int batch_build(batch *bt, int n, eig_precision prec)
{
    memset(bt, 0, sizeof(*bt));
    bt->n = n;
    bt->prec = prec;
    bt->rsize = prec == EIG_COMPLEX_DOUBLE ? sizeof(double) : sizeof(float);
    bt->csize = 2 * bt->rsize;
    int nt = 0;
    if (n >= 256) {
        for (size_t i = 0; i < sizeof(big_types) / sizeof(big_types[0]); ++i)
            bt->type[nt++] = big_types[i];
    } else {
        for (int t = WORKLOAD_TYPE_MIN; t <= WORKLOAD_TYPE_MAX; ++t)
            bt->type[nt++] = t;
    }
    bt->ntypes = nt;
    bt->type[nt] = EIG_INFO_NONFINITE;     /* NaN */
    bt->type[nt + 1] = EIG_INFO_NONFINITE; /* Inf */
    bt->type[nt + 2] = EIG_INFO_NONREAL_DIAGONAL;
    bt->type[nt + 3] = 13; /* type 13 with a NaN upper triangle */
    bt->count = nt + N_BAD;
    size_t nn = (size_t)n * n;
    bt->full = malloc(bt->count * nn * bt->csize);
    bt->w_ref = malloc(bt->count * (size_t)n * sizeof(double));
    if (bt->full == NULL || bt->w_ref == NULL)
        return -1;
    for (int b = 0; b < bt->count; ++b) {
        void *a = (char *)bt->full + b * nn * bt->csize;
        int t = b < nt ? bt->type[b] : 13;
        if (workload_generate(t, n, prec, 1000 + 7 * (uint64_t)b, a, NULL) < 0)
            return -1;
        if (b == nt) { /* (n-1, 0) and (0, n-1): whichever triangle is read */
            set_elem(bt, a, n - 1, NAN);
            set_elem(bt, a, (size_t)(n - 1) * n, NAN);
        }
        if (b == nt + 1)
            set_elem(bt, a, (size_t)(n / 2) * (n + 1), INFINITY + 0.0 * I); /* diagonal */
        if (b == nt + 2)
            set_elem(bt, a, 0, creal(elem(bt, a, 0)) + 0.5 * I);
        if (b == nt + 3)
            for (int j = 1; j < n; ++j)
                set_elem(bt, a, (size_t)j * n, NAN); /* (0, j), j > 0: upper */
        if (b < nt || b == nt + 3) {
            void *clean = a;
            void *tmp = NULL;
            if (b == nt + 3) { /* the oracle sees the Hermitian matrix, no NaN */
                tmp = malloc(nn * bt->csize);
                if (tmp == NULL)
                    return -1;
                memcpy(tmp, a, nn * bt->csize);
                for (int j = 1; j < n; ++j)
                    set_elem(bt, tmp, (size_t)j * n, conj(elem(bt, tmp, j)));
                clean = tmp;
            }
            int e = oracle(bt, clean, bt->w_ref + (size_t)b * n);
            free(tmp);
            if (e != 0)
                return -1;
        }
    }
    return 0;
}

/* The same matrices in another storage: full (copy) or packed uplo. */
static void *batch_store(const batch *bt, eig_storage storage, eig_uplo uplo)
{
    int n = bt->n;
    size_t nn = (size_t)n * n;
    size_t per = storage == EIG_STORAGE_FULL ? nn : (size_t)n * (n + 1) / 2;
    void *out = malloc(bt->count * per * bt->csize);
    if (out == NULL)
        return NULL;
    for (int b = 0; b < bt->count; ++b) {
        const void *a = (const char *)bt->full + b * nn * bt->csize;
        void *o = (char *)out + b * per * bt->csize;
        if (storage == EIG_STORAGE_FULL) {
            memcpy(o, a, nn * bt->csize);
            continue;
        }
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                if (uplo == EIG_LOWER && i >= j)
                    set_elem(bt, o, i + (size_t)j * (2 * n - j - 1) / 2, elem(bt, a, i + (size_t)j * n));
                if (uplo == EIG_UPPER && i <= j)
                    set_elem(bt, o, i + (size_t)j * (j + 1) / 2, elem(bt, a, i + (size_t)j * n));
            }
    }
    return out;
}

/* Checks one solver output against the batch; `what` names the variant. */
static void check_results(const batch *bt, const char *what, const void *w, const void *z,
                          const int *info, int residual)
{
    int n = bt->n;
    size_t nn = (size_t)n * n;
    for (int b = 0; b < bt->count; ++b) {
        int t = bt->type[b];
        const void *a = (const char *)bt->full + b * nn * bt->csize;
        const void *wb = (const char *)w + b * (size_t)n * bt->rsize;
        const void *zb = z ? (const char *)z + b * nn * bt->csize : NULL;
        if (t < 0) {
            if (info[b] != t)
                FAIL("%s n=%d %s bad matrix %d: info %d, expected %d", what, n, prec_name(bt->prec),
                     b, info[b], t);
            int nan_ok = 1;
            for (int i = 0; i < n; ++i)
                nan_ok &= isnan(real_at(bt, wb, i));
            for (size_t i = 0; zb && i < nn; ++i)
                nan_ok &= isnan(creal(elem(bt, zb, i)));
            if (!nan_ok)
                FAIL("%s n=%d %s bad matrix %d: outputs not NaN-filled", what, n,
                     prec_name(bt->prec), b);
            continue;
        }
        const char *tn = workload_type_name(t);
        if (info[b] != 0) {
            FAIL("%s n=%d %s type %d (%s): info %d", what, n, prec_name(bt->prec), t, tn, info[b]);
            continue;
        }
        void *afix = NULL;
        if (b == bt->count - 1) { /* restore the Hermitian upper triangle for the ratios */
            afix = malloc(nn * bt->csize);
            if (afix == NULL) {
                FAIL("out of memory");
                return;
            }
            memcpy(afix, a, nn * bt->csize);
            for (int j = 1; j < n; ++j)
                set_elem(bt, afix, (size_t)j * n, conj(elem(bt, afix, j)));
            a = afix;
        }
        double ev = workload_eigenvalue_ratio(n, bt->prec, a, wb, bt->w_ref + (size_t)b * n);
        if (!(ev <= WORKLOAD_RATIO_THRESHOLD))
            FAIL("%s n=%d %s type %d (%s): eigenvalues vs zheevd ratio %.3g", what, n,
                 prec_name(bt->prec), t, tn, ev);
        if (zb && residual) {
            double res = workload_residual_ratio(n, bt->prec, a, wb, zb);
            double orth = workload_orthogonality_ratio(n, bt->prec, zb);
            if (!(res <= WORKLOAD_RATIO_THRESHOLD))
                FAIL("%s n=%d %s type %d (%s): residual ratio %.3g", what, n, prec_name(bt->prec),
                     t, tn, res);
            if (!(orth <= WORKLOAD_RATIO_THRESHOLD))
                FAIL("%s n=%d %s type %d (%s): orthogonality ratio %.3g", what, n,
                     prec_name(bt->prec), t, tn, orth);
        }
        free(afix);
    }
}

typedef struct run_out {
    void *w, *z;
    int *info;
} run_out;

/* Plan parameters for the batch's order, count and precision on backend,
 * computing job (the other fields the library's defaults). */
static eig_plan_params batch_params(const batch *bt, eig_backend backend, eig_job job)
{
    eig_plan_params p = eig_plan_params_default();
    p.n = bt->n;
    p.batch = bt->count;
    p.precision = bt->prec;
    p.backend = backend;
    p.job = job;
    return p;
}

static int run_host(const batch *bt, eig_storage storage, eig_uplo uplo, eig_job job,
                    const void *a, run_out *o)
{
    eig_plan_params p = batch_params(bt, EIG_BACKEND_CUDA, job);
    p.storage = storage;
    p.uplo = uplo;
    p.cuda = tuning;
    size_t nn = (size_t)bt->n * bt->n;
    o->w = malloc(bt->count * (size_t)bt->n * bt->rsize);
    o->z = job == EIG_JOB_VECTORS ? malloc(bt->count * nn * bt->csize) : NULL;
    o->info = malloc(bt->count * sizeof(int));
    if (o->w == NULL || o->info == NULL || (job == EIG_JOB_VECTORS && o->z == NULL))
        return -1;
    eig_plan *plan;
    eig_error e = eig_plan_create(&plan, &p);
    if (e != EIG_OK) {
        FAIL("n=%d %s: eig_plan_create: %s", bt->n, prec_name(bt->prec), eig_strerror(e));
        return -1;
    }
    e = eig_plan_execute(plan, a, o->w, o->z, o->info);
    eig_plan_destroy(&plan);
    if (e != EIG_EMATRIX) { /* the batch always holds bad matrices */
        FAIL("n=%d %s: eig_plan_execute returned %s, expected EIG_EMATRIX", bt->n,
             prec_name(bt->prec), eig_strerror(e));
        return -1;
    }
    return 0;
}

static void run_out_free(run_out *o)
{
    free(o->w);
    free(o->z);
    free(o->info);
}

/* The device entry point on a caller stream must give the host path's bits. */
static void check_device_entry(const batch *bt, const run_out *ref)
{
    int n = bt->n;
    size_t nn = (size_t)n * n;
    size_t a_bytes = bt->count * nn * bt->csize, w_bytes = bt->count * (size_t)n * bt->rsize;
    eig_plan_params p = eig_plan_params_default();
    p.n = n;
    p.batch = bt->count;
    p.precision = bt->prec;
    p.backend = EIG_BACKEND_CUDA;
    p.cuda = tuning;
    eig_plan *plan = NULL;
    void *da = NULL, *dw = NULL, *dz = NULL;
    int *dinfo = NULL;
    cudaStream_t s = NULL;
    void *w = malloc(w_bytes), *z = malloc(a_bytes);
    int *info = malloc(bt->count * sizeof(int));
    if (w == NULL || z == NULL || info == NULL || eig_plan_create(&plan, &p) != EIG_OK ||
        cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&da, a_bytes) != cudaSuccess ||
        cudaMalloc(&dw, w_bytes) != cudaSuccess || cudaMalloc(&dz, a_bytes) != cudaSuccess ||
        cudaMalloc((void **)&dinfo, bt->count * sizeof(int)) != cudaSuccess) {
        FAIL("n=%d %s device entry: setup failed", n, prec_name(bt->prec));
        goto out;
    }
    if (cudaMemcpy(da, bt->full, a_bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        FAIL("n=%d %s device entry: copy failed", n, prec_name(bt->prec));
        goto out;
    }
    eig_error e = eig_plan_execute_device(plan, da, dw, dz, dinfo, s);
    if (e != EIG_OK) {
        FAIL("n=%d %s device entry: %s", n, prec_name(bt->prec), eig_strerror(e));
        goto out;
    }
    if (cudaStreamSynchronize(s) != cudaSuccess ||
        cudaMemcpy(w, dw, w_bytes, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(z, dz, a_bytes, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(info, dinfo, bt->count * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) {
        FAIL("n=%d %s device entry: run failed", n, prec_name(bt->prec));
        goto out;
    }
    /* NaN != NaN: compare bytes */
    if (memcmp(w, ref->w, w_bytes) != 0 || memcmp(z, ref->z, a_bytes) != 0 ||
        memcmp(info, ref->info, bt->count * sizeof(int)) != 0)
        FAIL("n=%d %s device entry: results differ from the host entry point", n,
             prec_name(bt->prec));
out:
    cudaFree(da);
    cudaFree(dw);
    cudaFree(dz);
    cudaFree(dinfo);
    if (s)
        cudaStreamDestroy(s);
    eig_plan_destroy(&plan);
    free(w);
    free(z);
    free(info);
}

/* Eigenvalues of the cpu backend, when it is built (it may still be a stub). */
static void check_cpu_backend(const batch *bt, const run_out *gpu)
{
    eig_plan_params p = batch_params(bt, EIG_BACKEND_CPU, EIG_JOB_VALUES);
    eig_plan *plan;
    eig_error e = eig_plan_create(&plan, &p);
    if (e != EIG_OK) {
        printf("note: cpu backend unavailable (%s): not compared\n", eig_strerror(e));
        return;
    }
    int n = bt->n;
    void *w = malloc(bt->count * (size_t)n * bt->rsize);
    int *info = malloc(bt->count * sizeof(int));
    double *wd = malloc((size_t)n * sizeof(double));
    if (w == NULL || info == NULL || wd == NULL) {
        FAIL("out of memory");
    } else if ((e = eig_plan_execute(plan, bt->full, w, NULL, info)) != EIG_EMATRIX) {
        FAIL("n=%d %s cpu backend returned %s", n, prec_name(bt->prec), eig_strerror(e));
    } else {
        for (int b = 0; b < bt->ntypes; ++b) {
            if (info[b] != 0 || gpu->info[b] != 0)
                continue;
            for (int i = 0; i < n; ++i)
                wd[i] = real_at(bt, w, (size_t)b * n + i);
            const void *a = (const char *)bt->full + b * (size_t)n * n * bt->csize;
            const void *wg = (const char *)gpu->w + b * (size_t)n * bt->rsize;
            double r = workload_eigenvalue_ratio(n, bt->prec, a, wg, wd);
            if (!(r <= WORKLOAD_RATIO_THRESHOLD))
                FAIL("n=%d %s type %d (%s): eigenvalues vs cpu backend ratio %.3g", n,
                     prec_name(bt->prec), bt->type[b], workload_type_name(bt->type[b]), r);
        }
    }
    free(w);
    free(info);
    free(wd);
    eig_plan_destroy(&plan);
}

static void test_size(int n, eig_precision prec)
{
    batch bt;
    if (batch_build(&bt, n, prec) != 0) {
        FAIL("n=%d %s: building the test batch failed", n, prec_name(prec));
        free(bt.full);
        free(bt.w_ref);
        return;
    }
    int before = test_check_failures;
    run_out ref = {0};
    if (run_host(&bt, EIG_STORAGE_FULL, EIG_LOWER, EIG_JOB_VECTORS, bt.full, &ref) == 0) {
        check_results(&bt, "full-lower-vectors", ref.w, ref.z, ref.info, 1);
        check_device_entry(&bt, &ref);
        check_cpu_backend(&bt, &ref);
    }
    run_out_free(&ref);

    static const struct {
        eig_storage storage;
        eig_uplo uplo;
        eig_job job;
        const char *name;
    } variants[] = {
        {EIG_STORAGE_FULL, EIG_UPPER, EIG_JOB_VECTORS, "full-upper-vectors"},
        {EIG_STORAGE_PACKED, EIG_LOWER, EIG_JOB_VECTORS, "packed-lower-vectors"},
        {EIG_STORAGE_PACKED, EIG_UPPER, EIG_JOB_VECTORS, "packed-upper-vectors"},
        {EIG_STORAGE_FULL, EIG_LOWER, EIG_JOB_VALUES, "full-lower-values"},
        {EIG_STORAGE_PACKED, EIG_UPPER, EIG_JOB_VALUES, "packed-upper-values"},
    };
    for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); ++v) {
        /* the NaN-upper matrix is only meaningful for full lower input */
        void *a = batch_store(&bt, variants[v].storage, variants[v].uplo);
        if (a == NULL) {
            FAIL("out of memory");
            break;
        }
        if (variants[v].storage == EIG_STORAGE_PACKED || variants[v].uplo == EIG_UPPER) {
            /* repair the last matrix's upper triangle: this variant reads it */
            size_t nn = (size_t)n * n;
            void *full = (char *)bt.full + (bt.count - 1) * nn * bt.csize;
            void *fixed = malloc(nn * bt.csize);
            if (fixed == NULL) {
                free(a);
                FAIL("out of memory");
                break;
            }
            memcpy(fixed, full, nn * bt.csize);
            for (int j = 1; j < n; ++j)
                set_elem(&bt, fixed, (size_t)j * n, conj(elem(&bt, fixed, j)));
            batch one = bt;
            one.count = 1;
            one.full = fixed;
            void *packed = batch_store(&one, variants[v].storage, variants[v].uplo);
            size_t per = variants[v].storage == EIG_STORAGE_FULL ? nn : (size_t)n * (n + 1) / 2;
            if (packed)
                memcpy((char *)a + (bt.count - 1) * per * bt.csize, packed, per * bt.csize);
            free(packed);
            free(fixed);
        }
        run_out o = {0};
        if (run_host(&bt, variants[v].storage, variants[v].uplo, variants[v].job, a, &o) == 0)
            check_results(&bt, variants[v].name, o.w, o.z, o.info, n <= 128);
        run_out_free(&o);
        free(a);
    }
    printf("%s n=%d %s: %d types + %d invalid matrices, 6 variants + device entry\n",
           test_check_failures == before ? "ok  " : "FAIL", n, prec_name(prec), bt.ntypes, N_BAD);
    fflush(stdout);
    free(bt.full);
    free(bt.w_ref);
}

/* Sizes from a list "1,5,64" into sizes[32]; the count, or -1 when bad. */
static int parse_sizes(const char *list, int *sizes)
{
    int count = 0;
    for (const char *s = list; *s;) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > EIG_CUDA_N_MAX || count == 32)
            return -1;
        sizes[count++] = (int)v;
        if (*end != ',' && *end != '\0')
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return count > 0 ? count : -1;
}

/* The options of the header comment; 0, or -1 after printing the usage. */
static int parse_args(int argc, char **argv, int *sizes, int *nsizes)
{
    const char *env = getenv("EIGSTREAM_GPU_TEST_SIZES");
    if (env != NULL && *env != '\0' && (*nsizes = parse_sizes(env, sizes)) < 0) {
        printf("FAIL: bad EIGSTREAM_GPU_TEST_SIZES '%s'\n", env);
        return -1;
    }
    for (int k = 1; k < argc; k += 2) {
        const char *v = k + 1 < argc ? argv[k + 1] : NULL;
        int ok = v != NULL;
        if (ok && strcmp(argv[k], "--sizes") == 0) {
            ok = (*nsizes = parse_sizes(v, sizes)) > 0;
        } else if (ok && strcmp(argv[k], "--qr-path") == 0) {
            ok = eig_cuda_qr_path_parse(v, &tuning.qr_path) == EIG_OK;
        } else if (ok && strcmp(argv[k], "--back-path") == 0) {
            ok = eig_cuda_back_path_parse(v, &tuning.back_path) == EIG_OK;
        } else if (ok && strcmp(argv[k], "--tridiag-path") == 0) {
            ok = eig_cuda_tridiag_path_parse(v, &tuning.tridiag_path) == EIG_OK;
        } else if (ok && strcmp(argv[k], "--qr-log-cap") == 0) {
            char *end;
            long x = strtol(v, &end, 10);
            ok = *end == '\0' && x > 0 && x <= EIG_CUDA_TUNING_MAX;
            tuning.qr_log_cap = ok ? (int)x : 0;
        } else if (ok && strcmp(argv[k], "--qr-group-min") == 0) {
            char *end;
            long x = strtol(v, &end, 10);
            ok = *end == '\0' && x > 0 && x <= EIG_CUDA_TUNING_MAX;
            tuning.qr_group_min = ok ? (int)x : 0;
        } else if (ok && strcmp(argv[k], "--qr-bulges") == 0) {
            char *end;
            long x = strtol(v, &end, 10);
            ok = *end == '\0' && (x == 8 || x == 16 || x == 32);
            tuning.qr_bulges = ok ? (int)x : 0;
        } else {
            ok = 0;
        }
        if (!ok) {
            printf("usage: %s [--sizes 1,5,64] [--qr-path auto|fused|logged|wavefront]\n"
                   "       [--qr-log-cap N] [--qr-group-min N] [--qr-bulges 8|16|32]\n"
                   "       [--back-path auto|slabs|gemm]\n"
                   "       [--tridiag-path auto|sweep|panel]\n",
                   argv[0]);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int sizes[32], nsizes = 0;
    if (parse_args(argc, argv, sizes, &nsizes) != 0)
        return 1;
    if (eig_cuda_device_count() == 0) {
        /* without a GPU the backend must refuse cleanly, not crash */
        eig_plan_params p = eig_plan_params_default();
        p.n = 8;
        p.backend = EIG_BACKEND_CUDA;
        eig_plan *plan = NULL;
        eig_error e = eig_plan_create(&plan, &p);
        if (e != EIG_ENODEVICE || plan != NULL) {
            printf("FAIL: eig_plan_create(cuda) without a device returned %s\n", eig_strerror(e));
            return 1;
        }
        printf("SKIP: no usable CUDA device (no driver or no GPU): the gpu tests need one\n");
        return SKIP_CODE;
    }
    if (nsizes == 0)
        for (size_t i = 0; i < sizeof(default_sizes) / sizeof(default_sizes[0]); ++i)
            sizes[nsizes++] = default_sizes[i];
    printf("qr path %s, log cap %d, group min %d, bulges %d (0: the plan's), back path %s, "
           "tridiag path %s\n",
           eig_cuda_qr_path_name(tuning.qr_path), tuning.qr_log_cap, tuning.qr_group_min,
           tuning.qr_bulges, eig_cuda_back_path_name(tuning.back_path),
           eig_cuda_tridiag_path_name(tuning.tridiag_path));
    for (int i = 0; i < nsizes; ++i) {
        test_size(sizes[i], EIG_COMPLEX_DOUBLE);
        test_size(sizes[i], EIG_COMPLEX_FLOAT);
    }
    return test_check_report("test_gpu_eig");
}
