/*
 * sink_iq.h - checks the eigenspaces the daemon formed from IQ cubes
 * (form.input = iq) against the scene eigstream-sim --iq was given.
 *
 * Matrix m of a frame belongs to Doppler bin b = (bin_first + m / segments)
 * mod F (form_iq.h: bin major, then range segment). Its estimated signal
 * subspace S is spanned by the d = signal_dim eigenvectors of the largest
 * eigenvalues (mode full: the top d of the n sent; mode signal: the vectors
 * sent; mode noise: the complement of the vectors sent). The measure is the
 * fraction of a steering vector's energy in S,
 *     proj(a) = ||P_S a||^2 / ||a||^2  in [0, 1]
 * (a: the ULA steering vector of iq_scene.h for the frame's n). Per matrix
 * with status 0:
 *   - every target whose Doppler bin (iq_scene_doppler_bin) is b:
 *     proj >= min_projection (it is in the signal subspace of its own bin);
 *   - every target whose bin is more than far_bins bins from b (circularly):
 *     proj <= max_far_projection (it is not in far bins' signal subspaces);
 *   - every jammer: proj >= min_projection (barrage: in every bin).
 */
#ifndef EIGSTREAM_SINK_IQ_H
#define EIGSTREAM_SINK_IQ_H

#include <stdint.h>

#include "iq_scene.h"
#include "protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the daemon formed the matrices (its form.* settings). */
typedef struct sink_iq_geometry {
    uint32_t fft_size;  /* F, the effective form.fft_size */
    uint32_t bin_first; /* form.doppler_first */
    uint32_t segments;  /* form.range_segments */
    uint32_t far_bins;  /* bins further than this from a target's are its far bins */
} sink_iq_geometry;

typedef struct sink_iq_result {
    uint32_t matrices, bad_status;
    uint32_t no_vectors;        /* matrices of mode values: nothing to check */
    uint32_t target_checked;    /* (matrix, target) pairs in the target's own bin */
    double target_min;          /* the least proj over those (NaN-propagating) */
    uint32_t far_checked;       /* pairs in a target's far bins */
    double far_max;             /* the largest proj over those */
    uint32_t jammer_checked;    /* (matrix, jammer) pairs */
    double jammer_min;
} sink_iq_result;

/* Starts r: no checks, minima 1, maxima 0. */
void sink_iq_result_init(sink_iq_result *r);
/* Folds one frame's result into a run's (NaN-propagating extremes). */
void sink_iq_result_add(sink_iq_result *total, const sink_iq_result *frame);

/* Checks one decoded, size-checked eigenspace frame (data: its data part)
 * into *r (added to what r holds). SCENE_EINVAL for a geometry that does not
 * fit the frame (count not a multiple of segments, F = 0) or n above
 * EIG_N_MAX; SCENE_ENOMEM. */
scene_error sink_iq_check_frame(const iq_scene *s, const sink_iq_geometry *g, const protocol_header *h,
                                const protocol_matrix_meta *m, const uint8_t *data, sink_iq_result *r);

#ifdef __cplusplus
}
#endif

#endif
