/*
 * merge.h - eigstream-merge: the eigenspace frames of N daemons behind one
 * eigstream-dispatch, republished in sequence order through a bounded
 * reorder window (pipeline/reorder.h), with gaps (a frame lost with a daemon
 * that died), duplicates and late arrivals counted and named by seq
 * (docs/scaleout.md).
 *
 * Files: merge_main.c (options, sockets, the loop), merge_check.c (the
 * input parser), merge_sequence.c (what becomes of each checked frame: the
 * window, duplicates, late frames, jumps and source restarts),
 * merge_publish.c (out on the output or back on the free stack),
 * merge_report.c (the counters, gap ranges, the added latency, JSON and
 * Prometheus text).
 *
 * CURVE (docs/scaleout.md, Security): the inputs are CURVE clients of the
 * daemons (--curve-server-key, --curve-key), the output a CURVE server with
 * its own allow-list (--curve-secret-key, --curve-allow; cli_curve_server.h),
 * whichever side binds.
 *
 * Sequences. The window trusts a seq only near its release point `next`:
 * [next - window, next + window + --jump-limit). A frame outside that range
 * (a source that restarted from 0, a replay, a seq of 10^12 or 2^64-1 from a
 * bad peer) is put aside as a candidate for a new sequence ("epoch"); it
 * becomes one only when --epoch-confirm frames of distinct seqs within one
 * window of each other have come, and then the first of them has waited
 * --window-ms (so that the lowest seq of the new run is its start). The
 * current sequence is then flushed in order (its gaps named), and the new
 * one starts at the lowest seq put aside. While a candidate forms, a frame
 * near it that is no older than its frames (source timestamps) joins it
 * even when the current sequence's window could take it: a source that
 * restarts less than a window behind sends seqs both behind and ahead of
 * the release point, and all of them are the new run's. For the same reason
 * the current window names no gap while a candidate forms, and when it is
 * adopted, the frames the current window holds that are no older than the
 * candidate's go with it: the old run's gaps are named only up to its last
 * frame. A candidate that gets no
 * confirming frame for --window-ms is dropped, each frame counted
 * out_of_range and logged by seq. At start (no --first-seq) the first
 * frames form the first sequence the same way, whatever their number, so a
 * merge started mid-stream begins at the lowest seq the daemons are at.
 */
#ifndef EIGSTREAM_MERGE_H
#define EIGSTREAM_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "cli_curve_server.h"
#include "cli_message.h"
#include "cli_peer.h"
#include "protocol.h"
#include "reorder.h"

#define MERGE_INPUTS_MAX 64
#define MERGE_GAPS_KEPT 1000          /* gap ranges listed in the JSON (all are counted and logged) */
#define MERGE_LATENCY_KEPT 100000     /* added latencies behind p50/p99: the last this many frames */

/* Why a frame that came in was not republished in order. */
typedef enum merge_drop {
    MERGE_DROP_DUPLICATE = 0, /* its seq was held or republished already */
    MERGE_DROP_LATE,          /* its seq had been released past as a gap (--late drop) */
    MERGE_DROP_SEND_TIMEOUT,  /* the output refused it for --send-timeout-ms */
    MERGE_DROP_OUT_OF_RANGE,  /* far outside the sequence, and no new sequence confirmed it */
    MERGE_DROP_COUNT_
} merge_drop;

const char *merge_drop_name(merge_drop d);

typedef struct merge_gap {
    uint64_t first, last; /* inclusive */
} merge_gap;

typedef struct merge_stats {
    uint64_t frames_in, frames_out, late_published;
    uint64_t epochs;                 /* sequences begun: the first, then one per source restart or jump */
    uint64_t in_by_input[MERGE_INPUTS_MAX];
    size_t inputs;
    uint64_t rejected[PROTOCOL_REJECT_COUNT_], rejected_total;
    uint64_t dropped[MERGE_DROP_COUNT_];
    uint64_t gap_frames, gap_ranges; /* seqs skipped, and in how many ranges */
    merge_gap gaps[MERGE_GAPS_KEPT];
    uint64_t next_seq;               /* the release point */
    size_t held;
    double *latency_ms;              /* ring of MERGE_LATENCY_KEPT added latencies */
    uint64_t latency_count;
    double latency_sum_ms;           /* over every frame republished */
    uint64_t subscriptions;          /* --out-pattern pub: subscriptions less unsubscriptions seen (gauge) */
    int curve_inputs, curve_output;  /* CURVE on the inputs (clients of the daemons), on the output (a server) */
    uint64_t auth_rejected[AUTH_ZAP_REJECT_COUNT_]; /* consumers the output refused, by reason */
    double started_s;
} merge_stats;

