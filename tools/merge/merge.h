/*
 * merge.h - eigstream-merge: the eigenspace frames of N daemons behind one
 * eigstream-dispatch, republished in sequence order through a bounded
 * reorder window (pipeline/reorder.h), with gaps (a frame lost with a daemon
 * that died), duplicates and late arrivals counted and named by seq
 * (docs/scaleout.md).
 *
 * Files: merge_main.c (options, sockets, the loop), merge_report.c (the
 * counters, gap ranges, the added latency, JSON and Prometheus text).
 */
#ifndef EIGSTREAM_MERGE_H
#define EIGSTREAM_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

#define MERGE_INPUTS_MAX 64
#define MERGE_GAPS_KEPT 1000          /* gap ranges listed in the JSON (all are counted and logged) */
#define MERGE_LATENCY_KEPT 100000     /* added latencies behind p50/p99: the last this many frames */

/* Why a frame that came in was not republished in order. */
typedef enum merge_drop {
    MERGE_DROP_DUPLICATE = 0, /* its seq was held or republished already */
    MERGE_DROP_LATE,          /* its seq had been released past as a gap (--late drop) */
    MERGE_DROP_SEND_TIMEOUT,  /* the output refused it for --send-timeout-ms */
    MERGE_DROP_COUNT_
} merge_drop;

const char *merge_drop_name(merge_drop d);

typedef struct merge_gap {
    uint64_t first, last; /* inclusive */
} merge_gap;

typedef struct merge_stats {
    uint64_t frames_in, frames_out, late_published;
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
    double started_s;
} merge_stats;

/* Records a gap seq first..last (logged by the caller). */
void merge_stats_gap(merge_stats *s, uint64_t first, uint64_t last);
/* Records the time one frame spent in the merge (arrival to republish). */
void merge_stats_latency(merge_stats *s, double ms);

/* The metrics as one JSON object into out (no newline); the bytes needed. */
size_t merge_report_json(const merge_stats *s, const char *const *inputs, double now_s, char *out, size_t out_bytes);
/* The JSON, and Prometheus text, written to path through a rename; 0 or -1 (errno). */
int merge_report_json_file(const merge_stats *s, const char *const *inputs, double now_s, const char *path);
int merge_report_prometheus_file(const merge_stats *s, const char *const *inputs, double now_s, const char *path);

#endif
