/*
 * npy.c - the .npy format: preamble, header dictionary, payload.
 *
 * Layout of a .npy file (NumPy's NEP 1):
 *   "\x93NUMPY", major, minor           8 bytes
 *   header length, little-endian        2 bytes (1.0) or 4 bytes (2.0, 3.0)
 *   header: a Python dict literal, padded with spaces and ended by '\n' so
 *           that the payload starts on a 64-byte boundary
 *   payload: the elements, raw, in C or Fortran order.
 */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

#define NPY_MAGIC_SIZE 6
#define NPY_PREAMBLE_MAX 12
#define NPY_ALIGNMENT 64

/* Longest descr string kept for messages; longer ones are unsupported anyway. */
#define NPY_DESCR_MAX 32

static const struct {
    npy_dtype dtype;
    const char *descr;
    size_t size;
} npy_dtypes[] = {
    {NPY_COMPLEX64, "<c8", 8},
    {NPY_COMPLEX128, "<c16", 16},
    {NPY_FLOAT32, "<f4", 4},
    {NPY_FLOAT64, "<f8", 8},
};
#define NPY_DTYPE_COUNT (sizeof npy_dtypes / sizeof npy_dtypes[0])

size_t npy_dtype_size(npy_dtype dtype)
{
    for (size_t k = 0; k < NPY_DTYPE_COUNT; k++)
        if (npy_dtypes[k].dtype == dtype)
            return npy_dtypes[k].size;
    return 0;
}

const char *npy_dtype_descr(npy_dtype dtype)
{
    for (size_t k = 0; k < NPY_DTYPE_COUNT; k++)
        if (npy_dtypes[k].dtype == dtype)
            return npy_dtypes[k].descr;
    return "?";
}

const char *npy_strerror(npy_error e)
{
    switch (e) {
    case NPY_OK: return "success";
    case NPY_EIO: return "cannot read file";
    case NPY_EMAGIC: return "not a .npy file (bad magic string)";
    case NPY_EVERSION: return "unsupported .npy format version";
    case NPY_EHEADER: return "malformed .npy header";
    case NPY_EDTYPE: return "unsupported dtype";
    case NPY_ESHAPE: return "unsupported shape";
    case NPY_ETRUNCATED: return "truncated file";
    case NPY_ETRAILING: return "unexpected bytes after the payload";
    case NPY_ENOMEM: return "out of memory";
    case NPY_EWRITE: return "cannot write file";
    case NPY_EINVAL: return "invalid argument";
    case NPY_EARCHIVE: return "not a readable .npz (zip) archive";
    case NPY_EMEMBER: return "no such array in the .npz archive";
    }
    return "unknown npy error";
}

npy_error npy_fail(char *detail, npy_error e, const char *format, ...)
{
    if (detail) {
        va_list args;
        va_start(args, format);
        vsnprintf(detail, NPY_DETAIL_SIZE, format, args);
        va_end(args);
    }
    return e;
}

static int host_is_little_endian(void)
{
    const uint16_t probe = 1;
    unsigned char first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

/* Writes "(3, 4)" / "(3,)" / "()" into buf (size >= 24 * NPY_MAX_DIMS). */
static void shape_format(char *buf, size_t size, int ndim, const size_t *shape)
{
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int d = 0; d < ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, d ? ", %zu" : "%zu", shape[d]);
    if (used < size)
        snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
}

/* ---- preamble ---------------------------------------------------------------- */

