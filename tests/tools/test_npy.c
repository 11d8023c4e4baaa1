/*
 * test_npy.c - unit tests of tools/npy: round trips, header dialects, every
 * error code, and a small fuzz of truncated and garbled headers (which must
 * give an error value, never a crash; run it under ASan to see).
 *
 * Usage: test_npy SCRATCH_DIR
 */
#include "npy.h"
#include "test_check.h"

#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *scratch;

static void scratch_path(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", scratch, name);
}

static int file_put(const char *path, const void *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t put = fwrite(bytes, 1, size, f);
    return fclose(f) == 0 && put == size ? 0 : -1;
}

/* Builds a file: preamble of version major.minor, header text padded to 64
 * with '\n', then payload_bytes bytes of 0x5a. Returns its size. */
static size_t npy_build(unsigned char *out, size_t cap, int major, int minor, const char *dict,
                        size_t payload_bytes)
{
    size_t start = major == 1 ? 10 : 12;
    size_t unpadded = strlen(dict) + 1;
    size_t total = (start + unpadded + 63) / 64 * 64;
    size_t length = total - start;
    if (total + payload_bytes > cap)
        return 0;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = (unsigned char)minor;
    for (size_t k = 0; k < start - 8; k++)
        out[8 + k] = (unsigned char)(length >> (8 * k));
    memcpy(out + start, dict, strlen(dict));
    memset(out + start + strlen(dict), ' ', length - strlen(dict) - 1);
    out[total - 1] = '\n';
    memset(out + total, 0x5a, payload_bytes);
    return total + payload_bytes;
}

static npy_error read_bytes(const unsigned char *bytes, size_t size, npy_array *out, char *detail)
{
    char path[512];
    scratch_path(path, sizeof path, "bytes.npy");
    if (file_put(path, bytes, size) != 0) {
        snprintf(detail, NPY_DETAIL_SIZE, "cannot write scratch file");
        return NPY_EIO;
    }
    return npy_read(path, out, detail);
}

static void test_round_trip(void)
{
    const npy_dtype dtypes[] = {NPY_COMPLEX64, NPY_COMPLEX128, NPY_FLOAT32, NPY_FLOAT64};
    const size_t shapes[][3] = {{0, 0, 0}, {5, 0, 0}, {3, 4, 0}, {2, 3, 3}, {0, 4, 4}};
    const int ndims[] = {0, 1, 2, 3, 3};
    char path[512];
    scratch_path(path, sizeof path, "round.npy");
    for (size_t t = 0; t < 4; t++) {
        for (size_t s = 0; s < 5; s++) {
            for (int order = 0; order < 2; order++) {
                size_t count = 1;
                for (int d = 0; d < ndims[s]; d++)
                    count *= shapes[s][d];
                size_t bytes = count * npy_dtype_size(dtypes[t]);
                unsigned char *data = malloc(bytes + 1);
                CHECK(data, "malloc");
                if (!data)
                    return;
                for (size_t k = 0; k < bytes; k++)
                    data[k] = (unsigned char)(k * 7 + 3);
                char detail[NPY_DETAIL_SIZE] = "";
                npy_error e = npy_write(path, dtypes[t], order, ndims[s], shapes[s], data, detail);
                CHECK(e == NPY_OK, "write %s ndim %d: %s", npy_dtype_descr(dtypes[t]), ndims[s],
                      detail);
                npy_array a;
                e = npy_read(path, &a, detail);
                CHECK(e == NPY_OK, "read back %s ndim %d: %s", npy_dtype_descr(dtypes[t]),
                      ndims[s], detail);
                if (e == NPY_OK) {
                    CHECK(a.dtype == dtypes[t] && a.fortran_order == order && a.ndim == ndims[s] &&
                              a.count == count,
                          "metadata of %s ndim %d", npy_dtype_descr(dtypes[t]), ndims[s]);
                    for (int d = 0; d < a.ndim; d++)
                        CHECK(a.shape[d] == shapes[s][d], "shape[%d]", d);
                    CHECK(bytes == 0 || memcmp(a.data, data, bytes) == 0, "payload of %s",
                          npy_dtype_descr(dtypes[t]));
                }
                npy_array_free(&a);
                free(data);
            }
        }
    }

    /* The header is aligned and written in NumPy's own spelling. */
    const size_t shape[2] = {3, 3};
    double complex m[9] = {0};
    CHECK(npy_write(path, NPY_COMPLEX128, 0, 2, shape, m, NULL) == NPY_OK, "write 3x3");
    unsigned char head[128];
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    const char *expect = "{'descr': '<c16', 'fortran_order': False, 'shape': (3, 3), }";
    CHECK(got == 128 && head[6] == 1 && head[7] == 0 && head[8] + 256 * head[9] == 118 &&
              memcmp(head + 10, expect, strlen(expect)) == 0 && head[127] == '\n',
          "3x3 <c16 header is not NumPy's");
}

