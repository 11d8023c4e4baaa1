/*
 * solve_io.c - eigstream-solve's file formats, dispatched by extension.
 */
#include "solve_io.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int solve_format_of(const char *path, solve_format *out)
{
    static const struct {
        const char *extension;
        solve_format format;
    } known[] = {{".npy", SOLVE_FORMAT_NPY}, {".npz", SOLVE_FORMAT_NPZ}, {".mat", SOLVE_FORMAT_MAT}};
    const size_t length = path ? strlen(path) : 0;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        if (length > 4 && strcasecmp(path + length - 4, known[k].extension) == 0) {
            *out = known[k].format;
            return 0;
        }
    }
    return -1;
}

int solve_format_is_container(solve_format format)
{
    return format == SOLVE_FORMAT_NPZ || format == SOLVE_FORMAT_MAT;
}

npy_error solve_input_read(const char *path, solve_format format, const char *name, npy_array *out,
                           solve_mat_version *version, char *detail)
{
    *version = SOLVE_MAT_V5;
    switch (format) {
    case SOLVE_FORMAT_NPY:
        if (name) {
            memset(out, 0, sizeof *out);
            snprintf(detail, NPY_DETAIL_SIZE, "--var names an array of a .npz or .mat; a .npy holds one");
            return NPY_EINVAL;
        }
        return npy_read(path, out, detail);
    case SOLVE_FORMAT_NPZ:
        return npz_read(path, name, out, detail);
    case SOLVE_FORMAT_MAT:
        return solve_mat_read(path, name, out, version, detail);
    }
    return NPY_EINVAL;
}

npy_error solve_output_write(const char *path, solve_format format, solve_mat_version version,
                             const npz_entry *entries, size_t count, char *detail)
{
    switch (format) {
    case SOLVE_FORMAT_NPY:
        if (count != 1) {
            snprintf(detail, NPY_DETAIL_SIZE, "%s: a .npy holds one array", path);
            return NPY_EINVAL;
        }
        return npy_write(path, entries[0].dtype, entries[0].fortran_order, entries[0].ndim, entries[0].shape,
                         entries[0].data, detail);
    case SOLVE_FORMAT_NPZ:
        return npz_write(path, entries, count, detail);
    case SOLVE_FORMAT_MAT:
        return solve_mat_write(path, version, entries, count, detail);
    }
    return NPY_EINVAL;
}
