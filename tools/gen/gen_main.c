/*
 * eigstream-gen - writes a batch of Hermitian test matrices to a .npy file.
 *
 *   eigstream-gen [--kind radar|random|TYPE] [--batch B] [--n N]
 *                 [--precision c64|c128] [--seed S] OUT.npy
 *
 * The file holds a (B, n, n) C-order complex64/complex128 array, both
 * triangles filled, ready for eigstream-solve or numpy.linalg.eigh. The same
 * arguments give the same bytes on every machine (eigstream_workload).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "eig.h"
#include "npy.h"
#include "workload.h"

static const char gen_prog[] = "eigstream-gen";

static const char gen_description[] =
    "Writes B Hermitian n x n matrices as a (B, n, n) C-order .npy array.\n"
    "--kind K: radar (default): sample covariances of a uniform linear array,\n"
    "3 sources 10-30 dB over unit noise, 2n snapshots, one scene per matrix;\n"
    "random: random Hermitian (LAPACK type 13); 1-22 or a type name (zero,\n"
    "identity, ..., see below): LAPACK's test matrix types 1-18 and radar types\n"
    "19-22, matrix b drawn from seed S + b.\n";

typedef struct gen_options {
    int kind; /* 0 radar, -1 random, else a workload_type */
    long batch, n;
    eig_precision precision;
    uint64_t seed;
    const char *out_path;
} gen_options;

/* cli_parse_fn of --kind: radar (0), random (-1), a type number or a type
 * name (the workload_type) into the int at dest; 0, or -1 for other text. */
static int parse_kind(const char *text, void *dest)
{
    int *kind = dest;
    if (strcmp(text, "radar") == 0 || strcmp(text, "random") == 0) {
        *kind = strcmp(text, "radar") == 0 ? 0 : -1;
        return 0;
    }
    char *end;
    errno = 0;
    long type = strtol(text, &end, 10);
    if (errno == 0 && end != text && *end == '\0' && type >= 1 && type <= WORKLOAD_TYPE_MAX) {
        *kind = (int)type;
        return 0;
    }
    for (int t = WORKLOAD_TYPE_MIN; t <= WORKLOAD_TYPE_MAX; t++) {
        if (strcmp(text, workload_type_name(t)) == 0) {
            *kind = t;
            return 0;
        }
    }
    return -1;
}

/* The --help epilogue: every matrix type, number and name. */
static void print_types(FILE *to)
{
    fputs("matrix types:", to);
    for (int t = WORKLOAD_TYPE_MIN; t <= WORKLOAD_TYPE_MAX; t++)
        fprintf(to, "%s %d %s", t == WORKLOAD_TYPE_MIN ? "" : ",", t, workload_type_name(t));
    fputc('\n', to);
}

static const char *const gen_precisions[] = {"c128", "c64", NULL};
static const int gen_precision_values[] = {EIG_COMPLEX_DOUBLE, EIG_COMPLEX_FLOAT};

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: 0 after --help, 1 after a bad argument (named on stderr). */
static int options_parse(int argc, char **argv, gen_options *o)
{
    *o = (gen_options){0, 180, 128, EIG_COMPLEX_DOUBLE, 1, NULL};
    int precision = EIG_COMPLEX_DOUBLE;
    const cli_option table[] = {
        {.name = "kind", .kind = CLI_KIND_CUSTOM, .dest = &o->kind, .parse = parse_kind,
         .expected = "radar, random, 1-22 or a type name", .metavar = "K",
         .help = "radar, random, or a matrix type (see below)", .default_text = "radar"},
        CLI_INT("batch", 0, &o->batch, 1, INT_MAX, "B", "number of matrices"),
        CLI_INT("n", 0, &o->n, 1, EIG_N_MAX, "N", "matrix order"),
        CLI_CHOICE("precision", 0, &precision, gen_precisions, gen_precision_values,
                   "complex128 or complex64"),
        CLI_INT("seed", 0, &o->seed, 0, UINT64_MAX, "S", "seed"),
        CLI_END};
    const cli_spec spec = {.prog = gen_prog, .synopsis = "[options] OUT.npy", .description = gen_description,
                           .options = table, .positional_max = 1, .epilogue_print = print_types};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 1);
    o->precision = (eig_precision)precision;
    o->out_path = args.positional[0];
    if (status < 0 && o->out_path == NULL)
        return cli_fatal(gen_prog, "expected OUT.npy (try --help)");
    return status;
}

/* The tool once its options are parsed (CLI_MAIN below); the exit status. */
static int tool_main(gen_options *o)
{
    const size_t n = (size_t)o->n, batch = (size_t)o->batch;
    const size_t es = o->precision == EIG_COMPLEX_FLOAT ? 2 * sizeof(float) : 2 * sizeof(double);
    if (batch > SIZE_MAX / (n * n * es))
        return cli_fatal(gen_prog, "%zu matrices of order %zu do not fit in memory", batch, n);
    char *column_major = malloc(batch * n * n * es);
    char *c_order = malloc(batch * n * n * es);
    if (!column_major || !c_order) {
        free(column_major);
        free(c_order);
        return cli_fatal(gen_prog, "out of memory for %zu matrices of order %zu", batch, n);
    }

    int rc = 0;
    if (o->kind == 0)
        rc = workload_radar_batch((int)n, (int)batch, o->precision, o->seed, column_major);
    else if (o->kind < 0)
        rc = workload_random_batch((int)n, (int)batch, o->precision, o->seed, column_major);
    else
        for (size_t b = 0; b < batch && rc >= 0; b++)
            rc = workload_generate(o->kind, (int)n, o->precision, o->seed + b,
                                   column_major + b * n * n * es, NULL);
    if (rc < 0) {
        free(column_major);
        free(c_order);
        return cli_fatal(gen_prog, "the generator rejected kind %d, n %zu", o->kind, n);
    }

    /* Column-major A(i,j) at i + j*n becomes NumPy's a[b][i][j] at i*n + j. */
    for (size_t b = 0; b < batch; b++)
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                memcpy(c_order + (b * n * n + i * n + j) * es,
                       column_major + (b * n * n + i + j * n) * es, es);
    free(column_major);

    const size_t shape[3] = {batch, n, n};
    char detail[NPY_DETAIL_SIZE];
    npy_error e = npy_write(o->out_path, o->precision == EIG_COMPLEX_FLOAT ? NPY_COMPLEX64 : NPY_COMPLEX128,
                            0, 3, shape, c_order, detail);
    free(c_order);
    if (e != NPY_OK)
        return cli_fatal(gen_prog, "%s", detail);
    return 0;
}

CLI_MAIN(main, gen_options, options_parse, tool_main)
