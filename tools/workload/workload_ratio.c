/*
 * workload_ratio.c - LAPACK zhet21-style accuracy ratios, computed in double
 * complex whatever the precision of the data, with the ulp and safe minimum
 * of that precision. Any NaN in the inputs gives a NaN ratio; an allocation
 * failure gives NaN too (a ratio that can never pass).
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include <cblas.h>

#include "workload.h"

static double ratio_ulp(eig_precision precision)
{
    return precision == EIG_COMPLEX_FLOAT ? FLT_EPSILON : DBL_EPSILON;
}

static double ratio_safe_min(eig_precision precision)
{
    return precision == EIG_COMPLEX_FLOAT ? FLT_MIN : DBL_MIN;
}

/* max that keeps a NaN */
static double nan_max(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return a > b ? a : b;
}

static double nan_min(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return a < b ? a : b;
}

/* A copy of count complex elements of the precision, widened to double. */
static double complex *ratio_widen(size_t count, eig_precision precision, const void *src)
{
    double complex *d = malloc(count * sizeof(*d));
    if (d == NULL)
        return NULL;
    if (precision == EIG_COMPLEX_DOUBLE) {
        const double complex *s = src;
        for (size_t k = 0; k < count; k++)
            d[k] = s[k];
    } else {
        const float complex *s = src;
        for (size_t k = 0; k < count; k++)
            d[k] = (double)crealf(s[k]) + I * (double)cimagf(s[k]);
    }
    return d;
}

static double ratio_real_at(eig_precision precision, const void *w, int k)
{
    return precision == EIG_COMPLEX_FLOAT ? (double)((const float *)w)[k]
                                          : ((const double *)w)[k];
}

/* Maximum column sum of |m_ij| (the 1-norm), NaN-propagating. */
static double norm1(int n, const double complex *m)
{
    double best = 0;
    for (int j = 0; j < n; j++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += cabs(m[i + (size_t)j * n]);
        best = nan_max(best, s);
    }
    return best;
}

double workload_residual_ratio(int n, eig_precision precision, const void *a, const void *w,
                               const void *z)
{
    if (n < 1 || a == NULL || w == NULL || z == NULL)
        return NAN;
    size_t nn = (size_t)n * n;
    double ulp = ratio_ulp(precision);
    double complex *r = ratio_widen(nn, precision, a);
    double complex *zd = ratio_widen(nn, precision, z);
    double complex *zw = malloc(nn * sizeof(*zw));
    double result = NAN;
    if (r == NULL || zd == NULL || zw == NULL)
        goto out;
    double anorm = nan_max(norm1(n, r), ratio_safe_min(precision));
    for (int j = 0; j < n; j++) {
        double wj = ratio_real_at(precision, w, j);
        for (int i = 0; i < n; i++)
            zw[i + (size_t)j * n] = zd[i + (size_t)j * n] * wj;
    }
    const double complex minus_one = -1.0, one = 1.0;
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasConjTrans, n, n, n, &minus_one, zw, n, zd, n,
                &one, r, n);
    double wnorm = norm1(n, r);
    /* zhet21's guarded division: never overflows, caps at 1/ulp */
    if (isnan(wnorm) || isnan(anorm))
        result = NAN;
    else if (anorm > wnorm)
        result = (wnorm / anorm) / (n * ulp);
    else if (anorm < 1.0)
        result = (nan_min(wnorm, n * anorm) / anorm) / (n * ulp);
    else
        result = nan_min(wnorm / anorm, (double)n) / (n * ulp);
out:
    free(r);
    free(zd);
    free(zw);
    return result;
}

double workload_orthogonality_ratio(int n, eig_precision precision, const void *z)
{
    if (n < 1 || z == NULL)
        return NAN;
    size_t nn = (size_t)n * n;
    double ulp = ratio_ulp(precision);
    double complex *zd = ratio_widen(nn, precision, z);
    double complex *g = malloc(nn * sizeof(*g));
    double result = NAN;
    if (zd == NULL || g == NULL)
        goto out;
    for (size_t k = 0; k < nn; k++)
        g[k] = 0;
    for (int i = 0; i < n; i++)
        g[i + (size_t)i * n] = 1.0;
    const double complex minus_one = -1.0, one = 1.0;
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, n, n, n, &minus_one, zd, n, zd, n,
                &one, g, n);
    result = nan_min(norm1(n, g), (double)n) / (n * ulp);
out:
    free(zd);
    free(g);
    return result;
}

double workload_eigenvalue_ratio(int n, eig_precision precision, const void *a, const void *w,
                                 const double *w_ref)
{
    if (n < 1 || a == NULL || w == NULL || w_ref == NULL)
        return NAN;
    double complex *ad = ratio_widen((size_t)n * n, precision, a);
    if (ad == NULL)
        return NAN;
    double anorm = nan_max(norm1(n, ad), ratio_safe_min(precision));
    free(ad);
    double worst = 0;
    for (int k = 0; k < n; k++)
        worst = nan_max(worst, fabs(ratio_real_at(precision, w, k) - w_ref[k]));
    return worst / (n * ratio_ulp(precision) * anorm);
}