/* Checks magic and version and finds where the header text lies. */
static npy_error preamble_parse(const unsigned char *bytes, size_t size, npy_header *out,
                                size_t *header_start, size_t *header_length, char *detail)
{
    if (size < NPY_MAGIC_SIZE || memcmp(bytes, npy_magic, NPY_MAGIC_SIZE) != 0)
        return npy_fail(detail, NPY_EMAGIC, "does not start with the .npy magic string \\x93NUMPY");
    if (size < NPY_MAGIC_SIZE + 2)
        return npy_fail(detail, NPY_ETRUNCATED, "file ends inside the .npy preamble");
    out->major = bytes[6];
    out->minor = bytes[7];
    if (out->major < 1 || out->major > 3 || out->minor != 0)
        return npy_fail(detail, NPY_EVERSION, "format version %d.%d (supported: 1.0, 2.0, 3.0)",
                        out->major, out->minor);
    size_t length_bytes = out->major == 1 ? 2 : 4;
    if (size < 8 + length_bytes)
        return npy_fail(detail, NPY_ETRUNCATED, "file ends inside the .npy preamble");
    size_t length = 0;
    for (size_t k = 0; k < length_bytes; k++)
        length |= (size_t)bytes[8 + k] << (8 * k);
    if (length > NPY_HEADER_MAX)
        return npy_fail(detail, NPY_EHEADER, "header length %zu exceeds the %u-byte limit", length,
                        NPY_HEADER_MAX);
    *header_start = 8 + length_bytes;
    *header_length = length;
    return NPY_OK;
}

/* ---- header dictionary --------------------------------------------------------- */

typedef struct header_cursor {
    const char *text;
    size_t length;
    size_t at;
    char *detail;
} header_cursor;

static void cursor_skip_space(header_cursor *c)
{
    while (c->at < c->length) {
        char ch = c->text[c->at];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
            break;
        c->at++;
    }
}

/* The next character, or '\0' at the end (a NUL inside the text is never valid
 * where a structural character is expected, so the two need no distinguishing). */
static char cursor_peek(const header_cursor *c)
{
    return c->at < c->length ? c->text[c->at] : '\0';
}

static npy_error cursor_expect(header_cursor *c, char want, const char *context)
{
    cursor_skip_space(c);
    if (cursor_peek(c) != want)
        return npy_fail(c->detail, NPY_EHEADER, "header: expected '%c' %s at byte %zu", want,
                        context, c->at);
    c->at++;
    return NPY_OK;
}

/* A quoted string ('...' or "...") of printable ASCII without escapes. A
 * string longer than size-1 is cut, which can only make it match no known key
 * or dtype, so the caller rejects it with its (cut) text in the message. */
static npy_error cursor_string(header_cursor *c, char *out, size_t size)
{
    cursor_skip_space(c);
    char quote = cursor_peek(c);
    if (quote != '\'' && quote != '"')
        return npy_fail(c->detail, NPY_EHEADER, "header: expected a quoted string at byte %zu",
                        c->at);
    size_t start = ++c->at;
    size_t kept = 0;
    for (;;) {
        if (c->at >= c->length)
            return npy_fail(c->detail, NPY_EHEADER, "header: unterminated string at byte %zu",
                            start - 1);
        char ch = c->text[c->at];
        if (ch == quote)
            break;
        if (ch == '\\' || (unsigned char)ch < 0x20 || (unsigned char)ch > 0x7e)
            return npy_fail(c->detail, NPY_EHEADER,
                            "header: unsupported character 0x%02x in a string at byte %zu",
                            (unsigned)(unsigned char)ch, c->at);
        if (kept + 1 < size)
            out[kept++] = ch;
        c->at++;
    }
    c->at++;
    out[kept] = '\0';
    return NPY_OK;
}

static npy_error cursor_bool(header_cursor *c, int *out)
{
    cursor_skip_space(c);
    size_t left = c->length - c->at;
    if (left >= 4 && memcmp(c->text + c->at, "True", 4) == 0) {
        c->at += 4;
        *out = 1;
    } else if (left >= 5 && memcmp(c->text + c->at, "False", 5) == 0) {
        c->at += 5;
        *out = 0;
    } else {
        return npy_fail(c->detail, NPY_EHEADER,
                        "header: fortran_order must be True or False (byte %zu)", c->at);
    }
    return NPY_OK;
}

/* A tuple of non-negative integers: (), (3,), (2, 3, 3), with an optional
 * trailing comma and Python 2's 'L' suffix. */
