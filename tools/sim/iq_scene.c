/*
 * iq_scene.c - raw IQ cubes of the synthetic scene: targets, barrage
 * jammers, a clutter ridge and thermal noise (iq_scene.h), and their wire
 * formats and layouts.
 */
#include "iq_scene.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "workload_rng.h"

static const double PI = 3.14159265358979323846;

scene_error iq_scene_parse_targets(const char *spec, iq_target *out, size_t max, size_t *count)
{
    double v[3 * SCENE_EMITTERS_MAX]; /* no list is longer (scene.h) */
    scene_error e = scene_parse_tuples(spec, 3, v, max < SCENE_EMITTERS_MAX ? max : SCENE_EMITTERS_MAX, count);
    for (size_t i = 0; e == SCENE_OK && i < *count; i++) {
        iq_target t = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
        if (!(t.angle_deg > -90.0 && t.angle_deg < 90.0) || !(t.doppler >= -0.5 && t.doppler < 0.5) ||
            !(t.power_db >= -200.0 && t.power_db <= 200.0))
            e = SCENE_EINVAL;
        out[i] = t;
    }
    if (e != SCENE_OK)
        *count = 0;
    return e;
}

scene_error iq_scene_init(iq_scene *s, uint32_t channels, uint32_t pulses, uint32_t gates, const char *targets,
                          const char *jammers, double clutter_db, double clutter_slope, uint32_t clutter_patches)
{
    memset(s, 0, sizeof *s);
    if (channels == 0 || pulses == 0 || gates == 0 || !isfinite(clutter_db) || !isfinite(clutter_slope))
        return SCENE_EINVAL;
    s->channels = channels;
    s->pulses = pulses;
    s->gates = gates;
    s->clutter_db = clutter_db;
    s->clutter_slope = clutter_slope;
    s->clutter_patches = clutter_patches;
    scene_error e = iq_scene_parse_targets(targets, s->target, SCENE_EMITTERS_MAX, &s->targets);
    if (e == SCENE_OK)
        e = scene_parse_emitters(jammers, s->jammer, SCENE_EMITTERS_MAX, &s->jammers);
    return e;
}

double iq_scene_sample_power(const iq_scene *s)
{
    double p = 1.0;
    for (size_t t = 0; t < s->targets; t++)
        p += pow(10.0, s->target[t].power_db / 10.0);
    for (size_t j = 0; j < s->jammers; j++)
        p += pow(10.0, s->jammer[j].power_db / 10.0);
    if (s->clutter_patches > 0)
        p += pow(10.0, s->clutter_db / 10.0);
    return p;
}

uint32_t iq_scene_doppler_bin(double doppler, uint32_t fft_size)
{
    double b = floor(doppler * fft_size + 0.5);
    double m = fmod(b, (double)fft_size);
    return (uint32_t)(m < 0 ? m + fft_size : m);
}

float iq_scene_ci16_scale(const iq_scene *s)
{
    return (float)(4.0 * sqrt(iq_scene_sample_power(s)) / 32767.0);
}

/* e^{i pi x} with x reduced mod 2 first, so large c or p keep their phase accurate. */
static double complex half_turns(double x)
{
    double r = fmod(x, 2.0);
    return CMPLX(cos(PI * r), sin(PI * r));
}

/* The space-time columns of the components that are fixed over the pulses
 * of a gate (targets, then clutter patches), column k at m + k*C*P with row
 * c*P + p: a_c(theta_k) exp(2 pi i f_k p) scaled by the amplitude's standard
 * deviation; and the angles of the patches. */
static void fill_space_time(const iq_scene *s, double complex *m, size_t columns)
{
    const uint32_t C = s->channels, P = s->pulses;
    for (size_t k = 0; k < columns; k++) {
        double u, f, amplitude;
        if (k < s->targets) {
            u = sin(s->target[k].angle_deg * PI / 180.0);
            f = s->target[k].doppler;
            amplitude = sqrt(pow(10.0, s->target[k].power_db / 10.0));
        } else {
            size_t patch = k - s->targets;
            u = -1.0 + (2.0 * (double)patch + 1.0) / (double)s->clutter_patches; /* uniform in sin(theta) */
            f = s->clutter_slope * u / 2.0;
            amplitude = sqrt(pow(10.0, s->clutter_db / 10.0) / s->clutter_patches);
        }
        for (uint32_t c = 0; c < C; c++)
            for (uint32_t p = 0; p < P; p++)
                m[k * (size_t)C * P + (size_t)c * P + p] =
                    amplitude * half_turns((double)c * u) * half_turns(2.0 * f * (double)p);
    }
}

