/*
 * test_gpu_form_iq.c - IQ cube forming on the GPU (pipeline/form/form_iq_cuda.cu)
 * against the direct oracle of tests/pipeline/form_iq_oracle.c (O(P*F) DFT
 * and explicit covariance sums in double; tolerance derived in
 * form_iq_oracle.h), and the cuda frame path with IQ input (upload once,
 * device forming, device solve) against LAPACK on the oracle's matrices.
 *
 * Cases: every window x both sample formats x all three layouts x both
 * precisions on small cubes with padded fft sizes, bins wrapping past F-1,
 * 1..3 segments and guard gates; then a larger cube (n = 32) formed by both
 * the GPU and the CPU plan, each against the oracle. The GPU writes both
 * triangles: both are checked.
 *
 * Exit 77 (skipped) without a usable GPU, 1 on any failure.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "form_iq.h"
#include "form_iq_oracle.h"
#include "protocol.h"
#include "test_check.h"

/* Forms q's random cube on the GPU (and on the CPU too with also_cpu);
 * compares with the oracle. */
static void check_case(const form_iq_params *q, const char *label, int also_cpu)
{
    char err[256];
    uint32_t n = q->channels, count = form_iq_matrices(q);
    size_t cube_bytes = protocol_iq_cube_bytes(n, q->pulses, q->gates, q->format);
    size_t elements = (size_t)count * n * n, element_bytes = eig_element_bytes(q->precision);
    float scale = q->format == PROTOCOL_IQ_CI16_LE ? 1.0f / 4096 : 2.5f;
    void *cube = form_iq_oracle_random_cube(q), *out = malloc(elements * element_bytes);
    double complex *want = malloc(elements * sizeof *want);
    void *d_cube = NULL, *d_out = NULL;
    cudaStream_t stream = NULL;
    form_iq_cuda *plan = NULL;
    if (cudaStreamCreate(&stream) != cudaSuccess || cudaMalloc(&d_cube, cube_bytes) != cudaSuccess ||
        cudaMalloc(&d_out, elements * element_bytes) != cudaSuccess) {
        FAIL("%s: device allocation", label);
        goto done;
    }
    form_iq_error e = form_iq_cuda_create(&plan, q, stream, err, sizeof err);
    CHECK(e == FORM_IQ_OK, "%s: form_iq_cuda_create: %s (%s)", label, form_iq_strerror(e), err);
    if (e != FORM_IQ_OK)
        goto done;
    CHECK(cudaMemcpyAsync(d_cube, cube, cube_bytes, cudaMemcpyHostToDevice, stream) == cudaSuccess, "%s: upload",
          label);
    e = form_iq_cuda_execute(plan, d_cube, scale, d_out, err, sizeof err);
    CHECK(e == FORM_IQ_OK, "%s: form_iq_cuda_execute: %s", label, err);
    CHECK(cudaMemcpyAsync(out, d_out, elements * element_bytes, cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
              cudaStreamSynchronize(stream) == cudaSuccess,
          "%s: download", label);
    double b2 = form_iq_oracle(q, cube, scale, want), tol = form_iq_oracle_tolerance(q, q->precision, b2);
    double worst = 0;
    for (size_t i = 0; i < elements; i++) {
        double complex got = q->precision == EIG_COMPLEX_DOUBLE ? ((double complex *)out)[i]
                                                                : ((float complex *)out)[i];
        worst = fmax(worst, cabs(got - want[i]));
    }
    CHECK(worst <= tol, "%s: GPU max |R - oracle| %.3g > tol %.3g (B^2 %.3g)", label, worst, tol, b2);
    if (also_cpu) {
        form_iq *cpu = NULL;
        CHECK(form_iq_create(&cpu, q, err, sizeof err) == FORM_IQ_OK, "%s: form_iq_create: %s", label, err);
        if (cpu != NULL && form_iq_execute(cpu, cube, scale, out) == FORM_IQ_OK) {
            double worst_cpu = 0;
            for (uint32_t m = 0; m < count; m++)
                for (uint32_t k = 0; k < n; k++)
                    for (uint32_t j = k; j < n; j++) {
                        size_t i = (size_t)m * n * n + j + (size_t)k * n;
                        double complex got = q->precision == EIG_COMPLEX_DOUBLE ? ((double complex *)out)[i]
                                                                                : ((float complex *)out)[i];
                        worst_cpu = fmax(worst_cpu, cabs(got - want[i]));
                    }
            CHECK(worst_cpu <= tol, "%s: CPU max |R - oracle| %.3g > tol %.3g", label, worst_cpu, tol);
        }
        form_iq_destroy(&cpu);
    }
done:
    form_iq_cuda_destroy(&plan);
    cudaFree(d_cube);
    cudaFree(d_out);
    if (stream != NULL)
        cudaStreamDestroy(stream);
    free(cube);
    free(out);
    free(want);
}

static void test_all_cases(void)
{
    for (int index = 0; index < FORM_IQ_ORACLE_CASES; index++) {
        form_iq_params q;
        char label[160];
        form_iq_oracle_case(index, &q, label, sizeof label);
        check_case(&q, label, 0);
    }
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("test_gpu_form_iq: no usable GPU, skipped\n");
        return 77;
    }
    test_all_cases();
    form_iq_params big = {.channels = 32, .pulses = 24, .gates = 64, .format = PROTOCOL_IQ_CI16_LE,
                          .layout = PROTOCOL_IQ_CPG, .precision = EIG_COMPLEX_DOUBLE, .window = FORM_WINDOW_TAYLOR,
                          .sidelobe_db = 35, .fft_size = 32, .bin_first = 20, .bin_count = 16, .segments = 4,
                          .guard_gates = 2, .threads = 2};
    check_case(&big, "n 32, P 24, G 64, F 32, c128, GPU and CPU", 1);
    big.precision = EIG_COMPLEX_FLOAT;
    big.layout = PROTOCOL_IQ_PGC;
    check_case(&big, "n 32, P 24, G 64, F 32, c64, GPU and CPU", 1);
    form_iq_oracle_check_path(EIG_BACKEND_CUDA, "cuda");
    return test_check_report("test_gpu_form_iq");
}
