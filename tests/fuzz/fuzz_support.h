/*
 * fuzz_support.h - what the fuzz targets of tests/fuzz share: the multipart
 * framing of an input, in-memory files for loaders that take a path, and the
 * invariant check that ends a run.
 *
 * Every target is one fuzz_<name>.c defining LLVMFuzzerTestOneInput. Built
 * with -DEIGSTREAM_FUZZ=ON it links libFuzzer (-fsanitize=fuzzer); in every
 * build it also links fuzz_replay_main.c, which feeds the files of the
 * target's corpus and regression folders to the same function (ctest
 * fuzz_replay_<name>), so the corpora run where clang is missing.
 */
#ifndef EIGSTREAM_FUZZ_SUPPORT_H
#define EIGSTREAM_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

/* libFuzzer's entry point, defined once per target. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant the code under test must keep: when cond is false, prints
 * "fuzz invariant broken: what" with the location and aborts, which
 * libFuzzer reports as a crash and the replay test as a failure. */
#define FUZZ_REQUIRE(cond, what)                                                                   \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz_invariant_broken(__FILE__, __LINE__, (what));                                     \
    } while (0)

void fuzz_invariant_broken(const char *file, int line, const char *what) __attribute__((noreturn));

/* Most parts fuzz_parts_split makes (header + 15 payload parts). */
#define FUZZ_PARTS_MAX 16

/* The multipart framing of a fuzz input:
 *   byte 0              part count P (taken modulo FUZZ_PARTS_MAX + 1)
 *   P little-endian u32 the part lengths
 *   the rest            the parts' bytes, back to back
 * A length longer than the bytes left is cut to them; bytes after the last
 * part are ignored. part[i] points into data (no copy); an input too short
 * for its length table gives 0 parts. Returns the part count. */
size_t fuzz_parts_split(const uint8_t *data, size_t size, const uint8_t *part[FUZZ_PARTS_MAX],
                        size_t part_bytes[FUZZ_PARTS_MAX]);

/* Writes the framing of parts (the inverse of fuzz_parts_split) into out
 * (out_bytes large); returns the bytes written, 0 when out is too small or
 * parts exceeds FUZZ_PARTS_MAX. For the corpus generator. */
size_t fuzz_parts_join(const uint8_t *const *part, const size_t *part_bytes, size_t parts, uint8_t *out,
                       size_t out_bytes);

/* The start every message target shares: splits the input into parts
 * (fuzz_parts_split), decodes part 0 with protocol_header_decode and requires
 * that the header re-encodes to the same 64 bytes. Returns the part count
 * when the header decoded (h filled) and is of the target's kind, else 0. */
struct protocol_header;
size_t fuzz_message_split(const uint8_t *data, size_t size, const uint8_t *part[FUZZ_PARTS_MAX],
                          size_t part_bytes[FUZZ_PARTS_MAX], struct protocol_header *h, uint8_t kind);

/* The CRC32C of the payload parts, with both implementations (the SSE4.2 and
 * the table one) and protocol_payload_crc32c, which must all agree. */
uint32_t fuzz_payload_crc(const void *const *part, const size_t *part_bytes, size_t parts);
/* protocol_check_crc on a frame's payload parts, required to agree with crc
 * (fuzz_payload_crc of the same parts): a frame with the CRC flag is refused
 * exactly when crc differs from its header's. 1 when accepted, else 0. */
int fuzz_crc_accepted(const struct protocol_header *h, const void *const *part, const size_t *part_bytes, size_t parts,
                      uint32_t crc);

/* The payload checks of a frame kind whose parts are all payload (covariance,
 * IQ): on parts 1..parts-1 of a message, the CRC first (fuzz_payload_crc),
 * then check_sizes, the protocol's size check of the kind (with
 * max_payload_bytes); accepted sizes must meet require_sizes (the target's
 * invariants, FUZZ_REQUIRE), and then the CRC decision (fuzz_crc_accepted).
 * 1 when the payload passed all of them, else 0. */
typedef protocol_reject (*fuzz_check_sizes)(const protocol_header *h, const size_t *part_bytes, size_t parts,
                                            size_t max_payload_bytes);
int fuzz_payload_accepted(const protocol_header *h, const uint8_t *const *part, const size_t *part_bytes,
                          size_t parts, size_t max_payload_bytes, fuzz_check_sizes check_sizes,
                          void (*require_sizes)(const protocol_header *h, const size_t *part_bytes, size_t parts));

/* An in-memory file (memfd) that a loader taking a path can open: replaces
 * its contents with bytes and returns its path ("/proc/self/fd/N", valid
 * until the process ends), or NULL when the file cannot be made. One file
 * per process, reused; slot 0 and 1 are two independent files. */
const char *fuzz_memfile_fill(int slot, const void *bytes, size_t size);

/* A private temporary folder for this process (under /dev/shm when it
 * exists, else $TMPDIR or /tmp), removed with its files at exit; NULL when
 * it cannot be made. */
const char *fuzz_temp_dir(void);

#endif
