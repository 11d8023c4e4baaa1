/*
 * pipeline.h - the streaming daemon's engine: receive and validate -> form ->
 * solve -> publish, each stage its own thread, joined by bounded queues.
 *
 * Lifecycle (app/main.c):
 *   pipeline_create(&p, &cfg, err, sizeof err)  binds/connects sockets, creates
 *                                               the solver plan, allocates every
 *                                               frame buffer (none per frame later)
 *   pipeline_run(p)                             blocks until stopped and drained
 *   pipeline_stop(p)                            from another thread (signal
 *                                               watcher): stop accepting, finish
 *                                               and publish what was accepted
 *   pipeline_destroy(&p)
 */
#ifndef EIGSTREAM_PIPELINE_H
#define EIGSTREAM_PIPELINE_H

#include <stddef.h>

#include "config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pipeline pipeline;

typedef enum pipeline_error {
    PIPELINE_OK = 0,
    PIPELINE_EINVAL,  /* configuration the pipeline cannot run */
    PIPELINE_ENOMEM,
    PIPELINE_ESOCKET, /* a ZeroMQ socket could not be created, bound or connected */
    PIPELINE_ESOLVER, /* the solver plan could not be created */
    PIPELINE_ETHREAD
} pipeline_error;

pipeline_error pipeline_create(pipeline **out, const eigstream_config *cfg, char *err,
                               size_t err_bytes);
/* Runs until pipeline_stop; returns PIPELINE_OK after a clean drain. */
pipeline_error pipeline_run(pipeline *p);
/* Thread-safe; returns at once. */
void pipeline_stop(pipeline *p);
void pipeline_destroy(pipeline **p);
const char *pipeline_strerror(pipeline_error e);

#ifdef __cplusplus
}
#endif

#endif
