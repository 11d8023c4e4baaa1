/*
 * stage.h - what a stage (stage*.c) sees of the engine: the frames' shape,
 * the live settings, its stage_context (the queues, pools, counters and
 * configuration every stage shares) and the few engine calls it makes,
 * through the opaque pipeline. struct pipeline itself is in engine.h, seen
 * only by the files that run the pipeline (pipeline*.c); the receive
 * stage's own state is in stage_receive.h.
 *
 * Ownership: the pipeline owns everything a context points to and outlives
 * every stage thread; a stage owns the struct it runs on (stage, publisher,
 * receiver) while its thread runs, and nothing else.
 */
#ifndef EIGSTREAM_STAGE_H
#define EIGSTREAM_STAGE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "eig.h"
#include "frame.h"
#include "log.h"
#include "metrics.h"
#include "output.h"
#include "path.h"
#include "pipeline.h"
#include "pipeline_error.h"
#include "pool.h"
#include "queue.h"

/* What every frame must be, from the configuration (pipeline_create). */
typedef struct frame_shape {
    uint32_t n, matrices;
    eig_precision precision;
    output_format format;        /* what each matrix sends (output.h) */
    size_t max_payload_bytes;    /* input.max_message_bytes */
    /* IQ input (form.input = iq): what every cube must be, besides n = channels. */
    int iq_input;
    uint32_t iq_pulses, iq_gates;
    uint8_t iq_format, iq_layout;
    size_t part_capacity;        /* entries of each frame's part_bytes: the most payload
                                    parts a valid frame has (matrices; IQ: channels or pulses) */
} frame_shape;

/* The settings SIGHUP may change while the pipeline runs (CONFIG_FLAG_LIVE
 * rows), each an atomic the stages read where they decide and
 * pipeline_apply_live stores. Every decision reads one of them, so a reload
 * needs no set published as a whole (an earlier version published
 * immutable copies and kept every replaced one until pipeline_destroy: a
 * few bytes a reload, for the daemon's lifetime). */
typedef struct pipeline_live {
    _Atomic int deadline_ms;
    _Atomic config_late_policy late_policy;
    _Atomic config_overflow_policy overflow_policy;
    _Atomic int metrics_interval_ms;
} pipeline_live;

struct pipeline_worker;

/* What every stage shares: set once by pipeline_create, before any thread. */
typedef struct stage_context {
    pipeline *p;                     /* for the engine calls below, nothing else */
    const eigstream_config *cfg;     /* as created (the live settings: live) */
    const frame_shape *shape;
    const pipeline_live *live;
    metrics *stats;
    queue *to_form, *to_publish;     /* receive -> form (or deal); workers -> publish */
    pool *frames, *outputs;
    struct pipeline_worker *workers; /* solver.workers of them */
    int worker_count;
    const atomic_int *stop_requested;
} stage_context;

/* What a stage's step did with a frame. */
typedef enum stage_outcome {
    STAGE_PASS = 0, /* hand it to the next stage */
    STAGE_DROP      /* dropped with the step's reason (counted by the publish stage) */
} stage_outcome;

/* One queue-fed stage: a worker's form or solve stage (stage.c: pops from
 * in, optionally drops frames past the deadline under late_policy drop
 * before the step, runs the step, observes the stage latency of passed
 * frames and pushes them to out; when in is closed and empty it closes out
 * and ends), or the publish stage (stage_publish.c, its own loop). */
typedef struct stage {
    const char *name;
    const stage_context *ctx;
    queue *in, *out;         /* out NULL for the last stage */
    metrics_stage metric;
    int drop_late;           /* check the deadline before the step */
    stage_outcome (*step)(struct stage *s, frame *f, metrics_drop_reason *reason);
    pipeline_error result;   /* what the thread ended with */
    /* Worker stages (form, solve): */
    struct pipeline_worker *worker; /* NULL for the publish stage */
    int takes_frames;        /* one worker: the form stage takes frames from to_form itself */
    int last_in_worker;      /* the solve stage: a frame passed on leaves the worker */
    /* Health (pipeline_service.c): CLOCK_MONOTONIC ns at which the frame
     * now in the step entered it, 0 while the stage waits for a frame or
     * for room in its output queue; the seq of that frame. */
    _Atomic uint64_t busy_since_ns;
    _Atomic uint64_t busy_seq;
    char label[24];          /* for health: "solve", or "solve (worker 1)" with several workers */
} stage;

/* One solver worker (pipeline_workers.c). */
typedef struct pipeline_worker {
    int index;
    int device;              /* CUDA device (solver.gpu_devices[index] or gpu_device) */
    path *path;              /* its own: plan, streams, pinned staging, device slots */
    path *fallback_path;     /* solver.fallback cpu: the host path, once switched to */
    atomic_int fallen_back;  /* 1 once fallback_path is the path its new frames take */
    queue to_form;           /* from the deal stage (several workers only) */
    queue to_solve;
    stage form, solve;
    pthread_t threads[2];
    int started;             /* threads started */
} pipeline_worker;

