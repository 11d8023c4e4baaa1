/*
 * stage_form.c - the form stage: turns a received payload into the matrices
 * the solver reads. CPU path: unpack packed storage in place, then
 * forward-backward averaging and diagonal loading when enabled (form.h).
 * GPU path: the frame goes to the device once (packed if it came packed) on
 * a free device slot's stream and is unpacked and formed there; this thread
 * only enqueues, so the copy overlaps the solve of the previous frame.
 */
#include "form.h"
#include "pipeline_internal.h"

#ifdef EIGSTREAM_PIPELINE_GPU
static int form_on_device(pipeline *p, frame *f)
{
    pipeline_gpu_form_params params = {
        .storage = f->header.storage,
        .forward_backward = p->cfg.form.forward_backward,
        .diagonal_loading = p->cfg.form.diagonal_loading,
        .loading_factor = p->loading_factor,
    };
    int slot = pipeline_gpu_slot_acquire(p->device);
    char err[160];
    if (pipeline_gpu_upload_form(p->device, slot, f->a, f->header.payload_bytes, &params, err,
                                 sizeof err) != 0) {
        LOG_ERROR("form", "device upload/form failed: %s", err);
        pipeline_gpu_slot_release(p->device, slot);
        return -1;
    }
    f->gpu_slot = slot;
    return 0;
}
#endif

void *pipeline_form_main(void *arg)
{
    pipeline *p = arg;
    frame *f;

    while (queue_pop(&p->to_form, (void **)&f) == QUEUE_OK) {
        uint64_t start = metrics_now_ns();
#ifdef EIGSTREAM_PIPELINE_GPU
        if (p->gpu) {
            if (form_on_device(p, f) != 0) {
                pipeline_frame_drop(p, f, METRICS_DROP_SOLVER);
                continue;
            }
            metrics_histogram_observe(&p->stats.latency[METRICS_STAGE_FORM], metrics_now_ns() - start);
            queue_push(&p->to_solve, f);
            continue;
        }
#endif
        form_unpack_in_place(f->a, p->n, p->matrices, p->element, f->header.storage);
        if (p->cfg.form.forward_backward)
            form_forward_backward(f->a, p->n, p->matrices, p->element);
        if (p->cfg.form.diagonal_loading)
            form_diagonal_loading(f->a, p->n, p->matrices, p->element, p->loading_factor);
        metrics_histogram_observe(&p->stats.latency[METRICS_STAGE_FORM], metrics_now_ns() - start);
        queue_push(&p->to_solve, f);
    }
    queue_close(&p->to_solve);
    return NULL;
}
