/*
 * path_cuda.cu - the cuda frame path (path.h).
 *
 * A fixed set of device slots (two), each a CUDA stream with its own device
 * buffers: the frame as received (full or packed), the formed full matrices
 * when unpacking was needed, eigenvalues, eigenvectors, info. One solver
 * plan, device-only (no host staging), reads whichever layout a slot holds
 * (eig_plan_execute_device_layout).
 *
 *   form          takes a free slot (blocks while both are busy), enqueues
 *                 the upload (once, packed if it came packed) and the
 *                 forming kernels; a packed frame with no forming is solved
 *                 as it came (half the bytes, no kernel). IQ input: the cube
 *                 is uploaded once into d_in and the slot's IQ plan
 *                 (form_iq_cuda.cu: convert, cuFFT, cuBLAS) forms the
 *                 matrices into d_full, the solver's input, on the device
 *   solve         orders the slot's stream after the previous solve (one plan,
 *                 one workspace), enqueues the solve, copies values and info
 *                 back and waits for them (MDL needs them on the host)
 *   check_start   the self-check of one matrix (path_cuda_check.cu): its
 *                 published values uploaded, two kernels on the slot's
 *                 stream between two timing events, the two ratios copied
 *                 back to the slot's pinned result
 *   output_start  values by memcpy, the vectors the mode sends by
 *                 asynchronous copies from the device straight into the
 *                 pinned output buffer: they overlap the next frame's solve
 *   output_wait   waits for the slot's stream; the check's ratios and its
 *                 GPU time (the events) become the frame's
 *   release       waits for the slot's stream unless output_wait did, then
 *                 frees the slot
 * Every entry sets the device first: stage threads are plain pthreads.
 */
#include <cuda_runtime.h>

#include <new>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form.h"
#include "path_cuda_check.h"
#include "path.h"
#include "protocol.h"

