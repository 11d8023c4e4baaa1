/*
 * pipeline_gpu.h - the device side of the daemon's GPU path (pipeline/),
 * implemented in cuda/pipeline_device.cu and cuda/pipeline_form.cu.
 *
 * A fixed set of device slots (two by default), each a CUDA stream with its
 * own device buffers: the frame as received (full or packed), the formed
 * full matrices when unpacking was needed, eigenvalues, eigenvectors, info.
 * The form stage takes a free slot and enqueues the upload and the forming
 * kernels; the solve stage enqueues the solve on the same stream, ordered
 * after the previous frame's solve (one plan, one workspace) by an event,
 * copies the values back and waits for them, then enqueues the copies of the
 * vectors the output mode needs; the publish stage waits for the slot and
 * frees it. With two slots the copies of one frame overlap the solve of the
 * next. Every function sets the device first (stage threads are plain
 * pthreads) and returns 0, or -1 with a message in err.
 */
#ifndef EIGSTREAM_PIPELINE_GPU_H
#define EIGSTREAM_PIPELINE_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pipeline_gpu pipeline_gpu;

typedef struct pipeline_gpu_params {
    int device;
    uint32_t n, matrices;
    uint8_t element;   /* eig_precision */
    int need_vectors;  /* allocate eigenvector buffers */
    int solve_packed;  /* packed frames are solved as they came (no forming configured) */
    int slots;         /* >= 2 */
} pipeline_gpu_params;

typedef struct pipeline_gpu_form_params {
    uint8_t storage;        /* protocol_storage of the frame */
    int forward_backward;   /* R <- (R + J conj(R) J) / 2 */
    int diagonal_loading;   /* R <- R + factor * trace(R)/n * I */
    double loading_factor;
} pipeline_gpu_form_params;

typedef struct pipeline_gpu_buffers {
    const void *matrices; /* what the solver reads (FULL lower, or the packed frame) */
    void *w, *z;          /* eigenvalues, eigenvectors (z NULL without vectors) */
    int *info;
    void *stream;         /* cudaStream_t */
} pipeline_gpu_buffers;

/* Pinned host memory (cudaHostAlloc) for frame and output buffers. */
int pipeline_gpu_host_alloc(void **ptr, size_t bytes);
void pipeline_gpu_host_free(void *ptr);

int pipeline_gpu_create(pipeline_gpu **out, const pipeline_gpu_params *params, char *err, size_t err_bytes);
void pipeline_gpu_destroy(pipeline_gpu **g);

/* Blocks until a slot is free; returns its index. */
int pipeline_gpu_slot_acquire(pipeline_gpu *g);
/* Waits for the slot's stream, then frees the slot. */
void pipeline_gpu_slot_release(pipeline_gpu *g, int slot);

/* Enqueues on the slot's stream: host (bytes of the frame's payload, pinned)
 * to the device, then unpacking and forming as params say. */
int pipeline_gpu_upload_form(pipeline_gpu *g, int slot, const void *host, size_t bytes,
                             const pipeline_gpu_form_params *params, char *err, size_t err_bytes);
/* protocol_storage the solver must read for this slot's frame (FULL, or the
 * frame's packed storage when it is solved as it came). */
int pipeline_gpu_slot_storage(pipeline_gpu *g, int slot);
void pipeline_gpu_slot_buffers(pipeline_gpu *g, int slot, pipeline_gpu_buffers *b);

/* Orders the slot's stream after the previous solve; sets the device. */
int pipeline_gpu_solve_begin(pipeline_gpu *g, int slot, char *err, size_t err_bytes);
/* Marks the solve done, copies values and info to the host (pinned) and
 * waits for them. */
int pipeline_gpu_solve_end(pipeline_gpu *g, int slot, void *host_w, int *host_info, char *err,
                           size_t err_bytes);
/* Asynchronous device-to-host copies on the slot's stream: eigenvector
 * columns of matrix b (first..first+k-1) to host_dst; or the same columns of
 * every matrix at once, matrix b landing at host_dst + b * host_pitch. */
int pipeline_gpu_copy_vectors(pipeline_gpu *g, int slot, uint32_t matrix, uint32_t first, uint32_t k,
                              void *host_dst, char *err, size_t err_bytes);
int pipeline_gpu_copy_vectors_strided(pipeline_gpu *g, int slot, uint32_t first, uint32_t k, void *host_dst,
                                      size_t host_pitch, char *err, size_t err_bytes);
/* Waits for everything enqueued on the slot's stream. */
int pipeline_gpu_slot_finish(pipeline_gpu *g, int slot, char *err, size_t err_bytes);

/* Forming kernels (cuda/pipeline_form.cu), enqueued on stream; d_a holds
 * `matrices` full n x n matrices; the lower triangle is read and written. */
int pipeline_gpu_unpack(const void *d_packed, void *d_full, uint32_t n, uint32_t matrices, uint8_t element,
                        uint8_t storage, void *stream);
int pipeline_gpu_forward_backward(void *d_a, uint32_t n, uint32_t matrices, uint8_t element, void *stream);
int pipeline_gpu_diagonal_loading(void *d_a, uint32_t n, uint32_t matrices, uint8_t element, double factor,
                                  void *stream);

#ifdef __cplusplus
}
#endif

#endif
