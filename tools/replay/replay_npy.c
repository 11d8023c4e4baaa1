/*
 * replay_npy.c - eigstream-replay --to-npy OUT.npy: a recording as NumPy
 * arrays (C order, little-endian; complex64/float32 for element float,
 * complex128/float64 for double).
 *
 *   covariance  OUT.npy          (frames, count, n, n) complex: [f, b, i, j] = A(i, j)
 *                                of matrix b of frame f, full storage; packed
 *                                storage is expanded (lower packed A(i,j) at
 *                                i + j(2n-j-1)/2 for i >= j, upper packed at
 *                                i + j(j+1)/2 for i <= j, the other triangle the
 *                                Hermitian mirror conj(A(j,i)))
 *   eigenspace  OUT.npy          (frames, count, n) real: the eigenvalues, ascending
 *               OUT-vectors.npy  (frames, count, n, k) complex: [f, b, i, c] =
 *                                component i of vector c (eigenvalue first_index + c),
 *                                written when vectors are sent and every matrix
 *                                sends the same k (else an error naming the mode)
 * The whole export is built in memory before it is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig.h"
#include "npy.h"
#include "protocol.h"
#include "replay.h"

/* Where A(i, j) is in one stored matrix (elements), and whether it is the
 * conjugate of what is stored there (the mirrored triangle). */
static size_t stored_index(uint8_t storage, size_t n, size_t i, size_t j, int *conj)
{
    *conj = 0;
    if (storage == PROTOCOL_STORAGE_FULL)
        return i + j * n;
    int mirrored = storage == PROTOCOL_STORAGE_PACKED_LOWER ? i < j : i > j;
    if (mirrored) {
        size_t t = i;
        i = j;
        j = t;
        *conj = 1;
    }
    return storage == PROTOCOL_STORAGE_PACKED_LOWER ? i + j * (2 * n - j - 1) / 2 : i + j * (j + 1) / 2;
}

/* Copies one complex element of esize bytes, conjugated when asked (the
 * imaginary part's sign bit is the last byte's top bit, little-endian). */
static void copy_element(uint8_t *dst, const uint8_t *src, size_t esize, int conj)
{
    memcpy(dst, src, esize);
    if (conj)
        dst[esize - 1] ^= 0x80;
}

/* Expands one stored matrix into row-major full storage. */
static void unpack_matrix(uint8_t *dst, const uint8_t *src, const recording_format *fmt, size_t esize)
{
    size_t n = fmt->n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int conj;
            size_t at = stored_index(fmt->storage, n, i, j, &conj);
            copy_element(dst + (i * n + j) * esize, src + at * esize, esize, conj);
        }
}

/* The eigenspace arrays being built. */
typedef struct eigen_export {
    uint8_t *values, *vectors;
    size_t k;          /* vectors per matrix, from the first matrix */
    uint8_t mode;
    uint64_t frames;
} eigen_export;

/* Copies the values and vectors of one eigenspace frame (payload after the
 * header) into x at frame f. 0, or -1 named on stderr. */
static int export_eigen_frame(eigen_export *x, const uint8_t *payload, const recording_format *fmt, uint64_t f)
{
    size_t n = fmt->n, count = fmt->count, esize = eig_element_bytes((eig_precision)fmt->element), rsize = esize / 2;
    protocol_matrix_meta *meta = malloc(count * sizeof *meta);
    protocol_stage_times t;
    if (meta == NULL || protocol_meta_decode(payload, protocol_meta_bytes(fmt->count), fmt->count, &t, meta) != PROTOCOL_OK) {
        free(meta);
        return replay_fail("frame %llu: %s", (unsigned long long)f, meta ? "bad meta part" : "out of memory");
    }
    if (f == 0) {
        x->k = meta[0].k_sent;
        x->vectors = x->k ? malloc((size_t)x->frames * count * n * x->k * esize) : NULL;
    }
    const uint8_t *data = payload + protocol_meta_bytes(fmt->count);
    int rc = x->k && x->vectors == NULL ? replay_fail("out of memory") : 0;
    for (size_t b = 0; b < count && rc == 0; b++) {
        size_t k = meta[b].k_sent, base = (size_t)f * count + b;
        if (k != x->k) {
            rc = replay_fail("--to-npy: mode %s sends a varying k (%zu vectors for frame 0 matrix 0, %zu for frame "
                             "%llu matrix %zu): the vectors export needs the same k for every matrix",
                             protocol_mode_name(x->mode), x->k, k, (unsigned long long)f, b);
            break;
        }
        memcpy(x->values + base * n * rsize, data, n * rsize);
        for (size_t c = 0; c < k; c++)
            for (size_t i = 0; i < n; i++)
                memcpy(x->vectors + ((base * n + i) * k + c) * esize, data + n * rsize + (c * n + i) * esize, esize);
        data += n * rsize + k * n * esize;
    }
    free(meta);
    return rc;
}

