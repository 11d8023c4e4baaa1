/*
 * merge_sequence.c - what eigstream-merge does with each checked frame
 * (merge.h, "Sequences"): the reorder window near the release point,
 * duplicates told from a restarted source by their timestamp, late frames,
 * and frames far outside the sequence put aside until enough of them agree
 * on a new one. Every frame that comes in is republished, or counted by one
 * reason and logged by seq; every seq passed over is named as a gap, once,
 * in the JSON, the log and --gap-log.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "merge.h"

#define NS_PER_MS 1000000ull

/* Saturating a + b: deadlines of UINT64_MAX mean "at exit". */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t window_ns(const merger *x)
{
    return (uint64_t)x->o.window_ms * NS_PER_MS;
}

/* Names seqs first..last as never republished: counted, logged and listed
 * (JSON, --gap-log). The one place a loss is named. */
static void gap_name(merger *x, uint64_t first, uint64_t last, const char *why)
{
    merge_stats_gap(&x->s, first, last);
    fprintf(stderr, "eigstream-merge: gap: seq %" PRIu64 "..%" PRIu64 " (%" PRIu64 " frames) %s\n", first, last,
            last - first + 1, why);
    if (x->gap_log != NULL)
        fprintf(x->gap_log, "%" PRIu64 " %" PRIu64 "\n", first, last);
}

/* Counts f dropped for d, logs it by seq, recycles it. */
static void drop(merger *x, merge_frame *f, merge_drop d, const char *why)
{
    merge_stats_drop(&x->s, d);
    fprintf(stderr, "eigstream-merge: %s: seq %" PRIu64 " dropped (%s)\n", merge_drop_name(d), f->seq, why);
    merge_recycle(x, f);
}

/* Publishes a frame the window released in order, remembering its seq and
 * timestamp for the duplicate check. */
static void publish_in_order(merger *x, merge_frame *f)
{
    x->recent[f->seq % (uint64_t)x->o.window] = (merge_recent){f->seq, f->timestamp_ns, 1};
    merge_publish(x, f);
}

/* Publishes or names whatever the window releases at now. */
static void window_release(merger *x, uint64_t now)
{
    reorder_release r;
    while (reorder_pop_ready(x->w, now, &r)) {
        if (r.kind == REORDER_ITEM)
            publish_in_order(x, r.item);
        else
            gap_name(x, r.seq, r.last, "never arrived");
    }
}

/* A frame whose seq is behind the release point and not a copy: dropped,
 * or published flagged LATE (--late publish). A seq below the sequence's
 * first was never named: it is named now, as its frame is not republished
 * in order. */
static void late(merger *x, merge_frame *f)
{
    if (f->seq < x->epoch_first && !x->o.late_publish)
        gap_name(x, f->seq, f->seq, "arrived after its sequence began past it");
    if (!x->o.late_publish) {
        drop(x, f, MERGE_DROP_LATE, "arrived after the window passed it");
        return;
    }
    fprintf(stderr, "eigstream-merge: late: seq %" PRIu64 " published flagged LATE\n", f->seq);
    protocol_header h;
    if (protocol_header_decode(zmq_msg_data(&f->m.part[0]), zmq_msg_size(&f->m.part[0]), &h) == PROTOCOL_OK) {
        h.flags |= PROTOCOL_FLAG_LATE;
        zmq_msg_close(&f->m.part[0]);
        if (zmq_msg_init_size(&f->m.part[0], PROTOCOL_HEADER_BYTES) == 0)
            protocol_header_encode(&h, zmq_msg_data(&f->m.part[0]));
    }
    x->s.late_published++;
    merge_publish(x, f);
}

/* Into the window; a seq beyond it first releases past the oldest gaps. */
static void window_offer(merger *x, merge_frame *f, uint64_t now)
{
    for (;;) {
        switch (reorder_insert(x->w, f->seq, f, add_sat(now, window_ns(x)))) {
        case REORDER_IN_ORDER:
        case REORDER_BUFFERED:
            return;
        case REORDER_DUPLICATE:
            drop(x, f, MERGE_DROP_DUPLICATE, "its seq is held or was republished");
            return;
        case REORDER_LATE:
            late(x, f);
            return;
        case REORDER_FULL:
            window_release(x, now); /* makes room behind the seq, then again */
            break;
        }
    }
}