/* The publish stage (stage_publish.c) and what only it touches. */
struct reorder;
typedef struct publisher {
    stage stage;             /* in: the publish queue; health and result */
    struct reorder *window;  /* the reorder window (pipeline_workers.c creates it) */
    void *output;            /* the output socket (pipeline_sockets.c opens and closes it) */
    log_limiter gap_limit;   /* reorder gaps */
    log_limiter check_limit; /* self-check alarms */
} publisher;

/* Thread bodies: a worker stage (arg: its stage), the deal thread (several
 * workers; arg: the stage_context) and the publish stage's loop (arg: the
 * publisher), which owns the reorder window. */
void *stage_main(void *arg);
void *stage_deal_main(void *arg);
void *stage_publish_main(void *arg);

/* Step functions of the worker stages (stage_form.c, stage_solve.c). */
stage_outcome stage_form_step(stage *s, frame *f, metrics_drop_reason *reason);
stage_outcome stage_solve_step(stage *s, frame *f, metrics_drop_reason *reason);

/* ---- engine calls (p: the context's) ---------------------------------------------- */

/* Ends a frame's life: the path's hold on it (path_release), its output
 * buffer if it still owns one, then the frame itself back to the pool
 * (pipeline_frames.c). */
void pipeline_frame_release(pipeline *p, frame *f);
/* Counts a drop and logs it (rate-limited), then releases the frame. */
void pipeline_frame_drop(pipeline *p, frame *f, metrics_drop_reason reason);
/* Time since receipt has passed the deadline. */
int pipeline_frame_is_late(const pipeline *p, const frame *f, uint64_t now_ns);

/* Solver workers (pipeline_workers.c). A worker takes frame f: its ticket
 * (the publish order), its worker, the load counted. The deal stage picks
 * w with pipeline_worker_pick first. */
void pipeline_worker_take(pipeline *p, pipeline_worker *w, frame *f);
/* Dispatcher: the worker with the fewest frames in flight (ties: the lowest
 * index), waiting while none has room or the window is at capacity. */
pipeline_worker *pipeline_worker_pick(pipeline *p);
/* The frame left w (passed to publish or dropped in w's stages). */
void pipeline_worker_leave(pipeline *p, pipeline_worker *w);
/* A worker stage ended: the last of them closes the publish queue. */
void pipeline_worker_stage_ended(pipeline *p);
/* The publish stage closed a ticket (published, dropped or skipped frame). */
void pipeline_ticket_closed(pipeline *p);
/* The path w's new frames are formed and solved on: w->path, or the
 * fallback path once its solve stage has switched. */
path *pipeline_worker_path(const pipeline_worker *w);
/* w's solve stage only: after a path error, with solver.fallback cpu,
 * switches w to the host path with the cpu backend (created here, logged,
 * counted); once per worker. Returns 1 when w's path changed. */
int pipeline_worker_fall_back(pipeline *p, pipeline_worker *w);

/* Right after creating a thread: its name, CPU set, priority
 * (pipeline_realtime.c). which picks the CPU set (realtime.cpu_affinity_*);
 * worker names it: -1 or 0 the plain name (eigs-form), w > 0 the worker's
 * (eigs-form-1); the deal thread passes CONFIG_THREAD_FORM and -1
 * (eigs-deal, the form CPU set). */
void pipeline_realtime_thread(pipeline *p, pthread_t thread, config_realtime_thread which, int worker);

/* The output (XPUB) and metrics (XPUB) sockets take subscriptions by hand
 * (ZMQ_XPUB_MANUAL, pipeline_sockets.c): the owner thread reads the
 * subscription messages waiting on s and applies only those that are a
 * prefix of what s sends (`sends`, sends_bytes long: the eigenspace prefix;
 * the metrics socket "" only); every other subscription is refused and
 * counted, so that the trie ZeroMQ matches each message against holds at
 * most sends_bytes + 1 prefixes per subscriber. Drains everything waiting.
 * (ZeroMQ 4.3 still keeps every subscription a client sent, in XPUB_MANUAL
 * mode too, until it disconnects: docs/operations.md, Limits.) */
void pipeline_subscriptions_apply(pipeline *p, void *s, const uint8_t *sends, size_t sends_bytes);
/* Publish thread only: sets the output's bounded send wait from the live
 * deadline when that changed (ZeroMQ sockets belong to one thread). */
void pipeline_sockets_output_wait_update(pipeline *p);

#endif
