/*
 * solve_mat.c - .mat variables <-> npy_array, through libmatio.
 *
 * matio keeps a complex variable's data split (mat_complex_split_t: all real
 * parts, then all imaginary parts, each column-major); eigstream-solve and
 * NumPy interleave them (re, im per element). Both directions convert here,
 * one element at a time, with the element's position in MATLAB's storage
 * computed from its index in the array's own order.
 */
#include "solve_mat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef EIGSTREAM_HAVE_MATIO
#include <matio.h>
#endif

#ifndef EIGSTREAM_HAVE_MATIO

static npy_error mat_missing(char *detail)
{
    return npy_fail(detail, NPY_EINVAL, ".mat files need eigstream-solve built with libmatio "
                    "(apt-get install libmatio-dev, then configure again)");
}

npy_error solve_mat_read(const char *path, const char *name, npy_array *out, solve_mat_version *version,
                         char *detail)
{
    (void)path, (void)name, (void)version;
    if (out)
        memset(out, 0, sizeof *out);
    return mat_missing(detail);
}

npy_error solve_mat_write(const char *path, solve_mat_version version, const npz_entry *entries, size_t count,
                          char *detail)
{
    (void)path, (void)version, (void)entries, (void)count;
    return mat_missing(detail);
}

#else

/* matio's last message, kept instead of printed (Mat_LogInitFunc). */
static char mat_last_message[160];

static void mat_log(int level, char *message)
{
    (void)level;
    snprintf(mat_last_message, sizeof mat_last_message, "%s", message ? message : "");
}

static void mat_log_quiet(void)
{
    static int done;
    if (!done)
        Mat_LogInitFunc("eigstream-solve", mat_log);
    done = 1;
    mat_last_message[0] = '\0';
}

/* Offset in column-major storage of the element at C-order linear index c
 * of an array of ndim dimensions. */
static size_t fortran_offset(size_t c, int ndim, const size_t *shape)
{
    size_t offset = 0, stride = 1;
    size_t index[NPY_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        index[d] = shape[d] ? c % shape[d] : 0;
        c = shape[d] ? c / shape[d] : 0;
    }
    for (int d = 0; d < ndim; d++) {
        offset += index[d] * stride;
        stride *= shape[d];
    }
    return offset;
}

/* The variable's elements as interleaved complex, column-major, into out. */
static npy_error variable_to_array(const matvar_t *v, npy_array *out, char *detail)
{
    const int single = v->class_type == MAT_C_SINGLE;
    if ((v->class_type != MAT_C_DOUBLE && !single) || v->isLogical ||
        v->data_type != (single ? MAT_T_SINGLE : MAT_T_DOUBLE))
        return npy_fail(detail, NPY_EDTYPE, "variable '%s' is not a dense double or single array (class %d): "
                        "in MATLAB, double(A) or single(A)", v->name, (int)v->class_type);
    if (v->rank < 2 || v->rank > NPY_MAX_DIMS)
        return npy_fail(detail, NPY_ESHAPE, "variable '%s' has rank %d", v->name, v->rank);
    size_t count = 1;
    for (int d = 0; d < v->rank; d++)
        count *= v->dims[d];
    const size_t real_size = single ? sizeof(float) : sizeof(double);
    unsigned char *data = malloc(count ? 2 * count * real_size : 1);
    if (!data)
        return npy_fail(detail, NPY_ENOMEM, "variable '%s': out of memory", v->name);
    const mat_complex_split_t *split = v->isComplex ? v->data : NULL;
    const unsigned char *re = split ? split->Re : v->data;
    const unsigned char *im = split ? split->Im : NULL;
    if (count > 0 && (!re || (v->isComplex && !im))) {
        free(data);
        return npy_fail(detail, NPY_EIO, "variable '%s': no data", v->name);
    }
    for (size_t k = 0; k < count; k++) {
        memcpy(data + 2 * k * real_size, re + k * real_size, real_size);
        if (im)
            memcpy(data + (2 * k + 1) * real_size, im + k * real_size, real_size);
        else
            memset(data + (2 * k + 1) * real_size, 0, real_size);
    }
    out->dtype = single ? NPY_COMPLEX64 : NPY_COMPLEX128;
    out->fortran_order = 1;
    out->ndim = v->rank;
    for (int d = 0; d < v->rank; d++)
        out->shape[d] = v->dims[d];
    out->count = count;
    out->data = data;
    return NPY_OK;
}

/* The names of the file's variables, ", "-joined into names; their count. */
static size_t variable_names(mat_t *mat, char *names, size_t size)
{
    size_t count = 0, used = 0;
    names[0] = '\0';
    Mat_Rewind(mat);
    for (matvar_t *v; (v = Mat_VarReadNextInfo(mat)) != NULL; Mat_VarFree(v)) {
        if (used < size - 1)
            used += (size_t)snprintf(names + used, size - used, "%s%s", count ? ", " : "", v->name ? v->name : "?");
        count++;
    }
    return count;
}

