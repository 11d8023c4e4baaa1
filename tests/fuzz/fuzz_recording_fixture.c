/*
 * fuzz_recording_fixture.c - writes the recording_meta target's fixed
 * recording (fuzz_recording_fixture.h).
 */
#include "fuzz_recording_fixture.h"

#include <string.h>

/* Appends frame seq of 2 matrices (values seq + element index), in one part
 * (with the CRC flag) or one part per matrix. */
static recording_error fixture_append(recording_writer *w, uint64_t seq, int one_part, char *err, size_t err_bytes)
{
    float matrices[2][8];
    for (int i = 0; i < 16; i++)
        matrices[i / 8][i % 8] = (float)seq + (float)i;
    protocol_header h;
    protocol_header_init(&h, PROTOCOL_KIND_COVARIANCE);
    h.seq = seq;
    h.timestamp_ns = 1700000000000000000ull + seq;
    h.n = 2;
    h.count = 2;
    h.element = EIG_COMPLEX_FLOAT;
    h.storage = PROTOCOL_STORAGE_FULL;
    h.mode = PROTOCOL_MODE_NONE;
    h.payload_bytes = sizeof matrices;
    h.snapshots = 16;
    const void *part[2] = {matrices[0], matrices[1]};
    size_t part_bytes[2] = {sizeof matrices[0], sizeof matrices[1]};
    if (one_part) {
        part_bytes[0] = sizeof matrices;
        h.flags = PROTOCOL_FLAG_CRC;
        h.crc32c = protocol_crc32c(0, matrices, sizeof matrices);
    }
    uint8_t header[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&h, header);
    return recording_writer_append(w, header, part, part_bytes, one_part ? 1 : 2, 1700000000500000000ull + seq, err,
                                   err_bytes);
}

recording_error fuzz_recording_fixture_write(const char *name, char *err, size_t err_bytes)
{
    recording_writer *w = NULL;
    recording_writer_params params = {name, "fuzz fixture", "eigstream fuzz"};
    recording_error e = recording_writer_open(&w, &params, err, err_bytes);
    if (e != RECORDING_OK)
        return e;
    e = fixture_append(w, 1, 1, err, err_bytes);
    if (e == RECORDING_OK)
        e = fixture_append(w, 2, 0, err, err_bytes);
    recording_error closed = recording_writer_close(&w, err, err_bytes);
    return e != RECORDING_OK ? e : closed;
}
