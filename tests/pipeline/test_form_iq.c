/*
 * test_form_iq.c - IQ cube forming on the CPU (pipeline/form_iq.c) against
 * a direct oracle written plainly here: the windowed Doppler DFT as an
 * O(P*F) sum per (channel, gate) and the covariance as an explicit sum over
 * the training gates, in double, from the raw samples (no FFT, no BLAS).
 *
 * Cases: every window x both sample formats x all three layouts x both
 * precisions, on small cubes whose fft size, bins (wrapping past F-1),
 * segments and guard gates vary per case; guard cells clipped at a
 * segment's edge; the parameter validator; the wisdom file (missing,
 * corrupt, saved). The host frame path with IQ input (path_host.c): a
 * frame's cube in f->a formed into f->formed, then forward-backward
 * averaging and diagonal loading (applied to the oracle here by their
 * definitions), then solved: the eigenvalues against LAPACK zheev of the
 * oracle's matrices. Usage: test_form_iq DIR (a scratch directory).
 *
 * Tolerance. Let B = max over (channel, gate) of sum_p |w_p x_p| (x the
 * scaled samples): every |X[c][b][g]| <= B, so every |R(j,k)| <= B^2 and
 * the products summed in R are at most B^2 each. With u the unit roundoff
 * of the precision tested: the conversion rounds each w_p x_p with relative
 * error <= 2u; an FFT of size F has an error per output of at most about
 * u log2(F) times the input's l1 norm (each output is a sum over log2 F
 * butterfly levels, each rounding once; worst case, no cancellation
 * assumed) <= u log2(F) B; the herk sum of K products of error <= 2 u B |X|
 * each, then the 1/K scaling, adds <= (K + 1) u B^2. So
 *   |R - R_oracle| <= u (2 log2 F + 4 + K + 1) B^2 (+ the oracle's own
 *   error, P + K rounding steps in double, below the float bound and inside
 *   the double one through the same terms),
 * and we allow 4x that: tol = 4 u (2 log2 F + P + K + 5) B^2 (P covering the
 * oracle's DFT sum). A wrong bin, window, gate, sign or scale errs by O(B^2
 * / K) at least on random data, far above tol (u = 2^-24: tol ~ 1e-5 B^2).
 */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "eig.h"
#include "form_iq.h"
#include "path.h"
#include "protocol.h"
#include "test_check.h"

enum { CF32 = PROTOCOL_IQ_CF32_LE, CI16 = PROTOCOL_IQ_CI16_LE };
enum { CPG = PROTOCOL_IQ_CPG, PCG = PROTOCOL_IQ_PCG, PGC = PROTOCOL_IQ_PGC };

static const char *const window_names[] = {"none", "hann", "hamming", "chebyshev", "taylor"};
static const char *const layout_names[] = {"cpg", "pcg", "pgc"};

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

/* The oracle's matrices (complex double, full) and the bound B^2. */
static double oracle(const form_iq_params *q, const void *cube, float scale, double complex *r)
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

/* A random cube of the case's format: ci16 in [-3000, 3000], cf32 in [-1, 1). */
static void *random_cube(const form_iq_params *q)
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

/* Forms one case and compares the lower triangle with the oracle; the strict
 * upper triangle must be untouched (a sentinel). */
