/*
 * test_recording.c - unit tests of pipeline/recording: byte-exact round
 * trips (covariance and eigenspace, float and double, full and packed, one
 * part and one part per matrix), a refused mismatching frame, a write
 * failure (RLIMIT_FSIZE in a child), repair after a recorder's death with a
 * cut frame and a torn journal record, and a frame past 4 GiB (sparse file,
 * journal built here from docs/recording.md).
 *
 * Usage: test_recording SCRATCH_DIR
 * Leaves SCRATCH_DIR/sigmf/ with recordings for test_sigmf_meta.py.
 */
#define _FILE_OFFSET_BITS 64

#include "recording.h"
#include "test_check.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define COUNT 3
#define FRAME_MAX_PARTS COUNT

static const char *scratch;

/* One frame as a sender would send it: header part, then parts. */
typedef struct test_frame {
    uint8_t header[PROTOCOL_HEADER_BYTES];
    uint8_t *payload;
    size_t payload_bytes;
    const void *part[FRAME_MAX_PARTS];
    size_t part_bytes[FRAME_MAX_PARTS];
    size_t parts;
    uint64_t seq, timestamp_ns;
} test_frame;

/* Deterministic bytes (a fixed-seed LCG): the library never reads them as numbers. */
static void fill_bytes(uint8_t *p, size_t bytes, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < bytes; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (uint8_t)(x >> 24);
    }
}

/* Starts f's header h: kind, seq and source timestamp (f keeps both), n,
 * count and element. */
static void header_begin(protocol_header *h, test_frame *f, uint8_t kind, uint64_t seq, uint64_t timestamp_ns,
                         uint32_t n, uint32_t count, uint8_t element)
{
    protocol_header_init(h, kind);
    h->seq = f->seq = seq;
    h->timestamp_ns = f->timestamp_ns = timestamp_ns;
    h->n = n;
    h->count = count;
    h->element = element;
}

/* A covariance frame of COUNT n x n matrices; per_matrix: COUNT parts, else one. */
static void make_covariance(test_frame *f, uint32_t n, uint8_t element, uint8_t storage, int per_matrix,
                            uint64_t seq)
{
    size_t matrix = protocol_matrix_bytes(n, element, storage);
    protocol_header h;
    header_begin(&h, f, PROTOCOL_KIND_COVARIANCE, seq, 1795445045123456789ull + seq * 1000, n, COUNT, element);
    h.storage = storage;
    h.payload_bytes = f->payload_bytes = matrix * COUNT;
    f->payload = malloc(f->payload_bytes);
    fill_bytes(f->payload, f->payload_bytes, (uint32_t)seq);
    h.flags = PROTOCOL_FLAG_CRC;
    h.crc32c = protocol_crc32c(0, f->payload, f->payload_bytes);
    protocol_header_encode(&h, f->header);
    f->parts = per_matrix ? COUNT : 1;
    for (size_t i = 0; i < f->parts; i++) {
        f->part[i] = f->payload + i * matrix;
        f->part_bytes[i] = per_matrix ? matrix : f->payload_bytes;
    }
}

/* An eigenspace frame in signal mode, d = 1 + seq % n: sizes differ per frame. */
static void make_eigenspace(test_frame *f, uint32_t n, uint8_t element, uint64_t seq)
{
    protocol_stage_times t = {seq + 1, seq + 2, seq + 3, seq + 4};
    protocol_matrix_meta m[COUNT];
    size_t data = 0;
    for (int i = 0; i < COUNT; i++) {
        m[i] = (protocol_matrix_meta){.status = 0, .signal_dim = 1 + (uint32_t)(seq % n)};
        protocol_mode_layout(PROTOCOL_MODE_SIGNAL, n, m[i].signal_dim, &m[i].k_sent, &m[i].first_index);
        data += protocol_eigenspace_matrix_bytes(n, element, m[i].k_sent);
    }
    size_t meta = protocol_meta_bytes(COUNT);
    f->payload_bytes = meta + data;
    f->payload = malloc(f->payload_bytes);
    protocol_meta_encode(&t, m, COUNT, f->payload);
    fill_bytes(f->payload + meta, data, (uint32_t)seq);
    protocol_header h;
    header_begin(&h, f, PROTOCOL_KIND_EIGENSPACE, seq, 1795445045000000000ull + seq, n, COUNT, element);
    h.mode = PROTOCOL_MODE_SIGNAL;
    h.payload_bytes = f->payload_bytes;
    protocol_header_encode(&h, f->header);
    f->parts = 2;
    f->part[0] = f->payload;
    f->part_bytes[0] = meta;
    f->part[1] = f->payload + meta;
    f->part_bytes[1] = data;
}

