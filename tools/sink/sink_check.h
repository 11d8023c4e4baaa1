/*
 * sink_check.h - checks the eigenspaces of one frame against the known scene.
 *
 * Per matrix with status 0:
 *   - eigenvalues finite and ascending;
 *   - signal_dim == d (sources + jammers of the scene);
 *   - subspace: the largest principal angle between the estimated signal
 *     subspace and span(A) (A: steering matrix of the scene for the frame's n).
 *     full mode: the top-d vectors; signal mode: the vectors sent, angle
 *     asin ||(I - Q Q^H) V||_2 with Q an orthonormal basis of span(A) (90 deg
 *     when more vectors than d are sent); noise mode: asin ||E^H Q||_2 (90 deg
 *     when fewer than n - d vectors are sent). values mode: no subspace check.
 *   - DOA (optional): FFT-MUSIC over the ULA manifold u = sin(theta) on a
 *     zero-padded grid of fft_size points: the d deepest minima of
 *     n - sum_k |a(u)^H v_k|^2 (signal vectors) or sum_k |a(u)^H e_k|^2 (noise
 *     vectors); the error is, per emitter, the distance to the nearest estimate.
 */
#ifndef EIGSTREAM_SINK_CHECK_H
#define EIGSTREAM_SINK_CHECK_H

#include <stdint.h>

#include "protocol.h"
#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sink_frame_result {
    uint32_t matrices;         /* matrices in the frame */
    uint32_t bad_status;       /* status != 0 (not checked further) */
    uint32_t not_ascending;    /* eigenvalues not finite or not ascending */
    uint32_t dim_ok;           /* signal_dim == d */
    uint32_t subspace_checked; /* matrices whose subspace angle was measured */
    double subspace_max_deg;   /* largest principal angle over those, degrees */
    uint32_t doa_checked;      /* matrices whose DOAs were estimated */
    double doa_max_error_deg;  /* largest DOA error over those, degrees */
} sink_frame_result;

typedef struct sink_checker sink_checker;

/* doa_fft_size: 0 disables DOA, else the zero-padded FFT length (>= 2n,
 * rounded up by the caller as it likes); doa_cells: DOA on the first
 * doa_cells matrices of each frame only (0 = all). */
scene_error sink_checker_create(sink_checker **out, const scene *s, uint32_t doa_fft_size, uint32_t doa_cells);
void sink_checker_destroy(sink_checker **c);

/* Checks one decoded, size-checked eigenspace frame (data: the data part). */
scene_error sink_check_frame(sink_checker *c, const protocol_header *h, const protocol_matrix_meta *m,
                             const uint8_t *data, sink_frame_result *r);

#ifdef __cplusplus
}
#endif

#endif
