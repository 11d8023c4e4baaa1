/*
 * sink_check.c - per-matrix checks of eigenspace frames against the scene.
 */
#include "sink_check.h"

#include <cblas.h>
#include <complex.h>
#include <fftw3.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double DEG_PER_RAD = 57.29577951308232;

struct sink_checker {
    const scene *scene;
    size_t d;
    uint32_t fft_size, doa_cells;
    uint32_t n;            /* order the buffers below are sized for (0 = none yet) */
    double complex *q;     /* n x d orthonormal basis of span(A) */
    double complex *v;     /* n x n vectors of one matrix, as double */
    double complex *work;  /* n x n scratch (residual, products) */
    double complex *gram;  /* n x n Gram matrix */
    double *w;             /* n eigenvalues of the Gram matrix */
    fftw_complex *fft_in, *fft_out;
    double *music;         /* fft_size MUSIC denominators */
    fftw_plan plan;
};

scene_error sink_checker_create(sink_checker **out, const scene *s, uint32_t doa_fft_size, uint32_t doa_cells)
{
    *out = NULL;
    sink_checker *c = calloc(1, sizeof *c);
    if (c == NULL)
        return SCENE_ENOMEM;
    c->scene = s;
    c->d = scene_dimension(s);
    c->fft_size = doa_fft_size;
    c->doa_cells = doa_cells;
    if (doa_fft_size > 0) {
        c->fft_in = fftw_malloc(sizeof(fftw_complex) * doa_fft_size);
        c->fft_out = fftw_malloc(sizeof(fftw_complex) * doa_fft_size);
        c->music = malloc(sizeof(double) * doa_fft_size);
        if (c->fft_in == NULL || c->fft_out == NULL || c->music == NULL) {
            sink_checker_destroy(&c);
            return SCENE_ENOMEM;
        }
        c->plan = fftw_plan_dft_1d((int)doa_fft_size, c->fft_in, c->fft_out, FFTW_FORWARD, FFTW_ESTIMATE);
        if (c->plan == NULL) {
            sink_checker_destroy(&c);
            return SCENE_ENOMEM;
        }
    }
    *out = c;
    return SCENE_OK;
}

static void free_buffers(sink_checker *c)
{
    free(c->q);
    free(c->v);
    free(c->work);
    free(c->gram);
    free(c->w);
    c->q = c->v = c->work = c->gram = NULL;
    c->w = NULL;
    c->n = 0;
}

void sink_checker_destroy(sink_checker **c)
{
    if (c == NULL || *c == NULL)
        return;
    free_buffers(*c);
    if ((*c)->plan != NULL)
        fftw_destroy_plan((*c)->plan);
    fftw_free((*c)->fft_in);
    fftw_free((*c)->fft_out);
    free((*c)->music);
    free(*c);
    *c = NULL;
}

/* Sizes the buffers and the basis of span(A) for matrices of order n. */
static scene_error prepare(sink_checker *c, uint32_t n)
{
    if (c->n == n)
        return SCENE_OK;
    free_buffers(c);
    size_t nn = (size_t)n * n;
    c->q = malloc(((size_t)n * c->d + 1) * sizeof *c->q);
    c->v = malloc(nn * sizeof *c->v);
    c->work = malloc(nn * sizeof *c->work);
    c->gram = malloc(nn * sizeof *c->gram);
    c->w = malloc(n * sizeof *c->w);
    if (c->q == NULL || c->v == NULL || c->work == NULL || c->gram == NULL || c->w == NULL) {
        free_buffers(c);
        return SCENE_ENOMEM;
    }
    scene_error e = c->d <= n ? scene_signal_basis(c->scene, n, c->q) : SCENE_OK;
    if (e != SCENE_OK) {
        free_buffers(c);
        return e;
    }
    c->n = n;
    return SCENE_OK;
}

/* Largest eigenvalue of the k x k Hermitian matrix in c->gram (lower), >= 0. */
static double gram_max_eigenvalue(sink_checker *c, uint32_t k)
{
    if (k == 0)
        return 0.0;
    lapack_int info = LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int)k, c->gram, (lapack_int)k, c->w);
    if (info != 0)
        return NAN;
    return c->w[k - 1] > 0.0 ? c->w[k - 1] : 0.0;
}

