/*
 * bench_cpu.c - eigstream-bench CPU mode: our cpu backend against LAPACK.
 *
 * Times, on the same batch and with the same thread count T:
 *   cpu         eig_plan_execute with EIG_BACKEND_CPU (our Householder + QR)
 *   eig-lapack  eig_plan_execute with EIG_BACKEND_LAPACK (the library's own
 *               LAPACK backend, for reference)
 *   zheev       LAPACKE_zheev_work / cheev_work called here directly
 *   zheevd      LAPACKE_zheevd_work / cheevd_work called here directly
 *
 * How the LAPACK baselines are run: one matrix per call, the batch split over
 * T OpenMP threads with `omp parallel for schedule(dynamic, 1)` - the way the
 * eig library parallelizes its batches: each thread takes the next whole
 * matrix and solves it alone. OpenBLAS is set to one thread once, before
 * anything is timed (openblas_set_num_threads(1)); its pthreads build would
 * otherwise start up to T threads inside each of the T concurrent calls and
 * oversubscribe the cores. The setting is global, so it holds for every
 * solver above. Each call copies its matrix into the output buffer z (LAPACK
 * overwrites A with the vectors), as our backends copy theirs internally; all
 * workspace is allocated before timing. Each solver gets one untimed warm-up
 * run, whose accuracy ratios are reported, then --runs timed runs, the runs of
 * the different solvers interleaved (see solvers_bench).
 */
#include <complex.h>

#include <cblas.h>
#include <lapacke.h>
#include <omp.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cli_options.h"
#include "eig.h"
#include "workload.h"

static const char bench_prog[] = "eigstream-bench";

static const char bench_description[] =
    "CPU mode: times our cpu backend against LAPACK zheev and zheevd (cheev/cheevd in\n"
    "complex float), all with T threads, one matrix per thread at a time, and prints the\n"
    "median and min over R runs, the speed-ups, and the worst LAPACK residual and\n"
    "orthogonality ratios of each solver over the batch.\n";

static const char bench_epilogue[] =
    "Other modes: --backend cuda (GPU), pipeline (end-to-end throughput), record, iq (IQ cube forming).\n";

typedef enum bench_solver {
    SOLVER_CPU = 0,
    SOLVER_EIG_LAPACK,
    SOLVER_HEEV,
    SOLVER_HEEVD,
    SOLVER_COUNT
} bench_solver;

static const char *solver_name(bench_solver s, eig_precision precision)
{
    int single = precision == EIG_COMPLEX_FLOAT;
    switch (s) {
    case SOLVER_CPU: return "cpu";
    case SOLVER_EIG_LAPACK: return "eig-lapack";
    case SOLVER_HEEV: return single ? "cheev" : "zheev";
    case SOLVER_HEEVD: return single ? "cheevd" : "zheevd";
    case SOLVER_COUNT: break;
    }
    return "?";
}

typedef struct bench_options {
    int n, batch, runs, threads;
    int precisions[2]; /* run [0] EIG_COMPLEX_FLOAT, [1] EIG_COMPLEX_DOUBLE */
    int random_input;
    const char *json_path;
} bench_options;

/* Index 0 / 1 of bench_options.precisions and of the result tables. */
static eig_precision bench_precision_of(int index)
{
    return index == 0 ? EIG_COMPLEX_FLOAT : EIG_COMPLEX_DOUBLE;
}

typedef struct bench_result {
    int available;                   /* 0: the solver could not run (see why) */
    char why[128];
    double median_ms, min_ms;
    double residual_max, orthogonality_max; /* NaN-propagating maxima */
    int failed;                      /* matrices with info != 0 */
} bench_result;

