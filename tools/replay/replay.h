/*
 * replay.h - eigstream-replay's parts: the player (replay_main.c), --info
 * (replay_info.c), --to-npy (replay_npy.c), and the reading they share
 * (replay_read.c). Each *_main-like function returns the process exit status
 * and names its errors on stderr under "eigstream-replay".
 */
#ifndef EIGSTREAM_REPLAY_H
#define EIGSTREAM_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "recording.h"

#define REPLAY_PROG "eigstream-replay"

/* The time a frame is scheduled by: when it was received, or its source
 * timestamp for a recording whose received_ns is 0 (ns since the epoch). */
static inline uint64_t replay_frame_time_ns(const recording_frame *f)
{
    return f->received_ns != 0 ? f->received_ns : f->timestamp_ns;
}

/* Prints "eigstream-replay: <message>" on stderr; returns -1. */
int replay_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Opens the recording NAME; 0, or -1 with the reason on stderr. */
int replay_open(const char *name, recording_reader **r);

/* A buffer for the largest frame of frames [first, last) of r (its size in
 * *bytes), or NULL after naming the failure on stderr. Caller frees. */
uint8_t *replay_buffer_alloc(const recording_reader *r, uint64_t first, uint64_t last, size_t *bytes);

/* --info NAME: prints the recording's summary, reading every frame to check
 * its CRC. Exit status: 0, or 1 when it cannot be read or a frame's CRC fails. */
int replay_info(const char *name);

/* --to-npy OUT.npy: writes the frames of NAME as NumPy arrays (layout in
 * replay_npy.c and the README). Exit status 0 or 1. */
int replay_export_npy(const char *name, const char *out);

/* --check INPUTS: the self-check of every eigenspace frame of NAME against
 * the covariance frame of the same seq in the recording INPUTS
 * (replay_check.c). Exit status 0 every matrix passed; 3 a matrix failed
 * or the daemon flagged a frame CHECK_FAILED; 1 a frame without its input,
 * nothing checked, or a recording that cannot be read or matched. */
int replay_check(const char *name, const char *inputs);

#endif
