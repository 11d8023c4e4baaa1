/*
 * pipeline_frames.c - the inter-stage queues, the frame and output pools
 * (pipeline_internal.h says how many and why) and the end of a frame's life.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_internal.h"

static void frame_free(void *item, void *ctx)
{
    frame *f = item;
    path *path = ctx;
    path_buffer_free(path, f->a);
    path_buffer_free(path, f->w);
    path_buffer_free(path, f->info);
    free(f->signal_dim);
    free(f->part_bytes);
    free(f);
}

/* The payload buffer holds a full frame, formed in place on the host path;
 * values and info come back from the device on the cuda path: all three in
 * the path's host memory. */
static frame *frame_alloc(pipeline *p)
{
    frame *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->slot = -1;
    f->a_bytes = (size_t)p->matrices * p->n * p->n * eig_element_bytes(p->precision);
    f->a = path_buffer_alloc(p->path, f->a_bytes);
    f->w = path_buffer_alloc(p->path, (size_t)p->matrices * p->n * eig_element_bytes(p->precision) / 2);
    f->info = path_buffer_alloc(p->path, p->matrices * sizeof *f->info);
    f->signal_dim = calloc(p->matrices, sizeof *f->signal_dim);
    f->part_bytes = calloc(p->matrices, sizeof *f->part_bytes);
    if (f->a == NULL || f->w == NULL || f->info == NULL || f->signal_dim == NULL || f->part_bytes == NULL) {
        frame_free(f, p->path);
        return NULL;
    }
    return f;
}

static void output_free(void *item, void *ctx)
{
    output_buffer *o = item;
    path_buffer_free(ctx, o->data);
    free(o->meta);
    free(o->matrix_meta);
    free(o);
}

static output_buffer *output_alloc(pipeline *p)
{
    output_buffer *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->home = &p->outputs;
    o->meta = calloc(1, protocol_meta_bytes(p->matrices));
    o->matrix_meta = calloc(p->matrices, sizeof *o->matrix_meta);
    o->data = path_buffer_alloc(p->path, output_data_capacity(&p->format));
    if (o->meta == NULL || o->matrix_meta == NULL || o->data == NULL) {
        output_free(o, p->path);
        return NULL;
    }
    return o;
}

pipeline_error pipeline_frames_create(pipeline *p, char *err, size_t err_bytes)
{
    size_t depth = (size_t)p->cfg.frame.queue_depth;
    size_t frames = 3 * depth + 4;
    size_t outputs = (size_t)(p->cfg.output.hwm > 0 ? p->cfg.output.hwm : 4) + 2;
    if (queue_init(&p->to_form, depth) != QUEUE_OK || queue_init(&p->to_solve, depth) != QUEUE_OK ||
        queue_init(&p->to_publish, depth) != QUEUE_OK || pool_init(&p->frames, frames) != POOL_OK ||
        pool_init(&p->outputs, outputs) != POOL_OK)
        goto nomem;
    for (size_t i = 0; i < frames; i++) {
        frame *f = frame_alloc(p);
        if (f == NULL || pool_add(&p->frames, f) != POOL_OK) {
            if (f != NULL)
                frame_free(f, p->path);
            goto nomem;
        }
    }
    for (size_t i = 0; i < outputs; i++) {
        output_buffer *o = output_alloc(p);
        if (o == NULL || pool_add(&p->outputs, o) != POOL_OK) {
            if (o != NULL)
                output_free(o, p->path);
            goto nomem;
        }
    }
    return PIPELINE_OK;
nomem:
    pipeline_set_error(err, err_bytes, "cannot allocate %zu frame buffers of %.1f MB and %zu output buffers of %.1f MB (%s path)",
                       frames, (double)p->matrices * p->n * p->n * eig_element_bytes(p->precision) / 1e6, outputs,
                       (double)output_data_capacity(&p->format) / 1e6, path_name(p->path));
    return PIPELINE_ENOMEM;
}

void pipeline_frames_destroy(pipeline *p)
{
    pool_destroy(&p->frames, frame_free, p->path);
    pool_destroy(&p->outputs, output_free, p->path);
    queue_destroy(&p->to_form);
    queue_destroy(&p->to_solve);
    queue_destroy(&p->to_publish);
}

void pipeline_frame_release(pipeline *p, frame *f)
{
    /* First the path: its work may still read f->a or write f->out. */
    path_release(f->path != NULL ? f->path : p->path, f);
    f->path = NULL;
    if (f->out != NULL)
        pool_put(&p->outputs, f->out);
    f->out = NULL;
    pool_put(&p->frames, f);
}

void pipeline_frame_drop(pipeline *p, frame *f, pipeline_drop_reason reason)
{
    uint64_t suppressed;
    metrics_count_drop(&p->stats, reason);
    if (log_get_level() >= CONFIG_LOG_WARN && log_limiter_allow(&p->drop_limit[reason], &suppressed))
        LOG_WARN("pipeline", "dropped frame seq %llu: %s (%llu more suppressed)",
                 (unsigned long long)f->header.seq, pipeline_drop_name(reason), (unsigned long long)suppressed);
    pipeline_frame_release(p, f);
}

path *pipeline_active_path(const pipeline *p)
{
    /* Acquire: fallback_path is written before fallen_back is set. */
    return atomic_load_explicit(&p->fallen_back, memory_order_acquire) ? p->fallback_path : p->path;
}

int pipeline_path_fall_back(pipeline *p)
{
    char err[192];
    if (p->cfg.solver.fallback != CONFIG_FALLBACK_CPU || atomic_load(&p->fallen_back))
        return 0;
    path_params params = p->path->params;
    params.backend = EIG_BACKEND_CPU;
    if (path_create(&p->fallback_path, &params, err, sizeof err) != PIPELINE_OK) {
        LOG_ERROR("solve", "solver.fallback cpu: cannot create the host path: %s", err);
        return 0;
    }
    atomic_store_explicit(&p->fallen_back, 1, memory_order_release);
    atomic_fetch_add_explicit(&p->stats.solver_fallbacks, 1, memory_order_relaxed);
    LOG_WARN("solve", "%s path failed: falling back to the host path with the cpu backend (solver.fallback)",
             path_name(p->path));
    return 1;
}

int pipeline_frame_is_late(const pipeline *p, const frame *f, uint64_t now_ns)
{
    return now_ns - f->received_ns > (uint64_t)pipeline_live_get(p)->deadline_ms * 1000000u;
}
