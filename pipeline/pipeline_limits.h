/*
 * pipeline_limits.h - what the settings need of the host's per-process
 * limits beyond descriptors (pipeline_check_fd_limit, engine.h): threads,
 * checked at start, and memory, named when an allocation fails (issue 26).
 *
 * A limit is never met by an assertion: libzmq aborts when it cannot start
 * its I/O threads, libgomp exits when it cannot start a team, so the
 * threads every part of the daemon will start are started once, together,
 * before any of them is (pipeline_check_thread_limit), and a refusal names
 * the limit in force, the need and the settings that make it.
 */
#ifndef EIGSTREAM_PIPELINE_LIMITS_H
#define EIGSTREAM_PIPELINE_LIMITS_H

#include <stddef.h>

#include "config.h"
#include "pipeline_error.h"

/* The threads a daemon of cfg starts after pipeline_create begins, at most
 * (the main thread and those started before not counted): the stages
 * (receive, publish, form and solve per worker, deal with several), the
 * metrics, signal, notify and reload threads, ZeroMQ's reaper and I/O
 * threads (input.io_threads + 1), the ZAP handler (security.*), the HTTP
 * server and its guard (metrics.http), the copy helpers (input.copy_threads)
 * and each worker's solver team (solver.cpu_threads; 0 = one per core). */
long pipeline_threads_need(const eigstream_config *cfg);

/* Starts pipeline_threads_need(cfg) threads that wait until all have
 * started, then ends them: PIPELINE_OK, or PIPELINE_ELIMIT with err naming
 * how many started, the limits in force (RLIMIT_NPROC, and RLIMIT_AS for
 * the stacks) and the settings. Before any other thread of the pipeline. */
pipeline_error pipeline_check_thread_limit(const eigstream_config *cfg, char *err, size_t err_bytes);

/* The limits a thread start meets, for a message: "RLIMIT_NPROC (ulimit -u,
 * this user's processes and threads) is N, RLIMIT_AS (ulimit -v, each
 * thread's stack is address space) M MiB" ("unlimited" where none is set). */
void pipeline_limits_threads_text(char *out, size_t bytes);

/* Appends to err (a NUL-terminated message of err_bytes) the memory limits
 * in force (RLIMIT_AS, RLIMIT_DATA; RLIMIT_MEMLOCK with realtime.mlockall)
 * and the settings the daemon's memory grows with, after an allocation of
 * the pipeline failed; says so when no limit is set. */
void pipeline_limits_explain_memory(const eigstream_config *cfg, char *err, size_t err_bytes);

#endif
