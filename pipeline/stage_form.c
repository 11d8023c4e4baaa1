/*
 * stage_form.c - the form stage: turns a received payload into the matrices
 * the solver reads (the path's forming: in place on the host, or the upload
 * and forming kernels enqueued on a device slot, so that the copy overlaps
 * the solve of the previous frame). A frame whose forming fails is dropped
 * as solver_error, with the reason in the log. The frame remembers the path
 * that formed it (f->path): after a solver.fallback switch, frames formed on
 * the old path are dropped by the solve stage.
 *
 * Each solver worker runs its own form stage on its own path
 * (pipeline_workers.c): the frame was dealt to this stage's worker.
 */
#include "stage.h"

stage_outcome stage_form_step(stage *s, frame *f, metrics_drop_reason *reason)
{
    char err[192];
    f->path = pipeline_worker_path(s->worker); /* the worker f was dealt to */
    if (path_form(f->path, f, err, sizeof err) == PIPELINE_OK)
        return STAGE_PASS;
    LOG_ERROR("form", "frame seq %llu: %s", (unsigned long long)f->header.seq, err);
    *reason = METRICS_DROP_SOLVER;
    return STAGE_DROP;
}
