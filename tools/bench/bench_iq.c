/*
 * bench_iq.c - eigstream-bench iq: IQ cube forming (pipeline/form/form_iq.h)
 * against its peers, measured in one run on one cube.
 *
 *   CPU    form_iq_execute on --threads threads (default 2) against the same
 *          computation in NumPy (tools/bench/bench_iq_numpy.py: numpy.fft
 *          along the pulses + batched matmul, run as a python3 subprocess with
 *          OPENBLAS_NUM_THREADS = --threads): medians, and the ratio
 *          numpy / ours (target >= 3). NumPy's result is compared with ours
 *          (max |difference|), so that both did the same work.
 *   GPU    (built with CUDA, a device present; bench_iq_cuda.cu) the cube's
 *          copy from pinned memory to the device plus form_iq_cuda_execute,
 *          against our cuda solver on the matrices it formed (device entry,
 *          FULL lower, eigenvectors): medians of CUDA event times, and the
 *          ratio forming / solve (target < 0.5).
 * The default configuration is the issue's: 128 channels x 180 pulses x 256
 * gates of ci16 in cpg, Hann window, F = 180, all 180 bins, one range segment
 * of 256 training gates (no guard) -> 180 matrices of 128 in c128. The cube
 * is white noise (std 300 counts) plus three plane-wave targets (angle,
 * Doppler) 20 dB above it, so that the solver sees radar-like spectra.
 * Exit status 0, 1 on bad usage or a failure (named).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cli_choices.h"
#include "cli_options.h"
#include "form_iq.h"
#include "protocol.h"

#define IQ_PROG "eigstream-bench iq"

#ifndef EIGSTREAM_BENCH_IQ_NUMPY
#define EIGSTREAM_BENCH_IQ_NUMPY "tools/bench/bench_iq_numpy.py"
#endif

static const char iq_description[] =
    "IQ mode: forming of one cube (window, Doppler FFT, covariances per bin and segment)\n"
    "on the CPU against NumPy (numpy.fft + matmul) and, with a GPU, the GPU forming\n"
    "(cube copy included) against our GPU solve of the matrices it forms.\n";

static const char *const iq_devices[] = {"both", "cpu", "gpu", NULL};

typedef struct iq_options {
    form_iq_params q;
    int runs, device; /* device: 0 both, 1 cpu only, 2 gpu only */
    const char *python, *script, *dir;
} iq_options;

/* none, hann, hamming, chebyshev, taylor (the IQ slow-time windows, named
 * by their owner, form_iq.h). */
CLI_CHOICES_RANGE(form_window_choices, FORM_WINDOW_NONE, FORM_WINDOW_TAYLOR, form_window_name((form_window)v_))

