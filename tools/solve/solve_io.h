/*
 * solve_io.h - eigstream-solve's files: .npy, .npz and .mat, told apart by
 * their extension, read into and written from the arrays of npy.h.
 */
#ifndef EIGSTREAM_SOLVE_IO_H
#define EIGSTREAM_SOLVE_IO_H

#include "npy.h"
#include "npz.h"
#include "solve_mat.h"

typedef enum solve_format {
    SOLVE_FORMAT_NPY = 0, /* one array (npy.h) */
    SOLVE_FORMAT_NPZ,     /* named arrays in a zip archive (npz.h) */
    SOLVE_FORMAT_MAT      /* named MATLAB variables, v5 or v7.3 (solve_mat.h) */
} solve_format;

/* The format of path by its extension (.npy, .npz, .mat, any case): 0, or
 * -1 for another extension. */
int solve_format_of(const char *path, solve_format *out);

/* 1 for the formats that hold several named arrays (.npz, .mat). */
int solve_format_is_container(solve_format format);

/* Reads the input array: the whole .npy, or the array or variable `name` of
 * a .npz or .mat (NULL: the only one there; name with a .npy is NPY_EINVAL).
 * *version receives a .mat's version (SOLVE_MAT_V5 otherwise). */
npy_error solve_input_read(const char *path, solve_format format, const char *name, npy_array *out,
                           solve_mat_version *version, char *detail);

/* Writes count arrays to path: a .npy takes exactly one (its name unused), a
 * .npz or .mat any number, by name; version is a .mat's. */
npy_error solve_output_write(const char *path, solve_format format, solve_mat_version version,
                             const npz_entry *entries, size_t count, char *detail);

#endif
