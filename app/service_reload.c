/*
 * service_reload.c - SIGHUP reload (service_reload.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "service_reload.h"

/* Enough for every setting of the table. */
#define RELOAD_CHANGES_MAX 128

static uint64_t reload_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void service_reload_init(service_reload *r, const char *path, int (*apply_overrides)(const void *, eigstream_config *),
                         const void *options, const eigstream_config *running, pipeline *p,
                         service_notify **notify)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->apply_overrides = apply_overrides;
    r->options = options;
    r->running = *running;
    r->p = p;
    r->notify = notify;
    pthread_mutex_init(&r->lock, NULL);
}

/* The file, the overrides and the validator, as at start-up; 0 or -1 (logged).
 * Touches nothing shared: it runs without the lock, and may block. */
static int reload_read(service_reload *r, eigstream_config *cfg)
{
    char err[CONFIG_ERROR_MAX];
    config_defaults(cfg);
    if (config_load_replacement(cfg, r->path, err, sizeof err) != CONFIG_OK) {
        LOG_ERROR("reload", "%s; the running configuration is kept", err);
        return -1;
    }
    if (r->apply_overrides != NULL && r->apply_overrides(r->options, cfg) != 0) {
        LOG_ERROR("reload", "%s: the command-line overrides do not apply; the running configuration is kept",
                  r->path);
        return -1;
    }
    if (config_validate(cfg, err, sizeof err) != CONFIG_OK) {
        LOG_ERROR("reload", "%s with the command-line overrides: %s; the running configuration is kept", r->path,
                  err);
        return -1;
    }
    return 0;
}

/* Under r->lock, the pipeline open: the live settings of loaded applied,
 * the others refused by name. Returns the number applied, or -1. */
static int reload_apply(service_reload *r, const eigstream_config *loaded)
{
    config_change changes[RELOAD_CHANGES_MAX];
    size_t count = config_diff(&r->running, loaded, changes, RELOAD_CHANGES_MAX);
    char names[1024] = "";
    size_t used = 0;
    int applied = 0;
    for (size_t i = 0; i < count && i < RELOAD_CHANGES_MAX; i++) {
        if (!changes[i].live) {
            LOG_WARN("reload", "%s.%s changed in %s but needs a restart: the running value is kept",
                     changes[i].group, changes[i].name, r->path);
            continue;
        }
        int w = snprintf(names + used, sizeof names - used, "%s%s.%s", applied ? ", " : "", changes[i].group,
                         changes[i].name);
        if (w > 0 && (size_t)w < sizeof names - used)
            used += (size_t)w;
        applied++;
    }
    eigstream_config next = r->running;
    config_copy_live(&next, loaded);
    if (applied > 0 && pipeline_apply_live(r->p, &next) != PIPELINE_OK) {
        LOG_ERROR("reload", "out of memory: the running configuration is kept");
        return -1;
    }
    if (applied > 0) {
        r->running = next;
        service_notify_apply(*r->notify, &next);
        LOG_INFO("reload", "%s: applied %s", r->path, names);
    } else {
        LOG_INFO("reload", "%s: no live setting changed", r->path);
    }
    return applied;
}

int service_reload_run(service_reload *r)
{
    if (r->path == NULL) {
        LOG_WARN("reload", "SIGHUP: the daemon runs without a configuration file (-c FILE): nothing to reload");
        return 0;
    }
    pthread_mutex_lock(&r->lock);
    int open = r->p != NULL;
    if (open)
        service_notify_reloading(*r->notify);
    pthread_mutex_unlock(&r->lock);
    if (!open)
        return -1;
    eigstream_config loaded;
    int read = reload_read(r, &loaded);
    int applied = -1;
    pthread_mutex_lock(&r->lock);
    if (r->p != NULL) {
        if (read == 0)
            applied = reload_apply(r, &loaded);
        char err[128];
        if (service_notify_ready(*r->notify, err, sizeof err) != 0)
            LOG_ERROR("reload", "%s", err);
    }
    pthread_mutex_unlock(&r->lock);
    return applied;
}

/* The reload thread: runs reloads while SIGHUPs keep coming. */
static void *reload_main(void *arg)
{
    service_reload *r = arg;
    for (;;) {
        service_reload_run(r);
        pthread_mutex_lock(&r->lock);
        int again = r->again && r->p != NULL;
        r->again = 0;
        r->busy = again;
        r->busy_since_ns = reload_now_ns();
        pthread_mutex_unlock(&r->lock);
        if (!again)
            return NULL;
    }
}

int service_reload_request(service_reload *r)
{
    pthread_mutex_lock(&r->lock);
    if (r->busy) {
        r->again = 1;
        double reading_s = (double)(reload_now_ns() - r->busy_since_ns) / 1e9;
        pthread_mutex_unlock(&r->lock);
        LOG_WARN("reload", "SIGHUP while a reload has been running for %.1f s (reading %s): it runs once more after",
                 reading_s, r->path != NULL ? r->path : "nothing");
        return 0;
    }
    r->busy = 1;
    r->busy_since_ns = reload_now_ns();
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&thread, &attr, reload_main, r);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        r->busy = 0;
    pthread_mutex_unlock(&r->lock);
    if (rc != 0) {
        LOG_ERROR("reload", "SIGHUP: cannot start the reload thread: %s; the running configuration is kept",
                  strerror(rc));
        return -1;
    }
    return 0;
}

void service_reload_close(service_reload *r)
{
    pthread_mutex_lock(&r->lock);
    r->p = NULL;
    pthread_mutex_unlock(&r->lock);
}
