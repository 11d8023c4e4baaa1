/*
 * service_reload.h - SIGHUP: re-read the configuration file and apply what
 * may change while the daemon runs.
 *
 * The file is loaded over the defaults, the command-line overrides are
 * applied again (they still win) and the whole is validated, exactly as at
 * start-up. Then, setting by setting against the running configuration:
 *   - a live setting (CONFIG_FLAG_LIVE in config/config_table.c: log.level,
 *     frame.deadline_ms, frame.late_policy, frame.overflow_policy,
 *     metrics.interval_ms, service.stall_ms) that changed is applied, all of
 *     them at once (pipeline_apply_live);
 *   - any other setting that changed is refused: one warning per setting
 *     names it ("needs a restart"), and its running value stays.
 * Any error (unreadable file, syntax, a bad value, a rule broken, a file
 * that is not a regular file, sets nothing or is cut short:
 * config_load_replacement) is logged with its FILE:LINE: setting: reason and
 * the running configuration stays whole; the daemon keeps running either way.
 *
 * The file is read on a reload thread of its own (service_reload_request),
 * never on the signal thread: a file that blocks its reader (a hung network
 * mount; a FIFO is refused unread) must not keep SIGTERM from draining the
 * daemon. The reload thread applies what it read under r->lock, and only
 * while the pipeline is open (service_reload_close ends that before the
 * pipeline is destroyed); a reload still reading at exit is abandoned.
 */
#ifndef EIGSTREAM_SERVICE_RELOAD_H
#define EIGSTREAM_SERVICE_RELOAD_H

#include <pthread.h>
#include <stdint.h>

#include "config.h"
#include "pipeline.h"
#include "service_notify.h"

typedef struct service_reload {
    const char *path;          /* -c FILE; NULL: the daemon runs on defaults, nothing to re-read */
    /* The command-line overrides, applied again to every reloaded file;
     * 0 or -1 (having printed why). */
    int (*apply_overrides)(const void *options, eigstream_config *cfg);
    const void *options;
    eigstream_config running;  /* what the daemon runs with now (under lock) */
    pipeline *p;               /* the running pipeline; NULL once closed */
    service_notify **notify;   /* the notifier (may be NULL) */
    pthread_mutex_t lock;      /* p, running, the notifier and the flags below */
    int busy;                  /* a reload thread runs */
    int again;                 /* a SIGHUP came while it ran: read once more */
    uint64_t busy_since_ns;    /* CLOCK_MONOTONIC when the running one began */
} service_reload;

/* Fills r for pipeline p (path may be NULL: nothing to reload). */
void service_reload_init(service_reload *r, const char *path, int (*apply_overrides)(const void *, eigstream_config *),
                         const void *options, const eigstream_config *running, pipeline *p,
                         service_notify **notify);

/* One reload, on the caller's thread. Returns the number of settings
 * applied, or -1 when the file was refused as a whole or r is closed. */
int service_reload_run(service_reload *r);

/* On SIGHUP (the signal thread): starts a detached reload thread running
 * service_reload_run and returns at once; a SIGHUP while one runs is
 * folded into one more reload after it (logged with how long the running
 * one has been reading). Returns 0, or -1 when no thread could start
 * (logged). */
int service_reload_request(service_reload *r);

/* Before the pipeline is destroyed: no reload applies anything after this
 * returns (one still reading its file is abandoned). */
void service_reload_close(service_reload *r);

#endif
