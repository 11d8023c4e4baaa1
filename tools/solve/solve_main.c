/*
 * eigstream-solve - eigenvalues and eigenvectors of Hermitian matrices in
 * .npy files, with numpy.linalg.eigh's conventions.
 *
 *   eigstream-solve [--backend auto|cpu|lapack|cuda] [--threads N] [--check]
 *                   IN.npy VALUES.npy [VECTORS.npy]
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
#include "solve_layout.h"
#include "workload.h"

enum { EXIT_SOLVED = 0, EXIT_FATAL = 1, EXIT_BAD_MATRIX = 2, EXIT_CHECK_FAILED = 3 };

static const char solve_prog[] = "eigstream-solve";

static const char solve_description[] =
    "Solves every Hermitian matrix of IN.npy like numpy.linalg.eigh(a) (UPLO='L':\n"
    "only the lower triangle a[..., i, j], i >= j, is read).\n"
    "  IN.npy       complex64 or complex128, shape (n, n) or (B, n, n), C or Fortran order\n"
    "  VALUES.npy   written: float32/float64, shape (n,) or (B, n), ascending\n"
    "  VECTORS.npy  written: IN's dtype and shape; v[..., :, k] is the unit\n"
    "               eigenvector of eigenvalue k, so a @ v == v * w[..., None, :]\n";

static const char solve_epilogue[] =
    "Exit status: 0 all solved; 1 bad option, file, dtype, shape or output (one-line\n"
    "reason); 2 some matrices invalid or unconverged (named on stderr, results NaN,\n"
    "the others written); 3 --check found a ratio over the threshold.\n";

typedef struct solve_options {
    eig_backend backend;
    int threads;
    int check;
    const char *in_path, *values_path, *vectors_path;
} solve_options;

/* cli_parse_fn of --backend: eig_backend_parse into the eig_backend at dest. */
static int parse_backend(const char *text, void *dest)
{
    return eig_backend_parse(text, dest) == EIG_OK ? 0 : -1;
}

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: EXIT_SOLVED after --help, EXIT_FATAL (cli_fatal's 1) after a
 * bad argument (named on stderr in one line). */
static int options_parse(int argc, char **argv, solve_options *o)
{
    *o = (solve_options){EIG_BACKEND_AUTO, 0, 0, NULL, NULL, NULL};
    const cli_option table[] = {
        {.name = "backend", .kind = CLI_KIND_CUSTOM, .dest = &o->backend, .parse = parse_backend,
         .expected = "one of auto, cpu, lapack, cuda", .metavar = "auto|cpu|lapack|cuda",
         .help = "auto: cuda when a GPU is present, else cpu", .default_text = "auto"},
        CLI_INT("threads", 0, &o->threads, 0, INT_MAX, "N", "CPU threads, 0 = all online cores"),
        CLI_FLAG("check", 0, &o->check,
                 "print the solve time, the backend and the worst LAPACK ratios (threshold 60)"),
        CLI_END};
    const cli_spec spec = {.prog = solve_prog, .synopsis = "[options] IN.npy VALUES.npy [VECTORS.npy]",
                           .description = solve_description, .options = table, .positional_max = 3,
                           .epilogue = solve_epilogue};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, EXIT_FATAL);
    if (status >= 0)
        return status;
    if (args.positional_count < 2)
        return cli_fatal(solve_prog, "expected IN.npy VALUES.npy [VECTORS.npy] (try --help)");
    o->in_path = args.positional[0];
    o->values_path = args.positional[1];
    o->vectors_path = args.positional_count == 3 ? args.positional[2] : NULL;
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

/* Writes values (and vectors) of an empty input: batch or n is 0. */
static int solve_empty(const solve_options *o, const npy_array *in, npy_dtype real_dtype)
{
    char detail[NPY_DETAIL_SIZE];
    size_t values_shape[2] = {in->shape[0], in->shape[1]};
    npy_error e = npy_write(o->values_path, real_dtype, 0, in->ndim - 1, values_shape, NULL, detail);
    if (e == NPY_OK && o->vectors_path)
        e = npy_write(o->vectors_path, in->dtype, 0, in->ndim, in->shape, NULL, detail);
    if (e != NPY_OK)
        return cli_fatal(solve_prog, "%s", detail);
    if (o->check)
        printf("check: empty input, nothing solved\n");
    return EXIT_SOLVED;
}

/* Solves the validated input; owns nothing it does not free. */
static int solve_run(const solve_options *o, npy_array *in)
{
    const eig_precision precision =
        in->dtype == NPY_COMPLEX64 ? EIG_COMPLEX_FLOAT : EIG_COMPLEX_DOUBLE;
    const npy_dtype real_dtype = in->dtype == NPY_COMPLEX64 ? NPY_FLOAT32 : NPY_FLOAT64;
    const size_t batch = in->ndim == 3 ? in->shape[0] : 1;
    const size_t n = in->shape[in->ndim - 1];
    if (batch == 0 || n == 0)
        return solve_empty(o, in, real_dtype);
    if (n > EIG_N_MAX || batch > INT_MAX)
        return cli_fatal(solve_prog, "%s: %zu matrices of order %zu exceed the solver's limits (n <= %d)",
                     o->in_path, batch, n, EIG_N_MAX);

    const int want_vectors = o->vectors_path || o->check;
    const size_t es = npy_dtype_size(in->dtype);
    const size_t rs = npy_dtype_size(real_dtype);
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
    solve_gather_lower(in->data, batch, n, in->fortran_order, precision, full);

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

    char detail[NPY_DETAIL_SIZE];
    size_t values_shape[2] = {batch, n};
    npy_error ne = in->ndim == 3
                       ? npy_write(o->values_path, real_dtype, 0, 2, values_shape, w, detail)
                       : npy_write(o->values_path, real_dtype, 0, 1, &values_shape[1], w, detail);
    if (ne == NPY_OK && o->vectors_path) {
        /* The input's buffer has the vectors' size and dtype and is no longer needed. */
        solve_scatter_vectors(z, batch, n, precision, in->data);
        ne = npy_write(o->vectors_path, in->dtype, 0, in->ndim, in->shape, in->data, detail);
    }
    if (ne != NPY_OK)
        status = cli_fatal(solve_prog, "%s", detail);
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
    char detail[NPY_DETAIL_SIZE];
    npy_error e = npy_read(o->in_path, &in, detail);
    if (e == NPY_EDTYPE) /* the reader's list names real dtypes too, which solve does not take */
        return cli_fatal(solve_prog, "%s: %s; eigstream-solve takes complex <c8 or <c16 only (NumPy: "
                         "a.astype(np.complex128))", o->in_path, detail);
    if (e != NPY_OK)
        return cli_fatal(solve_prog, "%s: %s", o->in_path, detail);
    char shape_text[64] = "";
    for (int d = 0, used = 0; d < in.ndim && used < (int)sizeof shape_text; d++)
        used += snprintf(shape_text + used, sizeof shape_text - (size_t)used, d ? ", %zu" : "%zu",
                         in.shape[d]);
    if (in.dtype != NPY_COMPLEX64 && in.dtype != NPY_COMPLEX128)
        status = cli_fatal(solve_prog, "%s: dtype %s is not complex (expected <c8 or <c16; NumPy: "
                           "a.astype(np.complex128))", o->in_path, npy_dtype_descr(in.dtype));
    else if (in.ndim != 2 && in.ndim != 3)
        status = cli_fatal(solve_prog, "%s: shape (%s) is not (n, n) or (B, n, n)", o->in_path, shape_text);
    else if (in.shape[in.ndim - 1] != in.shape[in.ndim - 2])
        status = cli_fatal(solve_prog, "%s: shape (%s) is not square", o->in_path, shape_text);
    else
        status = solve_run(o, &in);
    npy_array_free(&in);
    return status;
}

CLI_MAIN(main, solve_options, options_parse, tool_main)
