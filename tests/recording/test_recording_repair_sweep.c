/*
 * test_recording_repair_sweep.c - recording_repair after a recorder killed at
 * every byte of its writes.
 *
 *   test_recording_repair_sweep SCRATCH_DIR
 *
 * A recorder killed by a signal leaves exactly the bytes its write() calls
 * had made, in the order it made them (docs/recording.md, layout samples):
 * the journal's 16-byte file header at open, then per frame its samples (the
 * payload) to the data file, followed by its 64-byte journal record and its
 * head (the 64-byte header) to the journal. So every state a kill can leave
 * is a prefix of that write sequence: the data file cut at D bytes and the
 * journal at J bytes. The test records FRAMES small frames (3 payload parts
 * each, distinct received times), then for every cut point t of the sequence
 * (byte by byte: torn samples, torn records and torn heads included)
 * rebuilds the recording from the two prefixes with recording_repair and
 * checks, against what it sent (its own bytes and numbers, never the
 * library's earlier output):
 *   - every frame whose record and head are whole is recovered, byte for
 *     byte (recording_reader_read: head and samples as sent), none more;
 *     cut_bytes is every data byte after its samples;
 *   - each keeps its received time and its 3 parts (part sizes as sent);
 *   - seq, timestamp, offset (of its samples), size and the CRC32C (bitwise
 *     oracle) of each.
 * The data file holds no headers: a repair that ignored the journal would
 * recover nothing, caught at the first cut after a whole record and head.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c_bitwise.h"
#include "eig.h"
#include "protocol.h"
#include "recording.h"
#include "test_check.h"

#define FRAMES 5
#define N 2
#define COUNT 3
#define MATRIX_BYTES (N * N * 16) /* complex double, full storage */
#define PAYLOAD_BYTES (COUNT * MATRIX_BYTES)
#define FRAME_BYTES (PROTOCOL_HEADER_BYTES + PAYLOAD_BYTES)
#define JOURNAL_FILE_HEADER 16 /* docs/recording.md, Journal */
#define JOURNAL_RECORD 64
#define JOURNAL_ENTRY (JOURNAL_RECORD + PROTOCOL_HEADER_BYTES) /* record, then the head: the header */
#define RECEIVED_NS(i) (1795445045000000000ull + 7919ull * (uint64_t)(i))

static uint8_t sent[FRAMES][FRAME_BYTES]; /* each frame as on the wire */

static void make_frames(void)
{
    for (int i = 0; i < FRAMES; i++) {
        uint8_t *payload = sent[i] + PROTOCOL_HEADER_BYTES;
        for (int b = 0; b < PAYLOAD_BYTES; b++) /* distinct bytes per frame; finite doubles are not needed here */
            payload[b] = (uint8_t)(31 * i + 7 * b + 1);
        protocol_header h;
        protocol_header_init(&h, PROTOCOL_KIND_COVARIANCE);
        h.seq = 40 + (uint64_t)i;
        h.timestamp_ns = 1795445045123456789ull + 1000ull * (uint64_t)i;
        h.n = N;
        h.count = COUNT;
        h.element = EIG_COMPLEX_DOUBLE;
        h.storage = PROTOCOL_STORAGE_FULL;
        h.payload_bytes = PAYLOAD_BYTES;
        protocol_header_encode(&h, sent[i]);
    }
}

