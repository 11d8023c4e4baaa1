/*
 * form_iq_oracle.h - the independent oracle of IQ forming (form_iq.h), shared
 * by the CPU test (test_form_iq.c) and the GPU test (tests/gpu): the
 * windowed Doppler DFT as an O(P*F) sum per (channel, gate) and each
 * covariance as an explicit sum over the training gates, in double, from
 * the raw samples (no FFT, no BLAS). Windows none, hann and hamming are
 * computed here from their definitions (numpy.hanning, numpy.hamming);
 * chebyshev and taylor come from form_iq_window_coefficients, whose spectra
 * test_form_iq_numpy.py checks analytically.
 *
 * Tolerance. Let B = max over (channel, gate) of sum_p |w_p x_p| (x the
 * scaled samples): every |X[c][b][g]| <= B, so every |R(j,k)| <= B^2 and
 * the products summed in R are at most B^2 each. With u the unit roundoff
 * of the precision tested: the conversion rounds each w_p x_p with relative
 * error <= 2u; an FFT of size F has an error per output of at most about
 * u log2(F) times the input's l1 norm (each output is a sum over log2 F
 * butterfly levels, each rounding once; worst case, no cancellation
 * assumed) <= u log2(F) B; the herk sum of K products of error <= 2 u B |X|
 * each, then the 1/K scaling, adds <= (K + 1) u B^2. So
 *   |R - R_oracle| <= u (2 log2 F + 4 + K + 1) B^2 (+ the oracle's own
 *   error, P + K rounding steps in double, below the float bound and inside
 *   the double one through the same terms),
 * and we allow 4x that: tol = 4 u (2 log2 F + P + K + 5) B^2 (P covering the
 * oracle's DFT sum). A wrong bin, window, gate, sign or scale errs by O(B^2
 * / K) at least on random data, far above tol (u = 2^-24: tol ~ 1e-5 B^2).
 */
#ifndef EIGSTREAM_FORM_IQ_ORACLE_H
#define EIGSTREAM_FORM_IQ_ORACLE_H

#include <complex.h>
#include <stddef.h>

#include "form_iq.h"

extern const char *const form_iq_oracle_window_names[]; /* by form_window */
extern const char *const form_iq_oracle_layout_names[]; /* by layout code */

/* The matrices of q (form_iq_matrices of them, complex double, full n x n
 * column-major, both triangles) for a raw cube and scale into r; returns
 * the bound B^2 of the tolerance. */
double form_iq_oracle(const form_iq_params *q, const void *cube, float scale, double complex *r);

/* Case index (0 .. FORM_IQ_ORACLE_CASES-1) of the shared sweep: every
 * window x format x layout x precision on a 5 x 7 x 12 cube, with the fft
 * size (7, 9, 11: equal to P and padded), wrapping bin ranges, 1..3
 * segments, guard gates and 1..2 threads varying with the index so that
 * they meet every combination often; label names the case. */
#define FORM_IQ_ORACLE_CASES 60
void form_iq_oracle_case(int index, form_iq_params *q, char *label, size_t label_bytes);

/* The tolerance on |R - R_oracle| for a result in `precision` (above). */
double form_iq_oracle_tolerance(const form_iq_params *q, eig_precision precision, double b2);

/* A random cube (malloc, fixed-seed stream) of q's format and size: ci16
 * samples in [-3000, 3000], cf32 in [-1, 1). */
void *form_iq_oracle_random_cube(const form_iq_params *q);

/* R <- (R + J conj(R) J)/2, then R <- R + factor trace(R)/n I, on a full
 * complex double matrix, by the definitions (form.h). */
void form_iq_oracle_fb_loading(double complex *r, size_t n, double factor);

/* The frame path with IQ input (path_create for backend, which must give
 * the path named want_path: "host" or "cuda"): one frame of a fixed case
 * (c128, ci16 pcg, chebyshev 40 dB, wrapping bins, 2 segments, guard 1,
 * forward-backward and loading on) formed and solved; on the host path the
 * formed lower triangles against the oracle, on both the eigenvalues
 * against LAPACK zheev of the oracle's matrices; a cube of the wrong size
 * refused; a solver.matrices mismatch refused at create. Counts failures
 * through CHECK. */
void form_iq_oracle_check_path(eig_backend backend, const char *want_path);

#endif