static int parse_options(int argc, char **argv, iq_options *o)
{
    uint32_t channels = 128, pulses = 180, gates = 256, fft = 0, first = 0, count = 0, segments = 1, guard = 0;
    int format = PROTOCOL_IQ_CI16_LE, layout = PROTOCOL_IQ_CPG, window = FORM_WINDOW_HANN;
    int precision = EIG_COMPLEX_DOUBLE, threads = 2;
    double sidelobe = 40;
    const cli_choices precisions = cli_choices_precision(), formats = cli_choices_iq_format();
    const cli_choices layouts = cli_choices_iq_layout(), windows = form_window_choices();
    *o = (iq_options){.runs = 10, .python = "/usr/bin/python3", .script = EIGSTREAM_BENCH_IQ_NUMPY, .dir = "/tmp"};
    const cli_option table[] = {
        CLI_INT("channels", 0, &channels, 1, EIG_N_MAX, "C", "channels = matrix order n"),
        CLI_INT("pulses", 0, &pulses, 1, 1 << 20, "P", "pulses per cube"),
        CLI_INT("gates", 0, &gates, 1, 1 << 24, "G", "range gates per pulse"),
        CLI_CHOICE("format", 0, &format, formats.names, formats.values, "sample format"),
        CLI_CHOICE("layout", 0, &layout, layouts.names, layouts.values, "cube layout (slowest index first)"),
        CLI_CHOICE("window", 0, &window, windows.names, windows.values, "slow-time window"),
        CLI_DOUBLE("sidelobe-db", 0, &sidelobe, 1, 300, "DB", "chebyshev/taylor sidelobe level"),
        CLI_INT("fft", 0, &fft, 0, 1 << 24, "F", "fft size, 0 = pulses"),
        CLI_INT("bin-first", 0, &first, 0, 1 << 24, "B", "first Doppler bin"),
        CLI_INT("bins", 0, &count, 0, 1 << 24, "N", "Doppler bins made into matrices, 0 = all F"),
        CLI_INT("segments", 0, &segments, 1, 1 << 24, "S", "range segments"),
        CLI_INT("guard", 0, &guard, 0, 1 << 24, "G", "guard gates either side of a segment's centre"),
        CLI_CHOICE("precision", 0, &precision, precisions.names, precisions.values, "forming and solver precision"),
        CLI_INT("threads", 0, &threads, 1, 1024, "T", "CPU threads (ours and NumPy's BLAS)"),
        CLI_INT("runs", 0, &o->runs, 1, 100000, "R", "timed runs per measurement (after a warm-up)"),
        CLI_CHOICE("device", 0, &o->device, iq_devices, NULL, "what to measure: both, cpu, gpu"),
        CLI_STRING("python", 0, &o->python, "PATH", "python3 with NumPy for the peer (\"\" = skip NumPy)"),
        CLI_STRING("numpy-script", 0, &o->script, "PATH", "the NumPy peer"),
        CLI_STRING("dir", 0, &o->dir, "DIR", "scratch directory (the cube handed to NumPy, the FFTW wisdom)"),
        CLI_END};
    const cli_spec spec = {.prog = IQ_PROG, .synopsis = "[options]", .description = iq_description,
                           .options = table};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 2, &args, 1);
    o->q = (form_iq_params){.channels = channels, .pulses = pulses, .gates = gates, .format = (uint8_t)format,
                            .layout = (uint8_t)layout, .precision = (eig_precision)precision,
                            .window = (form_window)window, .sidelobe_db = sidelobe,
                            .fft_size = fft ? fft : pulses, .bin_first = first, .segments = segments,
                            .guard_gates = guard, .threads = threads};
    o->q.bin_count = count ? count : o->q.fft_size;
    return status;
}

/* Noise (std 300 counts per component) plus three plane waves 20 dB above
 * it (channel phase pi sin(angle) per element, Doppler phase per pulse), in
 * the wire format and layout. Fixed seed. */
