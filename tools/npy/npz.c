/*
 * npz.c - .npz archives: the zip container around .npy members.
 *
 * The parts of the zip format (PKWARE APPNOTE 6.3) a .npz uses, all
 * little-endian:
 *   local header   "PK\3\4", 30 bytes + name + extra, then the member's bytes
 *   central entry  "PK\1\2", 46 bytes + name + extra + comment, one per member:
 *                  method, CRC-32, sizes and the local header's offset
 *   end record     "PK\5\6", 22 bytes + comment: where the central directory is
 * Sizes and offsets that do not fit 32 bits are 0xFFFFFFFF with the real
 * value in the entry's ZIP64 extra field (id 1). Python's zipfile, which
 * numpy.savez uses, writes that field only where a value needs it.
 */
#include "npz.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef EIGSTREAM_HAVE_ZLIB
#include <zlib.h>
#endif

enum {
    ZIP_LOCAL_SIZE = 30,
    ZIP_CENTRAL_SIZE = 46,
    ZIP_END_SIZE = 22,
    ZIP_COMMENT_MAX = 65535,
    ZIP_STORED = 0,
    ZIP_DEFLATED = 8,
    ZIP_NAME_MAX = 255
};
#define ZIP_LOCAL_SIGNATURE 0x04034b50u
#define ZIP_CENTRAL_SIGNATURE 0x02014b50u
#define ZIP_END_SIGNATURE 0x06054b50u
#define ZIP_U32_MAX 0xffffffffu

static uint32_t get16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const unsigned char *p) { return get16(p) | get16(p + 2) << 16; }
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }
static void put16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }

/* CRC-32 of the zip format (reflected polynomial 0xEDB88320, the one of
 * zlib's crc32()), continued from crc over size bytes. */
