/*
 * engine.h - struct pipeline and what the files that run the pipeline
 * (pipeline*.c) share. Not installed; app/ and tests use pipeline.h, the
 * stages (stage*.c) see only stage.h and stage_receive.h (their state and
 * the engine calls they make, through the opaque pipeline), and the
 * subsystems below the engine (protocol/, recording/, form/, metrics/) never
 * include it (tests/tools/test_layering.py checks both).
 *
 * Files, by job:
 *   pipeline.c          create / run / stop / destroy, counters
 *   pipeline_error.c    error values as text, the err message helper
 *   pipeline_frames.c   queues, frame and output pools, frame release / drop
 *   pipeline_sockets.c  the ZeroMQ context and sockets, flushing outputs
 *   pipeline_metrics.c  the periodic metrics thread: the JSON, the HTTP documents
 *                       (served by metrics/metrics_http.c)
 *   stage.h             what a stage sees: frame_shape, stage_context, stage,
 *                       publisher, the engine calls (frames, workers, sockets)
 *   stage.c             the loop every queue-fed stage runs
 *   stage_receive.{h,c}, stage_deal.c, stage_form.c, stage_solve.c, stage_publish.c
 *   pipeline_workers.c  the solver workers: creation, dealing, load, fallback
 *   stage_receive_file.c, stage_receive_merge.c  file input; several input sockets
 *   reorder.{h,c}       the publish stage's reorder window (its own library)
 *   pipeline_service.c  warm-up solve, stage health (watchdog), live settings (SIGHUP)
 *   pipeline_realtime.c realtime.*: GPU NUMA node, mlockall, thread priority, affinity, names
 *   (CURVE on the sockets: protocol/auth_zap.c and curve_keys.c)
 *   path*.{h,c,cu}      the frame's data path (path.c picks host or cuda,
 *                       path_plan.c the solver plan both create)
 *   output.{h,c}        what each matrix sends (the wire's layout) and its signal dimension
 *   queue, pool, receive_team  bounded queues, buffer pools, the receive copy team
 *
 * Solver workers (solver.workers, solver.gpu_devices; docs/daemon.md):
 *   receive -> to_form -> [deal] -> worker w: form -> to_solve -> solve
 *           -> to_publish -> publish (reorder window, by ticket)
 *   Each worker has its own path (plan, streams, device slots) and its own
 *   form and solve stage threads. With several workers the deal thread
 *   deals each frame to the worker with the fewest frames in flight (ties:
 *   the lowest index) and waits while every worker holds worker_capacity (3)
 *   frames or window_capacity frames are unpublished, so that the reorder
 *   window can never be full. With one worker there is no deal thread:
 *   its form stage takes frames from to_form itself, as before.
 *
 * Buffers (all allocated by pipeline_create, none per frame):
 *   frames   pool of 3 * queue_depth + 4 frames with one worker: enough for
 *            every inter-stage queue to be full while each of the four stages
 *            holds one, so the receiver never waits for a buffer; only the
 *            receive queue's overflow policy decides what happens under
 *            overload. Several workers: queue_depth + 3 + window_capacity
 *            (receiver, form queue, deal stage, everything unpublished).
 *            Either way plus io_threads - 1: with several input sockets the
 *            receiver holds a frame from each (stage_receive_merge.c).
 *   outputs  pool of output.hwm + 2 output buffers (several workers: plus
 *            window_capacity, pipeline_workers.c says why): a published
 *            frame's data part is sent zero-copy and its buffer comes back
 *            through ZeroMQ's release callback (any thread) once sent or
 *            discarded.
 * Both are the path's host memory (pinned on the cuda path).
 */
#ifndef EIGSTREAM_ENGINE_H
#define EIGSTREAM_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <zmq.h>

#include "auth_zap.h"
#include "config.h"
#include "connection_watch.h"
#include "error_text.h"
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
#include "stage.h"
#include "stage_receive.h"

/* Largest HTTP document (/api/metrics: the JSON plus 300 history points of
 * 12 series). */
#define PIPELINE_HTTP_DOCUMENT_BYTES (160 * 1024)

struct pipeline {
    eigstream_config cfg;            /* as created; the live settings are in live */
    pipeline_live live;              /* pipeline_live_get */
    int output_wait_ms;              /* publish thread only: the output's SNDTIMEO now */
    connection_watch *output_watch;  /* the output's connections (pipeline_sockets_flush), or NULL */
    frame_shape shape;               /* what every frame must be, from the configuration */
    stage_context context;           /* what the stages share (stage.h), pointing into this */

    path *path;                  /* worker 0's path: allocates every frame and output buffer */
    pipeline_worker workers[PIPELINE_WORKERS_MAX];
    int worker_count;
    size_t worker_capacity;      /* frames dealt to one worker at a time (pipeline_workers.c) */
    size_t window_capacity;      /* the reorder window: everything that may be unpublished */
    pthread_mutex_t deal_lock; /* worker loads (stats.worker[].in_flight) and unpublished */
    pthread_cond_t deal_room;
    size_t unpublished;          /* tickets given, not yet closed by the publish stage */
    uint64_t next_ticket;        /* the deal stage (or the one form stage) only */
    atomic_int publish_producers; /* worker stages still running: the last closes to_publish */
    pthread_t deal_thread;
    int dealing;                /* several workers: the deal thread runs */