/* Drops every frame put aside (out_of_range, each logged by seq). */
static void candidate_drop(merger *x, const char *why)
{
    for (size_t i = 0; i < x->cand.count; i++)
        drop(x, x->cand.f[i], MERGE_DROP_OUT_OF_RANGE, why);
    x->cand.count = 0;
}

/* Ends the current sequence at a restart: what its window holds is
 * released in order, and the releases up to its last frame older than the
 * candidate's are published or named; newer frames join the candidate, and
 * the gaps among them are not the old run's (it had ended). */
static void window_end(merger *x)
{
    size_t n = 0, last_old = SIZE_MAX;
    reorder_release r;
    while (reorder_pop_ready(x->w, UINT64_MAX, &r)) {
        x->pops[n] = r;
        if (r.kind == REORDER_ITEM && ((merge_frame *)r.item)->timestamp_ns < x->cand.first_timestamp_ns)
            last_old = n;
        n++;
    }
    for (size_t i = 0; i < n; i++) {
        merge_frame *f = x->pops[i].item;
        if (last_old != SIZE_MAX && i <= last_old) {
            if (f != NULL)
                publish_in_order(x, f);
            else
                gap_name(x, x->pops[i].seq, x->pops[i].last, "never arrived");
        } else if (f != NULL) {
            x->cand.f[x->cand.count++] = f;
            x->cand.low = f->seq < x->cand.low ? f->seq : x->cand.low;
        }
    }
}

/* Starts the sequence the candidate frames agree on: the current one is
 * ended (window_end), and the window starts again at the lowest seq put
 * aside. */
static void candidate_adopt(merger *x)
{
    if (x->started) {
        uint64_t next = reorder_next(x->w);
        window_end(x);
        fprintf(stderr,
                "eigstream-merge: source restart: %zu frames at seq %" PRIu64 "..%" PRIu64
                " agree, far from the sequence at %" PRIu64 "; a new sequence begins at %" PRIu64 "\n",
                x->cand.count, x->cand.low, x->cand.high, next, x->cand.low);
        reorder_destroy(&x->w);
        if (reorder_create(&x->w, (size_t)x->o.window) != REORDER_OK) {
            candidate_drop(x, "out of memory for a new window");
            x->started = 0;
            return;
        }
    } else {
        fprintf(stderr, "eigstream-merge: the sequence begins at seq %" PRIu64 " (%zu frames in the first %d ms)\n",
                x->cand.low, x->cand.count, x->o.window_ms);
    }
    (void)reorder_start(x->w, x->cand.low);
    for (size_t i = 0; i < (size_t)x->o.window; i++)
        x->recent[i].valid = 0;
    x->started = 1;
    x->epoch_first = x->cand.low;
    x->s.epochs++;
    size_t count = x->cand.count;
    x->cand.count = 0;
    for (size_t i = 0; i < count; i++)
        window_offer(x, x->cand.f[i], x->cand.last_ns);
}

/* Puts f aside: it joins the candidate when within one window of its
 * frames. A frame beyond them but near enough to follow them (the window
 * and --jump-limit ahead of their lowest) ends a candidate that is
 * confirmed, or the first one at start: that candidate is adopted and f
 * offered to the new sequence. Any other far frame replaces a candidate not
 * yet confirmed (whose frames are dropped), or is dropped itself. A full
 * candidate that is confirmed is adopted at once. */
