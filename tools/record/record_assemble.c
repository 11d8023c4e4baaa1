/*
 * record_assemble.c - fragmented covariance frames assembled into whole
 * frames for eigstream-record (record_assemble.h has the rules; they are
 * pipeline/stage_receive.c's receive_fragment_place / receive_fragment_join /
 * receive_assembly_give_up, minus the daemon's finiteness check).
 */
#include "record_assemble.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void record_assembly_init(record_assembly *a, uint64_t max_frame_bytes)
{
    *a = (record_assembly){.max_frame_bytes = max_frame_bytes};
}

void record_assembly_free(record_assembly *a)
{
    free(a->payload);
    *a = (record_assembly){0};
}

int record_assembly_give_up(record_assembly *a, const char *why, char *gave_up, size_t gave_up_bytes)
{
    if (!a->active)
        return 0;
    snprintf(gave_up, gave_up_bytes, "seq %llu with %u of its %u matrices: %s", (unsigned long long)a->f.frame.seq,
             a->f.next, a->f.frame.count, why);
    a->active = 0;
    return 1;
}

int record_assembly_stale(const record_assembly *a, double now_s, double timeout_s)
{
    return a->active && now_s - a->last_s > timeout_s;
}

/* Starts the frame of a first fragment h (first = 0): the frame's header, no
 * payload joined yet. */
static void assembly_start(record_assembly *a, const protocol_header *h, double now_s)
{
    a->active = 1;
    protocol_fragments_begin(&a->f, h);
    a->last_s = now_s;
}

/* A placed fragment's checks, in the daemon's order: its sizes against its
 * header and parts (parts = 0: too many to keep, rejected `parts`), its
 * frame's size against max_frame_bytes, its own CRC when flagged. Writes the
 * skip line to why on failure. */
static protocol_reject assembly_check(const record_assembly *a, const protocol_header *h, const void *const *part,
                                      const size_t *part_bytes, size_t parts, char *why, size_t why_bytes)
{
    protocol_reject r = protocol_covariance_check_sizes(h, part_bytes, parts, 0);
    size_t total = 0;
    for (size_t i = 0; i < parts; i++)
        total += part_bytes[i];
    if (r != PROTOCOL_OK) {
        snprintf(why, why_bytes, "%s: fragment of seq %llu at matrix %u: %zu parts, %zu bytes; header says %u "
                 "matrices, %llu bytes of %s %s", protocol_reject_name(r), (unsigned long long)h->seq,
                 h->fragment_first, parts, total, h->fragment_matrices, (unsigned long long)h->payload_bytes,
                 protocol_storage_name(h->storage), eig_precision_name(h->element));
        return r;
    }
    /* The sizes passed: the matrix bytes are valid and count >= 1. */
    size_t matrix_bytes = protocol_matrix_bytes(h->n, h->element, h->storage);
    if (matrix_bytes > a->max_frame_bytes / h->count) {
        snprintf(why, why_bytes, "%s: fragment of seq %llu at matrix %u: its frame of %u matrices of %zu bytes "
                 "passes --max-frame-bytes %llu", protocol_reject_name(PROTOCOL_REJECT_OVERSIZED),
                 (unsigned long long)h->seq, h->fragment_first, h->count, matrix_bytes,
                 (unsigned long long)a->max_frame_bytes);
        return PROTOCOL_REJECT_OVERSIZED;
    }
    r = protocol_check_crc(h, part, part_bytes, parts);
    if (r != PROTOCOL_OK)
        snprintf(why, why_bytes, "%s: fragment of seq %llu at matrix %u (%u matrices)", protocol_reject_name(r),
                 (unsigned long long)h->seq, h->fragment_first, h->fragment_matrices);
    return r;
}

/* Grows the buffer to the frame's payload (checked against max_frame_bytes
 * by assembly_check). 0, or -1 when out of memory. */
static int assembly_reserve(record_assembly *a)
{
    const protocol_header *f = &a->f.frame;
    size_t bytes = (size_t)f->count * protocol_matrix_bytes(f->n, f->element, f->storage);
    if (bytes <= a->capacity)
        return 0;
    uint8_t *p = realloc(a->payload, bytes);
    if (p == NULL)
        return -1;
    a->payload = p;
    a->capacity = bytes;
    return 0;
}

/* Copies a checked fragment into its place and joins its size and CRC to the
 * frame's. COMPLETE when it ends the frame, else JOINED. */
static record_fragment_result assembly_join(record_assembly *a, const protocol_header *h, const void *const *part,
                                            const size_t *part_bytes, size_t parts, uint64_t received_ns,
                                            double now_s)
{
    size_t offset = (size_t)h->fragment_first * protocol_matrix_bytes(h->n, h->element, h->storage);
    for (size_t i = 0; i < parts; i++) {
        if (part_bytes[i] > 0)
            memcpy(a->payload + offset, part[i], part_bytes[i]);
        offset += part_bytes[i];
    }
    a->last_s = now_s; /* the wait for the next fragment starts now */
    a->received_ns = received_ns;
    if (!protocol_fragments_join(&a->f, h))
        return RECORD_FRAGMENT_JOINED;
    a->active = 0;
    return RECORD_FRAGMENT_COMPLETE;
}

record_fragment_result record_assembly_take(record_assembly *a, const protocol_header *h, const void *const *part,
                                            const size_t *part_bytes, size_t parts, uint64_t received_ns,
                                            double now_s, record_fragment_outcome *out)
{
    out->skipped[0] = '\0';
    out->gave_up_count = 0;
    if (h->fragment_first == 0) {
        out->gave_up_count += record_assembly_give_up(a, "a new frame began", out->gave_up[0], RECORD_WHY_MAX);
        assembly_start(a, h, now_s);
    } else if (!a->active || !protocol_fragments_continues(&a->f, h)) {
        if (a->active)
            snprintf(out->skipped, sizeof out->skipped, "%s: fragment of seq %llu at matrix %u while seq %llu "
                     "waits for matrix %u", protocol_reject_name(PROTOCOL_REJECT_INCOMPLETE),
                     (unsigned long long)h->seq, h->fragment_first, (unsigned long long)a->f.frame.seq, a->f.next);
        else
            snprintf(out->skipped, sizeof out->skipped, "%s: fragment of seq %llu at matrix %u, and no frame is "
                     "being assembled", protocol_reject_name(PROTOCOL_REJECT_INCOMPLETE),
                     (unsigned long long)h->seq, h->fragment_first);
        return RECORD_FRAGMENT_SKIPPED;
    }
    protocol_reject r = assembly_check(a, h, part, part_bytes, parts, out->skipped, sizeof out->skipped);
    if (r != PROTOCOL_OK) {
        char why[96];
        snprintf(why, sizeof why, "its fragment at matrix %u was rejected (%s)", h->fragment_first,
                 protocol_reject_name(r));
        out->gave_up_count += record_assembly_give_up(a, why, out->gave_up[out->gave_up_count], RECORD_WHY_MAX);
        return RECORD_FRAGMENT_SKIPPED;
    }
    if (assembly_reserve(a) != 0) {
        out->gave_up_count +=
            record_assembly_give_up(a, "out of memory", out->gave_up[out->gave_up_count], RECORD_WHY_MAX);
        return RECORD_FRAGMENT_ENOMEM;
    }
    return assembly_join(a, h, part, part_bytes, parts, received_ns, now_s);
}
