/*
 * test_eig_api.c - the contract of eig.h outside the numbers: argument
 * errors, error strings, backend names, AUTO resolution, the cuda backend
 * when it is not built, invalid matrices inside a batch (NaN, Inf, non-real
 * diagonal) on every host backend and precision, thread counts, and the
 * device-only parameters on host backends (refused as eig.h documents).
 */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "eig.h"
#include "eig_test_util.h"
#include "workload.h"
#include "test_check.h"

static void test_strerror(void)
{
    for (int e = EIG_OK; e <= EIG_EBACKEND; e++) {
        const char *s = eig_strerror((eig_error)e);
        CHECK(s != NULL && s[0] != '\0', "eig_strerror(%d) empty", e);
        for (int f = EIG_OK; f < e; f++)
            CHECK(strcmp(s, eig_strerror((eig_error)f)) != 0, "codes %d and %d share a message",
                  e, f);
    }
    CHECK(eig_strerror((eig_error)99) != NULL, "eig_strerror(99) NULL");
}

/* For each value v of type from 0 to last: name_function(v) is names[v]
 * and parse_function(names[v]) gives v back; what names the concept. */
#define CHECK_NAMES_ROUND_TRIP(type, names, last, name_function, parse_function, what)                  \
    for (int v = 0; v <= (int)(last); v++) {                                                         \
        CHECK(strcmp(name_function((type)v), (names)[v]) == 0, "%s name of %d", what, v);            \
        type parsed_ = (type)0;                                                                      \
        CHECK(parse_function((names)[v], &parsed_) == EIG_OK && parsed_ == (type)v, "parse %s %s", what, \
              (names)[v]);                                                                           \
    }

static void test_backend_names(void)
{
    const char *names[] = {"auto", "cpu", "lapack", "cuda"};
    CHECK_NAMES_ROUND_TRIP(eig_backend, names, EIG_BACKEND_CUDA, eig_backend_name, eig_backend_parse, "backend");
    eig_backend parsed;
    CHECK(eig_backend_parse("LAPACK", &parsed) == EIG_OK && parsed == EIG_BACKEND_LAPACK,
          "case-insensitive parse");
    CHECK(eig_backend_parse("gpu", &parsed) == EIG_EINVAL, "unknown name accepted");
    CHECK(eig_backend_parse("", &parsed) == EIG_EINVAL, "empty name accepted");
    CHECK(eig_backend_parse(NULL, &parsed) == EIG_EINVAL, "NULL name accepted");
    CHECK(eig_backend_parse("cpu", NULL) == EIG_EINVAL, "NULL out accepted");
    CHECK(eig_backend_name((eig_backend)17) != NULL, "name of a bad enum is NULL");

    const char *paths[] = {"auto", "fused", "logged", "wavefront"};
    CHECK_NAMES_ROUND_TRIP(eig_cuda_qr_path, paths, EIG_CUDA_QR_PATH_WAVEFRONT, eig_cuda_qr_path_name,
                           eig_cuda_qr_path_parse, "qr path");
    eig_cuda_qr_path path;
    CHECK(eig_cuda_qr_path_parse("Logged", &path) == EIG_OK && path == EIG_CUDA_QR_PATH_LOGGED,
          "case-insensitive qr path");
    CHECK(eig_cuda_qr_path_parse("log", &path) == EIG_EINVAL, "unknown qr path accepted");
    CHECK(eig_cuda_qr_path_parse(NULL, &path) == EIG_EINVAL, "NULL qr path accepted");
    CHECK(strcmp(eig_cuda_qr_path_name((eig_cuda_qr_path)4), "unknown") == 0, "bad qr path name");

    const char *backs[] = {"auto", "slabs", "gemm"};
    CHECK_NAMES_ROUND_TRIP(eig_cuda_back_path, backs, EIG_CUDA_BACK_PATH_GEMM,
                           eig_cuda_back_path_name, eig_cuda_back_path_parse, "back path");
    eig_cuda_back_path back;
    CHECK(eig_cuda_back_path_parse("GEMM", &back) == EIG_OK && back == EIG_CUDA_BACK_PATH_GEMM,
          "case-insensitive back path");
    CHECK(eig_cuda_back_path_parse("blas", &back) == EIG_EINVAL, "unknown back path accepted");
    CHECK(strcmp(eig_cuda_back_path_name((eig_cuda_back_path)3), "unknown") == 0,
          "bad back path name");

    const char *tridiags[] = {"auto", "sweep", "panel"};
    CHECK_NAMES_ROUND_TRIP(eig_cuda_tridiag_path, tridiags, EIG_CUDA_TRIDIAG_PATH_PANEL,
                           eig_cuda_tridiag_path_name, eig_cuda_tridiag_path_parse,
                           "tridiag path");
    eig_cuda_tridiag_path tridiag;
    CHECK(eig_cuda_tridiag_path_parse("Panel", &tridiag) == EIG_OK &&
              tridiag == EIG_CUDA_TRIDIAG_PATH_PANEL,
          "case-insensitive tridiag path");
    CHECK(eig_cuda_tridiag_path_parse("blocked", &tridiag) == EIG_EINVAL,
          "unknown tridiag path accepted");
    CHECK(strcmp(eig_cuda_tridiag_path_name((eig_cuda_tridiag_path)3), "unknown") == 0,
          "bad tridiag path name");
}

