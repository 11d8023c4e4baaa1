/*
 * sim_frame.c - snapshots, sample covariances (zherk) and wire layout of a frame.
 */
#include "sim_frame.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "workload_rng.h"

struct sim_frame_generator {
    sim_frame_params p;
    uint32_t n;
    size_t d;
    double complex *a;  /* n x d steering matrix scaled by the emitter amplitudes */
    double complex *s;  /* d x K emitter snapshots */
    double complex *x;  /* n x K array snapshots */
    double complex *r;  /* n x n sample covariance, lower triangle */
};

/* ---- generator ------------------------------------------------------------------- */

scene_error sim_frame_generator_create(sim_frame_generator **out, const sim_frame_params *p)
{
    *out = NULL;
    if (p->scene == NULL || p->cells == 0 || p->snapshots == 0 ||
        protocol_matrix_bytes(p->scene->n, p->element, p->storage) == 0)
        return SCENE_EINVAL;
    sim_frame_generator *g = calloc(1, sizeof *g);
    if (g == NULL)
        return SCENE_ENOMEM;
    g->p = *p;
    g->n = p->scene->n;
    g->d = scene_dimension(p->scene);
    size_t n = g->n, k = p->snapshots, d = g->d;
    g->a = malloc((n * d + 1) * sizeof *g->a);
    g->s = malloc((d * k + 1) * sizeof *g->s);
    g->x = malloc(n * k * sizeof *g->x);
    g->r = malloc(n * n * sizeof *g->r);
    if (g->a == NULL || g->s == NULL || g->x == NULL || g->r == NULL) {
        sim_frame_generator_destroy(&g);
        return SCENE_ENOMEM;
    }
    scene_steering_matrix(p->scene, g->n, g->a);
    for (size_t e = 0; e < d; e++) {
        double amplitude = sqrt(pow(10.0, p->scene->emitter[e].power_db / 10.0));
        for (size_t i = 0; i < n; i++)
            g->a[i + e * n] *= amplitude;
    }
    *out = g;
    return SCENE_OK;
}

void sim_frame_generator_destroy(sim_frame_generator **g)
{
    if (g == NULL || *g == NULL)
        return;
    free((*g)->a);
    free((*g)->s);
    free((*g)->x);
    free((*g)->r);
    free(*g);
    *g = NULL;
}

/* Stores element v at index `at` of a wire matrix of the given element type. */
static void store(uint8_t *m, uint8_t element, size_t at, double complex v)
{
    if (element == EIG_COMPLEX_DOUBLE) {
        double complex *z = (double complex *)(void *)m;
        z[at] = v;
    } else {
        float complex *c = (float complex *)(void *)m;
        c[at] = CMPLXF((float)creal(v), (float)cimag(v));
    }
}

/* Writes the Hermitian matrix whose lower triangle is in r (n x n) in `storage`. */
static void store_matrix(const double complex *r, uint32_t n, uint8_t element, uint8_t storage, uint8_t *m)
{
    size_t at = 0;
    for (size_t j = 0; j < n; j++) {
        size_t lo = storage == PROTOCOL_STORAGE_PACKED_LOWER ? j : 0;
        size_t hi = storage == PROTOCOL_STORAGE_PACKED_UPPER ? j + 1 : n;
        for (size_t i = lo; i < hi; i++) {
            /* The diagonal of a zherk result is real by construction. */
            double complex v = i >= j ? r[i + j * n] : conj(r[j + i * n]);
            store(m, element, at++, v);
        }
    }
}

scene_error sim_frame_generate(sim_frame_generator *g, uint64_t index, void *out)
{
    const uint32_t n = g->n;
    const size_t k = g->p.snapshots, d = g->d;
    const size_t matrix = protocol_matrix_bytes(n, g->p.element, g->p.storage);
    const double complex one = 1.0;
    for (uint32_t cell = 0; cell < g->p.cells; cell++) {
        workload_rng r = workload_rng_for(g->p.seed, index, cell);
        for (size_t i = 0; i < n * k; i++)
            g->x[i] = workload_rng_cgauss(&r);
        if (d > 0) {
            for (size_t i = 0; i < d * k; i++)
                g->s[i] = workload_rng_cgauss(&r);
            /* x += (A diag(sqrt p)) s */
            cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)k, (int)d, &one, g->a, (int)n,
                        g->s, (int)d, &one, g->x, (int)n);
        }
        cblas_zherk(CblasColMajor, CblasLower, CblasNoTrans, (int)n, (int)k, 1.0 / (double)k, g->x, (int)n, 0.0,
                    g->r, (int)n);
        store_matrix(g->r, n, g->p.element, g->p.storage, (uint8_t *)out + cell * matrix);
    }
    return SCENE_OK;
}
