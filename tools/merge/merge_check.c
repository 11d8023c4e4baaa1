/*
 * merge_check.c - the merge's input parser: a received eigenspace message
 * checked whole before it may enter the window (merge.h, merge_frame_check),
 * apart from the rest of the merge so that the fuzz target
 * tests/fuzz/fuzz_merge_input.c runs exactly this code.
 */
#include <stdlib.h>

#include "merge.h"

protocol_reject merge_frame_check(merger *x, const merge_frame *f, protocol_header *h)
{
    const cli_message *m = &f->m;
    if (m->oversized)
        return PROTOCOL_REJECT_OVERSIZED;
    if (m->count == 0)
        return PROTOCOL_REJECT_PARTS;
    protocol_reject r = protocol_header_decode_kind(zmq_msg_data(&m->part[0]), zmq_msg_size(&m->part[0]),
                                                    PROTOCOL_KIND_EIGENSPACE, h);
    if (r != PROTOCOL_OK)
        return r;
    if (m->count != 3 || m->extra != 0)
        return PROTOCOL_REJECT_PARTS;
    size_t sizes[2] = {zmq_msg_size(&m->part[1]), zmq_msg_size(&m->part[2])};
    const void *payload[2] = {zmq_msg_data(&m->part[1]), zmq_msg_data(&m->part[2])};
    /* The meta part's size is checked before count entries are allocated. */
    if (sizes[0] != protocol_meta_bytes(h->count))
        return sizes[0] < protocol_meta_bytes(h->count) ? PROTOCOL_REJECT_TRUNCATED : PROTOCOL_REJECT_OVERSIZED;
    if (h->count > x->meta_cap) {
        protocol_matrix_meta *grown = realloc(x->meta, (size_t)h->count * sizeof *grown);
        if (grown == NULL)
            return PROTOCOL_REJECT_OVERSIZED;
        x->meta = grown;
        x->meta_cap = h->count;
    }
    protocol_stage_times t;
    r = protocol_meta_decode(payload[0], sizes[0], h->count, &t, x->meta);
    if (r == PROTOCOL_OK)
        r = protocol_eigenspace_check_sizes(h, x->meta, sizes, 2, (size_t)x->o.max_bytes);
    if (r == PROTOCOL_OK)
        r = protocol_check_crc(h, payload, sizes, 2);
    return r;
}
