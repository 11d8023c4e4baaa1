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
 * Any error (unreadable file, syntax, a bad value, a rule broken) is logged
 * with its FILE:LINE: setting: reason and the running configuration stays
 * whole; the daemon keeps running either way.
 */
#ifndef EIGSTREAM_SERVICE_RELOAD_H
#define EIGSTREAM_SERVICE_RELOAD_H

#include "config.h"
#include "pipeline.h"
#include "service_notify.h"

typedef struct service_reload {
    const char *path;          /* -c FILE; NULL: the daemon runs on defaults, nothing to re-read */
    /* The command-line overrides, applied again to every reloaded file;
     * 0 or -1 (having printed why). */
    int (*apply_overrides)(const void *options, eigstream_config *cfg);
    const void *options;
    eigstream_config running;  /* what the daemon runs with now */
} service_reload;

/* One reload (the signal thread calls it on SIGHUP). Returns the number of
 * settings applied, or -1 when the file was refused as a whole. */
int service_reload_run(service_reload *r, pipeline *p, service_notify *notify);

#endif
