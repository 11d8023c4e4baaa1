/*
 * scene.h - the synthetic radar scene shared by eigstream-sim and eigstream-sink.
 *
 * A uniform linear array of n channels at half-wavelength spacing receives
 * narrowband plane waves from point emitters (sources, then jammers) in white
 * noise of unit power per channel. The steering vector of an emitter at angle
 * theta (degrees from broadside, -90 < theta < 90) is
 *
 *     a_i(theta) = exp(j * pi * i * sin(theta)),  i = 0 .. n-1,
 *
 * (unnormalized: |a_i| = 1). An emitter of power P dB contributes
 * 10^(P/10) * a a^H to the covariance, so the true covariance is
 * A diag(p) A^H + I and its d = sources + jammers largest eigenvalues belong
 * to span(A).
 *
 * Library eigstream_scene; deterministic, never prints, errors are values.
 */
#ifndef EIGSTREAM_SCENE_H
#define EIGSTREAM_SCENE_H

#include <complex.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum scene_error {
    SCENE_OK = 0,
    SCENE_EINVAL, /* bad argument or unparsable emitter list */
    SCENE_ENOMEM, /* allocation failed */
    SCENE_ELAPACK /* LAPACK reported an error (cannot happen for valid input) */
} scene_error;

typedef struct scene_emitter {
    double angle_deg; /* from broadside, (-90, 90) */
    double power_db;  /* per-channel power relative to the unit noise */
} scene_emitter;

/* Default emitter list of eigstream-sim and eigstream-sink. */
#define SCENE_DEFAULT_SOURCES "-20:20,5:15,30:10"

/* Most emitters a scene may hold. */
#define SCENE_EMITTERS_MAX 64

typedef struct scene {
    uint32_t n;                 /* channels */
    size_t sources;             /* emitters [0, sources) are sources */
    size_t jammers;             /* emitters [sources, sources + jammers) are jammers */
    scene_emitter *emitter;     /* sources + jammers entries */
} scene;

/* Parses "angle:power_db,angle:power_db,..." (spaces allowed around numbers;
 * "" or "none" is the empty list) into out[0..*count), at most `max` entries.
 * SCENE_EINVAL on syntax errors, angles outside (-90, 90), non-finite powers
 * or more than max entries. */
scene_error scene_parse_emitters(const char *spec, scene_emitter *out, size_t max, size_t *count);

/* Parses a list of `fields`-tuples "a:b[:c...],a:b,..." of finite numbers
 * (spaces allowed around numbers; "" or "none" is the empty list) into
 * values[0 .. *count * fields), at most max tuples. SCENE_EINVAL on syntax
 * errors or more than max tuples. */
scene_error scene_parse_tuples(const char *spec, size_t fields, double *values, size_t max, size_t *count);

/* Creates a scene of n channels with the given source and jammer lists
 * (either may be NULL = none). *out is NULL on failure. */
scene_error scene_create(scene **out, uint32_t n, const char *sources, const char *jammers);
void scene_destroy(scene **s);

/* Signal dimension d: sources + jammers. */
size_t scene_dimension(const scene *s);

/* Writes the steering vector of angle_deg for n channels into a[0..n). */
void scene_steering_vector(uint32_t n, double angle_deg, double complex *a);

/* Writes the steering matrix A (n x d, column-major, column e = emitter e)
 * of the scene for an array of n channels (n may differ from s->n). */
void scene_steering_matrix(const scene *s, uint32_t n, double complex *a);

/* Orthonormal basis Q (n x d, column-major) of span(A) for n channels,
 * through a Householder QR (LAPACK zgeqrf/zungqr). d = 0 writes nothing. */
scene_error scene_signal_basis(const scene *s, uint32_t n, double complex *q);

const char *scene_strerror(scene_error e);

#ifdef __cplusplus
}
#endif

#endif
