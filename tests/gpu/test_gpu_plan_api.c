/*
 * test_gpu_plan_api.c - the cuda backend reached through the public eig API
 * (eig_plan_create / execute / execute_device), as eigstream-solve and the
 * daemon reach it. test_gpu_eig.c covers the kernels in depth; this test
 * proves the dispatch: AUTO resolves to cuda when a GPU is present, a cuda
 * plan's results meet the LAPACK ratios on radar and random batches, and the
 * device entry point on a caller stream gives the same values. A device_only
 * plan refuses the host entry (EIG_EUNSUPPORTED) and solves full, packed
 * lower and packed upper copies of one batch through
 * eig_plan_execute_device_layout: each meets the LAPACK ratios and gives the
 * full-lower eigenvalues.
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
#include "test_check.h"
#include "workload.h"



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

/* Matrix b of the full batch `a` in `storage`/`uplo` at `out` (eig.h layouts). */
static void store_layout(int n, int batch, size_t cb, const char *a, eig_storage storage,
                         eig_uplo uplo, char *out)
{
    const size_t nn = (size_t)n * n;
    const size_t per = storage == EIG_STORAGE_FULL ? nn : (size_t)n * (n + 1) / 2;
    for (int b = 0; b < batch; ++b)
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                size_t at;
                if (storage == EIG_STORAGE_FULL)
                    at = i + (size_t)j * n;
                else if (uplo == EIG_LOWER && i >= j)
                    at = i + (size_t)j * (2 * n - j - 1) / 2;
                else if (uplo == EIG_UPPER && i <= j)
                    at = i + (size_t)j * (j + 1) / 2;
                else
                    continue;
                memcpy(out + (b * per + at) * cb, a + (b * nn + i + (size_t)j * n) * cb, cb);
            }
}

/* One layout of the batch through a device_only plan; w_ref (double, NULL
 * for the first layout) is the full-lower result to compare with. Returns
 * the eigenvalues in double in w_out. */
