/*
 * service_reload.c - SIGHUP reload (service_reload.h).
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "service_reload.h"

/* Enough for every setting of the table. */
#define RELOAD_CHANGES_MAX 128

/* The file, the overrides and the validator, as at start-up; 0 or -1 (logged). */
static int reload_read(service_reload *r, eigstream_config *cfg)
{
    char err[CONFIG_ERROR_MAX];
    config_defaults(cfg);
    if (config_load(cfg, r->path, err, sizeof err) != CONFIG_OK) {
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

int service_reload_run(service_reload *r, pipeline *p, service_notify *notify)
{
    if (r->path == NULL) {
        LOG_WARN("reload", "SIGHUP: the daemon runs without a configuration file (-c FILE): nothing to reload");
        return 0;
    }
    service_notify_reloading(notify);
    eigstream_config loaded;
    int applied = -1;
    if (reload_read(r, &loaded) == 0) {
        config_change changes[RELOAD_CHANGES_MAX];
        size_t count = config_diff(&r->running, &loaded, changes, RELOAD_CHANGES_MAX);
        char names[1024] = "";
        size_t used = 0;
        applied = 0;
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
        config_copy_live(&next, &loaded);
        if (applied > 0 && pipeline_apply_live(p, &next) != PIPELINE_OK) {
            LOG_ERROR("reload", "out of memory: the running configuration is kept");
            applied = -1;
        } else if (applied > 0) {
            r->running = next;
            service_notify_apply(notify, &next);
            LOG_INFO("reload", "%s: applied %s", r->path, names);
        } else {
            LOG_INFO("reload", "%s: no live setting changed", r->path);
        }
    }
    char err[128];
    if (service_notify_ready(notify, err, sizeof err) != 0)
        LOG_ERROR("reload", "%s", err);
    return applied;
}
