/*
 * eig_check.c - eig_check_pairs (eig.h): LAPACK's zhet21 ratios on a sample
 * of computed eigenpairs, for a daemon or a receiver that checks what it
 * publishes or gets. Allocates nothing; O(k n^2 + k^2 n) operations.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stddef.h>

#include "eig.h"

/* Where A(i, j) lives in the stored triangle; *conj_out = 1 when the
 * stored element is A(j, i) (the other triangle: conjugate it). */
static size_t check_index(int n, eig_storage storage, eig_uplo uplo, int i, int j, int *conj_out)
{
    int in_triangle = uplo == EIG_LOWER ? i >= j : i <= j;
    if (!in_triangle) {
        int t = i;
        i = j;
        j = t;
        *conj_out = 1;
    }
    size_t ii = (size_t)i, jj = (size_t)j, nn = (size_t)n;
    if (storage == EIG_STORAGE_FULL)
        return ii + jj * nn;
    if (uplo == EIG_LOWER)
        return ii + jj * (2 * nn - jj - 1) / 2;
    return ii + jj * (jj + 1) / 2;
}

#define EIG_T double complex
#define EIG_FN(x) x##_z
#include "eig_check.proto.c"
#undef EIG_T
#undef EIG_FN
#define EIG_T float complex
#define EIG_FN(x) x##_c
#include "eig_check.proto.c"
#undef EIG_T
#undef EIG_FN

/* The k values as doubles (at most EIG_CHECK_N_MAX). */
static void check_values(eig_precision precision, int k, const void *w, double *out)
{
    for (int i = 0; i < k; i++)
        out[i] = precision == EIG_COMPLEX_DOUBLE ? ((const double *)w)[i] : (double)((const float *)w)[i];
}

eig_error eig_check_pairs(eig_precision precision, eig_storage storage, eig_uplo uplo, int n, const void *a, int k,
                          const void *w, const void *v, eig_check_ratios *out)
{
    out->residual = out->orthogonality = 0;
    if ((precision != EIG_COMPLEX_FLOAT && precision != EIG_COMPLEX_DOUBLE) ||
        (storage != EIG_STORAGE_FULL && storage != EIG_STORAGE_PACKED) || (uplo != EIG_LOWER && uplo != EIG_UPPER) ||
        n < 1 || n > EIG_CHECK_N_MAX || k < 0 || k > n || a == NULL || (k > 0 && w == NULL) ||
        (v == NULL && k != 0 && k != n))
        return EIG_EINVAL;
    double values[EIG_CHECK_N_MAX];
    check_values(precision, k, w, values);
    int dbl = precision == EIG_COMPLEX_DOUBLE;
    double eps = dbl ? DBL_EPSILON : FLT_EPSILON;
    /* LAPACK's anorm = max(||A||_1, unfl): a zero matrix with exact pairs is 0, not NaN. */
    double norm = dbl ? check_norm1_z(a, n, storage, uplo) : check_norm1_c(a, n, storage, uplo);
    double scale = (norm > DBL_MIN ? norm : DBL_MIN) * n * eps;
    if (isnan(norm))
        scale = norm;
    double residual, orthogonality = 0;
    if (v == NULL)
        residual = k == 0 ? 0 : dbl ? check_trace_z(a, n, storage, uplo, values) : check_trace_c(a, n, storage, uplo, values);
    else if (dbl)
        check_sums_z(a, n, storage, uplo, k, values, v, &residual, &orthogonality);
    else
        check_sums_c(a, n, storage, uplo, k, values, v, &residual, &orthogonality);
    out->residual = residual / scale;
    out->orthogonality = orthogonality / (n * eps);
    return EIG_OK;
}
