/*
 * fuzz_recording_meta.c - fuzzes the recording reader (eigstream-replay, the
 * daemon's file input) with a hostile .sigmf-meta over a fixed data file.
 *
 * Contract: the input is the text of NAME.sigmf-meta; NAME.sigmf-data is the
 * fixture's (fuzz_recording_fixture.h), written once per process in a private
 * temporary folder. recording_reader_open(NAME) parses it; when it opens,
 * every frame's part sizes (recording_reader_part_sizes) and bytes
 * (recording_reader_read) are read.
 *
 * Invariants: what every indexed frame keeps in the data file (at least its
 * payload, bytes - 64, in either layout: docs/recording.md) lies inside it,
 * after the previous frame's; its part sizes, each within its payload, sum
 * to that payload, in the part count the index gives; a frame read whole has
 * a header that decodes, with the index's seq, and a payload of the index's
 * CRC32C.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_recording_fixture.h"
#include "fuzz_support.h"

/* NAME of the fixture (created on the first call), or NULL. */
static const char *fixture_name(void)
{
    static char name[512];
    if (name[0] == '\0') {
        char err[RECORDING_ERROR_MAX];
        const char *dir = fuzz_temp_dir();
        if (dir == NULL)
            return NULL;
        snprintf(name, sizeof name, "%s/fixture", dir);
        if (fuzz_recording_fixture_write(name, err, sizeof err) != RECORDING_OK) {
            fprintf(stderr, "fuzz_recording_meta: %s\n", err);
            abort(); /* the harness cannot run at all */
        }
    }
    return name;
}

/* Reads frame i's part sizes and bytes and checks them against the index. */
static void frame_check(recording_reader *r, uint64_t i, uint64_t previous_end)
{
    static size_t part_bytes[RECORDING_PARTS_MAX];
    static uint8_t buf[FUZZ_RECORDING_DATA_BYTES + PROTOCOL_HEADER_BYTES];
    const recording_frame *f = recording_reader_frame(r, i);
    char err[RECORDING_ERROR_MAX];
    size_t parts = 0, sum = 0;
    FUZZ_REQUIRE(f != NULL, "a frame below recording_reader_frames has no index entry");
    FUZZ_REQUIRE(f->offset >= previous_end && f->bytes >= PROTOCOL_HEADER_BYTES, "frames overlap or are too short");
    FUZZ_REQUIRE(f->offset <= FUZZ_RECORDING_DATA_BYTES &&
                     f->bytes - PROTOCOL_HEADER_BYTES <= FUZZ_RECORDING_DATA_BYTES - f->offset,
                 "an indexed frame lies outside the data file");
    if (recording_reader_part_sizes(r, i, part_bytes, RECORDING_PARTS_MAX, &parts) == RECORDING_OK) {
        FUZZ_REQUIRE(parts == f->parts, "part sizes of another part count than the index");
        for (size_t p = 0; p < parts; p++) {
            /* Checked one by one: huge sizes can wrap around to the right sum. */
            FUZZ_REQUIRE(part_bytes[p] <= f->bytes - PROTOCOL_HEADER_BYTES, "a part larger than its frame's payload");
            sum += part_bytes[p];
        }
        FUZZ_REQUIRE(sum == f->bytes - PROTOCOL_HEADER_BYTES, "part sizes do not sum to the frame's payload");
    }
    if (recording_reader_read(r, i, buf, sizeof buf, err, sizeof err) != RECORDING_OK)
        return;
    protocol_header h;
    FUZZ_REQUIRE(protocol_header_decode(buf, PROTOCOL_HEADER_BYTES, &h) == PROTOCOL_OK && h.seq == f->seq,
                 "a frame read has a header that disagrees with the index");
    FUZZ_REQUIRE(protocol_crc32c(0, buf + PROTOCOL_HEADER_BYTES, (size_t)f->bytes - PROTOCOL_HEADER_BYTES) ==
                     f->crc32c, "a frame read has another CRC32C than the index");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *name = fixture_name();
    char path[600], err[RECORDING_ERROR_MAX];
    if (name == NULL)
        return 0;
    snprintf(path, sizeof path, "%s.sigmf-meta", name);
    FILE *meta = fopen(path, "wb");
    if (meta == NULL)
        return 0;
    size_t written = fwrite(data, 1, size, meta);
    if (fclose(meta) != 0 || written != size)
        return 0;

    recording_reader *r = NULL;
    if (recording_reader_open(&r, name, err, sizeof err) != RECORDING_OK) {
        FUZZ_REQUIRE(r == NULL, "a failed open left a reader");
        return 0;
    }
    FUZZ_REQUIRE(recording_reader_format(r) != NULL, "an open reader without a format");
    uint64_t end = 0;
    for (uint64_t i = 0; i < recording_reader_frames(r); i++) {
        frame_check(r, i, end);
        end = recording_reader_frame(r, i)->offset + recording_reader_frame(r, i)->bytes - PROTOCOL_HEADER_BYTES;
    }
    recording_reader_close(&r);
    FUZZ_REQUIRE(r == NULL, "recording_reader_close did not clear the pointer");
    return 0;
}