static void candidate_offer(merger *x, merge_frame *f, uint64_t now)
{
    merge_candidate *c = &x->cand;
    uint64_t w = (uint64_t)x->o.window;
    int confirmed = c->count >= (size_t)x->o.epoch_confirm || !x->started;
    if (c->count > 0) {
        uint64_t low = f->seq < c->low ? f->seq : c->low, high = f->seq > c->high ? f->seq : c->high;
        if (high - low >= w) {
            if (confirmed && f->seq > c->high && f->seq - c->low < w + (uint64_t)x->o.jump_limit) {
                candidate_adopt(x);
                merge_sequence_offer(x, f, now);
                return;
            }
            if (c->count >= (size_t)x->o.epoch_confirm) {
                drop(x, f, MERGE_DROP_OUT_OF_RANGE, "far from the sequence and from the new one forming");
                return;
            }
            candidate_drop(x, "a frame far from them came before enough agreed");
        } else {
            c->low = low;
            c->high = high;
        }
    }
    if (c->count == 0) {
        c->low = c->high = f->seq;
        c->first_ns = now;
        c->first_timestamp_ns = f->timestamp_ns;
    }
    if (f->timestamp_ns < c->first_timestamp_ns)
        c->first_timestamp_ns = f->timestamp_ns;
    c->f[c->count++] = f;
    c->last_ns = now;
    if (c->count == w && c->count >= (size_t)x->o.epoch_confirm)
        candidate_adopt(x);
}

/* A frame behind the release point, within one window of it: a copy of
 * what was republished (the same seq and timestamp), a seq passed as a gap
 * (late), or a restarted source's frame (the seq published with another
 * timestamp: put aside). */
static void behind_offer(merger *x, merge_frame *f, uint64_t now)
{
    const merge_recent *r = &x->recent[f->seq % (uint64_t)x->o.window];
    if (r->valid && r->seq == f->seq) {
        if (r->timestamp_ns == f->timestamp_ns)
            drop(x, f, MERGE_DROP_DUPLICATE, "a copy of a frame republished");
        else
            candidate_offer(x, f, now);
        return;
    }
    late(x, f);
}

/* Whether f belongs with the candidate rather than the current sequence:
 * within one window of its frames and no older than they are. */
static int candidate_takes(const merger *x, const merge_frame *f)
{
    const merge_candidate *c = &x->cand;
    if (c->count == 0 || f->timestamp_ns < c->first_timestamp_ns)
        return 0;
    uint64_t low = f->seq < c->low ? f->seq : c->low, high = f->seq > c->high ? f->seq : c->high;
    return high - low < (uint64_t)x->o.window;
}

void merge_sequence_offer(merger *x, merge_frame *f, uint64_t now)
{
    if (!x->started || candidate_takes(x, f)) {
        candidate_offer(x, f, now);
        return;
    }
    uint64_t next = reorder_next(x->w), w = (uint64_t)x->o.window;
    if (f->seq >= next && f->seq - next < w + (uint64_t)x->o.jump_limit)
        window_offer(x, f, now);
    else if (f->seq < next && next - f->seq <= w)
        behind_offer(x, f, now);
    else
        candidate_offer(x, f, now);
}

/* When the candidate is due: adopted once confirmed and its first frame
 * has waited the window (at start, whatever its count), dropped once no
 * frame joined it for the window. */
static int candidate_due(const merger *x, uint64_t *when, int *adopt)
{
    const merge_candidate *c = &x->cand;
    if (c->count == 0)
        return 0;
    *adopt = !x->started || c->count >= (size_t)x->o.epoch_confirm;
    *when = add_sat(*adopt ? c->first_ns : c->last_ns, window_ns(x));
    return 1;
}

void merge_sequence_release(merger *x, uint64_t now)
{
    uint64_t when;
    int adopt;
    if (candidate_due(x, &when, &adopt) && (now >= when || now == UINT64_MAX)) {
        if (adopt)
            candidate_adopt(x);
        else
            candidate_drop(x, "too few frames agreed on a new sequence");
    }
    /* While a candidate forms, the current window releases what is in
     * order but names no gap: the frames it waits for may be the new run's. */
    if (x->started)
        window_release(x, x->cand.count > 0 && now != UINT64_MAX ? 0 : now);
}

int merge_sequence_deadline(const merger *x, uint64_t *deadline)
{
    uint64_t when;
    int adopt, any = 0;
    if (x->started && x->cand.count == 0 && reorder_next_deadline(x->w, deadline))
        any = 1;
    if (candidate_due(x, &when, &adopt) && (!any || when < *deadline)) {
        *deadline = when;
        any = 1;
    }
    return any;
}
