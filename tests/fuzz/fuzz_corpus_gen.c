/*
 * fuzz_corpus_gen.c - writes the seed corpora of tests/fuzz/corpus/ with the
 * real encoders (protocol_header_encode, protocol_meta_encode,
 * config_write_default, npy_write, npz_write, the recording writer), so the seeds are
 * valid inputs the fuzzer mutates from.
 *
 *   fuzz_corpus_gen tests/fuzz/corpus     # rewrites every seed
 *
 * Writes OUT/<target>/<seed> for the targets covariance, eigenspace, iq,
 * config, npy, npz, recording_meta and merge_input (the folders must exist;
 * corpus/npz/ also keeps numpy_savez_compressed.npz, made by NumPy: the one
 * deflated seed, which no encoder here writes). Exit 0, or 1 naming the
 * file that could not be written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_recording_fixture.h"
#include "fuzz_support.h"
#include "npy.h"
#include "npz.h"
#include "protocol.h"
#include "protocol_test_header.h"

static const char *out_dir;

/* Writes bytes to OUT/target/name; exits 1 on failure (a generator, not a library). */
static void seed_write(const char *target, const char *name, const void *bytes, size_t size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(bytes, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "fuzz_corpus_gen: cannot write %s\n", path);
        exit(1);
    }
}

/* Frames header + parts with fuzz_parts_join and writes it as a seed. */
static void seed_message(const char *target, const char *name, const protocol_header *h, const void *const *part,
                         const size_t *part_bytes, size_t parts)
{
    static uint8_t out[1 << 16];
    uint8_t header[PROTOCOL_HEADER_BYTES];
    const uint8_t *all[FUZZ_PARTS_MAX];
    size_t all_bytes[FUZZ_PARTS_MAX];
    protocol_header_encode(h, header);
    all[0] = header;
    all_bytes[0] = sizeof header;
    for (size_t i = 0; i < parts; i++) {
        all[i + 1] = part[i];
        all_bytes[i + 1] = part_bytes[i];
    }
    seed_write(target, name, out, fuzz_parts_join(all, all_bytes, parts + 1, out, sizeof out));
}

/* A covariance message of `matrices` n x n matrices (values 1, 2, ...), one
 * part or one per matrix: a whole frame of count = matrices (first 0,
 * fragment 0), or with fragment set the fragment at first of a frame of
 * count matrices. */
static void seed_covariance_message(const char *name, uint32_t n, uint32_t count, int fragment, uint32_t first,
                                    uint32_t matrices, uint8_t element, uint8_t storage, int per_matrix, int crc)
{
    static uint8_t payload[1 << 14];
    size_t matrix = protocol_matrix_bytes(n, element, storage), bytes = matrix * matrices;
    for (size_t i = 0; i < bytes / 4; i++) {
        float v = (float)(i % 7);
        memcpy(payload + 4 * i, &v, 4);
    }
    const void *part[FUZZ_PARTS_MAX - 1];
    size_t part_bytes[FUZZ_PARTS_MAX - 1];
    size_t parts = per_matrix ? matrices : 1;
    for (size_t i = 0; i < parts; i++) {
        part[i] = payload + i * matrix;
        part_bytes[i] = per_matrix ? matrix : bytes;
    }
    protocol_header h = test_header(PROTOCOL_KIND_COVARIANCE, n, count, element);
    h.seq = 7;
    h.storage = storage;
    h.snapshots = 32;
    if (fragment)
        test_header_fragment(&h, first, matrices);
    test_header_payload(&h, part, part_bytes, parts, crc);
    seed_message("covariance", name, &h, part, part_bytes, parts);
}

static void seed_covariance(const char *name, uint32_t n, uint32_t count, uint8_t element, uint8_t storage,
                            int per_matrix, int crc)
{
    seed_covariance_message(name, n, count, 0, 0, count, element, storage, per_matrix, crc);
}

