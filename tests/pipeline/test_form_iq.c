/*
 * test_form_iq.c - IQ cube forming on the CPU (pipeline/form/form_iq.c) against
 * a direct oracle written plainly in form_iq_oracle.c: the windowed Doppler
 * DFT as an O(P*F) sum per (channel, gate) and the covariance as an
 * explicit sum over the training gates, in double, from the raw samples (no
 * FFT, no BLAS).
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
 * The oracle and the tolerance (derived there): form_iq_oracle.h.
 */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig.h"
#include "form_iq.h"
#include "form_iq_oracle.h"
#include "protocol.h"
#include "test_check.h"

enum { CF32 = PROTOCOL_IQ_CF32_LE, CI16 = PROTOCOL_IQ_CI16_LE };
enum { CPG = PROTOCOL_IQ_CPG, PCG = PROTOCOL_IQ_PCG, PGC = PROTOCOL_IQ_PGC };

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
    float scale = q->format == CI16 ? 1.0f / 4096 : 2.5f;
    void *cube = form_iq_oracle_random_cube(q);
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
    double b2 = form_iq_oracle(q, cube, scale, want);
    double tol = form_iq_oracle_tolerance(q, q->precision, b2);
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

/* The shared sweep (form_iq_oracle_case): every window x format x layout x
 * precision with varying geometry. */
static void test_all_cases(void)
{
    for (int index = 0; index < FORM_IQ_ORACLE_CASES; index++) {
        form_iq_params q;
        char label[160];
        form_iq_oracle_case(index, &q, label, sizeof label);
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

int main(int argc, char **argv)
{
    test_all_cases();
    test_geometry_edges();
    test_params_check();
    test_wisdom(argc > 1 ? argv[1] : ".");
    form_iq_oracle_check_path(EIG_BACKEND_CPU, "host");
    return test_check_report("test_form_iq");
}