/* x[(c*P + p)*G + g] += a_c(theta) * sqrt(power) * j[p][g], j white. */
static void add_jammer(const iq_scene *s, const scene_emitter *jm, workload_rng *r, double complex *j,
                       double complex *x)
{
    const uint32_t C = s->channels, P = s->pulses, G = s->gates;
    double amplitude = sqrt(pow(10.0, jm->power_db / 10.0)), u = sin(jm->angle_deg * PI / 180.0);
    for (size_t i = 0; i < (size_t)P * G; i++)
        j[i] = amplitude * workload_rng_cgauss(r);
    for (uint32_t c = 0; c < C; c++) {
        double complex a = half_turns((double)c * u);
        double complex *xc = x + (size_t)c * P * G;
        for (size_t i = 0; i < (size_t)P * G; i++)
            xc[i] += a * j[i];
    }
}

scene_error iq_scene_generate(const iq_scene *s, uint64_t seed, uint64_t index, double complex *x)
{
    const size_t C = s->channels, P = s->pulses, G = s->gates, columns = s->targets + s->clutter_patches;
    workload_rng r = workload_rng_for(seed, index, 0x49510000u); /* "IQ": not a covariance cell's stream */
    for (size_t i = 0; i < C * P * G; i++)
        x[i] = workload_rng_cgauss(&r);
    if (columns > 0) {
        /* x(G x CP, column-major) += Z(G x K) M^T: every (c, p) row of the
         * cube gets sum_k m[c,p][k] z_k[g]: one GEMM for targets and clutter. */
        double complex *m = malloc(columns * C * P * sizeof *m), *z = malloc(columns * G * sizeof *z);
        if (m == NULL || z == NULL) {
            free(m);
            free(z);
            return SCENE_ENOMEM;
        }
        fill_space_time(s, m, columns);
        for (size_t i = 0; i < columns * G; i++)
            z[i] = workload_rng_cgauss(&r);
        const double complex one = 1.0;
        cblas_zgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int)G, (int)(C * P), (int)columns, &one, z, (int)G, m,
                    (int)(C * P), &one, x, (int)G);
        free(m);
        free(z);
    }
    if (s->jammers > 0) {
        double complex *j = malloc(P * G * sizeof *j);
        if (j == NULL)
            return SCENE_ENOMEM;
        for (size_t k = 0; k < s->jammers; k++)
            add_jammer(s, &s->jammer[k], &r, j, x);
        free(j);
    }
    return SCENE_OK;
}

/* One int16 of value v / scale, rounded to nearest and saturated at +-32767
 * (*clipped counts saturations). */
static int16_t to_i16(double v, uint64_t *clipped)
{
    double q = nearbyint(v);
    if (q > 32767.0 || q < -32767.0) {
        (*clipped)++;
        return q > 0 ? 32767 : -32767;
    }
    return (int16_t)q;
}

uint64_t iq_scene_quantise(const iq_scene *s, const double complex *x, uint8_t format, uint8_t layout, float scale,
                           void *out)
{
    const uint32_t C = s->channels, P = s->pulses, G = s->gates;
    uint8_t *o = out;
    uint64_t clipped = 0;
    for (uint32_t c = 0; c < C; c++)
        for (uint32_t p = 0; p < P; p++)
            for (uint32_t g = 0; g < G; g++) {
                double complex v = x[((size_t)c * P + p) * G + g] / (double)scale;
                size_t i = protocol_iq_index(layout, C, P, G, c, p, g);
                if (format == PROTOCOL_IQ_CI16_LE) {
                    int16_t q[2] = {to_i16(creal(v), &clipped), to_i16(cimag(v), &clipped)};
                    /* little-endian on the wire, as on every host eigstream targets */
                    memcpy(o + i * 4, q, 4);
                } else {
                    float q[2] = {(float)creal(v), (float)cimag(v)};
                    memcpy(o + i * 8, q, 8);
                }
            }
    return clipped;
}