static void check_case(const form_iq_params *q, const char *label)
{
    char err[256];
    form_iq *plan = NULL;
    form_iq_error e = form_iq_create(&plan, q, err, sizeof err);
    CHECK(e == FORM_IQ_OK, "%s: create: %s (%s)", label, form_iq_strerror(e), err);
    if (e != FORM_IQ_OK)
        return;
    uint32_t n = q->channels, count = form_iq_matrices(q);
    int dbl = q->precision == EIG_COMPLEX_DOUBLE;
    double u = dbl ? 0x1p-53 : 0x1p-24;
    float scale = q->format == CI16 ? 1.0f / 4096 : 2.5f;
    void *cube = random_cube(q);
    size_t elements = (size_t)count * n * n;
    void *out = malloc(elements * (dbl ? 16 : 8));
    double complex *want = malloc(elements * sizeof *want);
    for (size_t i = 0; i < elements; i++) {
        if (dbl)
            ((double complex *)out)[i] = 1234.5;
        else
            ((float complex *)out)[i] = 1234.5f;
    }
    CHECK(form_iq_execute(plan, cube, scale, out) == FORM_IQ_OK, "%s: execute", label);
    double b2 = oracle(q, cube, scale, want);
    double tol = 4 * u * (2 * log2((double)q->fft_size) + q->pulses + form_iq_snapshots(q) + 5) * b2;
    double worst = 0;
    int upper_touched = 0;
    for (uint32_t m = 0; m < count; m++)
        for (uint32_t k = 0; k < n; k++)
            for (uint32_t j = 0; j < n; j++) {
                size_t i = (size_t)m * n * n + j + (size_t)k * n;
                double complex got = dbl ? ((double complex *)out)[i] : ((float complex *)out)[i];
                if (j < k)
                    upper_touched |= got != 1234.5;
                else
                    worst = fmax(worst, cabs(got - want[i]));
            }
    CHECK(worst <= tol, "%s: max |R - oracle| %.3g > tol %.3g (B^2 %.3g)", label, worst, tol, b2);
    CHECK(!upper_touched, "%s: the strict upper triangle was written", label);
    free(cube);
    free(out);
    free(want);
    form_iq_destroy(&plan);
    CHECK(plan == NULL, "%s: destroy clears the pointer", label);
}

/* Every window x format x layout x precision; the geometry varies with the
 * case number so that fft sizes (equal to P and padded), wrapping bin
 * ranges, 1..3 segments and guard gates all meet every combination often. */
static void test_all_cases(void)
{
    int index = 0;
    for (int window = FORM_WINDOW_NONE; window <= FORM_WINDOW_TAYLOR; window++)
        for (int fmt = 0; fmt < 2; fmt++)
            for (int layout = CPG; layout <= PGC; layout++)
                for (int dbl = 0; dbl < 2; dbl++, index++) {
                    form_iq_params q = {.channels = 5, .pulses = 7, .gates = 12};
                    q.format = fmt ? CI16 : CF32;
                    q.layout = (uint8_t)layout;
                    q.precision = dbl ? EIG_COMPLEX_DOUBLE : EIG_COMPLEX_FLOAT;
                    q.window = (form_window)window;
                    q.sidelobe_db = 25 + 5 * (index % 3);
                    q.fft_size = q.pulses + (uint32_t)(index % 3) * 2; /* 7, 9, 11 */
                    q.segments = 1 + (uint32_t)(index % 3);            /* 12, 6, 4 gates */
                    q.guard_gates = (uint32_t)(index % 2);
                    q.bin_count = 3 + (uint32_t)(index % 4);
                    q.bin_first = q.fft_size - 1 - (uint32_t)(index % 2); /* wraps past F-1 */
                    q.threads = 1 + index % 2;
                    char label[160];
                    snprintf(label, sizeof label, "window %s, %s, %s, %s, F=%u bins %u+%u, %u segments, guard %u",
                             window_names[window], fmt ? "ci16" : "cf32", layout_names[layout],
                             dbl ? "c128" : "c64", q.fft_size, q.bin_first, q.bin_count, q.segments, q.guard_gates);
                    check_case(&q, label);
                }
}

