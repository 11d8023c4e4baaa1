/*
 * eig_matrix.c - where each column of a referenced triangle lives, and the
 * per-precision checks and copies generated from eig_matrix.proto.c.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "eig_internal.h"

size_t eig_matrix_elements(int n, eig_storage storage)
{
    size_t m = (size_t)n;
    return storage == EIG_STORAGE_PACKED ? m * (m + 1) / 2 : m * m;
}

/* Column j of the referenced triangle: `count` consecutive elements from
 * offset `start` (relative to the matrix), the diagonal at index `diag`. */
typedef struct eig_triangle_column {
    size_t start;
    int count;
    int diag;
} eig_triangle_column;

static eig_triangle_column eig_triangle_column_of(int n, eig_storage storage, eig_uplo uplo,
                                                  int j)
{
    eig_triangle_column c;
    size_t jj = (size_t)j, nn = (size_t)n;
    if (uplo == EIG_LOWER) {
        c.start = storage == EIG_STORAGE_FULL ? jj * nn + jj : jj + jj * (2 * nn - jj - 1) / 2;
        c.count = n - j;
        c.diag = 0;
    } else {
        c.start = storage == EIG_STORAGE_FULL ? jj * nn : jj * (jj + 1) / 2;
        c.count = j + 1;
        c.diag = j;
    }
    return c;
}

#define EIG_T double complex
#define EIG_R double
#define EIG_R_MAX DBL_MAX
#define EIG_FN(x) x##_z
#define EIG_ULP DBL_EPSILON
#define EIG_CREAL creal
#define EIG_CIMAG cimag
#define EIG_CONJ conj
#define EIG_FABS fabs
#define EIG_HYPOT hypot
#include "eig_matrix.proto.c"
#undef EIG_T
#undef EIG_R
#undef EIG_R_MAX
#undef EIG_FN
#undef EIG_ULP
#undef EIG_CREAL
#undef EIG_CIMAG
#undef EIG_CONJ
#undef EIG_FABS
#undef EIG_HYPOT

#define EIG_T float complex
#define EIG_R float
#define EIG_R_MAX FLT_MAX
#define EIG_FN(x) x##_c
#define EIG_ULP FLT_EPSILON
#define EIG_CREAL crealf
#define EIG_CIMAG cimagf
#define EIG_CONJ conjf
#define EIG_FABS fabsf
#define EIG_HYPOT hypotf
#include "eig_matrix.proto.c"
