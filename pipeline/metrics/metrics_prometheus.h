/*
 * metrics_prometheus.h - the metrics in the Prometheus text exposition
 * format, version 0.0.4 (served at /metrics by metrics_http.c; every family
 * is listed in README.md, "Monitoring").
 */
#ifndef EIGSTREAM_METRICS_PROMETHEUS_H
#define EIGSTREAM_METRICS_PROMETHEUS_H

#include <stddef.h>

#include "metrics.h"
#include "process_stats.h"

/* Content-Type of the document. */
#define METRICS_PROMETHEUS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Writes the document into buf: counters as read (relaxed loads, each
 * exact), histograms in seconds with cumulative buckets at every other edge
 * of the 4-per-octave histogram from 16 us to ~16.8 s plus +Inf (_count is
 * the +Inf bucket, so the buckets and the count always agree), gauges from
 * c, the process_* family from ps. Returns the length, 0 when cap is too
 * small. Allocates nothing; the metrics thread calls it once per interval. */
size_t metrics_format_prometheus(const metrics *m, const metrics_context *c, const process_stats *ps,
                                 char *buf, size_t cap);

#endif