/* Guard cells clipped at the segment's edges, one bin, and every bin. */
static void test_geometry_edges(void)
{
    form_iq_params q = {.channels = 3, .pulses = 4, .gates = 10, .format = CF32, .layout = PGC,
                        .precision = EIG_COMPLEX_DOUBLE, .window = FORM_WINDOW_HANN, .fft_size = 4,
                        .bin_first = 3, .bin_count = 1, .segments = 2, .guard_gates = 2, .threads = 1};
    /* L = 5, centre 2, guard 2: gates 0..4 all guard cells -> no training gate. */
    CHECK(form_iq_snapshots(&q) == 0, "K %u, want 0", form_iq_snapshots(&q));
    char err[256] = "";
    CHECK(form_iq_params_check(&q, err, sizeof err) == FORM_IQ_EINVAL && strstr(err, "guard") != NULL,
          "guard gates leaving nothing: %s", err);
    q.segments = 1; /* L = 10, centre 5, gates 3..7 guarded: K = 5 */
    CHECK(form_iq_snapshots(&q) == 5, "K %u, want 5", form_iq_snapshots(&q));
    check_case(&q, "one segment, guard 2, one bin");
    q.guard_gates = 7; /* clipped: gates 0..9 minus 0..9 -> 0 */
    CHECK(form_iq_snapshots(&q) == 0, "K %u, want 0 (clipped guard)", form_iq_snapshots(&q));
    q.guard_gates = 4; /* centre 5, gates 1..9 guarded: only gate 0 trains */
    CHECK(form_iq_snapshots(&q) == 1, "K %u, want 1", form_iq_snapshots(&q));
    check_case(&q, "guard clipped at the segment's end, K = 1");
    q.guard_gates = 0;
    q.bin_first = 0;
    q.bin_count = 4;
    q.fft_size = 4;
    check_case(&q, "every bin, F = P");
}

static void test_params_check(void)
{
    const form_iq_params good = {.channels = 4, .pulses = 8, .gates = 16, .format = CI16, .layout = CPG,
                                 .precision = EIG_COMPLEX_FLOAT, .window = FORM_WINDOW_TAYLOR,
                                 .sidelobe_db = 30, .fft_size = 8, .bin_first = 0, .bin_count = 8,
                                 .segments = 4, .guard_gates = 0, .threads = 0};
    char err[256];
    CHECK(form_iq_params_check(&good, err, sizeof err) == FORM_IQ_OK, "good params: %s", err);
    CHECK(form_iq_matrices(&good) == 32, "matrices %u, want 32", form_iq_matrices(&good));
    CHECK(form_iq_snapshots(&good) == 4, "K %u, want 4", form_iq_snapshots(&good));
    struct {
        const char *what, *needle;
        form_iq_params p;
    } bad[] = {
        {"fft below pulses", "fft size", good},  {"format 2", "format", good},     {"layout 3", "layout", good},
        {"segments 3", "segments", good},        {"bin count 9", "bins", good},     {"bin first 8", "bins", good},
        {"sidelobe 0", "sidelobe", good},        {"channels 0", "channels", good}, {"threads -1", "threads", good},
        {"precision 0", "precision", good},
    };
    bad[0].p.fft_size = 7;
    bad[1].p.format = 2;
    bad[2].p.layout = 3;
    bad[3].p.segments = 3;
    bad[4].p.bin_count = 9;
    bad[5].p.bin_first = 8;
    bad[6].p.sidelobe_db = 0;
    bad[7].p.channels = 0;
    bad[8].p.threads = -1;
    bad[9].p.precision = (eig_precision)0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        form_iq *plan = (form_iq *)&good; /* must come back NULL */
        err[0] = '\0';
        form_iq_error e = form_iq_create(&plan, &bad[i].p, err, sizeof err);
        CHECK(e == FORM_IQ_EINVAL && plan == NULL && strstr(err, bad[i].needle) != NULL,
              "%s: %s, err \"%s\" (want it to name %s)", bad[i].what, form_iq_strerror(e), err, bad[i].needle);
    }
    form_iq *plan = NULL;
    form_iq_params small = good;
    small.channels = 2;
    CHECK(form_iq_create(&plan, &small, err, sizeof err) == FORM_IQ_OK, "create: %s", err);
    int16_t cube[2 * 2 * 8 * 16] = {0};
    float out[2 * 2 * 2 * 32];
    CHECK(form_iq_execute(plan, cube, 0.0f, out) == FORM_IQ_EINVAL, "scale 0 accepted");
    CHECK(form_iq_execute(plan, cube, NAN, out) == FORM_IQ_EINVAL, "scale NaN accepted");
    CHECK(form_iq_execute(plan, NULL, 1.0f, out) == FORM_IQ_EINVAL, "NULL cube accepted");
    form_iq_destroy(&plan);
    form_iq_destroy(&plan); /* NULL: a no-op */
}

