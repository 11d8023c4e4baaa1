/*
 * test_gpu_plan_api.c - the cuda backend reached through the public eig API
 * (eig_plan_create / execute / execute_device), as eigstream-solve and the
 * daemon reach it. test_gpu_eig.c covers the kernels in depth; this test
 * proves the dispatch: AUTO resolves to cuda when a GPU is present, a cuda
 * plan's results meet the LAPACK ratios on radar and random batches, and the
 * device entry point on a caller stream gives the same values.
 *
 * Exit 77 (skipped) without a usable GPU, 1 on any failure.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "eig.h"
#include "workload.h"

static int failures;

#define FAIL(...)                                                                            \
    do {                                                                                     \
        printf("FAIL: " __VA_ARGS__);                                                        \
        printf("\n");                                                                        \
        ++failures;                                                                          \
    } while (0)

static size_t complex_bytes(eig_precision p) { return p == EIG_COMPLEX_DOUBLE ? 16 : 8; }
static size_t real_bytes(eig_precision p) { return p == EIG_COMPLEX_DOUBLE ? 8 : 4; }

/* One batch through a cuda plan (host entry), checked with the LAPACK ratios,
 * then again through the device entry on a stream of ours: same values. */
static void check_batch(int n, int batch, eig_precision prec, int radar)
{
    const char *pname = prec == EIG_COMPLEX_DOUBLE ? "c128" : "c64";
    const char *input = radar ? "radar" : "random";
    size_t cb = complex_bytes(prec), rb = real_bytes(prec);
    size_t abytes = (size_t)batch * n * n * cb, wbytes = (size_t)batch * n * rb;
    void *a = malloc(abytes), *z = malloc(abytes), *w = malloc(wbytes), *w2 = malloc(wbytes);
    int *info = malloc((size_t)batch * sizeof(int));
    eig_plan *plan = NULL;
    void *da = NULL, *dz = NULL, *dw = NULL;
    int *dinfo = NULL;
    cudaStream_t stream = NULL;
    if (a == NULL || z == NULL || w == NULL || w2 == NULL || info == NULL) {
        FAIL("out of memory");
        goto done;
    }
    int gen = radar ? workload_radar_batch(n, batch, prec, 7, a)
                    : workload_random_batch(n, batch, prec, 7, a);
    if (gen != 0) {
        FAIL("workload generation failed (n=%d)", n);
        goto done;
    }

    eig_plan_params p = eig_plan_params_default();
    p.n = n;
    p.batch = batch;
    p.precision = prec;
    p.backend = EIG_BACKEND_CUDA;
    eig_error e = eig_plan_create(&plan, &p);
    if (e != EIG_OK) {
        FAIL("n=%d %s: eig_plan_create(cuda): %s", n, pname, eig_strerror(e));
        goto done;
    }
    e = eig_plan_execute(plan, a, w, z, info);
    if (e != EIG_OK) {
        FAIL("n=%d %s %s: eig_plan_execute: %s", n, pname, input, eig_strerror(e));
        goto done;
    }
    double worst_res = 0, worst_orth = 0;
    for (int b = 0; b < batch; ++b) {
        const char *ab = (const char *)a + (size_t)b * n * n * cb;
        const char *zb = (const char *)z + (size_t)b * n * n * cb;
        const char *wb = (const char *)w + (size_t)b * n * rb;
        double res = workload_residual_ratio(n, prec, ab, wb, zb);
        double orth = workload_orthogonality_ratio(n, prec, zb);
        /* !(x <= t) also catches NaN */
        if (!(res <= WORKLOAD_RATIO_THRESHOLD) || !(orth <= WORKLOAD_RATIO_THRESHOLD))
            FAIL("n=%d %s %s matrix %d: residual %.3g orthogonality %.3g (limit %.0f)", n, pname,
                 input, b, res, orth, WORKLOAD_RATIO_THRESHOLD);
        if (res > worst_res)
            worst_res = res;
        if (orth > worst_orth)
            worst_orth = orth;
    }

    /* Device entry on our own stream: same results as the host entry. */
    if (cudaMalloc(&da, abytes) != cudaSuccess || cudaMalloc(&dz, abytes) != cudaSuccess ||
        cudaMalloc(&dw, wbytes) != cudaSuccess ||
        cudaMalloc((void **)&dinfo, (size_t)batch * sizeof(int)) != cudaSuccess ||
        cudaStreamCreate(&stream) != cudaSuccess) {
        FAIL("cuda allocation failed");
        goto done;
    }
    if (cudaMemcpy(da, a, abytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        FAIL("cudaMemcpy failed");
        goto done;
    }
    e = eig_plan_execute_device(plan, da, dw, dz, dinfo, stream);
    if (e != EIG_OK) {
        FAIL("n=%d %s: eig_plan_execute_device: %s", n, pname, eig_strerror(e));
        goto done;
    }
    if (cudaStreamSynchronize(stream) != cudaSuccess ||
        cudaMemcpy(w2, dw, wbytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        FAIL("n=%d %s: device entry: stream or copy failed", n, pname);
        goto done;
    }
    if (memcmp(w, w2, wbytes) != 0)
        FAIL("n=%d %s %s: device entry eigenvalues differ from the host entry's", n, pname, input);
    printf("ok n=%d batch=%d %s %s: worst residual %.3g orthogonality %.3g\n", n, batch, pname,
           input, worst_res, worst_orth);
done:
    if (stream)
        cudaStreamDestroy(stream);
    cudaFree(da);
    cudaFree(dz);
    cudaFree(dw);
    cudaFree(dinfo);
    eig_plan_destroy(&plan);
    free(a);
    free(z);
    free(w);
    free(w2);
    free(info);
}

int main(void)
{
    if (!eig_cuda_built()) {
        printf("FAIL: the library was built without the cuda backend\n");
        return 1;
    }
    if (eig_cuda_device_count() == 0) {
        printf("SKIP: no usable CUDA device\n");
        return 77;
    }

    /* AUTO resolves to cuda when a GPU is present. */
    eig_plan_params p = eig_plan_params_default();
    p.n = 8;
    p.batch = 2;
    eig_plan *plan = NULL;
    eig_error e = eig_plan_create(&plan, &p);
    if (e != EIG_OK)
        FAIL("eig_plan_create(auto): %s", eig_strerror(e));
    else if (eig_plan_get_params(plan)->backend != EIG_BACKEND_CUDA)
        FAIL("auto resolved to %s with a GPU present",
             eig_backend_name(eig_plan_get_params(plan)->backend));
    eig_plan_destroy(&plan);

    static const int sizes[] = {1, 7, 64, 128};
    for (int prec = 0; prec < 2; ++prec)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
            for (int radar = 0; radar < 2; ++radar)
                check_batch(sizes[i], sizes[i] >= 64 ? 24 : 5,
                            prec ? EIG_COMPLEX_DOUBLE : EIG_COMPLEX_FLOAT, radar);
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("all plan-API cuda checks passed\n");
    return 0;
}
