/*
 * solve_mat.h - MATLAB .mat files (v5 and v7.3) for eigstream-solve, through
 * libmatio, as the arrays of npy.h.
 *
 * A variable read is a dense numeric array of class double or single, real
 * or complex, of rank 2 or more: it comes back as an npy_array in Fortran
 * order (MATLAB's column-major storage) of dtype complex128 or complex64. A
 * real variable becomes complex with zero imaginary parts: MATLAB saves a
 * complex array whose imaginary parts are all zero as real, so a Hermitian
 * matrix with real entries arrives that way. Writing takes npz_entry arrays
 * (either order: a C-order one is transposed to MATLAB's storage) of
 * float32, float64, complex64 or complex128.
 *
 * Built only with libmatio (EIGSTREAM_HAVE_MATIO; apt-get install
 * libmatio-dev); without it every function returns NPY_EINVAL and says so.
 * matio's own messages are kept out of stderr; the last one is appended to
 * the detail. Errors are npy_error values with a one-line detail
 * (NPY_DETAIL_SIZE bytes); nothing prints or exits.
 */
#ifndef EIGSTREAM_SOLVE_MAT_H
#define EIGSTREAM_SOLVE_MAT_H

#include "npy.h"
#include "npz.h"

/* The .mat file versions eigstream-solve writes. */
typedef enum solve_mat_version {
    SOLVE_MAT_V5 = 5,  /* MATLAB 5 format (save -v7 without compression); 2 GiB per variable */
    SOLVE_MAT_V73 = 73 /* MATLAB 7.3, HDF5-based (save -v7.3) */
} solve_mat_version;

/* Reads the variable `name` of the .mat at path (NULL: the file's only
 * variable; with several, NPY_EMEMBER naming them). *version receives the
 * file's version (SOLVE_MAT_V5 or SOLVE_MAT_V73). */
npy_error solve_mat_read(const char *path, const char *name, npy_array *out, solve_mat_version *version,
                         char *detail);

/* Writes count arrays as variables named by their entries into a new .mat of
 * the given version (replacing a file there; removed on failure). */
npy_error solve_mat_write(const char *path, solve_mat_version version, const npz_entry *entries, size_t count,
                          char *detail);

#endif
