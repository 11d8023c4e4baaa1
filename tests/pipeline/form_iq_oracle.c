/*
 * form_iq_oracle.c - the direct IQ forming oracle of the forming tests
 * (form_iq_oracle.h): plain sums in double, no FFT, no BLAS.
 */
#include "form_iq_oracle.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"
#include "protocol.h"
#include "test_check.h"

enum { CI16 = PROTOCOL_IQ_CI16_LE, CPG = PROTOCOL_IQ_CPG, PCG = PROTOCOL_IQ_PCG };

const char *const form_iq_oracle_window_names[] = {"none", "hann", "hamming", "chebyshev", "taylor"};
const char *const form_iq_oracle_layout_names[] = {"cpg", "pcg", "pgc"};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: uniform in [-1, 1). */
static double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

/* Element index of sample (c, p, g) in the wire layout. */
static size_t wire_index(int layout, size_t c, size_t p, size_t g, size_t nc, size_t np, size_t ng)
{
    if (layout == CPG)
        return (c * np + p) * ng + g;
    if (layout == PCG)
        return (p * nc + c) * ng + g;
    return (p * ng + g) * nc + c;
}

/* The scaled sample (c, p, g) of a raw cube. */
static double complex sample(const form_iq_params *q, const void *cube, float scale, size_t c, size_t p, size_t g)
{
    size_t i = wire_index(q->layout, c, p, g, q->channels, q->pulses, q->gates);
    if (q->format == CI16) {
        const int16_t *s = cube;
        return (double)scale * ((double)s[2 * i] + I * (double)s[2 * i + 1]);
    }
    const float *s = cube;
    return (double)scale * ((double)s[2 * i] + I * (double)s[2 * i + 1]);
}

/* The test's own window for none, hann and hamming (numpy.hanning/hamming
 * definitions); chebyshev and taylor come from form_iq_window_coefficients,
 * whose spectra test_form_iq_numpy.py checks analytically. */
static void oracle_window(const form_iq_params *q, double *w)
{
    const double pi = 3.14159265358979323846;
    double span = q->pulses > 1 ? q->pulses - 1.0 : 1.0;
    for (uint32_t p = 0; p < q->pulses; p++) {
        double c = cos(2 * pi * p / span);
        switch (q->window) {
        case FORM_WINDOW_HANN: w[p] = q->pulses == 1 ? 1.0 : 0.5 - 0.5 * c; break;
        case FORM_WINDOW_HAMMING: w[p] = q->pulses == 1 ? 1.0 : 0.54 - 0.46 * c; break;
        default: w[p] = 1.0; break;
        }
    }
    if (q->window == FORM_WINDOW_CHEBYSHEV || q->window == FORM_WINDOW_TAYLOR)
        CHECK(form_iq_window_coefficients(q->window, q->sidelobe_db, q->pulses, w) == FORM_IQ_OK, "window");
}

/* Is gate t (relative to its segment of length l) a training gate? The
 * guard cells are the centre l/2 and guard either side, within the segment. */
static int training(uint32_t t, uint32_t l, uint32_t guard)
{
    if (guard == 0)
        return 1;
    long centre = l / 2;
    return labs((long)t - centre) > (long)guard;
}

double form_iq_oracle(const form_iq_params *q, const void *cube, float scale, double complex *r)
{
    const double pi = 3.14159265358979323846;
    size_t nc = q->channels, ng = q->gates, l = ng / q->segments;
    double *w = malloc(q->pulses * sizeof *w);
    double complex *x = malloc(nc * ng * sizeof *x); /* one bin: X[c][g] */
    oracle_window(q, w);
    double bound = 0;
    for (size_t c = 0; c < nc; c++)
        for (size_t g = 0; g < ng; g++) {
            double l1 = 0;
            for (size_t p = 0; p < q->pulses; p++)
                l1 += fabs(w[p]) * cabs(sample(q, cube, scale, c, p, g));
            bound = fmax(bound, l1);
        }
    for (uint32_t i = 0; i < q->bin_count; i++) {
        uint64_t b = ((uint64_t)q->bin_first + i) % q->fft_size;
        for (size_t c = 0; c < nc; c++)
            for (size_t g = 0; g < ng; g++) {
                double complex sum = 0;
                for (size_t p = 0; p < q->pulses; p++) {
                    double angle = -2 * pi * (double)((p * b) % q->fft_size) / q->fft_size;
                    sum += w[p] * sample(q, cube, scale, c, p, g) * (cos(angle) + I * sin(angle));
                }
                x[c * ng + g] = sum;
            }
        for (uint32_t s = 0; s < q->segments; s++) {
            double complex *m = r + ((size_t)i * q->segments + s) * nc * nc;
            size_t k_count = 0;
            for (size_t t = 0; t < l; t++)
                k_count += training((uint32_t)t, (uint32_t)l, q->guard_gates);
            for (size_t k = 0; k < nc; k++)
                for (size_t j = 0; j < nc; j++) {
                    double complex sum = 0;
                    for (size_t t = 0; t < l; t++)
                        if (training((uint32_t)t, (uint32_t)l, q->guard_gates))
                            sum += x[j * ng + s * l + t] * conj(x[k * ng + s * l + t]);
                    m[j + k * nc] = sum / (double)k_count;
                }
        }
    }
    free(w);
    free(x);
    return bound * bound;
}

