/*
 * form.h - host-side forming of a batch of covariance matrices, in place.
 *
 * The batch lives in one buffer sized for count full n x n matrices of the
 * element type (eig_precision), column-major. After form_unpack_in_place
 * the lower triangle (diagonal included) of every matrix is valid, which is
 * all the solver reads (EIG_STORAGE_FULL, EIG_LOWER); the forming steps read
 * and write the lower triangle only.
 */
#ifndef EIGSTREAM_FORM_H
#define EIGSTREAM_FORM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Expands count packed matrices (protocol_storage PACKED_LOWER or
 * PACKED_UPPER, LAPACK packed layouts) stored at the start of a into full
 * column-major storage in the same buffer. Works from the last element
 * backwards: every element's full position is at or after its packed
 * position, and both orders agree, so no element is overwritten before it is
 * read. Upper input is mirrored (conjugated) into the lower triangle.
 * STORAGE_FULL is a no-op. */
void form_unpack_in_place(void *a, uint32_t n, uint32_t count, uint8_t element, uint8_t storage);

/* Forward-backward averaging R <- (R + J conj(R) J) / 2 with J the exchange
 * matrix. For Hermitian R, (J conj(R) J)(i,j) = R(n-1-j, n-1-i), which for
 * i >= j is again a lower-triangle element: the lower triangle is averaged
 * with its reflection through the anti-diagonal, pairwise, in place. */
void form_forward_backward(void *a, uint32_t n, uint32_t count, uint8_t element);

/* Diagonal loading: adds factor * trace(R) / n to the real part of every
 * diagonal element (factor = 10^(dB/10)); the trace is taken per matrix. */
void form_diagonal_loading(void *a, uint32_t n, uint32_t count, uint8_t element, double factor);

/* The same three steps on the device (form_cuda.cu, built with CUDA only),
 * enqueued on stream (a cudaStream_t) for `count` matrices at once: unpack
 * reads count packed matrices at d_packed and writes the lower triangles of
 * count full matrices at d_full (another buffer); the other two work in place
 * on full matrices. Each returns NULL when its kernel was launched, else the
 * CUDA error's text. */
const char *form_cuda_unpack(const void *d_packed, void *d_full, uint32_t n, uint32_t count, uint8_t element,
                             uint8_t storage, void *stream);
const char *form_cuda_forward_backward(void *d_a, uint32_t n, uint32_t count, uint8_t element, void *stream);
const char *form_cuda_diagonal_loading(void *d_a, uint32_t n, uint32_t count, uint8_t element, double factor,
                                       void *stream);

#ifdef __cplusplus
}
#endif

#endif
