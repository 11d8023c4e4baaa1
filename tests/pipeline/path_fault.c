/*
 * path_fault.c - the test path of path_fault.h: wraps whatever the real
 * path_create made (host or cuda) and forwards every path_ops call to it,
 * adding a delay before forming, whole-solve failures and wrong solutions
 * (every matrix's largest eigenvalue moved after the solve).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>

#include "path.h"
#include "path_fault.h"
#include "pipeline_test_util.h"

pipeline_error __real_path_create(path **out, const path_params *params, char *err, size_t err_bytes);
pipeline_error __wrap_path_create(path **out, const path_params *params, char *err, size_t err_bytes);

#define GATES 16

typedef struct path_fault {
    path base;
    path *inner;
    int form_delay_ms;
    int gate; /* -1: none */
    atomic_int failing_solves;
    atomic_int corrupt_solves;
} path_fault;

static path_fault_spec armed;
static int armed_paths, wrapped_paths;

/* One gate per armed path: forms wait while it is closed. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t opened;
    int open[GATES];
    int waiting[GATES];
} gates = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, {0}};

void path_fault_arm_paths(const path_fault_spec *spec, int paths)
{
    armed = *spec;
    armed_paths = paths;
    wrapped_paths = 0;
    pthread_mutex_lock(&gates.lock);
    for (int i = 0; i < GATES; i++)
        gates.open[i] = gates.waiting[i] = 0;
    pthread_mutex_unlock(&gates.lock);
}

void path_fault_arm(const path_fault_spec *spec)
{
    path_fault_arm_paths(spec, 1);
}

void path_fault_open(int i)
{
    pthread_mutex_lock(&gates.lock);
    gates.open[i] = 1;
    pthread_cond_broadcast(&gates.opened);
    pthread_mutex_unlock(&gates.lock);
}

int path_fault_waiting(int i)
{
    pthread_mutex_lock(&gates.lock);
    int waiting = gates.waiting[i];
    pthread_mutex_unlock(&gates.lock);
    return waiting;
}

static void gate_pass(int i)
{
    pthread_mutex_lock(&gates.lock);
    gates.waiting[i]++;
    while (!gates.open[i])
        pthread_cond_wait(&gates.opened, &gates.lock);
    gates.waiting[i]--;
    pthread_mutex_unlock(&gates.lock);
}

static path *inner_of(path *p)
{
    return ((path_fault *)p)->inner;
}

static void *fault_buffer_alloc(path *p, size_t bytes)
{
    return path_buffer_alloc(inner_of(p), bytes);
}

static void fault_buffer_free(path *p, void *ptr)
{
    path_buffer_free(inner_of(p), ptr);
}

static pipeline_error fault_form(path *p, frame *f, char *err, size_t err_bytes)
{
    int delay = ((path_fault *)p)->form_delay_ms;
    if (((path_fault *)p)->gate >= 0)
        gate_pass(((path_fault *)p)->gate);
    if (delay > 0)
        test_sleep_ms(delay);
    return path_form(inner_of(p), f, err, err_bytes);
}

/* A wrong solution as a broken solver would publish it: each matrix's
 * largest eigenvalue moved by 1 % of its size (or by 0.01 when it is 0),
 * its vectors left alone. The order stays ascending. */
static void corrupt_values(const path_params *q, frame *f)
{
    for (uint32_t b = 0; b < q->matrices; b++) {
        size_t last = (size_t)b * q->n + q->n - 1;
        if (q->precision == EIG_COMPLEX_DOUBLE) {
            double *w = f->w;
            w[last] += 1e-2 * (fabs(w[last]) > 1 ? fabs(w[last]) : 1);
        } else {
            float *w = f->w;
            w[last] += 1e-2f * (fabsf(w[last]) > 1 ? fabsf(w[last]) : 1);
        }
    }
}

static pipeline_error fault_solve(path *p, frame *f, char *err, size_t err_bytes)
{
    path_fault *q = (path_fault *)p;
    if (atomic_fetch_sub(&q->failing_solves, 1) > 0) {
        snprintf(err, err_bytes, "injected solve failure (tests/pipeline/path_fault.c)");
        return PIPELINE_ESOLVER;
    }
    pipeline_error e = path_solve(q->inner, f, err, err_bytes);
    if (e == PIPELINE_OK && atomic_fetch_sub(&q->corrupt_solves, 1) > 0)
        corrupt_values(&p->params, f);
    return e;
}

static pipeline_error fault_check_start(path *p, frame *f, char *err, size_t err_bytes)
{
    return path_check_start(inner_of(p), f, err, err_bytes);
}

static pipeline_error fault_output_start(path *p, frame *f, output_buffer *out, char *err, size_t err_bytes)
{
    return path_output_start(inner_of(p), f, out, err, err_bytes);
}

static pipeline_error fault_output_wait(path *p, frame *f, char *err, size_t err_bytes)
{
    return path_output_wait(inner_of(p), f, err, err_bytes);
}

static void fault_release(path *p, frame *f)
{
    path_release(inner_of(p), f);
}

static void fault_destroy(path *p)
{
    path_fault *q = (path_fault *)p;
    path_destroy(&q->inner);
    free(q);
}

static const path_ops fault_ops = {
    .name = "fault",
    .buffer_alloc = fault_buffer_alloc,
    .buffer_free = fault_buffer_free,
    .form = fault_form,
    .solve = fault_solve,
    .check_start = fault_check_start,
    .output_start = fault_output_start,
    .output_wait = fault_output_wait,
    .release = fault_release,
    .destroy = fault_destroy,
};

/* The real path; wrapped while armed paths remain. */
pipeline_error __wrap_path_create(path **out, const path_params *params, char *err, size_t err_bytes)
{
    pipeline_error e = __real_path_create(out, params, err, err_bytes);
    if (e != PIPELINE_OK || wrapped_paths >= armed_paths)
        return e;
    int index = wrapped_paths++;
    path_fault *q = calloc(1, sizeof *q);
    if (q == NULL) {
        path_destroy(out);
        snprintf(err, err_bytes, "out of memory");
        return PIPELINE_ENOMEM;
    }
    q->inner = *out;
    q->base = *q->inner; /* params, resolved backend, device name */
    q->base.ops = &fault_ops;
    q->form_delay_ms = armed.form_delay_ms;
    q->gate = armed.gated && index < GATES ? index : -1;
    atomic_init(&q->failing_solves, armed.failing_solves);
    atomic_init(&q->corrupt_solves, armed.corrupt_solves);
    *out = &q->base;
    return PIPELINE_OK;
}
