/*
 * engine.h - what the engine's files (the .c files of pipeline/) share: the pipeline
 * object, the stage loop and the frame helpers. Not installed; app/ and
 * tests use pipeline.h, and the subsystems below the engine (protocol/,
 * recording/, form/, metrics/) never include it.
 *
 * Files, by job:
 *   pipeline.c          create / run / stop / destroy, counters
 *   pipeline_error.c    error values as text, the err message helper
 *   pipeline_frames.c   queues, frame and output pools, frame release / drop
 *   pipeline_sockets.c  the ZeroMQ context and sockets, flushing outputs
 *   pipeline_metrics.c  the periodic metrics thread: the JSON, the HTTP documents
 *                       (served by metrics/metrics_http.c)
 *   stage.c             the loop every queue-fed stage runs
 *   stage_receive.c, stage_deal.c, stage_form.c, stage_solve.c, stage_publish.c
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
#include "dispatch_client.h"
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
#include "receive_team.h"
#include "recording.h"

/* Largest HTTP document (/api/metrics: the JSON plus 300 history points of
 * 12 series). */
#define PIPELINE_HTTP_DOCUMENT_BYTES (160 * 1024)

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
    struct pipeline *p;
    queue *in, *out;         /* out NULL for the last stage */
    metrics_stage metric;
    int drop_late;           /* check the deadline before the step */
    stage_outcome (*step)(struct pipeline *p, frame *f, metrics_drop_reason *reason);
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

struct pipeline {
    eigstream_config cfg;            /* as created; the live settings are in live */
    pipeline_live live;              /* pipeline_live_get */
    int output_wait_ms;              /* publish thread only: the output's SNDTIMEO now */
    /* What every frame must be, from the configuration. */
    uint32_t n, matrices;
    eig_precision precision;
    output_format format;
    size_t max_payload_bytes;
    /* IQ input (form.input = iq): what every cube must be, besides n = channels. */
    int iq_input;
    uint32_t iq_pulses, iq_gates;
    uint8_t iq_format, iq_layout;
    size_t part_capacity;        /* entries of each frame's part_bytes: the most payload
                                    parts a valid frame has (matrices; IQ: channels or pulses) */

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
    struct reorder *window;      /* publish stage only */
    recording_reader *recording; /* file input (input.endpoint = "file:NAME"), else NULL */
    uint8_t *recorded_frame;     /* file input: one recorded frame's bytes */
    size_t recorded_frame_bytes;

    void *zmq;
    void *inputs[CONFIG_INPUT_IO_THREADS_MAX]; /* input.io_threads sockets (inputs[0] the only one mostly) */
    void *output, *metrics_socket;
    auth_zap *auth;              /* security.* set: the ZAP handler, else NULL */
    struct {                     /* realtime.*: what pipeline_realtime_prepare found permitted */
        int numa_node;           /* the GPU's node (realtime.gpu_numa), -1 when not used */
        uint64_t numa_cpus[CONFIG_CPU_MAX / 64];
        int pinned[CONFIG_THREAD_COUNT_];
        uint64_t cpus[CONFIG_THREAD_COUNT_][CONFIG_CPU_MAX / 64];
        int priority;            /* SCHED_FIFO, 0 = none */
    } realtime;
    char curve_secret[CURVE_KEY_Z85_LENGTH + 1]; /* the server's secret key until the sockets are open */
    dispatch_client *dispatch;   /* input.pattern dispatch: credit and heartbeats on input, else NULL */

    queue to_form, to_publish;
    pool frames, outputs;
    metrics stats;
    log_limiter reject_limit[PROTOCOL_REJECT_COUNT_];
    log_limiter drop_limit[METRICS_DROP_COUNT_];
    log_limiter gap_limit;        /* publish stage: reorder gaps */
    log_limiter check_limit;      /* publish stage: self-check alarms */
    log_limiter input_late_limit; /* receive merge: frames that came after it went on */

    stage publish;
    pthread_t publish_thread;
    pthread_t receive_thread, metrics_thread;
    pipeline_error receive_result;
    /* The receive stage's message in hand: its payload parts (part_capacity
     * of each), and the team that copies them (input.copy_threads; NULL: the
     * receive thread alone). */
    zmq_msg_t *receive_parts;
    receive_part *receive_list;
    receive_team *receive_team;

