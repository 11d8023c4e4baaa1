/*
 * path_plan.c - what the two frame paths share about their solver plan: its
 * parameters and the message when it cannot be created (path.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "path.h"

void path_params_from_config(path_params *params, const struct eigstream_config *cfg, int need_vectors)
{
    memset(params, 0, sizeof *params);
    params->n = (uint32_t)cfg->solver.n;
    params->matrices = (uint32_t)cfg->solver.matrices;
    params->precision = cfg->solver.precision;
    params->need_vectors = need_vectors;
    params->backend = cfg->solver.backend;
    params->cpu_threads = cfg->solver.cpu_threads;
    params->gpu_device = cfg->solver.gpu_device;
    params->forward_backward = cfg->form.forward_backward;
    params->diagonal_loading = cfg->form.diagonal_loading;
    params->loading_factor = pow(10.0, cfg->form.diagonal_loading_db / 10.0);
    params->iq_input = cfg->form.input == CONFIG_FORM_INPUT_IQ;
    params->iq = (form_iq_params){
        .channels = (uint32_t)cfg->solver.n,
        .pulses = (uint32_t)cfg->form.pulses,
        .gates = (uint32_t)cfg->form.range_gates,
        .format = (uint8_t)cfg->form.iq_format,
        .layout = (uint8_t)cfg->form.iq_layout,
        .precision = cfg->solver.precision,
        .window = cfg->form.window,
        .sidelobe_db = cfg->form.sidelobe_db,
        .fft_size = config_form_fft_size(cfg),
        .bin_first = (uint32_t)cfg->form.doppler_first,
        .bin_count = config_form_doppler_bins(cfg),
        .segments = (uint32_t)cfg->form.range_segments,
        .guard_gates = (uint32_t)cfg->form.guard_gates,
        .threads = cfg->form.fft_threads,
        .wisdom_file = cfg->form.fft_wisdom_file,
    };
}

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
