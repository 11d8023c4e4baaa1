/*
 * service_notify.h - the daemon's side of systemd's notify protocol
 * (sd_notify(3), Type=notify with WatchdogSec):
 *
 *   READY=1      once the sockets are bound and the warm-up solve is done
 *   STATUS=...   every metrics.interval_ms: frame rates and counts, and the
 *                stalled stage when there is one
 *   WATCHDOG=1   every WatchdogSec/2 while the pipeline is healthy
 *                (pipeline_check_health with service.stall_ms); a stalled
 *                stage stops the pings, so systemd restarts the daemon
 *   RELOADING=1  then READY=1 around a SIGHUP reload
 *   STOPPING=1   at the first SIGINT/SIGTERM, or when the input ends
 *
 * Without systemd (NOTIFY_SOCKET unset) service_notify_start gives NULL and
 * every other call is a no-op on NULL.
 */
#ifndef EIGSTREAM_SERVICE_NOTIFY_H
#define EIGSTREAM_SERVICE_NOTIFY_H

#include "config.h"
#include "pipeline.h"

typedef struct service_notify service_notify;

/* *out <- NULL when NOTIFY_SOCKET is unset, else a notifier whose thread,
 * started by the first service_notify_ready, sends STATUS (and WATCHDOG
 * when WATCHDOG_USEC is set for this process). 0, or -1 with err set. */
int service_notify_start(service_notify **out, pipeline *p, const eigstream_config *cfg, char *err,
                         size_t err_bytes);
/* READY=1; the first call then starts the thread. 0, or -1 with err set
 * (the thread could not start). */
int service_notify_ready(service_notify *s, char *err, size_t err_bytes);
void service_notify_reloading(service_notify *s);
/* The live settings the notifier reads (service.stall_ms, metrics.interval_ms). */
void service_notify_apply(service_notify *s, const eigstream_config *cfg);
/* Once; later calls do nothing. Async-signal-unsafe: call from a thread. */
void service_notify_stopping(service_notify *s);
/* Stops and joins the thread, frees *s, sets it to NULL. */
void service_notify_stop(service_notify **s);

#endif