static npy_error cursor_shape(header_cursor *c, npy_header *out)
{
    npy_error e = cursor_expect(c, '(', "to open the shape tuple");
    if (e != NPY_OK)
        return e;
    out->ndim = 0;
    for (;;) {
        cursor_skip_space(c);
        char ch = cursor_peek(c);
        if (ch == ')') {
            c->at++;
            return NPY_OK;
        }
        if (ch < '0' || ch > '9')
            return npy_fail(c->detail, ch == '-' ? NPY_ESHAPE : NPY_EHEADER,
                            ch == '-' ? "header: negative dimension in shape at byte %zu"
                                      : "header: expected a dimension in shape at byte %zu",
                            c->at);
        if (out->ndim == NPY_MAX_DIMS)
            return npy_fail(c->detail, NPY_ESHAPE, "shape has more than %d dimensions",
                            NPY_MAX_DIMS);
        size_t value = 0;
        while (c->at < c->length && c->text[c->at] >= '0' && c->text[c->at] <= '9') {
            size_t digit = (size_t)(c->text[c->at] - '0');
            if (value > (SIZE_MAX - digit) / 10)
                return npy_fail(c->detail, NPY_ESHAPE, "header: dimension too large at byte %zu",
                                c->at);
            value = value * 10 + digit;
            c->at++;
        }
        if (cursor_peek(c) == 'L')
            c->at++;
        out->shape[out->ndim++] = value;
        cursor_skip_space(c);
        ch = cursor_peek(c);
        if (ch == ',')
            c->at++;
        else if (ch != ')')
            return npy_fail(c->detail, NPY_EHEADER,
                            "header: expected ',' or ')' in shape at byte %zu", c->at);
    }
}

static npy_error descr_lookup(const char *descr, npy_dtype *out, char *detail)
{
    for (size_t k = 0; k < NPY_DTYPE_COUNT; k++) {
        if (strcmp(descr, npy_dtypes[k].descr) == 0) {
            *out = npy_dtypes[k].dtype;
            return NPY_OK;
        }
    }
    if (descr[0] == '>')
        return npy_fail(detail, NPY_EDTYPE, "big-endian dtype '%s' is not supported", descr);
    return npy_fail(detail, NPY_EDTYPE, "dtype '%s' is not supported (use <c8, <c16, <f4, <f8)",
                    descr);
}

/* Parses {'descr': ..., 'fortran_order': ..., 'shape': (...), } in any order. */
static npy_error header_dict_parse(header_cursor *c, npy_header *out)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    char descr[NPY_DESCR_MAX + 1] = "";
    npy_error e = cursor_expect(c, '{', "to open the header dictionary");
    if (e != NPY_OK)
        return e;
    for (;;) {
        cursor_skip_space(c);
        if (cursor_peek(c) == '}') {
            c->at++;
            break;
        }
        char key[24];
        size_t key_at = c->at;
        if ((e = cursor_string(c, key, sizeof key)) != NPY_OK)
            return e;
        if ((e = cursor_expect(c, ':', "after a key")) != NPY_OK)
            return e;
        cursor_skip_space(c);
        if (strcmp(key, "descr") == 0 && !have_descr) {
            if (cursor_peek(c) != '\'' && cursor_peek(c) != '"')
                return npy_fail(c->detail, NPY_EDTYPE,
                                "structured dtypes are not supported (descr is not a string)");
            if ((e = cursor_string(c, descr, sizeof descr)) != NPY_OK)
                return e;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
            if ((e = cursor_bool(c, &out->fortran_order)) != NPY_OK)
                return e;
            have_order = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if ((e = cursor_shape(c, out)) != NPY_OK)
                return e;
            have_shape = 1;
        } else {
            return npy_fail(c->detail, NPY_EHEADER, "header: unexpected or repeated key '%s' at byte %zu",
                            key, key_at);
        }
        cursor_skip_space(c);
        char ch = cursor_peek(c);
        if (ch == ',') {
            c->at++;
        } else if (ch == '}') {
            c->at++;
            break;
        } else {
            return npy_fail(c->detail, NPY_EHEADER, "header: expected ',' or '}' at byte %zu",
                            c->at);
        }
    }
    cursor_skip_space(c);
    if (c->at != c->length)
        return npy_fail(c->detail, NPY_EHEADER, "header: unexpected text after the dictionary at byte %zu",
                        c->at);
    if (!have_descr || !have_order || !have_shape)
        return npy_fail(c->detail, NPY_EHEADER, "header: missing key '%s'",
                        !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    return descr_lookup(descr, &out->dtype, c->detail);
}

