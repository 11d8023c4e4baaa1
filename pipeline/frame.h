/*
 * frame.h - a frame on its way through the daemon, and the output buffer its
 * eigenspace is sent from. Both come from pools allocated by pipeline_create
 * (pipeline_frames.c); nothing is allocated per frame.
 *
 * Ownership: a frame belongs to exactly one stage at a time (queues move
 * it). The solve stage takes an output buffer from the output pool into
 * f->out; from then on the frame owns it until the publish stage hands it
 * to ZeroMQ (f->out = NULL, ZeroMQ's release callback puts it back) or the
 * frame is released (pipeline_frame_release puts it back). Those are the
 * only two ways back to the pool.
 */
#ifndef EIGSTREAM_FRAME_H
#define EIGSTREAM_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct output_buffer {
    pool *home;        /* the pool it returns to */
    uint8_t header[PROTOCOL_HEADER_BYTES];
    uint8_t *meta;     /* protocol_meta_bytes(matrices) */
    uint8_t *data;     /* the largest data part of the output mode; the path's host memory */
    size_t data_bytes; /* of the frame being sent */
    protocol_matrix_meta *matrix_meta; /* per matrix, before encoding */
} output_buffer;

struct path;

/* The self-check of one matrix of a frame (docs/daemon.md, "Results that
 * check themselves"): the solve stage picks the matrix and has the path
 * start it (path_check_start) before the output is trimmed to what the mode
 * sends; the ratios are the frame's once path_output_wait returned. */
typedef enum frame_check_state {
    FRAME_CHECK_NONE = 0, /* not checked (its matrix failed: info != 0, or the frame never got there) */
    FRAME_CHECK_STARTED,  /* computed on the host already, or in flight on the device */
    FRAME_CHECK_DONE      /* residual, orthogonality and ns hold */
} frame_check_state;

typedef struct frame_check {
    frame_check_state state;
    uint32_t matrix;         /* which one */
    double residual;         /* eig_check_pairs' ratios (eig.h) */
    double orthogonality;
    uint64_t ns;             /* what it cost: wall time on the host, GPU time between events on the cuda path */
} frame_check;

typedef struct frame {
    protocol_header header; /* as received */
    void *a;                /* payload as received, then (host path) formed full matrices in place */
    size_t a_bytes;         /* capacity: matrices * n * n elements; IQ input: one cube */
    /* IQ input (path_params.iq_input) on the host path: the matrices formed
     * from the cube in f->a (form_iq_execute), matrices * n * n elements of
     * the precision, what the solver reads; NULL otherwise. The cube and the
     * matrices differ in size and forming reads the whole cube while writing
     * every matrix, so forming cannot be in place; a buffer per frame (not per
     * path) because frame k+1 is formed while frame k, and the frames queued
     * between the form and solve stages, still hold their matrices.
     * Allocated by pipeline_frames.c with the path's buffer_alloc when the
     * host path may form IQ frames (host path, or solver.fallback cpu). */
    void *formed;
    size_t formed_bytes;
    void *w;                /* matrices * n real values of the precision, on the host after the solve */
    int *info;              /* per matrix, on the host after the solve */
    uint32_t *signal_dim;   /* per matrix: fixed d or the MDL estimate */
    size_t *part_bytes;     /* payload part sizes seen by the receiver (pipeline part_capacity entries) */
    uint64_t received_ns;   /* CLOCK_MONOTONIC at the first part */
    uint64_t received_real_ns, solve_start_real_ns, solve_end_real_ns; /* for the meta part */
    int slot;               /* what the path holds for this frame (a device slot), -1 for nothing */
    struct path *path;      /* the path that formed it (set by the form stage), NULL before */
    uint64_t ticket;        /* order taken from the form queue (0, 1, ...): the publish order */
    int worker;             /* the solver worker it was dealt to */
    int drop_reason;        /* -1, or the metrics_drop_reason a worker stage dropped it for: the
                               publish stage counts the drop and closes its ticket */
    output_buffer *out;     /* owned from the solve stage until sent or released */
    frame_check check;      /* the self-check of one of its matrices */
} frame;

#ifdef __cplusplus
}
#endif

#endif
