/*
 * pipeline_internal.h - what the stage files share: the frame, the output
 * buffer and the pipeline object. Not installed; app/ and tests use pipeline.h.
 *
 * Buffers (all allocated by pipeline_create, none per frame):
 *   frames   pool of 3 * queue_depth + 4 frames: enough for every inter-stage
 *            queue to be full while each of the four stages holds one, so the
 *            receiver never waits for a buffer; only the receive queue's
 *            overflow policy decides what happens under overload.
 *   outputs  pool of output.hwm + 2 output buffers: a published frame's data
 *            part is sent zero-copy and its buffer comes back through
 *            ZeroMQ's release callback (any thread) once sent or discarded.
 * On the GPU path both are pinned host memory.
 */
#ifndef EIGSTREAM_PIPELINE_INTERNAL_H
#define EIGSTREAM_PIPELINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "eig.h"
#include "log.h"
#include "metrics.h"
#include "pipeline.h"
#include "pool.h"
#include "protocol.h"
#include "queue.h"

/* ZeroMQ I/O threads of the daemon: one for the input, one for the output. */
#define PIPELINE_ZMQ_IO_THREADS 2

#ifdef EIGSTREAM_PIPELINE_GPU
#include "pipeline_gpu.h"
#endif

struct output_buffer;

typedef struct frame {
    protocol_header header; /* as received */
    void *a;                /* payload as received, then formed full matrices (in place) */
    size_t a_bytes;         /* capacity: matrices * n * n elements */
    void *w;                /* matrices * n real values of the precision */
    void *z;                /* matrices * n * n (CPU path with vectors), else NULL */
    int *info;              /* per matrix */
    uint32_t *signal_dim;   /* per matrix: fixed d or the MDL estimate */
    size_t *part_bytes;     /* payload part sizes seen by the receiver (matrices entries) */
    uint64_t received_ns;   /* CLOCK_MONOTONIC at the first part */
    uint64_t received_real_ns, solve_start_real_ns, solve_end_real_ns; /* for the meta part */
    int solver_failed;      /* the solve returned an error other than EIG_EMATRIX */
    int gpu_slot;           /* device slot in use (GPU path), else -1 */
    struct output_buffer *out; /* GPU path: filled by the solve stage's copies */
} frame;

typedef struct output_buffer {
    struct pipeline *owner;
    uint8_t header[PROTOCOL_HEADER_BYTES];
    uint8_t *meta;     /* protocol_meta_bytes(matrices) */
    uint8_t *data;     /* the largest data part of the output mode; pinned on the GPU path */
    size_t data_bytes; /* of the frame being sent */
    protocol_matrix_meta *matrix_meta; /* per matrix, before encoding */
} output_buffer;

typedef enum pipeline_thread {
    PIPELINE_THREAD_RECEIVE = 0,
    PIPELINE_THREAD_FORM,
    PIPELINE_THREAD_SOLVE,
    PIPELINE_THREAD_PUBLISH,
    PIPELINE_THREAD_METRICS,
    PIPELINE_THREAD_COUNT_
} pipeline_thread;

struct pipeline {
    eigstream_config cfg;
    /* What every frame must be, from the configuration. */
    uint32_t n, matrices;
    uint8_t element;       /* eig_precision */
    size_t element_bytes;  /* complex element */
    size_t real_bytes;     /* one eigenvalue */
    uint8_t mode;          /* protocol_output_mode */
    int need_vectors;      /* the output mode sends eigenvectors */
    double loading_factor; /* 10^(dB/10) */
    size_t max_payload_bytes;
    size_t output_data_capacity;

    void *zmq;
    void *input, *output, *metrics_socket;

    eig_plan *plan;       /* FULL, lower: every frame after forming */
    eig_backend backend;  /* resolved */
    int gpu;              /* the device-side path runs */
#ifdef EIGSTREAM_PIPELINE_GPU
    pipeline_gpu *device;
    eig_plan *plan_packed[2]; /* GPU path without forming: PACKED lower / upper */
#endif

    queue to_form, to_solve, to_publish;
    pool frames, outputs;
    metrics stats;
    log_limiter reject_limit[PROTOCOL_REJECT_COUNT_];
    log_limiter drop_limit[METRICS_DROP_COUNT_];

    atomic_int stop_requested;
    atomic_int metrics_stop;
    pthread_mutex_t metrics_lock; /* the metrics thread's timed wait */
    pthread_cond_t metrics_wake;
    int ran;
    pthread_t threads[PIPELINE_THREAD_COUNT_];
    char metrics_text[32768];     /* metrics thread only */
};

/* Stage thread bodies (stage_*.c); arg is the pipeline. */
void *pipeline_receive_main(void *arg);
void *pipeline_form_main(void *arg);
void *pipeline_solve_main(void *arg);
void *pipeline_publish_main(void *arg);
void *pipeline_metrics_main(void *arg);

/* Returns a frame to the pool (resetting per-frame state). */
void pipeline_frame_release(pipeline *p, frame *f);
/* Counts a drop and logs it (rate-limited), then releases the frame. */
void pipeline_frame_drop(pipeline *p, frame *f, metrics_drop reason);
/* Time since receipt has passed the deadline. */
int pipeline_frame_is_late(const pipeline *p, const frame *f, uint64_t now_ns);

/* Output layout (output.c). */
void output_matrix_layout(const pipeline *p, uint32_t signal_dim, uint32_t *k_sent,
                          uint32_t *first_index);
size_t output_matrix_bytes(const pipeline *p, uint32_t k_sent);
/* Computes the signal dimension of every matrix of f (fixed or MDL). */
void output_signal_dimensions(const pipeline *p, frame *f);
/* CPU path: copies values and the selected vectors of f into out->data and
 * fills out->matrix_meta; sets out->data_bytes. */
void output_assemble_host(const pipeline *p, const frame *f, output_buffer *out);

#endif
