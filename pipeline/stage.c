/*
 * stage.c - the loop every queue-fed stage (form, solve, publish) runs; the
 * stage's own work is its step function (stage_*.c).
 *
 * Shutdown drains in stage order: the loop ends when its input queue is
 * closed and empty, then closes its output queue, so every frame accepted
 * before the stop is carried to the end or dropped with a reason.
 */
#include "pipeline_internal.h"

void *stage_main(void *arg)
{
    stage *s = arg;
    pipeline *p = s->p;
    frame *f;

    s->result = PIPELINE_OK;
    while (queue_pop(s->in, (void **)&f) == QUEUE_OK) {
        uint64_t start = metrics_now_ns();
        pipeline_drop_reason reason = PIPELINE_DROP_SOLVER;
        if (s->drop_late && pipeline_live_get(p)->late_policy == CONFIG_LATE_DROP && pipeline_frame_is_late(p, f, start)) {
            pipeline_frame_drop(p, f, PIPELINE_DROP_LATE);
            continue;
        }
        atomic_store_explicit(&s->busy_seq, f->header.seq, memory_order_relaxed);
        atomic_store_explicit(&s->busy_since_ns, start, memory_order_release);
        stage_outcome outcome = s->step(p, f, &reason);
        atomic_store_explicit(&s->busy_since_ns, 0, memory_order_release);
        if (outcome == STAGE_DROP) {
            pipeline_frame_drop(p, f, reason);
            continue;
        }
        if (outcome == STAGE_DONE)
            continue;
        metrics_histogram_observe(&p->stats.latency[s->metric], metrics_now_ns() - start);
        /* Only a closed queue refuses, and this stage's output queue is
         * closed by this loop alone, after it ends. */
        if (s->out == NULL || queue_push(s->out, f) != QUEUE_OK) {
            LOG_ERROR(s->name, "frame seq %llu has no next stage", (unsigned long long)f->header.seq);
            pipeline_frame_drop(p, f, PIPELINE_DROP_SOLVER);
        }
    }
    if (s->out != NULL)
        queue_close(s->out);
    return NULL;
}
