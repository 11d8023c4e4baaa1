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

/* "none", "hann", "hamming", "chebyshev", "taylor" (form.window's values);
 * "?" for a bad value. */
const char *form_window_name(form_window w);

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

/* ---- forming plans (form_iq.c: CPU, form_iq_cuda.cu: GPU) ------------------------ */

typedef enum form_iq_error {
    FORM_IQ_OK = 0,
    FORM_IQ_EINVAL, /* parameters or an argument out of range: err names which */
    FORM_IQ_ENOMEM, /* host or device memory */
    FORM_IQ_EPLAN,  /* FFTW, cuFFT or cuBLAS refused to make a plan or handle */
    FORM_IQ_EDEVICE /* a CUDA, cuFFT or cuBLAS call failed while executing */
} form_iq_error;

/* "ok", "invalid argument", ...; never NULL. */
const char *form_iq_strerror(form_iq_error e);

/* The guard cells of every segment, relative to the segment's first gate:
 * gates first .. first+count-1 (the centre L/2 and guard_gates either side,
 * clipped to the segment; count 0 without guard gates). K = L - count.
 * p must have segments in 1..gates. */
void form_iq_guard_cells(const form_iq_params *p, uint32_t *first, uint32_t *count);

/* Checks that forming gives what the solver takes: n = channels, matrices =
 * bins x segments, the same precision. FORM_IQ_OK, or FORM_IQ_EINVAL with
 * err naming both sides. */
form_iq_error form_iq_check_solver(const form_iq_params *p, uint32_t n, uint32_t matrices, eig_precision precision,
                                   char *err, size_t err_bytes);

/* The one validator of form_iq_params: FORM_IQ_OK, or FORM_IQ_EINVAL with err
 * naming the first bad field and its value (dimensions 0, an unknown format,
 * layout, precision or window, sidelobe_db not in (0, 300] for chebyshev or
 * taylor, fft_size < pulses, bin_first >= fft_size, bin_count not in
 * 1..fft_size, gates not a multiple of segments, guard gates leaving no
 * training gate (K = 0), threads < 0, a cube or spectrum of more than 2^31
 * samples). */
form_iq_error form_iq_params_check(const form_iq_params *p, char *err, size_t err_bytes);

/* The window's `length` coefficients into out (definitions above: none 1;
 * hann, hamming as numpy.hanning, numpy.hamming; chebyshev, taylor scaled to
 * a largest coefficient of 1). FORM_IQ_EINVAL for an unknown window, length
 * 0, or sidelobe_db out of (0, 300] for chebyshev or taylor. */
form_iq_error form_iq_window_coefficients(form_window window, double sidelobe_db, uint32_t length, double *out);

/*
 * The CPU plan (form_iq.c): the cube converted and reordered to channel
 * fastest, an FFTW plan made once at create (FFTW_MEASURE, in place, batched
 * over channels x gates by the guru interface), covariances by BLAS herk
 * (lower), OpenMP over matrices.
 *
 *     form_iq *plan = NULL;
 *     char err[256];
 *     if (form_iq_create(&plan, &params, err, sizeof err) != FORM_IQ_OK) ... err says why
 *     if (form_iq_wisdom_note(plan)) log it (a wisdom file unreadable or unwritable)
 *     form_iq_execute(plan, cube, scale, matrices);   // per frame, allocates nothing
 *     form_iq_destroy(&plan);
 *
 * Wisdom: with wisdom_file set, create imports it before planning and saves
 * the planner's wisdom to it afterwards (written to wisdom_file.tmp, then
 * renamed), so that a restart with the same sizes and threads plans in
 * milliseconds. A missing file is normal (the first start). A file that
 * cannot be read as FFTW wisdom of this precision (corrupt, truncated, or
 * saved by a plan of the other precision), or a file that cannot be written,
 * does not fail create: planning goes on without it and
 * form_iq_wisdom_note says what happened (the pipeline logs it as a
 * warning); an unreadable file is replaced by the fresh wisdom.
 * Planning is serialised process-wide (the FFTW planner is not thread-safe);
 * execute is thread-safe against other plans, not against itself.
 */
typedef struct form_iq form_iq;

/* Validates params (form_iq_params_check), allocates the workspace (the
 * zero-padded cube, then its spectrum: fft_size * channels * gates complex
 * elements of the precision) and makes the FFT plan. On failure *out is NULL
 * and err says why. The plan keeps no pointer into params (wisdom_file is
 * used during create only). */
form_iq_error form_iq_create(form_iq **out, const form_iq_params *params, char *err, size_t err_bytes);

/* Forms the matrices of one cube: cube holds channels x pulses x gates
 * samples of the plan's format and layout (contiguous, as received), scale
 * > 0 and finite the frame's scale factor; out receives form_iq_matrices
 * full n x n column-major matrices of the precision (lower triangle and
 * diagonal written, the strict upper triangle not touched). cube and out
 * must not overlap. FORM_IQ_EINVAL (nothing written) for a NULL argument
 * or a bad scale. */
form_iq_error form_iq_execute(form_iq *plan, const void *cube, float scale, void *out);

/* NULL, or what happened to the wisdom file at create (see above). */
const char *form_iq_wisdom_note(const form_iq *plan);

/* Destroys *plan (NULL is a no-op) and sets it to NULL. */
void form_iq_destroy(form_iq **plan);

/*
 * The GPU plan (form_iq_cuda.cu, built with CUDA only): one per device
 * stream that forms. Conversion and window in one kernel, the Doppler FFT by
 * a batched cuFFT C2C plan (cufftPlanMany over the layout's strides),
 * covariances by cuBLAS strided-batched GEMM (A A^H of every bin of a
 * segment in one call; the device has no batched HERK) written straight into
 * the solver's device input. Every call enqueues on the plan's stream and
 * returns without waiting. Workspace: fft_size * channels * gates complex
 * elements of the precision, on the device.
 */
typedef struct form_iq_cuda form_iq_cuda;

/* params as for form_iq_create (threads and wisdom_file unused); stream a
 * cudaStream_t (NULL: the legacy default stream); the current device is
 * used. On failure *out is NULL and err says why. */
form_iq_error form_iq_cuda_create(form_iq_cuda **out, const form_iq_params *params, void *stream, char *err,
                                  size_t err_bytes);

/* Enqueues the forming of d_cube (device memory, as received) into
 * d_out (device, form_iq_matrices full n x n column-major matrices, both
 * triangles written) on the plan's stream. Returns FORM_IQ_OK
 * when everything was enqueued, else FORM_IQ_EDEVICE with err naming the
 * failed call. */
form_iq_error form_iq_cuda_execute(form_iq_cuda *plan, const void *d_cube, float scale, void *d_out, char *err,
                                   size_t err_bytes);

/* Destroys *plan (NULL is a no-op; waits for its stream) and sets it to NULL. */
void form_iq_cuda_destroy(form_iq_cuda **plan);

#ifdef __cplusplus
}
#endif

#endif
