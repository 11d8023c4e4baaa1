/*
 * stage_deal.c - the deal stage (several solver workers only): takes
 * frames from the form queue in order and deals each to the worker with the
 * fewest frames in flight, ties to the lowest index (pipeline_worker_pick).
 * The frame's ticket, its place in the publish order, is given here.
 *
 * It waits (and so does the receiver behind it, under the overflow policy)
 * while every worker holds worker_capacity frames or the reorder window's
 * capacity is unpublished: a slow worker slows the stream instead of
 * growing a backlog. When the form queue is closed and empty it closes the
 * workers' form queues and ends.
 */
#include "stage.h"

void *stage_deal_main(void *arg)
{
    const stage_context *ctx = arg;
    pipeline *p = ctx->p;
    frame *f;
    while (queue_pop(ctx->to_form, (void **)&f) == QUEUE_OK) {
        pipeline_worker *w = pipeline_worker_pick(p);
        pipeline_worker_take(p, w, f);
        /* Never full (at most worker_capacity dealt); closed only below. */
        if (queue_push(&w->to_form, f) != QUEUE_OK) {
            LOG_ERROR("deal", "frame seq %llu: worker %d is closed", (unsigned long long)f->header.seq, w->index);
            f->drop_reason = METRICS_DROP_SOLVER;
            pipeline_worker_leave(p, w);
            if (queue_push(ctx->to_publish, f) != QUEUE_OK)
                pipeline_frame_drop(p, f, METRICS_DROP_SOLVER);
        }
    }
    for (int i = 0; i < ctx->worker_count; i++)
        queue_close(&ctx->workers[i].to_form);
    return NULL;
}
