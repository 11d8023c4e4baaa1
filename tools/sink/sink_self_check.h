/*
 * sink_self_check.h - eigstream-sink --check: the daemon's self-check
 * (docs/daemon.md, "Results that check themselves") run on what was
 * received, every matrix of every frame. The input matrices are the
 * simulator's, made again: frame seq s is eigstream-sim's pool frame
 * s mod pool of the same scene, seed, snapshots and storage
 * (sim_frame.h), so the daemon must run without forming (form.* off) for
 * the matrices to be what it solved. Per matrix with status 0, the pairs
 * sent (full: all n; signal, noise: the k_sent; values: the trace
 * identity) get eig_check_pairs' ratios (eigenspace_check.h).
 */
#ifndef EIGSTREAM_SINK_SELF_CHECK_H
#define EIGSTREAM_SINK_SELF_CHECK_H

#include <stdint.h>

#include "eigenspace_check.h"
#include "protocol.h"
#include "scene.h"

typedef struct sink_self_check_params {
    const scene *scene;  /* the sim's (its n: the frames' n) */
    uint64_t seed;       /* eigstream-sim --seed */
    uint32_t snapshots;  /* --snapshots */
    uint32_t pool;       /* --pool */
    uint8_t storage;     /* --storage (protocol_storage) */
} sink_self_check_params;

typedef eigenspace_check_result sink_self_check_result; /* eigenspace_check.h */

typedef struct sink_self_checker sink_self_checker;

/* SCENE_EINVAL when a parameter is out of range, SCENE_ENOMEM. */
scene_error sink_self_checker_create(sink_self_checker **out, const sink_self_check_params *p);
void sink_self_checker_destroy(sink_self_checker **c);
/* Checks a decoded, size-checked eigenspace frame (data: its data part) and
 * adds to r; SCENE_EINVAL when the frame's n, count or precision is not
 * the sim's. */
scene_error sink_self_check_frame(sink_self_checker *c, const protocol_header *h, const protocol_matrix_meta *m,
                                  const uint8_t *data, sink_self_check_result *r);

#endif
