/*
 * replay_read.c - opening a recording and sizing a frame buffer, for the
 * player, --info and --to-npy.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol.h"
#include "replay.h"

int replay_fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, REPLAY_PROG ": ");
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    return -1;
}

int replay_open(const char *name, recording_reader **r)
{
    char err[RECORDING_ERROR_MAX];
    if (recording_reader_open(r, name, err, sizeof err) != RECORDING_OK) {
        fprintf(stderr, REPLAY_PROG ": %s\n", err);
        return -1;
    }
    return 0;
}

uint8_t *replay_buffer_alloc(const recording_reader *r, uint64_t first, uint64_t last, size_t *bytes)
{
    uint64_t largest = PROTOCOL_HEADER_BYTES;
    for (uint64_t i = first; i < last; i++) {
        const recording_frame *f = recording_reader_frame(r, i);
        if (f != NULL && f->bytes > largest)
            largest = f->bytes;
    }
    uint8_t *buf = largest <= SIZE_MAX ? malloc((size_t)largest) : NULL;
    if (buf == NULL)
        fprintf(stderr, REPLAY_PROG ": cannot allocate a frame buffer of %llu bytes\n", (unsigned long long)largest);
    *bytes = (size_t)largest;
    return buf;
}
