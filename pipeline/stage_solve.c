/*
 * stage_solve.c - the solve stage: one batched eigensolve per frame on the
 * path, the signal dimension of every matrix (fixed or MDL, from the values
 * the path brought to the host), then the frame's output buffer: its meta
 * described here, its data moved by the path (ready on the host path, in
 * flight on the cuda path, where the copies overlap the next frame's solve
 * and the publish stage waits for them).
 *
 * The solve stage drops a frame already past its deadline under late_policy
 * drop before spending a solve on it (stage.c). A solve that fails as a
 * whole drops the frame as solver_error; per-matrix failures travel in the
 * output's status fields.
 *
 * The self-check (docs/daemon.md, "Results that check themselves"): one
 * matrix a frame, rotating with the frame's ticket, checked by the path
 * right after the solve, while every eigenpair of it is still there (the
 * output then keeps only what the mode sends); a matrix whose solver info
 * is nonzero is not checked (its status already says it failed). The
 * publish stage reads the ratios.
 *
 * solver.fallback cpu: after such a path error the solve stage switches its
 * worker to the host path (pipeline_worker_fall_back) between frames. The
 * failed frame, and every frame the form stage formed on the old path
 * (in the solve queue, or being formed during the switch: on the cuda path
 * their matrices live in the old path's device slots), are dropped as
 * solver_error: none is re-formed. The old path stays alive, unused, until
 * pipeline_destroy: it owns the frame buffers and releases those frames.
 * With several workers each falls back on its own.
 */
#include <stdio.h>

#include "stage.h"

stage_outcome stage_solve_step(stage *s, frame *f, metrics_drop_reason *reason)
{
    char err[192];
    pipeline_worker *w = s->worker; /* the worker f was dealt to */
    *reason = METRICS_DROP_SOLVER;
    f->solve_start_real_ns = metrics_realtime_ns();
    if (f->path != pipeline_worker_path(w)) {
        snprintf(err, sizeof err, "formed on the %s path before the fallback", path_name(f->path));
        goto failed;
    }
    if (path_solve(f->path, f, err, sizeof err) != PIPELINE_OK)
        goto path_failed;
    f->check = (frame_check){.matrix = (uint32_t)(f->ticket % s->ctx->shape->matrices)};
    if (f->info[f->check.matrix] == 0 && path_check_start(f->path, f, err, sizeof err) != PIPELINE_OK)
        goto path_failed;
    output_signal_dimensions(&s->ctx->shape->format, f);
    /* The pool holds output.hwm + 2 buffers; one is free once ZeroMQ has
     * sent the oldest output. Closed only after every stage has ended. */
    if (pool_get(s->ctx->outputs, (void **)&f->out) != POOL_OK) {
        snprintf(err, sizeof err, "output pool closed");
        goto failed;
    }
    output_describe(&s->ctx->shape->format, f, f->out);
    if (path_output_start(f->path, f, f->out, err, sizeof err) != PIPELINE_OK)
        goto path_failed;
    f->solve_end_real_ns = metrics_realtime_ns();
    return STAGE_PASS;
path_failed:
    pipeline_worker_fall_back(s->ctx->p, w);
failed:
    LOG_ERROR("solve", "frame seq %llu: %s", (unsigned long long)f->header.seq, err);
    return STAGE_DROP;
}