static const char *const bench_backends[] = {"cpu", NULL}; /* the others are modes of their own */
static const char *const bench_inputs[] = {"radar", "random", NULL};
static const char *const bench_precisions[] = {"c64", "c128", "both", NULL};

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: 0 after --help, 1 after a bad argument (named on stderr). */
static int options_parse(int argc, char **argv, bench_options *o)
{
    *o = (bench_options){128, 180, 5, 0, {1, 1}, 0, NULL};
    int backend = 0, precision = 2;
    const cli_option table[] = {
        CLI_CHOICE("backend", 0, &backend, bench_backends, NULL, "this mode's backend"),
        CLI_INT("n", 0, &o->n, 1, EIG_N_MAX, "N", "matrix order"),
        CLI_INT("batch", 0, &o->batch, 1, INT_MAX, "B", "matrices per run"),
        CLI_CHOICE("precision", 0, &precision, bench_precisions, NULL, "complex64, complex128 or both"),
        CLI_CHOICE("input", 0, &o->random_input, bench_inputs, NULL,
                   "radar: sample covariances; random: random Hermitian"),
        CLI_INT("runs", 0, &o->runs, 1, INT_MAX, "R", "timed runs per solver, after one warm-up run"),
        CLI_INT("threads", 0, &o->threads, 0, INT_MAX, "T", "threads for every solver, 0 = all online cores"),
        CLI_STRING("json", 0, &o->json_path, "FILE", "also write the results as JSON"),
        CLI_END};
    const cli_spec spec = {.prog = bench_prog, .synopsis = "[--backend cpu] [options]",
                           .description = bench_description, .options = table, .epilogue = bench_epilogue};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 1);
    o->precisions[0] = precision != 1;
    o->precisions[1] = precision != 0;
    if (o->threads == 0)
        o->threads = omp_get_num_procs();
    return status;
}

/* ---- LAPACK baselines ------------------------------------------------------------ */

/* One thread's workspace for ?heev or ?heevd, sized by LAPACK's own query. */
typedef struct lapack_workspace {
    void *work, *rwork;
    lapack_int *iwork;
    lapack_int lwork, lrwork, liwork;
} lapack_workspace;

static void lapack_workspace_free(lapack_workspace *ws)
{
    free(ws->work);
    free(ws->rwork);
    free(ws->iwork);
    memset(ws, 0, sizeof *ws);
}

/* Asks LAPACK for its optimal workspace and allocates it; 0 or -1. */
static int lapack_workspace_create(lapack_workspace *ws, bench_solver s, eig_precision precision,
                                   int n)
{
    memset(ws, 0, sizeof *ws);
    const int single = precision == EIG_COMPLEX_FLOAT;
    double complex query_z = 0, dummy_z[1] = {0};
    float complex query_c = 0, dummy_c[1] = {0};
    double query_rd = 0, dummy_wd[1];
    float query_rc = 0, dummy_wc[1];
    lapack_int query_i = 0;
    lapack_int info;
    if (s == SOLVER_HEEV) {
        info = single ? LAPACKE_cheev_work(LAPACK_COL_MAJOR, 'V', 'L', n, dummy_c, n, dummy_wc,
                                           &query_c, -1, &query_rc)
                      : LAPACKE_zheev_work(LAPACK_COL_MAJOR, 'V', 'L', n, dummy_z, n, dummy_wd,
                                           &query_z, -1, &query_rd);
        ws->lrwork = 3 * n - 2 > 1 ? 3 * n - 2 : 1;
    } else {
        info = single ? LAPACKE_cheevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, dummy_c, n, dummy_wc,
                                            &query_c, -1, &query_rc, -1, &query_i, -1)
                      : LAPACKE_zheevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, dummy_z, n, dummy_wd,
                                            &query_z, -1, &query_rd, -1, &query_i, -1);
        ws->lrwork = single ? (lapack_int)query_rc : (lapack_int)query_rd;
        ws->liwork = query_i;
    }
    if (info != 0)
        return -1;
    ws->lwork = single ? (lapack_int)crealf(query_c) : (lapack_int)creal(query_z);
    if (ws->lwork < 1)
        ws->lwork = 1;
    size_t complex_size = single ? sizeof(float complex) : sizeof(double complex);
    size_t real_size = single ? sizeof(float) : sizeof(double);
    ws->work = malloc((size_t)ws->lwork * complex_size);
    ws->rwork = malloc((size_t)ws->lrwork * real_size);
    ws->iwork = ws->liwork > 0 ? malloc((size_t)ws->liwork * sizeof *ws->iwork) : NULL;
    if (!ws->work || !ws->rwork || (ws->liwork > 0 && !ws->iwork)) {
        lapack_workspace_free(ws);
        return -1;
    }
    return 0;
}

/* Solves one matrix in place: a (n x n, column-major, lower triangle) becomes
 * its eigenvectors, w its eigenvalues. Returns LAPACK's info. */
static lapack_int lapack_solve(bench_solver s, eig_precision precision, int n, void *a, void *w,
                               lapack_workspace *ws)
{
    if (precision == EIG_COMPLEX_FLOAT)
        return s == SOLVER_HEEV
                   ? LAPACKE_cheev_work(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, w, ws->work,
                                        ws->lwork, ws->rwork)
                   : LAPACKE_cheevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, w, ws->work,
                                         ws->lwork, ws->rwork, ws->lrwork, ws->iwork, ws->liwork);
    return s == SOLVER_HEEV
               ? LAPACKE_zheev_work(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, w, ws->work, ws->lwork,
                                    ws->rwork)
               : LAPACKE_zheevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, w, ws->work, ws->lwork,
                                     ws->rwork, ws->lrwork, ws->iwork, ws->liwork);
}