static double angle_from_sin_squared(double s2)
{
    if (isnan(s2))
        return NAN;
    return asin(sqrt(s2 < 1.0 ? s2 : 1.0)) * DEG_PER_RAD;
}

/* Largest principal angle (degrees) between span of the k orthonormal
 * columns of vec (n x k, signal vectors) and span(A), for k <= d. */
static double signal_angle(sink_checker *c, uint32_t n, const double complex *vec, uint32_t k)
{
    const double complex one = 1.0, zero = 0.0, minus_one = -1.0;
    int d = (int)c->d;
    /* work = vec - Q (Q^H vec): the part of each vector outside span(A). */
    double complex *proj = c->gram; /* d x k, reused before the Gram product */
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, d, (int)k, (int)n, &one, c->q, (int)n, vec, (int)n,
                &zero, proj, d);
    memcpy(c->work, vec, (size_t)n * k * sizeof *vec);
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)k, d, &minus_one, c->q, (int)n, proj, d,
                &one, c->work, (int)n);
    cblas_zherk(CblasColMajor, CblasLower, CblasConjTrans, (int)k, (int)n, 1.0, c->work, (int)n, 0.0, c->gram,
                (int)k);
    return angle_from_sin_squared(gram_max_eigenvalue(c, k));
}

/* Largest principal angle (degrees) between span(A) and the orthogonal
 * complement of the k orthonormal noise vectors: asin ||E^H Q||_2. */
static double noise_angle(sink_checker *c, uint32_t n, const double complex *vec, uint32_t k)
{
    const double complex one = 1.0, zero = 0.0;
    int d = (int)c->d;
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)k, d, (int)n, &one, vec, (int)n, c->q, (int)n,
                &zero, c->work, (int)k);
    cblas_zherk(CblasColMajor, CblasLower, CblasConjTrans, d, (int)k, 1.0, c->work, (int)k, 0.0, c->gram, d);
    return angle_from_sin_squared(gram_max_eigenvalue(c, (uint32_t)d));
}

/* FFT-MUSIC: the d deepest local minima of the MUSIC denominator over u,
 * converted to degrees; returns the largest distance from a scene emitter to
 * its nearest estimate. noise != 0: vec holds noise vectors. */
static double doa_error(sink_checker *c, uint32_t n, const double complex *vec, uint32_t k, int noise)
{
    const uint32_t m = c->fft_size;
    for (uint32_t i = 0; i < m; i++)
        c->music[i] = noise ? 0.0 : (double)n;
    for (uint32_t col = 0; col < k; col++) {
        memset(c->fft_in, 0, sizeof(fftw_complex) * m);
        /* fftw_complex is double complex: complex.h comes before fftw3.h. */
        memcpy(c->fft_in, vec + (size_t)col * n, n * sizeof *vec);
        fftw_execute(c->plan);
        /* out[j] = sum_i v_i exp(-2 pi i j i / m) = a(u)^H v at u = 2j/m. */
        for (uint32_t j = 0; j < m; j++) {
            double p = creal(c->fft_out[j]) * creal(c->fft_out[j]) + cimag(c->fft_out[j]) * cimag(c->fft_out[j]);
            c->music[j] += noise ? p : -p;
        }
    }
    /* The d deepest local minima (circular grid). */
    enum { PEAKS_MAX = SCENE_EMITTERS_MAX };
    double depth[PEAKS_MAX], est[PEAKS_MAX];
    size_t found = 0;
    for (uint32_t j = 0; j < m; j++) {
        double here = c->music[j], left = c->music[(j + m - 1) % m], right = c->music[(j + 1) % m];
        if (!(here < left && here <= right))
            continue;
        double u = 2.0 * j / m;
        if (u >= 1.0)
            u -= 2.0;
        double angle = asin(u) * DEG_PER_RAD;
        size_t slot;
        if (found < c->d)
            slot = found++;
        else if (here < depth[found - 1])
            slot = found - 1; /* replaces the shallowest kept */
        else
            continue;
        depth[slot] = here;
        est[slot] = angle;
        /* Keep the list sorted by depth, deepest first: one insertion step. */
        for (size_t s = slot; s > 0 && depth[s] < depth[s - 1]; s--) {
            double t = depth[s];
            depth[s] = depth[s - 1];
            depth[s - 1] = t;
            t = est[s];
            est[s] = est[s - 1];
            est[s - 1] = t;
        }
    }
    double worst = 0.0;
    for (size_t e = 0; e < c->d; e++) {
        double best = 180.0;
        for (size_t s = 0; s < found; s++) {
            double err = fabs(est[s] - c->scene->emitter[e].angle_deg);
            if (err < best)
                best = err;
        }
        if (best > worst)
            worst = best;
    }
    return worst;
}