/* An eigenspace frame of count matrices of order n in mode, signal dimension d. */
static void seed_eigenspace(const char *name, uint32_t n, uint32_t count, uint8_t element, uint8_t mode,
                            uint32_t d, int crc)
{
    static uint8_t meta[1 << 10], data[1 << 14];
    protocol_matrix_meta m[8];
    protocol_stage_times t = {1000, 2000, 3000, 4000};
    size_t data_bytes = 0;
    for (uint32_t b = 0; b < count; b++) {
        m[b].status = 0;
        m[b].signal_dim = d;
        protocol_mode_layout(mode, n, d, &m[b].k_sent, &m[b].first_index);
        data_bytes += protocol_eigenspace_matrix_bytes(n, element, m[b].k_sent);
    }
    memset(data, 0, data_bytes);
    protocol_meta_encode(&t, m, count, meta);
    const void *part[2] = {meta, data};
    size_t part_bytes[2] = {protocol_meta_bytes(count), data_bytes};
    protocol_header h = test_header(PROTOCOL_KIND_EIGENSPACE, n, count, element);
    h.seq = 9;
    h.mode = mode;
    test_header_payload(&h, part, part_bytes, 2, crc);
    seed_message("eigenspace", name, &h, part, part_bytes, 2);
    seed_message("merge_input", name, &h, part, part_bytes, 2); /* what a daemon sends eigstream-merge */
}

/* An IQ cube of channels x pulses x gates (raw values 0, 1, ...), one part
 * or one per slice of the layout's slowest dimension. */
static void seed_iq(const char *name, uint32_t channels, uint32_t pulses, uint32_t gates, uint8_t format,
                    uint8_t layout, int per_slice, int crc)
{
    static uint8_t payload[1 << 14];
    protocol_header h = test_header(PROTOCOL_KIND_IQ, channels, pulses, format);
    h.seq = 11;
    h.gates = gates;
    h.storage = layout;
    h.scale = 0.5f;
    size_t bytes = protocol_iq_cube_bytes(channels, pulses, gates, format);
    size_t sample = protocol_iq_sample_bytes(format);
    for (size_t i = 0; i < bytes / sample; i++) {
        if (format == PROTOCOL_IQ_CI16_LE) {
            int16_t v[2] = {(int16_t)(i % 200 - 100), (int16_t)(i % 13)};
            memcpy(payload + 4 * i, v, 4);
        } else {
            float v[2] = {(float)(i % 7), -(float)(i % 5)};
            memcpy(payload + 8 * i, v, 8);
        }
    }
    const void *part[FUZZ_PARTS_MAX - 1];
    size_t part_bytes[FUZZ_PARTS_MAX - 1];
    size_t parts = per_slice ? protocol_iq_parts(&h) : 1;
    for (size_t i = 0; i < parts; i++) {
        part[i] = payload + i * (bytes / parts);
        part_bytes[i] = bytes / parts;
    }
    test_header_payload(&h, part, part_bytes, parts, crc);
    seed_message("iq", name, &h, part, part_bytes, parts);
}

/* Writes an .npy seed with npy_write (through a temporary file). */
static void seed_npy(const char *name, npy_dtype dtype, int fortran_order, int ndim, const size_t *shape)
{
    static double values[64];
    char path[1024], detail[NPY_DETAIL_SIZE];
    snprintf(path, sizeof path, "%s/npy/%s", out_dir, name);
    if (npy_write(path, dtype, fortran_order, ndim, shape, values, detail) != NPY_OK) {
        fprintf(stderr, "fuzz_corpus_gen: %s: %s\n", path, detail);
        exit(1);
    }
}

/* Writes a .npz seed with npz_write: arrays "a" (complex128, 2 x 3) and,
 * with two, "b" (float32, 4). */
static void seed_npz(const char *name, size_t arrays)
{
    static double values[64];
    static const size_t shape_a[2] = {2, 3}, shape_b[1] = {4};
    const npz_entry entries[2] = {{"a", NPY_COMPLEX128, 0, 2, shape_a, values}, {"b", NPY_FLOAT32, 1, 1, shape_b, values}};
    char path[1024], detail[NPY_DETAIL_SIZE];
    snprintf(path, sizeof path, "%s/npz/%s", out_dir, name);
    if (npz_write(path, entries, arrays, detail) != NPY_OK) {
        fprintf(stderr, "fuzz_corpus_gen: %s: %s\n", path, detail);
        exit(1);
    }
}

