/*
 * pipeline_device.cu - device slots, pinned host memory and the copies of
 * the daemon's GPU path (see pipeline_gpu.h).
 */
#include <cuda_runtime.h>

#include <new>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_gpu.h"

namespace {

constexpr uint8_t kElementComplexFloat = 1; /* eig_precision */
constexpr int kStorageFull = 0;             /* protocol_storage */

struct slot {
    cudaStream_t stream = nullptr;
    cudaEvent_t solved = nullptr;
    void *d_in = nullptr;   /* the frame as received */
    void *d_full = nullptr; /* unpacked (packed frames that are formed) */
    void *d_w = nullptr, *d_z = nullptr;
    int *d_info = nullptr;
    int storage = kStorageFull; /* what the solver reads */
    const void *matrices = nullptr;
    int busy = 0;
};

int fail(char *err, size_t err_bytes, const char *what, cudaError_t e)
{
    if (err != nullptr && err_bytes > 0)
        snprintf(err, err_bytes, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

} // namespace

struct pipeline_gpu {
    pipeline_gpu_params params;
    size_t element_bytes, full_bytes, values_bytes;
    slot *slots;
    int last_solved; /* slot of the previous solve, -1 before the first */
    pthread_mutex_t lock;
    pthread_cond_t freed;
};

extern "C" int pipeline_gpu_host_alloc(void **ptr, size_t bytes)
{
    return cudaHostAlloc(ptr, bytes, cudaHostAllocPortable) == cudaSuccess ? 0 : -1;
}

extern "C" void pipeline_gpu_host_free(void *ptr)
{
    if (ptr != nullptr)
        cudaFreeHost(ptr);
}

extern "C" void pipeline_gpu_destroy(pipeline_gpu **gp)
{
    pipeline_gpu *g = gp != nullptr ? *gp : nullptr;
    if (g == nullptr)
        return;
    cudaSetDevice(g->params.device);
    for (int s = 0; s < g->params.slots && g->slots != nullptr; s++) {
        slot &sl = g->slots[s];
        if (sl.stream != nullptr)
            cudaStreamSynchronize(sl.stream);
        cudaFree(sl.d_in);
        cudaFree(sl.d_full);
        cudaFree(sl.d_w);
        cudaFree(sl.d_z);
        cudaFree(sl.d_info);
        if (sl.solved != nullptr)
            cudaEventDestroy(sl.solved);
        if (sl.stream != nullptr)
            cudaStreamDestroy(sl.stream);
    }
    delete[] g->slots;
    pthread_cond_destroy(&g->freed);
    pthread_mutex_destroy(&g->lock);
    free(g);
    *gp = nullptr;
}

extern "C" int pipeline_gpu_create(pipeline_gpu **out, const pipeline_gpu_params *params, char *err,
                                   size_t err_bytes)
{
    *out = nullptr;
    cudaError_t e = cudaSetDevice(params->device);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "cuda device", e);
    pipeline_gpu *g = (pipeline_gpu *)calloc(1, sizeof *g);
    if (g == nullptr) {
        snprintf(err, err_bytes, "out of memory");
        return -1;
    }
    g->params = *params;
    if (g->params.slots < 2)
        g->params.slots = 2;
    g->element_bytes = params->element == kElementComplexFloat ? 8 : 16;
    g->full_bytes = (size_t)params->matrices * params->n * params->n * g->element_bytes;
    g->values_bytes = (size_t)params->matrices * params->n * (g->element_bytes / 2);
    g->last_solved = -1;
    pthread_mutex_init(&g->lock, nullptr);
    pthread_cond_init(&g->freed, nullptr);
    g->slots = new (std::nothrow) slot[g->params.slots];
    if (g->slots == nullptr) {
        snprintf(err, err_bytes, "out of memory");
        pipeline_gpu_destroy(&g);
        return -1;
    }
    for (int s = 0; s < g->params.slots; s++) {
        slot &sl = g->slots[s];
        if ((e = cudaStreamCreateWithFlags(&sl.stream, cudaStreamNonBlocking)) != cudaSuccess ||
            (e = cudaEventCreateWithFlags(&sl.solved, cudaEventDisableTiming)) != cudaSuccess ||
            (e = cudaMalloc(&sl.d_in, g->full_bytes)) != cudaSuccess ||
            (e = cudaMalloc(&sl.d_full, g->full_bytes)) != cudaSuccess ||
            (e = cudaMalloc(&sl.d_w, g->values_bytes)) != cudaSuccess ||
            (e = cudaMalloc((void **)&sl.d_info, sizeof(int) * params->matrices)) != cudaSuccess ||
            (params->need_vectors && (e = cudaMalloc(&sl.d_z, g->full_bytes)) != cudaSuccess)) {
            char what[96];
            snprintf(what, sizeof what, "device slot %d (%zu bytes per frame buffer)", s, g->full_bytes);
            fail(err, err_bytes, what, e);
            pipeline_gpu_destroy(&g);
            return -1;
        }
    }
    *out = g;
    return 0;
}

extern "C" int pipeline_gpu_slot_acquire(pipeline_gpu *g)
{
    pthread_mutex_lock(&g->lock);
    for (;;) {
        for (int s = 0; s < g->params.slots; s++)
            if (!g->slots[s].busy) {
                g->slots[s].busy = 1;
                pthread_mutex_unlock(&g->lock);
                return s;
            }
        pthread_cond_wait(&g->freed, &g->lock);
    }
}

extern "C" void pipeline_gpu_slot_release(pipeline_gpu *g, int s)
{
    cudaSetDevice(g->params.device);
    cudaStreamSynchronize(g->slots[s].stream);
    pthread_mutex_lock(&g->lock);
    g->slots[s].busy = 0;
    pthread_cond_signal(&g->freed);
    pthread_mutex_unlock(&g->lock);
}

extern "C" int pipeline_gpu_upload_form(pipeline_gpu *g, int s, const void *host, size_t bytes,
                                        const pipeline_gpu_form_params *f, char *err, size_t err_bytes)
{
    slot &sl = g->slots[s];
    const pipeline_gpu_params &p = g->params;
    cudaError_t e = cudaSetDevice(p.device);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(sl.d_in, host, bytes, cudaMemcpyHostToDevice, sl.stream);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "upload", e);
    int forming = f->forward_backward || f->diagonal_loading;
    void *formed = sl.d_in;
    sl.storage = kStorageFull;
    if (f->storage != kStorageFull) {
        if (!forming && p.solve_packed) {
            sl.storage = f->storage; /* solved as it came: half the bytes, no kernel */
            sl.matrices = sl.d_in;
            return 0;
        }
        if (pipeline_gpu_unpack(sl.d_in, sl.d_full, p.n, p.matrices, p.element, f->storage, sl.stream) != 0)
            return fail(err, err_bytes, "unpack kernel", cudaGetLastError());
        formed = sl.d_full;
    }
    if (f->forward_backward && pipeline_gpu_forward_backward(formed, p.n, p.matrices, p.element, sl.stream) != 0)
        return fail(err, err_bytes, "forward-backward kernel", cudaGetLastError());
    if (f->diagonal_loading &&
        pipeline_gpu_diagonal_loading(formed, p.n, p.matrices, p.element, f->loading_factor, sl.stream) != 0)
        return fail(err, err_bytes, "diagonal loading kernel", cudaGetLastError());
    sl.matrices = formed;
    return 0;
}

