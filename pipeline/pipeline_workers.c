/*
 * pipeline_workers.c - the solver workers (engine.h draws the
 * flow): each its own frame path and form and solve stages; the load
 * bookkeeping the deal stage deals by; the per-worker solver.fallback.
 *
 * Bounds (docs/daemon.md, "Several solver workers"):
 *   one worker: nothing changes: its queues (queue_depth each) bound what it
 *     holds; frames come in order, so the window never holds one back;
 *     window_capacity = 2 * queue_depth + 3 covers everything after the form
 *     queue.
 *   several workers:
 *     worker_capacity = 3               frames dealt to one worker at a time:
 *                                       one forming, one solving, one waiting
 *     window_capacity = workers * 3 + 2 frames dealt and not yet closed by
 *                                       the publish stage
 *   The deal stage waits while unpublished == window_capacity, so the reorder
 *   window (it spans at most the unpublished tickets) is never full. Every
 *   frame held in the window keeps its output buffer (the host path's
 *   vectors live in one per-path workspace; the cuda path copies into it
 *   from the device), so the output pool gets window_capacity buffers more
 *   (pipeline_frames.c): the frame the window waits for always finds one.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "reorder.h"

_Static_assert(PIPELINE_WORKERS_MAX == CONFIG_LIST_MAX, "one worker per solver.gpu_devices entry");

static pipeline_error worker_path_create(pipeline *p, pipeline_worker *w, char *err, size_t err_bytes)
{
    path_params params;
    path_params_from_config(&params, &p->cfg, output_sends_vectors(&p->shape.format));
    params.gpu_device = w->device;
    char why[192];
    pipeline_error e = path_create(&w->path, &params, why, sizeof why);
    if (e != PIPELINE_OK && p->worker_count > 1)
        error_text_set(err, err_bytes, "solver worker %d (device %d): %s", w->index, w->device, why);
    else if (e != PIPELINE_OK)
        error_text_set(err, err_bytes, "%s", why);
    return e;
}

/* The worker's stages: form (from to_form, or p->to_form with one worker)
 * into to_solve; solve into the shared publish queue. */
static void worker_stages_set(pipeline *p, pipeline_worker *w)
{
    int alone = p->worker_count == 1;
    w->form = (stage){.name = "form", .ctx = &p->context, .in = alone ? &p->to_form : &w->to_form, .out = &w->to_solve,
                      .metric = METRICS_STAGE_FORM, .step = stage_form_step, .worker = w, .takes_frames = alone};
    w->solve = (stage){.name = "solve", .ctx = &p->context, .in = &w->to_solve, .out = &p->to_publish,
                       .metric = METRICS_STAGE_SOLVE, .drop_late = 1, .step = stage_solve_step, .worker = w,
                       .last_in_worker = 1};
    /* What the watchdog's STATUS names: the worker only when there are several. */
    stage *both[2] = {&w->form, &w->solve};
    for (int i = 0; i < 2; i++) {
        if (alone)
            snprintf(both[i]->label, sizeof both[i]->label, "%s", both[i]->name);
        else
            snprintf(both[i]->label, sizeof both[i]->label, "%s (worker %d)", both[i]->name, w->index);
    }
}

