/*
 * pipeline_frames.c - the inter-stage queues, the frame and output pools
 * (engine.h says how many and why) and the end of a frame's life.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static void frame_free(void *item, void *ctx)
{
    frame *f = item;
    path *path = ctx;
    path_buffer_free(path, f->a);
    path_buffer_free(path, f->formed);
    path_buffer_free(path, f->w);
    path_buffer_free(path, f->info);
    free(f->signal_dim);
    free(f->part_bytes);
    free(f);
}

/* Bytes of the payload buffer: a frame's full matrices (formed in place on
 * the host path), or with IQ input one cube, received into it and formed
 * from it (into f->formed on the host path, on the device on the cuda path). */
static size_t frame_payload_capacity(const pipeline *p)
{
    if (p->shape.iq_input)
        return protocol_iq_cube_bytes(p->shape.n, p->shape.iq_pulses, p->shape.iq_gates, p->shape.iq_format);
    return (size_t)p->shape.matrices * p->shape.n * p->shape.n * eig_element_bytes(p->shape.precision);
}

/* IQ frames formed on the host need f->formed (frame.h): the host path,
 * or the cuda path with solver.fallback cpu (the host path may take over). */
static int frame_needs_formed(const pipeline *p)
{
    return p->path->params.iq_input &&
           (strcmp(path_name(p->path), "host") == 0 || p->cfg.solver.fallback == CONFIG_FALLBACK_CPU);
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
    f->drop_reason = -1;
    f->a_bytes = frame_payload_capacity(p);
    f->a = path_buffer_alloc(p->path, f->a_bytes);
    const frame_shape *shape = &p->shape;
    f->w = path_buffer_alloc(p->path, (size_t)shape->matrices * shape->n * eig_element_bytes(shape->precision) / 2);
    f->info = path_buffer_alloc(p->path, p->shape.matrices * sizeof *f->info);
    if (frame_needs_formed(p)) {
        f->formed_bytes = (size_t)p->shape.matrices * p->shape.n * p->shape.n * eig_element_bytes(p->shape.precision);
        f->formed = path_buffer_alloc(p->path, f->formed_bytes);
        if (f->formed == NULL) {
            frame_free(f, p->path);
            return NULL;
        }
    }
    f->signal_dim = calloc(p->shape.matrices, sizeof *f->signal_dim);
    f->part_bytes = calloc(p->shape.part_capacity, sizeof *f->part_bytes);
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
    o->meta = calloc(1, protocol_meta_bytes(p->shape.matrices));
    o->matrix_meta = calloc(p->shape.matrices, sizeof *o->matrix_meta);
    o->data = path_buffer_alloc(p->path, output_data_capacity(&p->shape.format));
    if (o->meta == NULL || o->matrix_meta == NULL || o->data == NULL) {
        output_free(o, p->path);
        return NULL;
    }
    return o;
}

/* input.io_threads > 1: the frames the receive merge (stage_receive_merge.c)
 * holds besides the receiver's one, a head per input socket after the
 * first, which the frame pool has in addition. */
static size_t merge_frames(const eigstream_config *cfg)
{
    return cfg->input.io_threads > 1 ? (size_t)cfg->input.io_threads - 1 : 0;
}

pipeline_error pipeline_frames_create(pipeline *p, char *err, size_t err_bytes)
{
    size_t depth = (size_t)p->cfg.frame.queue_depth;
    /* engine.h: why these counts. */
    size_t frames = (p->worker_count == 1 ? 3 * depth + 4 : depth + 3 + p->window_capacity) +
                    merge_frames(&p->cfg);
    size_t outputs = (size_t)(p->cfg.output.hwm > 0 ? p->cfg.output.hwm : 4) + 2;
    if (p->worker_count > 1)
        outputs += p->window_capacity; /* held by frames the reorder window holds */
    if (queue_init(&p->to_form, depth) != QUEUE_OK || queue_init(&p->to_publish, depth) != QUEUE_OK || pool_init(&p->frames, frames) != POOL_OK ||
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
    error_text_set(err, err_bytes, "cannot allocate %zu frame buffers of %.1f MB and %zu output buffers of %.1f MB (%s path)",
                       frames, (double)frame_payload_capacity(p) / 1e6, outputs,
                       (double)output_data_capacity(&p->shape.format) / 1e6, path_name(p->path));
    return PIPELINE_ENOMEM;
}

void pipeline_frames_destroy(pipeline *p)
{
    pool_destroy(&p->frames, frame_free, p->path);
    pool_destroy(&p->outputs, output_free, p->path);
    queue_destroy(&p->to_form);
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

void pipeline_frame_drop(pipeline *p, frame *f, metrics_drop_reason reason)
{
    uint64_t suppressed;
    metrics_count_drop(&p->stats, reason);
    if (log_get_level() >= LOG_LEVEL_WARN && log_limiter_allow(&p->drop_limit[reason], &suppressed))
        LOG_WARN("pipeline", "dropped frame seq %llu: %s (%llu more suppressed)",
                 (unsigned long long)f->header.seq, metrics_drop_name(reason), (unsigned long long)suppressed);
    pipeline_frame_release(p, f);
}

int pipeline_frame_is_late(const pipeline *p, const frame *f, uint64_t now_ns)
{
    return now_ns - f->received_ns > (uint64_t)pipeline_live_get(p)->deadline_ms * 1000000u;
}
