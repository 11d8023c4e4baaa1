/*
 * stage.c - the loop the queue-fed worker stages (form, solve) run; the
 * stage's own work is its step function (stage_*.c). The publish stage has
 * its own loop (stage_publish.c: the reorder window waits on time too).
 *
 * A frame a worker stage drops still goes to the publish stage, marked with
 * its reason (f->drop_reason): the publish stage counts the drop and closes
 * the frame's ticket, so that the reorder window does not wait for it.
 *
 * Shutdown drains in stage order: the loop ends when its input queue is
 * closed and empty, then closes its output queue (the publish queue, shared
 * by every worker's stages, is closed by the last of them), so every frame
 * accepted before the stop is carried to the end or dropped with a reason.
 */
#include "stage.h"

/* Hands f to the publish stage as dropped for reason. */
static void stage_forward_drop(stage *s, frame *f, metrics_drop_reason reason)
{
    pipeline *p = s->ctx->p;
    f->drop_reason = (int)reason;
    pipeline_worker_leave(p, s->worker);
    /* Only a closed queue refuses, and the publish queue closes after the
     * last worker stage has ended. */
    if (queue_push(s->ctx->to_publish, f) != QUEUE_OK) {
        LOG_ERROR(s->name, "frame seq %llu: the publish queue is closed", (unsigned long long)f->header.seq);
        pipeline_frame_drop(p, f, reason);
    }
}

/* The stage has ended: closes what only it feeds; the last worker stage to
 * end closes the publish queue. */
static void stage_close_outputs(stage *s)
{
    if (!s->last_in_worker && s->out != NULL)
        queue_close(s->out);
    pipeline_worker_stage_ended(s->ctx->p);
}

void *stage_main(void *arg)
{
    stage *s = arg;
    pipeline *p = s->ctx->p;
    metrics_worker *busy = &s->ctx->stats->worker[s->worker->index];
    frame *f;

    s->result = PIPELINE_OK;
    while (queue_pop(s->in, (void **)&f) == QUEUE_OK) {
        uint64_t start = metrics_now_ns();
        metrics_drop_reason reason = METRICS_DROP_SOLVER;
        if (s->takes_frames)
            pipeline_worker_take(p, s->worker, f);
        if (s->drop_late && s->ctx->live->late_policy == CONFIG_LATE_DROP &&
            pipeline_frame_is_late(p, f, start)) {
            stage_forward_drop(s, f, METRICS_DROP_LATE);
            continue;
        }
        atomic_store_explicit(&s->busy_seq, f->header.seq, memory_order_relaxed);
        atomic_store_explicit(&s->busy_since_ns, start, memory_order_release);
        stage_outcome outcome = s->step(s, f, &reason);
        atomic_store_explicit(&s->busy_since_ns, 0, memory_order_release);
        uint64_t end = metrics_now_ns();
        if (s->last_in_worker)
            atomic_fetch_add_explicit(&busy->busy_ns, end - start, memory_order_relaxed);
        if (outcome != STAGE_PASS) {
            stage_forward_drop(s, f, reason);
            continue;
        }
        metrics_histogram_observe(&s->ctx->stats->latency[s->metric], end - start);
        if (s->last_in_worker)
            pipeline_worker_leave(p, s->worker);
        /* Only a closed queue refuses, and this stage's output queue is
         * closed after it ends. */
        if (queue_push(s->out, f) != QUEUE_OK) {
            LOG_ERROR(s->name, "frame seq %llu has no next stage", (unsigned long long)f->header.seq);
            if (!s->last_in_worker)
                stage_forward_drop(s, f, METRICS_DROP_SOLVER);
            else
                pipeline_frame_drop(p, f, METRICS_DROP_SOLVER);
        }
    }
    stage_close_outputs(s);
    return NULL;
}
