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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig.h"
#include "npy.h"
#include "workload.h"

static const char usage[] =
    "usage: eigstream-gen [--kind radar|random|TYPE] [--batch B] [--n N]\n"
    "                     [--precision c64|c128] [--seed S] OUT.npy\n"
    "\n"
    "Writes B Hermitian n x n matrices as a (B, n, n) C-order .npy array.\n"
    "  --kind K       radar (default): sample covariances of a uniform linear array,\n"
    "                 3 sources 10-30 dB over unit noise, 2n snapshots, one scene\n"
    "                 per matrix; random: random Hermitian (LAPACK type 13);\n"
    "                 1-22 or a type name (zero, identity, ..., see below): LAPACK's\n"
    "                 test matrix types 1-18 and radar types 19-22, matrix b\n"
    "                 drawn from seed S + b\n"
    "  --batch B      number of matrices (default 180)\n"
    "  --n N          matrix order (default 128)\n"
    "  --precision P  c128 (complex128, default) or c64 (complex64)\n"
    "  --seed S       seed (default 1)\n"
    "  -h, --help     this text\n";

typedef struct gen_options {
    int kind; /* 0 radar, -1 random, else a workload_type */
    long batch, n;
    eig_precision precision;
    uint64_t seed;
    const char *out_path;
} gen_options;

/* Prints "eigstream-gen: <reason>" on stderr; returns 1. */
static int fatal(const char *format, ...) __attribute__((format(printf, 1, 2)));
static int fatal(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("eigstream-gen: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    return 1;
}

static int parse_count(const char *text, long max, long *out)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < 1 || value > max)
        return -1;
    *out = value;
    return 0;
}

static int parse_kind(const char *text, int *out)
{
    if (strcmp(text, "radar") == 0) {
        *out = 0;
        return 0;
    }
    if (strcmp(text, "random") == 0) {
        *out = -1;
        return 0;
    }
    long type;
    if (parse_count(text, WORKLOAD_TYPE_MAX, &type) == 0) {
        *out = (int)type;
        return 0;
    }
    for (int t = WORKLOAD_TYPE_MIN; t <= WORKLOAD_TYPE_MAX; t++) {
        if (strcmp(text, workload_type_name(t)) == 0) {
            *out = t;
            return 0;
        }
    }
    return -1;
}

static void print_types(FILE *to)
{
    fputs("matrix types:", to);
    for (int t = WORKLOAD_TYPE_MIN; t <= WORKLOAD_TYPE_MAX; t++)
        fprintf(to, "%s %d %s", t == WORKLOAD_TYPE_MIN ? "" : ",", t, workload_type_name(t));
    fputc('\n', to);
}

/* Parses argv; returns -1 to go on, else the exit status. */
static int options_parse(int argc, char **argv, gen_options *o)
{
    *o = (gen_options){0, 180, 128, EIG_COMPLEX_DOUBLE, 1, NULL};
    for (int k = 1; k < argc; k++) {
        const char *arg = argv[k];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(usage, stdout);
            print_types(stdout);
            return 0;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (o->out_path)
                return fatal("more than one output file (try --help)");
            o->out_path = arg;
            continue;
        }
        size_t name_length = strcspn(arg, "=");
        const char *value = arg[name_length] == '=' ? arg + name_length + 1
                            : k + 1 < argc          ? argv[++k]
                                                    : NULL;
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)name_length, arg);
        if (!value)
            return fatal("%s needs a value (try --help)", name);
        if (strcmp(name, "--kind") == 0) {
            if (parse_kind(value, &o->kind) != 0)
                return fatal("unknown --kind '%s' (radar, random, 1-22 or a type name; try --help)",
                             value);
        } else if (strcmp(name, "--batch") == 0) {
            if (parse_count(value, INT_MAX, &o->batch) != 0)
                return fatal("--batch wants a count >= 1, not '%s'", value);
        } else if (strcmp(name, "--n") == 0) {
            if (parse_count(value, EIG_N_MAX, &o->n) != 0)
                return fatal("--n wants an order 1..%d, not '%s'", EIG_N_MAX, value);
        } else if (strcmp(name, "--precision") == 0) {
            if (strcmp(value, "c128") == 0)
                o->precision = EIG_COMPLEX_DOUBLE;
            else if (strcmp(value, "c64") == 0)
                o->precision = EIG_COMPLEX_FLOAT;
            else
                return fatal("--precision wants c64 or c128, not '%s'", value);
        } else if (strcmp(name, "--seed") == 0) {
            char *end;
            errno = 0;
            unsigned long long seed = strtoull(value, &end, 0);
            if (errno || end == value || *end || value[0] == '-')
                return fatal("--seed wants an unsigned integer, not '%s'", value);
            o->seed = seed;
        } else {
            return fatal("unknown option '%s' (try --help)", arg);
        }
    }
    if (!o->out_path)
        return fatal("expected OUT.npy (try --help)");
    return -1;
}

int main(int argc, char **argv)
{
    gen_options o;
    int status = options_parse(argc, argv, &o);
    if (status >= 0)
        return status;

    const size_t n = (size_t)o.n, batch = (size_t)o.batch;
    const size_t es = o.precision == EIG_COMPLEX_FLOAT ? 2 * sizeof(float) : 2 * sizeof(double);
    if (batch > SIZE_MAX / (n * n * es))
        return fatal("%zu matrices of order %zu do not fit in memory", batch, n);
    char *column_major = malloc(batch * n * n * es);
    char *c_order = malloc(batch * n * n * es);
    if (!column_major || !c_order) {
        free(column_major);
        free(c_order);
        return fatal("out of memory for %zu matrices of order %zu", batch, n);
    }

    int rc = 0;
    if (o.kind == 0)
        rc = workload_radar_batch((int)n, (int)batch, o.precision, o.seed, column_major);
    else if (o.kind < 0)
        rc = workload_random_batch((int)n, (int)batch, o.precision, o.seed, column_major);
    else
        for (size_t b = 0; b < batch && rc >= 0; b++)
            rc = workload_generate(o.kind, (int)n, o.precision, o.seed + b,
                                   column_major + b * n * n * es, NULL);
    if (rc < 0) {
        free(column_major);
        free(c_order);
        return fatal("the generator rejected kind %d, n %zu", o.kind, n);
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
    npy_error e = npy_write(o.out_path, o.precision == EIG_COMPLEX_FLOAT ? NPY_COMPLEX64 : NPY_COMPLEX128,
                            0, 3, shape, c_order, detail);
    free(c_order);
    if (e != NPY_OK)
        return fatal("%s", detail);
    return 0;
}
