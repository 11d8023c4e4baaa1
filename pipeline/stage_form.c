/*
 * stage_form.c - the form stage: turns a received payload into the matrices
 * the solver reads (the path's forming: in place on the host, or the upload
 * and forming kernels enqueued on a device slot, so that the copy overlaps
 * the solve of the previous frame). A frame whose forming fails is dropped
 * as solver_error, with the reason in the log.
 */
#include "pipeline_internal.h"

stage_outcome stage_form_step(pipeline *p, frame *f, pipeline_drop_reason *reason)
{
    char err[192];
    if (path_form(p->path, f, err, sizeof err) == PIPELINE_OK)
        return STAGE_PASS;
    LOG_ERROR("form", "frame seq %llu: %s", (unsigned long long)f->header.seq, err);
    *reason = PIPELINE_DROP_SOLVER;
    return STAGE_DROP;
}