static void *scene_cube(const form_iq_params *q, size_t *bytes)
{
    static const double angle[3] = {-0.4, 0.1, 0.55}, doppler[3] = {0.05, 0.21, -0.33};
    *bytes = protocol_iq_cube_bytes(q->channels, q->pulses, q->gates, q->format);
    uint8_t *cube = malloc(*bytes);
    uint64_t state = 0x2545f4914f6cdd1dull;
    for (size_t c = 0; cube != NULL && c < q->channels; c++)
        for (size_t p = 0; p < q->pulses; p++)
            for (size_t g = 0; g < q->gates; g++) {
                double re = 0, im = 0;
                for (int k = 0; k < 2; k++) { /* sum of 12 uniforms - 6: near-Gaussian, std 1 */
                    double s = -6;
                    for (int u = 0; u < 12; u++) {
                        state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
                        s += (double)((state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
                    }
                    *(k ? &im : &re) = 300 * s;
                }
                for (int t = 0; t < 3; t++) {
                    double phase = 3.14159265358979 * c * sin(angle[t]) + 6.28318530717959 * doppler[t] * p;
                    re += 3000 * cos(phase);
                    im += 3000 * sin(phase);
                }
                size_t i = protocol_iq_index(q->layout, q->channels, q->pulses, q->gates, (uint32_t)c, (uint32_t)p,
                                             (uint32_t)g);
                if (q->format == PROTOCOL_IQ_CI16_LE) {
                    int16_t v[2] = {(int16_t)lrint(fmax(-32768, fmin(32767, re))),
                                    (int16_t)lrint(fmax(-32768, fmin(32767, im)))};
                    memcpy(cube + 4 * i, v, 4);
                } else {
                    float v[2] = {(float)(re / 32768), (float)(im / 32768)};
                    memcpy(cube + 8 * i, v, 8);
                }
            }
    return cube;
}

/* Makes the CPU plan twice with a wisdom file in o->dir: the first plans
 * afresh (FFTW_MEASURE), the second as a restart would (from the wisdom);
 * prints both times. The second plan is returned, or NULL (named). */
static form_iq *plan_twice(const iq_options *o)
{
    char err[256], wisdom[600];
    form_iq_params q = o->q;
    snprintf(wisdom, sizeof wisdom, "%s/eigstream-bench-iq-%d.wisdom", o->dir, (int)getpid());
    q.wisdom_file = wisdom;
    form_iq *plan = NULL;
    for (int pass = 0; pass < 2; pass++) {
        form_iq_destroy(&plan);
        double t0 = bench_now_ms();
        if (form_iq_create(&plan, &q, err, sizeof err) != FORM_IQ_OK) {
            fprintf(stderr, IQ_PROG ": form_iq_create: %s\n", err);
            break;
        }
        printf("  CPU plan, %-31s %10.1f ms once%s%s\n", pass ? "from the wisdom file (restart)" : "FFTW_MEASURE afresh",
               bench_now_ms() - t0, form_iq_wisdom_note(plan) ? ": " : "",
               form_iq_wisdom_note(plan) ? form_iq_wisdom_note(plan) : "");
    }
    unlink(wisdom);
    return plan;
}

/* Our CPU forming: a warm-up, then o->runs timed runs; the median and the
 * minimum in ms. -1 on a failure (named). */
static int time_cpu(const iq_options *o, const void *cube, float scale, void *out, double *median, double *min)
{
    form_iq *plan = plan_twice(o);
    double *ms = malloc((size_t)o->runs * sizeof *ms);
    if (plan == NULL || ms == NULL) {
        form_iq_destroy(&plan);
        free(ms);
        return -1;
    }
    form_iq_execute(plan, cube, scale, out);
    for (int r = 0; r < o->runs; r++) {
        double t0 = bench_now_ms();
        form_iq_execute(plan, cube, scale, out);
        ms[r] = bench_now_ms() - t0;
    }
    form_iq_destroy(&plan);
    *min = bench_min(ms, o->runs);
    *median = bench_median(ms, o->runs);
    free(ms);
    return 0;
}

static int write_raw(const char *path, const void *data, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    int ok = f != NULL && fwrite(data, 1, bytes, f) == bytes;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, IQ_PROG ": cannot write %s\n", path);
    return ok ? 0 : -1;
}

/* The NumPy peer on the same cube; fills *median, *min (ms) and the largest
 * difference from our matrices. -1 when it did not run (named). */
static int time_numpy(const iq_options *o, const void *cube, size_t cube_bytes, float scale, const void *ours,
                      double *median, double *min, double *diff, double *peak)
{
    const form_iq_params *q = &o->q;
    char dir[512], cube_path[600], window_path[600], ours_path[600], cmd[4096], line[256];
    snprintf(dir, sizeof dir, "%s/eigstream-bench-iq-XXXXXX", o->dir);
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, IQ_PROG ": cannot make a scratch directory under %s\n", o->dir);
        return -1;
    }
    snprintf(cube_path, sizeof cube_path, "%s/cube.bin", dir);
    snprintf(window_path, sizeof window_path, "%s/window.bin", dir);
    snprintf(ours_path, sizeof ours_path, "%s/ours.bin", dir);
    double *window = malloc(q->pulses * sizeof *window);
    size_t ours_bytes = (size_t)form_iq_matrices(q) * q->channels * q->channels * eig_element_bytes(q->precision);
    int rc = window == NULL || form_iq_window_coefficients(q->window, q->sidelobe_db, q->pulses, window) != FORM_IQ_OK ||
                     write_raw(cube_path, cube, cube_bytes) != 0 ||
                     write_raw(window_path, window, q->pulses * sizeof *window) != 0 ||
                     write_raw(ours_path, ours, ours_bytes) != 0
                 ? -1
                 : 0;
    free(window);
    snprintf(cmd, sizeof cmd,
             "OPENBLAS_NUM_THREADS=%d OMP_NUM_THREADS=%d '%s' '%s' '%s' '%s' '%s' %u %u %u %u %u %d %u %u %u %u %u "
             "%.17g %d",
             q->threads, q->threads, o->python, o->script, cube_path, window_path, ours_path, q->channels,
             q->pulses, q->gates, q->format, q->layout, (int)q->precision, q->fft_size, q->bin_first, q->bin_count,
             q->segments, q->guard_gates, (double)scale, o->runs);
    FILE *p = rc == 0 ? popen(cmd, "r") : NULL;
    int got = 0;
    while (p != NULL && fgets(line, sizeof line, p) != NULL)
        got += sscanf(line, "numpy_ms %lf %lf", median, min) == 2 || sscanf(line, "max_abs_diff %lf %lf", diff, peak) == 2;
    int status = p != NULL ? pclose(p) : -1;
    unlink(cube_path);
    unlink(window_path);
    unlink(ours_path);
    rmdir(dir);
    if (rc != 0 || status != 0 || got != 2) {
        fprintf(stderr, IQ_PROG ": the NumPy peer (%s %s) failed (exit status %d)\n", o->python, o->script, status);
        return -1;
    }
    return 0;
}