npy_error solve_mat_read(const char *path, const char *name, npy_array *out, solve_mat_version *version,
                         char *detail)
{
    if (!path || !out || !version)
        return npy_fail(detail, NPY_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    mat_log_quiet();
    mat_t *mat = Mat_Open(path, MAT_ACC_RDONLY);
    if (!mat)
        return npy_fail(detail, NPY_EIO, "cannot open '%s' as a MATLAB .mat file%s%s", path,
                        mat_last_message[0] ? ": " : "", mat_last_message);
    *version = Mat_GetVersion(mat) == MAT_FT_MAT73 ? SOLVE_MAT_V73 : SOLVE_MAT_V5;
    npy_error e = NPY_OK;
    char names[NPY_DETAIL_SIZE / 2];
    char only[128] = "";
    if (!name) {
        size_t count = variable_names(mat, names, sizeof names);
        if (count == 0)
            e = npy_fail(detail, NPY_EMEMBER, "the file holds no variable");
        else if (count > 1)
            e = npy_fail(detail, NPY_EMEMBER, "the file holds %zu variables (%s): name one", count, names);
        else
            snprintf(only, sizeof only, "%s", names);
        name = only;
    }
    matvar_t *v = e == NPY_OK ? Mat_VarRead(mat, name) : NULL;
    if (e == NPY_OK && !v) {
        variable_names(mat, names, sizeof names);
        e = npy_fail(detail, NPY_EMEMBER, "no variable '%s' in the file (it holds %s)", name, names);
    }
    if (v) {
        e = variable_to_array(v, out, detail);
        Mat_VarFree(v);
    }
    Mat_Close(mat);
    return e;
}

/* One entry as a matio variable: data converted to MATLAB's column-major
 * storage (split for complex) in *storage, which the caller frees after
 * writing. */
static matvar_t *entry_to_variable(const npz_entry *entry, void **storage, char *detail)
{
    const int complex = entry->dtype == NPY_COMPLEX64 || entry->dtype == NPY_COMPLEX128;
    const int single = entry->dtype == NPY_COMPLEX64 || entry->dtype == NPY_FLOAT32;
    const size_t real_size = single ? sizeof(float) : sizeof(double);
    /* MATLAB has no rank below 2: a vector of n is n x 1, a scalar 1 x 1. */
    size_t dims[NPY_MAX_DIMS] = {1, 1};
    const int rank = entry->ndim < 2 ? 2 : entry->ndim;
    size_t count = 1;
    for (int d = 0; d < entry->ndim; d++) {
        dims[d] = entry->shape[d];
        count *= entry->shape[d];
    }
    unsigned char *re = malloc(count ? (complex ? 2 : 1) * count * real_size : 1);
    if (!re) {
        npy_fail(detail, NPY_ENOMEM, "out of memory");
        return NULL;
    }
    unsigned char *im = re + count * real_size;
    const unsigned char *in = entry->data;
    const size_t element = (complex ? 2 : 1) * real_size;
    for (size_t k = 0; k < count; k++) {
        const size_t at = entry->fortran_order ? k : fortran_offset(k, entry->ndim, entry->shape);
        memcpy(re + at * real_size, in + k * element, real_size);
        if (complex)
            memcpy(im + at * real_size, in + k * element + real_size, real_size);
    }
    mat_complex_split_t split = {re, im};
    void *data = count == 0 ? NULL : complex ? (void *)&split : (void *)re;
    /* Without MAT_F_DONT_COPY_DATA matio copies the data (and the split's
     * pointers), so `split` may go out of scope. An empty array goes without
     * data: matio would copy none and free split pointers it never set. */
    matvar_t *v = Mat_VarCreate(entry->name, single ? MAT_C_SINGLE : MAT_C_DOUBLE, single ? MAT_T_SINGLE : MAT_T_DOUBLE,
                                rank, dims, data, complex ? MAT_F_COMPLEX : 0);
    if (!v) {
        free(re);
        npy_fail(detail, NPY_ENOMEM, "cannot make the variable '%s'%s%s", entry->name,
                 mat_last_message[0] ? ": " : "", mat_last_message);
        return NULL;
    }
    *storage = re;
    return v;
}

npy_error solve_mat_write(const char *path, solve_mat_version version, const npz_entry *entries, size_t count,
                          char *detail)
{
    if (!path || (count && !entries))
        return npy_fail(detail, NPY_EINVAL, "NULL argument");
    mat_log_quiet();
    mat_t *mat = Mat_CreateVer(path, NULL, version == SOLVE_MAT_V73 ? MAT_FT_MAT73 : MAT_FT_MAT5);
    if (!mat)
        return npy_fail(detail, NPY_EWRITE, "cannot create '%s'%s%s", path, mat_last_message[0] ? ": " : "",
                        mat_last_message);
    npy_error e = NPY_OK;
    for (size_t i = 0; e == NPY_OK && i < count; i++) {
        void *storage = NULL;
        matvar_t *v = entry_to_variable(&entries[i], &storage, detail);
        if (!v)
            e = NPY_ENOMEM;
        else if (Mat_VarWrite(mat, v, MAT_COMPRESSION_NONE) != 0)
            e = npy_fail(detail, NPY_EWRITE, "cannot write the variable '%s' into '%s'%s%s", entries[i].name, path,
                         mat_last_message[0] ? ": " : "", mat_last_message);
        Mat_VarFree(v);
        free(storage);
    }
    if (Mat_Close(mat) != 0 && e == NPY_OK)
        e = npy_fail(detail, NPY_EWRITE, "cannot write '%s'", path);
    if (e != NPY_OK)
        remove(path);
    return e;
}

#endif