static int write_prefix(const char *path, const uint8_t *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok = f != NULL && (size == 0 || fwrite(bytes, 1, size, f) == size);
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

static uint8_t *read_whole(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    uint8_t *buf = malloc(1 << 16);
    *size = buf != NULL ? fread(buf, 1, 1 << 16, f) : 0;
    fclose(f);
    return buf;
}

/* Records the frames (3 parts each, received time RECEIVED_NS(i)) as NAME. */
static int record_all(const char *name)
{
    char err[RECORDING_ERROR_MAX] = "";
    recording_writer *w = NULL;
    recording_writer_params params = {.path = name, .description = "sweep", .recorder = "test"};
    if (recording_writer_open(&w, &params, err, sizeof err) != RECORDING_OK) {
        FAIL("open %s: %s", name, err);
        return -1;
    }
    for (int i = 0; i < FRAMES; i++) {
        const void *part[COUNT];
        size_t part_bytes[COUNT];
        for (int p = 0; p < COUNT; p++) {
            part[p] = sent[i] + PROTOCOL_HEADER_BYTES + p * MATRIX_BYTES;
            part_bytes[p] = MATRIX_BYTES;
        }
        if (recording_writer_append(w, sent[i], part, part_bytes, COUNT, RECEIVED_NS(i), err, sizeof err) !=
            RECORDING_OK) {
            FAIL("append %d: %s", i, err);
            return -1;
        }
    }
    return recording_writer_close(&w, err, sizeof err) == RECORDING_OK ? 0 : -1;
}

/* Checks the repaired recording NAME: `complete` frames, with their
 * received times and parts. */
static void check_recovered(const char *name, uint64_t t, uint64_t complete)
{
    char err[RECORDING_ERROR_MAX] = "";
    recording_reader *r = NULL;
    if (recording_reader_open(&r, name, err, sizeof err) != RECORDING_OK) {
        FAIL("cut %llu: the repaired recording does not open: %s", (unsigned long long)t, err);
        return;
    }
    CHECK(recording_reader_frames(r) == complete, "cut %llu: %llu frames recovered, %llu complete in the data",
          (unsigned long long)t, (unsigned long long)recording_reader_frames(r), (unsigned long long)complete);
    for (uint64_t i = 0; i < complete && i < recording_reader_frames(r); i++) {
        const recording_frame *f = recording_reader_frame(r, i);
        CHECK(f->seq == 40 + i && f->timestamp_ns == 1795445045123456789ull + 1000ull * i &&
                  f->offset == i * PAYLOAD_BYTES && f->bytes == FRAME_BYTES,
              "cut %llu frame %llu: seq %llu timestamp %llu offset %llu bytes %llu", (unsigned long long)t,
              (unsigned long long)i, (unsigned long long)f->seq, (unsigned long long)f->timestamp_ns,
              (unsigned long long)f->offset, (unsigned long long)f->bytes);
        CHECK(f->received_ns == RECEIVED_NS(i), "cut %llu frame %llu: received_ns %llu, sent %llu",
              (unsigned long long)t, (unsigned long long)i, (unsigned long long)f->received_ns,
              (unsigned long long)RECEIVED_NS(i));
        CHECK(f->crc32c == crc32c_bitwise(sent[i] + PROTOCOL_HEADER_BYTES, PAYLOAD_BYTES),
              "cut %llu frame %llu: crc32c %08x", (unsigned long long)t, (unsigned long long)i, f->crc32c);
        size_t sizes[COUNT + 1], parts = 0;
        recording_error e = recording_reader_part_sizes(r, i, sizes, COUNT + 1, &parts);
        int parts_ok = e == RECORDING_OK && parts == COUNT;
        for (size_t p = 0; parts_ok && p < parts; p++)
            parts_ok = sizes[p] == (size_t)MATRIX_BYTES;
        CHECK(parts_ok, "cut %llu frame %llu: %zu parts, want %d", (unsigned long long)t, (unsigned long long)i,
              parts, COUNT);
        uint8_t buf[FRAME_BYTES];
        CHECK(recording_reader_read(r, i, buf, sizeof buf, err, sizeof err) == RECORDING_OK &&
                  memcmp(buf, sent[i], FRAME_BYTES) == 0,
              "cut %llu frame %llu: bytes differ from what was sent (%s)", (unsigned long long)t,
              (unsigned long long)i, err);
    }
    recording_reader_close(&r);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char full[512], cut[512], path[600];
    mkdir(dir, 0777);
    snprintf(full, sizeof full, "%s/sweep-full", dir);
    snprintf(cut, sizeof cut, "%s/sweep-cut", dir);
    make_frames();
    if (record_all(full) != 0)
        return test_check_report("test_recording_repair_sweep");
    size_t data_size = 0, journal_size = 0;
    snprintf(path, sizeof path, "%s.sigmf-data", full);
    uint8_t *data = read_whole(path, &data_size);
    snprintf(path, sizeof path, "%s.sigmf-index", full);
    uint8_t *journal = read_whole(path, &journal_size);
    CHECK(data != NULL && data_size == (size_t)FRAMES * PAYLOAD_BYTES, "data file: %zu bytes", data_size);
    CHECK(journal != NULL && journal_size == JOURNAL_FILE_HEADER + (size_t)FRAMES * JOURNAL_ENTRY,
          "journal: %zu bytes", journal_size);
    for (int i = 0; data != NULL && data_size == (size_t)FRAMES * PAYLOAD_BYTES && i < FRAMES; i++)
        CHECK(memcmp(data + (size_t)i * PAYLOAD_BYTES, sent[i] + PROTOCOL_HEADER_BYTES, PAYLOAD_BYTES) == 0,
              "frame %d's samples not as sent", i);
    for (int i = 0; journal != NULL && journal_size == JOURNAL_FILE_HEADER + (size_t)FRAMES * JOURNAL_ENTRY &&
                    i < FRAMES; i++)
        CHECK(memcmp(journal + JOURNAL_FILE_HEADER + (size_t)i * JOURNAL_ENTRY + JOURNAL_RECORD, sent[i],
                     PROTOCOL_HEADER_BYTES) == 0, "frame %d's head (its header) not as sent", i);
    if (test_check_failures > 0)
        return test_check_report("test_recording_repair_sweep");

    /* The write sequence: the journal's file header, then per frame its
     * samples, its journal record and its head. t bytes of it written = (D, J). */
    const uint64_t total = JOURNAL_FILE_HEADER + (uint64_t)FRAMES * (PAYLOAD_BYTES + JOURNAL_ENTRY);
    for (uint64_t t = 0; t <= total; t++) {
        uint64_t d = 0, j = t < JOURNAL_FILE_HEADER ? t : JOURNAL_FILE_HEADER, left = t - j;
        for (int i = 0; i < FRAMES && left > 0; i++) {
            uint64_t take = left < PAYLOAD_BYTES ? left : PAYLOAD_BYTES;
            d += take;
            left -= take;
            take = left < JOURNAL_ENTRY ? left : JOURNAL_ENTRY;
            j += take;
            left -= take;
        }
        uint64_t complete = j > JOURNAL_FILE_HEADER ? (j - JOURNAL_FILE_HEADER) / JOURNAL_ENTRY : 0;
        snprintf(path, sizeof path, "%s.sigmf-data", cut);
        int ok = write_prefix(path, data, d) == 0;
        snprintf(path, sizeof path, "%s.sigmf-index", cut);
        ok = ok && write_prefix(path, journal, j) == 0;
        snprintf(path, sizeof path, "%s.sigmf-meta", cut);
        ok = ok && (unlink(path) == 0 || errno == ENOENT);
        if (!ok) {
            FAIL("cut %llu: cannot write the prefixes under %s", (unsigned long long)t, dir);
            break;
        }
        char err[RECORDING_ERROR_MAX] = "";
        uint64_t frames = 0, cut_bytes = 0;
        if (recording_repair(cut, &frames, &cut_bytes, err, sizeof err) != RECORDING_OK) {
            FAIL("cut %llu (data %llu, journal %llu bytes): repair: %s", (unsigned long long)t,
                 (unsigned long long)d, (unsigned long long)j, err);
            continue;
        }
        CHECK(frames == complete && cut_bytes == d - complete * PAYLOAD_BYTES,
              "cut %llu (data %llu, journal %llu bytes): %llu frames, %llu bytes cut; want %llu and %llu",
              (unsigned long long)t, (unsigned long long)d, (unsigned long long)j, (unsigned long long)frames,
              (unsigned long long)cut_bytes, (unsigned long long)complete,
              (unsigned long long)(d - complete * PAYLOAD_BYTES));
        check_recovered(cut, t, complete);
        if (test_check_failures > 20) /* one broken rule fails every later cut: enough to name it */
            break;
    }
    printf("swept %llu cut points over %d frames of %d bytes\n", (unsigned long long)total + 1, FRAMES, FRAME_BYTES);
    free(data);
    free(journal);
    return test_check_report("test_recording_repair_sweep");
}
