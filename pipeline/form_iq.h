/*
 * form_iq.h - forming covariance matrices from a raw IQ data cube:
 * slow-time window, Doppler FFT, then per (Doppler bin, range segment) the
 * sample covariance over the segment's training gates.
 *
 * The cube (as received, after the protocol's checks) holds channels x
 * pulses x gates complex samples of one wire format (protocol_iq_format:
 * ci16_le or cf32_le), in one of the protocol's layouts (protocol_iq_layout),
 * contiguous, each sample worth raw * scale (the frame's scale factor).
 *
 * What is computed, exactly (c channel, p pulse, g gate, P pulses, F fft_size,
 * w the window of length P):
 *   X[c][b][g] = sum_p w[p] x[c][p][g] exp(-2 pi i p b / F)      (b in 0..F-1)
 *   for bin index i in 0..bin_count-1, b = (bin_first + i) mod F, and range
 *   segment s in 0..segments-1 (gates split into `segments` equal runs of
 *   L = gates / segments; segment s covers gates s*L .. s*L+L-1), the
 *   training gates are the segment's gates except, when guard_gates G > 0,
 *   the segment's centre gate s*L + L/2 and G gates on either side of it;
 *   K = their count (the snapshot count, the same for every segment):
 *   R[m](j,k) = (1/K) sum_{g in training} X[j][b][g] conj(X[k][b][g])
 *   with m = i * segments + s (bin major). R is written column-major, full
 *   storage, element (j,k) at j + k*n (n = channels), in the solver's
 *   precision; the lower triangle (diagonal included) is what the solver
 *   reads, the upper may be left unwritten. Diagonal loading and
 *   forward-backward averaging are not part of this step: the path applies
 *   them afterwards, as for covariance input (form.h).
 * The window is unnormalised: none = 1; hann and hamming are the symmetric
 * forms (numpy.hanning, numpy.hamming); chebyshev is the Dolph-Chebyshev
 * window and taylor the Taylor window (nbar = 4) for sidelobe_db; each
 * scaled so that its largest coefficient is 1.
 */
#ifndef EIGSTREAM_FORM_IQ_H
#define EIGSTREAM_FORM_IQ_H

#include <stddef.h>
#include <stdint.h>

#include "eig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum form_window {
    FORM_WINDOW_NONE = 0,
    FORM_WINDOW_HANN,
    FORM_WINDOW_HAMMING,
    FORM_WINDOW_CHEBYSHEV,
    FORM_WINDOW_TAYLOR
} form_window;

/* Everything forming needs, as plain values (the pipeline fills it from
 * the config's form.* settings; tests and the bench fill it directly). */
typedef struct form_iq_params {
    uint32_t channels;       /* = n, the matrix size */
    uint32_t pulses;         /* P */
    uint32_t gates;          /* range gates per pulse */
    uint8_t format;          /* protocol_iq_format wire code */
    uint8_t layout;          /* protocol_iq_layout wire code */
    eig_precision precision; /* of the FFT, the covariances and the output */
    form_window window;
    double sidelobe_db;      /* chebyshev, taylor: peak sidelobe level below the main lobe, > 0 */
    uint32_t fft_size;       /* F >= pulses; zero-padded */
    uint32_t bin_first;      /* first Doppler bin made into matrices */
    uint32_t bin_count;      /* bins bin_first .. bin_first+bin_count-1 (mod F) */
    uint32_t segments;       /* range segments; gates % segments == 0 */
    uint32_t guard_gates;    /* G; 0 = train on every gate of the segment */
    int threads;             /* CPU path: FFT and covariance threads, 0 = all cores */
    const char *wisdom_file; /* CPU path: FFTW wisdom loaded at create and saved after
                                planning; NULL or "" = none */
} form_iq_params;

/* Matrices per frame (bin_count * segments) and the snapshot count K. */
uint32_t form_iq_matrices(const form_iq_params *p);
uint32_t form_iq_snapshots(const form_iq_params *p);

#ifdef __cplusplus
}
#endif

#endif
