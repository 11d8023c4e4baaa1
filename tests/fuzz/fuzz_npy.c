/*
 * fuzz_npy.c - fuzzes the .npy reader of eigstream-solve and eigstream-gen
 * (tools/npy/npy.h) with a hostile file.
 *
 * Contract: the input is a whole .npy file. It goes to npy_header_parse (the
 * bytes in memory) and to npy_read (the same bytes as an in-memory file).
 *
 * Invariants: a parsed header's payload starts inside the file and holds
 * count = product(shape) elements of the dtype; npy_read accepts exactly the
 * files whose header parses and whose size is payload_offset + payload_bytes,
 * and then returns the header's array with the file's payload bytes; a failed
 * npy_read leaves the array zeroed.
 */
#include <string.h>

#include "fuzz_support.h"
#include "npy.h"

/* Checks what npy_header_parse reported against the file's size. */
static void require_header_consistent(const npy_header *h, size_t size)
{
    size_t count = 1;
    FUZZ_REQUIRE(h->ndim >= 0 && h->ndim <= NPY_MAX_DIMS, "ndim out of range");
    for (int d = 0; d < h->ndim; d++)
        count *= h->shape[d];
    FUZZ_REQUIRE(count == h->count, "count is not the product of the shape");
    FUZZ_REQUIRE(npy_dtype_size(h->dtype) > 0, "a dtype without an element size");
    FUZZ_REQUIRE(h->payload_bytes == h->count * npy_dtype_size(h->dtype), "payload_bytes is not count * element");
    FUZZ_REQUIRE(h->payload_offset <= size, "the payload starts past the bytes parsed");
    FUZZ_REQUIRE(h->major >= 1 && h->major <= 3 && h->minor == 0, "accepted an unknown format version");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char detail[NPY_DETAIL_SIZE];
    npy_header h;
    npy_error parsed = npy_header_parse(data, size, &h, detail);
    if (parsed == NPY_OK)
        require_header_consistent(&h, size);

    const char *path = fuzz_memfile_fill(0, data, size);
    if (path == NULL)
        return 0;
    npy_array a;
    npy_error e = npy_read(path, &a, detail);
    int whole = parsed == NPY_OK && size - h.payload_offset == h.payload_bytes;
    FUZZ_REQUIRE(e == NPY_ENOMEM || (e == NPY_OK) == whole, "npy_read and npy_header_parse disagree on a file");
    if (e != NPY_OK) {
        FUZZ_REQUIRE(a.data == NULL && a.count == 0, "a failed read left an array");
        return 0;
    }
    FUZZ_REQUIRE(a.dtype == h.dtype && a.ndim == h.ndim && a.count == h.count &&
                     a.fortran_order == h.fortran_order && memcmp(a.shape, h.shape, sizeof a.shape) == 0,
                 "the array read differs from the header parsed");
    FUZZ_REQUIRE(h.payload_bytes == 0 || memcmp(a.data, data + h.payload_offset, h.payload_bytes) == 0,
                 "the array's bytes differ from the file's payload");
    npy_array_free(&a);
    return 0;
}
