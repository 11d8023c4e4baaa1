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

/* One thread of this process, from /proc/self/task/TID/{comm,schedstat}:
 * the scheduler's own account, what perf sched would show where there is no
 * perf. Two reads a while apart give each thread's share of that while on a
 * core and waiting for one. */
typedef struct process_thread {
    int tid;
    char name[16];    /* comm: pthread_setname_np's name (15 characters) */
    uint64_t run_ns;  /* time on a core */
    uint64_t wait_ns; /* time runnable, waiting on a run queue */
} process_thread;

/* Up to max threads into t; returns how many, or -1 with errno set when
 * /proc/self/task cannot be read or the kernel keeps no schedstat
 * (CONFIG_SCHED_INFO). A thread that ends while it is read is left out. */
int process_threads_read(process_thread *t, int max);

#endif