static void seed_configs(void)
{
    char *text = NULL;
    size_t bytes = 0;
    FILE *f = open_memstream(&text, &bytes);
    if (f == NULL)
        exit(1);
    config_write_default(f);
    fclose(f);
    seed_write("config", "default.cfg", text, bytes);
    free(text);
    static const char partial[] = "solver: { n = 16; matrices = 4; precision = \"complex_float\"; };\n"
                                  "output: { mode = \"signal\"; signal_dimension = 2; };\n";
    seed_write("config", "partial.cfg", partial, sizeof partial - 1);
    seed_write("config", "empty.cfg", "", 0);
}

/* The fixture's own .sigmf-meta, read back from a temporary recording. */
static void seed_recording_meta(void)
{
    char name[1024], path[1100], err[RECORDING_ERROR_MAX];
    static char meta[1 << 16];
    snprintf(name, sizeof name, "%s/fixture", fuzz_temp_dir());
    snprintf(path, sizeof path, "%s.sigmf-meta", name);
    FILE *f = NULL;
    size_t bytes = 0;
    if (fuzz_recording_fixture_write(name, err, sizeof err) != RECORDING_OK || (f = fopen(path, "rb")) == NULL) {
        fprintf(stderr, "fuzz_corpus_gen: fixture: %s\n", err);
        exit(1);
    }
    bytes = fread(meta, 1, sizeof meta, f);
    fclose(f);
    seed_write("recording_meta", "fixture.sigmf-meta", meta, bytes);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_corpus_gen OUT_DIR\n");
        return 2;
    }
    out_dir = argv[1];
    seed_covariance("float_full_one_part_crc", 2, 2, EIG_COMPLEX_FLOAT, PROTOCOL_STORAGE_FULL, 0, 1);
    seed_covariance("float_full_per_matrix", 2, 3, EIG_COMPLEX_FLOAT, PROTOCOL_STORAGE_FULL, 1, 0);
    seed_covariance("double_packed_lower_crc", 3, 2, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_PACKED_LOWER, 1, 1);
    seed_covariance("double_packed_upper", 4, 1, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_PACKED_UPPER, 0, 0);
    seed_covariance_message("fragment_float_full_crc", 2, 5, 1, 2, 2, EIG_COMPLEX_FLOAT, PROTOCOL_STORAGE_FULL, 0, 1);
    seed_covariance_message("fragment_double_packed_per_matrix", 3, 4, 1, 0, 3, EIG_COMPLEX_DOUBLE,
                            PROTOCOL_STORAGE_PACKED_LOWER, 1, 0);
    seed_eigenspace("full_crc", 3, 2, EIG_COMPLEX_DOUBLE, PROTOCOL_MODE_FULL, 1, 1);
    seed_eigenspace("values", 4, 2, EIG_COMPLEX_FLOAT, PROTOCOL_MODE_VALUES, 2, 0);
    seed_eigenspace("signal", 4, 3, EIG_COMPLEX_FLOAT, PROTOCOL_MODE_SIGNAL, 1, 1);
    seed_eigenspace("noise", 3, 1, EIG_COMPLEX_DOUBLE, PROTOCOL_MODE_NOISE, 2, 0);
    seed_iq("ci16_cpg_one_part_crc", 3, 4, 5, PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_CPG, 0, 1);
    seed_iq("ci16_pcg_per_pulse", 2, 4, 3, PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_PCG, 1, 0);
    seed_iq("cf32_pgc_per_pulse_crc", 3, 2, 4, PROTOCOL_IQ_CF32_LE, PROTOCOL_IQ_PGC, 1, 1);
    seed_iq("cf32_cpg_per_channel", 4, 2, 2, PROTOCOL_IQ_CF32_LE, PROTOCOL_IQ_CPG, 1, 0);
    seed_configs();
    static const size_t shape2[2] = {2, 3}, shape1[1] = {4};
    seed_npy("c16_2x3.npy", NPY_COMPLEX128, 0, 2, shape2);
    seed_npy("c8_2x3_fortran.npy", NPY_COMPLEX64, 1, 2, shape2);
    seed_npy("f4_4.npy", NPY_FLOAT32, 0, 1, shape1);
    seed_npy("f8_scalar.npy", NPY_FLOAT64, 0, 0, NULL);
    seed_npz("one_array.npz", 1);
    seed_npz("two_arrays.npz", 2);
    seed_recording_meta();
    return 0;
}
