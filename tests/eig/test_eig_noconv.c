/*
 * test_eig_noconv.c - the cpu backend's non-convergence path. This binary
 * links a test-only build of eig_cpu.c with EIG_CPU_QR_SWEEPS=0
 * (tests/eig/CMakeLists.txt): with no QR sweeps allowed, a matrix that needs
 * sweeps must come back with info > 0 (the number of unconverged
 * off-diagonals), NaN values and vectors, and execute must return
 * EIG_EMATRIX, while a diagonal matrix in the same batch (which needs no
 * sweep) is still solved exactly. Exact spectra of the diagonal matrix are
 * the oracle. Built against the library's own eig_cpu.c the random matrices
 * converge and the test fails. (With the default limit the same matrices
 * are covered by the accuracy tests.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "eig.h"
#include "eig_test_util.h"
#include "workload.h"
#include "test_check.h"

enum { N = 20, BATCH = 3 };

int main(void)
{
    static double a[BATCH * N * N * 2], w[BATCH * N], z[BATCH * N * N * 2];
    double exact[N];
    int info[BATCH];
    /* matrices 0 and 2: random Hermitian (need sweeps); 1: diagonal */
    if (workload_generate(WORKLOAD_RANDOM_HERMITIAN, N, EIG_COMPLEX_DOUBLE, 5, a, NULL) < 0 ||
        workload_generate(WORKLOAD_DIAG_ARITHMETIC, N, EIG_COMPLEX_DOUBLE, 6, a + 2 * N * N,
                          exact) != 1 ||
        workload_generate(WORKLOAD_RANDOM_HERMITIAN, N, EIG_COMPLEX_DOUBLE, 7, a + 4 * N * N,
                          NULL) < 0) {
        printf("FAIL: workload generation\n");
        return 1;
    }
    eig_plan_params p = test_plan_params(N, BATCH, EIG_COMPLEX_DOUBLE, EIG_BACKEND_CPU, 1);
    eig_plan *plan = NULL;
    if (eig_plan_create(&plan, &p) != EIG_OK) {
        printf("FAIL: eig_plan_create\n");
        return 1;
    }

    eig_error e = eig_plan_execute(plan, a, w, z, info);
    CHECK(e == EIG_EMATRIX, "no sweeps allowed: execute returned %s, expected EIG_EMATRIX",
          eig_strerror(e));
    for (int b = 0; b < BATCH; b += 2) {
        CHECK(info[b] > 0 && info[b] < N, "matrix %d: info %d, expected unconverged count in 1..%d",
              b, info[b], N - 1);
        int all_nan = 1;
        for (int i = 0; i < N; i++)
            all_nan &= isnan(w[b * N + i]);
        for (int i = 0; i < 2 * N * N; i++)
            all_nan &= isnan(z[(size_t)b * 2 * N * N + i]);
        CHECK(all_nan, "matrix %d: results of an unconverged matrix are not all NaN", b);
    }
    CHECK(info[1] == 0, "diagonal matrix: info %d with no sweeps needed", info[1]);
    double worst = 0;
    for (int i = 0; i < N; i++)
        worst = fmax(worst, fabs(w[N + i] - exact[i]));
    CHECK(worst == 0, "diagonal matrix: eigenvalues off the exact ones by %.3g", worst);

    eig_plan_destroy(&plan);
    return test_check_report("test_eig_noconv");
}
