/*
 * consumer.c - a program of someone else's, linked against the installed
 * libeigstream-eig (tests/install: through find_package(eigstream) and
 * through pkg-config, shared and static).
 *
 * It solves a batch of complex Hermitian tridiagonal Toeplitz matrices
 * T(a, b, theta) of order n: a on the diagonal, b e^{i theta} below it and
 * its conjugate above, whose spectrum is known in closed form:
 *   lambda_k = a + 2 |b| cos(k pi / (n + 1)),  k = 1..n
 * (the unitary diag(e^{i j theta}) turns T into the real Toeplitz matrix
 * with b off the diagonal, whose eigenvalues these are). Checked: every
 * eigenvalue against the formula, the residual |T z_k - lambda_k z_k| and the
 * orthonormality of z, in both precisions, within a multiple of n ulp |T|.
 *
 * usage: consumer [BACKEND]    (default cpu); exit 0 when every check passes.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <eigstream/eig.h>

enum { N = 9, BATCH = 3 };
static const double PI = 3.14159265358979323846;

/* Fills matrix b of the batch, full column-major storage, both triangles. */
static void toeplitz_fill(double complex *m, double a, double b, double theta)
{
    for (int i = 0; i < N * N; i++)
        m[i] = 0;
    for (int j = 0; j < N; j++) {
        m[j + j * N] = a;
        if (j + 1 < N) {
            m[(j + 1) + j * N] = b * cexp(I * theta);
            m[j + (j + 1) * N] = b * cexp(-I * theta);
        }
    }
}

/* Largest |T z_k - w_k z_k| and |Z^H Z - I| over the matrix, in units of
 * n ulp |T| and n ulp; -1 when an eigenvalue is off the formula by more. */
static double matrix_ratio(const double complex *t, const double complex *z, const double *w,
                           double a, double b, double ulp)
{
    double norm = fabs(a) + 2 * fabs(b), worst = 0;
    for (int k = 0; k < N; k++) {
        double exact = a + 2 * fabs(b) * cos((N - k) * PI / (N + 1)); /* ascending */
        if (!(fabs(w[k] - exact) <= 10 * N * ulp * norm)) {
            fprintf(stderr, "eigenvalue %d: %.17g, expected %.17g\n", k, w[k], exact);
            return -1;
        }
        for (int i = 0; i < N; i++) {
            double complex r = -w[k] * z[i + k * N];
            for (int j = 0; j < N; j++)
                r += t[i + j * N] * z[j + k * N];
            worst = fmax(worst, cabs(r) / (N * ulp * norm));
        }
        for (int l = 0; l < N; l++) {
            double complex d = (k == l) ? -1 : 0;
            for (int i = 0; i < N; i++)
                d += conj(z[i + k * N]) * z[i + l * N];
            worst = fmax(worst, cabs(d) / (N * ulp));
        }
    }
    return worst;
}

/* Solves the batch in one precision on the backend; returns the failures. */
static int solve_batch(eig_backend backend, eig_precision precision)
{
    static const double params[BATCH][3] = {{2.0, 1.0, 0.3}, {-1.5, 0.25, 2.0}, {0.0, -3.0, -1.0}};
    static double complex t[BATCH][N * N], z[BATCH][N * N];
    static float complex tf[BATCH][N * N], zf[BATCH][N * N];
    double w[BATCH][N];
    float wf[BATCH][N];
    int info[BATCH], failures = 0;
    int single = precision == EIG_COMPLEX_FLOAT;
    for (int b = 0; b < BATCH; b++) {
        toeplitz_fill(t[b], params[b][0], params[b][1], params[b][2]);
        for (int i = 0; i < N * N; i++)
            tf[b][i] = (float complex)t[b][i];
    }
    eig_plan_params p = eig_plan_params_default();
    p.n = N;
    p.batch = BATCH;
    p.precision = precision;
    p.backend = backend;
    eig_plan *plan;
    eig_error e = eig_plan_create(&plan, &p);
    if (e == EIG_OK) {
        e = single ? eig_plan_execute(plan, tf, wf, zf, info) : eig_plan_execute(plan, t, w, z, info);
        eig_plan_destroy(&plan);
    }
    if (e != EIG_OK || plan != NULL) {
        fprintf(stderr, "%s %s: %s\n", eig_backend_name(backend), eig_precision_name(precision),
                eig_strerror(e));
        return 1;
    }
    for (int b = 0; b < BATCH; b++) {
        if (single)
            for (int i = 0; i < N * N; i++) {
                z[b][i] = zf[b][i];
                w[b][i % N] = wf[b][i % N];
            }
        double ratio = matrix_ratio(t[b], z[b], w[b], params[b][0], params[b][1],
                                    single ? FLT_EPSILON : DBL_EPSILON);
        printf("%s %s matrix %d: info %d, ratio %.3g\n", eig_backend_name(backend),
               eig_precision_name(precision), b, info[b], ratio);
        failures += info[b] != 0 || !(ratio >= 0 && ratio < 60);
    }
    return failures;
}

int main(int argc, char **argv)
{
    eig_backend backend = EIG_BACKEND_CPU;
    if (argc > 1 && eig_backend_parse(argv[1], &backend) != EIG_OK) {
        fprintf(stderr, "usage: consumer [auto|cpu|lapack|cuda]\n");
        return 2;
    }
    int failures = solve_batch(backend, EIG_COMPLEX_DOUBLE) + solve_batch(backend, EIG_COMPLEX_FLOAT);
    printf("consumer: %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
