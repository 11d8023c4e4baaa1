/*
 * service_notify.c - systemd notification (service_notify.h): one thread
 * that wakes for the next STATUS or WATCHDOG, whichever is due first.
 *
 * Health: WATCHDOG=1 is sent only when pipeline_check_health says that no
 * stage has held one frame in its step for longer than service.stall_ms.
 * Idle stages and back-pressure (a stage waiting for room downstream) are
 * healthy; the stage that causes the back-pressure is judged on its own.
 * The first check after a change of state logs it and sends STATUS at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "service_notify.h"

struct service_notify {
    pipeline *p;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;                  /* under lock */
    atomic_int stall_ms;       /* service.stall_ms (live) */
    atomic_int status_ms;      /* metrics.interval_ms (live) */
    atomic_int stopping_sent;
    int started;               /* the thread runs (service_notify_ready) */
    uint64_t watchdog_ns;      /* ping period: WATCHDOG_USEC / 2, 0 = no watchdog */
    int stalled;               /* thread only: the last check's verdict */
    pipeline_counters last;    /* thread only: the counters at the last STATUS */
    uint64_t last_status_ns;
};

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void notify(const char *state)
{
    int rc = sd_notify(0, state);
    if (rc < 0)
        LOG_WARN("service", "sd_notify(%.40s): %s", state, strerror(-rc));
}

/* STATUS=in R/s out R/s ... over the time since the last STATUS; the
 * stalled stage when h says so. */
static void send_status(service_notify *s, const pipeline_health *h, uint64_t now)
{
    pipeline_counters c;
    pipeline_get_counters(s->p, &c);
    double seconds = (double)(now - s->last_status_ns) * 1e-9;
    double rate_in = seconds > 0 ? (double)(c.in - s->last.in) / seconds : 0.0;
    double rate_out = seconds > 0 ? (double)(c.out - s->last.out) / seconds : 0.0;
    uint64_t dropped = 0;
    for (int d = 0; d < METRICS_DROP_COUNT_; d++)
        dropped += c.dropped[d];
    char text[512];
    int len = snprintf(text, sizeof text,
                       "STATUS=in %.1f/s out %.1f/s; frames in %llu out %llu dropped %llu rejected %llu "
                       "in flight %llu",
                       rate_in, rate_out, (unsigned long long)c.in, (unsigned long long)c.out,
                       (unsigned long long)dropped, (unsigned long long)c.rejected_total,
                       (unsigned long long)c.in_flight);
    if (!h->healthy && len > 0 && (size_t)len < sizeof text)
        snprintf(text + len, sizeof text - (size_t)len, "; STALLED: %s stage on frame seq %llu for %llu ms",
                 h->stalled_stage, (unsigned long long)h->stalled_seq,
                 (unsigned long long)(h->stalled_ns / 1000000u));
    notify(text);
    s->last = c;
    s->last_status_ns = now;
}

/* One wake-up: health, then the pings and the STATUS that are due. */
static void service_tick(service_notify *s, uint64_t now, uint64_t *next_ping, uint64_t *next_status)
{
    pipeline_health h;
    int stall_ms = atomic_load(&s->stall_ms);
    pipeline_check_health(s->p, (uint64_t)stall_ms * 1000000u, &h);
    int changed = s->stalled != !h.healthy;
    if (changed && !h.healthy)
        LOG_WARN("service", "%s stage stalled: frame seq %llu in its step for %llu ms (service.stall_ms %d); "
                 "watchdog pings stop", h.stalled_stage, (unsigned long long)h.stalled_seq,
                 (unsigned long long)(h.stalled_ns / 1000000u), stall_ms);
    else if (changed)
        LOG_INFO("service", "no stage stalled any more; watchdog pings resume");
    s->stalled = !h.healthy;
    if (changed || now >= *next_status) {
        send_status(s, &h, now);
        *next_status = now + (uint64_t)atomic_load(&s->status_ms) * 1000000u;
    }
    if (s->watchdog_ns > 0 && now >= *next_ping) {
        if (h.healthy)
            notify("WATCHDOG=1");
        *next_ping = now + s->watchdog_ns;
    }
}

static void *service_main(void *arg)
{
    service_notify *s = arg;
    uint64_t next_ping = 0, next_status = 0;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        pthread_mutex_unlock(&s->lock);
        service_tick(s, monotonic_ns(), &next_ping, &next_status);
        pthread_mutex_lock(&s->lock);
        uint64_t wake = next_status;
        if (s->watchdog_ns > 0 && next_ping < wake)
            wake = next_ping;
        /* While stalled, look again within a ping period or 100 ms so that
         * the pings resume as soon as the stage moves. */
        uint64_t soon = monotonic_ns() + (s->watchdog_ns > 0 ? s->watchdog_ns : 100000000u);
        if (s->stalled && soon < wake)
            wake = soon;
        struct timespec until = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
        int rc = 0;
        while (!s->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&s->wake, &s->lock, &until);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int service_notify_start(service_notify **out, pipeline *p, const eigstream_config *cfg, char *err,
                         size_t err_bytes)
{
    *out = NULL;
    if (getenv("NOTIFY_SOCKET") == NULL)
        return 0;
    service_notify *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, err_bytes, "service notifier: out of memory");
        return -1;
    }
    s->p = p;
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0)
        s->watchdog_ns = usec * 1000u / 2u; /* sd_watchdog_enabled(3): ping at half the timeout */
    s->last_status_ns = monotonic_ns();
    service_notify_apply(s, cfg);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&s->lock, NULL);
    *out = s;
    return 0;
}

int service_notify_ready(service_notify *s, char *err, size_t err_bytes)
{
    if (s == NULL)
        return 0;
    notify("READY=1");
    if (s->started)
        return 0;
    /* After READY=1: no STATUS or WATCHDOG=1 precedes it. */
    int rc = pthread_create(&s->thread, NULL, service_main, s);
    if (rc != 0) {
        snprintf(err, err_bytes, "cannot start the service notifier thread: %s", strerror(rc));
        return -1;
    }
    s->started = 1;
    if (s->watchdog_ns > 0)
        LOG_INFO("service", "systemd watchdog: pings every %llu ms while no stage is stalled for %d ms",
                 (unsigned long long)(s->watchdog_ns / 1000000u), atomic_load(&s->stall_ms));
    return 0;
}

void service_notify_reloading(service_notify *s)
{
    if (s != NULL)
        notify("RELOADING=1");
}

void service_notify_apply(service_notify *s, const eigstream_config *cfg)
{
    if (s == NULL)
        return;
    atomic_store(&s->stall_ms, cfg->service.stall_ms);
    atomic_store(&s->status_ms, cfg->metrics.interval_ms);
}

void service_notify_stopping(service_notify *s)
{
    if (s != NULL && atomic_exchange(&s->stopping_sent, 1) == 0)
        notify("STOPPING=1");
}

void service_notify_stop(service_notify **sp)
{
    service_notify *s = *sp;
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    if (s->started)
        pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
    *sp = NULL;
}
