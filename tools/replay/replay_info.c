/*
 * replay_info.c - eigstream-replay --info: a recording's summary. Every
 * frame is read, so that a payload whose CRC32C differs from the index (the
 * reader's check) or from its header's crc32c (when the header's CRC flag is
 * set) is counted as a CRC failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "eig.h"
#include "protocol.h"
#include "replay.h"

/* What reading the frames found. */
typedef struct replay_census {
    uint64_t gaps, missing, crc_failures, unreadable;
    uint64_t min_bytes, max_bytes, total_bytes;
    uint32_t min_parts, max_parts;
} replay_census;

/* 1 when the frame in buf (read without error) fails its header's CRC. */
static int header_crc_fails(const uint8_t *buf, const recording_frame *f)
{
    protocol_header h;
    if (protocol_header_decode(buf, PROTOCOL_HEADER_BYTES, &h) != PROTOCOL_OK)
        return 1;
    const void *payload[1] = {buf + PROTOCOL_HEADER_BYTES};
    size_t bytes[1] = {(size_t)(f->bytes - PROTOCOL_HEADER_BYTES)};
    return protocol_check_crc(&h, payload, bytes, 1) != PROTOCOL_OK;
}

/* Reads every frame of r, counting sizes, sequence gaps and CRC failures
 * (each named on stderr). 0, or -1 when the buffer cannot be had. */
static int replay_census_take(recording_reader *r, replay_census *c)
{
    uint64_t frames = recording_reader_frames(r);
    size_t cap;
    uint8_t *buf = replay_buffer_alloc(r, 0, frames, &cap);
    if (buf == NULL)
        return -1;
    *c = (replay_census){.min_bytes = UINT64_MAX, .min_parts = UINT32_MAX};
    for (uint64_t i = 0; i < frames; i++) {
        const recording_frame *f = recording_reader_frame(r, i);
        char err[RECORDING_ERROR_MAX];
        recording_error e = recording_reader_read(r, i, buf, cap, err, sizeof err);
        if (e == RECORDING_ECRC || (e == RECORDING_OK && header_crc_fails(buf, f))) {
            c->crc_failures++;
            fprintf(stderr, REPLAY_PROG ": frame %llu: %s\n", (unsigned long long)i,
                    e != RECORDING_OK ? err : "payload differs from the header's crc32c");
        } else if (e != RECORDING_OK) {
            c->unreadable++;
            fprintf(stderr, REPLAY_PROG ": frame %llu: %s\n", (unsigned long long)i, err);
        }
        const recording_frame *prev = i ? recording_reader_frame(r, i - 1) : NULL;
        if (prev != NULL && f->seq != prev->seq + 1) {
            c->gaps++;
            c->missing += f->seq > prev->seq ? f->seq - prev->seq - 1 : 0;
        }
        c->min_bytes = f->bytes < c->min_bytes ? f->bytes : c->min_bytes;
        c->max_bytes = f->bytes > c->max_bytes ? f->bytes : c->max_bytes;
        c->min_parts = f->parts < c->min_parts ? f->parts : c->min_parts;
        c->max_parts = f->parts > c->max_parts ? f->parts : c->max_parts;
        c->total_bytes += f->bytes;
    }
    free(buf);
    return 0;
}

/* The format line: kind, n, count, element, storage or mode. */
static void print_format(const recording_format *fmt)
{
    printf("kind        %s (protocol version %u)\n", recording_kind_name(fmt->kind), fmt->protocol_version);
    if (fmt->kind == PROTOCOL_KIND_IQ) {
        printf("cubes       channels %u, pulses %u, gates %u, format %s, layout %s\n", fmt->n, fmt->count,
               fmt->gates, protocol_iq_format_name(fmt->element), protocol_iq_layout_name(fmt->storage));
        return;
    }
    printf("matrices    n %u, count %u, element %s, ", fmt->n, fmt->count,
           eig_precision_name((eig_precision)fmt->element));
    if (fmt->kind == PROTOCOL_KIND_COVARIANCE)
        printf("storage %s\n", protocol_storage_name(fmt->storage));
    else
        printf("mode %s\n", protocol_mode_name(fmt->mode));
}

/* The timing and sequence lines of the frames. */
static void print_frames(recording_reader *r, const replay_census *c)
{
    uint64_t frames = recording_reader_frames(r);
    const recording_frame *first = recording_reader_frame(r, 0), *last = recording_reader_frame(r, frames - 1);
    uint64_t t0 = replay_frame_time_ns(first), t1 = replay_frame_time_ns(last);
    double duration = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0.0;
    printf("frames      %llu, duration %.3f s, mean rate %.3f frames/s\n", (unsigned long long)frames, duration,
           duration > 0 ? (double)(frames - 1) / duration : 0.0);
    printf("sizes       %llu bytes of frames, %llu..%llu bytes per frame, %u..%u payload parts\n",
           (unsigned long long)c->total_bytes, (unsigned long long)c->min_bytes, (unsigned long long)c->max_bytes,
           c->min_parts, c->max_parts);
    printf("sequence    seq %llu..%llu, %llu gaps (%llu frames missing)\n", (unsigned long long)first->seq,
           (unsigned long long)last->seq, (unsigned long long)c->gaps, (unsigned long long)c->missing);
}

int replay_info(const char *name)
{
    recording_reader *r = NULL;
    if (replay_open(name, &r) != 0)
        return 1;
    replay_census c = {0};
    uint64_t frames = recording_reader_frames(r);
    if (frames > 0 && replay_census_take(r, &c) != 0) {
        recording_reader_close(&r);
        return 1;
    }
    printf("recording   %s\n", name);
    printf("description \"%s\"\n", recording_reader_description(r));
    if (frames > 0) {
        print_format(recording_reader_format(r));
        print_frames(r, &c);
    } else {
        printf("frames      0\n");
    }
    printf("crc         %llu failures in %llu frames read\n", (unsigned long long)c.crc_failures,
           (unsigned long long)frames);
    if (c.unreadable > 0)
        printf("unreadable  %llu frames (header or I/O errors above)\n", (unsigned long long)c.unreadable);
    printf("truncated   %llu bytes\n", (unsigned long long)recording_reader_truncated_bytes(r));
    recording_reader_close(&r);
    return c.crc_failures || c.unreadable ? 1 : 0;
}
