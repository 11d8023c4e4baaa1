/*
 * output.h - the eigenspace frame's data part: which eigenvectors each
 * matrix sends and its size (the wire's layout,
 * protocol_eigenspace_matrix_layout, one call a matrix), its signal
 * dimension (fixed or MDL). Per matrix the data part holds n eigenvalues (ascending,
 * real of the precision) then k_sent eigenvectors of n complex elements;
 * vector j belongs to eigenvalue first_index + j (docs/protocol.md).
 */
#ifndef EIGSTREAM_OUTPUT_H
#define EIGSTREAM_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "eig.h"
#include "frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What every published frame looks like, from the configuration. */
typedef struct output_format {
    uint32_t n, matrices;
    eig_precision precision;
    uint8_t mode;              /* protocol_mode */
    uint32_t signal_dimension; /* fixed d; 0 = MDL estimate per matrix */
    uint32_t snapshots;        /* MDL's K when the frame says 0; 0 = the frame must say */
    uint32_t iq_snapshots;     /* IQ input: the forming's K, the same for every matrix of every
                                  frame; 0 = covariance input (the frame's snapshots field says) */
} output_format;

/* The snapshot count behind a frame's matrices, as the eigenspace header
 * carries it (@52): the forming's K for IQ input, else the covariance
 * frame's own snapshots field (0 = unknown). */
uint32_t output_frame_snapshots(const output_format *o, const frame *f);

/* 1 when the mode sends eigenvectors. */
int output_sends_vectors(const output_format *o);

/* Bytes of the largest data part the mode can produce (every matrix
 * sending its most vectors). */
size_t output_data_capacity(const output_format *o);

/* Fills f->signal_dim from f->w and f->info (values on the host): the fixed
 * dimension, or MDL with the frame's snapshot count (output_frame_snapshots;
 * when that is 0, output.snapshots); a failed matrix, or K = 0, gets 0. */
void output_signal_dimensions(const output_format *o, frame *f);

/* Fills out->matrix_meta (status, signal_dim, k_sent, first_index) from f
 * and sets out->data_bytes to the data part's size. */
void output_describe(const output_format *o, const frame *f, output_buffer *out);

#ifdef __cplusplus
}
#endif

#endif
