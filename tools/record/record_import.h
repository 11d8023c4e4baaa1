/*
 * record_import.h - eigstream-record --import-iq (record_import.c): another
 * tool's IQ samples (SigMF, or a raw file such as GNU Radio's File Sink
 * writes) into an eigstream recording of IQ cubes.
 */
#ifndef EIGSTREAM_RECORD_IMPORT_H
#define EIGSTREAM_RECORD_IMPORT_H

#include <stdint.h>

#include "recording.h"

#define RECORD_PROG "eigstream-record"

typedef struct record_import_options {
    const char *source;      /* SOURCE, SOURCE.sigmf-meta or SOURCE.sigmf-data; else a raw file */
    const char *format;      /* raw files: cf32_le, ci16_le, cf64_le (SigMF: core:datatype) */
    const char *description; /* core:description of the recording, NULL = none */
    uint32_t channels;       /* raw files; SigMF: core:num_channels (given: must agree) */
    uint32_t pulses, gates;  /* a cube: pulses x gates samples of every channel */
    double scale;            /* the cubes' scale (docs/protocol.md): ci16_le's volts per count */
    double sample_rate;      /* Hz, 0 = SigMF's core:sample_rate, else none */
} record_import_options;

/* Imports o->source into the recording NAME; the exit status (0, or 1 with
 * the reason on stderr; the summary line on stdout). */
int record_import(const record_import_options *o, const char *name);

#endif
