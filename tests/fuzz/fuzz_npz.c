/*
 * fuzz_npz.c - fuzzes the .npz reader of eigstream-solve (tools/npy/npz.h)
 * with a hostile zip archive.
 *
 * Contract: the input is a whole .npz file (as an in-memory file). It goes to
 * npz_read for the archive's only array, and for the array named "a".
 *
 * Invariants: a failed read leaves the array zeroed; an array read has
 * count = product(shape) of a known dtype, and survives a round trip through
 * npz_write and npz_read unchanged (dtype, order, shape, bytes), in the
 * archive npz_write makes, which has exactly one array.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "npz.h"

/* Checks an array the reader returned, then writes and reads it again. */
static void require_array_round_trip(const npy_array *a)
{
    size_t count = 1;
    FUZZ_REQUIRE(a->ndim >= 0 && a->ndim <= NPY_MAX_DIMS, "ndim out of range");
    for (int d = 0; d < a->ndim; d++)
        count *= a->shape[d];
    FUZZ_REQUIRE(count == a->count, "count is not the product of the shape");
    FUZZ_REQUIRE(npy_dtype_size(a->dtype) > 0, "a dtype without an element size");
    const char *path = fuzz_memfile_fill(1, NULL, 0);
    if (path == NULL)
        return;
    char detail[NPY_DETAIL_SIZE];
    const npz_entry entry = {"x", a->dtype, a->fortran_order, a->ndim, a->shape, a->data};
    npy_error e = npz_write(path, &entry, 1, detail);
    FUZZ_REQUIRE(e == NPY_OK || e == NPY_ESHAPE || e == NPY_ENOMEM, "npz_write refused an array npz_read returned");
    if (e != NPY_OK)
        return;
    npy_array again;
    e = npz_read(path, NULL, &again, detail);
    FUZZ_REQUIRE(e == NPY_OK || e == NPY_ENOMEM, "npz_read refused what npz_write wrote");
    if (e != NPY_OK)
        return;
    FUZZ_REQUIRE(again.dtype == a->dtype && again.fortran_order == a->fortran_order && again.ndim == a->ndim &&
                     again.count == a->count && memcmp(again.shape, a->shape, sizeof a->shape) == 0 &&
                     (a->count == 0 || memcmp(again.data, a->data, a->count * npy_dtype_size(a->dtype)) == 0),
                 "the round trip through npz_write changed the array");
    npy_array_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile_fill(0, data, size);
    if (path == NULL)
        return 0;
    static const char *const names[] = {NULL, "a"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        npy_array a;
        char detail[NPY_DETAIL_SIZE];
        npy_error e = npz_read(path, names[k], &a, detail);
        if (e != NPY_OK) {
            FUZZ_REQUIRE(a.data == NULL && a.count == 0 && a.ndim == 0, "a failed read left an array");
            continue;
        }
        require_array_round_trip(&a);
        npy_array_free(&a);
    }
    return 0;
}
