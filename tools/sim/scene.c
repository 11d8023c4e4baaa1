/*
 * scene.c - emitter lists, array manifold and signal subspace of the synthetic scene.
 */
#include "scene.h"

#include <ctype.h>
#include <errno.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

const char *scene_strerror(scene_error e)
{
    switch (e) {
    case SCENE_OK: return "ok";
    case SCENE_EINVAL: return "invalid scene (emitter list is angle:power_db,...; -90 < angle < 90)";
    case SCENE_ENOMEM: return "out of memory";
    case SCENE_ELAPACK: return "LAPACK error";
    default: return "unknown scene error";
    }
}

static const char *skip_space(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Parses one number at *p, advancing *p; 0 on success. */
static int parse_number(const char **p, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(*p, &end);
    if (end == *p || errno == ERANGE || !isfinite(*v))
        return -1;
    *p = skip_space(end);
    return 0;
}

scene_error scene_parse_tuples(const char *spec, size_t fields, double *values, size_t max, size_t *count)
{
    *count = 0;
    if (spec == NULL)
        return SCENE_OK;
    const char *p = skip_space(spec);
    if (*p == '\0' || strcmp(p, "none") == 0)
        return SCENE_OK;
    for (;;) {
        if (*count == max)
            return SCENE_EINVAL;
        double *v = values + *count * fields;
        for (size_t f = 0; f < fields; f++) {
            p = skip_space(p);
            if (parse_number(&p, &v[f]) != 0 || (f + 1 < fields && *p != ':'))
                return SCENE_EINVAL;
            if (f + 1 < fields)
                p++;
        }
        (*count)++;
        if (*p == '\0')
            return SCENE_OK;
        if (*p != ',')
            return SCENE_EINVAL;
        p++;
    }
}

scene_error scene_parse_emitters(const char *spec, scene_emitter *out, size_t max, size_t *count)
{
    double v[2 * SCENE_EMITTERS_MAX]; /* no list is longer (scene.h) */
    scene_error e = scene_parse_tuples(spec, 2, v, max < SCENE_EMITTERS_MAX ? max : SCENE_EMITTERS_MAX, count);
    for (size_t i = 0; e == SCENE_OK && i < *count; i++) {
        scene_emitter em = {v[2 * i], v[2 * i + 1]};
        if (!(em.angle_deg > -90.0 && em.angle_deg < 90.0) || em.power_db > 200.0 || em.power_db < -200.0)
            e = SCENE_EINVAL;
        out[i] = em;
    }
    if (e != SCENE_OK)
        *count = 0;
    return e;
}

scene_error scene_create(scene **out, uint32_t n, const char *sources, const char *jammers)
{
    *out = NULL;
    if (n == 0)
        return SCENE_EINVAL;
    scene_emitter list[2 * SCENE_EMITTERS_MAX];
    size_t ns, nj;
    scene_error e = scene_parse_emitters(sources, list, SCENE_EMITTERS_MAX, &ns);
    if (e == SCENE_OK)
        e = scene_parse_emitters(jammers, list + ns, SCENE_EMITTERS_MAX, &nj);
    if (e != SCENE_OK)
        return e;
    if (ns + nj > SCENE_EMITTERS_MAX || ns + nj > n)
        return SCENE_EINVAL;
    scene *s = calloc(1, sizeof *s);
    if (s == NULL)
        return SCENE_ENOMEM;
    s->emitter = malloc((ns + nj ? ns + nj : 1) * sizeof *s->emitter);
    if (s->emitter == NULL) {
        free(s);
        return SCENE_ENOMEM;
    }
    memcpy(s->emitter, list, (ns + nj) * sizeof *list);
    s->n = n;
    s->sources = ns;
    s->jammers = nj;
    *out = s;
    return SCENE_OK;
}

void scene_destroy(scene **s)
{
    if (s == NULL || *s == NULL)
        return;
    free((*s)->emitter);
    free(*s);
    *s = NULL;
}

size_t scene_dimension(const scene *s)
{
    return s->sources + s->jammers;
}

void scene_steering_vector(uint32_t n, double angle_deg, double complex *a)
{
    double u = sin(angle_deg * PI / 180.0);
    for (uint32_t i = 0; i < n; i++) {
        /* Phase reduced mod 2 pi in exact-ish arithmetic: pi * (i*u mod 2). */
        double half_turns = fmod((double)i * u, 2.0);
        a[i] = CMPLX(cos(PI * half_turns), sin(PI * half_turns));
    }
}

void scene_steering_matrix(const scene *s, uint32_t n, double complex *a)
{
    for (size_t e = 0; e < scene_dimension(s); e++)
        scene_steering_vector(n, s->emitter[e].angle_deg, a + e * n);
}

scene_error scene_signal_basis(const scene *s, uint32_t n, double complex *q)
{
    size_t d = scene_dimension(s);
    if (d == 0)
        return SCENE_OK;
    if (d > n)
        return SCENE_EINVAL;
    double complex tau[SCENE_EMITTERS_MAX];
    scene_steering_matrix(s, n, q);
    lapack_int info = LAPACKE_zgeqrf(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)d, q, (lapack_int)n, tau);
    if (info == 0)
        info = LAPACKE_zungqr(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)d, (lapack_int)d, q, (lapack_int)n, tau);
    if (info == LAPACK_WORK_MEMORY_ERROR)
        return SCENE_ENOMEM;
    return info == 0 ? SCENE_OK : SCENE_ELAPACK;
}
