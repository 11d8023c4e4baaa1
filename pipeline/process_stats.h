/*
 * process_stats.h - the daemon's own process, read from /proc/self and
 * getrlimit: what Prometheus' standard process_* metrics report. Linux only
 * (the daemon's platform). The metrics thread reads it once per interval.
 */
#ifndef EIGSTREAM_PROCESS_STATS_H
#define EIGSTREAM_PROCESS_STATS_H

#include <stdint.h>

typedef struct process_stats {
    double cpu_seconds;       /* user + system CPU time */
    uint64_t resident_bytes;  /* resident set size */
    uint64_t virtual_bytes;   /* virtual memory size */
    uint64_t open_fds;        /* entries of /proc/self/fd */
    uint64_t max_fds;         /* RLIMIT_NOFILE soft limit */
    double start_time_s;      /* process start, seconds since the Unix epoch */
} process_stats;

/* Fills *s; returns 0, or -1 with errno set when /proc could not be read
 * (then *s holds zeros for what was not read). */
int process_stats_read(process_stats *s);

#endif