static void test_dialects(void)
{
    static const struct {
        int major;
        const char *dict;
        npy_dtype dtype;
        int fortran_order, ndim;
        size_t shape0;
    } ok[] = {
        {1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), }", NPY_COMPLEX128, 0, 2, 2},
        {1, "{'shape': (2, 2), 'fortran_order': True, 'descr': '<c8'}", NPY_COMPLEX64, 1, 2, 2},
        {1, "{ \"descr\" : \"<f8\" ,\"fortran_order\":False,\"shape\":(4,) }", NPY_FLOAT64, 0, 1, 4},
        {1, "{'descr':'<f4','fortran_order':False,'shape':(2L, 2L)}", NPY_FLOAT32, 0, 2, 2},
        {2, "{'descr': '<c16', 'fortran_order': False, 'shape': (1, 2, 2,), }", NPY_COMPLEX128, 0, 3, 1},
        {3, "{'descr': '<c8', 'fortran_order': False, 'shape': (), }", NPY_COMPLEX64, 0, 0, 0},
        {1, "{\n'descr': '<c8',\t'fortran_order': False,\r\n'shape': (3)}", NPY_COMPLEX64, 0, 1, 3},
    };
    unsigned char buf[1024];
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        size_t elements = ok[k].ndim == 0 ? 1 : ok[k].ndim == 1 ? ok[k].shape0 : 4;
        size_t size = npy_build(buf, sizeof buf, ok[k].major, 0, ok[k].dict,
                                elements * npy_dtype_size(ok[k].dtype));
        npy_array a;
        char detail[NPY_DETAIL_SIZE] = "";
        npy_error e = read_bytes(buf, size, &a, detail);
        CHECK(e == NPY_OK, "dialect %zu (%s): %s", k, ok[k].dict, detail);
        if (e == NPY_OK)
            CHECK(a.dtype == ok[k].dtype && a.fortran_order == ok[k].fortran_order &&
                      a.ndim == ok[k].ndim && (a.ndim == 0 || a.shape[0] == ok[k].shape0),
                  "dialect %zu parsed wrong", k);
        npy_array_free(&a);
    }
}

static void test_errors(void)
{
    static const struct {
        int major, minor;
        const char *dict;
        long payload_delta; /* bytes added to the payload the shape needs */
        npy_error want;
        const char *needle; /* expected in the detail message */
    } bad[] = {
        {4, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), }", 0, NPY_EVERSION, "4.0"},
        {1, 1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), }", 0, NPY_EVERSION, "1.1"},
        {1, 0, "{'descr': '>c16', 'fortran_order': False, 'shape': (2, 2), }", 0, NPY_EDTYPE, "big-endian"},
        {1, 0, "{'descr': 'float64', 'fortran_order': False, 'shape': (2, 2), }", 0, NPY_EDTYPE, "float64"},
        {1, 0, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }", 0, NPY_EDTYPE, "|b1"},
        {1, 0, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", 0, NPY_EDTYPE, "structured"},
        {1, 0, "{'descr': '<c16', 'shape': (2, 2), }", 0, NPY_EHEADER, "fortran_order"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), 'extra': 1}", 0, NPY_EHEADER, "extra"},
        {1, 0, "{'descr': '<c16', 'descr': '<c8', 'fortran_order': False, 'shape': (2, 2)}", 0, NPY_EHEADER, "descr"},
        {1, 0, "{'descr': '<c16', 'fortran_order': 0, 'shape': (2, 2)}", 0, NPY_EHEADER, "True or False"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, -2)}", 0, NPY_ESHAPE, "negative"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2 2)}", 0, NPY_EHEADER, "shape"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (99999999999999999999999,)}", 0, NPY_ESHAPE, "too large"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 0, NPY_ESHAPE, "address"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", 0, NPY_ESHAPE, "32"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), } x", 0, NPY_EHEADER, "after"},
        {1, 0, "['descr', '<c16']", 0, NPY_EHEADER, "'{'"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), }", -1, NPY_ETRUNCATED, "needs 64"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), }", -64, NPY_ETRUNCATED, "needs 64"},
        {1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), }", 3, NPY_ETRAILING, "3 bytes"},
    };
    unsigned char buf[2048];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        size_t size = npy_build(buf, sizeof buf, bad[k].major, bad[k].minor, bad[k].dict,
                                (size_t)(64 + bad[k].payload_delta));
        npy_array a;
        char detail[NPY_DETAIL_SIZE] = "";
        npy_error e = read_bytes(buf, size, &a, detail);
        CHECK(e == bad[k].want && strstr(detail, bad[k].needle) && a.data == NULL,
              "case %zu (%s): got %s '%s', want %s mentioning '%s'", k, bad[k].dict,
              npy_strerror(e), detail, npy_strerror(bad[k].want), bad[k].needle);
    }

    npy_array a;
    char detail[NPY_DETAIL_SIZE] = "";
    CHECK(read_bytes((const unsigned char *)"PK\x03\x04 not npy", 12, &a, detail) == NPY_EMAGIC,
          "bad magic: %s", detail);
    CHECK(read_bytes((const unsigned char *)"", 0, &a, detail) == NPY_EMAGIC, "empty file: %s",
          detail);
    CHECK(read_bytes((const unsigned char *)"\x93NUMPY\x01\x00\xff\xff{", 11, &a, detail) ==
              NPY_ETRUNCATED,
          "header longer than the file: %s", detail);
    CHECK(read_bytes((const unsigned char *)"\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12, &a, detail) ==
              NPY_EHEADER,
          "2 GB header: %s", detail);

    char path[512];
    scratch_path(path, sizeof path, "no-such-file.npy");
    CHECK(npy_read(path, &a, detail) == NPY_EIO && strstr(detail, "no-such-file"),
          "missing file: %s", detail);
    scratch_path(path, sizeof path, "no-such-dir/out.npy");
    const size_t shape[1] = {1};
    const double one = 1.0;
    CHECK(npy_write(path, NPY_FLOAT64, 0, 1, shape, &one, detail) == NPY_EWRITE &&
              strstr(detail, "no-such-dir"),
          "unwritable output: %s", detail);
    CHECK(npy_write(path, (npy_dtype)42, 0, 1, shape, &one, detail) == NPY_EINVAL, "bad dtype");
    for (int e = NPY_OK; e <= NPY_EINVAL; e++)
        CHECK(npy_strerror((npy_error)e) && strcmp(npy_strerror((npy_error)e), "unknown npy error"),
              "strerror %d", e);
}

