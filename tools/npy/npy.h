/*
 * npy.h - read and write NumPy .npy files holding complex or real arrays.
 *
 * Static library eigstream_npy, used by eigstream-solve and eigstream-gen;
 * npz.h reads and writes .npz archives of such arrays.
 *
 * Reads format versions 1.0, 2.0 and 3.0; writes 1.0, or 2.0 when the header
 * does not fit 1.0's 16-bit length. Supported dtypes are the little-endian
 * '<c8' (complex64), '<c16' (complex128), '<f4' (float32) and '<f8'
 * (float64); anything else is NPY_EDTYPE. The header dictionary is parsed as
 * the Python literal it is (keys in any order, either quote, any spacing, a
 * trailing comma), never evaluated. A file must hold exactly the payload its
 * shape promises: shorter is NPY_ETRUNCATED, longer NPY_ETRAILING.
 *
 * Every function returns an npy_error. Where a `detail` buffer is passed
 * (NPY_DETAIL_SIZE bytes, or NULL), it receives a one-line message naming what
 * is wrong ("big-endian dtype '>c16' is not supported", "payload is 96 bytes,
 * shape (3, 3) of <c16 needs 144"). The library never prints or aborts.
 */
#ifndef EIGSTREAM_NPY_H
#define EIGSTREAM_NPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum npy_error {
    NPY_OK = 0,
    NPY_EIO,        /* the file cannot be opened or read */
    NPY_EMAGIC,     /* the file does not start with the .npy magic string */
    NPY_EVERSION,   /* a format version other than 1.0, 2.0, 3.0 */
    NPY_EHEADER,    /* the header dictionary is malformed or incomplete */
    NPY_EDTYPE,     /* a dtype other than <c8, <c16, <f4, <f8 */
    NPY_ESHAPE,     /* a shape with too many dimensions or too many bytes */
    NPY_ETRUNCATED, /* the payload is shorter than the shape says */
    NPY_ETRAILING,  /* bytes follow the payload */
    NPY_ENOMEM,     /* memory allocation failed */
    NPY_EWRITE,     /* the output file cannot be created or written */
    NPY_EINVAL,     /* an argument is NULL or out of range */
    NPY_EARCHIVE,   /* a .npz that is not a readable zip archive (npz.h) */
    NPY_EMEMBER     /* a .npz without the array asked for, or with several and none named */
} npy_error;

typedef enum npy_dtype {
    NPY_COMPLEX64 = 0, /* '<c8':  float complex */
    NPY_COMPLEX128,    /* '<c16': double complex */
    NPY_FLOAT32,       /* '<f4' */
    NPY_FLOAT64        /* '<f8' */
} npy_dtype;

/* Most dimensions an array may have (NumPy 1.x's NPY_MAXDIMS). */
#define NPY_MAX_DIMS 32

/* Size of a detail message buffer, terminating NUL included. */
#define NPY_DETAIL_SIZE 256

/* Largest header accepted on read; real headers are under 200 bytes. */
#define NPY_HEADER_MAX (1u << 20)

typedef struct npy_array {
    npy_dtype dtype;
    int fortran_order; /* 1: column-major (first index fastest), 0: C order */
    int ndim;
    size_t shape[NPY_MAX_DIMS];
    size_t count; /* product of shape (1 for ndim == 0) */
    void *data;   /* count * npy_dtype_size(dtype) bytes; owned, npy_array_free */
} npy_array;

/* What a header describes, and where the payload starts. */
typedef struct npy_header {
    int major, minor; /* format version */
    npy_dtype dtype;
    int fortran_order;
    int ndim;
    size_t shape[NPY_MAX_DIMS];
    size_t count;          /* product of shape */
    size_t payload_offset; /* bytes from the start of the file */
    size_t payload_bytes;  /* count * element size */
} npy_header;

/* Bytes per element: 8, 16, 4, 8. 0 for a value out of range. */
size_t npy_dtype_size(npy_dtype dtype);

/* "<c8", "<c16", "<f4", "<f8"; "?" for a value out of range. */
const char *npy_dtype_descr(npy_dtype dtype);

/* Parses the magic string, version and header dictionary at the start of a
 * file. bytes holds the first `size` bytes of the file: at least the whole
 * header (payload_offset bytes) for success; fewer gives NPY_ETRUNCATED (or
 * NPY_EMAGIC when even the magic string is wrong). Allocates nothing. */
npy_error npy_header_parse(const void *bytes, size_t size, npy_header *out, char *detail);

/* Reads a whole .npy file. On success *out holds the array and the caller
 * releases it with npy_array_free; on failure *out is zeroed (data NULL). */
npy_error npy_read(const char *path, npy_array *out, char *detail);

/* Frees out->data and zeroes *out; NULL or an already-freed array is a no-op. */
void npy_array_free(npy_array *array);

/* Writes an array: data holds product(shape) elements of dtype in the given
 * order (fortran_order 0: C order). ndim 0..NPY_MAX_DIMS. A partially written
 * file is removed on failure. */
npy_error npy_write(const char *path, npy_dtype dtype, int fortran_order, int ndim,
                    const size_t *shape, const void *data, char *detail);

/* Bytes enough for any header npy_header_format writes. */
#define NPY_HEADER_FORMAT_MAX (12 + 32 * NPY_MAX_DIMS + 64)

/* Formats the preamble and padded header dictionary of an array of shape
 * (ndim dimensions) and dtype into head (NPY_HEADER_FORMAT_MAX bytes), the
 * bytes npy_write puts before the payload: *length receives their count and
 * *payload_bytes (when not NULL) the payload's. For writers of other
 * containers (a .npz member). */
npy_error npy_header_format(npy_dtype dtype, int fortran_order, int ndim, const size_t *shape,
                            unsigned char *head, size_t *length, size_t *payload_bytes, char *detail);

/* Reads a whole .npy image held in memory (size bytes: header and payload,
 * nothing after it), as npy_read reads a file; the payload is copied, so
 * bytes may be freed after. On failure *out is zeroed. */
npy_error npy_parse_buffer(const void *bytes, size_t size, npy_array *out, char *detail);

/* Formats a one-line detail message into detail (NPY_DETAIL_SIZE bytes;
 * NULL: none wanted) and returns e: `return npy_fail(detail, NPY_EIO, ...)`.
 * For this library and the readers of containers built on it (npz.c,
 * eigstream-solve's .mat files). */
npy_error npy_fail(char *detail, npy_error e, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* Human-readable message for an error code; never NULL. */
const char *npy_strerror(npy_error e);

#ifdef __cplusplus
}
#endif

#endif