extern "C" int pipeline_gpu_slot_storage(pipeline_gpu *g, int s)
{
    return g->slots[s].storage;
}

extern "C" void pipeline_gpu_slot_buffers(pipeline_gpu *g, int s, pipeline_gpu_buffers *b)
{
    slot &sl = g->slots[s];
    b->matrices = sl.matrices;
    b->w = sl.d_w;
    b->z = sl.d_z;
    b->info = sl.d_info;
    b->stream = sl.stream;
}

extern "C" int pipeline_gpu_solve_begin(pipeline_gpu *g, int s, char *err, size_t err_bytes)
{
    cudaError_t e = cudaSetDevice(g->params.device);
    /* One plan, one workspace: this solve starts after the previous one. */
    if (e == cudaSuccess && g->last_solved >= 0 && g->last_solved != s)
        e = cudaStreamWaitEvent(g->slots[s].stream, g->slots[g->last_solved].solved, 0);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "solve ordering", e);
    return 0;
}

extern "C" int pipeline_gpu_solve_end(pipeline_gpu *g, int s, void *host_w, int *host_info, char *err,
                                      size_t err_bytes)
{
    slot &sl = g->slots[s];
    cudaError_t e = cudaEventRecord(sl.solved, sl.stream);
    if (e == cudaSuccess)
        g->last_solved = s;
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(host_w, sl.d_w, g->values_bytes, cudaMemcpyDeviceToHost, sl.stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(host_info, sl.d_info, sizeof(int) * g->params.matrices, cudaMemcpyDeviceToHost,
                            sl.stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(sl.stream);
    return e == cudaSuccess ? 0 : fail(err, err_bytes, "solve / values copy", e);
}

extern "C" int pipeline_gpu_copy_vectors(pipeline_gpu *g, int s, uint32_t matrix, uint32_t first, uint32_t k,
                                         void *host_dst, char *err, size_t err_bytes)
{
    slot &sl = g->slots[s];
    size_t n = g->params.n, column = n * g->element_bytes;
    const char *src = (const char *)sl.d_z + ((size_t)matrix * n + first) * column;
    cudaError_t e = cudaMemcpyAsync(host_dst, src, k * column, cudaMemcpyDeviceToHost, sl.stream);
    return e == cudaSuccess ? 0 : fail(err, err_bytes, "vectors copy", e);
}

extern "C" int pipeline_gpu_copy_vectors_strided(pipeline_gpu *g, int s, uint32_t first, uint32_t k, void *host_dst,
                                                 size_t host_pitch, char *err, size_t err_bytes)
{
    slot &sl = g->slots[s];
    size_t n = g->params.n, column = n * g->element_bytes;
    const char *src = (const char *)sl.d_z + first * column;
    cudaError_t e = cudaMemcpy2DAsync(host_dst, host_pitch, src, n * column, k * column, g->params.matrices,
                                      cudaMemcpyDeviceToHost, sl.stream);
    return e == cudaSuccess ? 0 : fail(err, err_bytes, "vectors copy", e);
}

extern "C" int pipeline_gpu_slot_finish(pipeline_gpu *g, int s, char *err, size_t err_bytes)
{
    cudaError_t e = cudaSetDevice(g->params.device);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g->slots[s].stream);
    return e == cudaSuccess ? 0 : fail(err, err_bytes, "device stream", e);
}