namespace {

constexpr int kSlots = 2;

struct slot {
    cudaStream_t stream = nullptr;
    cudaEvent_t solved = nullptr;
    void *d_in = nullptr;   /* the frame as received */
    void *d_full = nullptr; /* unpacked (packed frames that are formed), or formed from an IQ cube */
    form_iq_cuda *iq = nullptr; /* IQ input: forming on this slot's stream, its own workspace */
    void *d_w = nullptr, *d_z = nullptr;
    int *d_info = nullptr;
    eig_storage storage = EIG_STORAGE_FULL; /* what the solver reads */
    eig_uplo uplo = EIG_LOWER;
    const void *matrices = nullptr;
    /* The self-check: device scratch, the published values of the matrix
     * checked, the ratios' pinned landing place, the events around it. */
    double *d_check = nullptr;
    void *d_check_w = nullptr;
    double *h_check = nullptr;
    cudaEvent_t check_begin = nullptr, check_end = nullptr;
    bool check_pending = false; /* enqueued, not yet read by output_wait */
    bool busy = false; /* held by a frame */
    bool idle = true;  /* nothing enqueued since the last wait */
};

struct path_cuda {
    path base;
    eig_plan *plan;
    size_t element_bytes, full_bytes, values_bytes;
    size_t in_bytes;   /* d_in: full_bytes, or the larger of it and an IQ cube's bytes */
    size_t cube_bytes; /* IQ input: the cube's bytes, else 0 */
    slot slots[kSlots];
    int last_solved; /* slot of the previous solve, -1 before the first */
    pthread_mutex_t lock;
    pthread_cond_t freed;
};

pipeline_error fail(char *err, size_t err_bytes, const char *what, cudaError_t e)
{
    snprintf(err, err_bytes, "%s: %s", what, cudaGetErrorString(e));
    return PIPELINE_EDEVICE;
}

path_cuda *cuda_of(path *p)
{
    return reinterpret_cast<path_cuda *>(p);
}

void *cuda_buffer_alloc(path *p, size_t bytes)
{
    void *ptr = nullptr;
    if (cudaSetDevice(p->params.gpu_device) != cudaSuccess ||
        cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess)
        return nullptr;
    memset(ptr, 0, bytes);
    return ptr;
}

void cuda_buffer_free(path *p, void *ptr)
{
    (void)p;
    cudaFreeHost(ptr);
}

/* Enqueues forward-backward averaging and diagonal loading, as configured,
 * on the full matrices the slot's solver reads. */
pipeline_error cuda_form_kernels(path_cuda *c, slot &sl, char *err, size_t err_bytes)
{
    const path_params &q = c->base.params;
    void *formed = const_cast<void *>(sl.matrices);
    const char *why = nullptr;
    if (q.forward_backward)
        why = form_cuda_forward_backward(formed, q.n, q.matrices, q.precision, sl.stream);
    if (why == nullptr && q.diagonal_loading)
        why = form_cuda_diagonal_loading(formed, q.n, q.matrices, q.precision, q.loading_factor, sl.stream);
    if (why != nullptr) {
        snprintf(err, err_bytes, "forming kernels: %s", why);
        return PIPELINE_EDEVICE;
    }
    return PIPELINE_OK;
}

/* Enqueues unpacking (when the solver cannot read the frame as it came)
 * and the forming kernels on the slot's stream; sets what the solver reads. */
pipeline_error cuda_form_on_slot(path_cuda *c, slot &sl, uint8_t storage, char *err, size_t err_bytes)
{
    const path_params &q = c->base.params;
    bool forming = q.forward_backward || q.diagonal_loading;
    if (protocol_storage_layout(storage, &sl.storage, &sl.uplo) != 0) {
        snprintf(err, err_bytes, "storage %u", storage);
        return PIPELINE_EINVAL;
    }
    sl.matrices = sl.d_in;
    if (!forming)
        return PIPELINE_OK; /* solved as it came, packed or full */
    if (sl.storage == EIG_STORAGE_PACKED) {
        const char *why = form_cuda_unpack(sl.d_in, sl.d_full, q.n, q.matrices, q.precision, storage, sl.stream);
        if (why != nullptr) {
            snprintf(err, err_bytes, "forming kernels: %s", why);
            return PIPELINE_EDEVICE;
        }
        sl.matrices = sl.d_full;
        sl.storage = EIG_STORAGE_FULL;
        sl.uplo = EIG_LOWER;
    }
    return cuda_form_kernels(c, sl, err, err_bytes);
}

/* IQ input: the cube (already enqueued for upload into d_in) formed into
 * d_full by the slot's IQ plan, then the forming kernels. */
pipeline_error cuda_form_iq_on_slot(path_cuda *c, slot &sl, const frame *f, char *err, size_t err_bytes)
{
    char why[160];
    form_iq_error e = form_iq_cuda_execute(sl.iq, sl.d_in, f->header.scale, sl.d_full, why, sizeof why);
    if (e != FORM_IQ_OK) {
        snprintf(err, err_bytes, "IQ forming: %s", why);
        return e == FORM_IQ_EINVAL ? PIPELINE_EINVAL : PIPELINE_EDEVICE;
    }
    sl.matrices = sl.d_full;
    sl.storage = EIG_STORAGE_FULL;
    sl.uplo = EIG_LOWER;
    return cuda_form_kernels(c, sl, err, err_bytes);
}

int slot_acquire(path_cuda *c)
{
    pthread_mutex_lock(&c->lock);
    for (;;) {
        for (int s = 0; s < kSlots; s++)
            if (!c->slots[s].busy) {
                c->slots[s].busy = true;
                pthread_mutex_unlock(&c->lock);
                return s;
            }
        pthread_cond_wait(&c->freed, &c->lock);
    }
}

pipeline_error cuda_form(path *p, frame *f, char *err, size_t err_bytes)
{
    path_cuda *c = cuda_of(p);
    int s = slot_acquire(c);
    f->slot = s; /* from here path_release gives it back, whatever happens */
    slot &sl = c->slots[s];
    if (p->params.iq_input && f->header.payload_bytes != c->cube_bytes) {
        snprintf(err, err_bytes, "IQ frame of %llu bytes, the configured cube has %zu",
                 (unsigned long long)f->header.payload_bytes, c->cube_bytes);
        return PIPELINE_EINVAL;
    }
    sl.idle = false;
    cudaError_t e = cudaSetDevice(p->params.gpu_device);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(sl.d_in, f->a, f->header.payload_bytes, cudaMemcpyHostToDevice, sl.stream);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "upload", e);
    if (p->params.iq_input)
        return cuda_form_iq_on_slot(c, sl, f, err, err_bytes);
    return cuda_form_on_slot(c, sl, f->header.storage, err, err_bytes);
}

