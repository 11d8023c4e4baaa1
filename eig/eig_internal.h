/*
 * eig_internal.h - what the plan dispatcher (eig_plan.c) shares with the
 * host backends (eig_cpu.c, eig_lapack.c). Not installed, not public.
 *
 * Each backend owns an opaque plan created from validated parameters (the
 * backend already resolved, threads already resolved to >= 1) and holding
 * all its workspace; execute allocates nothing. Suffix _z is complex double,
 * _c complex float.
 */
#ifndef EIGSTREAM_EIG_INTERNAL_H
#define EIGSTREAM_EIG_INTERNAL_H

#include <complex.h>
#include <stddef.h>

#include "eig.h"
#include "eig_threads.h"

/* ---- input checks and triangle access (eig_matrix.c) -------------------- */

/* Number of stored elements of one matrix of order n in a storage format. */
size_t eig_matrix_elements(int n, eig_storage storage);

/* Checks one matrix as eig.h defines valid input: returns 0, or
 * EIG_INFO_NONFINITE when any element of the referenced triangle is NaN/Inf,
 * else EIG_INFO_NONREAL_DIAGONAL when |Im a_ii| > n * ulp * max|a_ij|.
 * Reads only the referenced triangle. */
int eig_matrix_check_z(int n, eig_storage storage, eig_uplo uplo, const double complex *a);
int eig_matrix_check_c(int n, eig_storage storage, eig_uplo uplo, const float complex *a);

/* Copies the referenced triangle of a into the same storage at dst (full: the
 * other triangle of dst is left as it was). */
void eig_matrix_copy_triangle_z(int n, eig_storage storage, eig_uplo uplo,
                                const double complex *a, double complex *dst);
void eig_matrix_copy_triangle_c(int n, eig_storage storage, eig_uplo uplo,
                                const float complex *a, float complex *dst);

/* Unpacks the referenced triangle into the lower triangle of a full n x n
 * column-major dst (ld = n), conjugating an upper triangle; the diagonal's
 * imaginary part is dropped. The strict upper triangle of dst is not written. */
void eig_matrix_unpack_lower_z(int n, eig_storage storage, eig_uplo uplo,
                               const double complex *a, double complex *dst);
void eig_matrix_unpack_lower_c(int n, eig_storage storage, eig_uplo uplo,
                               const float complex *a, float complex *dst);

/* The same into split real and imaginary parts (dr, di: n x n, ld n, lower
 * triangle written, imaginary diagonal 0); returns the largest |component|
 * of the triangle, a stand-in for max|a_ij| within sqrt 2. One pass: the cpu
 * backend's load reads the input once. */
double eig_matrix_unpack_lower_split_z(int n, eig_storage storage, eig_uplo uplo,
                                       const double complex *a, double *dr, double *di);
float eig_matrix_unpack_lower_split_c(int n, eig_storage storage, eig_uplo uplo,
                                      const float complex *a, float *dr, float *di);

/* ---- threads: eig_threads.h (shared with IQ forming) ---------------------- */

/* ---- lapack backend (eig_lapack.c) --------------------------------------- */

typedef struct eig_lapack_plan eig_lapack_plan;

eig_error eig_lapack_plan_create(eig_lapack_plan **out, const eig_plan_params *params,
                                 int threads);
eig_error eig_lapack_plan_execute(eig_lapack_plan *plan, const void *a, void *w, void *z,
                                  int *info);
void eig_lapack_plan_destroy(eig_lapack_plan *plan);

/* ---- cpu backend (eig_cpu.c) --------------------------------------------- */

typedef struct eig_cpu_plan eig_cpu_plan;

eig_error eig_cpu_plan_create(eig_cpu_plan **out, const eig_plan_params *params, int threads);
eig_error eig_cpu_plan_execute(eig_cpu_plan *plan, const void *a, void *w, void *z, int *info);
void eig_cpu_plan_destroy(eig_cpu_plan *plan);

#endif
