/*
 * bench_iq_cuda.cu - eigstream-bench iq, GPU part (bench_iq.c has the
 * rest): on one stream, timed by CUDA events, median and minimum of --runs
 * after two warm-ups:
 *   forming   cudaMemcpyAsync of the cube from pinned host memory to the
 *             device + form_iq_cuda_execute (convert, cuFFT, cuBLAS)
 *   (of it)   form_iq_cuda_execute alone, the cube already on the device
 *   solve     our cuda solver (eig_plan_execute_device_layout, FULL lower,
 *             eigenvectors: what the daemon's cuda path runs) on the matrices
 *             the forming made; each run starts from a pristine copy
 *             (restored outside the timed region)
 * and the ratio forming / solve (the issue's target: < 0.5).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench.h"
#include "eig.h"
#include "form_iq.h"

namespace {

struct gpu_buffers {
    void *h_cube = nullptr, *d_cube = nullptr, *d_formed = nullptr, *d_a = nullptr, *d_w = nullptr,
         *d_z = nullptr;
    int *d_info = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t t0 = nullptr, t1 = nullptr;
    form_iq_cuda *form = nullptr;
    eig_plan *solver = nullptr;

    ~gpu_buffers()
    {
        form_iq_cuda_destroy(&form);
        eig_plan_destroy(&solver);
        cudaFreeHost(h_cube);
        for (void *p : {d_cube, d_formed, d_a, d_w, d_z, (void *)d_info})
            cudaFree(p);
        if (t0 != nullptr)
            cudaEventDestroy(t0);
        if (t1 != nullptr)
            cudaEventDestroy(t1);
        if (stream != nullptr)
            cudaStreamDestroy(stream);
    }
};

int failed(const char *what, const char *why)
{
    fprintf(stderr, "eigstream-bench iq: %s: %s\n", what, why);
    return 1;
}

/* Times `runs` executions of step (which enqueues on b.stream and returns
 * false on a failure), each after prepare (untimed); median and min in ms. */
template <typename Prepare, typename Step>
bool time_steps(gpu_buffers &b, int runs, Prepare prepare, Step step, double &median, double &min)
{
    std::vector<double> ms;
    for (int r = -2; r < runs; r++) { /* two warm-ups */
        float t = 0;
        if (!prepare() || cudaEventRecord(b.t0, b.stream) != cudaSuccess || !step() ||
            cudaEventRecord(b.t1, b.stream) != cudaSuccess || cudaEventSynchronize(b.t1) != cudaSuccess ||
            cudaEventElapsedTime(&t, b.t0, b.t1) != cudaSuccess)
            return false;
        if (r >= 0)
            ms.push_back(t);
    }
    min = *std::min_element(ms.begin(), ms.end());
    median = bench_median(ms.data(), (int)ms.size());
    return true;
}

} // namespace

extern "C" int bench_iq_gpu(const form_iq_params *q, const void *cube, size_t cube_bytes, float scale, int runs)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("  GPU: no usable device, skipped\n");
        return 0;
    }
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, 0);
    printf("  GPU: %s\n", e == cudaSuccess ? prop.name : "?");
    const uint32_t n = q->channels, matrices = form_iq_matrices(q);
    const size_t formed_bytes = (size_t)matrices * n * n * eig_element_bytes(q->precision);
    gpu_buffers b;
    char err[256];
    if ((e = cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaEventCreate(&b.t0)) != cudaSuccess || (e = cudaEventCreate(&b.t1)) != cudaSuccess ||
        (e = cudaHostAlloc(&b.h_cube, cube_bytes, cudaHostAllocDefault)) != cudaSuccess ||
        (e = cudaMalloc(&b.d_cube, cube_bytes)) != cudaSuccess ||
        (e = cudaMalloc(&b.d_formed, formed_bytes)) != cudaSuccess ||
        (e = cudaMalloc(&b.d_a, formed_bytes)) != cudaSuccess || (e = cudaMalloc(&b.d_z, formed_bytes)) != cudaSuccess ||
        (e = cudaMalloc(&b.d_w, formed_bytes / n / 2)) != cudaSuccess ||
        (e = cudaMalloc((void **)&b.d_info, matrices * sizeof(int))) != cudaSuccess)
        return failed("device buffers", cudaGetErrorString(e));
    memcpy(b.h_cube, cube, cube_bytes);
    form_iq_error fe = form_iq_cuda_create(&b.form, q, b.stream, err, sizeof err);
    if (fe != FORM_IQ_OK)
        return failed("form_iq_cuda_create", err);
    eig_plan_params pp = eig_plan_params_default();
    pp.n = (int)n;
    pp.batch = (int)matrices;
    pp.precision = q->precision;
    pp.job = EIG_JOB_VECTORS;
    pp.storage = EIG_STORAGE_FULL;
    pp.uplo = EIG_LOWER;
    pp.backend = EIG_BACKEND_CUDA;
    pp.device_only = 1;
    eig_error ee = eig_plan_create(&b.solver, &pp);
    if (ee != EIG_OK)
        return failed("eig_plan_create (cuda)", eig_strerror(ee));

    auto nothing = [] { return true; };
    auto upload_and_form = [&] {
        return cudaMemcpyAsync(b.d_cube, b.h_cube, cube_bytes, cudaMemcpyHostToDevice, b.stream) == cudaSuccess &&
               form_iq_cuda_execute(b.form, b.d_cube, scale, b.d_formed, err, sizeof err) == FORM_IQ_OK;
    };
    auto form_only = [&] { return form_iq_cuda_execute(b.form, b.d_cube, scale, b.d_formed, err, sizeof err) == FORM_IQ_OK; };
    auto restore = [&] {
        return cudaMemcpyAsync(b.d_a, b.d_formed, formed_bytes, cudaMemcpyDeviceToDevice, b.stream) == cudaSuccess;
    };
    auto solve = [&] {
        return eig_plan_execute_device_layout(b.solver, EIG_STORAGE_FULL, EIG_LOWER, b.d_a, b.d_w, b.d_z, b.d_info,
                                              b.stream) == EIG_OK;
    };
    double form_med, form_min, alone_med, alone_min, solve_med, solve_min;
    if (!time_steps(b, runs, nothing, upload_and_form, form_med, form_min) ||
        !time_steps(b, runs, nothing, form_only, alone_med, alone_min))
        return failed("GPU forming", err[0] ? err : cudaGetErrorString(cudaGetLastError()));
    if (!time_steps(b, runs, restore, solve, solve_med, solve_min))
        return failed("GPU solve", cudaGetErrorString(cudaGetLastError()));
    std::vector<int> info(matrices);
    int bad = 0;
    if (cudaMemcpy(info.data(), b.d_info, matrices * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess)
        for (int i : info)
            bad += i != 0;
    printf("  GPU forming incl. cube copy (%.1f MB)      %10.3f ms median %10.3f min\n", cube_bytes / 1e6, form_med,
           form_min);
    printf("  GPU forming alone (cube on the device)    %10.3f ms median %10.3f min\n", alone_med, alone_min);
    printf("  GPU solve, ours (%u x %u, vectors)        %10.3f ms median %10.3f min  (%d info != 0)\n", matrices, n,
           solve_med, solve_min, bad);
    printf("  ratio GPU forming / GPU solve (median)   %10.3f   (target < 0.5)\n", form_med / solve_med);
    return bad == 0 ? 0 : failed("GPU solve", "matrices with info != 0");
}