/* A missing wisdom file: no note, the file is written. A corrupt one: a
 * note, planning goes on, the file is rewritten as wisdom (the next create
 * reads it without a note). A directory that cannot take the file: a note. */
static void test_wisdom(const char *dir)
{
    char file[512], err[256];
    snprintf(file, sizeof file, "%s/form_iq_test.wisdom", dir);
    remove(file);
    form_iq_params q = {.channels = 2, .pulses = 6, .gates = 4, .format = CF32, .layout = PCG,
                        .precision = EIG_COMPLEX_DOUBLE, .window = FORM_WINDOW_NONE, .fft_size = 8,
                        .bin_count = 8, .segments = 1, .threads = 1, .wisdom_file = file};
    form_iq *plan = NULL;
    CHECK(form_iq_create(&plan, &q, err, sizeof err) == FORM_IQ_OK, "create: %s", err);
    CHECK(form_iq_wisdom_note(plan) == NULL, "note on a missing file: %s", form_iq_wisdom_note(plan));
    form_iq_destroy(&plan);
    FILE *f = fopen(file, "r");
    char head[64] = "";
    CHECK(f != NULL && fgets(head, sizeof head, f) != NULL && strstr(head, "fftw_wisdom") != NULL,
          "wisdom file not written as FFTW wisdom: \"%s\"", head);
    if (f != NULL)
        fclose(f);

    f = fopen(file, "w");
    if (f != NULL) {
        fputs("(not wisdom at all", f);
        fclose(f);
    }
    CHECK(form_iq_create(&plan, &q, err, sizeof err) == FORM_IQ_OK, "create on corrupt wisdom: %s", err);
    const char *note = form_iq_wisdom_note(plan);
    CHECK(note != NULL && strstr(note, file) != NULL, "no note naming the corrupt file: %s", note ? note : "NULL");
    form_iq_destroy(&plan);
    CHECK(form_iq_create(&plan, &q, err, sizeof err) == FORM_IQ_OK, "create: %s", err);
    CHECK(form_iq_wisdom_note(plan) == NULL, "the rewritten file still gives a note: %s", form_iq_wisdom_note(plan));
    form_iq_destroy(&plan);
    remove(file);

    snprintf(file, sizeof file, "%s/no-such-dir/form_iq.wisdom", dir);
    CHECK(form_iq_create(&plan, &q, err, sizeof err) == FORM_IQ_OK, "create: %s", err);
    note = form_iq_wisdom_note(plan);
    CHECK(note != NULL && strstr(note, "cannot save") != NULL, "no note on an unwritable file: %s",
          note ? note : "NULL");
    form_iq_destroy(&plan);
}

/* R <- (R + J conj(R) J)/2, then R <- R + factor trace(R)/n I, on a full
 * complex double matrix, by the definitions (form.h). */
static void oracle_forward_backward_loading(double complex *r, size_t n, double factor)
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

/* The host path with IQ input: form (IQ, forward-backward, loading) and solve
 * one frame; formed lower triangles against the oracle, eigenvalues against
 * LAPACK's of the oracle's matrices. */