pipeline_error cuda_solve(path *p, frame *f, char *err, size_t err_bytes)
{
    path_cuda *c = cuda_of(p);
    slot &sl = c->slots[f->slot];
    cudaError_t e = cudaSetDevice(p->params.gpu_device);
    /* One plan, one workspace: this solve starts after the previous one. */
    if (e == cudaSuccess && c->last_solved >= 0 && c->last_solved != f->slot)
        e = cudaStreamWaitEvent(sl.stream, c->slots[c->last_solved].solved, 0);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "solve ordering", e);
    eig_error ee = eig_plan_execute_device_layout(c->plan, sl.storage, sl.uplo, sl.matrices, sl.d_w,
                                                  p->params.need_vectors ? sl.d_z : nullptr, sl.d_info, sl.stream);
    if (ee != EIG_OK) {
        snprintf(err, err_bytes, "eig_plan_execute_device_layout: %s", eig_strerror(ee));
        return PIPELINE_ESOLVER;
    }
    e = cudaEventRecord(sl.solved, sl.stream);
    if (e == cudaSuccess)
        c->last_solved = f->slot;
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(f->w, sl.d_w, c->values_bytes, cudaMemcpyDeviceToHost, sl.stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(f->info, sl.d_info, sizeof(int) * p->params.matrices, cudaMemcpyDeviceToHost,
                            sl.stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(sl.stream);
    return e == cudaSuccess ? PIPELINE_OK : fail(err, err_bytes, "solve / values copy", e);
}

/* The self-check of matrix f->check.matrix on the slot's stream, after its
 * solve and before the vectors are trimmed to what the mode sends: the
 * matrix the solver read, the values as they are published (f->w, pinned),
 * every vector of the matrix (none in the values mode). */
pipeline_error cuda_check_start(path *p, frame *f, char *err, size_t err_bytes)
{
    path_cuda *c = cuda_of(p);
    const path_params &q = p->params;
    slot &sl = c->slots[f->slot];
    size_t n = q.n, b = f->check.matrix, real_bytes = c->element_bytes / 2;
    size_t matrix_elements = sl.storage == EIG_STORAGE_PACKED ? n * (n + 1) / 2 : n * n;
    const char *a = (const char *)sl.matrices + b * matrix_elements * c->element_bytes;
    const char *v = q.need_vectors ? (const char *)sl.d_z + b * n * n * c->element_bytes : nullptr;
    cudaError_t e = cudaSetDevice(q.gpu_device);
    if (e == cudaSuccess)
        e = cudaEventRecord(sl.check_begin, sl.stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(sl.d_check_w, (const char *)f->w + b * n * real_bytes, n * real_bytes,
                            cudaMemcpyHostToDevice, sl.stream);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "self-check values", e);
    const char *why = path_cuda_check_enqueue(q.precision, sl.storage, sl.uplo, (int)n, a, sl.d_check_w, v,
                                              sl.d_check, sl.h_check, sl.stream);
    if (why != nullptr) {
        snprintf(err, err_bytes, "%s", why);
        return PIPELINE_EDEVICE;
    }
    e = cudaEventRecord(sl.check_end, sl.stream);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "self-check event", e);
    sl.check_pending = true;
    f->check.state = FRAME_CHECK_STARTED;
    return PIPELINE_OK;
}

