/*
 * workload.h - test and benchmark matrices, and the LAPACK accuracy ratios.
 *
 * Library eigstream_workload, shared by the tests, eigstream-bench,
 * eigstream-gen and eigstream-solve --check. Deterministic: the same
 * (type, n, seed) gives the same matrix on every machine.
 *
 * Matrix types 1-18 are those of LAPACK's Hermitian eigensolver tests
 * (TESTING/EIG zchkst.f / zdrvst.f); 19-22 are what radars produce.
 */
#ifndef EIGSTREAM_WORKLOAD_H
#define EIGSTREAM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "eig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum workload_type {
    WORKLOAD_ZERO = 1,                   /* 1  zero matrix */
    WORKLOAD_IDENTITY = 2,               /* 2  identity */
    WORKLOAD_DIAG_ARITHMETIC = 3,        /* 3  diagonal, evenly spaced 1..ulp, random signs */
    WORKLOAD_DIAG_GEOMETRIC = 4,         /* 4  diagonal, geometric 1..ulp, random signs */
    WORKLOAD_DIAG_CLUSTERED = 5,         /* 5  diagonal, 1, ulp, ..., ulp, random signs */
    WORKLOAD_DIAG_ARITH_OVERFLOW = 6,    /* 6  type 3 scaled near overflow */
    WORKLOAD_DIAG_ARITH_UNDERFLOW = 7,   /* 7  type 3 scaled near underflow */
    WORKLOAD_UNITARY_ARITHMETIC = 8,     /* 8  U D U^H, D as type 3, U random unitary */
    WORKLOAD_UNITARY_GEOMETRIC = 9,      /* 9  U D U^H, D as type 4 */
    WORKLOAD_UNITARY_CLUSTERED = 10,     /* 10 U D U^H, D as type 5 */
    WORKLOAD_UNITARY_ARITH_OVERFLOW = 11,/* 11 type 8 scaled near overflow */
    WORKLOAD_UNITARY_ARITH_UNDERFLOW = 12,/* 12 type 8 scaled near underflow */
    WORKLOAD_RANDOM_HERMITIAN = 13,      /* 13 entries uniform in the unit disc, Hermitian */
    WORKLOAD_RANDOM_OVERFLOW = 14,       /* 14 type 13 scaled near overflow */
    WORKLOAD_RANDOM_UNDERFLOW = 15,      /* 15 type 13 scaled near underflow */
    WORKLOAD_BAND = 16,                  /* 16 band Hermitian (bandwidth 2), evenly spaced spectrum */
    WORKLOAD_BAND_OVERFLOW = 17,         /* 17 type 16 scaled near overflow */
    WORKLOAD_BAND_UNDERFLOW = 18,        /* 18 type 16 scaled near underflow */
    WORKLOAD_RADAR_RANK_DEFICIENT = 19,  /* 19 sample covariance, K = n/2 snapshots < n */
    WORKLOAD_RADAR_SOURCES = 20,         /* 20 3 strong sources over a flat noise floor, K = 4n */
    WORKLOAD_TRIDIAGONAL = 21,           /* 21 already tridiagonal, some off-diagonals exactly 0 */
    WORKLOAD_DIAGONAL_UNSORTED = 22,     /* 22 diagonal with complex-zero off-diagonals, unsorted */
    WORKLOAD_TYPE_MIN = 1,
    WORKLOAD_TYPE_MAX = 22
} workload_type;

/* "zero", "identity", ..., "radar_sources"; never NULL. */
const char *workload_type_name(int type);

/* Fills a (n*n complex of `precision`, column-major, BOTH triangles, exactly
 * Hermitian with real diagonal) with a matrix of the given type. When the
 * exact spectrum is known by construction, writes it ascending to exact_w
 * (n doubles) and returns 1; otherwise returns 0 (exact_w may be NULL).
 * Returns -1 on a bad type/n. Generation is always in double, then rounded
 * for complex float. */
int workload_generate(int type, int n, eig_precision precision, uint64_t seed, void *a,
                      double *exact_w);

/* A batch of radar-like sample covariances (ULA, 3 sources at random angles
 * 10-30 dB over unit noise, K = 2n snapshots, each matrix its own scene drawn
 * from seed): batch * n * n complex, full, both triangles. Returns 0 or -1. */
int workload_radar_batch(int n, int batch, eig_precision precision, uint64_t seed, void *a);

/* Random Hermitian batch (type 13 per matrix, seeds seed, seed+1, ...). */
int workload_random_batch(int n, int batch, eig_precision precision, uint64_t seed, void *a);

/* LAPACK zhet21-style ratios, computed in double whatever the precision, with
 * ulp of the given precision (DBL_EPSILON or FLT_EPSILON, LAPACK's 'Precision'
 * = eps*base). NaN propagates (a NaN anywhere gives a NaN ratio).
 * a: full n x n column-major (both triangles), w: n ascending, z: n x n. */
double workload_residual_ratio(int n, eig_precision precision, const void *a, const void *w,
                               const void *z);      /* |A - Z D Z^H|_1 / (|A|_1 n ulp) */
double workload_orthogonality_ratio(int n, eig_precision precision,
                                    const void *z); /* |I - Z^H Z|_1 / (n ulp) */
/* max_k |w_k - w_ref_k| / (n ulp max(|A|_1, tiny)); w in the precision's real
 * type, w_ref in double. */
double workload_eigenvalue_ratio(int n, eig_precision precision, const void *a, const void *w,
                                 const double *w_ref);

/* Threshold every ratio above must meet (LAPACK sep.in). */
#define WORKLOAD_RATIO_THRESHOLD 60.0

#ifdef __cplusplus
}
#endif

#endif