static eig_error create_with(eig_plan_params p, eig_plan **plan)
{
    *plan = (eig_plan *)&test_check_failures; /* must be reset to NULL on failure */
    return eig_plan_create(plan, &p);
}

static void test_plan_errors(void)
{
    eig_plan_params d = eig_plan_params_default();
    CHECK(d.n == 1 && d.batch == 1 && d.precision == EIG_COMPLEX_DOUBLE &&
              d.job == EIG_JOB_VECTORS && d.storage == EIG_STORAGE_FULL && d.uplo == EIG_LOWER &&
              d.backend == EIG_BACKEND_AUTO && d.threads == 0 && d.device == 0 &&
              d.device_only == 0 && d.cuda.qr_path == EIG_CUDA_QR_PATH_AUTO &&
              d.cuda.qr_log_cap == 0 && d.cuda.qr_group_min == 0 && d.cuda.qr_bulges == 0 &&
              d.cuda.back_path == EIG_CUDA_BACK_PATH_AUTO &&
              d.cuda.tridiag_path == EIG_CUDA_TRIDIAG_PATH_AUTO,
          "defaults");
    eig_plan *plan;
    CHECK(eig_plan_create(NULL, &d) == EIG_EINVAL, "NULL out");
    CHECK(eig_plan_create(&plan, NULL) == EIG_EINVAL && plan == NULL, "NULL params");

    struct {
        const char *what;
        eig_plan_params p;
    } bad[21];
    int nbad = 0;
    for (int k = 0; k < 21; k++)
        bad[k].p = d;
    bad[nbad].what = "n = 0", bad[nbad++].p.n = 0;
    bad[nbad].what = "n > EIG_N_MAX", bad[nbad++].p.n = EIG_N_MAX + 1;
    bad[nbad].what = "batch = 0", bad[nbad++].p.batch = 0;
    bad[nbad].what = "batch < 0", bad[nbad++].p.batch = -3;
    bad[nbad].what = "precision", bad[nbad++].p.precision = (eig_precision)5;
    bad[nbad].what = "job", bad[nbad++].p.job = (eig_job)7;
    bad[nbad].what = "storage", bad[nbad++].p.storage = (eig_storage)2;
    bad[nbad].what = "uplo", bad[nbad++].p.uplo = (eig_uplo)-1;
    bad[nbad].what = "backend", bad[nbad++].p.backend = (eig_backend)9;
    bad[nbad].what = "threads < 0", bad[nbad++].p.threads = -1;
    bad[nbad].what = "device < 0", bad[nbad++].p.device = -1;
    bad[nbad].what = "device_only = 2", bad[nbad++].p.device_only = 2;
    bad[nbad].what = "cuda.qr_path", bad[nbad++].p.cuda.qr_path = (eig_cuda_qr_path)4;
    bad[nbad].what = "cuda.qr_log_cap < 0", bad[nbad++].p.cuda.qr_log_cap = -1;
    bad[nbad].what = "cuda.qr_log_cap > max",
    bad[nbad++].p.cuda.qr_log_cap = EIG_CUDA_TUNING_MAX + 1;
    bad[nbad].what = "cuda.qr_group_min < 0", bad[nbad++].p.cuda.qr_group_min = -2;
    bad[nbad].what = "cuda.qr_bulges = 12", bad[nbad++].p.cuda.qr_bulges = 12;
    bad[nbad].what = "cuda.qr_bulges = 64", bad[nbad++].p.cuda.qr_bulges = 64;
    bad[nbad].what = "cuda.back_path", bad[nbad++].p.cuda.back_path = (eig_cuda_back_path)3;
    bad[nbad].what = "cuda.tridiag_path",
    bad[nbad++].p.cuda.tridiag_path = (eig_cuda_tridiag_path)3;
    for (int k = 0; k < nbad; k++) {
        eig_error e = create_with(bad[k].p, &plan);
        CHECK(e == EIG_EINVAL && plan == NULL, "%s: got %s", bad[k].what, eig_strerror(e));
    }

    /* cuda: refused cleanly without it; with it, works or names the device problem */
    eig_plan_params c = d;
    c.backend = EIG_BACKEND_CUDA;
    eig_error e = create_with(c, &plan);
    if (!eig_cuda_built()) {
        CHECK(e == EIG_ENOCUDA && plan == NULL, "cuda without CUDA: %s", eig_strerror(e));
        CHECK(eig_cuda_device_count() == 0, "device count without CUDA");
    } else {
        CHECK(e == EIG_OK || e == EIG_ENODEVICE || e == EIG_EDEVICE, "cuda plan: %s",
              eig_strerror(e));
    }
    eig_plan_destroy(&plan);

    /* AUTO resolves to a concrete backend */
    e = create_with(d, &plan);
    CHECK(e == EIG_OK, "auto plan: %s", eig_strerror(e));
    if (e == EIG_OK) {
        const eig_plan_params *got = eig_plan_get_params(plan);
        CHECK(got->backend != EIG_BACKEND_AUTO, "AUTO not resolved");
        if (!eig_cuda_built() || eig_cuda_device_count() == 0)
            CHECK(got->backend == EIG_BACKEND_CPU, "AUTO without GPU is %s",
                  eig_backend_name(got->backend));
        double complex a = 2.0;
        double w, wbad;
        double complex z;
        int info;
        CHECK(eig_plan_execute(NULL, &a, &w, &z, &info) == EIG_EINVAL, "NULL plan");
        CHECK(eig_plan_execute(plan, NULL, &w, &z, &info) == EIG_EINVAL, "NULL a");
        CHECK(eig_plan_execute(plan, &a, NULL, &z, &info) == EIG_EINVAL, "NULL w");
        CHECK(eig_plan_execute(plan, &a, &w, NULL, &info) == EIG_EINVAL, "NULL z, vectors");
        CHECK(eig_plan_execute(plan, &a, &w, &z, NULL) == EIG_EINVAL, "NULL info");
        e = eig_plan_execute(plan, &a, &w, &z, &info);
        CHECK(e == EIG_OK && info == 0 && w == 2.0 && cabs(z) == 1.0, "1x1: %s w %g",
              eig_strerror(e), w);
        (void)wbad;
        if (got->backend != EIG_BACKEND_CUDA)
            CHECK(eig_plan_execute_device(plan, &a, &w, &z, &info, NULL) == EIG_EUNSUPPORTED,
                  "execute_device on a host backend");
    }
    eig_plan_destroy(&plan);
    CHECK(plan == NULL, "destroy leaves the pointer");
    eig_plan_destroy(&plan);
    eig_plan_destroy(NULL);
    CHECK(eig_plan_get_params(NULL) == NULL, "get_params(NULL)");
    CHECK(eig_plan_execute_device(NULL, NULL, NULL, NULL, NULL, NULL) == EIG_EINVAL,
          "execute_device(NULL)");

    /* values-only accepts z == NULL */
    eig_plan_params v = d;
    v.job = EIG_JOB_VALUES;
    v.backend = EIG_BACKEND_CPU;
    e = create_with(v, &plan);
    if (e == EIG_OK) {
        double complex a = -1.5;
        double w;
        int info;
        e = eig_plan_execute(plan, &a, &w, NULL, &info);
        CHECK(e == EIG_OK && w == -1.5, "values-only 1x1: %s", eig_strerror(e));
    }
    eig_plan_destroy(&plan);
}

