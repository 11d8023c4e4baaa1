/*
 * sink_latency.h - eigstream-sink's latency report (--latency-csv FILE): one
 * CSV line per eigenspace frame received with the stage times of its meta
 * part (CLOCK_REALTIME ns), the source timestamp of its header, the sink's
 * own receipt time, and the stage durations derived from them in ms:
 *
 *   seq,source_ns,received_ns,solve_start_ns,solve_end_ns,published_ns,sink_ns,
 *   receive_to_solve_ms,solve_ms,solve_to_publish_ms,end_to_end_ms,transport_ms
 *
 * receive_to_solve = solve_start - received, solve = solve_end - solve_start,
 * solve_to_publish = published - solve_end, end_to_end = published - received
 * (the daemon's part), transport = sink - published (clocks of two hosts
 * when the sink runs elsewhere: then only as good as their synchronisation).
 * Read by tools/latency/eigstream-latency-plot.py.
 */
#ifndef EIGSTREAM_SINK_LATENCY_H
#define EIGSTREAM_SINK_LATENCY_H

#include <stdint.h>
#include <stdio.h>

#include "protocol.h"

/* a - b in ms, negative when b is later (clocks of different hosts). */
double sink_latency_diff_ms(uint64_t a, uint64_t b);

/* Writes the header line. Returns 0, or -1 when the write failed (errno). */
int sink_latency_write_header(FILE *csv);

/* Writes the line of one frame. Returns 0, or -1 when the write failed (errno). */
int sink_latency_write_frame(FILE *csv, const protocol_header *h, const protocol_stage_times *t, uint64_t sink_ns);

#endif