void *form_iq_oracle_random_cube(const form_iq_params *q)
{
    size_t count = (size_t)q->channels * q->pulses * q->gates;
    if (q->format == CI16) {
        int16_t *s = malloc(count * 2 * sizeof *s);
        for (size_t i = 0; i < 2 * count; i++)
            s[i] = (int16_t)lrint(3000 * uniform());
        return s;
    }
    float *s = malloc(count * 2 * sizeof *s);
    for (size_t i = 0; i < 2 * count; i++)
        s[i] = (float)uniform();
    return s;
}


void form_iq_oracle_fb_loading(double complex *r, size_t n, double factor)
{
    double complex *t = malloc(n * n * sizeof *t);
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < n; j++)
            t[j + k * n] = (r[j + k * n] + conj(r[(n - 1 - j) + (n - 1 - k) * n])) / 2;
    double trace = 0;
    for (size_t j = 0; j < n; j++)
        trace += creal(t[j + j * n]);
    for (size_t j = 0; j < n; j++)
        t[j + j * n] += factor * trace / (double)n;
    memcpy(r, t, n * n * sizeof *t);
    free(t);
}


void form_iq_oracle_case(int index, form_iq_params *q, char *label, size_t label_bytes)
{
    int dbl = index % 2, layout = index / 2 % 3, ci16 = index / 6 % 2, window = index / 12;
    *q = (form_iq_params){.channels = 5, .pulses = 7, .gates = 12};
    q->format = ci16 ? PROTOCOL_IQ_CI16_LE : PROTOCOL_IQ_CF32_LE;
    q->layout = (uint8_t)layout;
    q->precision = dbl ? EIG_COMPLEX_DOUBLE : EIG_COMPLEX_FLOAT;
    q->window = (form_window)window;
    q->sidelobe_db = 25 + 5 * (index % 3);
    q->fft_size = q->pulses + (uint32_t)(index % 3) * 2; /* 7, 9, 11 */
    q->segments = 1 + (uint32_t)(index % 3);            /* 12, 6, 4 gates */
    q->guard_gates = (uint32_t)(index % 2);
    q->bin_count = 3 + (uint32_t)(index % 4);
    q->bin_first = q->fft_size - 1 - (uint32_t)(index % 2); /* wraps past F-1 */
    q->threads = 1 + index % 2;
    snprintf(label, label_bytes, "window %s, %s, %s, %s, F=%u bins %u+%u, %u segments, guard %u",
             form_iq_oracle_window_names[window], ci16 ? "ci16" : "cf32", form_iq_oracle_layout_names[layout],
             dbl ? "c128" : "c64", q->fft_size, q->bin_first, q->bin_count, q->segments, q->guard_gates);
}

double form_iq_oracle_tolerance(const form_iq_params *q, eig_precision precision, double b2)
{
    double u = precision == EIG_COMPLEX_DOUBLE ? 0x1p-53 : 0x1p-24;
    return 4 * u * (2 * log2((double)q->fft_size) + q->pulses + form_iq_snapshots(q) + 5) * b2;
}