/* After the slot's stream is done: the check's ratios and GPU time. */
pipeline_error cuda_check_finish(slot &sl, frame *f, char *err, size_t err_bytes)
{
    if (!sl.check_pending)
        return PIPELINE_OK;
    sl.check_pending = false;
    float ms = 0;
    cudaError_t e = cudaEventElapsedTime(&ms, sl.check_begin, sl.check_end);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "self-check time", e);
    f->check.residual = sl.h_check[0];
    f->check.orthogonality = sl.h_check[1];
    f->check.ns = (uint64_t)((double)ms * 1e6);
    f->check.state = FRAME_CHECK_DONE;
    return PIPELINE_OK;
}

/* Enqueues the copies of the vectors out->matrix_meta names into their
 * places in out->data (after each matrix's values): one strided copy when
 * every matrix sends the same columns, else one per matrix. */
cudaError_t cuda_copy_vectors(path_cuda *c, const slot &sl, output_buffer *out)
{
    const path_params &q = c->base.params;
    size_t values_bytes = (size_t)q.n * (c->element_bytes / 2), column_bytes = (size_t)q.n * c->element_bytes;
    const protocol_matrix_meta *m0 = &out->matrix_meta[0];
    bool uniform = true;
    for (uint32_t b = 1; b < q.matrices && uniform; b++)
        uniform = out->matrix_meta[b].k_sent == m0->k_sent && out->matrix_meta[b].first_index == m0->first_index;
    if (uniform) {
        if (m0->k_sent == 0)
            return cudaSuccess;
        const char *src = (const char *)sl.d_z + m0->first_index * column_bytes;
        return cudaMemcpy2DAsync(out->data + values_bytes, values_bytes + m0->k_sent * column_bytes, src,
                                 q.n * column_bytes, m0->k_sent * column_bytes, q.matrices, cudaMemcpyDeviceToHost,
                                 sl.stream);
    }
    uint8_t *dst = out->data;
    for (uint32_t b = 0; b < q.matrices; b++) {
        const protocol_matrix_meta *m = &out->matrix_meta[b];
        dst += values_bytes;
        const char *src = (const char *)sl.d_z + ((size_t)b * q.n + m->first_index) * column_bytes;
        cudaError_t e = m->k_sent == 0 ? cudaSuccess
                                       : cudaMemcpyAsync(dst, src, m->k_sent * column_bytes,
                                                         cudaMemcpyDeviceToHost, sl.stream);
        if (e != cudaSuccess)
            return e;
        dst += m->k_sent * column_bytes;
    }
    return cudaSuccess;
}

pipeline_error cuda_output_start(path *p, frame *f, output_buffer *out, char *err, size_t err_bytes)
{
    path_cuda *c = cuda_of(p);
    const path_params &q = p->params;
    size_t values_bytes = (size_t)q.n * (c->element_bytes / 2), column_bytes = (size_t)q.n * c->element_bytes;
    uint8_t *dst = out->data;
    for (uint32_t b = 0; b < q.matrices; b++) {
        memcpy(dst, (const uint8_t *)f->w + b * values_bytes, values_bytes);
        dst += values_bytes + out->matrix_meta[b].k_sent * column_bytes;
    }
    cudaError_t e = cudaSetDevice(q.gpu_device);
    if (e == cudaSuccess)
        e = cuda_copy_vectors(c, c->slots[f->slot], out);
    return e == cudaSuccess ? PIPELINE_OK : fail(err, err_bytes, "vectors copy", e);
}

pipeline_error cuda_output_wait(path *p, frame *f, char *err, size_t err_bytes)
{
    slot &sl = cuda_of(p)->slots[f->slot];
    cudaError_t e = cudaSetDevice(p->params.gpu_device);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(sl.stream);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "device stream", e);
    sl.idle = true;
    return cuda_check_finish(sl, f, err, err_bytes);
}

