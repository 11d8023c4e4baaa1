/*
 * sink_latency.c - the latency report's CSV lines (contract in sink_latency.h).
 */
#include "sink_latency.h"

double sink_latency_diff_ms(uint64_t a, uint64_t b)
{
    return a >= b ? (double)(a - b) / 1e6 : -(double)(b - a) / 1e6;
}

int sink_latency_write_header(FILE *csv)
{
    int k = fprintf(csv, "seq,source_ns,received_ns,solve_start_ns,solve_end_ns,published_ns,sink_ns,"
                         "receive_to_solve_ms,solve_ms,solve_to_publish_ms,end_to_end_ms,transport_ms\n");
    return k < 0 ? -1 : 0;
}

int sink_latency_write_frame(FILE *csv, const protocol_header *h, const protocol_stage_times *t, uint64_t sink_ns)
{
    /* %.6f ms keeps every nanosecond of the differences. */
    int k = fprintf(csv, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f,%.6f,%.6f\n",
                    (unsigned long long)h->seq, (unsigned long long)h->timestamp_ns,
                    (unsigned long long)t->received_ns, (unsigned long long)t->solve_start_ns,
                    (unsigned long long)t->solve_end_ns, (unsigned long long)t->published_ns,
                    (unsigned long long)sink_ns, sink_latency_diff_ms(t->solve_start_ns, t->received_ns),
                    sink_latency_diff_ms(t->solve_end_ns, t->solve_start_ns),
                    sink_latency_diff_ms(t->published_ns, t->solve_end_ns),
                    sink_latency_diff_ms(t->published_ns, t->received_ns),
                    sink_latency_diff_ms(sink_ns, t->published_ns));
    return k < 0 ? -1 : 0;
}