    void *zmq;
    void *metrics_socket;
    auth_zap *auth;              /* security.* set: the ZAP handler, else NULL */
    struct {                     /* realtime.*: what pipeline_realtime_prepare found permitted */
        int numa_node;           /* the GPU's node (realtime.gpu_numa), -1 when not used */
        uint64_t numa_cpus[CONFIG_CPU_MAX / 64];
        int pinned[CONFIG_THREAD_COUNT_];
        uint64_t cpus[CONFIG_THREAD_COUNT_][CONFIG_CPU_MAX / 64];
        int priority;            /* SCHED_FIFO, 0 = none */
    } realtime;
    char curve_secret[CURVE_KEY_Z85_LENGTH + 1]; /* the server's secret key until the sockets are open */

    queue to_form, to_publish;
    pool frames, outputs;
    metrics stats;
    log_limiter drop_limit[METRICS_DROP_COUNT_];

    receiver receive;             /* the receive stage (stage_receive.h) */
    publisher publish;            /* the publish stage (stage.h) */
    pthread_t publish_thread;
    pthread_t receive_thread, metrics_thread;
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

/* The live settings, each field read atomically where a decision is made
 * (pipeline_service.c stores them). */
static inline const pipeline_live *pipeline_live_get(const pipeline *p)
{
    return &p->live;
}

/* The metrics thread (arg: the pipeline). */
void *pipeline_metrics_main(void *arg);

/* ---- pipeline_frames.c -------------------------------------------------------- */

/* The form and publish queues and the pools, every frame and output
 * buffer allocated from p->path (worker 0's). */
pipeline_error pipeline_frames_create(pipeline *p, char *err, size_t err_bytes);
void pipeline_frames_destroy(pipeline *p);

/* ---- pipeline_workers.c -------------------------------------------------------- */

/* Creates the workers' paths (worker 0 first: p->path, it allocates the
 * buffers), queues and stages, and the reorder window. */
pipeline_error pipeline_workers_create(pipeline *p, char *err, size_t err_bytes);
void pipeline_workers_destroy(pipeline *p);
/* Starts the publish stage, every worker's stages and (several workers) the
 * deal thread; returns the first pthread_create error (0: all started). */
int pipeline_workers_start(pipeline *p);
/* Joins what pipeline_workers_start started; the first stage error, or
 * PIPELINE_OK. */
pipeline_error pipeline_workers_join(pipeline *p);
/* The path new frames take on worker 0 (the backend name, the metrics). */
path *pipeline_active_path(const pipeline *p);

/* ---- pipeline_service.c ------------------------------------------------------- */

/* The first values, from p->cfg (pipeline_create). */
void pipeline_live_init(pipeline *p);

/* ---- pipeline_realtime.c ------------------------------------------------------ */

/* realtime.gpu_numa: after the path, before the host buffers (they follow
 * the memory policy set here). */
pipeline_error pipeline_realtime_numa(pipeline *p, char *err, size_t err_bytes);
/* Once every buffer is allocated: mlockall, and the priority and the CPU
 * sets tried; a refusal warns (left out) or, on_failure error, fails. */
pipeline_error pipeline_realtime_prepare(pipeline *p, char *err, size_t err_bytes);
/* realtime.cpu_affinity_io (or the GPU's node): the CPU set tried on this
 * thread, then given to the ZeroMQ context zmq_context, which pins its
 * background threads as it starts them: before the context's first socket.
 * A refusal warns or fails as above. */
pipeline_error pipeline_realtime_io(pipeline *p, void *zmq_context, char *err, size_t err_bytes);

/* ---- pipeline_sockets.c ------------------------------------------------------- */

/* RLIMIT_NOFILE against the file descriptors cfg needs (the count is
 * written out above sockets_fd_need in pipeline_sockets.c): the soft limit
 * is raised toward the hard one when short; below the minimum to start,
 * PIPELINE_ELIMIT with err naming the limit, the need and the settings; below
 * what every connection needs, a warning. Before any socket or thread. */
pipeline_error pipeline_check_fd_limit(const eigstream_config *cfg, char *err, size_t err_bytes);
/* The ZeroMQ context, the input, output and (when configured) metrics sockets. */
pipeline_error pipeline_sockets_open(pipeline *p, char *err, size_t err_bytes);
/* security.*: starts the ZAP handler's thread (after metrics_init: it counts). */
pipeline_error pipeline_sockets_auth_start(pipeline *p, char *err, size_t err_bytes);
/* Waits (at most the output linger) until ZeroMQ has released every output
 * buffer and the output's receivers have read every byte written. */
void pipeline_sockets_flush(pipeline *p);
/* Closes the sockets and terminates the context (waits for queued outputs). */
void pipeline_sockets_close(pipeline *p);

#endif
