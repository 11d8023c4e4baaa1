/*
 * solve_layout.h - moving matrices between NumPy's and MATLAB's array
 * layouts and the column-major layout of the eig library.
 */
#ifndef EIGSTREAM_SOLVE_LAYOUT_H
#define EIGSTREAM_SOLVE_LAYOUT_H

#include <stddef.h>

#include "eig.h"

/* Where a batch of matrices lies in an array, as eigstream-solve reads it:
 *   numpy   (n, n) or (B, n, n): a[b, i, j], the batch first
 *           (numpy.linalg.eigh's stacks)
 *   matlab  (n, n) or (n, n, B): A(i, j, b), the batch last (MATLAB's
 *           A(:, :, b), scipy.io.loadmat's arrays as read from a .mat)
 * either in C or in Fortran order. auto is resolved by the caller (matlab
 * for .mat files, numpy otherwise). */
typedef enum solve_layout {
    SOLVE_LAYOUT_AUTO = 0,
    SOLVE_LAYOUT_NUMPY,
    SOLVE_LAYOUT_MATLAB
} solve_layout;

/* "auto", "numpy", "matlab"; "?" out of range. */
const char *solve_layout_name(solve_layout layout);

/* Parses a layout name; 0 on success, -1 for anything else. */
int solve_layout_parse(const char *text, solve_layout *out);

/* A batch's place in an array: element (b, i, j) of matrix b lies at element
 * offset b * stride_b + i * stride_i + j * stride_j. batched is 0 for an
 * (n, n) array (batch 1). */
typedef struct solve_geometry {
    size_t batch, n;
    size_t stride_b, stride_i, stride_j;
    int batched;
} solve_geometry;

/* The geometry of array a read in layout (numpy or matlab). Returns 0, or
 * -1 with a one-line reason in why (size bytes): a rank other than 2 or 3,
 * or matrices that are not square in that layout (the reason names the
 * other layout when the array is square in it). */
int solve_geometry_of(const int ndim, const size_t *shape, int fortran_order, solve_layout layout,
                      solve_geometry *out, char *why, size_t size);

/* Reads the lower triangle (i >= j, the diagonal included) of each matrix of
 * the array a and writes the full Hermitian matrix it defines into `full`
 * (batch * n * n, column-major): A(i,j) = a(b,i,j) for i >= j and
 * A(j,i) = conj(a(b,i,j)). The upper triangle of the input is never read, as
 * with numpy.linalg.eigh(a, UPLO='L'). */
void solve_gather_lower(const void *a, const solve_geometry *g, eig_precision precision, void *full);

/* Writes eigenvectors in NumPy's convention: v[b, i, k] (C order) is
 * component i of eigenvector k of matrix b, taken from the library's
 * column-major z[b*n*n + i + k*n]. */
void solve_scatter_vectors(const void *z, size_t batch, size_t n, eig_precision precision,
                           void *v);

#endif