npy_error npy_header_parse(const void *bytes, size_t size, npy_header *out, char *detail)
{
    if (!bytes || !out)
        return npy_fail(detail, NPY_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    size_t start = 0, length = 0;
    npy_error e = preamble_parse(bytes, size, out, &start, &length, detail);
    if (e != NPY_OK)
        return e;
    if (size - start < length)
        return npy_fail(detail, NPY_ETRUNCATED, "file ends inside the header (%zu of %zu bytes)",
                        size - start, length);
    header_cursor c = {(const char *)bytes + start, length, 0, detail};
    if ((e = header_dict_parse(&c, out)) != NPY_OK)
        return e;

    size_t count = 1;
    for (int d = 0; d < out->ndim; d++) {
        if (out->shape[d] != 0 && count > SIZE_MAX / out->shape[d])
            return npy_fail(detail, NPY_ESHAPE, "shape has more elements than memory can address");
        count *= out->shape[d];
    }
    size_t item = npy_dtype_size(out->dtype);
    if (count > (SIZE_MAX - start - length) / item)
        return npy_fail(detail, NPY_ESHAPE, "shape has more bytes than memory can address");
    out->count = count;
    out->payload_offset = start + length;
    out->payload_bytes = count * item;
    return NPY_OK;
}

/* ---- reading ------------------------------------------------------------------- */

void npy_array_free(npy_array *array)
{
    if (!array)
        return;
    free(array->data);
    memset(array, 0, sizeof *array);
}

/* Reads exactly `size` bytes, or reports how many were there. */
/* NPY_OK when `have` payload bytes are exactly what the header's shape and
 * dtype need; else NPY_ETRUNCATED or NPY_ETRAILING, with a detail message. */
static npy_error payload_size_check(const npy_header *header, size_t have, char *detail)
{
    if (have == header->payload_bytes)
        return NPY_OK;
    char shape_text[24 * NPY_MAX_DIMS];
    shape_format(shape_text, sizeof shape_text, header->ndim, header->shape);
    if (have < header->payload_bytes)
        return npy_fail(detail, NPY_ETRUNCATED, "payload is %zu bytes, shape %s of %s needs %zu", have,
                        shape_text, npy_dtype_descr(header->dtype), header->payload_bytes);
    return npy_fail(detail, NPY_ETRAILING, "%zu bytes follow the payload of shape %s of %s",
                    have - header->payload_bytes, shape_text, npy_dtype_descr(header->dtype));
}

/* Fills *out with the array the header describes; it owns data from now on. */
static void array_take(npy_array *out, const npy_header *header, void *data)
{
    out->dtype = header->dtype;
    out->fortran_order = header->fortran_order;
    out->ndim = header->ndim;
    memcpy(out->shape, header->shape, sizeof out->shape);
    out->count = header->count;
    out->data = data;
}

static npy_error file_read_exact(FILE *file, void *buf, size_t size, size_t *got)
{
    *got = fread(buf, 1, size, file);
    if (*got == size)
        return NPY_OK;
    return ferror(file) ? NPY_EIO : NPY_ETRUNCATED;
}

static npy_error npy_read_open(FILE *file, const char *path, npy_array *out, char *detail)
{
    unsigned char preamble[NPY_PREAMBLE_MAX];
    size_t got = 0;
    npy_error e = file_read_exact(file, preamble, sizeof preamble, &got);
    if (e == NPY_EIO)
        return npy_fail(detail, NPY_EIO, "cannot read '%s': %s", path, strerror(errno));
    npy_header header;
    size_t start = 0, length = 0;
    if ((e = preamble_parse(preamble, got, &header, &start, &length, detail)) != NPY_OK)
        return e;

    /* The whole header, re-read from the start so one parser sees it all. */
    unsigned char *head = malloc(start + length);
    if (!head)
        return npy_fail(detail, NPY_ENOMEM, "cannot allocate %zu bytes for the header",
                        start + length);
    /* The preamble read may already hold the first bytes of a 1.0 header. (It
     * cannot hold payload bytes of a valid file: no valid header is that short.) */
    size_t kept = got < start + length ? got : start + length;
    memcpy(head, preamble, kept);
    e = file_read_exact(file, head + kept, start + length - kept, &got);
    got += kept - start;
    if (e == NPY_OK)
        e = npy_header_parse(head, start + length, &header, detail);
    else if (e == NPY_EIO)
        npy_fail(detail, e, "cannot read '%s': %s", path, strerror(errno));
    else
        npy_fail(detail, e, "file ends inside the header (%zu of %zu bytes)", got, length);
    free(head);
    if (e != NPY_OK)
        return e;

    char shape_text[24 * NPY_MAX_DIMS];
    shape_format(shape_text, sizeof shape_text, header.ndim, header.shape);
    /* Compare sizes before allocating, so a hostile shape cannot ask for memory. */
    struct stat st;
    if (fstat(fileno(file), &st) == 0 && S_ISREG(st.st_mode)) {
        size_t file_size = (size_t)st.st_size;
        size_t have = file_size > header.payload_offset ? file_size - header.payload_offset : 0;
        if ((e = payload_size_check(&header, have, detail)) != NPY_OK)
            return e;
    }

    void *data = malloc(header.payload_bytes ? header.payload_bytes : 1);
    if (!data)
        return npy_fail(detail, NPY_ENOMEM, "cannot allocate %zu bytes for the payload",
                        header.payload_bytes);
    e = file_read_exact(file, data, header.payload_bytes, &got);
    if (e == NPY_OK && fgetc(file) != EOF)
        e = npy_fail(detail, NPY_ETRAILING, "bytes follow the payload of shape %s", shape_text);
    else if (e == NPY_ETRUNCATED)
        npy_fail(detail, e, "payload is %zu bytes, shape %s of %s needs %zu", got, shape_text,
                 npy_dtype_descr(header.dtype), header.payload_bytes);
    else if (e == NPY_EIO)
        npy_fail(detail, e, "cannot read '%s': %s", path, strerror(errno));
    if (e != NPY_OK) {
        free(data);
        return e;
    }
    array_take(out, &header, data);
    return NPY_OK;
}

npy_error npy_parse_buffer(const void *bytes, size_t size, npy_array *out, char *detail)
{
    if (!bytes || !out)
        return npy_fail(detail, NPY_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    if (!host_is_little_endian())
        return npy_fail(detail, NPY_EDTYPE, "big-endian hosts are not supported");
    npy_header header;
    npy_error e = npy_header_parse(bytes, size, &header, detail);
    if (e == NPY_OK)
        e = payload_size_check(&header, size - header.payload_offset, detail);
    if (e != NPY_OK)
        return e;
    void *data = malloc(header.payload_bytes ? header.payload_bytes : 1);
    if (!data)
        return npy_fail(detail, NPY_ENOMEM, "cannot allocate %zu bytes for the payload",
                        header.payload_bytes);
    memcpy(data, (const unsigned char *)bytes + header.payload_offset, header.payload_bytes);
    array_take(out, &header, data);
    return NPY_OK;
}

npy_error npy_read(const char *path, npy_array *out, char *detail)
{
    if (!path || !out)
        return npy_fail(detail, NPY_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    if (!host_is_little_endian())
        return npy_fail(detail, NPY_EDTYPE, "big-endian hosts are not supported");
    FILE *file = fopen(path, "rb");
    if (!file)
        return npy_fail(detail, NPY_EIO, "cannot open '%s': %s", path, strerror(errno));
    npy_error e = npy_read_open(file, path, out, detail);
    fclose(file);
    return e;
}

/* ---- writing ------------------------------------------------------------------- */

npy_error npy_header_format(npy_dtype dtype, int fortran_order, int ndim, const size_t *shape,
                            unsigned char *head, size_t *length, size_t *payload_bytes, char *detail)
{
    size_t item = npy_dtype_size(dtype);
    if (!head || !length || item == 0 || ndim < 0 || ndim > NPY_MAX_DIMS || (ndim > 0 && !shape))
        return npy_fail(detail, NPY_EINVAL, "invalid dtype, ndim or shape");
    if (!host_is_little_endian())
        return npy_fail(detail, NPY_EDTYPE, "big-endian hosts are not supported");
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] != 0 && count > SIZE_MAX / shape[d])
            return npy_fail(detail, NPY_ESHAPE, "shape has more elements than memory can address");
        count *= shape[d];
    }
    if (count > SIZE_MAX / item)
        return npy_fail(detail, NPY_ESHAPE, "shape has more bytes than memory can address");
    if (payload_bytes)
        *payload_bytes = count * item;

    /* Dictionary, then spaces and '\n' up to the next 64-byte boundary. */
    char shape_text[24 * NPY_MAX_DIMS];
    shape_format(shape_text, sizeof shape_text, ndim, shape);
    char dict[32 * NPY_MAX_DIMS];
    int dict_length = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                               npy_dtype_descr(dtype), fortran_order ? "True" : "False", shape_text);
    if (dict_length < 0 || (size_t)dict_length >= sizeof dict)
        return npy_fail(detail, NPY_EINVAL, "header does not fit");
    size_t unpadded = (size_t)dict_length + 1;
    int major = 1;
    size_t start = 10;
    size_t total = (start + unpadded + NPY_ALIGNMENT - 1) / NPY_ALIGNMENT * NPY_ALIGNMENT;
    if (total - start > 65535) { /* 1.0's length field is 16 bits */
        major = 2;
        start = 12;
        total = (start + unpadded + NPY_ALIGNMENT - 1) / NPY_ALIGNMENT * NPY_ALIGNMENT;
    }
    if (total > NPY_HEADER_FORMAT_MAX)
        return npy_fail(detail, NPY_EINVAL, "header does not fit");
    size_t field = total - start;
    memcpy(head, npy_magic, NPY_MAGIC_SIZE);
    head[6] = (unsigned char)major;
    head[7] = 0;
    for (size_t k = 0; k < start - 8; k++)
        head[8 + k] = (unsigned char)(field >> (8 * k));
    memcpy(head + start, dict, (size_t)dict_length);
    memset(head + start + dict_length, ' ', field - (size_t)dict_length - 1);
    head[total - 1] = '\n';
    *length = total;
    return NPY_OK;
}

