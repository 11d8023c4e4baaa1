/*
 * dispatch_open.c - the fragmented frame eigstream-dispatch is routing:
 * which message continues it, and where it stands (dispatch.h). The rules
 * are the receiver's (docs/protocol.md, "Fragmented covariance frames"), so
 * that the dispatcher sends a daemon nothing its receiver would not join.
 */
#include "dispatch.h"

static const char *const end_names[DISPATCH_END_COUNT_] = {"abandoned", "orphaned", "dropped"};

const char *dispatch_frame_end_name(dispatch_frame_end e)
{
    return (int)e >= 0 && e < DISPATCH_END_COUNT_ ? end_names[e] : "unknown";
}

dispatch_step dispatch_open_step(const dispatch_open *o, const protocol_header *h, int *ends_open)
{
    int open = o->state != DISPATCH_OPEN_NONE;
    *ends_open = 0;
    if (!(h->flags & PROTOCOL_FLAG_FRAGMENT)) {
        *ends_open = open;
        return DISPATCH_STEP_WHOLE;
    }
    if (h->fragment_first == 0) {
        *ends_open = open;
        return DISPATCH_STEP_START;
    }
    if (open && protocol_fragments_continues(&o->f, h))
        return o->state == DISPATCH_OPEN_ORPHANED ? DISPATCH_STEP_ORPHANED : DISPATCH_STEP_CONTINUE;
    /* A fragment of the open frame's seq in the wrong place means a lost or
     * reordered fragment: the frame cannot be finished in order. One of
     * another seq may be a stray from elsewhere and leaves it be. */
    *ends_open = open && h->seq == o->f.frame.seq;
    return DISPATCH_STEP_STRAY;
}

int dispatch_open_take(dispatch_open *o, const protocol_header *h, uint64_t now_ns)
{
    if (h->fragment_first == 0) {
        protocol_fragments_begin(&o->f, h);
        o->state = DISPATCH_OPEN_HELD;
    }
    o->last_ns = now_ns;
    if (!protocol_fragments_join(&o->f, h))
        return 0;
    o->state = DISPATCH_OPEN_NONE;
    return 1;
}
