/*
 * fuzz_recording_fixture.h - the small fixed recording behind the
 * recording_meta fuzz target: its data file is what every fuzzed
 * .sigmf-meta describes, and its own meta is the target's seed.
 */
#ifndef EIGSTREAM_FUZZ_RECORDING_FIXTURE_H
#define EIGSTREAM_FUZZ_RECORDING_FIXTURE_H

#include "recording.h"

/* Bytes of the fixture's data file: the samples of two covariance frames of
 * 2 complex-float 2 x 2 matrices (64 bytes each; layout samples: their
 * headers are in the journal). */
#define FUZZ_RECORDING_DATA_BYTES 128

/* Writes recording NAME (NAME.sigmf-data, -index, -meta) with the library's
 * writer: frame seq 1 in one part with a CRC, frame seq 2 in one part per
 * matrix; deterministic (fixed times). Returns the writer's error. */
recording_error fuzz_recording_fixture_write(const char *name, char *err, size_t err_bytes);

#endif
