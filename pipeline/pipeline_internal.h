/*
 * pipeline_internal.h - what the pipeline's files share: the pipeline
 * object, the stage loop and the frame helpers. Not installed; app/ and
 * tests use pipeline.h.
 *
 * Files, by job:
 *   pipeline.c          create / run / stop / destroy, counters
 *   pipeline_error.c    error values as text, the err message helper
 *   pipeline_frames.c   queues, frame and output pools, frame release / drop
 *   pipeline_sockets.c  the ZeroMQ context and sockets, flushing outputs
 *   pipeline_metrics.c  the periodic metrics thread: the JSON, the HTTP documents
 *   metrics_http.c      the HTTP server (dashboard, /metrics, /api/metrics)
 *   metrics_prometheus.c, metrics_history.c, process_stats.c  what it serves
 *   stage.c             the loop every queue-fed stage runs
 *   stage_receive.c, stage_form.c, stage_solve.c, stage_publish.c
 *   path*.{h,c,cu}      the frame's data path (path.c picks host or cuda,
 *                       path_plan.c the solver plan both create)
 *   output.{h,c}        the eigenspace data layout
 *
 * Buffers (all allocated by pipeline_create, none per frame):
 *   frames   pool of 3 * queue_depth + 4 frames: enough for every inter-stage
 *            queue to be full while each of the four stages holds one, so the
 *            receiver never waits for a buffer; only the receive queue's
 *            overflow policy decides what happens under overload.
 *   outputs  pool of output.hwm + 2 output buffers: a published frame's data
 *            part is sent zero-copy and its buffer comes back through
 *            ZeroMQ's release callback (any thread) once sent or discarded.
 * Both are the path's host memory (pinned on the cuda path).
 */
#ifndef EIGSTREAM_PIPELINE_INTERNAL_H
#define EIGSTREAM_PIPELINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "dispatch_client.h"
#include "eig.h"
#include "frame.h"
#include "log.h"
#include "metrics.h"
#include "metrics_history.h"
#include "metrics_http.h"
#include "output.h"
#include "path.h"
#include "pipeline.h"
#include "pool.h"
#include "protocol.h"
#include "queue.h"
#include "recording.h"

/* Largest HTTP document (/api/metrics: the JSON plus 300 history points of
 * 12 series). */
#define PIPELINE_HTTP_DOCUMENT_BYTES (160 * 1024)

/* ZeroMQ I/O threads of the daemon: one for the input, one for the output. */
#define PIPELINE_ZMQ_IO_THREADS 2

/* What a stage's step did with a frame. */
typedef enum stage_outcome {
    STAGE_PASS = 0, /* hand it to the next stage */
    STAGE_DONE,     /* the step ended the frame itself (published) */
    STAGE_DROP      /* the loop drops it, counted with the step's reason */
} stage_outcome;

/* One queue-fed stage (stage.c): pops from in, optionally drops frames past
 * the deadline under late_policy drop before the step, runs the step,
 * observes the stage latency of passed frames and pushes them to out. When
 * in is closed and empty it closes out (if any) and ends. */
typedef struct stage {
    const char *name;
    struct pipeline *p;
    queue *in, *out;         /* out NULL for the last stage */
    metrics_stage metric;
    int drop_late;           /* check the deadline before the step */
    stage_outcome (*step)(struct pipeline *p, frame *f, pipeline_drop_reason *reason);
    pipeline_error result;   /* what the thread ended with */
} stage;

typedef enum pipeline_stage_index {
    PIPELINE_STAGE_FORM = 0,
    PIPELINE_STAGE_SOLVE,
    PIPELINE_STAGE_PUBLISH,
    PIPELINE_STAGE_COUNT_
} pipeline_stage_index;

struct pipeline {
    eigstream_config cfg;
    /* What every frame must be, from the configuration. */
    uint32_t n, matrices;
    eig_precision precision;
    output_format format;
    size_t max_payload_bytes;

    path *path;                  /* created first: owns every frame and output buffer */
    path *fallback_path;         /* solver.fallback cpu: the host path, once switched to */
    atomic_int fallen_back;      /* 1 once fallback_path is the path new frames take */
    recording_reader *recording; /* file input (input.endpoint = "file:NAME"), else NULL */
    uint8_t *recorded_frame;     /* file input: one recorded frame's bytes */
    size_t recorded_frame_bytes;

    void *zmq;
    void *input, *output, *metrics_socket;
    dispatch_client *dispatch;   /* input.pattern dispatch: credit and heartbeats on input, else NULL */

    queue to_form, to_solve, to_publish;
    pool frames, outputs;
    metrics stats;
    log_limiter reject_limit[PROTOCOL_REJECT_COUNT_];
    log_limiter drop_limit[PIPELINE_DROP_COUNT_];

    stage stages[PIPELINE_STAGE_COUNT_];
    pthread_t stage_threads[PIPELINE_STAGE_COUNT_];
    pthread_t receive_thread, metrics_thread;
    pipeline_error receive_result;
    uint64_t last_seq;            /* receive thread only: the last accepted frame's seq */
    int seq_seen;                 /* ... once a frame was accepted */