static uint32_t crc32_update(uint32_t crc, const void *bytes, size_t size)
{
    static uint32_t table[256];
    static int ready; /* benign race: every thread writes the same table */
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const unsigned char *p = bytes;
    crc = ~crc;
    for (size_t i = 0; i < size; i++)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* One member as the central directory describes it. */
typedef struct zip_member {
    char name[ZIP_NAME_MAX + 1];
    uint32_t method, crc;
    uint64_t compressed, size, offset;
} zip_member;

static npy_error read_at(FILE *file, uint64_t offset, void *buf, size_t size, char *detail)
{
    if (fseeko(file, (off_t)offset, SEEK_SET) != 0 || fread(buf, 1, size, file) != size)
        return npy_fail(detail, NPY_EARCHIVE, "archive ends or cannot be read at byte %llu",
                        (unsigned long long)offset);
    return NPY_OK;
}

/* Finds the end record in the last 22 + 65535 bytes: *cd_offset and
 * *cd_size of the central directory, *count its entries. */
static npy_error end_record_find(FILE *file, uint64_t *cd_offset, uint64_t *cd_size, size_t *count,
                                 char *detail)
{
    if (fseeko(file, 0, SEEK_END) != 0)
        return npy_fail(detail, NPY_EIO, "cannot seek: %s", strerror(errno));
    uint64_t file_size = (uint64_t)ftello(file);
    size_t tail = file_size < ZIP_END_SIZE + ZIP_COMMENT_MAX ? (size_t)file_size : ZIP_END_SIZE + ZIP_COMMENT_MAX;
    if (tail < ZIP_END_SIZE)
        return npy_fail(detail, NPY_EARCHIVE, "%llu bytes: too short for a zip archive",
                        (unsigned long long)file_size);
    unsigned char *buf = malloc(tail);
    if (!buf)
        return npy_fail(detail, NPY_ENOMEM, "out of memory");
    npy_error e = read_at(file, file_size - tail, buf, tail, detail);
    for (size_t at = tail - ZIP_END_SIZE + 1; e == NPY_OK && at-- > 0;) {
        if (get32(buf + at) == ZIP_END_SIGNATURE && at + ZIP_END_SIZE + get16(buf + at + 20) == tail) {
            *count = get16(buf + at + 10);
            *cd_size = get32(buf + at + 12);
            *cd_offset = get32(buf + at + 16);
            free(buf);
            if (*count == 0xffff || *cd_offset == ZIP_U32_MAX || *cd_size == ZIP_U32_MAX)
                return npy_fail(detail, NPY_EARCHIVE, "a ZIP64 archive over 65535 members or 4 GiB of "
                                "directory is not supported");
            if (*cd_offset + *cd_size > file_size)
                return npy_fail(detail, NPY_EARCHIVE, "central directory past the end of the file");
            return NPY_OK;
        }
    }
    free(buf);
    return e != NPY_OK ? e : npy_fail(detail, NPY_EARCHIVE, "not a zip archive (no end of central directory)");
}

/* The values of a ZIP64 extra field (id 1) that replace 0xFFFFFFFF fields,
 * in the format's order: size, compressed size, local header offset. */
static npy_error zip64_apply(const unsigned char *extra, size_t length, zip_member *m, char *detail)
{
    for (size_t at = 0; at + 4 <= length;) {
        size_t id = get16(extra + at), size = get16(extra + at + 2);
        const unsigned char *v = extra + at + 4, *end = v + (at + 4 + size <= length ? size : 0);
        if (id == 1) {
            uint64_t *fields[3] = {&m->size, &m->compressed, &m->offset};
            for (int f = 0; f < 3; f++) {
                if (*fields[f] != ZIP_U32_MAX)
                    continue;
                if (v + 8 > end)
                    return npy_fail(detail, NPY_EARCHIVE, "member '%s': short ZIP64 field", m->name);
                *fields[f] = get64(v);
                v += 8;
            }
            return NPY_OK;
        }
        at += 4 + size;
    }
    if (m->size == ZIP_U32_MAX || m->compressed == ZIP_U32_MAX || m->offset == ZIP_U32_MAX)
        return npy_fail(detail, NPY_EARCHIVE, "member '%s': no ZIP64 field for its sizes", m->name);
    return NPY_OK;
}

/* Reads the central directory into *members (count entries, malloc'd). */
static npy_error directory_read(FILE *file, zip_member **members, size_t *count, char *detail)
{
    uint64_t cd_offset = 0, cd_size = 0;
    npy_error e = end_record_find(file, &cd_offset, &cd_size, count, detail);
    if (e != NPY_OK)
        return e;
    if (*count > cd_size / ZIP_CENTRAL_SIZE)
        return npy_fail(detail, NPY_EARCHIVE, "%zu members cannot fit a central directory of %llu bytes", *count,
                        (unsigned long long)cd_size);
    unsigned char *cd = malloc(cd_size ? cd_size : 1);
    *members = calloc(*count ? *count : 1, sizeof **members);
    if (!cd || !*members) {
        free(cd);
        return npy_fail(detail, NPY_ENOMEM, "out of memory");
    }
    e = read_at(file, cd_offset, cd, cd_size, detail);
    size_t at = 0;
    for (size_t i = 0; e == NPY_OK && i < *count; i++) {
        const unsigned char *p = cd + at;
        if (at + ZIP_CENTRAL_SIZE > cd_size || get32(p) != ZIP_CENTRAL_SIGNATURE) {
            e = npy_fail(detail, NPY_EARCHIVE, "central directory entry %zu is damaged", i);
            break;
        }
        size_t name_length = get16(p + 28), extra = get16(p + 30), comment = get16(p + 32);
        if (at + ZIP_CENTRAL_SIZE + name_length + extra + comment > cd_size || name_length > ZIP_NAME_MAX) {
            e = npy_fail(detail, NPY_EARCHIVE, "central directory entry %zu is damaged", i);
            break;
        }
        zip_member *m = &(*members)[i];
        memcpy(m->name, p + ZIP_CENTRAL_SIZE, name_length);
        m->name[name_length] = '\0';
        m->method = get16(p + 10);
        m->crc = get32(p + 16);
        m->compressed = get32(p + 20);
        m->size = get32(p + 24);
        m->offset = get32(p + 42);
        e = zip64_apply(p + ZIP_CENTRAL_SIZE + name_length, extra, m, detail);
        at += ZIP_CENTRAL_SIZE + name_length + extra + comment;
    }
    free(cd);
    if (e != NPY_OK) {
        free(*members);
        *members = NULL;
    }
    return e;
}

/* The array name of a member: its name without ".npy" (NULL for another file). */
static int member_array_name(const zip_member *m, char *out, size_t size)
{
    size_t length = strlen(m->name);
    if (length < 4 || strcmp(m->name + length - 4, ".npy") != 0 || length - 4 >= size)
        return 0;
    memcpy(out, m->name, length - 4);
    out[length - 4] = '\0';
    return 1;
}

/* Picks the member of array `name` (NULL: the only array). */
static npy_error member_choose(const zip_member *members, size_t count, const char *name,
                               const zip_member **out, char *detail)
{
    char names[NPY_DETAIL_SIZE / 2] = "", array[ZIP_NAME_MAX + 1];
    size_t arrays = 0, used = 0;
    *out = NULL;
    for (size_t i = 0; i < count; i++) {
        if (!member_array_name(&members[i], array, sizeof array))
            continue;
        arrays++;
        if (name ? strcmp(array, name) == 0 : arrays == 1)
            *out = &members[i];
        if (used < sizeof names - 1)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", array);
    }
    if (arrays == 0)
        return npy_fail(detail, NPY_EMEMBER, "the archive holds no .npy array");
    if (!name && arrays > 1)
        return npy_fail(detail, NPY_EMEMBER, "the archive holds %zu arrays (%s): name one", arrays, names);
    if (!*out)
        return npy_fail(detail, NPY_EMEMBER, "no array '%s' in the archive (it holds %s)", name, names);
    return NPY_OK;
}

/* The member's uncompressed bytes (m->size of them, malloc'd) into *bytes. */
static npy_error member_bytes(FILE *file, const zip_member *m, unsigned char **bytes, char *detail)
{
    unsigned char local[ZIP_LOCAL_SIZE];
    npy_error e = read_at(file, m->offset, local, sizeof local, detail);
    if (e != NPY_OK)
        return e;
    if (get32(local) != ZIP_LOCAL_SIGNATURE)
        return npy_fail(detail, NPY_EARCHIVE, "member '%s': damaged local header", m->name);
    uint64_t data_at = m->offset + ZIP_LOCAL_SIZE + get16(local + 26) + get16(local + 28);
    if (m->method != ZIP_STORED && m->method != ZIP_DEFLATED)
        return npy_fail(detail, NPY_EARCHIVE, "member '%s': compression method %u (only stored and deflate)",
                        m->name, (unsigned)m->method);
    if (m->method == ZIP_STORED && m->compressed != m->size)
        return npy_fail(detail, NPY_EARCHIVE, "member '%s': stored with two sizes", m->name);
    /* Sizes are checked against the file before anything is allocated, so a
     * hostile directory cannot ask for memory: the stored bytes must be in
     * the file, and deflate expands at most 1032 times (RFC 1951's longest
     * match, 258 bytes, in 2 bits at best). */
    uint64_t file_size = 0;
    if (fseeko(file, 0, SEEK_END) == 0)
        file_size = (uint64_t)ftello(file);
    if (data_at > file_size || m->compressed > file_size - data_at)
        return npy_fail(detail, NPY_EARCHIVE, "member '%s' ends past the end of the file", m->name);
    if (m->method == ZIP_DEFLATED && m->size / 1032 > m->compressed + 1)
        return npy_fail(detail, NPY_EARCHIVE, "member '%s': %llu bytes cannot inflate to %llu", m->name,
                        (unsigned long long)m->compressed, (unsigned long long)m->size);
    if (m->size > SIZE_MAX - 1 || m->compressed > SIZE_MAX - 1)
        return npy_fail(detail, NPY_ESHAPE, "member '%s' does not fit in memory", m->name);
    unsigned char *packed = malloc(m->compressed ? (size_t)m->compressed : 1);
    if (!packed)
        return npy_fail(detail, NPY_ENOMEM, "member '%s': out of memory", m->name);
    if ((e = read_at(file, data_at, packed, (size_t)m->compressed, detail)) != NPY_OK) {
        free(packed);
        return e;
    }
    if (m->method == ZIP_STORED) {
        *bytes = packed;
    } else {
#ifdef EIGSTREAM_HAVE_ZLIB
        *bytes = malloc(m->size ? (size_t)m->size : 1);
        z_stream z = {0};
        int rc = *bytes ? inflateInit2(&z, -MAX_WBITS) : Z_MEM_ERROR; /* raw deflate, no zlib header */
        if (rc == Z_OK) {
            /* One call per 1 GiB at most: z_stream counts in 32 bits. */
            size_t in_at = 0, out_at = 0;
            do {
                size_t in = (size_t)m->compressed - in_at, out = (size_t)m->size - out_at;
                z.next_in = packed + in_at;
                z.avail_in = (uInt)(in < (1u << 30) ? in : 1u << 30);
                z.next_out = *bytes + out_at;
                z.avail_out = (uInt)(out < (1u << 30) ? out : 1u << 30);
                const size_t in_before = z.avail_in, out_before = z.avail_out;
                rc = inflate(&z, Z_NO_FLUSH);
                in_at += in_before - z.avail_in;
                out_at += out_before - z.avail_out;
            } while (rc == Z_OK);
            inflateEnd(&z);
            if (rc == Z_STREAM_END && out_at != m->size)
                rc = Z_DATA_ERROR;
        }
        free(packed);
        if (rc != Z_STREAM_END) {
            free(*bytes);
            *bytes = NULL;
            return npy_fail(detail, rc == Z_MEM_ERROR ? NPY_ENOMEM : NPY_EARCHIVE,
                            "member '%s': deflate data is damaged", m->name);
        }
#else
        free(packed);
        return npy_fail(detail, NPY_EARCHIVE, "member '%s' is deflate-compressed (numpy.savez_compressed), and "
                        "this build has no zlib: apt-get install zlib1g-dev and rebuild, or use numpy.savez",
                        m->name);
#endif
    }
    if (crc32_update(0, *bytes, (size_t)m->size) != m->crc) {
        free(*bytes);
        *bytes = NULL;
        return npy_fail(detail, NPY_EARCHIVE, "member '%s': CRC-32 mismatch (damaged archive)", m->name);
    }
    return NPY_OK;
}

npy_error npz_read(const char *path, const char *name, npy_array *out, char *detail)
{
    if (!path || !out)
        return npy_fail(detail, NPY_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    FILE *file = fopen(path, "rb");
    if (!file)
        return npy_fail(detail, NPY_EIO, "cannot open '%s': %s", path, strerror(errno));
    zip_member *members = NULL;
    size_t count = 0;
    const zip_member *m = NULL;
    unsigned char *bytes = NULL;
    npy_error e = directory_read(file, &members, &count, detail);
    if (e == NPY_OK)
        e = member_choose(members, count, name, &m, detail);
    if (e == NPY_OK)
        e = member_bytes(file, m, &bytes, detail);
    fclose(file);
    if (e == NPY_OK) {
        char inner[NPY_DETAIL_SIZE];
        e = npy_parse_buffer(bytes, (size_t)m->size, out, inner);
        if (e != NPY_OK)
            npy_fail(detail, e, "member '%s': %s", m->name, inner);
    }
    free(bytes);
    free(members);
    return e;
}

/* Writes the local header and bytes of one member; fills its central entry
 * (ZIP_CENTRAL_SIZE + name bytes at central) and advances *offset. */
static npy_error member_write(FILE *file, const npz_entry *entry, uint64_t *offset, unsigned char *central,
                              char *detail)
{
    unsigned char head[NPY_HEADER_FORMAT_MAX];
    size_t head_length = 0, payload = 0;
    npy_error e = npy_header_format(entry->dtype, entry->fortran_order, entry->ndim, entry->shape, head,
                                    &head_length, &payload, detail);
    if (e != NPY_OK)
        return e;
    if (payload > 0 && !entry->data)
        return npy_fail(detail, NPY_EINVAL, "array '%s': NULL data", entry->name);
    const uint64_t size = (uint64_t)head_length + payload;
    if (size >= ZIP_U32_MAX || *offset + size + ZIP_LOCAL_SIZE + ZIP_NAME_MAX >= ZIP_U32_MAX)
        return npy_fail(detail, NPY_ESHAPE, "array '%s': a .npz over 4 GiB is not written (write .npy files)",
                        entry->name);
    const uint32_t crc = crc32_update(crc32_update(0, head, head_length), entry->data, payload);
    char name[ZIP_NAME_MAX + 1];
    const size_t name_length = (size_t)snprintf(name, sizeof name, "%s.npy", entry->name);

    /* Fields shared by the local header (from byte 4) and the central entry (from byte 6). */
    unsigned char common[26];
    put16(common, 20);           /* version needed to extract: 2.0 */
    put16(common + 2, 0);        /* flags */
    put16(common + 4, ZIP_STORED);
    put16(common + 6, 0);        /* time 00:00:00 */
    put16(common + 8, 0x21);     /* date 1980-01-01 */
    put32(common + 10, crc);
    put32(common + 14, (uint32_t)size);
    put32(common + 18, (uint32_t)size);
    put16(common + 22, (uint32_t)name_length);
    put16(common + 24, 0);       /* extra field length */
    unsigned char local[ZIP_LOCAL_SIZE];
    put32(local, ZIP_LOCAL_SIGNATURE);
    memcpy(local + 4, common, sizeof common);

    memset(central, 0, ZIP_CENTRAL_SIZE);
    put32(central, ZIP_CENTRAL_SIGNATURE);
    put16(central + 4, 20);      /* version made by: 2.0, MS-DOS attributes */
    memcpy(central + 6, common, sizeof common);
    put32(central + 42, (uint32_t)*offset);
    memcpy(central + ZIP_CENTRAL_SIZE, name, name_length);

    int ok = fwrite(local, 1, sizeof local, file) == sizeof local &&
             fwrite(name, 1, name_length, file) == name_length &&
             fwrite(head, 1, head_length, file) == head_length &&
             (payload == 0 || fwrite(entry->data, 1, payload, file) == payload);
    if (!ok)
        return npy_fail(detail, NPY_EWRITE, "cannot write: %s", strerror(errno));
    *offset += ZIP_LOCAL_SIZE + name_length + size;
    return NPY_OK;
}

npy_error npz_write(const char *path, const npz_entry *entries, size_t count, char *detail)
{
    if (!path || (count > 0 && !entries) || count > 0xfffe)
        return npy_fail(detail, NPY_EINVAL, "invalid path or entries");
    for (size_t i = 0; i < count; i++)
        if (!entries[i].name || !entries[i].name[0] || strlen(entries[i].name) > 200 ||
            strchr(entries[i].name, '/'))
            return npy_fail(detail, NPY_EINVAL, "array %zu: a name of 1 to 200 bytes without '/'", i);
    unsigned char *central = malloc(count * (ZIP_CENTRAL_SIZE + ZIP_NAME_MAX) + 1);
    if (!central)
        return npy_fail(detail, NPY_ENOMEM, "out of memory");
    FILE *file = fopen(path, "wb");
    if (!file) {
        free(central);
        return npy_fail(detail, NPY_EWRITE, "cannot create '%s': %s", path, strerror(errno));
    }
    uint64_t offset = 0;
    size_t cd_size = 0;
    npy_error e = NPY_OK;
    for (size_t i = 0; e == NPY_OK && i < count; i++) {
        e = member_write(file, &entries[i], &offset, central + cd_size, detail);
        cd_size += ZIP_CENTRAL_SIZE + strlen(entries[i].name) + 4;
    }
    if (e == NPY_OK) {
        unsigned char end[ZIP_END_SIZE] = {0};
        put32(end, ZIP_END_SIGNATURE);
        put16(end + 8, (uint32_t)count);
        put16(end + 10, (uint32_t)count);
        put32(end + 12, (uint32_t)cd_size);
        put32(end + 16, (uint32_t)offset);
        if (fwrite(central, 1, cd_size, file) != cd_size || fwrite(end, 1, sizeof end, file) != sizeof end)
            e = npy_fail(detail, NPY_EWRITE, "cannot write '%s': %s", path, strerror(errno));
    }
    if (fclose(file) != 0 && e == NPY_OK)
        e = npy_fail(detail, NPY_EWRITE, "cannot write '%s': %s", path, strerror(errno));
    free(central);
    if (e != NPY_OK)
        remove(path);
    return e;
}
