/*
 * eigstream-solve - eigenvalues and eigenvectors of Hermitian matrices in
 * .npy, .npz and MATLAB .mat files, with numpy.linalg.eigh's conventions.
 *
 *   eigstream-solve [--backend auto|cpu|lapack|cuda] [--threads N] [--check]
 *                   [--layout auto|numpy|matlab] [--var NAME] [--mat-version auto|5|7.3]
 *                   IN VALUES [VECTORS]
 *
 * Exit status: 0 every matrix solved; 1 nothing solved (bad option, file,
 * dtype or shape; unwritable output; solver unavailable), with a one-line
 * reason; 2 some matrices were invalid or did not converge (each named on
 * stderr; their results are NaN, the others are written); 3 --check found a
 * residual or orthogonality ratio over the threshold.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_options.h"
#include "eig.h"
#include "npy.h"
#include "solve_io.h"
#include "solve_layout.h"
#include "workload.h"

enum { EXIT_SOLVED = 0, EXIT_FATAL = 1, EXIT_BAD_MATRIX = 2, EXIT_CHECK_FAILED = 3 };

static const char solve_prog[] = "eigstream-solve";

static const char solve_description[] =
    "Solves every Hermitian matrix of IN like numpy.linalg.eigh(a) (UPLO='L':\n"
    "only the lower triangle, i >= j, is read). Files by extension: .npy, .npz\n"
    "(numpy.savez, savez_compressed), .mat (MATLAB v5 and v7.3).\n"
    "  IN       complex64 or complex128 (a .mat: double or single, real or complex),\n"
    "           (n, n) or a batch: (B, n, n) in the numpy layout, (n, n, B) in the\n"
    "           matlab layout (A(:, :, b)); C or Fortran order\n"
    "  VALUES   written: float32/float64, ascending; (n,), (B, n) or, matlab, (n, B)\n"
    "  VECTORS  written: IN's precision and shape; v[..., :, k] (V(:, k, b)) is the\n"
    "           unit eigenvector of eigenvalue k, so a @ v == v * w[..., None, :]\n"
    "A .npz or .mat output holds the values as 'w' and, when VECTORS is not\n"
    "given, the vectors as 'v' (a VECTORS .npz or .mat holds 'v').\n";

static const char solve_epilogue[] =
    "Exit status: 0 all solved; 1 bad option, file, dtype, shape or output (one-line\n"
    "reason); 2 some matrices invalid or unconverged (named on stderr, results NaN,\n"
    "the others written); 3 --check found a ratio over the threshold.\n";

typedef struct solve_options {
    eig_backend backend;
    int threads;
    int check;
    solve_layout layout;
    const char *var;
    int mat_version; /* 0: the input's (a .mat), else 5; 5 or 73 */
    const char *in_path, *values_path, *vectors_path;
    solve_format in_format, values_format, vectors_format;
} solve_options;

/* cli_parse_fn of --layout: solve_layout_parse into the solve_layout at dest. */
static int parse_layout(const char *text, void *dest)
{
    return solve_layout_parse(text, dest);
}

/* cli_parse_fn of --backend: eig_backend_parse into the eig_backend at dest. */
static int parse_backend(const char *text, void *dest)
{
    return eig_backend_parse(text, dest) == EIG_OK ? 0 : -1;
}

