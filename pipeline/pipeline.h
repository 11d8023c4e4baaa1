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
    uint64_t solver_fallbacks; /* switches to the host path (solver.fallback cpu) */
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

#ifdef __cplusplus
}
#endif

#endif
