/*
 * output.c - the eigenspace frame's data layout (output.h).
 */
#include "output.h"

#include "mdl.h"
#include "protocol.h"

int output_sends_vectors(const output_format *o)
{
    return o->mode != PROTOCOL_MODE_VALUES;
}

size_t output_data_capacity(const output_format *o)
{
    /* Every matrix sending its most vectors: all n, or none in values mode. */
    return (size_t)o->matrices * protocol_eigenspace_matrix_bytes(o->n, o->precision, output_sends_vectors(o) ? o->n : 0);
}

uint32_t output_frame_snapshots(const output_format *o, const frame *f)
{
    /* An IQ frame's @52 is its gate count, not a snapshot count. */
    return o->iq_snapshots != 0 ? o->iq_snapshots : f->header.snapshots;
}

void output_signal_dimensions(const output_format *o, frame *f)
{
    uint32_t n = o->n;
    if (o->signal_dimension > 0) {
        uint32_t d = o->signal_dimension > n ? n : o->signal_dimension;
        for (uint32_t b = 0; b < o->matrices; b++)
            f->signal_dim[b] = d;
        return;
    }
    /* MDL: the frame's snapshot count (IQ input: the forming's K), else the
     * configured one; the receiver already rejected frames of the
     * signal/noise modes that have neither, so here K = 0 only happens in
     * full/values mode, where d is informative. */
    uint32_t frame_k = output_frame_snapshots(o, f);
    uint32_t k = frame_k ? frame_k : o->snapshots;
    for (uint32_t b = 0; b < o->matrices; b++) {
        int d = -1;
        if (k > 0 && f->info[b] == 0) {
            if (o->precision == EIG_COMPLEX_DOUBLE)
                d = mdl_estimate((const double *)f->w + (size_t)b * n, (int)n, (double)k);
            else
                d = mdl_estimate_float((const float *)f->w + (size_t)b * n, (int)n, (double)k);
        }
        f->signal_dim[b] = d < 0 ? 0 : (uint32_t)d;
    }
}

void output_describe(const output_format *o, const frame *f, output_buffer *out)
{
    size_t bytes = 0;
    for (uint32_t b = 0; b < o->matrices; b++) {
        protocol_matrix_meta *m = &out->matrix_meta[b];
        m->status = f->info[b];
        m->signal_dim = f->signal_dim[b];
        bytes += protocol_eigenspace_matrix_layout(o->mode, o->n, o->precision, m->signal_dim, &m->k_sent,
                                                   &m->first_index);
    }
    out->data_bytes = bytes;
}