/* A batch of 6 matrices of order 20: 1 has a NaN off the diagonal, 2 a
 * non-real diagonal, 3 an Inf on the diagonal, 4 a non-real diagonal below
 * the threshold (accepted); the others are plain. Full storage also carries
 * NaN in the unreferenced triangle of every matrix. */
static void test_bad_matrices(eig_backend backend, eig_precision prec, eig_storage storage,
                              eig_uplo uplo, eig_job job)
{
    enum { N = 20, BATCH = 6 };
    const int expected[BATCH] = {0, EIG_INFO_NONFINITE, EIG_INFO_NONREAL_DIAGONAL,
                                 EIG_INFO_NONFINITE, 0, 0};
    size_t nn = (size_t)N * N, es = test_elem_size(prec), rs = test_real_size(prec);
    unsigned char *full = malloc(BATCH * nn * es), *stored = malloc(BATCH * nn * es);
    unsigned char *w = malloc(BATCH * N * rs), *z = malloc(BATCH * nn * es);
    int info[BATCH];
    if (!full || !stored || !w || !z) {
        CHECK(0, "out of memory");
        return;
    }
    workload_random_batch(N, BATCH, prec, 77, full);
    double ulp = prec == EIG_COMPLEX_DOUBLE ? DBL_EPSILON : FLT_EPSILON;
    /* referenced in both lower and upper: a diagonal element, or (i,j) and (j,i) */
    test_set(prec, full + 1 * nn * es, 5 + 7 * N, NAN);
    test_set(prec, full + 1 * nn * es, 7 + 5 * N, NAN);
    test_set(prec, full + 2 * nn * es, 4 + 4 * N, 0.3 + 1e-3 * I);
    test_set(prec, full + 3 * nn * es, 9 + 9 * N, INFINITY);
    test_set(prec, full + 4 * nn * es, 3 + 3 * N, 0.3 + 0.05 * N * ulp * I);
    for (int b = 0; b < BATCH; b++)
        test_to_storage(N, prec, full + b * nn * es, storage, uplo,
                        stored + b * (storage == EIG_STORAGE_FULL ? nn : nn / 2 + N / 2) * es);

    eig_plan_params p = test_plan_params(N, BATCH, prec, backend, 2);
    p.storage = storage;
    p.uplo = uplo;
    p.job = job;
    eig_plan *plan;
    eig_error e = eig_plan_create(&plan, &p);
    CHECK(e == EIG_OK, "create: %s", eig_strerror(e));
    if (e == EIG_OK) {
        e = eig_plan_execute(plan, stored, w, job == EIG_JOB_VECTORS ? z : NULL, info);
        const char *label = eig_backend_name(backend);
        const char *pl = prec == EIG_COMPLEX_DOUBLE ? "c128" : "c64";
        const char *sl = storage == EIG_STORAGE_FULL ? "full" : "packed";
        const char *ul = uplo == EIG_LOWER ? "lower" : "upper";
        CHECK(e == EIG_EMATRIX, "bad batch returns %s (%s %s %s %s)", eig_strerror(e), label, pl,
              sl, ul);
        for (int b = 0; b < BATCH; b++) {
            CHECK(info[b] == expected[b], "matrix %d info %d, expected %d (%s %s %s %s)", b,
                  info[b], expected[b], label, pl, sl, ul);
            double wk;
            test_widen_real(1, prec, w + b * N * rs, &wk);
            if (expected[b] != 0) {
                CHECK(isnan(wk), "matrix %d: w not NaN", b);
                if (job == EIG_JOB_VECTORS)
                    CHECK(isnan(creal(test_get(prec, z + b * nn * es, 0))) &&
                              isnan(cimag(test_get(prec, z + b * nn * es, nn - 1))),
                          "matrix %d: z not NaN", b);
            } else if (job == EIG_JOB_VECTORS) {
                double r = workload_residual_ratio(N, prec, full + b * nn * es, w + b * N * rs,
                                                   z + b * nn * es);
                double o = workload_orthogonality_ratio(N, prec, z + b * nn * es);
                CHECK(r <= WORKLOAD_RATIO_THRESHOLD && o <= WORKLOAD_RATIO_THRESHOLD,
                      "good matrix %d beside bad ones: residual %.3g orthogonality %.3g "
                      "(%s %s %s %s)",
                      b, r, o, label, pl, sl, ul);
            } else {
                CHECK(!isnan(wk), "good matrix %d: NaN eigenvalue", b);
            }
        }
    }
    eig_plan_destroy(&plan);
    free(full);
    free(stored);
    free(w);
    free(z);
}