void form_iq_oracle_check_path(eig_backend backend, const char *want_path)
{
    form_iq_params q = {.channels = 6, .pulses = 8, .gates = 20, .format = CI16, .layout = PCG,
                        .precision = EIG_COMPLEX_DOUBLE, .window = FORM_WINDOW_CHEBYSHEV, .sidelobe_db = 40,
                        .fft_size = 10, .bin_first = 8, .bin_count = 4, .segments = 2, .guard_gates = 1,
                        .threads = 2};
    uint32_t n = q.channels, count = form_iq_matrices(&q);
    path_params pp = {.n = n, .matrices = count, .precision = EIG_COMPLEX_DOUBLE, .backend = backend,
                      .cpu_threads = 1, .forward_backward = 1, .diagonal_loading = 1, .loading_factor = 0.05,
                      .iq_input = 1, .iq = q};
    char err[256];
    path *p = NULL;
    pipeline_error pe = path_create(&p, &pp, err, sizeof err);
    CHECK(pe == PIPELINE_OK && p != NULL, "path_create: %s", err);
    if (p == NULL)
        return;
    CHECK(strcmp(path_name(p), want_path) == 0, "path %s, want %s", path_name(p), want_path);
    int host = strcmp(want_path, "host") == 0; /* the cuda path forms on the device, into no f->formed */
    frame f = {.slot = -1};
    size_t cube_bytes = protocol_iq_cube_bytes(n, q.pulses, q.gates, q.format);
    void *cube = form_iq_oracle_random_cube(&q);
    f.a = path_buffer_alloc(p, cube_bytes);
    f.a_bytes = cube_bytes;
    f.formed_bytes = host ? (size_t)count * n * n * 16 : 0;
    f.formed = host ? path_buffer_alloc(p, f.formed_bytes) : NULL;
    f.w = path_buffer_alloc(p, (size_t)count * n * sizeof(double));
    f.info = path_buffer_alloc(p, count * sizeof *f.info);
    if (f.a == NULL || f.w == NULL || f.info == NULL || (host && f.formed == NULL)) {
        FAIL("%s path: out of memory", want_path);
        return;
    }
    memcpy(f.a, cube, cube_bytes);
    free(cube);
    protocol_header_init(&f.header, PROTOCOL_KIND_IQ);
    f.header.n = n;
    f.header.count = q.pulses;
    f.header.gates = q.gates;
    f.header.element = q.format;
    f.header.storage = q.layout;
    f.header.payload_bytes = cube_bytes;
    f.header.scale = 0.125f;
    double complex *want = malloc((size_t)count * n * n * sizeof *want);
    double b2 = form_iq_oracle(&q, f.a, f.header.scale, want);
    for (uint32_t m = 0; m < count; m++)
        form_iq_oracle_fb_loading(want + (size_t)m * n * n, n, pp.loading_factor);
    CHECK(path_form(p, &f, err, sizeof err) == PIPELINE_OK, "path_form: %s", err);
    CHECK(path_solve(p, &f, err, sizeof err) == PIPELINE_OK, "path_solve: %s", err);
    path_release(p, &f);
    /* Loading adds at most factor * B^2 per diagonal: the tolerance of
     * form_iq_oracle.h on (1 + factor) B^2. */
    double u = 0x1p-53, tol = form_iq_oracle_tolerance(&q, EIG_COMPLEX_DOUBLE, b2) * 1.05;
    double worst = 0, worst_w = 0;
    double *lapack_w = malloc(n * sizeof *lapack_w);
    for (uint32_t m = 0; m < count; m++) {
        double complex *r = want + (size_t)m * n * n;
        for (uint32_t k = 0; k < n && host; k++)
            for (uint32_t j = k; j < n; j++)
                worst = fmax(worst, cabs(((const double complex *)f.formed)[(size_t)m * n * n + j + k * n] -
                                         r[j + k * n]));
        CHECK(f.info[m] == 0, "matrix %u: info %d", m, f.info[m]);
        CHECK(LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int)n, (lapack_complex_double *)r, (lapack_int)n,
                            lapack_w) == 0, "zheev matrix %u", m);
        for (uint32_t j = 0; j < n; j++)
            worst_w = fmax(worst_w, fabs(((double *)f.w)[(size_t)m * n + j] - lapack_w[j]));
    }
    CHECK(worst <= tol, "%s path: formed |R - oracle| %.3g > tol %.3g", want_path, worst, tol);
    /* Weyl: each eigenvalue moves by at most ||dR||_2 <= n max|dR_jk|, plus
     * the solvers' own backward errors, a few n u ||R|| each (||R|| <= n B^2). */
    double tol_w = n * tol + 100.0 * n * u * n * b2 * 1.05;
    CHECK(worst_w <= tol_w, "%s path: eigenvalues off LAPACK's of the oracle by %.3g > %.3g", want_path, worst_w,
          tol_w);
    f.header.payload_bytes = cube_bytes - 4;
    CHECK(path_form(p, &f, err, sizeof err) == PIPELINE_EINVAL && strstr(err, "IQ frame") != NULL,
          "%s path: a cube of the wrong size: %s", want_path, err);
    path_release(p, &f);
    free(lapack_w);
    free(want);
    path_buffer_free(p, f.a);
    path_buffer_free(p, f.w);
    path_buffer_free(p, f.info);
    path_buffer_free(p, f.formed);
    path_destroy(&p);

    pp.matrices = count + 1;
    CHECK(path_create(&p, &pp, err, sizeof err) == PIPELINE_EINVAL && p == NULL && strstr(err, "matrices") != NULL,
          "matrices mismatch: %s", err);
}

