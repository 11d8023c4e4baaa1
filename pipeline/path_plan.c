/*
 * path_plan.c - what the two frame paths share about their solver plan: its
 * parameters and the message when it cannot be created (path.h).
 */
#include <stdio.h>

#include "path.h"

eig_plan_params path_plan_params(const path_params *params, eig_backend backend)
{
    eig_plan_params pp = eig_plan_params_default();
    pp.n = (int)params->n;
    pp.batch = (int)params->matrices;
    pp.precision = params->precision;
    pp.job = params->need_vectors ? EIG_JOB_VECTORS : EIG_JOB_VALUES;
    pp.storage = EIG_STORAGE_FULL; /* after forming; the cuda path picks the layout per frame */
    pp.uplo = EIG_LOWER;
    pp.backend = backend;
    pp.threads = params->cpu_threads;
    pp.device = params->gpu_device;
    return pp;
}

void path_plan_error(char *err, size_t err_bytes, const path_params *params, eig_error e)
{
    if (e == EIG_ENODEVICE || e == EIG_ENOCUDA)
        snprintf(err, err_bytes, "solver.backend = %s: %s (eigstream built %s CUDA, %d usable GPU)",
                 eig_backend_name(params->backend), eig_strerror(e), eig_cuda_built() ? "with" : "without",
                 eig_cuda_device_count());
    else
        snprintf(err, err_bytes, "solver plan (n=%u, matrices=%u, %s, backend %s): %s", params->n,
                 params->matrices, eig_precision_name(params->precision), eig_backend_name(params->backend),
                 eig_strerror(e));
}