    atomic_int stop_requested;
    atomic_int metrics_stop;
    pthread_mutex_t metrics_lock; /* the metrics thread's timed wait */
    pthread_cond_t metrics_wake;
    int ran;
    char metrics_text[32768];     /* metrics thread only */
    metrics_http *http;           /* NULL when metrics.http is "" */
    metrics_history history;      /* metrics thread only */
    char http_text[PIPELINE_HTTP_DOCUMENT_BYTES]; /* metrics thread only: documents are formatted here */
};

/* err <- the formatted message (NULL or 0 bytes: nothing). */
void pipeline_set_error(char *err, size_t err_bytes, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Thread bodies; arg is the pipeline (receive, metrics) or the stage. */
void *pipeline_receive_main(void *arg);
void *pipeline_receive_file_main(void *arg);
void *pipeline_metrics_main(void *arg);
void *stage_main(void *arg);

/* Step functions of the queue-fed stages (stage_form.c, stage_solve.c,
 * stage_publish.c). */
stage_outcome stage_form_step(pipeline *p, frame *f, pipeline_drop_reason *reason);
stage_outcome stage_solve_step(pipeline *p, frame *f, pipeline_drop_reason *reason);
stage_outcome stage_publish_step(pipeline *p, frame *f, pipeline_drop_reason *reason);

/* ---- stage_receive.c: what the ZeroMQ and the file input share ----------------- */

/* The CRC and the NaN/Inf check of a payload, done chunk by chunk as it is
 * copied into the frame. */
typedef struct payload_scan {
    uint32_t crc;          /* CRC32C of everything copied so far */
    size_t checked;        /* bytes of f->a checked for NaN/Inf (whole elements) */
    protocol_reject finite;
} payload_scan;

/* Decodes a header part into f->header and checks it against what the
 * daemon takes (a covariance frame of its n, matrices and precision). */
protocol_reject receive_check_header(const pipeline *p, frame *f, const void *part, size_t part_bytes, char *detail,
                                     size_t detail_bytes);
/* Copies bytes from src to f->a + *copied, scanning them; *copied grows. */
void receive_copy_and_check(frame *f, payload_scan *scan, const uint8_t *src, size_t bytes, size_t *copied);
/* The checks once the payload is in f->a (f->part_bytes holds the part
 * sizes): sizes against the header, CRC, finite entries, MDL's K. */
protocol_reject receive_check_payload(const pipeline *p, frame *f, size_t parts, size_t copied,
                                      const payload_scan *scan, char *detail, size_t detail_bytes);
/* Counts and logs (rate-limited) a rejected message. */
void receive_reject(pipeline *p, protocol_reject reason, const char *detail);
/* Counts an accepted frame and queues it under the overflow policy. */
void receive_accept(pipeline *p, frame *f);

/* ---- stage_receive_file.c ------------------------------------------------------ */

/* Opens the recording of a file input and checks it holds covariance frames
 * of the configured n, matrices and precision (err names the mismatch). */
pipeline_error pipeline_recording_open(pipeline *p, const char *name, char *err, size_t err_bytes);
void pipeline_recording_close(pipeline *p);

/* ---- pipeline_frames.c -------------------------------------------------------- */

/* Queues and pools, every frame and output buffer allocated from p->path. */
pipeline_error pipeline_frames_create(pipeline *p, char *err, size_t err_bytes);
void pipeline_frames_destroy(pipeline *p);
/* Ends a frame's life: the path's hold on it (path_release), its output
 * buffer if it still owns one, then the frame itself back to the pool. */
void pipeline_frame_release(pipeline *p, frame *f);
/* Counts a drop and logs it (rate-limited), then releases the frame. */
void pipeline_frame_drop(pipeline *p, frame *f, pipeline_drop_reason reason);
/* Time since receipt has passed the deadline. */
int pipeline_frame_is_late(const pipeline *p, const frame *f, uint64_t now_ns);

/* The path new frames are formed and solved on: p->path, or the fallback
 * path once the solve stage has switched (pipeline_frames.c). */
path *pipeline_active_path(const pipeline *p);
/* Solve stage only: after a path error, with solver.fallback cpu, switches
 * to the host path with the cpu backend (created here, logged, counted);
 * once only. Returns 1 when the active path changed. */
int pipeline_path_fall_back(pipeline *p);

/* ---- pipeline_sockets.c ------------------------------------------------------- */

/* The ZeroMQ context, the input, output and (when configured) metrics sockets. */
pipeline_error pipeline_sockets_open(pipeline *p, char *err, size_t err_bytes);
/* Waits (at most the output linger) until ZeroMQ has released every output buffer. */
void pipeline_sockets_flush(pipeline *p);
/* Closes the sockets and terminates the context (waits for queued outputs). */
void pipeline_sockets_close(pipeline *p);

#endif