/* One run of ?heev/?heevd over the batch, T threads, one matrix per call. */
static void lapack_run(bench_solver s, eig_precision precision, const bench_options *o,
                       const char *a, char *w, char *z, int *info, lapack_workspace *ws)
{
    const size_t es = precision == EIG_COMPLEX_FLOAT ? sizeof(float complex) : sizeof(double complex);
    const size_t nn = (size_t)o->n * (size_t)o->n;
#pragma omp parallel for schedule(dynamic, 1) num_threads(o->threads)
    for (int b = 0; b < o->batch; b++) {
        char *zb = z + (size_t)b * nn * es;
        memcpy(zb, a + (size_t)b * nn * es, nn * es);
        info[b] = (int)lapack_solve(s, precision, o->n, zb, w + (size_t)b * (size_t)o->n * es / 2,
                                    &ws[omp_get_thread_num()]);
    }
}

/* ---- timing and accuracy -------------------------------------------------------- */

static int ratio_worse(double candidate, double worst)
{
    return isnan(candidate) || (!isnan(worst) && candidate > worst);
}

/* Worst residual and orthogonality ratios over the batch (NaN wins). */
static void accuracy_measure(const bench_options *o, eig_precision precision, const char *a,
                             const char *w, const char *z, const int *info, bench_result *r)
{
    const size_t es = precision == EIG_COMPLEX_FLOAT ? sizeof(float complex) : sizeof(double complex);
    const size_t nn = (size_t)o->n * (size_t)o->n;
    double residual = 0, orthogonality = 0;
    int failed = 0;
#pragma omp parallel for num_threads(o->threads) reduction(+ : failed)
    for (int b = 0; b < o->batch; b++) {
        double res = workload_residual_ratio(o->n, precision, a + b * nn * es,
                                             w + (size_t)b * (size_t)o->n * es / 2, z + b * nn * es);
        double orth = workload_orthogonality_ratio(o->n, precision, z + b * nn * es);
#pragma omp critical(bench_accuracy)
        {
            if (ratio_worse(res, residual))
                residual = res;
            if (ratio_worse(orth, orthogonality))
                orthogonality = orth;
        }
        failed += info[b] != 0;
    }
    r->residual_max = residual;
    r->orthogonality_max = orthogonality;
    r->failed = failed;
}

/* One solver's plan or LAPACK workspaces, and its timings. */
typedef struct solver_state {
    bench_solver solver;
    eig_plan *plan;        /* cpu, eig-lapack */
    lapack_workspace *ws;  /* zheev, zheevd: one per thread */
    double *times;         /* o->runs */
} solver_state;

static void solver_teardown(solver_state *st, const bench_options *o)
{
    eig_plan_destroy(&st->plan);
    for (int t = 0; st->ws && t < o->threads; t++)
        lapack_workspace_free(&st->ws[t]);
    free(st->ws);
    free(st->times);
    memset(st, 0, sizeof *st);
}

/* Creates the plan or workspaces (nothing is allocated while timing). On
 * failure r->why says why and r->available stays 0. */
static void solver_setup(solver_state *st, bench_solver s, eig_precision precision,
                         const bench_options *o, bench_result *r)
{
    memset(st, 0, sizeof *st);
    memset(r, 0, sizeof *r);
    st->solver = s;
    st->times = malloc((size_t)o->runs * sizeof *st->times);
    st->ws = calloc((size_t)o->threads, sizeof *st->ws);
    if (!st->times || !st->ws) {
        snprintf(r->why, sizeof r->why, "out of memory");
        return;
    }
    if (s == SOLVER_CPU || s == SOLVER_EIG_LAPACK) {
        eig_plan_params p = eig_plan_params_default();
        p.n = o->n;
        p.batch = o->batch;
        p.precision = precision;
        p.backend = s == SOLVER_CPU ? EIG_BACKEND_CPU : EIG_BACKEND_LAPACK;
        p.threads = o->threads;
        eig_error e = eig_plan_create(&st->plan, &p);
        if (e != EIG_OK) {
            snprintf(r->why, sizeof r->why, "plan: %s", eig_strerror(e));
            return;
        }
    } else {
        for (int t = 0; t < o->threads; t++) {
            if (lapack_workspace_create(&st->ws[t], s, precision, o->n) != 0) {
                snprintf(r->why, sizeof r->why, "workspace query or allocation failed");
                return;
            }
        }
    }
    r->available = 1;
}