/* Copies k vectors of n elements from the wire into c->v as double complex. */
static void load_vectors(sink_checker *c, const uint8_t *src, uint8_t element, uint32_t n, uint32_t k)
{
    size_t len = (size_t)n * k;
    if (element == EIG_COMPLEX_DOUBLE) {
        memcpy(c->v, src, len * sizeof(double complex));
    } else {
        for (size_t i = 0; i < len; i++) {
            float x[2];
            memcpy(x, src + 8 * i, sizeof x);
            c->v[i] = CMPLX(x[0], x[1]);
        }
    }
}

static double value_at(const uint8_t *src, uint8_t element, uint32_t i)
{
    if (element == EIG_COMPLEX_DOUBLE) {
        double x;
        memcpy(&x, src + 8 * (size_t)i, sizeof x);
        return x;
    }
    float x;
    memcpy(&x, src + 4 * (size_t)i, sizeof x);
    return x;
}

scene_error sink_check_frame(sink_checker *c, const protocol_header *h, const protocol_matrix_meta *m,
                             const uint8_t *data, sink_frame_result *r)
{
    memset(r, 0, sizeof *r);
    const uint32_t n = h->n;
    scene_error e = prepare(c, n);
    if (e != SCENE_OK)
        return e;
    const size_t element_bytes = eig_element_bytes(h->element);
    const size_t d = c->d;
    r->matrices = h->count;
    for (uint32_t b = 0; b < h->count; b++) {
        const uint8_t *values = data;
        const uint8_t *vectors = data + (size_t)n * element_bytes / 2;
        uint32_t k = m[b].k_sent;
        data = vectors + (size_t)n * k * element_bytes;
        if (m[b].status != 0) {
            r->bad_status++;
            continue;
        }
        int ascending = 1;
        double prev = value_at(values, h->element, 0);
        ascending &= isfinite(prev) != 0;
        for (uint32_t i = 1; i < n; i++) {
            double x = value_at(values, h->element, i);
            ascending &= isfinite(x) && x >= prev;
            prev = x;
        }
        r->not_ascending += !ascending;
        r->dim_ok += m[b].signal_dim == d;
        if (d == 0 || d > n || k == 0 || h->mode == PROTOCOL_MODE_VALUES)
            continue;

        load_vectors(c, vectors, h->element, n, k);
        const double complex *sig = c->v;
        uint32_t ks = k;
        int noise = h->mode == PROTOCOL_MODE_NOISE;
        if (h->mode == PROTOCOL_MODE_FULL) {
            sig = c->v + (size_t)n * (n - d); /* the top-d columns */
            ks = (uint32_t)d;
        }
        double angle;
        if (noise)
            angle = k < n - d ? 90.0 : noise_angle(c, n, sig, ks);
        else
            angle = ks > d ? 90.0 : signal_angle(c, n, sig, ks);
        r->subspace_checked++;
        if (!(angle <= r->subspace_max_deg))
            r->subspace_max_deg = angle; /* NaN propagates */

        if (c->fft_size > 0 && (c->doa_cells == 0 || b < c->doa_cells)) {
            double err = doa_error(c, n, sig, ks, noise);
            r->doa_checked++;
            if (!(err <= r->doa_max_error_deg))
                r->doa_max_error_deg = err;
        }
    }
    return SCENE_OK;
}