/* OUT-vectors.npy for OUT.npy (or OUT-vectors.npy for OUT). */
static void vectors_path(const char *out, char *path, size_t bytes)
{
    size_t len = strlen(out);
    int npy = len >= 4 && strcmp(out + len - 4, ".npy") == 0;
    snprintf(path, bytes, "%.*s-vectors.npy", (int)(npy ? len - 4 : len), out);
}

/* Writes an array; 0, or -1 named on stderr. */
static int write_array(const char *path, npy_dtype dtype, int ndim, const size_t *shape, const void *data)
{
    char detail[NPY_DETAIL_SIZE] = "";
    npy_error e = npy_write(path, dtype, 0, ndim, shape, data, detail);
    return e == NPY_OK ? 0 : replay_fail("%s: %s %s", path, npy_strerror(e), detail);
}

/* Reads every frame of r into buf and hands its payload to the kind's copier.
 * 0, or -1 named on stderr. */
static int export_frames(recording_reader *r, const recording_format *fmt, uint8_t *out, eigen_export *x)
{
    uint64_t frames = recording_reader_frames(r);
    size_t cap, esize = eig_element_bytes((eig_precision)fmt->element);
    size_t matrix_bytes = protocol_matrix_bytes(fmt->n, fmt->element, fmt->storage), nn = (size_t)fmt->n * fmt->n;
    uint8_t *buf = replay_buffer_alloc(r, 0, frames, &cap);
    int rc = buf == NULL ? -1 : 0;
    for (uint64_t f = 0; f < frames && rc == 0; f++) {
        char err[RECORDING_ERROR_MAX];
        if (recording_reader_read(r, f, buf, cap, err, sizeof err) != RECORDING_OK) {
            rc = replay_fail("%s", err);
            break;
        }
        const uint8_t *payload = buf + PROTOCOL_HEADER_BYTES;
        if (fmt->kind == PROTOCOL_KIND_EIGENSPACE) {
            rc = export_eigen_frame(x, payload, fmt, f);
            continue;
        }
        for (size_t b = 0; b < fmt->count; b++)
            unpack_matrix(out + ((size_t)f * fmt->count + b) * nn * esize, payload + b * matrix_bytes, fmt, esize);
    }
    free(buf);
    return rc;
}

int replay_export_npy(const char *name, const char *out)
{
    recording_reader *r = NULL;
    if (replay_open(name, &r) != 0)
        return 1;
    const recording_format *fmt = recording_reader_format(r);
    uint64_t frames = recording_reader_frames(r);
    if (fmt->kind == PROTOCOL_KIND_IQ) {
        recording_reader_close(&r);
        replay_fail("%s holds IQ cubes: --to-npy exports covariance and eigenspace frames; read the cubes as "
                    "SigMF samples (docs/recording.md)", name);
        return 1;
    }
    int rc = 1, eigen = fmt->kind == PROTOCOL_KIND_EIGENSPACE, single = fmt->element == EIG_COMPLEX_FLOAT;
    size_t esize = eig_element_bytes((eig_precision)fmt->element);
    size_t shape[4] = {(size_t)frames, fmt->count, fmt->n, fmt->n};
    eigen_export x = {.mode = fmt->mode, .frames = frames};
    uint8_t *array = frames ? malloc(shape[0] * shape[1] * shape[2] * (eigen ? esize / 2 : shape[3] * esize)) : NULL;
    if (frames == 0)
        replay_fail("%s has no frames: nothing to export", name);
    else if (array == NULL)
        replay_fail("out of memory for the export of %s", name);
    else if ((x.values = array, export_frames(r, fmt, array, &x)) == 0) {
        rc = write_array(out, eigen ? (single ? NPY_FLOAT32 : NPY_FLOAT64) : (single ? NPY_COMPLEX64 : NPY_COMPLEX128),
                         eigen ? 3 : 4, shape, array) != 0;
        if (rc == 0 && eigen && x.k > 0) {
            char path[RECORDING_PATH_MAX + 16];
            vectors_path(out, path, sizeof path);
            shape[3] = x.k;
            rc = write_array(path, single ? NPY_COMPLEX64 : NPY_COMPLEX128, 4, shape, x.vectors) != 0;
        }
    }
    free(array);
    free(x.vectors);
    recording_reader_close(&r);
    return rc;
}
