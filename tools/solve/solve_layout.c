/*
 * solve_layout.c - NumPy layouts <-> column-major batches.
 *
 * Elements are copied as bytes (8 for complex float, 16 for complex double),
 * so one code path serves both precisions; only the conjugation of the
 * mirrored triangle looks at the numbers.
 */
#include "solve_layout.h"

#include <string.h>

static size_t element_size(eig_precision precision)
{
    return precision == EIG_COMPLEX_FLOAT ? 2 * sizeof(float) : 2 * sizeof(double);
}

/* dst = conj(src) for one complex element of the given precision. */
static void element_copy_conj(char *dst, const char *src, eig_precision precision)
{
    if (precision == EIG_COMPLEX_FLOAT) {
        float re_im[2];
        memcpy(re_im, src, sizeof re_im);
        re_im[1] = -re_im[1];
        memcpy(dst, re_im, sizeof re_im);
    } else {
        double re_im[2];
        memcpy(re_im, src, sizeof re_im);
        re_im[1] = -re_im[1];
        memcpy(dst, re_im, sizeof re_im);
    }
}

void solve_gather_lower(const void *a, size_t batch, size_t n, int fortran_order,
                        eig_precision precision, void *full)
{
    const size_t es = element_size(precision);
    /* Element strides of the input along b, i and j. */
    const size_t stride_b = fortran_order ? 1 : n * n;
    const size_t stride_i = fortran_order ? batch : n;
    const size_t stride_j = fortran_order ? batch * n : 1;
    const char *in = a;
    char *out = full;
    for (size_t b = 0; b < batch; b++) {
        char *m = out + b * n * n * es;
        for (size_t j = 0; j < n; j++) {
            for (size_t i = j; i < n; i++) {
                const char *src = in + (b * stride_b + i * stride_i + j * stride_j) * es;
                memcpy(m + (i + j * n) * es, src, es);
                if (i != j)
                    element_copy_conj(m + (j + i * n) * es, src, precision);
            }
        }
    }
}

void solve_scatter_vectors(const void *z, size_t batch, size_t n, eig_precision precision,
                           void *v)
{
    const size_t es = element_size(precision);
    const char *in = z;
    char *out = v;
    for (size_t b = 0; b < batch; b++) {
        const char *zb = in + b * n * n * es;
        char *vb = out + b * n * n * es;
        for (size_t k = 0; k < n; k++)
            for (size_t i = 0; i < n; i++)
                memcpy(vb + (i * n + k) * es, zb + (i + k * n) * es, es);
    }
}