    uint64_t last_seq;            /* receive thread only: the last accepted frame's seq */
    int seq_seen;                 /* ... once a frame was accepted */
    /* The fragmented frame being assembled in the receiver's frame buffer
     * (receive thread only; docs/protocol.md, "Fragmented covariance frames"). */
    struct {
        int active;
        protocol_fragments f; /* its header so far and the matrix it waits for */
        uint64_t last_ns;     /* CLOCK_MONOTONIC when it began or a fragment last joined */
    } assembly;

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


/* The receive stage's buffers and its copy team (input.copy_threads), each
 * helper with the receive thread's realtime settings; _release frees them. */
pipeline_error pipeline_receive_prepare(pipeline *p, char *err, size_t err_bytes);
void pipeline_receive_release(pipeline *p);

/* Thread bodies; arg is the pipeline (receive, metrics) or the stage. */
void *pipeline_receive_merge_main(void *arg);
void *pipeline_receive_main(void *arg);
void *pipeline_receive_file_main(void *arg);
void *pipeline_metrics_main(void *arg);
void *stage_main(void *arg);
/* The deal thread (several workers; arg: the pipeline) and the publish
 * stage's loop (arg: p->publish), which owns the reorder window. */
void *stage_deal_main(void *arg);
void *stage_publish_main(void *arg);

/* Step functions of the worker stages (stage_form.c, stage_solve.c). */
stage_outcome stage_form_step(pipeline *p, frame *f, metrics_drop_reason *reason);
stage_outcome stage_solve_step(pipeline *p, frame *f, metrics_drop_reason *reason);

/* ---- stage_receive.c: what the ZeroMQ and the file input share ----------------- */

/* Decodes a header part into f->header and checks it against what the
 * daemon takes: a covariance frame of its n, matrices and precision, or
 * with form.input = iq an IQ cube of its channels, pulses, gates, format and
 * layout (the other kind is bad_kind). */
protocol_reject receive_check_header(const pipeline *p, frame *f, const void *part, size_t part_bytes, char *detail,
                                     size_t detail_bytes);
/* Copies the payload parts back to back into f->a from byte offset on (a
 * fragment's place; 0 for a whole frame) with the CRC (when the message
 * carries one) and the NaN/Inf check of what was copied, on the receive
 * team (receive_team.h; the caller alone without one). */
receive_verdict receive_copy_payload(pipeline *p, frame *f, size_t offset, const receive_part *parts, size_t count);
/* The checks once the payload is in f->a (f->part_bytes holds the part
 * sizes): sizes against the header, CRC, finite entries (none for ci16_le
 * cubes), MDL's K (IQ input always has it). */
protocol_reject receive_check_payload(const pipeline *p, frame *f, size_t parts, size_t copied,
                                      const receive_verdict *scan, char *detail, size_t detail_bytes);
typedef enum receive_result {
    RECEIVE_NOTHING = 0, /* no message was waiting */
    RECEIVE_FRAME,       /* a valid frame is in f */
    RECEIVE_FRAGMENT,    /* a fragment joined the frame being assembled in f: keep f */
    RECEIVE_REJECTED,
    RECEIVE_FATAL        /* the socket or context is gone */
} receive_result;

/* Reads one whole message from socket into f (nothing waiting: NOTHING); a
 * fragment goes into its place in f, the frame being assembled there, which
 * is a FRAME once its last fragment joined. On RECEIVE_REJECTED *reason and
 * detail say why. */
receive_result receive_message(pipeline *p, void *socket, frame *f, protocol_reject *reason, char *detail,
                               size_t detail_bytes);
/* Counts and logs (rate-limited) a rejected message. */
void receive_reject(pipeline *p, protocol_reject reason, const char *detail);
/* Gives up the fragmented frame being assembled, if any (counted incomplete,
 * `why` in the log line), and when `stale` only one that has waited past
 * input.fragment_timeout_ms for its next fragment at now_ns. */
void receive_assembly_give_up(pipeline *p, const char *why, int stale, uint64_t now_ns);
/* Counts an accepted frame and queues it under the overflow policy. */
void receive_accept(pipeline *p, frame *f);
/* The same for a frame the merge had gone on without (stage_receive_merge.c):
 * counted in input_late, not as a restart; the seq seen so far stays. */
void receive_accept_late(pipeline *p, frame *f);

/* ---- stage_receive_file.c ------------------------------------------------------ */

/* Opens the recording of a file input and checks it holds covariance frames
 * of the configured n, matrices and precision (err names the mismatch). */
pipeline_error pipeline_recording_open(pipeline *p, const char *name, char *err, size_t err_bytes);
void pipeline_recording_close(pipeline *p);

/* ---- pipeline_frames.c -------------------------------------------------------- */

/* The form and publish queues and the pools, every frame and output
 * buffer allocated from p->path (worker 0's). */
pipeline_error pipeline_frames_create(pipeline *p, char *err, size_t err_bytes);
void pipeline_frames_destroy(pipeline *p);
/* Ends a frame's life: the path's hold on it (path_release), its output
 * buffer if it still owns one, then the frame itself back to the pool. */
void pipeline_frame_release(pipeline *p, frame *f);
/* Counts a drop and logs it (rate-limited), then releases the frame. */
void pipeline_frame_drop(pipeline *p, frame *f, metrics_drop_reason reason);
/* Time since receipt has passed the deadline. */
int pipeline_frame_is_late(const pipeline *p, const frame *f, uint64_t now_ns);

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
/* A worker takes frame f: its ticket (the publish order), its worker, the
 * load counted. The deal stage picks w with pipeline_worker_pick first. */
void pipeline_worker_take(pipeline *p, pipeline_worker *w, frame *f);
/* Dispatcher: the worker with the fewest frames in flight (ties: the lowest
 * index), waiting while none has room or the window is at capacity. */
pipeline_worker *pipeline_worker_pick(pipeline *p);
/* The frame left w (passed to publish or dropped in w's stages). */
void pipeline_worker_leave(pipeline *p, pipeline_worker *w);
/* The publish stage closed a ticket (published, dropped or skipped frame). */
void pipeline_ticket_closed(pipeline *p);

/* The path w's new frames are formed and solved on: w->path, or the
 * fallback path once its solve stage has switched. */
path *pipeline_worker_path(const pipeline_worker *w);
/* The path new frames take on worker 0 (the backend name, the metrics). */
path *pipeline_active_path(const pipeline *p);
/* w's solve stage only: after a path error, with solver.fallback cpu,
 * switches w to the host path with the cpu backend (created here, logged,
 * counted); once per worker. Returns 1 when w's path changed. */
int pipeline_worker_fall_back(pipeline *p, pipeline_worker *w);

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
/* Right after creating a thread: its name, CPU set, priority. which picks
 * the CPU set (realtime.cpu_affinity_*); worker names it: -1 or 0 the plain
 * name (eigs-form), w > 0 the worker's (eigs-form-1); the deal thread
 * passes CONFIG_THREAD_FORM and -1 (eigs-deal, the form CPU set). */
void pipeline_realtime_thread(pipeline *p, pthread_t thread, config_realtime_thread which, int worker);

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
/* The output (XPUB) and metrics (XPUB) sockets take subscriptions by hand
 * (ZMQ_XPUB_MANUAL): the owner thread reads the subscription messages
 * waiting on s and applies only those that are a prefix of what s sends
 * (`sends`, sends_bytes long: the eigenspace prefix; the metrics socket
 * "" only); every other subscription is refused and counted, so that the
 * trie ZeroMQ matches each message against holds at most sends_bytes + 1
 * prefixes per subscriber. Drains everything waiting. (ZeroMQ 4.3 still
 * keeps every subscription a client sent, in XPUB_MANUAL mode too, until
 * it disconnects: docs/operations.md, Limits.) */
void pipeline_subscriptions_apply(pipeline *p, void *s, const uint8_t *sends, size_t sends_bytes);
/* Waits (at most the output linger) until ZeroMQ has released every output buffer. */
void pipeline_sockets_flush(pipeline *p);
/* Publish thread only: sets the output's bounded send wait from the live
 * deadline when that changed (ZeroMQ sockets belong to one thread). */
void pipeline_sockets_output_wait_update(pipeline *p);
/* Closes the sockets and terminates the context (waits for queued outputs). */
void pipeline_sockets_close(pipeline *p);

#endif