/* CPU forming against NumPy; 0, or 1 on a failure. */
static int bench_iq_cpu(const iq_options *o, const void *cube, size_t cube_bytes, float scale)
{
    const form_iq_params *q = &o->q;
    size_t out_bytes = (size_t)form_iq_matrices(q) * q->channels * q->channels * eig_element_bytes(q->precision);
    void *out = calloc(1, out_bytes);
    double ours_med, ours_min, np_med = 0, np_min = 0, diff = 0, peak = 0;
    if (out == NULL || time_cpu(o, cube, scale, out, &ours_med, &ours_min) != 0) {
        free(out);
        return 1;
    }
    printf("  CPU forming, ours (%d threads)            %10.2f ms median %10.2f min\n", q->threads, ours_med,
           ours_min);
    int rc = 0;
    if (o->python[0] != '\0') {
        if (time_numpy(o, cube, cube_bytes, scale, out, &np_med, &np_min, &diff, &peak) == 0) {
            printf("  CPU forming, NumPy (BLAS %d threads)       %10.2f ms median %10.2f min\n", q->threads, np_med,
                   np_min);
            /* Both computed the same matrices: their difference stays within the
             * rounding of the precision (a bound of tests/pipeline/form_iq_oracle.h,
             * on max |R| instead of its B^2). */
            double u = q->precision == EIG_COMPLEX_DOUBLE ? 0x1p-53 : 0x1p-24;
            double bound = 4 * u * (2 * log2(q->fft_size) + q->pulses + form_iq_snapshots(q) + 5) * peak;
            printf("  NumPy vs ours: max |difference| %.3g (max |R| %.3g, bound %.3g)\n", diff, peak, bound);
            if (!(diff <= bound)) {
                fprintf(stderr, IQ_PROG ": NumPy and ours disagree beyond rounding: not the same computation\n");
                rc = 1;
            }
            printf("  ratio NumPy / ours (median)              %10.2f   (target >= 3)\n", np_med / ours_med);
        } else {
            rc = 1;
        }
    }
    free(out);
    return rc;
}

/* The tool once its options are parsed (CLI_MAIN below); the exit status. */
static int tool_main(iq_options *o)
{
    char err[256];
    if (form_iq_params_check(&o->q, err, sizeof err) != FORM_IQ_OK)
        return cli_fatal(IQ_PROG, "%s", err);
    const form_iq_params *q = &o->q;
    size_t cube_bytes;
    void *cube = scene_cube(q, &cube_bytes);
    if (cube == NULL)
        return cli_fatal(IQ_PROG, "out of memory for the cube");
    float scale = q->format == PROTOCOL_IQ_CI16_LE ? 1.0f / 32768 : 1.0f;
    printf("%s: %u channels x %u pulses x %u gates %s %s (%.1f MB), window %s, F %u, bins %u+%u, "
           "%u segment(s), guard %u: %u matrices of %u, K %u, %s\n",
           IQ_PROG, q->channels, q->pulses, q->gates, protocol_iq_format_name(q->format),
           protocol_iq_layout_name(q->layout), (double)cube_bytes / 1e6, form_window_name(q->window), q->fft_size,
           q->bin_first, q->bin_count, q->segments, q->guard_gates, form_iq_matrices(q), q->channels,
           form_iq_snapshots(q), eig_precision_name(q->precision));
    int rc = 0;
    if (o->device != 2)
        rc |= bench_iq_cpu(o, cube, cube_bytes, scale);
    if (o->device != 1) {
#if defined(EIGSTREAM_BENCH_IQ_CUDA)
        rc |= bench_iq_gpu(q, cube, cube_bytes, scale, o->runs);
#else
        printf("  GPU: this build has no CUDA\n");
#endif
    }
    free(cube);
    return rc;
}

CLI_MAIN(bench_iq_main, iq_options, parse_options, tool_main)
