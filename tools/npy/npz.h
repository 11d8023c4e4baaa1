/*
 * npz.h - read and write NumPy .npz archives (numpy.savez, savez_compressed).
 *
 * A .npz is a zip archive whose members NAME.npy are .npy images (npy.h);
 * numpy.load(path)[NAME] is that array. Reading takes members stored
 * (numpy.savez) or deflated (numpy.savez_compressed; needs the library built
 * with zlib, EIGSTREAM_HAVE_ZLIB), checks each member's CRC-32, and reads the
 * sizes and offsets of the central directory, ZIP64 fields included. Writing
 * stores the members uncompressed, as numpy.savez does, with a fixed
 * timestamp (1980-01-01), so the same arrays give the same bytes; a member or
 * archive over 4 GiB is refused (NPY_ESHAPE: write .npy files instead).
 *
 * The same contract as npy.h: every function returns an npy_error and fills
 * an optional `detail` buffer (NPY_DETAIL_SIZE bytes) with a one-line reason;
 * nothing is printed, and nothing aborts.
 */
#ifndef EIGSTREAM_NPZ_H
#define EIGSTREAM_NPZ_H

#include <stddef.h>

#include "npy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One array to write: NAME.npy in the archive, as npy_write takes it. */
typedef struct npz_entry {
    const char *name; /* without ".npy"; 1..200 bytes, no '/' */
    npy_dtype dtype;
    int fortran_order;
    int ndim;
    const size_t *shape;
    const void *data; /* product(shape) elements; the caller keeps ownership */
} npz_entry;

/* Reads the array `name` of the .npz at path (name NULL: the archive's only
 * array). NPY_EMEMBER when there is no such array, or when name is NULL and
 * the archive holds several (the detail lists their names, to choose one);
 * NPY_EARCHIVE for a file that is not a zip archive, a damaged one (CRC),
 * or a compression other than stored and deflate. On success *out holds the
 * array (npy_array_free); on failure it is zeroed. */
npy_error npz_read(const char *path, const char *name, npy_array *out, char *detail);

/* Writes count arrays into a new .npz at path (replacing a file there); on
 * failure the partial file is removed. */
npy_error npz_write(const char *path, const npz_entry *entries, size_t count, char *detail);

#ifdef __cplusplus
}
#endif

#endif
