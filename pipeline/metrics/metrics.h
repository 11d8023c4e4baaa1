/*
 * metrics.h - counters and latency histograms the stages update lock-free
 * (relaxed atomics: each value is exact, a snapshot across values is not),
 * and the JSON document the metrics thread publishes every interval.
 *
 * Histograms have log-spaced buckets, METRICS_BUCKETS_PER_OCTAVE per doubling
 * from 1 us: bucket 0 holds < 1 us, bucket i >= 1 holds
 * [2^((i-1)/4), 2^(i/4)) us, the last one everything above ~2^27 us (134 s).
 * A quantile is reported as the upper edge of its bucket (at most 19 % high),
 * clamped to the exact maximum.
 */
#ifndef EIGSTREAM_METRICS_H
#define EIGSTREAM_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "auth_zap.h" /* auth_zap_reject: the CURVE refusals counted */
#include "metrics_check.h" /* the self-check */
#include "metrics_http.h" /* metrics_http_counts: the HTTP refusals */
#include "protocol.h" /* protocol_reject: the rejects counted */

#ifdef __cplusplus
extern "C" {
#endif

#define METRICS_BUCKETS_PER_OCTAVE 4
#define METRICS_OCTAVES 27
#define METRICS_BUCKETS (METRICS_BUCKETS_PER_OCTAVE * METRICS_OCTAVES + 2)

typedef struct metrics_histogram {
    _Atomic uint64_t bucket[METRICS_BUCKETS];
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
    _Atomic uint64_t max_ns;
} metrics_histogram;

/* Records one duration (ns). Lock-free, any thread. */
void metrics_histogram_observe(metrics_histogram *h, uint64_t ns);
/* Bucket index of a duration, and the upper edge of a bucket in ns
 * (UINT64_MAX for the last). */
int metrics_bucket_index(uint64_t ns);
uint64_t metrics_bucket_upper_ns(int bucket);
/* q in [0,1]; 0 when empty. */
uint64_t metrics_histogram_quantile_ns(const metrics_histogram *h, double q);
/* The same over bucket counts (a snapshot or the change over an interval):
 * the upper edge of the bucket holding rank ceil(q * total), clamped to
 * max_ns; 0 when every count is 0. */
uint64_t metrics_buckets_quantile_ns(const uint64_t counts[METRICS_BUCKETS], double q, uint64_t max_ns);
/* Copies the bucket counts (each exact, not atomic as a whole); returns
 * their sum, which the copy agrees with (unlike h->count under load). */
uint64_t metrics_histogram_snapshot(const metrics_histogram *h, uint64_t counts[METRICS_BUCKETS]);

/* Why an accepted frame was not published (metrics key in parentheses;
 * metrics_drop_name gives it). */
typedef enum metrics_drop_reason {
    METRICS_DROP_OVERFLOW = 0, /* "overflow": evicted by overflow_policy drop_oldest */
    METRICS_DROP_LATE,         /* "late": past the deadline with late_policy drop */
    METRICS_DROP_SOLVER,       /* "solver_error": forming or the solver failed as a whole */
    METRICS_DROP_SEND,         /* "send_failed": the output socket refused it (PUSH: no peer
                                  took it within frame.deadline_ms) */
    METRICS_DROP_SUBSCRIBER,   /* "subscriber_slow": PUB output, a subscriber stayed at its
                                  HWM for frame.deadline_ms (XPUB NODROP refused the send) */
    METRICS_DROP_COUNT_
} metrics_drop_reason;

/* "overflow", "late", "solver_error", "send_failed", "subscriber_slow";
 * "unknown" for a bad value. */
const char *metrics_drop_name(metrics_drop_reason r);

/* Solver workers with a row of their own. */
#define METRICS_WORKERS_MAX 16

typedef enum metrics_stage {
    METRICS_STAGE_RECEIVE = 0, /* first part received -> validated and queued */
    METRICS_STAGE_FORM,        /* forming (GPU: upload + unpack + form enqueued) */
    METRICS_STAGE_SOLVE,       /* solve (GPU: solve + values back + vectors enqueued) */
    METRICS_STAGE_PUBLISH,     /* output assembled and handed to ZeroMQ */
    METRICS_STAGE_END_TO_END,  /* receipt -> published */
    METRICS_STAGE_COUNT_
} metrics_stage;

const char *metrics_stage_name(metrics_stage s);

/* One solver worker's counters (index: worker). */
typedef struct metrics_worker {
    _Atomic uint64_t frames;  /* dealt to it */
    _Atomic uint64_t busy_ns; /* time in its solve step */
    _Atomic int in_flight;    /* dealt, not yet through its solve stage */
    /* Written by the periodic task only. */
    uint64_t last_busy_ns;
    double load;              /* busy share of the last interval, 0..1 */
} metrics_worker;

typedef struct metrics {
    _Atomic uint64_t frames_in;  /* accepted (passed validation) */
    _Atomic uint64_t frames_out; /* published, late ones included */
    _Atomic uint64_t frames_late;
    _Atomic uint64_t matrices_failed; /* matrices published with info != 0 */
    _Atomic uint64_t matrices_nonconvergence; /* ... with info > 0 (did not converge) */
    _Atomic uint64_t matrices_invalid;        /* ... with info < 0 (invalid input) */
    _Atomic uint64_t overflow_blocked; /* block policy: times the receiver waited for the form queue */
    _Atomic uint64_t source_restarts;  /* accepted frames whose seq did not increase (the source restarted) */
    _Atomic uint64_t input_late;       /* input.io_threads > 1: frames that came after the merge went past their seq */
    _Atomic uint64_t subscriptions_refused; /* PUB sockets: subscriptions that match nothing the daemon sends */
    _Atomic uint64_t solver_fallbacks; /* solver.fallback: switches to the host path after a path error */
    _Atomic uint64_t reorder_gaps;     /* frames the reorder window released past (a later frame's deadline) */
    _Atomic uint64_t out_of_order;     /* frames published after a later one */
    int workers;                       /* solver workers (set after metrics_init) */
    metrics_worker worker[METRICS_WORKERS_MAX];
    _Atomic uint64_t dropped[METRICS_DROP_COUNT_];
    _Atomic uint64_t rejected[PROTOCOL_REJECT_COUNT_];
    auth_zap_counts auth; /* refused clients of the CURVE sockets, and their retries */
    metrics_histogram latency[METRICS_STAGE_COUNT_];
    metrics_check check;               /* the self-check (publish stage) */
    /* Written by the periodic task only. */
    uint64_t start_ns;
    uint64_t last_tick_ns;
    uint64_t last_in, last_out, last_rejected;
    double rate_in, rate_out, rate_rejected; /* per second over the last interval */
} metrics;

void metrics_init(metrics *m, uint64_t now_ns);
void metrics_count_drop(metrics *m, metrics_drop_reason d);
void metrics_count_reject(metrics *m, protocol_reject r);
uint64_t metrics_dropped_total(const metrics *m);
uint64_t metrics_rejected_total(const metrics *m);

/* The periodic task: recomputes the rates from the counters' change since the
 * previous tick (so that reading metrics costs nothing elsewhere). */
void metrics_tick(metrics *m, uint64_t now_ns);

/* What the JSON carries besides the counters. */
typedef struct metrics_context {
    const char *backend; /* resolved backend name */
    const char *precision;
    const char *mode;
    int n, matrices;
    size_t queue_form, queue_solve, queue_publish; /* current depths */
    size_t queue_capacity;
    size_t frames_free, frames_total;   /* frame pool */
    size_t outputs_free, outputs_total; /* output buffer pool */
    /* For the HTTP documents (metrics_prometheus.c, /api/metrics). */
    const char *version; /* eigstream's version */
    const char *gpu;     /* CUDA device name when the cuda path runs, else "none" */
    double deadline_s;   /* frame.deadline_ms in seconds */
    int workers;         /* solver workers (metrics.worker[0 .. workers-1]) */
    const char *worker_device[METRICS_WORKERS_MAX]; /* each worker's GPU name, "none" on the host path */
    const metrics_http_counts *http; /* the HTTP server's refusals and connections; NULL: no server */
} metrics_context;

/* Appends to a fixed buffer; remembers overflow instead of failing each
 * call (then len is meaningless and the document is dropped). */
typedef struct metrics_writer {
    char *buf;
    size_t cap, len;
    int overflow;
} metrics_writer;

void metrics_put(metrics_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes the metrics document (schema in docs/daemon.md) into buf; returns
 * the length, or 0 when cap is too small. Allocates nothing. */
size_t metrics_format_json(const metrics *m, const metrics_context *c, uint64_t now_realtime_ns,
                           char *buf, size_t cap);

/* Monotonic and wall clocks in ns. */
uint64_t metrics_now_ns(void);
uint64_t metrics_realtime_ns(void);

#ifdef __cplusplus
}
#endif

#endif