/* One solve of the whole batch; returns its wall time in ms, or -1 (r->why
 * says why) when the solver failed as a whole. */
static double solver_run(solver_state *st, eig_precision precision, const bench_options *o,
                         const char *a, char *w, char *z, int *info, bench_result *r)
{
    double start = bench_now_ms();
    if (st->plan) {
        eig_error e = eig_plan_execute(st->plan, a, w, z, info);
        if (e != EIG_OK && e != EIG_EMATRIX) {
            snprintf(r->why, sizeof r->why, "execute: %s", eig_strerror(e));
            return -1;
        }
    } else {
        lapack_run(st->solver, precision, o, a, w, z, info, st->ws);
    }
    return bench_now_ms() - start;
}

/* Benchmarks every solver on one batch. Each solver's warm-up run is also
 * the one whose accuracy is measured (every run computes the same result).
 * The timed runs are interleaved - run k of every solver, then run k+1 -
 * so that a burst of load from elsewhere on the machine lands on all the
 * solvers alike instead of on whichever happened to be running. */
static void solvers_bench(eig_precision precision, const bench_options *o, const char *a,
                          char *w, char *z, int *info, bench_result r[SOLVER_COUNT])
{
    solver_state st[SOLVER_COUNT];
    for (int s = 0; s < SOLVER_COUNT; s++) {
        solver_setup(&st[s], (bench_solver)s, precision, o, &r[s]);
        if (r[s].available && solver_run(&st[s], precision, o, a, w, z, info, &r[s]) < 0)
            r[s].available = 0;
        if (r[s].available)
            accuracy_measure(o, precision, a, w, z, info, &r[s]);
    }
    for (int run = 0; run < o->runs; run++) {
        for (int s = 0; s < SOLVER_COUNT; s++) {
            if (!r[s].available)
                continue;
            st[s].times[run] = solver_run(&st[s], precision, o, a, w, z, info, &r[s]);
            if (st[s].times[run] < 0)
                r[s].available = 0;
        }
    }
    for (int s = 0; s < SOLVER_COUNT; s++) {
        if (r[s].available) {
            r[s].min_ms = bench_min(st[s].times, o->runs);
            r[s].median_ms = bench_median(st[s].times, o->runs);
        }
        solver_teardown(&st[s], o);
    }
}

/* ---- reporting ------------------------------------------------------------------ */

