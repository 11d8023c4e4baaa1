/*
 * test_eig_accuracy.c - one backend and precision against the LAPACK test
 * matrices 1-22: every storage (full/packed, lower/upper), both jobs.
 *
 *   test_eig_accuracy BACKEND PRECISION [MAX_N]     (cpu|lapack, c64|c128)
 *
 * Per matrix and variant (threshold 60, LAPACK's sep.in):
 *   residual |A - Z D Z^H|_1 / (|A|_1 n ulp), orthogonality |I - Z^H Z|_1 / (n ulp);
 *   eigenvalues vs LAPACKE zheevd in double on the same matrix, and vs the
 *   exact spectrum when the generator knows it: max|w - w_ref| / (n ulp |A|_1);
 *   values-only eigenvalues vs the vectors job's, to the same bound.
 * Sizes 1..128 for every type; 256 and 512 for a few types and two storages
 * (the suite has to stay fast on 2 cores and under sanitizers; MAX_N cuts it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig.h"
#include "eig_test_util.h"
#include "workload.h"

static const int sizes[] = {1, 2, 3, 5, 20, 64, 128, 256, 512};

typedef struct variant {
    eig_storage storage;
    eig_uplo uplo;
} variant;

static const variant variants[] = {{EIG_STORAGE_FULL, EIG_LOWER},
                                   {EIG_STORAGE_FULL, EIG_UPPER},
                                   {EIG_STORAGE_PACKED, EIG_LOWER},
                                   {EIG_STORAGE_PACKED, EIG_UPPER}};

static int failures, checks;

static void check_ratio(const char *what, double ratio, int type, int n, const char *prec,
                        eig_backend backend, const variant *v)
{
    checks++;
    if (ratio <= WORKLOAD_RATIO_THRESHOLD)
        return; /* NaN falls through: a NaN ratio fails */
    failures++;
    printf("FAIL %s ratio %.4g > %.0f: type %d (%s) n %d %s backend %s %s %s\n", what, ratio,
           WORKLOAD_RATIO_THRESHOLD, type, workload_type_name(type), n, prec,
           eig_backend_name(backend), v->storage == EIG_STORAGE_FULL ? "full" : "packed",
           v->uplo == EIG_LOWER ? "lower" : "upper");
}

/* Runs one plan on one matrix; returns the eig_error, info through *info. */
static eig_error solve(int n, eig_precision prec, eig_backend backend, const variant *v,
                       eig_job job, const void *a, void *w, void *z, int *info)
{
    eig_plan_params p = eig_plan_params_default();
    p.n = n;
    p.precision = prec;
    p.backend = backend;
    p.storage = v->storage;
    p.uplo = v->uplo;
    p.job = job;
    p.threads = 1;
    eig_plan *plan;
    eig_error e = eig_plan_create(&plan, &p);
    if (e != EIG_OK)
        return e;
    e = eig_plan_execute(plan, a, w, z, info);
    eig_plan_destroy(&plan);
    return e;
}

static int wanted(int type, int n, int vi)
{
    if (n <= 128)
        return 1;
    /* big sizes: a dense random, a graded and a band type, the radar type */
    int big_type = type == WORKLOAD_UNITARY_ARITHMETIC || type == WORKLOAD_RANDOM_HERMITIAN ||
                   type == WORKLOAD_BAND || type == WORKLOAD_RADAR_SOURCES;
    if (n == 512)
        big_type = type == WORKLOAD_RANDOM_HERMITIAN || type == WORKLOAD_RADAR_SOURCES;
    return big_type && (vi == 0 || vi == 3);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s cpu|lapack c64|c128 [max_n]\n", argv[0]);
        return 2;
    }
    eig_backend backend;
    if (eig_backend_parse(argv[1], &backend) != EIG_OK) {
        fprintf(stderr, "unknown backend %s\n", argv[1]);
        return 2;
    }
    eig_precision prec = strcmp(argv[2], "c64") == 0 ? EIG_COMPLEX_FLOAT : EIG_COMPLEX_DOUBLE;
    int max_n = argc > 3 ? atoi(argv[3]) : 512;

    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int n = sizes[si];
        if (n > max_n)
            continue;
        size_t nn = (size_t)n * n, es = test_elem_size(prec), rs = test_real_size(prec);
        void *full = malloc(nn * es), *stored = malloc(nn * es), *z = malloc(nn * es);
        void *w = malloc(n * rs), *w_values = malloc(n * rs);
        double *exact = malloc(n * sizeof(double)), *oracle = malloc(n * sizeof(double));
        double *w_wide = malloc(n * sizeof(double));
        if (!full || !stored || !z || !w || !w_values || !exact || !oracle || !w_wide) {
            printf("FAIL out of memory at n %d\n", n);
            return 1;
        }
        for (int type = WORKLOAD_TYPE_MIN; type <= WORKLOAD_TYPE_MAX; type++) {
            int known = workload_generate(type, n, prec, 2024 + (uint64_t)type, full, exact);
            if (known < 0 || test_oracle_values(n, prec, full, oracle) != 0) {
                printf("FAIL generator/oracle type %d n %d\n", type, n);
                failures++;
                continue;
            }
            for (int vi = 0; vi < 4; vi++) {
                if (!wanted(type, n, vi))
                    continue;
                const variant *v = &variants[vi];
                test_to_storage(n, prec, full, v->storage, v->uplo, stored);
                int info = 0;
                eig_error e = solve(n, prec, backend, v, EIG_JOB_VECTORS, stored, w, z, &info);
                if (e != EIG_OK || info != 0) {
                    printf("FAIL execute %s info %d: type %d (%s) n %d %s backend %s v%d\n",
                           eig_strerror(e), info, type, workload_type_name(type), n, argv[2],
                           argv[1], vi);
                    failures++;
                    continue;
                }
                check_ratio("residual", workload_residual_ratio(n, prec, full, w, z), type, n,
                            argv[2], backend, v);
                check_ratio("orthogonality", workload_orthogonality_ratio(n, prec, z), type, n,
                            argv[2], backend, v);
                check_ratio("eigenvalues-vs-zheevd",
                            workload_eigenvalue_ratio(n, prec, full, w, oracle), type, n,
                            argv[2], backend, v);
                if (known)
                    check_ratio("eigenvalues-vs-exact",
                                workload_eigenvalue_ratio(n, prec, full, w, exact), type, n,
                                argv[2], backend, v);
                test_widen_real(n, prec, w, w_wide);
                for (int k = 1; k < n; k++)
                    if (!(w_wide[k - 1] <= w_wide[k])) {
                        printf("FAIL not ascending at %d: type %d n %d %s %s v%d\n", k, type, n,
                               argv[2], argv[1], vi);
                        failures++;
                        break;
                    }

                e = solve(n, prec, backend, v, EIG_JOB_VALUES, stored, w_values, NULL, &info);
                if (e != EIG_OK || info != 0) {
                    printf("FAIL values-only %s info %d: type %d n %d %s %s v%d\n",
                           eig_strerror(e), info, type, n, argv[2], argv[1], vi);
                    failures++;
                    continue;
                }
                check_ratio("values-only-vs-vectors",
                            workload_eigenvalue_ratio(n, prec, full, w_values, w_wide), type, n,
                            argv[2], backend, v);
            }
        }
        free(full);
        free(stored);
        free(z);
        free(w);
        free(w_values);
        free(exact);
        free(oracle);
        free(w_wide);
    }
    printf("%s %s: %d checks, %d failures\n", argv[1], argv[2], checks, failures);
    return failures == 0 ? 0 : 1;
}
