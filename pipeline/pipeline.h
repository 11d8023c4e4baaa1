/*
 * pipeline.h - the streaming daemon's engine: receive and validate -> form ->
 * solve -> publish, each stage its own thread, joined by bounded queues.
 *
 * Lifecycle (app/main.c):
 *   pipeline_create(&p, &cfg, err, sizeof err)  binds/connects sockets, creates
 *                                               the solver plan, allocates every
 *                                               frame buffer (none per frame later)
 *   pipeline_run(p)                             blocks until stopped and drained
 *   pipeline_stop(p)                            from another thread (signal
 *                                               watcher): stop accepting, finish
 *                                               and publish what was accepted
 *   pipeline_destroy(&p)
 */
#ifndef EIGSTREAM_PIPELINE_H
#define EIGSTREAM_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "auth_zap.h" /* auth_zap_reject: auth_rejected's index */
#include "config.h"
#include "metrics.h"  /* metrics_drop_reason: dropped's index */
#include "pipeline_error.h"
#include "protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pipeline pipeline;


pipeline_error pipeline_create(pipeline **out, const eigstream_config *cfg, char *err,
                               size_t err_bytes);
/* Runs until pipeline_stop, or until a stage meets a fatal error (the input
 * socket failing: PIPELINE_ESOCKET), then drains what was accepted. Returns
 * PIPELINE_OK after a clean stop, else the first fatal error (logged with
 * its reason). */
pipeline_error pipeline_run(pipeline *p);
/* Thread-safe; returns at once. */
void pipeline_stop(pipeline *p);
void pipeline_destroy(pipeline **p);

/* ---- introspection (tests, the bench, the final accounting line) ------------ */

/* Most solver workers (solver.gpu_devices entries, solver.workers): the
 * metrics keep a row per worker. */
#define PIPELINE_WORKERS_MAX METRICS_WORKERS_MAX

/* A snapshot of the counters (each exact; not atomic as a whole while running).
 * After pipeline_run returns: in == out + sum(dropped), in_flight == 0. */
typedef struct pipeline_counters {
    uint64_t in;   /* frames accepted (valid) */
    uint64_t out;  /* frames published, late ones included */
    uint64_t late; /* published with PROTOCOL_FLAG_LATE (dropped late ones: dropped[LATE]) */
    uint64_t dropped[METRICS_DROP_COUNT_];
    uint64_t rejected[PROTOCOL_REJECT_COUNT_]; /* index: protocol_reject */
    uint64_t rejected_total;
    uint64_t in_flight;        /* accepted, not yet published or dropped */
    uint64_t matrices_failed;  /* matrices published with info != 0 */
    uint64_t overflow_blocked; /* overflow_policy block: times the receiver waited */
    uint64_t source_restarts;  /* accepted frames whose seq did not increase (source restart) */
    uint64_t input_late;       /* came on one input connection after the merge went past their seq */
    uint64_t solver_fallbacks; /* switches to the host path (solver.fallback cpu) */
    uint64_t auth_rejected[AUTH_ZAP_REJECT_COUNT_]; /* refused clients (security.*) */
    uint64_t auth_retries[AUTH_ZAP_REJECT_COUNT_];  /* refusals of clients refused lately (reconnects) */
    uint64_t reorder_gaps;     /* frames the reorder window stopped waiting for (a later frame's
                                  deadline passed): each is published out of order or dropped late */
    uint64_t out_of_order;     /* frames published after a later one (flagged late) */
    uint64_t self_checked;     /* frames whose sampled matrix was self-checked as the publish stage took them (a send may still drop them) */
    uint64_t self_check_failed; /* ... and failed it (sent with PROTOCOL_FLAG_CHECK_FAILED) */
    int workers;               /* solver workers */
    uint64_t worker_frames[PIPELINE_WORKERS_MAX]; /* frames dealt to each worker; they sum to the
                                  frames that left the form queue */
    int worker_in_flight[PIPELINE_WORKERS_MAX]; /* dealt, not yet through the worker's solve stage */
} pipeline_counters;

void pipeline_get_counters(const pipeline *p, pipeline_counters *c);
/* The backend the solver plan resolved to ("cpu", "lapack", "cuda"). */
const char *pipeline_backend_name(const pipeline *p);
/* The port the HTTP metrics server listens on, 0 when metrics.http is "". */
int pipeline_metrics_http_port(const pipeline *p);
/* Copies the latest metrics JSON document into buf (NUL-terminated); returns
 * its length, 0 when none was formatted yet or cap is too small. */
size_t pipeline_metrics_json(pipeline *p, char *buf, size_t cap);

/* ---- running as a service (pipeline_service.c; app/service_*.c use them) ----- */

/* One solve on every solver worker's path before the first frame, so that
 * the first frame does not pay for first-touch costs (the CUDA context,
 * kernel loading, the solver's workspace, IQ forming's FFT plans): a frame
 * buffer from the pool holds `matrices` diagonal matrices diag(1, 2, ..., n)
 * (IQ input: an all-zero cube), which is formed and solved like a received
 * frame; the eigenvalues must come back as 1..n (IQ input: 0) with info 0,
 * else PIPELINE_ESOLVER and err says what came back (and which worker).
 * Call after pipeline_create and before pipeline_run, from one thread. */
pipeline_error pipeline_warm_up(pipeline *p, char *err, size_t err_bytes);

/* The pipeline's health for the service watchdog. A stage (form, solve,
 * publish) is stalled when the frame in its step (forming; the solve; the
 * output wait and the send) entered it more than stall_ns ago. A stage
 * waiting for a frame (idle) or for room in the next stage's queue
 * (back-pressure: the stage downstream is then busy or stalled itself, and
 * is judged on its own) is never stalled; neither is the receiver, which
 * only waits on its socket, copies one message, or waits for queue room.
 * healthy = no stage stalled; else the stalled stage furthest downstream
 * (one upstream of it may only be waiting for it: the solve step waits for
 * a free output buffer, which the publish stage and ZeroMQ give back).
 * Several solver workers: every worker's form and solve stage is checked;
 * publish, then the solve stages, then the form stages, and among stalled
 * stages of one kind the one stalled longest. */
typedef struct pipeline_health {
    int healthy;
    const char *stalled_stage; /* "form", "solve", "publish"; with several solver workers
                                  "form (worker W)", "solve (worker W)"; NULL when healthy */
    uint64_t stalled_ns;       /* how long its frame has been in the step */
    uint64_t stalled_seq;      /* that frame's seq */
} pipeline_health;

void pipeline_check_health(const pipeline *p, uint64_t stall_ns, pipeline_health *h);

/* Applies the CONFIG_FLAG_LIVE settings of cfg (log.level, frame.deadline_ms,
 * frame.late_policy, frame.overflow_policy, metrics.interval_ms) to the
 * running pipeline, all at once: a stage reads either the old set or the new
 * one, never a mix. cfg must have passed config_validate; the other
 * settings of cfg are ignored (the caller refuses their changes). One caller
 * at a time. PIPELINE_ENOMEM leaves the old set in force. */
pipeline_error pipeline_apply_live(pipeline *p, const eigstream_config *cfg);

#ifdef __cplusplus
}
#endif

#endif
