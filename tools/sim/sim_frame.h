/*
 * sim_frame.h - sample covariance frames of a scene (eigstream-sim).
 *
 * Each cell of a frame draws K snapshots x_k = A s_k + w_k (s_k: independent
 * circular complex Gaussian emitter amplitudes of the emitters' powers; w_k:
 * unit-power circular white noise) and forms R = (1/K) sum_k x_k x_k^H with
 * BLAS zherk. Deterministic: the same (seed, frame index, cell) gives the same
 * matrix, bit for bit, on the same BLAS.
 */
#ifndef EIGSTREAM_SIM_FRAME_H
#define EIGSTREAM_SIM_FRAME_H

#include <stdint.h>

#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim_frame_params {
    const scene *scene; /* emitters; matrices are of order scene->n */
    uint32_t cells;     /* matrices per frame */
    uint32_t snapshots; /* K >= 1 */
    uint8_t element;    /* eig_precision */
    uint8_t storage;    /* protocol_storage */
    uint64_t seed;
} sim_frame_params;

typedef struct sim_frame_generator sim_frame_generator;

/* Allocates the workspace for p (which it copies; the scene must outlive it). */
scene_error sim_frame_generator_create(sim_frame_generator **out, const sim_frame_params *p);
void sim_frame_generator_destroy(sim_frame_generator **g);

/* Writes frame `index`: cells matrices in wire layout (protocol_matrix_bytes
 * each, back to back) into out. */
scene_error sim_frame_generate(sim_frame_generator *g, uint64_t index, void *out);

#ifdef __cplusplus
}
#endif

#endif
