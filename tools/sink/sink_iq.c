/*
 * sink_iq.c - per-Doppler-bin subspace checks of IQ-formed eigenspaces (sink_iq.h).
 */
#include "sink_iq.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void sink_iq_result_init(sink_iq_result *r)
{
    memset(r, 0, sizeof *r);
    r->target_min = 1.0;
    r->jammer_min = 1.0;
    r->far_max = 0.0;
}

/* min / max that keep a NaN once one is seen. */
static double nan_min(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : (b < a ? b : a);
}

static double nan_max(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : (b > a ? b : a);
}

void sink_iq_result_add(sink_iq_result *total, const sink_iq_result *frame)
{
    total->matrices += frame->matrices;
    total->bad_status += frame->bad_status;
    total->no_vectors += frame->no_vectors;
    total->target_checked += frame->target_checked;
    total->far_checked += frame->far_checked;
    total->jammer_checked += frame->jammer_checked;
    total->target_min = nan_min(total->target_min, frame->target_min);
    total->jammer_min = nan_min(total->jammer_min, frame->jammer_min);
    total->far_max = nan_max(total->far_max, frame->far_max);
}

/* Element i of a vector block of complex float or double. */
static double complex vector_element(const uint8_t *v, uint8_t element, size_t i)
{
    if (element == EIG_COMPLEX_DOUBLE) {
        double x[2];
        memcpy(x, v + i * 16, 16);
        return CMPLX(x[0], x[1]);
    }
    float x[2];
    memcpy(x, v + i * 8, 8);
    return CMPLX(x[0], x[1]);
}

/* Sum over vectors first..first+count-1 of the block of |v^H a|^2. */
static double energy_in(const uint8_t *vectors, uint8_t element, uint32_t n, uint32_t first, uint32_t count,
                        const double complex *a)
{
    double e = 0.0;
    for (uint32_t k = first; k < first + count; k++) {
        double complex dot = 0.0;
        for (uint32_t i = 0; i < n; i++)
            dot += conj(vector_element(vectors, element, (size_t)k * n + i)) * a[i];
        e += creal(dot) * creal(dot) + cimag(dot) * cimag(dot);
    }
    return e;
}

/* proj(a) onto matrix's signal subspace (sink_iq.h), a of norm^2 n; -1 when
 * the mode sends no vectors. */
static double signal_projection(uint8_t mode, const protocol_matrix_meta *m, const uint8_t *vectors, uint8_t element,
                                uint32_t n, const double complex *a)
{
    uint32_t d = m->signal_dim > n ? n : m->signal_dim;
    switch (mode) {
    case PROTOCOL_MODE_FULL: return energy_in(vectors, element, n, n - d, d, a) / n;
    case PROTOCOL_MODE_SIGNAL: return energy_in(vectors, element, n, 0, m->k_sent, a) / n;
    case PROTOCOL_MODE_NOISE: return 1.0 - energy_in(vectors, element, n, 0, m->k_sent, a) / n;
    default: return -1.0;
    }
}

/* Circular distance between bins of an F-point FFT. */
static uint32_t bin_distance(uint32_t a, uint32_t b, uint32_t fft_size)
{
    uint32_t d = a > b ? a - b : b - a;
    return d < fft_size - d ? d : fft_size - d;
}

/* The targets' and jammers' checks on one matrix of bin b. */
static void check_matrix(const iq_scene *s, const sink_iq_geometry *g, uint8_t mode, uint8_t element, uint32_t n,
                         const protocol_matrix_meta *m, const uint8_t *vectors, uint32_t b, double complex *a,
                         sink_iq_result *r)
{
    for (size_t t = 0; t < s->targets; t++) {
        uint32_t own = iq_scene_doppler_bin(s->target[t].doppler, g->fft_size);
        uint32_t distance = bin_distance(b, own, g->fft_size);
        if (distance != 0 && distance <= g->far_bins)
            continue; /* the window's main lobe and near sidelobes: no claim */
        scene_steering_vector(n, s->target[t].angle_deg, a);
        double p = signal_projection(mode, m, vectors, element, n, a);
        if (distance == 0) {
            r->target_checked++;
            r->target_min = nan_min(r->target_min, p);
        } else {
            r->far_checked++;
            r->far_max = nan_max(r->far_max, p);
        }
    }
    for (size_t j = 0; j < s->jammers; j++) {
        scene_steering_vector(n, s->jammer[j].angle_deg, a);
        r->jammer_checked++;
        r->jammer_min = nan_min(r->jammer_min, signal_projection(mode, m, vectors, element, n, a));
    }
}

scene_error sink_iq_check_frame(const iq_scene *s, const sink_iq_geometry *g, const protocol_header *h,
                                const protocol_matrix_meta *m, const uint8_t *data, sink_iq_result *r)
{
    const uint32_t n = h->n;
    if (g->fft_size == 0 || g->segments == 0 || h->count % g->segments != 0 || n == 0 || n > EIG_N_MAX)
        return SCENE_EINVAL;
    double complex *a = malloc((size_t)n * sizeof *a);
    if (a == NULL)
        return SCENE_ENOMEM;
    const size_t real_bytes = eig_element_bytes(h->element) / 2;
    for (uint32_t k = 0; k < h->count; k++) {
        const uint8_t *vectors = data + (size_t)n * real_bytes;
        data += protocol_eigenspace_matrix_bytes(n, h->element, m[k].k_sent);
        r->matrices++;
        if (m[k].status != 0) {
            r->bad_status++;
            continue;
        }
        if (h->mode == PROTOCOL_MODE_VALUES) {
            r->no_vectors++;
            continue;
        }
        uint32_t b = (uint32_t)(((uint64_t)g->bin_first + k / g->segments) % g->fft_size);
        check_matrix(s, g, h->mode, h->element, n, &m[k], vectors, b, a, r);
    }
    free(a);
    return SCENE_OK;
}
