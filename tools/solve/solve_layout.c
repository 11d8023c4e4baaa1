/*
 * solve_layout.c - NumPy layouts <-> column-major batches.
 *
 * Elements are copied as bytes (8 for complex float, 16 for complex double),
 * so one code path serves both precisions; only the conjugation of the
 * mirrored triangle looks at the numbers.
 */
#include "solve_layout.h"

#include <stdio.h>
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

const char *solve_layout_name(solve_layout layout)
{
    switch (layout) {
    case SOLVE_LAYOUT_AUTO: return "auto";
    case SOLVE_LAYOUT_NUMPY: return "numpy";
    case SOLVE_LAYOUT_MATLAB: return "matlab";
    }
    return "?";
}

int solve_layout_parse(const char *text, solve_layout *out)
{
    for (solve_layout l = SOLVE_LAYOUT_AUTO; l <= SOLVE_LAYOUT_MATLAB; l++) {
        if (text && strcmp(text, solve_layout_name(l)) == 0) {
            *out = l;
            return 0;
        }
    }
    return -1;
}

/* (batch axis, row axis, column axis) of a 3-d array in a layout. */
static void layout_axes(solve_layout layout, int axes[3])
{
    const int numpy[3] = {0, 1, 2}, matlab[3] = {2, 0, 1};
    memcpy(axes, layout == SOLVE_LAYOUT_MATLAB ? matlab : numpy, sizeof numpy);
}

int solve_geometry_of(const int ndim, const size_t *shape, int fortran_order, solve_layout layout,
                      solve_geometry *out, char *why, size_t size)
{
    char shape_text[64] = "";
    for (int d = 0, used = 0; d < ndim && used < (int)sizeof shape_text; d++)
        used += snprintf(shape_text + used, sizeof shape_text - (size_t)used, d ? ", %zu" : "%zu", shape[d]);
    const int matlab = layout == SOLVE_LAYOUT_MATLAB;
    if (ndim != 2 && ndim != 3) {
        snprintf(why, size, "shape (%s) is not %s", shape_text, matlab ? "(n, n) or (n, n, B)" : "(n, n) or (B, n, n)");
        return -1;
    }
    size_t stride[3];
    for (int d = 0; d < ndim; d++) { /* element strides of the array's axes */
        stride[d] = 1;
        for (int e = fortran_order ? 0 : d + 1; e < (fortran_order ? d : ndim); e++)
            stride[d] *= shape[e];
    }
    int axes[3] = {-1, 0, 1};
    if (ndim == 3)
        layout_axes(layout, axes);
    if (shape[axes[1]] != shape[axes[2]]) {
        const int other[3] = {matlab ? 0 : 2, matlab ? 1 : 0, matlab ? 2 : 1};
        if (ndim == 3 && shape[other[1]] == shape[other[2]])
            snprintf(why, size, "shape (%s) is not square in the %s layout %s; it is in the %s layout: --layout %s",
                     shape_text, solve_layout_name(layout), matlab ? "(n, n, B)" : "(B, n, n)",
                     matlab ? "numpy" : "matlab", matlab ? "numpy" : "matlab");
        else
            snprintf(why, size, "shape (%s) is not square", shape_text);
        return -1;
    }
    out->batched = ndim == 3;
    out->batch = ndim == 3 ? shape[axes[0]] : 1;
    out->n = shape[axes[1]];
    out->stride_b = ndim == 3 ? stride[axes[0]] : 0;
    out->stride_i = stride[axes[1]];
    out->stride_j = stride[axes[2]];
    return 0;
}

void solve_gather_lower(const void *a, const solve_geometry *g, eig_precision precision, void *full)
{
    const size_t es = element_size(precision), n = g->n;
    const char *in = a;
    char *out = full;
    for (size_t b = 0; b < g->batch; b++) {
        char *m = out + b * n * n * es;
        for (size_t j = 0; j < n; j++) {
            for (size_t i = j; i < n; i++) {
                const char *src = in + (b * g->stride_b + i * g->stride_i + j * g->stride_j) * es;
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
