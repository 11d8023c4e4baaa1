/*
 * mdl.h - signal-subspace dimension by the Minimum Description Length
 * criterion (Wax & Kailath, "Detection of signals by information theoretic
 * criteria", IEEE Trans. ASSP 33(2), 1985).
 *
 * With eigenvalues l_1 >= ... >= l_n of a sample covariance from K snapshots,
 * for each candidate k = 0..n-1 the n-k smallest are the noise set:
 *
 *   MDL(k) = -K (n-k) ln( g_k / a_k ) + k (2n-k) ln(K) / 2
 *
 * g_k, a_k their geometric and arithmetic means; k(2n-k) is the number of
 * free real parameters of a rank-k complex Hermitian model. d = argmin.
 */
#ifndef EIGSTREAM_MDL_H
#define EIGSTREAM_MDL_H

#ifdef __cplusplus
extern "C" {
#endif

/* w: n eigenvalues, ascending (the solver's order); snapshots K >= 1.
 * Eigenvalues below n * eps * max (rank-deficient sample covariances have
 * exact zeros that rounding makes slightly negative) are raised to that
 * floor so that the logarithms stay finite; the estimate is scale-invariant.
 * Returns d in 0..n-1, or -1 when w holds a NaN/Inf or K < 1 or n < 1. */
int mdl_estimate(const double *w, int n, double snapshots);
int mdl_estimate_float(const float *w, int n, double snapshots);

#ifdef __cplusplus
}
#endif

#endif
