/*
 * form_iq_npy.c - the test helper behind test_form_iq_numpy.py: forms one
 * raw cube with the CPU plan (form_iq.h) and writes what NumPy checks.
 *
 *   form_iq_npy CUBE OUT_DIR channels pulses gates format layout precision window
 *               sidelobe_db fft_size bin_first bin_count segments guard_gates scale
 *
 * CUBE holds the raw cube bytes as on the wire (format and layout codes of
 * protocol.h, precision 1 = c64, 2 = c128, window as form_window). Writes
 *   OUT_DIR/matrices.npy  (matrices, n, n) of <c8 or <c16, C order, element
 *                         [m, k, j] = R[m](j, k) (the column-major matrices as
 *                         they are in memory); the strict upper triangle of R
 *                         is zero (the plan writes the lower one only)
 *   OUT_DIR/window.npy    the pulses window coefficients (<f8)
 * Exit 0, or 1 with the reason on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form_iq.h"
#include "npy.h"
#include "protocol.h"

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "form_iq_npy: %s: %s\n", what, why);
    return 1;
}

/* The 14 numeric arguments after CUBE and OUT_DIR, in the usage's order. */
static int parse(char **arg, form_iq_params *q, float *scale)
{
    double v[14];
    for (int i = 0; i < 14; i++) {
        char *end;
        v[i] = strtod(arg[i], &end);
        if (end == arg[i] || *end != '\0')
            return -1;
    }
    *q = (form_iq_params){.channels = (uint32_t)v[0], .pulses = (uint32_t)v[1], .gates = (uint32_t)v[2],
                          .format = (uint8_t)v[3], .layout = (uint8_t)v[4], .precision = (eig_precision)v[5],
                          .window = (form_window)v[6], .sidelobe_db = v[7], .fft_size = (uint32_t)v[8],
                          .bin_first = (uint32_t)v[9], .bin_count = (uint32_t)v[10], .segments = (uint32_t)v[11],
                          .guard_gates = (uint32_t)v[12], .threads = 2};
    *scale = (float)v[13];
    return 0;
}

static void *read_file(const char *name, size_t want)
{
    FILE *f = fopen(name, "rb");
    void *data = malloc(want + 1);
    size_t got = f != NULL && data != NULL ? fread(data, 1, want + 1, f) : 0;
    if (f != NULL)
        fclose(f);
    if (got != want) {
        free(data);
        return NULL;
    }
    return data;
}

int main(int argc, char **argv)
{
    form_iq_params q;
    float scale;
    char err[256], detail[NPY_DETAIL_SIZE], name[1024];
    if (argc != 17 || parse(argv + 3, &q, &scale) != 0)
        return fail("usage", "form_iq_npy CUBE OUT_DIR channels pulses gates format layout precision window "
                             "sidelobe_db fft_size bin_first bin_count segments guard_gates scale");
    form_iq *plan = NULL;
    if (form_iq_create(&plan, &q, err, sizeof err) != FORM_IQ_OK)
        return fail("form_iq_create", err);
    size_t n = q.channels, count = form_iq_matrices(&q), element = eig_element_bytes(q.precision);
    size_t bytes = protocol_iq_cube_bytes(q.channels, q.pulses, q.gates, q.format);
    void *cube = read_file(argv[1], bytes), *out = calloc(count * n * n, element);
    double *window = malloc(q.pulses * sizeof *window);
    int rc = 1;
    if (cube == NULL || out == NULL || window == NULL)
        fail(argv[1], "cannot read the cube (missing, or not the size the parameters give)");
    else if (form_iq_execute(plan, cube, scale, out) != FORM_IQ_OK)
        fail("form_iq_execute", "refused");
    else if (form_iq_window_coefficients(q.window, q.sidelobe_db, q.pulses, window) != FORM_IQ_OK)
        fail("form_iq_window_coefficients", "refused");
    else {
        size_t shape[3] = {count, n, n}, wshape[1] = {q.pulses};
        snprintf(name, sizeof name, "%s/matrices.npy", argv[2]);
        npy_error e = npy_write(name, q.precision == EIG_COMPLEX_DOUBLE ? NPY_COMPLEX128 : NPY_COMPLEX64, 0, 3,
                                shape, out, detail);
        if (e == NPY_OK) {
            snprintf(name, sizeof name, "%s/window.npy", argv[2]);
            e = npy_write(name, NPY_FLOAT64, 0, 1, wshape, window, detail);
        }
        rc = e == NPY_OK ? 0 : fail(name, detail);
    }
    free(cube);
    free(out);
    free(window);
    form_iq_destroy(&plan);
    return rc;
}