/* Host backends have no device entry: device_only is refused at create with
 * EIG_EUNSUPPORTED, execute_device_layout returns EIG_EUNSUPPORTED for every
 * layout (EIG_EINVAL for a bad layout or a NULL plan, before the backend). */
static void test_device_only(eig_backend backend)
{
    const char *name = eig_backend_name(backend);
    eig_plan_params p = eig_plan_params_default();
    p.n = 4;
    p.batch = 2;
    p.backend = backend;
    p.device_only = 1;
    eig_plan *plan;
    eig_error e = create_with(p, &plan);
    CHECK(e == EIG_EUNSUPPORTED && plan == NULL, "%s device_only: %s", name, eig_strerror(e));

    p.device_only = 0;
    e = create_with(p, &plan);
    CHECK(e == EIG_OK, "%s plan: %s", name, eig_strerror(e));
    double complex a[2 * 16] = {0};
    double w[2 * 4];
    double complex z[2 * 16];
    int info[2];
    for (int s = EIG_STORAGE_FULL; s <= EIG_STORAGE_PACKED && e == EIG_OK; s++)
        for (int u = EIG_LOWER; u <= EIG_UPPER; u++) {
            eig_error got = eig_plan_execute_device_layout(plan, (eig_storage)s, (eig_uplo)u, a, w,
                                                           z, info, NULL);
            CHECK(got == EIG_EUNSUPPORTED, "%s execute_device_layout storage %d uplo %d: %s", name,
                  s, u, eig_strerror(got));
        }
    if (e == EIG_OK) {
        CHECK(eig_plan_execute_device_layout(plan, (eig_storage)2, EIG_LOWER, a, w, z, info,
                                             NULL) == EIG_EINVAL,
              "%s execute_device_layout with a bad storage", name);
        CHECK(eig_plan_execute_device_layout(plan, EIG_STORAGE_FULL, (eig_uplo)2, a, w, z, info,
                                             NULL) == EIG_EINVAL,
              "%s execute_device_layout with a bad uplo", name);
    }
    eig_plan_destroy(&plan);
    CHECK(eig_plan_execute_device_layout(NULL, EIG_STORAGE_FULL, EIG_LOWER, a, w, z, info, NULL) ==
              EIG_EINVAL,
          "execute_device_layout(NULL plan)");
}