static void test_host_path(void)
{
    form_iq_params q = {.channels = 6, .pulses = 8, .gates = 20, .format = CI16, .layout = PCG,
                        .precision = EIG_COMPLEX_DOUBLE, .window = FORM_WINDOW_CHEBYSHEV, .sidelobe_db = 40,
                        .fft_size = 10, .bin_first = 8, .bin_count = 4, .segments = 2, .guard_gates = 1,
                        .threads = 2};
    uint32_t n = q.channels, count = form_iq_matrices(&q);
    path_params pp = {.n = n, .matrices = count, .precision = EIG_COMPLEX_DOUBLE, .backend = EIG_BACKEND_CPU,
                      .cpu_threads = 1, .forward_backward = 1, .diagonal_loading = 1, .loading_factor = 0.05,
                      .iq_input = 1, .iq = q};
    char err[256];
    path *p = NULL;
    pipeline_error pe = path_create(&p, &pp, err, sizeof err);
    CHECK(pe == PIPELINE_OK && p != NULL, "path_create: %s", err);
    if (p == NULL)
        return;
    CHECK(strcmp(path_name(p), "host") == 0, "path %s, want host", path_name(p));
    frame f = {.slot = -1};
    size_t cube_bytes = protocol_iq_cube_bytes(n, q.pulses, q.gates, q.format);
    f.a = random_cube(&q);
    f.a_bytes = cube_bytes;
    f.formed_bytes = (size_t)count * n * n * 16;
    f.formed = path_buffer_alloc(p, f.formed_bytes);
    f.w = malloc((size_t)count * n * sizeof(double));
    f.info = malloc(count * sizeof *f.info);
    protocol_header_init(&f.header, PROTOCOL_KIND_IQ);
    f.header.n = n;
    f.header.count = q.pulses;
    f.header.gates = q.gates;
    f.header.element = q.format;
    f.header.storage = q.layout;
    f.header.payload_bytes = cube_bytes;
    f.header.scale = 0.125f;
    double complex *want = malloc((size_t)count * n * n * sizeof *want);
    double b2 = oracle(&q, f.a, f.header.scale, want);
    for (uint32_t m = 0; m < count; m++)
        oracle_forward_backward_loading(want + (size_t)m * n * n, n, pp.loading_factor);
    CHECK(path_form(p, &f, err, sizeof err) == PIPELINE_OK, "path_form: %s", err);
    CHECK(path_solve(p, &f, err, sizeof err) == PIPELINE_OK, "path_solve: %s", err);
    /* Loading adds at most factor * B^2 per diagonal: the tolerance of
     * test_form_iq's header, on (1 + factor) B^2. */
    double u = 0x1p-53, tol = 4 * u * (2 * log2(q.fft_size) + q.pulses + form_iq_snapshots(&q) + 5) * b2 * 1.05;
    double worst = 0, worst_w = 0;
    double *lapack_w = malloc(n * sizeof *lapack_w);
    for (uint32_t m = 0; m < count; m++) {
        const double complex *got = (const double complex *)f.formed + (size_t)m * n * n;
        double complex *r = want + (size_t)m * n * n;
        for (uint32_t k = 0; k < n; k++)
            for (uint32_t j = k; j < n; j++)
                worst = fmax(worst, cabs(got[j + k * n] - r[j + k * n]));
        CHECK(f.info[m] == 0, "matrix %u: info %d", m, f.info[m]);
        CHECK(LAPACKE_zheev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int)n, (lapack_complex_double *)r, (lapack_int)n,
                            lapack_w) == 0, "zheev matrix %u", m);
        for (uint32_t j = 0; j < n; j++)
            worst_w = fmax(worst_w, fabs(((double *)f.w)[(size_t)m * n + j] - lapack_w[j]));
    }
    CHECK(worst <= tol, "host path: formed |R - oracle| %.3g > tol %.3g", worst, tol);
    /* Weyl: each eigenvalue moves by at most ||dR||_2 <= n max|dR_jk|, plus
     * the solvers' own backward errors, a few n u ||R|| each (||R|| <= n B^2). */
    double tol_w = n * tol + 100.0 * n * u * n * b2 * 1.05;
    CHECK(worst_w <= tol_w, "host path: eigenvalues off LAPACK's of the oracle by %.3g > %.3g", worst_w, tol_w);
    f.header.payload_bytes = cube_bytes - 4;
    CHECK(path_form(p, &f, err, sizeof err) == PIPELINE_EINVAL && strstr(err, "IQ frame") != NULL,
          "a cube of the wrong size: %s", err);
    free(lapack_w);
    free(want);
    free(f.a);
    free(f.w);
    free(f.info);
    path_buffer_free(p, f.formed);
    path_destroy(&p);

    pp.matrices = count + 1;
    CHECK(path_create(&p, &pp, err, sizeof err) == PIPELINE_EINVAL && p == NULL && strstr(err, "matrices") != NULL,
          "matrices mismatch: %s", err);
}

int main(int argc, char **argv)
{
    test_all_cases();
    test_geometry_edges();
    test_params_check();
    test_wisdom(argc > 1 ? argv[1] : ".");
    test_host_path();
    return test_check_report("test_form_iq");
}
