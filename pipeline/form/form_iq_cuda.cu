/*
 * form_iq_cuda.cu - IQ cube forming on the GPU (form_iq.h, the GPU plan):
 * the same maths as form_iq.c, on one CUDA stream, with nothing copied back.
 *
 * Steps of form_iq_cuda_execute, for C channels, P pulses, G gates, F = fft_size:
 *   1. convert_kernel: raw * scale * w[p] of the cube as received (any
 *      layout, ci16_le or cf32_le) into `work`, ordered [pulse][gate][channel]
 *      with F pulses, the pulses P..F-1 written as zeros (the zero padding).
 *      Reordering here is free (every sample is read and written once
 *      anyway) and it gives both later steps unit strides: cufftPlanMany has
 *      a single batch distance, which only a layout whose channels x gates
 *      form one linear index has, and the GEMM wants channels fastest.
 *      Grid-stride loop over the F*G*C outputs, 256 threads a block: the
 *      writes are coalesced; the reads are for pgc, strided for cpg and pcg
 *      (one pass over a cube of a few tens of MB: microseconds).
 *   2. cuFFT: one C2C plan (Z2Z for double), made at create, in place,
 *      F points at stride G*C, batched over the G*C (gate, channel) pairs at
 *      distance 1: work becomes the spectrum [bin][gate][channel].
 *   3. covariances: R = (1/K) X X^H, X the n x (gate range) block of one bin
 *      (column-major, ld = C). The bins of a segment are equally spaced in
 *      work (G*C elements) and the matrices they become too (segments*n*n),
 *      so one cublas{C,Z}gemmStridedBatched covers a segment's bins, per
 *      gate range left and right of the guard cells (the second adds, beta
 *      1) and per run of bins before and after a wrap past bin F-1: at most
 *      4 calls per segment. GEMM writes the full matrix (cuBLAS has no
 *      batched HERK; the upper half costs twice the flops of HERK but one
 *      call instead of one per matrix); on GPUs with FP64 tensor cores
 *      (sm_80+) cuBLAS runs ZGEMM on them by default.
 * Workspace: F*G*C complex elements (the padded cube, then its spectrum),
 * the cuFFT work area and P window coefficients (double).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <cmath>
#include <new>

#include <stdio.h>

#include "form_iq.h"
#include "protocol.h"

namespace {

constexpr int kThreads = 256;

template <typename C>
struct real_of;
template <>
struct real_of<float2> {
    using type = float;
};
template <>
struct real_of<double2> {
    using type = double;
};

/* Element index of sample (c, p, g) in the wire layout (protocol.h). */
__device__ size_t wire_index(int layout, size_t c, size_t p, size_t g, size_t nc, size_t np, size_t ng)
{
    if (layout == PROTOCOL_IQ_CPG)
        return (c * np + p) * ng + g;
    if (layout == PROTOCOL_IQ_PCG)
        return (p * nc + c) * ng + g;
    return (p * ng + g) * nc + c;
}

/* Step 1. One thread per output (pulse < F, gate, channel), grid-stride. The
 * product scale * w[p] is formed in double, then rounded once to the
 * precision, as on the CPU. */
template <typename C, bool Ci16>
__global__ void convert_kernel(const void *__restrict__ cube, const double *__restrict__ window, double scale,
                               C *__restrict__ work, int layout, unsigned nc, unsigned np, unsigned ng, unsigned nf)
{
    using R = typename real_of<C>::type;
    size_t total = (size_t)nf * ng * nc;
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
         idx += (size_t)gridDim.x * blockDim.x) {
        size_t c = idx % nc, g = (idx / nc) % ng, p = idx / ((size_t)nc * ng);
        C v;
        v.x = 0;
        v.y = 0;
        if (p < np) {
            size_t i = wire_index(layout, c, p, g, nc, np, ng);
            R k = (R)(scale * window[p]);
            if (Ci16) {
                short2 s = static_cast<const short2 *>(cube)[i];
                v.x = k * (R)s.x;
                v.y = k * (R)s.y;
            } else {
                float2 s = static_cast<const float2 *>(cube)[i];
                v.x = k * (R)s.x;
                v.y = k * (R)s.y;
            }
        }
        work[idx] = v;
    }
}

} // namespace

