/*
 * iq_scene.h - raw IQ data cubes of a synthetic radar scene (eigstream-sim
 * --iq), and what eigstream-sink --iq checks the formed eigenspaces against.
 *
 * The cube holds channels C x pulses P x range gates G complex samples
 *
 *   x[c][p][g] = sum_targets  a_c(theta_t) exp(+2 pi i f_t p) s_t[g]
 *              + sum_jammers  a_c(theta_j) j_j[p][g]
 *              + sum_patches  a_c(theta_k) exp(+2 pi i f_k p) z_k[g]     (clutter)
 *              + w[c][p][g]
 *
 * with the array manifold of scene.h (a uniform linear array at half a
 * wavelength: a_c(theta) = exp(i pi c sin theta), theta from broadside) and
 * Doppler f in cycles per pulse (-0.5 <= f < 0.5). Every amplitude is an
 * independent circular complex Gaussian: a target's s_t[g] of its power in
 * every gate (a source present in the training data), constant over the
 * pulses of one gate; a barrage jammer's j_j[p][g] white over pulses and
 * gates (so spread over every Doppler bin) but a point in angle; the thermal
 * noise w of unit power per sample. Clutter (optional) is a ridge of
 * `clutter_patches` patches uniform in sin theta over the whole visible
 * region, patch k at Doppler f_k = clutter_slope * sin(theta_k) / 2 (a
 * side-looking array: slope 1 when the platform moves half an element
 * spacing per pulse), with total power clutter_db.
 *
 * Forming with the Doppler FFT X[b] = sum_p w[p] x[p] exp(-2 pi i p b / F)
 * (form_iq.h) puts a target of Doppler f in bin round(f F) mod F
 * (iq_scene_doppler_bin).
 *
 * Deterministic: cube `index` of a seed is the same, bit for bit, on the
 * same BLAS. Library eigstream_scene; never prints, errors are values.
 */
#ifndef EIGSTREAM_IQ_SCENE_H
#define EIGSTREAM_IQ_SCENE_H

#include <complex.h>
#include <stddef.h>
#include <stdint.h>

#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct iq_target {
    double angle_deg; /* from broadside, (-90, 90) */
    double doppler;   /* cycles per pulse, [-0.5, 0.5) */
    double power_db;  /* per channel and sample, relative to the unit noise */
} iq_target;

/* Default targets of eigstream-sim --iq and eigstream-sink --iq. */
#define IQ_SCENE_DEFAULT_TARGETS "-20:0.25:20,10:-0.125:15"

typedef struct iq_scene {
    uint32_t channels, pulses, gates;
    size_t targets, jammers;
    iq_target target[SCENE_EMITTERS_MAX];
    scene_emitter jammer[SCENE_EMITTERS_MAX]; /* angle and power: barrage over every Doppler bin */
    double clutter_db;        /* total clutter power per channel and sample, dB; only when clutter_patches > 0 */
    double clutter_slope;     /* Doppler of the ridge: f = slope * sin(theta) / 2 */
    uint32_t clutter_patches; /* 0 = no clutter */
} iq_scene;

/* Parses "angle:doppler:power_db,..." (spaces allowed around numbers; "" or
 * "none" is the empty list) into out[0..*count), at most max entries.
 * SCENE_EINVAL on syntax errors, angles outside (-90, 90), Doppler outside
 * [-0.5, 0.5), non-finite powers or too many entries. */
scene_error iq_scene_parse_targets(const char *spec, iq_target *out, size_t max, size_t *count);

/* Fills *s from the option strings (targets: iq_scene_parse_targets;
 * jammers: scene_parse_emitters, either may be NULL = none). SCENE_EINVAL
 * for a bad list or a zero dimension. */
scene_error iq_scene_init(iq_scene *s, uint32_t channels, uint32_t pulses, uint32_t gates, const char *targets,
                          const char *jammers, double clutter_db, double clutter_slope, uint32_t clutter_patches);

/* Expected power of one sample of one channel: noise 1 plus every emitter. */
double iq_scene_sample_power(const iq_scene *s);

/* The Doppler bin of an F-point FFT that Doppler f (cycles per pulse) falls
 * in: round(f F) mod F, in 0..F-1. */
uint32_t iq_scene_doppler_bin(double doppler, uint32_t fft_size);

/* Writes cube `index` of the seed into x: C*P*G values in (c, p, g) order,
 * gate fastest (element (c*P + p)*G + g). */
scene_error iq_scene_generate(const iq_scene *s, uint64_t seed, uint64_t index, double complex *x);

/* The scale that maps 4 standard deviations of a sample (sqrt of
 * iq_scene_sample_power) to the int16 full scale 32767: 12 dB of headroom,
 * as a receiver's gain is set. */
float iq_scene_ci16_scale(const iq_scene *s);

/* Writes the values x ((c, p, g) order, as iq_scene_generate) in the wire's
 * format (protocol_iq_format: cf32_le as float32 x / scale, ci16_le rounded
 * to nearest and saturated at +-32767) and layout (protocol_iq_layout) into
 * out (protocol_iq_cube_bytes). Returns the samples saturated (ci16 only). */
uint64_t iq_scene_quantise(const iq_scene *s, const double complex *x, uint8_t format, uint8_t layout, float scale,
                           void *out);

#ifdef __cplusplus
}
#endif

#endif