static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                snprintf(out, size, "%s", colon + 1 + (colon[1] == ' '));
                out[strcspn(out, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

static void json_string(FILE *f, const char *text)
{
    fputc('"', f);
    for (const char *c = text; *c; c++) {
        if (*c == '"' || *c == '\\')
            fputc('\\', f);
        if ((unsigned char)*c >= 0x20)
            fputc(*c, f);
    }
    fputc('"', f);
}

/* JSON has no NaN: a NaN ratio is written as null. */
static void json_number(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.6g", x);
    else
        fputs("null", f);
}

static int json_write(const char *path, const bench_options *o, const char *cpu,
                      bench_result results[2][SOLVER_COUNT])
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_fatal(bench_prog, "cannot create '%s': %s", path, strerror(errno));
    fprintf(f, "{\n  \"mode\": \"cpu\",\n  \"cpu\": ");
    json_string(f, cpu);
    fputs(",\n  \"openblas\": ", f);
    json_string(f, openblas_get_config());
    fputs(",\n  \"openblas_core\": ", f);
    json_string(f, openblas_get_corename());
    fprintf(f, ",\n  \"cores\": %d,\n  \"threads\": %d,\n  \"n\": %d,\n  \"batch\": %d,\n"
               "  \"runs\": %d,\n  \"input\": \"%s\",\n  \"results\": [",
            omp_get_num_procs(), o->threads, o->n, o->batch, o->runs,
            o->random_input ? "random" : "radar");
    int first = 1;
    for (int p = 1; p >= 0; p--) {
        if (!o->precisions[p])
            continue;
        for (int s = 0; s < SOLVER_COUNT; s++) {
            const bench_result *r = &results[p][s];
            fprintf(f, "%s\n    {\"precision\": \"%s\", \"solver\": \"%s\", \"available\": %s",
                    first ? "" : ",", p == 0 ? "c64" : "c128",
                    solver_name((bench_solver)s, bench_precision_of(p)), r->available ? "true" : "false");
            first = 0;
            if (r->available) {
                fputs(", \"median_ms\": ", f);
                json_number(f, r->median_ms);
                fputs(", \"min_ms\": ", f);
                json_number(f, r->min_ms);
                fputs(", \"residual_max\": ", f);
                json_number(f, r->residual_max);
                fputs(", \"orthogonality_max\": ", f);
                json_number(f, r->orthogonality_max);
                fprintf(f, ", \"failed\": %d", r->failed);
            } else {
                fputs(", \"why\": ", f);
                json_string(f, r->why);
            }
            fputc('}', f);
        }
    }
    fputs("\n  ]\n}\n", f);
    if (fclose(f) != 0)
        return cli_fatal(bench_prog, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}

static void results_print(eig_precision precision, bench_result r[SOLVER_COUNT])
{
    printf("\n%s:\n", precision == EIG_COMPLEX_FLOAT ? "complex float" : "complex double");
    printf("  %-11s %11s %9s %14s %14s %7s\n", "solver", "median ms", "min ms", "residual max",
           "orthog. max", "failed");
    for (int s = 0; s < SOLVER_COUNT; s++) {
        const char *name = solver_name((bench_solver)s, precision);
        if (!r[s].available)
            printf("  %-11s unavailable: %s\n", name, r[s].why);
        else
            printf("  %-11s %11.2f %9.2f %14.3g %14.3g %7d\n", name, r[s].median_ms, r[s].min_ms,
                   r[s].residual_max, r[s].orthogonality_max, r[s].failed);
    }
    if (r[SOLVER_CPU].available) {
        for (int s = SOLVER_HEEV; s <= SOLVER_HEEVD; s++)
            if (r[s].available)
                printf("  %s/cpu: %.2fx (min %.2fx)%s", solver_name((bench_solver)s, precision),
                       r[s].median_ms / r[SOLVER_CPU].median_ms, r[s].min_ms / r[SOLVER_CPU].min_ms,
                       s == SOLVER_HEEVD ? "\n" : "   ");
    }
}

int bench_cpu_main(int argc, char **argv)
{
    bench_options o;
    int status = options_parse(argc, argv, &o);
    if (status >= 0)
        return status;
    /* See the top of this file: one OpenBLAS thread per call, T calls at once. */
    openblas_set_num_threads(1);

    char cpu[128];
    cpu_model(cpu, sizeof cpu);
    printf("eigstream-bench cpu: %d matrices of %dx%d, input %s, %d runs (median, min), "
           "%d threads\n",
           o.batch, o.n, o.n, o.random_input ? "random" : "radar", o.runs, o.threads);
    /* The kernels OpenBLAS picked matter as much as the core count: a CPU newer
     * than the OpenBLAS release falls back to generic ones (OPENBLAS_CORETYPE
     * overrides the choice). */
    printf("machine: %s, %d cores online; %s, kernels for %s, 1 thread per call\n", cpu,
           omp_get_num_procs(), openblas_get_config(), openblas_get_corename());
    fflush(stdout);

    bench_result results[2][SOLVER_COUNT];
    memset(results, 0, sizeof results);
    for (int p = 1; p >= 0; p--) {
        if (!o.precisions[p])
            continue;
        const eig_precision precision = bench_precision_of(p);
        const size_t es = precision == EIG_COMPLEX_FLOAT ? sizeof(float complex) : sizeof(double complex);
        const size_t nn = (size_t)o.n * (size_t)o.n;
        char *a = malloc((size_t)o.batch * nn * es);
        char *z = malloc((size_t)o.batch * nn * es);
        char *w = malloc((size_t)o.batch * (size_t)o.n * es / 2);
        int *info = malloc((size_t)o.batch * sizeof *info);
        int generated = -1;
        if (a && z && w && info)
            generated = o.random_input ? workload_random_batch(o.n, o.batch, precision, 1, a)
                                       : workload_radar_batch(o.n, o.batch, precision, 1, a);
        if (generated == 0) {
            solvers_bench(precision, &o, a, w, z, info, results[p]);
            results_print(precision, results[p]);
            fflush(stdout);
        } else {
            status = cli_fatal(bench_prog, "cannot allocate or generate %d matrices of order %d", o.batch, o.n);
        }
        free(a);
        free(z);
        free(w);
        free(info);
        if (status >= 0)
            return status;
    }
    if (o.json_path && json_write(o.json_path, &o, cpu, results) != 0)
        return 1;
    for (int p = 0; p < 2; p++)
        for (int s = 0; s < SOLVER_COUNT; s++)
            if (o.precisions[p] && (!results[p][s].available || results[p][s].failed))
                return 2;
    return 0;
}
