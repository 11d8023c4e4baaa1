/*
 * eig_test_util.h - shared by the eig tests: storage conversion with a
 * poisoned unreferenced triangle, and the independent oracle (LAPACKE zheevd
 * in double on the same matrix).
 */
#ifndef EIGSTREAM_EIG_TEST_UTIL_H
#define EIGSTREAM_EIG_TEST_UTIL_H

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "eig.h"

/* Plan parameters of the tests: the library's defaults with the order n,
 * batch, precision, backend and CPU threads given (0 threads: all cores). */
static inline eig_plan_params test_plan_params(int n, int batch, eig_precision precision, eig_backend backend,
                                               int threads)
{
    eig_plan_params p = eig_plan_params_default();
    p.n = n;
    p.batch = batch;
    p.precision = precision;
    p.backend = backend;
    p.threads = threads;
    return p;
}

static inline size_t test_elem_size(eig_precision p)
{
    return p == EIG_COMPLEX_DOUBLE ? sizeof(double complex) : sizeof(float complex);
}

static inline size_t test_real_size(eig_precision p)
{
    return p == EIG_COMPLEX_DOUBLE ? sizeof(double) : sizeof(float);
}

/* Element (i, j) of a full column-major matrix of the precision, widened. */
static inline double complex test_get(eig_precision p, const void *a, size_t idx)
{
    if (p == EIG_COMPLEX_DOUBLE)
        return ((const double complex *)a)[idx];
    float complex f = ((const float complex *)a)[idx];
    return (double)crealf(f) + I * (double)cimagf(f);
}

static inline void test_set(eig_precision p, void *a, size_t idx, double complex v)
{
    if (p == EIG_COMPLEX_DOUBLE)
        ((double complex *)a)[idx] = v;
    else
        ((float complex *)a)[idx] = (float)creal(v) + I * (float)cimag(v);
}

/* Copies full (both triangles) into the layout of (storage, uplo). For full
 * storage the triangle that must never be read is filled with NaN, so that a
 * solver touching it fails loudly. out holds n*n elements. */
static inline void test_to_storage(int n, eig_precision p, const void *full, eig_storage storage,
                                   eig_uplo uplo, void *out)
{
    size_t k = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            size_t idx = (size_t)i + (size_t)j * n;
            int referenced = uplo == EIG_LOWER ? i >= j : i <= j;
            if (storage == EIG_STORAGE_FULL)
                test_set(p, out, idx, referenced ? test_get(p, full, idx) : NAN + I * NAN);
            else if (referenced)
                test_set(p, out, k++, test_get(p, full, idx));
        }
}

/* Eigenvalues of the matrix (as stored, widened to double) by LAPACKE zheevd:
 * the independent oracle. Returns 0 on success. */
static inline int test_oracle_values(int n, eig_precision p, const void *full, double *w)
{
    double complex *m = malloc((size_t)n * n * sizeof(*m));
    if (m == NULL)
        return -1;
    for (size_t k = 0; k < (size_t)n * n; k++)
        m[k] = test_get(p, full, k);
    int r = (int)LAPACKE_zheevd(LAPACK_COL_MAJOR, 'N', 'L', n, m, n, w);
    free(m);
    return r;
}

/* Widens n real results of the precision to double. */
static inline void test_widen_real(int n, eig_precision p, const void *w, double *out)
{
    for (int k = 0; k < n; k++)
        out[k] = p == EIG_COMPLEX_DOUBLE ? ((const double *)w)[k] : ((const float *)w)[k];
}

#endif
