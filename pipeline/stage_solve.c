/*
 * stage_solve.c - the solve stage: one batched eigensolve per frame, then
 * the signal dimension of every matrix (fixed or MDL).
 *
 * CPU path: eig_plan_execute on the host frame (values, and vectors when the
 * output mode sends any). GPU path: eig_plan_execute_device on the frame's
 * device slot, ordered after the previous frame's solve (one plan, one
 * workspace), the values and info copied back and waited for (MDL needs them
 * on the host), then only the vectors the output mode sends are copied
 * straight into a pinned output buffer, asynchronously: those copies overlap
 * the next frame's solve, and the publish stage waits for them.
 *
 * A frame already past its deadline under late_policy drop is dropped here,
 * before spending a solve on it.
 */
#include <stdio.h>
#include <string.h>

#include "pipeline_internal.h"

static void solve_on_host(pipeline *p, frame *f)
{
    eig_error e = eig_plan_execute(p->plan, f->a, f->w, p->need_vectors ? f->z : NULL, f->info);
    if (e != EIG_OK && e != EIG_EMATRIX) {
        LOG_ERROR("solve", "frame seq %llu: solver failed: %s", (unsigned long long)f->header.seq,
                  eig_strerror(e));
        f->solver_failed = 1;
        return;
    }
    output_signal_dimensions(p, f);
}

#ifdef EIGSTREAM_PIPELINE_GPU
/* Fills out from the device slot: values (already on the host, for MDL) by
 * memcpy, the vectors the mode sends by asynchronous copies straight from the
 * device into the pinned output buffer (one strided copy when every matrix
 * sends the same columns, else one per matrix). */
static int download_outputs(pipeline *p, frame *f, output_buffer *out, char *err, size_t err_bytes)
{
    size_t values_bytes = (size_t)p->n * p->real_bytes;
    size_t column_bytes = (size_t)p->n * p->element_bytes;
    uint8_t *dst = out->data;
    int uniform = 1;
    for (uint32_t b = 0; b < p->matrices; b++) {
        protocol_matrix_meta *m = &out->matrix_meta[b];
        m->status = f->info[b];
        m->signal_dim = f->signal_dim[b];
        output_matrix_layout(p, m->signal_dim, &m->k_sent, &m->first_index);
        if (m->k_sent != out->matrix_meta[0].k_sent || m->first_index != out->matrix_meta[0].first_index)
            uniform = 0;
    }
    if (uniform && out->matrix_meta[0].k_sent > 0) {
        const protocol_matrix_meta *m = &out->matrix_meta[0];
        size_t pitch = values_bytes + m->k_sent * column_bytes;
        if (pipeline_gpu_copy_vectors_strided(p->device, f->gpu_slot, m->first_index, m->k_sent, dst + values_bytes,
                                              pitch, err, err_bytes) != 0)
            return -1;
    }
    for (uint32_t b = 0; b < p->matrices; b++) {
        const protocol_matrix_meta *m = &out->matrix_meta[b];
        memcpy(dst, (const uint8_t *)f->w + b * values_bytes, values_bytes);
        dst += values_bytes;
        if (!uniform && m->k_sent > 0 &&
            pipeline_gpu_copy_vectors(p->device, f->gpu_slot, b, m->first_index, m->k_sent, dst, err, err_bytes) != 0)
            return -1;
        dst += m->k_sent * column_bytes;
    }
    out->data_bytes = (size_t)(dst - out->data);
    return 0;
}

static void solve_on_device(pipeline *p, frame *f)
{
    char err[160];
    int slot = f->gpu_slot;
    eig_plan *plan = p->plan;
    int storage = pipeline_gpu_slot_storage(p->device, slot);
    if (storage == PROTOCOL_STORAGE_PACKED_LOWER)
        plan = p->plan_packed[0];
    else if (storage == PROTOCOL_STORAGE_PACKED_UPPER)
        plan = p->plan_packed[1];

    pipeline_gpu_buffers d;
    pipeline_gpu_slot_buffers(p->device, slot, &d);
    if (pipeline_gpu_solve_begin(p->device, slot, err, sizeof err) != 0)
        goto failed;
    eig_error e = eig_plan_execute_device(plan, d.matrices, d.w, p->need_vectors ? d.z : NULL, d.info,
                                          d.stream);
    if (e != EIG_OK) {
        snprintf(err, sizeof err, "eig_plan_execute_device: %s", eig_strerror(e));
        goto failed;
    }
    if (pipeline_gpu_solve_end(p->device, slot, f->w, f->info, err, sizeof err) != 0)
        goto failed;
    output_signal_dimensions(p, f);

    /* Values and the selected vectors go straight into the output buffer. */
    output_buffer *out;
    pool_get(&p->outputs, (void **)&out);
    if (download_outputs(p, f, out, err, sizeof err) != 0) {
        pool_put(&p->outputs, out);
        goto failed;
    }
    f->out = out;
    return;

failed:
    LOG_ERROR("solve", "frame seq %llu: device solve failed: %s", (unsigned long long)f->header.seq, err);
    f->solver_failed = 1;
}
#endif

void *pipeline_solve_main(void *arg)
{
    pipeline *p = arg;
    frame *f;

    while (queue_pop(&p->to_solve, (void **)&f) == QUEUE_OK) {
        uint64_t start = metrics_now_ns();
        if (p->cfg.frame.late_policy == CONFIG_LATE_DROP && pipeline_frame_is_late(p, f, start)) {
            pipeline_frame_drop(p, f, METRICS_DROP_LATE);
            continue;
        }
        f->solve_start_real_ns = metrics_realtime_ns();
#ifdef EIGSTREAM_PIPELINE_GPU
        if (p->gpu)
            solve_on_device(p, f);
        else
#endif
            solve_on_host(p, f);
        if (f->solver_failed) {
            pipeline_frame_drop(p, f, METRICS_DROP_SOLVER);
            continue;
        }
        f->solve_end_real_ns = metrics_realtime_ns();
        metrics_histogram_observe(&p->stats.latency[METRICS_STAGE_SOLVE], metrics_now_ns() - start);
        queue_push(&p->to_publish, f);
    }
    queue_close(&p->to_publish);
    return NULL;
}