/* The bytes of f that are samples (docs/recording.md, layout samples):
 * covariance its whole payload, eigenspace its data part (after the meta). */
static const uint8_t *frame_samples(const test_frame *f, size_t *bytes)
{
    size_t skip = f->parts == 2 && f->header[5] == PROTOCOL_KIND_EIGENSPACE ? f->part_bytes[0] : 0;
    *bytes = f->payload_bytes - skip;
    return f->payload + skip;
}

/* The data file of recording name holds exactly the samples of f[0..count),
 * back to back: nothing else (no header, no meta part). */
static void check_data_is_samples(const char *name, const test_frame *f, int count)
{
    char path[RECORDING_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s.sigmf-data", scratch, name);
    FILE *file = fopen(path, "rb");
    size_t total = 0;
    for (int i = 0; i < count; i++) {
        size_t bytes;
        frame_samples(&f[i], &bytes);
        total += bytes;
    }
    uint8_t *data = malloc(total + 1);
    size_t got = file != NULL ? fread(data, 1, total + 1, file) : 0;
    CHECK(got == total, "%s: data file has %zu bytes, the samples %zu", name, got, total);
    for (size_t i = 0, at = 0; got == total && i < (size_t)count; i++) {
        size_t bytes;
        const uint8_t *samples = frame_samples(&f[i], &bytes);
        CHECK(memcmp(data + at, samples, bytes) == 0, "%s: frame %zu's samples differ in the data file", name, i);
        at += bytes;
    }
    free(data);
    if (file != NULL)
        fclose(file);
}

static void frame_free(test_frame *f)
{
    free(f->payload);
    f->payload = NULL;
}

static void scratch_path(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", scratch, name);
}

static recording_writer *writer_open(const char *name)
{
    char path[RECORDING_PATH_MAX], err[RECORDING_ERROR_MAX] = "";
    scratch_path(path, sizeof path, name);
    recording_writer_params p = {.path = path, .description = "test recording", .recorder = "test_recording"};
    recording_writer *w = NULL;
    recording_error e = recording_writer_open(&w, &p, err, sizeof err);
    CHECK(e == RECORDING_OK && w != NULL, "%s: open: %s", name, err);
    return w;
}

static recording_error append(recording_writer *w, const test_frame *f, uint64_t received_ns)
{
    char err[RECORDING_ERROR_MAX] = "";
    return recording_writer_append(w, f->header, f->part, f->part_bytes, f->parts, received_ns, err, sizeof err);
}

/* Compares frame i of r with f (index fields, part sizes, bytes); offset is where it must lie. */
static void check_frame(recording_reader *r, uint64_t i, const test_frame *f, uint64_t offset, uint64_t received_ns,
                        const char *name)
{
    const recording_frame *rf = recording_reader_frame(r, i);
    if (rf == NULL) {
        FAIL("%s: frame %" PRIu64 " missing", name, i);
        return;
    }
    uint64_t bytes = PROTOCOL_HEADER_BYTES + f->payload_bytes;
    CHECK(rf->seq == f->seq && rf->timestamp_ns == f->timestamp_ns && rf->received_ns == received_ns,
          "%s frame %" PRIu64 ": seq/timestamp/received", name, i);
    CHECK(rf->offset == offset && rf->bytes == bytes, "%s frame %" PRIu64 ": offset %" PRIu64 " bytes %" PRIu64, name,
          i, rf->offset, rf->bytes);
    CHECK(rf->parts == f->parts && rf->crc32c == protocol_crc32c(0, f->payload, f->payload_bytes),
          "%s frame %" PRIu64 ": parts %u crc", name, i, rf->parts);
    size_t sizes[FRAME_MAX_PARTS], parts = 0;
    recording_error e = recording_reader_part_sizes(r, i, sizes, FRAME_MAX_PARTS, &parts);
    CHECK(e == RECORDING_OK && parts == f->parts, "%s frame %" PRIu64 ": part sizes: %s", name, i,
          recording_strerror(e));
    for (size_t p = 0; e == RECORDING_OK && p < parts && p < f->parts; p++)
        CHECK(sizes[p] == f->part_bytes[p], "%s frame %" PRIu64 " part %zu: %zu bytes, want %zu", name, i, p, sizes[p],
              f->part_bytes[p]);
    uint8_t *buf = malloc(bytes);
    char err[RECORDING_ERROR_MAX] = "";
    e = recording_reader_read(r, i, buf, bytes, err, sizeof err);
    CHECK(e == RECORDING_OK, "%s frame %" PRIu64 ": read: %s", name, i, err);
    CHECK(memcmp(buf, f->header, PROTOCOL_HEADER_BYTES) == 0 &&
              memcmp(buf + PROTOCOL_HEADER_BYTES, f->payload, f->payload_bytes) == 0,
          "%s frame %" PRIu64 ": bytes differ", name, i);
    free(buf);
}

static recording_reader *reader_open(const char *name, const char *suffix)
{
    char path[RECORDING_PATH_MAX], err[RECORDING_ERROR_MAX] = "";
    snprintf(path, sizeof path, "%s/%s%s", scratch, name, suffix);
    recording_reader *r = NULL;
    recording_error e = recording_reader_open(&r, path, err, sizeof err);
    CHECK(e == RECORDING_OK, "%s: reader open: %s", name, err);
    return r;
}

#define ROUND_FRAMES 5

/* Writes ROUND_FRAMES frames (a seq gap after the second), closes, reads them back. */
static void test_round_trip(uint8_t kind, uint8_t element, uint8_t storage, int per_matrix)
{
    char name[128];
    snprintf(name, sizeof name, "sigmf/%s_%s_%s_%s", kind == PROTOCOL_KIND_COVARIANCE ? "cov" : "eig",
             eig_precision_name(element), protocol_storage_name(storage), per_matrix ? "parts" : "one");
    test_frame f[ROUND_FRAMES];
    recording_writer *w = writer_open(name);
    if (w == NULL)
        return;
    uint64_t offset[ROUND_FRAMES], at = 0;
    for (int i = 0; i < ROUND_FRAMES; i++) {
        uint64_t seq = 100 + (uint64_t)i + (i >= 2 ? 3 : 0);
        if (kind == PROTOCOL_KIND_COVARIANCE)
            make_covariance(&f[i], 5, element, storage, per_matrix, seq);
        else
            make_eigenspace(&f[i], 5, element, seq);
        CHECK(append(w, &f[i], 7000 + (uint64_t)i) == RECORDING_OK, "%s: append %d", name, i);
        size_t samples;
        frame_samples(&f[i], &samples);
        offset[i] = at;
        at += samples;
    }
    CHECK(recording_writer_frames(w) == ROUND_FRAMES && recording_writer_bytes(w) == at, "%s: counters", name);
    char err[RECORDING_ERROR_MAX] = "";
    CHECK(recording_writer_close(&w, err, sizeof err) == RECORDING_OK && w == NULL, "%s: close: %s", name, err);
    check_data_is_samples(name, f, ROUND_FRAMES);
    recording_reader *r = reader_open(name, ".sigmf-meta");
    if (r != NULL) {
        const recording_format *fmt = recording_reader_format(r);
        CHECK(fmt->kind == kind && fmt->n == 5 && fmt->count == COUNT && fmt->element == element,
              "%s: format kind %u n %u count %u element %u", name, fmt->kind, fmt->n, fmt->count, fmt->element);
        CHECK(recording_reader_frames(r) == ROUND_FRAMES, "%s: %" PRIu64 " frames", name, recording_reader_frames(r));
        CHECK(strcmp(recording_reader_description(r), "test recording") == 0, "%s: description", name);
        CHECK(recording_reader_truncated_bytes(r) == 0, "%s: truncated bytes", name);
        for (int i = 0; i < ROUND_FRAMES; i++)
            check_frame(r, (uint64_t)i, &f[i], offset[i], 7000 + (uint64_t)i, name);
        uint8_t small[8];
        CHECK(recording_reader_read(r, ROUND_FRAMES, small, sizeof small, NULL, 0) == RECORDING_ERANGE,
              "%s: past the end", name);
        recording_reader_close(&r);
    }
    for (int i = 0; i < ROUND_FRAMES; i++)
        frame_free(&f[i]);
}

/* A frame of another n is refused; the frames before and after it stay. */
static void test_mismatch(void)
{
    test_frame a, b, c;
    make_covariance(&a, 4, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL, 0, 1);
    make_covariance(&b, 6, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL, 0, 2);
    make_covariance(&c, 4, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL, 0, 2);
    recording_writer *w = writer_open("mismatch");
    if (w != NULL) {
        CHECK(append(w, &a, 1) == RECORDING_OK, "mismatch: first frame");
        CHECK(append(w, &b, 2) == RECORDING_EMISMATCH, "mismatch: n=6 after n=4 must be refused");
        CHECK(append(w, &c, 3) == RECORDING_OK, "mismatch: a matching frame after the refused one");
        /* A valid IQ cube (kind 3): another kind than the recording's first frame. */
        test_frame q = c;
        protocol_header h;
        protocol_header_init(&h, PROTOCOL_KIND_IQ);
        h.n = 2;
        h.count = 1;
        h.gates = (uint32_t)(c.payload_bytes / 8); /* 2 channels x 1 pulse of ci16: a valid cube of c's bytes */
        h.element = PROTOCOL_IQ_CI16_LE;
        h.storage = PROTOCOL_IQ_CPG;
        h.scale = 1.0f;
        h.payload_bytes = c.payload_bytes;
        protocol_header_encode(&h, q.header);
        CHECK(append(w, &q, 4) == RECORDING_EMISMATCH, "mismatch: an IQ cube in a covariance recording");
        /* A valid fragment of a frame like c (its first matrix): a record is a whole frame. */
        test_frame g = c;
        protocol_header_decode(c.header, PROTOCOL_HEADER_BYTES, &h);
        h.flags = PROTOCOL_FLAG_FRAGMENT;
        h.crc32c = 0;
        h.fragment_first = 0;
        h.fragment_matrices = 1;
        h.payload_bytes = c.payload_bytes / COUNT;
        protocol_header_encode(&h, g.header);
        g.parts = 1;
        g.part[0] = c.payload;
        g.part_bytes[0] = g.payload_bytes = c.payload_bytes / COUNT;
        CHECK(append(w, &g, 5) == RECORDING_EFORMAT, "mismatch: a fragment must be refused");
        CHECK(recording_writer_close(&w, NULL, 0) == RECORDING_OK, "mismatch: close");
        recording_reader *r = reader_open("mismatch", "");
        if (r != NULL) {
            CHECK(recording_reader_frames(r) == 2, "mismatch: %" PRIu64 " frames, want 2", recording_reader_frames(r));
            check_frame(r, 0, &a, 0, 1, "mismatch");
            check_frame(r, 1, &c, a.payload_bytes, 3, "mismatch");
            recording_reader_close(&r);
        }
    }
    frame_free(&a);
    frame_free(&b);
    frame_free(&c);
}

/* A payload byte changed in the data file after recording: reading that
 * frame fails with RECORDING_ECRC, the frame before it still reads. */
static void test_corrupted(void)
{
    test_frame a, b;
    make_covariance(&a, 4, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL, 0, 1);
    make_covariance(&b, 4, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL, 0, 2);
    recording_writer *w = writer_open("corrupted");
    if (w != NULL) {
        CHECK(append(w, &a, 1) == RECORDING_OK && append(w, &b, 2) == RECORDING_OK, "corrupted: appends");
        CHECK(recording_writer_close(&w, NULL, 0) == RECORDING_OK, "corrupted: close");
        char path[RECORDING_PATH_MAX];
        scratch_path(path, sizeof path, "corrupted.sigmf-data");
        FILE *f = fopen(path, "r+b");
        uint64_t at = PROTOCOL_HEADER_BYTES + a.payload_bytes + PROTOCOL_HEADER_BYTES + 5;
        int c = EOF;
        if (f != NULL && fseek(f, (long)at, SEEK_SET) == 0 && (c = fgetc(f)) != EOF && fseek(f, (long)at, SEEK_SET) == 0)
            fputc(c ^ 0x40, f);
        CHECK(f != NULL && c != EOF, "corrupted: flip a byte of %s", path);
        if (f != NULL)
            fclose(f);
        recording_reader *r = reader_open("corrupted", "");
        if (r != NULL) {
            uint8_t *buf = malloc(PROTOCOL_HEADER_BYTES + b.payload_bytes);
            char err[RECORDING_ERROR_MAX] = "";
            size_t cap = PROTOCOL_HEADER_BYTES + b.payload_bytes;
            CHECK(recording_reader_read(r, 0, buf, cap, err, sizeof err) == RECORDING_OK, "corrupted: frame 0: %s", err);
            recording_error e = recording_reader_read(r, 1, buf, cap, err, sizeof err);
            CHECK(e == RECORDING_ECRC && strstr(err, "CRC32C") != NULL, "corrupted: frame 1: %s (%s)",
                  recording_strerror(e), err);
            free(buf);
            recording_reader_close(&r);
        }
    }
    frame_free(&a);
    frame_free(&b);
}

/* Child: appends frames under an RLIMIT_FSIZE of 2.5 frames; exits with
 * 10 + frames appended when the third append fails with EIO and close
 * reports it, 1 otherwise. */
static int write_failure_child(const test_frame *f)
{
    signal(SIGXFSZ, SIG_IGN);
    uint64_t frame_bytes = PROTOCOL_HEADER_BYTES + f->payload_bytes;
    struct rlimit lim;
    if (getrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 2;
    lim.rlim_cur = frame_bytes * 5 / 2;
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 2;
    recording_writer *w = writer_open("fsize");
    if (w == NULL)
        return 3;
    for (int i = 0; i < 2; i++)
        if (append(w, f, (uint64_t)i) != RECORDING_OK)
            return 4;
    char err[RECORDING_ERROR_MAX] = "";
    recording_error e = recording_writer_append(w, f->header, f->part, f->part_bytes, f->parts, 2, err, sizeof err);
    if (e != RECORDING_EIO || strstr(err, strerror(EFBIG)) == NULL)
        return 5;
    if (append(w, f, 3) != RECORDING_EIO)
        return 6;
    if (recording_writer_close(&w, NULL, 0) != RECORDING_EIO)
        return 7;
    return 10 + 2;
}

static void test_write_failure(void)
{
    test_frame f;
    make_covariance(&f, 16, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL, 1, 40);
    pid_t pid = fork();
    if (pid == 0)
        _exit(write_failure_child(&f));
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 12, "write failure: child status %d (see write_failure_child)",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    recording_reader *r = reader_open("fsize", ".sigmf-data");
    if (r != NULL) {
        CHECK(recording_reader_frames(r) == 2, "write failure: %" PRIu64 " frames, want 2", recording_reader_frames(r));
        for (uint64_t i = 0; i < 2 && i < recording_reader_frames(r); i++)
            check_frame(r, i, &f, i * f.payload_bytes, i, "write failure");
        recording_reader_close(&r);
    }
    char data[RECORDING_PATH_MAX];
    struct stat st;
    scratch_path(data, sizeof data, "fsize.sigmf-data");
    CHECK(stat(data, &st) == 0 && (uint64_t)st.st_size == 2 * f.payload_bytes,
          "write failure: the data file must end at the last complete frame's samples (%lld bytes)",
          (long long)st.st_size);
    frame_free(&f);
}

/* Appends bytes to NAME+suffix in the scratch folder. */
static void file_append(const char *name, const void *bytes, size_t size)
{
    char path[RECORDING_PATH_MAX];
    scratch_path(path, sizeof path, name);
    int fd = open(path, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && write(fd, bytes, size) == (ssize_t)size, "append to %s", path);
    if (fd >= 0)
        close(fd);
}

/* A journal record as docs/recording.md lays it out, encoded field by field
 * from the documented offsets (an oracle independent of recording.c):
 * version 1 (layout frames) or 2 (layout samples, head_crc at 56). */
static void journal_record_build(uint8_t out[64], const recording_frame *f, uint8_t version, uint32_t head_crc)
{
    const struct { size_t at, bytes; uint64_t value; } fields[] = {
        {8, 8, f->seq}, {16, 8, f->timestamp_ns}, {24, 8, f->received_ns}, {32, 8, f->offset},
        {40, 8, f->bytes}, {48, 4, f->parts}, {52, 4, f->crc32c}, {56, 4, version == 2 ? head_crc : 0}};
    memset(out, 0, 64);
    memcpy(out, "EIGR", 4);
    out[4] = version;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        for (size_t b = 0; b < fields[i].bytes; b++)
            out[fields[i].at + b] = (uint8_t)(fields[i].value >> (8 * b));
    uint32_t crc = protocol_crc32c(0, out, 60);
    for (size_t b = 0; b < 4; b++)
        out[60 + b] = (uint8_t)(crc >> (8 * b));
}

#define CRASH_JOURNALED 3

/* A recorder that dies after CRASH_JOURNALED frames; then the samples of a
 * frame whose journal record and head were torn (the record whole, half
 * its head), and half of another frame's samples with no record at all:
 * repair keeps the journaled frames and counts every later byte of the
 * data file as cut (layout samples: the data file has no headers to walk). */
static void test_crash(void)
{
    test_frame f[CRASH_JOURNALED + 2];
    for (int i = 0; i < CRASH_JOURNALED + 2; i++)
        make_covariance(&f[i], 6, EIG_COMPLEX_FLOAT, PROTOCOL_STORAGE_PACKED_LOWER, 1, 10 + (uint64_t)i);
    pid_t pid = fork();
    if (pid == 0) {
        recording_writer *w = writer_open("sigmf/crash");
        for (int i = 0; w != NULL && i < CRASH_JOURNALED; i++)
            if (append(w, &f[i], 500 + (uint64_t)i) != RECORDING_OK)
                _exit(1);
        _exit(w == NULL ? 1 : 0); /* dies without close: no meta */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "crash: child failed");
    test_frame *torn = &f[CRASH_JOURNALED], *cut = &f[CRASH_JOURNALED + 1];
    uint64_t frame_samples_bytes = f[0].payload_bytes;
    file_append("sigmf/crash.sigmf-data", torn->payload, torn->payload_bytes);
    recording_frame rf = {.seq = torn->seq, .timestamp_ns = torn->timestamp_ns, .offset = CRASH_JOURNALED *
                          frame_samples_bytes, .bytes = PROTOCOL_HEADER_BYTES + torn->payload_bytes, .parts = 3,
                          .crc32c = protocol_crc32c(0, torn->payload, torn->payload_bytes)};
    uint8_t record[64];
    journal_record_build(record, &rf, 2, protocol_crc32c(0, torn->header, PROTOCOL_HEADER_BYTES));
    file_append("sigmf/crash.sigmf-index", record, sizeof record);
    file_append("sigmf/crash.sigmf-index", torn->header, PROTOCOL_HEADER_BYTES / 2);
    size_t half = cut->payload_bytes / 2;
    file_append("sigmf/crash.sigmf-data", cut->payload, half);

    char path[RECORDING_PATH_MAX], err[RECORDING_ERROR_MAX] = "";
    scratch_path(path, sizeof path, "sigmf/crash");
    recording_reader *r = NULL;
    CHECK(recording_reader_open(&r, path, err, sizeof err) == RECORDING_EIO && strstr(err, "repair") != NULL,
          "crash: a missing meta must say to repair: %s", err);
    uint64_t frames = 0, cut_bytes = 0, want_cut = torn->payload_bytes + half;
    recording_error e = recording_repair(path, &frames, &cut_bytes, err, sizeof err);
    CHECK(e == RECORDING_OK, "crash: repair: %s", err);
    CHECK(frames == CRASH_JOURNALED && cut_bytes == want_cut, "crash: %" PRIu64 " frames %" PRIu64
          " cut bytes, want %d and %" PRIu64, frames, cut_bytes, CRASH_JOURNALED, want_cut);
    r = reader_open("sigmf/crash", "");
    if (r != NULL) {
        CHECK(recording_reader_frames(r) == CRASH_JOURNALED, "crash: reader frames");
        CHECK(recording_reader_truncated_bytes(r) == want_cut, "crash: truncated bytes");
        for (int i = 0; i < CRASH_JOURNALED; i++)
            check_frame(r, (uint64_t)i, &f[i], (uint64_t)i * frame_samples_bytes, 500 + (uint64_t)i, "crash");
        recording_reader_close(&r);
    }
    for (int i = 0; i < CRASH_JOURNALED + 2; i++)
        frame_free(&f[i]);
}

/* A recording of layout frames (written before 2026-11-27: whole frames in
 * the data file, a version 1 journal): a frame at offset 2^32 + 4096 of a
 * sparse data file, found by repair through a journal built here, read
 * back through the reader. */
static void test_large_offset(void)
{
    test_frame f;
    make_covariance(&f, 8, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_PACKED_UPPER, 0, 77);
    const uint64_t offset = (1ull << 32) + 4096;
    char data[RECORDING_PATH_MAX], journal[RECORDING_PATH_MAX], name[RECORDING_PATH_MAX];
    scratch_path(name, sizeof name, "large");
    scratch_path(data, sizeof data, "large.sigmf-data");
    scratch_path(journal, sizeof journal, "large.sigmf-index");
    int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ok = fd >= 0 && ftruncate(fd, (off_t)offset) == 0 &&
             pwrite(fd, f.header, PROTOCOL_HEADER_BYTES, (off_t)offset) == PROTOCOL_HEADER_BYTES &&
             pwrite(fd, f.payload, f.payload_bytes, (off_t)(offset + PROTOCOL_HEADER_BYTES)) == (ssize_t)f.payload_bytes;
    if (fd >= 0)
        close(fd);
    CHECK(ok, "large: building the sparse data file: %s", strerror(errno));
    recording_frame rf = {.seq = 77, .timestamp_ns = f.timestamp_ns, .received_ns = 123, .offset = offset,
                          .bytes = PROTOCOL_HEADER_BYTES + f.payload_bytes, .parts = 1,
                          .crc32c = protocol_crc32c(0, f.payload, f.payload_bytes)};
    uint8_t bytes[16 + 64] = {'E', 'I', 'G', 'S', 'J', 'R', 'N', 'L', 1};
    journal_record_build(bytes + 16, &rf, 1, 0);
    fd = open(journal, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, bytes, sizeof bytes) == (ssize_t)sizeof bytes, "large: writing the journal");
    if (fd >= 0)
        close(fd);
    uint64_t frames = 0, cut = 1;
    char err[RECORDING_ERROR_MAX] = "";
    CHECK(recording_repair(name, &frames, &cut, err, sizeof err) == RECORDING_OK, "large: repair: %s", err);
    CHECK(frames == 1 && cut == 0, "large: %" PRIu64 " frames, %" PRIu64 " cut bytes", frames, cut);
    recording_reader *r = reader_open("large", ".sigmf-meta");
    if (r != NULL) {
        CHECK(recording_reader_frames(r) == 1, "large: reader frames");
        check_frame(r, 0, &f, offset, 123, "large");
        recording_reader_close(&r);
    }
    CHECK(recording_remove(name, err, sizeof err) == RECORDING_OK && access(data, F_OK) != 0, "large: remove: %s", err);
    frame_free(&f);
}

/* A recording of layout frames whose recorder died: one journaled frame, a
 * complete frame past the journal (found by walking the data file's frame
 * headers) and half a frame (cut). */
static void test_frames_layout_walk(void)
{
    test_frame f[3];
    for (int i = 0; i < 3; i++)
        make_covariance(&f[i], 4, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL, 0, 30 + (uint64_t)i);
    char data[RECORDING_PATH_MAX], journal[RECORDING_PATH_MAX], name[RECORDING_PATH_MAX];
    scratch_path(name, sizeof name, "walk");
    scratch_path(data, sizeof data, "walk.sigmf-data");
    scratch_path(journal, sizeof journal, "walk.sigmf-index");
    uint64_t frame_bytes = PROTOCOL_HEADER_BYTES + f[0].payload_bytes, half = frame_bytes / 2;
    FILE *d = fopen(data, "wb"), *j = fopen(journal, "wb");
    for (int i = 0; d != NULL && i < 2; i++) {
        fwrite(f[i].header, 1, PROTOCOL_HEADER_BYTES, d);
        fwrite(f[i].payload, 1, f[i].payload_bytes, d);
    }
    if (d != NULL) {
        fwrite(f[2].header, 1, PROTOCOL_HEADER_BYTES, d);
        fwrite(f[2].payload, 1, half - PROTOCOL_HEADER_BYTES, d);
        fclose(d);
    }
    recording_frame rf = {.seq = f[0].seq, .timestamp_ns = f[0].timestamp_ns, .received_ns = 9, .offset = 0,
                          .bytes = frame_bytes, .parts = 1, .crc32c = protocol_crc32c(0, f[0].payload,
                                                                                      f[0].payload_bytes)};
    uint8_t bytes[16 + 64] = {'E', 'I', 'G', 'S', 'J', 'R', 'N', 'L', 1};
    journal_record_build(bytes + 16, &rf, 1, 0);
    if (j != NULL) {
        fwrite(bytes, 1, sizeof bytes, j);
        fclose(j);
    }
    CHECK(d != NULL && j != NULL, "walk: building the files");
    uint64_t frames = 0, cut = 0;
    char err[RECORDING_ERROR_MAX] = "";
    CHECK(recording_repair(name, &frames, &cut, err, sizeof err) == RECORDING_OK, "walk: repair: %s", err);
    CHECK(frames == 2 && cut == half, "walk: %" PRIu64 " frames, %" PRIu64 " cut bytes, want 2 and %" PRIu64, frames,
          cut, half);
    recording_reader *r = reader_open("walk", "");
    if (r != NULL) {
        check_frame(r, 0, &f[0], 0, 9, "walk (journaled)");
        check_frame(r, 1, &f[1], frame_bytes, 0, "walk (walked)");
        recording_reader_close(&r);
    }
    for (int i = 0; i < 3; i++)
        frame_free(&f[i]);
}

#define IQ_C 2
#define IQ_P COUNT /* one part per pulse fits FRAME_MAX_PARTS */
#define IQ_G 4

/* An IQ cube of IQ_C channels x IQ_P pulses x IQ_G gates, ci16_le in pcg
 * layout, in one part or one part per pulse (protocol_iq_parts). */
static void make_iq(test_frame *f, uint64_t seq, int per_pulse)
{
    protocol_header h;
    header_begin(&h, f, PROTOCOL_KIND_IQ, seq, 1795445045000000000ull + seq, IQ_C, IQ_P, PROTOCOL_IQ_CI16_LE);
    h.gates = IQ_G;
    h.storage = PROTOCOL_IQ_PCG;
    h.scale = 0.5f;
    h.payload_bytes = f->payload_bytes = IQ_C * IQ_P * IQ_G * 4; /* ci16_le: 4 bytes a sample */
    f->payload = malloc(f->payload_bytes);
    fill_bytes(f->payload, f->payload_bytes, (uint32_t)seq + 99);
    protocol_header_encode(&h, f->header);
    f->parts = per_pulse ? IQ_P : 1;
    for (size_t i = 0; i < f->parts; i++) {
        f->part[i] = f->payload + i * (f->payload_bytes / f->parts);
        f->part_bytes[i] = f->payload_bytes / f->parts;
    }
}

/* IQ cubes recorded and read back: format (channels, pulses, gates, sample
 * format, layout), every frame byte for byte with its parts, the data file
 * exactly the cubes' samples; a cube of other gates is a mismatch. */
static void test_iq(void)
{
    test_frame f[2], other;
    make_iq(&f[0], 5, 0);
    make_iq(&f[1], 6, 1);
    recording_writer *w = writer_open("sigmf/iq");
    if (w == NULL)
        return;
    for (int i = 0; i < 2; i++)
        CHECK(append(w, &f[i], 10 + (uint64_t)i) == RECORDING_OK, "iq: append %d", i);
    make_iq(&other, 7, 0);
    protocol_header h;
    protocol_header_decode(other.header, PROTOCOL_HEADER_BYTES, &h);
    h.gates = IQ_G / 2;
    h.n = IQ_C * 2; /* the same bytes: 4 channels x 3 pulses x 2 gates */
    protocol_header_encode(&h, other.header);
    CHECK(append(w, &other, 12) == RECORDING_EMISMATCH, "iq: a cube of other gates must be refused");
    char err[RECORDING_ERROR_MAX] = "";
    CHECK(recording_writer_close(&w, err, sizeof err) == RECORDING_OK, "iq: close: %s", err);
    check_data_is_samples("sigmf/iq", f, 2);
    recording_reader *r = reader_open("sigmf/iq", "");
    if (r != NULL) {
        const recording_format *fmt = recording_reader_format(r);
        CHECK(fmt->kind == PROTOCOL_KIND_IQ && fmt->n == IQ_C && fmt->count == IQ_P && fmt->gates == IQ_G &&
                  fmt->element == PROTOCOL_IQ_CI16_LE && fmt->storage == PROTOCOL_IQ_PCG,
              "iq: format kind %u n %u count %u gates %u element %u storage %u", fmt->kind, fmt->n, fmt->count,
              fmt->gates, fmt->element, fmt->storage);
        for (int i = 0; i < 2; i++)
            check_frame(r, (uint64_t)i, &f[i], (uint64_t)i * f[0].payload_bytes, 10 + (uint64_t)i, "iq");
        recording_reader_close(&r);
    }
    for (int i = 0; i < 2; i++)
        frame_free(&f[i]);
    frame_free(&other);
}

/* A recording closed before its first frame reads back with none. */
static void test_empty(void)
{
    recording_writer *w = writer_open("empty");
    if (w == NULL)
        return;
    CHECK(recording_writer_close(&w, NULL, 0) == RECORDING_OK, "empty: close");
    recording_reader *r = reader_open("empty", "");
    CHECK(r != NULL && recording_reader_frames(r) == 0, "empty: frames");
    recording_reader_close(&r);
}

static void test_ring_name(void)
{
    char out[64];
    recording_ring_name("/data/run", 1, out, sizeof out);
    CHECK(strcmp(out, "/data/run-000001") == 0, "ring name %s", out);
    recording_ring_name("run", 1234567, out, sizeof out);
    CHECK(strcmp(out, "run-1234567") == 0, "ring name %s", out);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_recording SCRATCH_DIR\n");
        return 2;
    }
    scratch = argv[1];
    char sigmf[RECORDING_PATH_MAX];
    scratch_path(sigmf, sizeof sigmf, "sigmf");
    mkdir(scratch, 0755);
    mkdir(sigmf, 0755);
    const uint8_t storages[] = {PROTOCOL_STORAGE_FULL, PROTOCOL_STORAGE_PACKED_LOWER, PROTOCOL_STORAGE_PACKED_UPPER};
    for (uint8_t element = EIG_COMPLEX_FLOAT; element <= EIG_COMPLEX_DOUBLE; element++) {
        for (size_t s = 0; s < sizeof storages; s++)
            for (int per_matrix = 0; per_matrix <= 1; per_matrix++)
                test_round_trip(PROTOCOL_KIND_COVARIANCE, element, storages[s], per_matrix);
        test_round_trip(PROTOCOL_KIND_EIGENSPACE, element, PROTOCOL_STORAGE_FULL, 0);
    }
    test_mismatch();
    test_corrupted();
    test_write_failure();
    test_crash();
    test_large_offset();
    test_frames_layout_walk();
    test_iq();
    test_empty();
    test_ring_name();
    return test_check_report("test_recording");
}
