/*
 * fuzz_support.c - the framing, in-memory files and temporary folder of the
 * fuzz targets (fuzz_support.h).
 */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "protocol.h"

void fuzz_invariant_broken(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n", file, line, what);
    abort();
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t fuzz_parts_split(const uint8_t *data, size_t size, const uint8_t *part[FUZZ_PARTS_MAX],
                        size_t part_bytes[FUZZ_PARTS_MAX])
{
    if (size < 1)
        return 0;
    size_t parts = data[0] % (FUZZ_PARTS_MAX + 1);
    if (size < 1 + 4 * parts)
        return 0;
    size_t at = 1 + 4 * parts;
    for (size_t i = 0; i < parts; i++) {
        size_t want = get_u32(data + 1 + 4 * i), left = size - at;
        part[i] = data + at;
        part_bytes[i] = want < left ? want : left;
        at += part_bytes[i];
    }
    return parts;
}

size_t fuzz_parts_join(const uint8_t *const *part, const size_t *part_bytes, size_t parts, uint8_t *out,
                       size_t out_bytes)
{
    size_t need = 1 + 4 * parts;
    for (size_t i = 0; i < parts; i++)
        need += part_bytes[i];
    if (parts > FUZZ_PARTS_MAX || need > out_bytes)
        return 0;
    out[0] = (uint8_t)parts;
    size_t at = 1 + 4 * parts;
    for (size_t i = 0; i < parts; i++) {
        uint32_t n = (uint32_t)part_bytes[i];
        for (int b = 0; b < 4; b++)
            out[1 + 4 * i + b] = (uint8_t)(n >> (8 * b));
        memcpy(out + at, part[i], part_bytes[i]);
        at += part_bytes[i];
    }
    return need;
}

size_t fuzz_message_split(const uint8_t *data, size_t size, const uint8_t *part[FUZZ_PARTS_MAX],
                          size_t part_bytes[FUZZ_PARTS_MAX], protocol_header *h, uint8_t kind)
{
    size_t parts = fuzz_parts_split(data, size, part, part_bytes);
    if (parts == 0 || protocol_header_decode(part[0], part_bytes[0], h) != PROTOCOL_OK)
        return 0;
    uint8_t again[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(h, again);
    FUZZ_REQUIRE(part_bytes[0] == PROTOCOL_HEADER_BYTES && memcmp(again, part[0], sizeof again) == 0,
                 "a decoded header does not re-encode to the same bytes");
    return h->kind == kind ? parts : 0;
}

uint32_t fuzz_payload_crc(const void *const *part, const size_t *part_bytes, size_t parts)
{
    uint32_t fast = 0, portable = 0;
    for (size_t i = 0; i < parts; i++) {
        fast = protocol_crc32c(fast, part[i], part_bytes[i]);
        portable = protocol_crc32c_portable(portable, part[i], part_bytes[i]);
    }
    FUZZ_REQUIRE(fast == portable, "the two CRC32C implementations disagree");
    FUZZ_REQUIRE(fast == protocol_payload_crc32c(part, part_bytes, parts), "protocol_payload_crc32c differs");
    return fast;
}

int fuzz_crc_accepted(const protocol_header *h, const void *const *part, const size_t *part_bytes, size_t parts,
                      uint32_t crc)
{
    if (protocol_check_crc(h, part, part_bytes, parts) != PROTOCOL_OK) {
        FUZZ_REQUIRE((h->flags & PROTOCOL_FLAG_CRC) && crc != h->crc32c, "rejected a matching CRC");
        return 0;
    }
    FUZZ_REQUIRE(!(h->flags & PROTOCOL_FLAG_CRC) || crc == h->crc32c, "accepted a CRC that does not match");
    return 1;
}

int fuzz_payload_accepted(const protocol_header *h, const uint8_t *const *part, const size_t *part_bytes,
                          size_t parts, size_t max_payload_bytes, fuzz_check_sizes check_sizes,
                          void (*require_sizes)(const protocol_header *h, const size_t *part_bytes, size_t parts))
{
    const void *payload[FUZZ_PARTS_MAX];
    for (size_t i = 1; i < parts; i++)
        payload[i - 1] = part[i];
    uint32_t crc = fuzz_payload_crc(payload, part_bytes + 1, parts - 1);
    if (check_sizes(h, part_bytes + 1, parts - 1, max_payload_bytes) != PROTOCOL_OK)
        return 0;
    require_sizes(h, part_bytes + 1, parts - 1);
    return fuzz_crc_accepted(h, payload, part_bytes + 1, parts - 1, crc);
}

const char *fuzz_memfile_fill(int slot, const void *bytes, size_t size)
{
    static int fd[2] = {-1, -1};
    static char path[2][64];
    if (slot < 0 || slot > 1)
        return NULL;
    if (fd[slot] < 0) {
        fd[slot] = memfd_create("eigstream-fuzz", 0);
        if (fd[slot] < 0)
            return NULL;
        snprintf(path[slot], sizeof path[slot], "/proc/self/fd/%d", fd[slot]);
    }
    if (ftruncate(fd[slot], 0) != 0 || (size > 0 && pwrite(fd[slot], bytes, size, 0) != (ssize_t)size))
        return NULL;
    return path[slot];
}

static char temp_dir[256];

/* Removes the temporary folder's files, then the folder (atexit). */
static void temp_dir_remove(void)
{
    DIR *d = opendir(temp_dir);
    if (d != NULL) {
        char path[512];
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", temp_dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(temp_dir);
}

const char *fuzz_temp_dir(void)
{
    if (temp_dir[0] != '\0')
        return temp_dir;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(temp_dir, sizeof temp_dir, "%s/eigstream-fuzz-XXXXXX", base != NULL ? base : "/tmp");
    if (mkdtemp(temp_dir) == NULL) {
        temp_dir[0] = '\0';
        return NULL;
    }
    atexit(temp_dir_remove);
    return temp_dir;
}