/* The format of an argument by its extension; -1 after naming it on stderr. */
static int format_argument(const char *path, solve_format *format)
{
    if (solve_format_of(path, format) == 0)
        return 0;
    cli_fatal(solve_prog, "%s: not a .npy, .npz or .mat file name", path);
    return -1;
}

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: EXIT_SOLVED after --help, EXIT_FATAL (cli_fatal's 1) after a
 * bad argument (named on stderr in one line). */
static int options_parse(int argc, char **argv, solve_options *o)
{
    *o = (solve_options){.backend = EIG_BACKEND_AUTO, .layout = SOLVE_LAYOUT_AUTO};
    static const char *const mat_versions[] = {"auto", "5", "7.3", NULL};
    static const int mat_version_values[] = {0, 5, 73};
    const cli_option table[] = {
        {.name = "backend", .kind = CLI_KIND_CUSTOM, .dest = &o->backend, .parse = parse_backend,
         .expected = "one of auto, cpu, lapack, cuda", .metavar = "auto|cpu|lapack|cuda",
         .help = "auto: cuda when a GPU is present, else cpu", .default_text = "auto"},
        CLI_INT("threads", 0, &o->threads, 0, INT_MAX, "N", "CPU threads, 0 = all online cores"),
        CLI_FLAG("check", 0, &o->check,
                 "print the solve time, the backend and the worst LAPACK ratios (threshold 60)"),
        {.name = "layout", .kind = CLI_KIND_CUSTOM, .dest = &o->layout, .parse = parse_layout,
         .expected = "one of auto, numpy, matlab", .metavar = "auto|numpy|matlab",
         .help = "where the batch is: numpy (B, n, n), matlab (n, n, B); auto: matlab for a .mat IN",
         .default_text = "auto"},
        {.name = "var", .kind = CLI_KIND_STRING, .dest = &o->var, .metavar = "NAME",
         .help = "the array of a .npz IN, the variable of a .mat IN", .default_text = "the only one there"},
        CLI_CHOICE("mat-version", 0, &o->mat_version, mat_versions, mat_version_values,
                   "a .mat output's format; auto: IN's when IN is a .mat, else 5"),
        CLI_END};
    const cli_spec spec = {.prog = solve_prog, .synopsis = "[options] IN VALUES [VECTORS]",
                           .description = solve_description, .options = table, .positional_max = 3,
                           .epilogue = solve_epilogue};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, EXIT_FATAL);
    if (status >= 0)
        return status;
    if (args.positional_count < 2)
        return cli_fatal(solve_prog, "expected IN VALUES [VECTORS] (try --help)");
    o->in_path = args.positional[0];
    o->values_path = args.positional[1];
    o->vectors_path = args.positional_count == 3 ? args.positional[2] : NULL;
    if (format_argument(o->in_path, &o->in_format) != 0 ||
        format_argument(o->values_path, &o->values_format) != 0 ||
        (o->vectors_path && format_argument(o->vectors_path, &o->vectors_format) != 0))
        return EXIT_FATAL;
    if (o->vectors_path && strcmp(o->vectors_path, o->values_path) == 0)
        return cli_fatal(solve_prog, "VALUES and VECTORS are one file: give a .npz or .mat once, it holds both");
    if (o->layout == SOLVE_LAYOUT_AUTO)
        o->layout = o->in_format == SOLVE_FORMAT_MAT ? SOLVE_LAYOUT_MATLAB : SOLVE_LAYOUT_NUMPY;
    return -1;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Why matrix info is not 0, in words. */
static void info_describe(int info, int n, char *out, size_t size)
{
    if (info == EIG_INFO_NONFINITE)
        snprintf(out, size, "NaN or Inf in the lower triangle");
    else if (info == EIG_INFO_NONREAL_DIAGONAL)
        snprintf(out, size, "diagonal is not real");
    else if (info > 0)
        snprintf(out, size, "QR did not converge (%d of %d eigenvalues left)", info, n);
    else
        snprintf(out, size, "invalid input (info %d)", info);
}

/* A max that a NaN wins, so a NaN ratio is never hidden by a later finite one. */
static int ratio_worse(double candidate, double worst)
{
    return isnan(candidate) || (!isnan(worst) && candidate > worst);
}

/* Prints the worst residual and orthogonality ratios over the converged
 * matrices; returns 1 when both are within the threshold. full: the Hermitian
 * matrices (column-major, both triangles), w and z: the solver's output. */
static int check_report(const void *full, const void *w, const void *z, const int *info,
                        size_t batch, int n, eig_precision precision)
{
    const size_t es = precision == EIG_COMPLEX_FLOAT ? 2 * sizeof(float) : 2 * sizeof(double);
    const size_t rs = es / 2;
    double *ratios = malloc(2 * batch * sizeof *ratios);
    if (!ratios) {
        fprintf(stderr, "eigstream-solve: --check: out of memory\n");
        return 0;
    }
    const size_t nn = (size_t)n * (size_t)n;
#pragma omp parallel for schedule(dynamic)
    for (long b = 0; b < (long)batch; b++) {
        if (info[b] != 0)
            continue;
        ratios[2 * b] = workload_residual_ratio(n, precision, (const char *)full + b * nn * es,
                                                (const char *)w + b * (size_t)n * rs,
                                                (const char *)z + b * nn * es);
        ratios[2 * b + 1] =
            workload_orthogonality_ratio(n, precision, (const char *)z + b * nn * es);
    }
    double worst[2] = {0.0, 0.0};
    long worst_at[2] = {-1, -1};
    size_t skipped = 0;
    for (size_t b = 0; b < batch; b++) {
        if (info[b] != 0) {
            skipped++;
            continue;
        }
        for (int r = 0; r < 2; r++) {
            if (worst_at[r] < 0 || ratio_worse(ratios[2 * b + r], worst[r])) {
                worst[r] = ratios[2 * b + r];
                worst_at[r] = (long)b;
            }
        }
    }
    free(ratios);
    int pass = !isnan(worst[0]) && !isnan(worst[1]) && worst[0] < WORKLOAD_RATIO_THRESHOLD &&
               worst[1] < WORKLOAD_RATIO_THRESHOLD;
    if (skipped == batch) {
        printf("check: no converged matrix to check\n");
        return 1;
    }
    printf("check: residual ratio max %.3g (matrix %ld), orthogonality ratio max %.3g "
           "(matrix %ld), threshold %.0f: %s",
           worst[0], worst_at[0], worst[1], worst_at[1], WORKLOAD_RATIO_THRESHOLD,
           pass ? "PASS" : "FAIL");
    if (skipped)
        printf(" (%zu unsolved matrices not checked)", skipped);
    putchar('\n');
    return pass;
}

/* The solution as arrays of the input's layout: values w (the solver's
 * batch * n, matrix after matrix) and vectors v (NULL: none written), which
 * is the solver's column-major z in the matlab layout and z scattered into
 * C order (solve_scatter_vectors) in the numpy layout. */
typedef struct solve_result {
    npy_dtype real_dtype, complex_dtype;
    const void *w, *v;
} solve_result;

/* Writes the result where the options say: VALUES gets 'w' (and 'v' when it
 * is a .npz or .mat and no VECTORS is given), VECTORS 'v'. Returns
 * EXIT_SOLVED, or EXIT_FATAL after naming the failure. */
static int outputs_write(const solve_options *o, const solve_geometry *g, const solve_result *r,
                         solve_mat_version in_version)
{
    const int matlab = o->layout == SOLVE_LAYOUT_MATLAB;
    size_t values_shape[2], vectors_shape[3] = {g->batch, g->n, g->n};
    if (!g->batched)
        values_shape[0] = g->n;
    else if (matlab)
        values_shape[0] = g->n, values_shape[1] = g->batch;
    else
        values_shape[0] = g->batch, values_shape[1] = g->n;
    if (g->batched && matlab)
        vectors_shape[0] = g->n, vectors_shape[2] = g->batch;
    npz_entry entries[2] = {
        {"w", r->real_dtype, matlab, g->batched ? 2 : 1, values_shape, r->w},
        {"v", r->complex_dtype, matlab, g->batched ? 3 : 2, g->batched ? vectors_shape : vectors_shape + 1, r->v}};
    solve_mat_version version = o->mat_version == 73 ? SOLVE_MAT_V73 : SOLVE_MAT_V5;
    if (o->mat_version == 0 && o->in_format == SOLVE_FORMAT_MAT)
        version = in_version;
    const int together = r->v && !o->vectors_path;
    char detail[NPY_DETAIL_SIZE];
    npy_error e = solve_output_write(o->values_path, o->values_format, version, entries, together ? 2 : 1, detail);
    if (e == NPY_OK && r->v && o->vectors_path)
        e = solve_output_write(o->vectors_path, o->vectors_format, version, &entries[1], 1, detail);
    if (e != NPY_OK)
        return cli_fatal(solve_prog, "%s", detail);
    return EXIT_SOLVED;
}

/* Solves the validated input; owns nothing it does not free. */
static int solve_run(const solve_options *o, npy_array *in, const solve_geometry *g, solve_mat_version in_version)
{
    const eig_precision precision =
        in->dtype == NPY_COMPLEX64 ? EIG_COMPLEX_FLOAT : EIG_COMPLEX_DOUBLE;
    solve_result result = {in->dtype == NPY_COMPLEX64 ? NPY_FLOAT32 : NPY_FLOAT64, in->dtype, NULL, NULL};
    const size_t batch = g->batch, n = g->n;
    const int vectors_out = o->vectors_path || solve_format_is_container(o->values_format);
    if (batch == 0 || n == 0) {
        if (o->check)
            printf("check: empty input, nothing solved\n");
        result.v = vectors_out ? in->data : NULL;
        return outputs_write(o, g, &result, in_version);
    }
    if (n > EIG_N_MAX || batch > INT_MAX)
        return cli_fatal(solve_prog, "%s: %zu matrices of order %zu exceed the solver's limits (n <= %d)",
                     o->in_path, batch, n, EIG_N_MAX);

    const int want_vectors = vectors_out || o->check;
    const size_t es = npy_dtype_size(in->dtype);
    const size_t rs = npy_dtype_size(result.real_dtype);
    void *full = malloc(batch * n * n * es);
    void *w = malloc(batch * n * rs);
    void *z = want_vectors ? malloc(batch * n * n * es) : NULL;
    int *info = malloc(batch * sizeof *info);
    eig_plan *plan = NULL;
    int status = EXIT_FATAL;
    if (!full || !w || (want_vectors && !z) || !info) {
        cli_fatal(solve_prog, "out of memory for %zu matrices of order %zu", batch, n);
        goto done;
    }
    solve_gather_lower(in->data, g, precision, full);

    eig_plan_params p = eig_plan_params_default();
    p.n = (int)n;
    p.batch = (int)batch;
    p.precision = precision;
    p.job = want_vectors ? EIG_JOB_VECTORS : EIG_JOB_VALUES;
    p.backend = o->backend;
    p.threads = o->threads;
    eig_error e = eig_plan_create(&plan, &p);
    if (e != EIG_OK) {
        cli_fatal(solve_prog, "cannot create a plan for backend %s: %s", eig_backend_name(o->backend), eig_strerror(e));
        goto done;
    }
    double start = now_ms();
    e = eig_plan_execute(plan, full, w, z, info);
    double elapsed = now_ms() - start;
    if (e != EIG_OK && e != EIG_EMATRIX) {
        cli_fatal(solve_prog, "solver failed: %s", eig_strerror(e));
        goto done;
    }

    status = EXIT_SOLVED;
    for (size_t b = 0; b < batch; b++) {
        if (info[b] != 0) {
            char why[96];
            info_describe(info[b], (int)n, why, sizeof why);
            fprintf(stderr, "eigstream-solve: matrix %zu: %s (info %d); its results are NaN\n", b,
                    why, info[b]);
            status = EXIT_BAD_MATRIX;
        }
    }
    if (o->check) {
        const eig_plan_params *used = eig_plan_get_params(plan);
        printf("solve: %zu %s of %zux%zu %s, backend %s, %.3f ms\n", batch,
               batch == 1 ? "matrix" : "matrices", n, n,
               precision == EIG_COMPLEX_FLOAT ? "complex float" : "complex double",
               eig_backend_name(used->backend), elapsed);
        if (!check_report(full, w, z, info, batch, (int)n, precision) && status == EXIT_SOLVED)
            status = EXIT_CHECK_FAILED;
    }

    result.w = w;
    if (vectors_out && o->layout == SOLVE_LAYOUT_MATLAB) {
        result.v = z; /* V(i, k, b) column-major is the solver's own layout */
    } else if (vectors_out) {
        /* The input's buffer has the vectors' size and dtype and is no longer needed. */
        solve_scatter_vectors(z, batch, n, precision, in->data);
        result.v = in->data;
    }
    if (outputs_write(o, g, &result, in_version) != EXIT_SOLVED)
        status = EXIT_FATAL;
done:
    eig_plan_destroy(&plan);
    free(full);
    free(w);
    free(z);
    free(info);
    return status;
}

/* The tool once its options are parsed (CLI_MAIN below); the exit status. */
static int tool_main(solve_options *o)
{
    int status;
    npy_array in;
    solve_mat_version in_version;
    char detail[NPY_DETAIL_SIZE];
    npy_error e = solve_input_read(o->in_path, o->in_format, o->var, &in, &in_version, detail);
    if (e == NPY_EDTYPE && o->in_format != SOLVE_FORMAT_MAT)
        /* the reader's list names real dtypes too, which solve does not take */
        return cli_fatal(solve_prog, "%s: %s; eigstream-solve takes complex <c8 or <c16 only (NumPy: "
                         "a.astype(np.complex128))", o->in_path, detail);
    if (e != NPY_OK)
        return cli_fatal(solve_prog, "%s: %s", o->in_path, detail);
    solve_geometry g;
    char why[256];
    if (in.dtype != NPY_COMPLEX64 && in.dtype != NPY_COMPLEX128)
        status = cli_fatal(solve_prog, "%s: dtype %s is not complex (expected <c8 or <c16; NumPy: "
                           "a.astype(np.complex128))", o->in_path, npy_dtype_descr(in.dtype));
    else if (solve_geometry_of(in.ndim, in.shape, in.fortran_order, o->layout, &g, why, sizeof why) != 0)
        status = cli_fatal(solve_prog, "%s: %s", o->in_path, why);
    else
        status = solve_run(o, &in, &g, in_version);
    npy_array_free(&in);
    return status;
}

CLI_MAIN(main, solve_options, options_parse, tool_main)