struct form_iq_cuda {
    form_iq_params p;
    cudaStream_t stream;
    uint32_t matrices, snapshots, segment_gates, hole_first, hole_count;
    double *d_window = nullptr; /* P coefficients */
    void *d_work = nullptr;     /* F*G*C complex: padded cube, then spectrum */
    cufftHandle fft = 0;
    bool fft_made = false;
    cublasHandle_t blas = nullptr;
    int blocks = 0; /* of convert_kernel */
};

namespace {

form_iq_error cuda_failed(char *err, size_t err_bytes, const char *what, cudaError_t e)
{
    snprintf(err, err_bytes, "%s: %s", what, cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? FORM_IQ_ENOMEM : FORM_IQ_EDEVICE;
}

/* Step 2's plan: F points at stride G*C, G*C transforms at distance 1, in place. */
form_iq_error fft_plan_make(form_iq_cuda *q, char *err, size_t err_bytes)
{
    int f = (int)q->p.fft_size, pairs = (int)(q->p.gates * q->p.channels);
    size_t work_bytes = 0;
    cufftType type = q->p.precision == EIG_COMPLEX_DOUBLE ? CUFFT_Z2Z : CUFFT_C2C;
    cufftResult r = cufftCreate(&q->fft);
    if (r == CUFFT_SUCCESS) {
        q->fft_made = true;
        r = cufftMakePlanMany(q->fft, 1, &f, &f, pairs, 1, &f, pairs, 1, type, pairs, &work_bytes);
    }
    if (r == CUFFT_SUCCESS)
        r = cufftSetStream(q->fft, q->stream);
    if (r != CUFFT_SUCCESS) {
        snprintf(err, err_bytes, "cuFFT plan of %d-point %s transforms x %d: cufft error %d", f,
                 type == CUFFT_Z2Z ? "Z2Z" : "C2C", pairs, (int)r);
        return r == CUFFT_ALLOC_FAILED ? FORM_IQ_ENOMEM : FORM_IQ_EPLAN;
    }
    return FORM_IQ_OK;
}

form_iq_error blas_make(form_iq_cuda *q, char *err, size_t err_bytes)
{
    cublasStatus_t s = cublasCreate(&q->blas);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasSetStream(q->blas, q->stream);
    if (s != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, err_bytes, "cuBLAS handle: %s", cublasGetStatusString(s));
        if (s != CUBLAS_STATUS_SUCCESS && q->blas != nullptr) {
            cublasDestroy(q->blas);
            q->blas = nullptr;
        }
        return s == CUBLAS_STATUS_ALLOC_FAILED ? FORM_IQ_ENOMEM : FORM_IQ_EPLAN;
    }
    return FORM_IQ_OK;
}

form_iq_error workspace_make(form_iq_cuda *q, char *err, size_t err_bytes)
{
    const form_iq_params &p = q->p;
    size_t elements = (size_t)p.fft_size * p.gates * p.channels;
    double *window = new (std::nothrow) double[p.pulses];
    if (window == nullptr) {
        snprintf(err, err_bytes, "out of memory");
        return FORM_IQ_ENOMEM;
    }
    form_iq_error fe = form_iq_window_coefficients(p.window, p.sidelobe_db, p.pulses, window);
    cudaError_t e = cudaSuccess;
    if (fe == FORM_IQ_OK && (e = cudaMalloc(&q->d_window, p.pulses * sizeof(double))) == cudaSuccess &&
        (e = cudaMalloc(&q->d_work, elements * eig_element_bytes(p.precision))) == cudaSuccess)
        e = cudaMemcpy(q->d_window, window, p.pulses * sizeof(double), cudaMemcpyHostToDevice);
    delete[] window;
    if (fe != FORM_IQ_OK) {
        snprintf(err, err_bytes, "window coefficients: %s", form_iq_strerror(fe));
        return fe;
    }
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "forming workspace (%.1f MB)", (double)elements * eig_element_bytes(p.precision) / 1e6);
        return cuda_failed(err, err_bytes, what, e);
    }
    int device = 0, sms = 0;
    if ((e = cudaGetDevice(&device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess)
        return cuda_failed(err, err_bytes, "device attributes", e);
    size_t wanted = (elements + kThreads - 1) / kThreads;
    size_t cap = (size_t)sms * 8; /* 8 resident blocks of 256 per SM: the grid-stride loop does the rest */
    q->blocks = (int)(wanted < cap ? wanted : cap);
    return FORM_IQ_OK;
}

template <typename C>
cublasStatus_t gemm_strided(cublasHandle_t h, int n, int k, double alpha, const C *a, long long stride_a,
                            double beta, C *c, long long stride_c, int batch);

template <>
cublasStatus_t gemm_strided<double2>(cublasHandle_t h, int n, int k, double alpha, const double2 *a,
                                     long long stride_a, double beta, double2 *c, long long stride_c, int batch)
{
    cuDoubleComplex al = make_cuDoubleComplex(alpha, 0), be = make_cuDoubleComplex(beta, 0);
    return cublasZgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_C, n, n, k, &al, a, n, stride_a, a, n, stride_a, &be, c,
                                     n, stride_c, batch);
}