/* xorshift64*: the fuzz inputs are the same on every run. */
static uint64_t fuzz_next(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ull;
}

static void test_fuzz(void)
{
    unsigned char good[512], mutant[512];
    size_t size = npy_build(good, sizeof good, 1, 0,
                            "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3, 3), }", 144);
    /* Every truncation is an error; only the whole file parses. */
    for (size_t cut = 0; cut < size; cut++) {
        npy_array a;
        char detail[NPY_DETAIL_SIZE] = "";
        npy_error e = read_bytes(good, cut, &a, detail);
        CHECK(e != NPY_OK && a.data == NULL, "truncated to %zu bytes read OK", cut);
        npy_header h;
        e = npy_header_parse(good, cut, &h, detail);
        CHECK(cut < 128 ? e != NPY_OK : e == NPY_OK, "header of %zu bytes: %s", cut, npy_strerror(e));
    }
    /* Garbled headers through the parser, and some through whole-file reads. */
    uint64_t state = 0x9e3779b97f4a7c15ull;
    const char garble[] = "{}():,'\"0123456789LTF- \n\x93\xff";
    for (int round = 0; round < 20000; round++) {
        memcpy(mutant, good, size);
        int edits = 1 + (int)(fuzz_next(&state) % 4);
        for (int k = 0; k < edits; k++) {
            size_t at = (size_t)(fuzz_next(&state) % 128);
            mutant[at] = fuzz_next(&state) % 2 ? (unsigned char)fuzz_next(&state)
                                               : (unsigned char)garble[fuzz_next(&state) % (sizeof garble - 1)];
        }
        npy_header h;
        char detail[NPY_DETAIL_SIZE] = "";
        npy_error e = npy_header_parse(mutant, size, &h, detail);
        if (e == NPY_OK)
            CHECK(h.payload_offset <= size && h.ndim >= 0 && h.ndim <= NPY_MAX_DIMS,
                  "fuzz round %d parsed into nonsense", round);
        else
            CHECK(detail[0] != '\0', "fuzz round %d: %s without a detail message", round,
                  npy_strerror(e));
        if (round % 100 == 0) {
            npy_array a;
            e = read_bytes(mutant, size, &a, detail);
            CHECK((e == NPY_OK) == (a.data != NULL), "fuzz round %d: data/error mismatch", round);
            npy_array_free(&a);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_npy SCRATCH_DIR\n");
        return 2;
    }
    scratch = argv[1];
    test_round_trip();
    test_dialects();
    test_errors();
    test_fuzz();
    return test_check_report("test_npy");
}