/* The same batch on 1, 3 and all threads gives the same eigenvalues. */
static void test_threads(eig_backend backend)
{
    enum { N = 24, BATCH = 7 };
    double complex *a = malloc(BATCH * N * N * sizeof(*a));
    double w1[BATCH * N], wt[BATCH * N];
    double complex *z = malloc(BATCH * N * N * sizeof(*z));
    int info[BATCH];
    if (a == NULL || z == NULL) {
        CHECK(0, "out of memory");
        free(a);
        free(z);
        return;
    }
    workload_radar_batch(N, BATCH, EIG_COMPLEX_DOUBLE, 5, a);
    const int threads[] = {1, 3, 0};
    for (int t = 0; t < 3; t++) {
        eig_plan_params p = eig_plan_params_default();
        p.n = N;
        p.batch = BATCH;
        p.backend = backend;
        p.threads = threads[t];
        eig_plan *plan;
        eig_error e = eig_plan_create(&plan, &p);
        if (e == EIG_OK)
            e = eig_plan_execute(plan, a, t == 0 ? w1 : wt, z, info);
        CHECK(e == EIG_OK, "threads %d: %s", threads[t], eig_strerror(e));
        eig_plan_destroy(&plan);
        if (t > 0 && e == EIG_OK)
            for (int b = 0; b < BATCH; b++) {
                double r = workload_eigenvalue_ratio(N, EIG_COMPLEX_DOUBLE, a + b * N * N,
                                                     wt + b * N, w1 + b * N);
                CHECK(r <= WORKLOAD_RATIO_THRESHOLD, "threads %d matrix %d: ratio %.3g",
                      threads[t], b, r);
            }
    }
    free(a);
    free(z);
}

int main(void)
{
    test_strerror();
    test_backend_names();
    test_plan_errors();
    const eig_backend backends[] = {EIG_BACKEND_CPU, EIG_BACKEND_LAPACK};
    for (int b = 0; b < 2; b++) {
        for (int prec = EIG_COMPLEX_FLOAT; prec <= EIG_COMPLEX_DOUBLE; prec++)
            for (int job = EIG_JOB_VALUES; job <= EIG_JOB_VECTORS; job++) {
                test_bad_matrices(backends[b], (eig_precision)prec, EIG_STORAGE_FULL, EIG_LOWER,
                                  (eig_job)job);
                test_bad_matrices(backends[b], (eig_precision)prec, EIG_STORAGE_FULL, EIG_UPPER,
                                  (eig_job)job);
                test_bad_matrices(backends[b], (eig_precision)prec, EIG_STORAGE_PACKED,
                                  EIG_LOWER, (eig_job)job);
                test_bad_matrices(backends[b], (eig_precision)prec, EIG_STORAGE_PACKED,
                                  EIG_UPPER, (eig_job)job);
            }
        test_threads(backends[b]);
        test_device_only(backends[b]);
    }
    return test_check_report("test_eig_api");
}
