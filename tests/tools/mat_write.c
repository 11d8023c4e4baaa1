/*
 * mat_write - writes one complex variable into a new .mat file through
 * libmatio's own API, as another libmatio program would: the test's source of
 * v7.3 (and v5) input files that eigstream-solve's reader (solve_mat.c) did
 * not write. scipy writes v5 only, and h5py files lack what matio needs to
 * read a variable's class.
 *
 *   mat_write IN.npy OUT.mat 5|7.3 NAME
 *
 * IN.npy: complex128, Fortran order (MATLAB's column-major storage), any
 * rank >= 2; OUT.mat gets it as the complex double variable NAME. Exit 0, or
 * 1 with a one-line reason.
 */
#include <matio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[3], "5") != 0 && strcmp(argv[3], "7.3") != 0)) {
        fprintf(stderr, "usage: mat_write IN.npy OUT.mat 5|7.3 NAME\n");
        return 1;
    }
    npy_array a;
    char detail[NPY_DETAIL_SIZE];
    if (npy_read(argv[1], &a, detail) != NPY_OK || a.dtype != NPY_COMPLEX128 || !a.fortran_order || a.ndim < 2) {
        fprintf(stderr, "mat_write: %s: not a Fortran-order complex128 array of rank >= 2\n", argv[1]);
        npy_array_free(&a);
        return 1;
    }
    double *re = malloc((a.count ? a.count : 1) * sizeof *re), *im = malloc((a.count ? a.count : 1) * sizeof *im);
    for (size_t k = 0; re && im && k < a.count; k++) {
        re[k] = ((const double *)a.data)[2 * k];
        im[k] = ((const double *)a.data)[2 * k + 1];
    }
    mat_complex_split_t split = {re, im};
    mat_t *mat = Mat_CreateVer(argv[2], NULL, strcmp(argv[3], "7.3") == 0 ? MAT_FT_MAT73 : MAT_FT_MAT5);
    matvar_t *v = re && im && mat ? Mat_VarCreate(argv[4], MAT_C_DOUBLE, MAT_T_DOUBLE, a.ndim, a.shape, &split,
                                                  MAT_F_COMPLEX) : NULL;
    int ok = v && Mat_VarWrite(mat, v, MAT_COMPRESSION_NONE) == 0;
    Mat_VarFree(v);
    if (mat)
        ok = Mat_Close(mat) == 0 && ok;
    free(re);
    free(im);
    npy_array_free(&a);
    if (!ok)
        fprintf(stderr, "mat_write: cannot write %s\n", argv[2]);
    return ok ? 0 : 1;
}