npy_error npy_write(const char *path, npy_dtype dtype, int fortran_order, int ndim,
                    const size_t *shape, const void *data, char *detail)
{
    if (!path)
        return npy_fail(detail, NPY_EINVAL, "NULL path");
    unsigned char head[NPY_HEADER_FORMAT_MAX];
    size_t total = 0, payload = 0;
    npy_error e = npy_header_format(dtype, fortran_order, ndim, shape, head, &total, &payload, detail);
    if (e != NPY_OK)
        return e;
    if (payload > 0 && !data)
        return npy_fail(detail, NPY_EINVAL, "NULL data");
    const size_t count = payload / npy_dtype_size(dtype), item = npy_dtype_size(dtype);

    FILE *file = fopen(path, "wb");
    if (!file)
        return npy_fail(detail, NPY_EWRITE, "cannot create '%s': %s", path, strerror(errno));
    int ok = fwrite(head, 1, total, file) == total;
    ok = ok && (count == 0 || fwrite(data, item, count, file) == count);
    int saved_errno = errno;
    if (fclose(file) != 0 && ok) {
        ok = 0;
        saved_errno = errno;
    }
    if (!ok) {
        remove(path);
        return npy_fail(detail, NPY_EWRITE, "cannot write '%s': %s", path, strerror(saved_errno));
    }
    return NPY_OK;
}