/* "3 solver workers: 0 cuda device 0, 1 cuda device 0, ..." (info). */
static void workers_log(const pipeline *p)
{
    char text[1024];
    size_t used = 0;
    for (int i = 0; i < p->worker_count && used < sizeof text; i++) {
        const path *q = p->workers[i].path;
        int w = snprintf(text + used, sizeof text - used, "%s%d %s", i ? ", " : "", i, path_name(q));
        used += w > 0 ? (size_t)w : 0;
        if (used < sizeof text && q->backend == EIG_BACKEND_CUDA) {
            w = snprintf(text + used, sizeof text - used, " device %d", p->workers[i].device);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    LOG_INFO("pipeline", "%d solver workers: %s; reorder window %zu frames", p->worker_count, text,
             p->window_capacity);
}

pipeline_error pipeline_workers_create(pipeline *p, char *err, size_t err_bytes)
{
    size_t depth = (size_t)p->cfg.frame.queue_depth;
    p->worker_count = config_solver_worker_count(&p->cfg);
    p->worker_capacity = p->worker_count == 1 ? depth + 2 : 3;
    p->window_capacity = p->worker_count == 1 ? 2 * depth + 3 : (size_t)p->worker_count * p->worker_capacity + 2;
    p->publish.stage = (stage){.name = "publish", .ctx = &p->context, .in = &p->to_publish,
                               .metric = METRICS_STAGE_PUBLISH, .label = "publish"};
    atomic_store(&p->publish_producers, 2 * p->worker_count);
    for (int i = 0; i < p->worker_count; i++) {
        pipeline_worker *w = &p->workers[i];
        w->index = i;
        w->device = config_solver_worker_device(&p->cfg, i);
        pipeline_error e = worker_path_create(p, w, err, err_bytes);
        if (e != PIPELINE_OK)
            return e;
        if (i == 0)
            p->path = w->path; /* the buffers' allocator, from here on */
        /* A worker fed by the deal stage never has its form queue full:
         * the deal stage deals it at most worker_capacity frames. */
        if (queue_init(&w->to_form, p->worker_count > 1 ? p->worker_capacity : 1) != QUEUE_OK ||
            queue_init(&w->to_solve, depth) != QUEUE_OK)
            goto nomem;
        worker_stages_set(p, w);
    }
    if (p->worker_count > 1)
        workers_log(p);
    /* Tickets start at 0: a later ticket arriving first must wait for it. */
    if (reorder_create(&p->publish.window, p->window_capacity) != REORDER_OK ||
        reorder_start(p->publish.window, 0) != REORDER_OK)
        goto nomem;
    return PIPELINE_OK;
nomem:
    error_text_set(err, err_bytes, "out of memory (solver worker queues, reorder window)");
    return PIPELINE_ENOMEM;
}

void pipeline_workers_destroy(pipeline *p)
{
    for (int i = 0; i < p->worker_count; i++) {
        pipeline_worker *w = &p->workers[i];
        path_destroy(&w->fallback_path);
        path_destroy(&w->path);
        queue_destroy(&w->to_form);
        queue_destroy(&w->to_solve);
    }
    p->path = NULL;
    reorder_destroy(&p->publish.window);
}

/* ---- threads ------------------------------------------------------------------- */

int pipeline_workers_start(pipeline *p)
{
    int rc = pthread_create(&p->publish_thread, NULL, stage_publish_main, &p->publish);
    int publish_started = rc == 0;
    if (publish_started)
        pipeline_realtime_thread(p, p->publish_thread, CONFIG_THREAD_PUBLISH, -1);
    /* realtime.cpu_affinity_form and _solve apply to every worker's form and
     * solve thread; the threads of worker w > 0 are eigs-form-W, eigs-solve-W. */
    for (int i = 0; i < p->worker_count && rc == 0; i++) {
        pipeline_worker *w = &p->workers[i];
        rc = pthread_create(&w->threads[1], NULL, stage_main, &w->solve);
        if (rc == 0 && (rc = pthread_create(&w->threads[0], NULL, stage_main, &w->form)) != 0) {
            queue_close(&w->to_solve); /* the solve stage ends; its form stage never ran */
            pthread_join(w->threads[1], NULL);
        }
        w->started = rc == 0;
        if (w->started) {
            pipeline_realtime_thread(p, w->threads[1], CONFIG_THREAD_SOLVE, i);
            pipeline_realtime_thread(p, w->threads[0], CONFIG_THREAD_FORM, i);
        }
    }
    if (rc == 0 && p->worker_count > 1) {
        rc = pthread_create(&p->deal_thread, NULL, stage_deal_main, &p->context);
        p->dealing = rc == 0;
        if (p->dealing) /* eigs-deal: in the frame path before the forms, so their CPU set */
            pipeline_realtime_thread(p, p->deal_thread, CONFIG_THREAD_FORM, -1);
    }
    if (rc == 0)
        return 0;
    /* Nothing downstream of the gap would drain: close every queue. */
    queue_close(&p->to_form);
    queue_close(&p->to_publish);
    for (int i = 0; i < p->worker_count; i++) {
        queue_close(&p->workers[i].to_form);
        queue_close(&p->workers[i].to_solve);
    }
    for (int i = 0; i < p->worker_count; i++)
        if (p->workers[i].started) {
            pthread_join(p->workers[i].threads[0], NULL);
            pthread_join(p->workers[i].threads[1], NULL);
            p->workers[i].started = 0;
        }
    if (publish_started)
        pthread_join(p->publish_thread, NULL);
    return rc;
}

pipeline_error pipeline_workers_join(pipeline *p)
{
    pipeline_error e = PIPELINE_OK;
    if (p->dealing)
        pthread_join(p->deal_thread, NULL);
    for (int i = 0; i < p->worker_count; i++) {
        pipeline_worker *w = &p->workers[i];
        pthread_join(w->threads[0], NULL);
        pthread_join(w->threads[1], NULL);
        if (e == PIPELINE_OK)
            e = w->form.result != PIPELINE_OK ? w->form.result : w->solve.result;
    }
    pthread_join(p->publish_thread, NULL);
    return e == PIPELINE_OK ? p->publish.stage.result : e;
}

/* ---- dealing ------------------------------------------------------------------- */

static int worker_in_flight(const pipeline *p, int i)
{
    return atomic_load_explicit(&p->stats.worker[i].in_flight, memory_order_relaxed);
}

pipeline_worker *pipeline_worker_pick(pipeline *p)
{
    pthread_mutex_lock(&p->deal_lock);
    for (;;) {
        int best = 0;
        for (int i = 1; i < p->worker_count; i++)
            if (worker_in_flight(p, i) < worker_in_flight(p, best))
                best = i;
        if ((size_t)worker_in_flight(p, best) < p->worker_capacity && p->unpublished < p->window_capacity) {
            pthread_mutex_unlock(&p->deal_lock);
            return &p->workers[best];
        }
        pthread_cond_wait(&p->deal_room, &p->deal_lock);
    }
}

void pipeline_worker_take(pipeline *p, pipeline_worker *w, frame *f)
{
    f->ticket = p->next_ticket++;
    f->worker = w->index;
    f->drop_reason = -1;
    metrics_worker *m = &p->stats.worker[w->index];
    atomic_fetch_add_explicit(&m->frames, 1, memory_order_relaxed);
    pthread_mutex_lock(&p->deal_lock);
    atomic_fetch_add_explicit(&m->in_flight, 1, memory_order_relaxed);
    p->unpublished++;
    pthread_mutex_unlock(&p->deal_lock);
}

void pipeline_worker_leave(pipeline *p, pipeline_worker *w)
{
    pthread_mutex_lock(&p->deal_lock);
    atomic_fetch_sub_explicit(&p->stats.worker[w->index].in_flight, 1, memory_order_relaxed);
    pthread_cond_signal(&p->deal_room);
    pthread_mutex_unlock(&p->deal_lock);
}

void pipeline_worker_stage_ended(pipeline *p)
{
    if (atomic_fetch_sub(&p->publish_producers, 1) == 1)
        queue_close(&p->to_publish);
}

void pipeline_ticket_closed(pipeline *p)
{
    pthread_mutex_lock(&p->deal_lock);
    p->unpublished--;
    pthread_cond_signal(&p->deal_room);
    pthread_mutex_unlock(&p->deal_lock);
}

/* ---- paths and fallback -------------------------------------------------------- */

path *pipeline_worker_path(const pipeline_worker *w)
{
    /* Acquire: fallback_path is written before fallen_back is set. */
    return atomic_load_explicit(&w->fallen_back, memory_order_acquire) ? w->fallback_path : w->path;
}

path *pipeline_active_path(const pipeline *p)
{
    return pipeline_worker_path(&p->workers[0]);
}

int pipeline_worker_fall_back(pipeline *p, pipeline_worker *w)
{
    char err[192];
    if (p->cfg.solver.fallback != CONFIG_FALLBACK_CPU || atomic_load(&w->fallen_back))
        return 0;
    path_params params = w->path->params;
    params.backend = EIG_BACKEND_CPU;
    if (path_create(&w->fallback_path, &params, err, sizeof err) != PIPELINE_OK) {
        LOG_ERROR("solve", "solver.fallback cpu: cannot create the host path of worker %d: %s", w->index, err);
        return 0;
    }
    atomic_store_explicit(&w->fallen_back, 1, memory_order_release);
    atomic_fetch_add_explicit(&p->stats.solver_fallbacks, 1, memory_order_relaxed);
    LOG_WARN("solve", "worker %d: %s path failed: falling back to the host path with the cpu backend (solver.fallback)",
             w->index, path_name(w->path));
    return 1;
}