template <>
cublasStatus_t gemm_strided<float2>(cublasHandle_t h, int n, int k, double alpha, const float2 *a,
                                    long long stride_a, double beta, float2 *c, long long stride_c, int batch)
{
    cuComplex al = make_cuComplex((float)alpha, 0), be = make_cuComplex((float)beta, 0);
    return cublasCgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_C, n, n, k, &al, a, n, stride_a, a, n, stride_a, &be, c,
                                     n, stride_c, batch);
}

/* Step 3 (see the file's comment): per segment, per run of bins without a
 * wrap, per gate range around the guard cells, one strided-batched GEMM. */
template <typename C>
cublasStatus_t covariances(const form_iq_cuda *q, C *out)
{
    const form_iq_params &p = q->p;
    const int n = (int)p.channels;
    const long long bin_stride = (long long)p.gates * p.channels, out_stride = (long long)p.segments * n * n;
    const double alpha = 1.0 / q->snapshots;
    const C *spectrum = static_cast<const C *>(q->d_work);
    uint32_t before_wrap = p.fft_size - p.bin_first; /* bins bin_first .. F-1 */
    uint32_t run_count[2] = {p.bin_count < before_wrap ? p.bin_count : before_wrap, 0};
    run_count[1] = p.bin_count - run_count[0];
    uint32_t run_bin[2] = {p.bin_first, 0}, run_index[2] = {0, run_count[0]};
    const uint32_t range_first[2] = {0, q->hole_first + q->hole_count};
    const uint32_t range_count[2] = {q->hole_first, q->segment_gates - range_first[1]};
    for (uint32_t s = 0; s < p.segments; s++)
        for (int run = 0; run < 2; run++) {
            double beta = 0;
            for (int range = 0; range < 2 && run_count[run] > 0; range++) {
                if (range_count[range] == 0)
                    continue;
                const C *a = spectrum + run_bin[run] * bin_stride +
                             ((size_t)s * q->segment_gates + range_first[range]) * n;
                C *c = out + ((size_t)run_index[run] * p.segments + s) * n * n;
                cublasStatus_t st = gemm_strided<C>(q->blas, n, (int)range_count[range], alpha, a, bin_stride, beta, c,
                                                    out_stride, (int)run_count[run]);
                if (st != CUBLAS_STATUS_SUCCESS)
                    return st;
                beta = 1;
            }
        }
    return CUBLAS_STATUS_SUCCESS;
}