/* Records a gap seq first..last (logged by the caller). */
void merge_stats_gap(merge_stats *s, uint64_t first, uint64_t last);
/* Counts a received frame dropped for d (the caller logs it by seq). */
void merge_stats_drop(merge_stats *s, merge_drop d);
/* Records the time one frame spent in the merge (arrival to republish). */
void merge_stats_latency(merge_stats *s, double ms);

/* The metrics as one JSON object into out (no newline); the bytes needed. */
size_t merge_report_json(const merge_stats *s, const char *const *inputs, double now_s, char *out, size_t out_bytes);
/* The JSON, and Prometheus text, written to path through a rename; 0 or -1 (errno). */
int merge_report_json_file(const merge_stats *s, const char *const *inputs, double now_s, const char *path);
int merge_report_prometheus_file(const merge_stats *s, const char *const *inputs, double now_s, const char *path);

/* ---- the merger's state (merge_main.c owns the sockets, merge_sequence.c
 * the sequence; one thread) ---------------------------------------------- */

typedef struct merge_options {
    const char *inputs, *out, *json, *prometheus, *gap_log;
    const char *curve_server_keys, *curve_key;   /* the inputs: the daemons' public keys, the merge's pair */
    const char *curve_secret_key, *curve_allow;  /* the output: its pair, the consumers' keys */
    int in_sub, in_bind, out_push, late_publish, window, window_ms, send_timeout_ms, out_hwm;
    int epoch_confirm, jump_limit;
    int64_t first_seq, last_seq, max_bytes;
    double stats_s;
} merge_options;

/* One received frame while the merge holds it (window or candidate). */
typedef struct merge_frame {
    cli_message m;
    uint64_t arrival_ns, seq, timestamp_ns;
} merge_frame;

/* What was published at a seq, for telling a copy (duplicate) from a
 * restarted source's frame of the same seq (another timestamp). */
typedef struct merge_recent {
    uint64_t seq, timestamp_ns;
    int valid;
} merge_recent;

/* Frames put aside as the start of a new sequence (merge.h, "Sequences"). */
typedef struct merge_candidate {
    merge_frame **f;        /* count of 2 x window (its own, and the current window's newer frames at adoption) */
    size_t count;
    uint64_t low, high;     /* their seqs' range, high - low < window */
    uint64_t first_timestamp_ns; /* the earliest source timestamp among them */
    uint64_t first_ns, last_ns; /* arrival of the first and the latest */
} merge_candidate;

typedef struct merger {
    merge_options o;
    void *ctx, *out;
    cli_peer *out_watch; /* the output's connections: the exit waits for their read */
    cli_curve_server out_curve;
    void *in[MERGE_INPUTS_MAX];
    char *endpoints[MERGE_INPUTS_MAX];
    size_t inputs;
    reorder *w;
    int started;          /* a sequence is under way (w's release point is set) */
    uint64_t epoch_first; /* the current sequence's first seq: below it nothing was named */
    merge_recent *recent; /* window entries, seq % window */
    merge_candidate cand;
    reorder_release *pops; /* 2 x window + 1: the current window's last releases at a restart */
    merge_frame *frames;  /* 2 x window + 1: the window, the candidate, the one being received */
    merge_frame **free;   /* stack of unused frames */
    size_t free_count;
    protocol_matrix_meta *meta; /* scratch for the checks, meta_cap entries */
    size_t meta_cap;
    FILE *gap_log;
    merge_stats s;
    int done;             /* the release point passed --last-seq */
} merger;

/* CLOCK_MONOTONIC in ns: the window's deadlines and the added latency. */
uint64_t merge_now_ns(void);
/* Closes f's parts and puts it back on the free stack (merge_publish.c). */
void merge_recycle(merger *x, merge_frame *f);
/* Republishes f's parts as they came (merge_publish.c); f is recycled. */
void merge_publish(merger *x, merge_frame *f);

/* Checks a received eigenspace frame whole, as a consumer would: the header
 * (kind 2), three parts, the meta part, the sizes against each other and
 * max_bytes, and the CRC when flagged. PROTOCOL_OK with *h filled, or the
 * reason (-1 from ENOMEM is returned as PROTOCOL_REJECT_OVERSIZED). */
protocol_reject merge_frame_check(merger *x, const merge_frame *f, protocol_header *h);

/* Takes a checked frame (f->seq, f->timestamp_ns set): into the window,
 * aside as a candidate sequence, or counted and recycled. */
void merge_sequence_offer(merger *x, merge_frame *f, uint64_t now_ns);
/* Whatever is due at now: the window's releases (published or named as
 * gaps), a candidate adopted or dropped. now = UINT64_MAX at exit: the
 * candidate is adopted when confirmed (or when nothing was started), else
 * dropped, and everything held goes out. */
void merge_sequence_release(merger *x, uint64_t now_ns);
/* The earliest time something is due (for the poll); 0 when none. */
int merge_sequence_deadline(const merger *x, uint64_t *deadline_ns);

#endif