void cuda_release(path *p, frame *f)
{
    if (f->slot < 0)
        return;
    path_cuda *c = cuda_of(p);
    slot &sl = c->slots[f->slot];
    /* The slot's copies may still read f->a or write f->out. An error here
     * has already failed the frame's own step; the next frame on this slot
     * meets it again and is dropped with the reason. */
    if (!sl.idle && cudaSetDevice(p->params.gpu_device) == cudaSuccess)
        (void)cudaStreamSynchronize(sl.stream);
    sl.idle = true;
    sl.check_pending = false; /* a frame dropped before its wait: its check is not read */
    pthread_mutex_lock(&c->lock);
    sl.busy = false;
    pthread_cond_signal(&c->freed);
    pthread_mutex_unlock(&c->lock);
    f->slot = -1;
}

void cuda_destroy(path *p)
{
    path_cuda *c = cuda_of(p);
    cudaSetDevice(p->params.gpu_device);
    for (slot &sl : c->slots) {
        if (sl.stream != nullptr)
            cudaStreamSynchronize(sl.stream);
        form_iq_cuda_destroy(&sl.iq);
        cudaFree(sl.d_in);
        cudaFree(sl.d_full);
        cudaFree(sl.d_w);
        cudaFree(sl.d_z);
        cudaFree(sl.d_info);
        cudaFree(sl.d_check);
        cudaFree(sl.d_check_w);
        cudaFreeHost(sl.h_check);
        if (sl.solved != nullptr)
            cudaEventDestroy(sl.solved);
        if (sl.check_begin != nullptr)
            cudaEventDestroy(sl.check_begin);
        if (sl.check_end != nullptr)
            cudaEventDestroy(sl.check_end);
        if (sl.stream != nullptr)
            cudaStreamDestroy(sl.stream);
    }
    eig_plan_destroy(&c->plan);
    pthread_cond_destroy(&c->freed);
    pthread_mutex_destroy(&c->lock);
    delete c;
}

const path_ops cuda_ops = {
    "cuda", cuda_buffer_alloc, cuda_buffer_free, cuda_form, cuda_solve, cuda_check_start,
    cuda_output_start, cuda_output_wait, cuda_release, cuda_destroy,
};

/* The device-only plan: FULL lower by default, any layout at execution. */
pipeline_error cuda_plan_create(path_cuda *c, char *err, size_t err_bytes)
{
    const path_params &q = c->base.params;
    eig_plan_params pp = path_plan_params(&q, EIG_BACKEND_CUDA);
    pp.device_only = 1;
    eig_error e = eig_plan_create(&c->plan, &pp);
    if (e != EIG_OK) {
        path_plan_error(err, err_bytes, &q, e);
        return PIPELINE_ESOLVER;
    }
    return PIPELINE_OK;
}

/* The slot's IQ plan, on its stream (after the stream exists). */
pipeline_error cuda_slot_iq_create(path_cuda *c, slot &sl, int s, char *err, size_t err_bytes)
{
    char why[160];
    form_iq_error e = form_iq_cuda_create(&sl.iq, &c->base.params.iq, sl.stream, why, sizeof why);
    if (e == FORM_IQ_OK)
        return PIPELINE_OK;
    snprintf(err, err_bytes, "device slot %d: IQ forming plan: %s", s, why);
    return e == FORM_IQ_ENOMEM ? PIPELINE_ENOMEM : e == FORM_IQ_EINVAL ? PIPELINE_EINVAL : PIPELINE_EDEVICE;
}