static void check_layout(eig_plan *plan, int n, int batch, eig_precision prec, const char *a,
                         eig_storage storage, eig_uplo uplo, const double *w_ref, double *w_out)
{
    static const char *const names[2][2] = {{"full lower", "full upper"},
                                            {"packed lower", "packed upper"}};
    const char *what = names[storage][uplo];
    const char *pname = prec == EIG_COMPLEX_DOUBLE ? "c128" : "c64";
    const size_t cb = complex_bytes(prec), rb = real_bytes(prec), nn = (size_t)n * n;
    const size_t per = storage == EIG_STORAGE_FULL ? nn : (size_t)n * (n + 1) / 2;
    char *stored = calloc((size_t)batch * per, cb), *z = malloc(batch * nn * cb),
         *w = malloc(batch * n * rb);
    int *info = malloc(batch * sizeof(int));
    void *da = NULL, *dw = NULL, *dz = NULL;
    int *dinfo = NULL;
    if (stored == NULL || z == NULL || w == NULL || info == NULL ||
        cudaMalloc(&da, batch * per * cb) != cudaSuccess ||
        cudaMalloc(&dw, batch * n * rb) != cudaSuccess ||
        cudaMalloc(&dz, batch * nn * cb) != cudaSuccess ||
        cudaMalloc((void **)&dinfo, batch * sizeof(int)) != cudaSuccess) {
        FAIL("n=%d %s %s: allocation failed", n, pname, what);
        goto done;
    }
    store_layout(n, batch, cb, a, storage, uplo, stored);
    if (cudaMemcpy(da, stored, batch * per * cb, cudaMemcpyHostToDevice) != cudaSuccess) {
        FAIL("n=%d %s %s: copy failed", n, pname, what);
        goto done;
    }
    eig_error e = eig_plan_execute_device_layout(plan, storage, uplo, da, dw, dz, dinfo, NULL);
    if (e != EIG_OK || cudaDeviceSynchronize() != cudaSuccess ||
        cudaMemcpy(w, dw, batch * n * rb, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(z, dz, batch * nn * cb, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(info, dinfo, batch * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) {
        FAIL("n=%d %s %s: execute_device_layout: %s", n, pname, what, eig_strerror(e));
        goto done;
    }
    for (int b = 0; b < batch; ++b) {
        const char *ab = a + b * nn * cb, *zb = z + b * nn * cb, *wb = w + b * n * rb;
        double res = workload_residual_ratio(n, prec, ab, wb, zb);
        double orth = workload_orthogonality_ratio(n, prec, zb);
        double ev = w_ref ? workload_eigenvalue_ratio(n, prec, ab, wb, w_ref + (size_t)b * n) : 0;
        if (info[b] != 0 || !(res <= WORKLOAD_RATIO_THRESHOLD) ||
            !(orth <= WORKLOAD_RATIO_THRESHOLD) || !(ev <= WORKLOAD_RATIO_THRESHOLD))
            FAIL("n=%d %s %s matrix %d: info %d residual %.3g orthogonality %.3g eigenvalues "
                 "vs full lower %.3g (limit %.0f)",
                 n, pname, what, b, info[b], res, orth, ev, WORKLOAD_RATIO_THRESHOLD);
        for (int i = 0; i < n; ++i)
            w_out[(size_t)b * n + i] = prec == EIG_COMPLEX_DOUBLE ? ((const double *)wb)[i]
                                                                  : ((const float *)wb)[i];
    }
done:
    cudaFree(da);
    cudaFree(dw);
    cudaFree(dz);
    cudaFree(dinfo);
    free(stored);
    free(z);
    free(w);
    free(info);
}

/* A device_only plan: no host entry, every layout through one plan. */
static void check_device_only(int n, int batch, eig_precision prec)
{
    const size_t cb = complex_bytes(prec), nn = (size_t)n * n;
    char *a = malloc(batch * nn * cb), *h = malloc(batch * nn * cb);
    double *w_full = malloc(batch * (size_t)n * sizeof(double)),
           *w = malloc(batch * (size_t)n * sizeof(double));
    int *info = malloc(batch * sizeof(int));
    eig_plan *plan = NULL;
    eig_plan_params p = eig_plan_params_default();
    p.n = n;
    p.batch = batch;
    p.precision = prec;
    p.backend = EIG_BACKEND_CUDA;
    p.device_only = 1;
    p.storage = EIG_STORAGE_PACKED; /* the layout entry ignores the plan's own */
    p.uplo = EIG_UPPER;
    eig_error e = EIG_ENOMEM;
    if (a == NULL || h == NULL || w_full == NULL || w == NULL || info == NULL ||
        workload_radar_batch(n, batch, prec, 11, a) != 0 ||
        (e = eig_plan_create(&plan, &p)) != EIG_OK) {
        FAIL("n=%d device_only plan: %s", n, eig_strerror(e));
        goto done;
    }
    e = eig_plan_execute(plan, a, h, h, info);
    if (e != EIG_EUNSUPPORTED)
        FAIL("n=%d device_only plan: eig_plan_execute returned %s, expected EIG_EUNSUPPORTED", n,
             eig_strerror(e));
    check_layout(plan, n, batch, prec, a, EIG_STORAGE_FULL, EIG_LOWER, NULL, w_full);
    check_layout(plan, n, batch, prec, a, EIG_STORAGE_PACKED, EIG_LOWER, w_full, w);
    check_layout(plan, n, batch, prec, a, EIG_STORAGE_PACKED, EIG_UPPER, w_full, w);
    check_layout(plan, n, batch, prec, a, EIG_STORAGE_FULL, EIG_UPPER, w_full, w);
    printf("ok n=%d batch=%d %s device_only: full and packed layouts through one plan\n", n,
           batch, prec == EIG_COMPLEX_DOUBLE ? "c128" : "c64");
done:
    eig_plan_destroy(&plan);
    free(a);
    free(h);
    free(w_full);
    free(w);
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
    static const int layout_sizes[] = {1, 7, 64, 256};
    for (int prec = 0; prec < 2; ++prec)
        for (size_t i = 0; i < sizeof layout_sizes / sizeof layout_sizes[0]; ++i)
            check_device_only(layout_sizes[i], 6, prec ? EIG_COMPLEX_DOUBLE : EIG_COMPLEX_FLOAT);
    return test_check_report("test_gpu_plan_api");
}