template <typename C>
form_iq_error execute(form_iq_cuda *q, const void *d_cube, float scale, void *d_out, char *err, size_t err_bytes)
{
    const form_iq_params &p = q->p;
    C *work = static_cast<C *>(q->d_work);
    if (p.format == PROTOCOL_IQ_CI16_LE)
        convert_kernel<C, true><<<q->blocks, kThreads, 0, q->stream>>>(d_cube, q->d_window, scale, work, p.layout,
                                                                        p.channels, p.pulses, p.gates, p.fft_size);
    else
        convert_kernel<C, false><<<q->blocks, kThreads, 0, q->stream>>>(d_cube, q->d_window, scale, work, p.layout,
                                                                         p.channels, p.pulses, p.gates, p.fft_size);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return cuda_failed(err, err_bytes, "IQ convert kernel", e);
    cufftResult r = p.precision == EIG_COMPLEX_DOUBLE
                        ? cufftExecZ2Z(q->fft, (cufftDoubleComplex *)work, (cufftDoubleComplex *)work, CUFFT_FORWARD)
                        : cufftExecC2C(q->fft, (cufftComplex *)work, (cufftComplex *)work, CUFFT_FORWARD);
    if (r != CUFFT_SUCCESS) {
        snprintf(err, err_bytes, "cuFFT exec: cufft error %d", (int)r);
        return FORM_IQ_EDEVICE;
    }
    cublasStatus_t s = covariances<C>(q, static_cast<C *>(d_out));
    if (s != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, err_bytes, "cuBLAS strided-batched GEMM: %s", cublasGetStatusString(s));
        return FORM_IQ_EDEVICE;
    }
    return FORM_IQ_OK;
}

} // namespace

extern "C" form_iq_error form_iq_cuda_create(form_iq_cuda **out, const form_iq_params *params, void *stream,
                                             char *err, size_t err_bytes)
{
    *out = nullptr;
    form_iq_error fe = form_iq_params_check(params, err, err_bytes);
    if (fe != FORM_IQ_OK)
        return fe;
    form_iq_cuda *q = new (std::nothrow) form_iq_cuda();
    if (q == nullptr) {
        snprintf(err, err_bytes, "out of memory");
        return FORM_IQ_ENOMEM;
    }
    q->p = *params;
    q->p.wisdom_file = nullptr;
    q->stream = static_cast<cudaStream_t>(stream);
    q->matrices = form_iq_matrices(params);
    q->snapshots = form_iq_snapshots(params);
    q->segment_gates = params->gates / params->segments;
    form_iq_guard_cells(params, &q->hole_first, &q->hole_count);
    fe = workspace_make(q, err, err_bytes);
    if (fe == FORM_IQ_OK)
        fe = fft_plan_make(q, err, err_bytes);
    if (fe == FORM_IQ_OK)
        fe = blas_make(q, err, err_bytes);
    if (fe != FORM_IQ_OK) {
        form_iq_cuda_destroy(&q);
        return fe;
    }
    *out = q;
    return FORM_IQ_OK;
}

extern "C" form_iq_error form_iq_cuda_execute(form_iq_cuda *plan, const void *d_cube, float scale, void *d_out,
                                              char *err, size_t err_bytes)
{
    if (plan == nullptr || d_cube == nullptr || d_out == nullptr || !std::isfinite(scale) || !(scale > 0.0f)) {
        snprintf(err, err_bytes, "form_iq_cuda_execute: a NULL argument or scale %g", (double)scale);
        return FORM_IQ_EINVAL;
    }
    if (plan->p.precision == EIG_COMPLEX_DOUBLE)
        return execute<double2>(plan, d_cube, scale, d_out, err, err_bytes);
    return execute<float2>(plan, d_cube, scale, d_out, err, err_bytes);
}

extern "C" void form_iq_cuda_destroy(form_iq_cuda **plan)
{
    form_iq_cuda *q = *plan;
    if (q == nullptr)
        return;
    /* Nothing may still read the workspace: errors here have failed a step already. */
    (void)cudaStreamSynchronize(q->stream);
    if (q->blas != nullptr)
        cublasDestroy(q->blas);
    if (q->fft_made)
        cufftDestroy(q->fft);
    cudaFree(q->d_work);
    cudaFree(q->d_window);
    delete q;
    *plan = nullptr;
}
