/*
 * output.c - the eigenspace frame's data layout: which eigenvectors each
 * output mode sends, the signal dimension (fixed or MDL), and the host-side
 * assembly of the data part (CPU path).
 *
 * Per matrix the data part holds n eigenvalues (ascending, real of the
 * element precision) then k_sent eigenvectors of n complex elements; vector j
 * belongs to eigenvalue first_index + j (docs/protocol.md).
 */
#include <string.h>

#include "mdl.h"
#include "pipeline_internal.h"

void output_matrix_layout(const pipeline *p, uint32_t signal_dim, uint32_t *k_sent,
                          uint32_t *first_index)
{
    uint32_t n = p->n, d = signal_dim > n ? n : signal_dim;
    switch (p->mode) {
    case PROTOCOL_MODE_FULL: *k_sent = n; *first_index = 0; return;
    case PROTOCOL_MODE_SIGNAL: *k_sent = d; *first_index = n - d; return; /* the d largest */
    case PROTOCOL_MODE_NOISE: *k_sent = n - d; *first_index = 0; return;  /* the n-d smallest */
    default: *k_sent = 0; *first_index = 0; return;
    }
}

size_t output_matrix_bytes(const pipeline *p, uint32_t k_sent)
{
    return (size_t)p->n * p->real_bytes + (size_t)k_sent * p->n * p->element_bytes;
}

void output_signal_dimensions(const pipeline *p, frame *f)
{
    uint32_t n = p->n;
    if (p->cfg.output.signal_dimension > 0) {
        uint32_t d = (uint32_t)p->cfg.output.signal_dimension;
        for (uint32_t b = 0; b < p->matrices; b++)
            f->signal_dim[b] = d > n ? n : d;
        return;
    }
    /* MDL: the frame's snapshot count, else the configured one; the receiver
     * already rejected frames of the signal/noise modes that have neither, so
     * here K = 0 only happens in full/values mode, where d is informative. */
    uint32_t k = f->header.snapshots ? f->header.snapshots : (uint32_t)p->cfg.output.snapshots;
    for (uint32_t b = 0; b < p->matrices; b++) {
        int d = -1;
        if (k > 0 && f->info[b] == 0) {
            if (p->element == EIG_COMPLEX_DOUBLE)
                d = mdl_estimate((const double *)f->w + (size_t)b * n, (int)n, (double)k);
            else
                d = mdl_estimate_float((const float *)f->w + (size_t)b * n, (int)n, (double)k);
        }
        f->signal_dim[b] = d < 0 ? 0 : (uint32_t)d;
    }
}

void output_assemble_host(const pipeline *p, const frame *f, output_buffer *out)
{
    size_t n = p->n;
    size_t values_bytes = n * p->real_bytes;
    size_t column_bytes = n * p->element_bytes;
    uint8_t *dst = out->data;
    for (uint32_t b = 0; b < p->matrices; b++) {
        protocol_matrix_meta *m = &out->matrix_meta[b];
        m->status = f->info[b];
        m->signal_dim = f->signal_dim[b];
        output_matrix_layout(p, m->signal_dim, &m->k_sent, &m->first_index);
        memcpy(dst, (const uint8_t *)f->w + b * values_bytes, values_bytes);
        dst += values_bytes;
        if (m->k_sent > 0) {
            /* Columns first_index .. first_index + k_sent - 1 are contiguous. */
            const uint8_t *src = (const uint8_t *)f->z + (b * n + m->first_index) * column_bytes;
            memcpy(dst, src, m->k_sent * column_bytes);
            dst += m->k_sent * column_bytes;
        }
    }
    out->data_bytes = (size_t)(dst - out->data);
}
