/*
 * solve_layout.h - moving matrices between NumPy's array layouts and the
 * column-major layout of the eig library.
 */
#ifndef EIGSTREAM_SOLVE_LAYOUT_H
#define EIGSTREAM_SOLVE_LAYOUT_H

#include <stddef.h>

#include "eig.h"

/* Reads the lower triangle (i >= j, the diagonal included) of each matrix
 * a[b, i, j] of a (batch, n, n) array - C order, or Fortran order where
 * element [b, i, j] lies at b + batch * (i + n * j) - and writes the full
 * Hermitian matrix it defines into `full` (batch * n * n, column-major):
 * A(i,j) = a[b,i,j] for i >= j and A(j,i) = conj(a[b,i,j]). The upper triangle
 * of the input is never read, as with numpy.linalg.eigh(a, UPLO='L'). */
void solve_gather_lower(const void *a, size_t batch, size_t n, int fortran_order,
                        eig_precision precision, void *full);

/* Writes eigenvectors in NumPy's convention: v[b, i, k] (C order) is
 * component i of eigenvector k of matrix b, taken from the library's
 * column-major z[b*n*n + i + k*n]. */
void solve_scatter_vectors(const void *z, size_t batch, size_t n, eig_precision precision,
                           void *v);

#endif
