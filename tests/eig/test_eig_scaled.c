/*
 * test_eig_scaled.c - the cpu backend on LAPACK's near-overflow and
 * near-underflow matrix types (6, 7, 11, 12, 14, 15, 17, 18) over many seeds
 * and up to n = 512, against LAPACKE zheevd in double.
 *
 *   test_eig_scaled [MAX_N]
 *
 * Why a test of its own: the solver flushes subnormals while it works, which
 * is only harmless if the matrix was first scaled to max|a_ij| ~ 1. A matrix
 * left near LAPACK's rmin (~1e-146) passed at one seed and failed at others
 * (eigenvalue ratios up to 8e3), so one seed per type is not enough.
 * Per matrix: residual, orthogonality, eigenvalues vs zheevd (threshold 60).
 */
#include <stdio.h>
#include <stdlib.h>

#include "eig.h"
#include "eig_test_util.h"
#include "workload.h"

static const int scaled_types[] = {
    WORKLOAD_DIAG_ARITH_OVERFLOW,     WORKLOAD_DIAG_ARITH_UNDERFLOW,
    WORKLOAD_UNITARY_ARITH_OVERFLOW,  WORKLOAD_UNITARY_ARITH_UNDERFLOW,
    WORKLOAD_RANDOM_OVERFLOW,         WORKLOAD_RANDOM_UNDERFLOW,
    WORKLOAD_BAND_OVERFLOW,           WORKLOAD_BAND_UNDERFLOW};

static int failures;

static void check(const char *what, double ratio, int type, int n, eig_precision prec,
                  uint64_t seed)
{
    if (ratio <= WORKLOAD_RATIO_THRESHOLD)
        return; /* NaN falls through */
    failures++;
    printf("FAIL %s ratio %.4g > %.0f: type %d (%s) n %d %s seed %llu\n", what, ratio,
           WORKLOAD_RATIO_THRESHOLD, type, workload_type_name(type), n,
           prec == EIG_COMPLEX_DOUBLE ? "c128" : "c64", (unsigned long long)seed);
}

static void run(int n, int seeds, eig_precision prec)
{
    size_t nn = (size_t)n * n, es = test_elem_size(prec), rs = test_real_size(prec);
    void *a = malloc(nn * es), *z = malloc(nn * es), *w = malloc((size_t)n * rs);
    double *oracle = malloc((size_t)n * sizeof(double));
    eig_plan_params p = test_plan_params(n, 1, prec, EIG_BACKEND_CPU, 1);
    eig_plan *plan = NULL;
    if (!a || !z || !w || !oracle || eig_plan_create(&plan, &p) != EIG_OK) {
        printf("FAIL setup at n %d\n", n);
        failures++;
        goto done;
    }
    for (size_t t = 0; t < sizeof scaled_types / sizeof *scaled_types; t++) {
        int type = scaled_types[t];
        for (int s = 0; s < seeds; s++) {
            uint64_t seed = 1000 + 7 * (uint64_t)s;
            int info = 0;
            if (workload_generate(type, n, prec, seed, a, NULL) < 0 ||
                test_oracle_values(n, prec, a, oracle) != 0) {
                printf("FAIL generator/oracle type %d n %d\n", type, n);
                failures++;
                continue;
            }
            eig_error e = eig_plan_execute(plan, a, w, z, &info);
            if (e != EIG_OK || info != 0) {
                printf("FAIL execute %s info %d: type %d n %d\n", eig_strerror(e), info, type, n);
                failures++;
                continue;
            }
            check("residual", workload_residual_ratio(n, prec, a, w, z), type, n, prec, seed);
            check("orthogonality", workload_orthogonality_ratio(n, prec, z), type, n, prec, seed);
            check("eigenvalues-vs-zheevd", workload_eigenvalue_ratio(n, prec, a, w, oracle), type,
                  n, prec, seed);
        }
    }
done:
    eig_plan_destroy(&plan);
    free(a);
    free(z);
    free(w);
    free(oracle);
}

int main(int argc, char **argv)
{
    int max_n = argc > 1 ? atoi(argv[1]) : 512;
    for (int prec = 0; prec < 2; prec++) {
        eig_precision pr = prec ? EIG_COMPLEX_DOUBLE : EIG_COMPLEX_FLOAT;
        run(20, 24, pr);
        run(64, 24, pr);
        if (max_n >= 512)
            run(512, 2, pr);
    }
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("all scaled-type checks passed\n");
    return 0;
}
