/*
 * fuzz_replay_main.c - runs a fuzz target without libFuzzer: every regular
 * file of every folder named on the command line goes once through
 * LLVMFuzzerTestOneInput (ctest fuzz_replay_<name>: the target's
 * tests/fuzz/regressions/<name>/ and tests/fuzz/corpus/<name>/).
 *
 *   fuzz_replay_covariance DIR...
 *
 * A missing folder holds no files (a target without findings has no
 * regressions folder); replaying no file at all fails, as that means the
 * corpus went missing. A broken invariant aborts (FUZZ_REQUIRE); exit 0
 * otherwise, 1 on an unreadable file.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

/* Reads path whole into a buffer of exactly its size (so a sanitizer build
 * catches a read past the input's end); NULL on failure. */
static uint8_t *file_read(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    uint8_t *buf = NULL;
    long end = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (end >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc(end > 0 ? (size_t)end : 1)) != NULL &&
        fread(buf, 1, (size_t)end, f) != (size_t)end) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = end > 0 ? (size_t)end : 0;
    return buf;
}

/* Replays every regular file of dir; returns the files replayed, -1 on an unreadable one. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    long files = 0;
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[4096];
        size_t size;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        uint8_t *data = file_read(path, &size);
        if (data == NULL) {
            fprintf(stderr, "fuzz replay: cannot read %s\n", path);
            files = -1;
            break;
        }
        LLVMFuzzerTestOneInput(data, size);
        free(data);
        files++;
    }
    closedir(d);
    return files;
}

int main(int argc, char **argv)
{
    long total = 0;
    for (int i = 1; i < argc; i++) {
        long files = replay_dir(argv[i]);
        if (files < 0)
            return 1;
        printf("fuzz replay: %ld files of %s\n", files, argv[i]);
        total += files;
    }
    if (total == 0) {
        fprintf(stderr, "fuzz replay: no input files (corpus missing?)\n");
        return 1;
    }
    return 0;
}
