/*
 * path.h - a frame's data path: where its matrices are formed and solved,
 * and how its eigenspace reaches the output buffer. The stages call only
 * these functions; what is host- or GPU-specific lives behind them:
 *
 *   path_host.c   forming in place on the host, eig_plan_execute on any
 *                 backend (cpu, lapack, or cuda through its host entry)
 *   path_cuda.cu  upload once, forming kernels, eig_plan_execute_device_layout,
 *                 the vectors the mode sends copied straight into the output
 *                 buffer; device slots let one frame's copies overlap the
 *                 next one's solve (built with CUDA only)
 *
 * The calls a frame sees, each from the stage named, in this order:
 *   path_form           form stage    f->a as received -> matrices the solver reads
 *   path_solve          solve stage   eigenvalues and info on the host (f->w, f->info)
 *   path_check_start    solve stage   the self-check of matrix f->check.matrix
 *                                     (eig_check_pairs' ratios on every pair it
 *                                     has, before the output is trimmed): done
 *                                     on return (host) or in flight (cuda, a
 *                                     kernel on the slot's stream)
 *   path_output_start   solve stage   out->matrix_meta filled by output_describe:
 *                                     values and vectors into out->data, ready on
 *                                     return (host) or in flight (cuda)
 *   path_output_wait    publish stage out->data is complete, f->check DONE if started
 *   path_release        whoever ends the frame (pipeline_frame_release): gives
 *                       back what the path holds for f (f->slot), waiting first
 *                       for work still reading f->a or writing f->out
 * A frame may be released after any step. Each function returns PIPELINE_OK
 * or an error with a message in err; a failed step leaves the frame to be
 * dropped by the caller, never the path broken for the next frame.
 *
 * New paths (file input, IQ forming, several GPU workers) implement the
 * same path_ops.
 */
#ifndef EIGSTREAM_PATH_H
#define EIGSTREAM_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "eig.h"
#include "form_iq.h"
#include "frame.h"
#include "pipeline_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct eigstream_config; /* config.h: only path_plan.c reads one */

typedef struct path_params {
    uint32_t n, matrices;
    eig_precision precision;
    int need_vectors;      /* the output mode sends eigenvectors */
    eig_backend backend;   /* as configured; path_create resolves auto */
    int cpu_threads;       /* cpu and lapack backends; 0 = all cores */
    int gpu_device;        /* CUDA device ordinal */
    int forward_backward;  /* R <- (R + J conj(R) J) / 2 */
    int diagonal_loading;  /* R <- R + loading_factor * trace(R)/n * I */
    double loading_factor; /* linear, 10^(dB/10) */
    int iq_input;          /* frames carry raw IQ cubes, formed per iq (form_iq.h);
                              0 = covariance input */
    form_iq_params iq;
} path_params;

typedef struct path path;

typedef struct path_ops {
    const char *name; /* "host", "cuda" */
    void *(*buffer_alloc)(path *p, size_t bytes);
    void (*buffer_free)(path *p, void *ptr);
    pipeline_error (*form)(path *p, frame *f, char *err, size_t err_bytes);
    pipeline_error (*solve)(path *p, frame *f, char *err, size_t err_bytes);
    pipeline_error (*check_start)(path *p, frame *f, char *err, size_t err_bytes);
    pipeline_error (*output_start)(path *p, frame *f, output_buffer *out, char *err, size_t err_bytes);
    pipeline_error (*output_wait)(path *p, frame *f, char *err, size_t err_bytes);
    void (*release)(path *p, frame *f);
    void (*destroy)(path *p);
} path_ops;

/* What every path starts with; an implementation embeds it first. */
struct path {
    const path_ops *ops;
    path_params params;
    eig_backend backend; /* resolved: never auto */
    char device_name[256]; /* GPU name (cuda path, cudaDeviceProp.name), "" on the host */
};

/* Creates the path the parameters ask for: cuda when the backend resolves
 * to cuda and this build has the cuda path, else host. Creates the solver
 * plan and all path workspace. On failure *out is NULL and err says why
 * (PIPELINE_ESOLVER: no plan for these parameters; PIPELINE_ENOMEM). */
pipeline_error path_create(path **out, const path_params *params, char *err, size_t err_bytes);
/* Destroys *p (NULL is a no-op) and sets *p to NULL. */
void path_destroy(path **p);

const char *path_name(const path *p);
/* The GPU the path runs on (the CUDA device's name), "none" on the host path. */
const char *path_device_name(const path *p);

/* Host memory for frame payloads, values, info and output data, zeroed:
 * pinned on the cuda path (DMA straight from and to it), 64-byte aligned on
 * the host path. NULL when out of memory. */
void *path_buffer_alloc(path *p, size_t bytes);
void path_buffer_free(path *p, void *ptr);

pipeline_error path_form(path *p, frame *f, char *err, size_t err_bytes);
pipeline_error path_solve(path *p, frame *f, char *err, size_t err_bytes);
pipeline_error path_check_start(path *p, frame *f, char *err, size_t err_bytes);
pipeline_error path_output_start(path *p, frame *f, output_buffer *out, char *err, size_t err_bytes);
pipeline_error path_output_wait(path *p, frame *f, char *err, size_t err_bytes);
void path_release(path *p, frame *f);

/* The parameters a configuration asks for (path_plan.c): the solver's, the
 * conditioning's and, with form.input = iq, the forming's (iq.wisdom_file
 * points into cfg, which must outlive every path created from them). */
void path_params_from_config(path_params *params, const struct eigstream_config *cfg, int need_vectors);

/* For implementations: the solver plan's parameters (FULL, lower, the job
 * the mode needs, on backend); err gets why a plan could not be created. */
eig_plan_params path_plan_params(const path_params *params, eig_backend backend);
void path_plan_error(char *err, size_t err_bytes, const path_params *params, eig_error e);

/* The two implementations; path_create picks one. */
pipeline_error path_host_create(path **out, const path_params *params, eig_backend backend, char *err,
                                size_t err_bytes);
pipeline_error path_cuda_create(path **out, const path_params *params, char *err, size_t err_bytes);

#ifdef __cplusplus
}
#endif

#endif