pipeline_error cuda_slots_create(path_cuda *c, char *err, size_t err_bytes)
{
    cudaError_t e = cudaSuccess;
    const path_params &q = c->base.params;
    bool full = q.forward_backward || q.diagonal_loading || q.iq_input; /* d_full: unpacked or IQ-formed */
    for (int s = 0; s < kSlots; s++) {
        slot &sl = c->slots[s];
        if ((e = cudaStreamCreateWithFlags(&sl.stream, cudaStreamNonBlocking)) != cudaSuccess ||
            (e = cudaEventCreateWithFlags(&sl.solved, cudaEventDisableTiming)) != cudaSuccess ||
            (e = cudaMalloc(&sl.d_in, c->in_bytes)) != cudaSuccess ||
            (full && (e = cudaMalloc(&sl.d_full, c->full_bytes)) != cudaSuccess) ||
            (e = cudaMalloc(&sl.d_w, c->values_bytes)) != cudaSuccess ||
            (e = cudaMalloc((void **)&sl.d_info, sizeof(int) * q.matrices)) != cudaSuccess ||
            (q.need_vectors && (e = cudaMalloc(&sl.d_z, c->full_bytes)) != cudaSuccess) ||
            (e = cudaEventCreate(&sl.check_begin)) != cudaSuccess ||
            (e = cudaEventCreate(&sl.check_end)) != cudaSuccess ||
            (e = cudaMalloc(&sl.d_check, path_cuda_check_scratch_bytes((int)q.n))) != cudaSuccess ||
            (e = cudaMalloc(&sl.d_check_w, (size_t)q.n * sizeof(double))) != cudaSuccess ||
            (e = cudaHostAlloc((void **)&sl.h_check, 2 * sizeof(double), cudaHostAllocDefault)) != cudaSuccess) {
            char what[96];
            snprintf(what, sizeof what, "device slot %d (%zu bytes per frame buffer)", s, c->full_bytes);
            return fail(err, err_bytes, what, e);
        }
        if (q.iq_input) {
            pipeline_error pe = cuda_slot_iq_create(c, sl, s, err, err_bytes);
            if (pe != PIPELINE_OK)
                return pe;
        }
    }
    return PIPELINE_OK;
}

} // namespace

extern "C" pipeline_error path_cuda_create(path **out, const path_params *params, char *err, size_t err_bytes)
{
    *out = nullptr;
    cudaError_t e = cudaSetDevice(params->gpu_device);
    if (e != cudaSuccess)
        return fail(err, err_bytes, "cuda device", e);
    path_cuda *c = new (std::nothrow) path_cuda();
    if (c == nullptr) {
        snprintf(err, err_bytes, "out of memory");
        return PIPELINE_ENOMEM;
    }
    c->base.ops = &cuda_ops;
    c->base.params = *params;
    c->base.backend = EIG_BACKEND_CUDA;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, params->gpu_device) == cudaSuccess) // a name only for the metrics
        snprintf(c->base.device_name, sizeof c->base.device_name, "%s", prop.name);
    c->element_bytes = eig_element_bytes(params->precision);
    c->full_bytes = (size_t)params->matrices * params->n * params->n * c->element_bytes;
    c->values_bytes = (size_t)params->matrices * params->n * (c->element_bytes / 2);
    c->cube_bytes = params->iq_input ? protocol_iq_cube_bytes(params->iq.channels, params->iq.pulses,
                                                              params->iq.gates, params->iq.format)
                                     : 0;
    c->in_bytes = c->cube_bytes > c->full_bytes ? c->cube_bytes : c->full_bytes;
    c->last_solved = -1;
    pthread_mutex_init(&c->lock, nullptr);
    pthread_cond_init(&c->freed, nullptr);
    pipeline_error pe = PIPELINE_OK;
    if (params->iq_input &&
        form_iq_check_solver(&params->iq, params->n, params->matrices, params->precision, err, err_bytes) != FORM_IQ_OK)
        pe = PIPELINE_EINVAL;
    if (pe == PIPELINE_OK)
        pe = cuda_plan_create(c, err, err_bytes);
    if (pe == PIPELINE_OK)
        pe = cuda_slots_create(c, err, err_bytes);
    if (pe != PIPELINE_OK) {
        cuda_destroy(&c->base);
        return pe;
    }
    *out = &c->base;
    return PIPELINE_OK;
}
