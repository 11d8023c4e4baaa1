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

#include "config.h"
#include "protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pipeline pipeline;

typedef enum pipeline_error {
    PIPELINE_OK = 0,
    PIPELINE_EINVAL,  /* configuration the pipeline cannot run */
    PIPELINE_ENOMEM,
    PIPELINE_ESOCKET, /* a ZeroMQ socket could not be created, bound or connected */
    PIPELINE_ESOLVER, /* the solver plan could not be created, or a solve failed as a whole */
    PIPELINE_ETHREAD, /* a stage thread could not be started */
    PIPELINE_EDEVICE  /* a CUDA call of the frame path failed */
} pipeline_error;

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
const char *pipeline_strerror(pipeline_error e);

/* ---- introspection (tests, the bench, the final accounting line) ------------ */

/* Why an accepted frame was not published (metrics key in parentheses;
 * pipeline_drop_name gives it). */
typedef enum pipeline_drop_reason {
    PIPELINE_DROP_OVERFLOW = 0, /* "overflow": evicted by overflow_policy drop_oldest */
    PIPELINE_DROP_LATE,         /* "late": past the deadline with late_policy drop */
    PIPELINE_DROP_SOLVER,       /* "solver_error": forming or the solver failed as a whole */
    PIPELINE_DROP_SEND,         /* "send_failed": the output socket refused it (PUSH: no peer
                                   took it within frame.deadline_ms) */
    PIPELINE_DROP_SUBSCRIBER,   /* "subscriber_slow": PUB output, a subscriber stayed at its
                                   HWM for frame.deadline_ms (XPUB NODROP refused the send) */
    PIPELINE_DROP_COUNT_
} pipeline_drop_reason;

/* Why a client was refused by the CURVE sockets (security.*; auth_zap.h);
 * pipeline_auth_reject_name gives the metrics key. */
typedef enum pipeline_auth_reject {
    PIPELINE_AUTH_KEY_NOT_ALLOWED = 0, /* "key_not_allowed": a CURVE key not in security.curve_allow */
    PIPELINE_AUTH_PLAINTEXT,           /* "plaintext": a client without CURVE */
    PIPELINE_AUTH_HANDSHAKE,           /* "handshake": any other failed handshake */
    PIPELINE_AUTH_COUNT_
} pipeline_auth_reject;

const char *pipeline_auth_reject_name(pipeline_auth_reject r);
/* Most solver workers (solver.gpu_devices entries, solver.workers). */
#define PIPELINE_WORKERS_MAX 16

/* A snapshot of the counters (each exact; not atomic as a whole while running).
 * After pipeline_run returns: in == out + sum(dropped), in_flight == 0. */
typedef struct pipeline_counters {
    uint64_t in;   /* frames accepted (valid) */
    uint64_t out;  /* frames published, late ones included */
    uint64_t late; /* published with PROTOCOL_FLAG_LATE (dropped late ones: dropped[LATE]) */
    uint64_t dropped[PIPELINE_DROP_COUNT_];
    uint64_t rejected[PROTOCOL_REJECT_COUNT_]; /* index: protocol_reject */
    uint64_t rejected_total;
    uint64_t in_flight;        /* accepted, not yet published or dropped */
    uint64_t matrices_failed;  /* matrices published with info != 0 */
    uint64_t overflow_blocked; /* overflow_policy block: times the receiver waited */
    uint64_t source_restarts;  /* accepted frames whose seq did not increase (source restart) */
    uint64_t input_late;       /* came on one input connection after the merge went past their seq */
    uint64_t solver_fallbacks; /* switches to the host path (solver.fallback cpu) */
    uint64_t auth_rejected[PIPELINE_AUTH_COUNT_]; /* refused clients (security.*) */
    uint64_t reorder_gaps;     /* frames the reorder window stopped waiting for (a later frame's
                                  deadline passed): each is published out of order or dropped late */
    uint64_t out_of_order;     /* frames published after a later one (flagged late) */
    int workers;               /* solver workers */
    uint64_t worker_frames[PIPELINE_WORKERS_MAX]; /* frames dealt to each worker; they sum to the
                                  frames that left the form queue */
    int worker_in_flight[PIPELINE_WORKERS_MAX]; /* dealt, not yet through the worker's solve stage */
} pipeline_counters;

void pipeline_get_counters(const pipeline *p, pipeline_counters *c);
/* "overflow", "late", "solver_error", "send_failed", "subscriber_slow";
 * "unknown" for a bad value. */
const char *pipeline_drop_name(pipeline_drop_reason r);
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
