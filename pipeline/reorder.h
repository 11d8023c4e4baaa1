/*
 * reorder.h - a bounded reorder window over sequence numbers: items arrive
 * in any order, leave in sequence order, and a missing sequence number is
 * waited for only until the deadline of the item behind it (or until the
 * window has no room), then released past as a gap.
 *
 * Generic: an item is a pointer the caller owns (NULL allowed: a seq known
 * to be finished with nothing to publish); the window only holds it. No
 * clock inside: every call that depends on time takes "now" from the caller
 * (any monotonic unit, the same as the deadlines), so that tests are
 * deterministic. Not thread-safe: one owner thread.
 *
 * Usage (the daemon's publish stage, eigstream-merge):
 *
 *     reorder *w;
 *     reorder_create(&w, 64);
 *     switch (reorder_insert(w, seq, item, deadline)) {
 *     case REORDER_IN_ORDER: case REORDER_BUFFERED: break;  held
 *     case REORDER_DUPLICATE: drop item, count a duplicate; break;
 *     case REORDER_LATE: below the release point: publish out of order or
 *                        drop it (the late policy), count it; break;
 *     case REORDER_FULL: seq is too far ahead: pop_ready makes room, retry
 *     }
 *     reorder_release r;
 *     while (reorder_pop_ready(w, now, &r))
 *         r.kind == REORDER_ITEM ? publish(r.item) : count_gap(r.seq, r.last);
 *     reorder_destroy(&w);
 *
 * Release point ("next"): the smallest seq neither released nor skipped.
 * It starts at the first inserted seq, or at reorder_start's; an item below
 * the first seq is late. Sequence numbers are uint64 and do not wrap.
 * Held items always lie in [next, next + capacity).
 */
#ifndef EIGSTREAM_REORDER_H
#define EIGSTREAM_REORDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct reorder reorder;

typedef enum reorder_error {
    REORDER_OK = 0,
    REORDER_EINVAL, /* capacity 0, or reorder_start after the first insert */
    REORDER_ENOMEM
} reorder_error;

/* What reorder_insert did with an item. Only IN_ORDER and BUFFERED keep
 * it; with the others the item stays the caller's. */
typedef enum reorder_insert_result {
    REORDER_IN_ORDER = 0, /* seq == next: held; pop_ready releases it at once */
    REORDER_BUFFERED,     /* next < seq < next + capacity: held until the gap before it closes
                             or is released past */
    REORDER_DUPLICATE,    /* seq is held already, or was released (within the last capacity seqs) */
    REORDER_LATE,         /* seq < next, not released: it was skipped as a gap, or is below
                             the first seq, or too old to tell */
    REORDER_FULL          /* seq >= next + capacity: not held; the next pop_ready calls
                             release past the gaps until seq fits, then insert again */
} reorder_insert_result;

typedef enum reorder_release_kind {
    REORDER_ITEM = 0, /* item (seq) leaves in order */
    REORDER_GAP       /* seqs seq..last were never inserted and are now skipped */
} reorder_release_kind;

typedef struct reorder_release {
    reorder_release_kind kind;
    uint64_t seq;  /* ITEM: its seq; GAP: the first missing seq */
    uint64_t last; /* GAP: the last missing seq (inclusive); ITEM: seq */
    void *item;    /* ITEM: as inserted (may be NULL); GAP: NULL */
    uint64_t deadline; /* ITEM: as inserted */
} reorder_release;

/* A window holding at most capacity seqs ahead of the release point. */
reorder_error reorder_create(reorder **out, size_t capacity);
/* Destroys *w (NULL: nothing) and sets it to NULL. Items still held are not
 * touched (the caller drains with pop_ready(UINT64_MAX) first). */
void reorder_destroy(reorder **w);

/* Sets the first expected seq before any insert: items below it are late,
 * and a missing first seq is waited for like any gap. REORDER_EINVAL after
 * the first insert. Without it the first insert sets the release point. */
reorder_error reorder_start(reorder *w, uint64_t first_seq);

/* Offers item under seq; deadline (the caller's unit, same as now) is when
 * the window stops waiting for seqs missing before it. */
reorder_insert_result reorder_insert(reorder *w, uint64_t seq, void *item, uint64_t deadline);

/* The next release, in order, into *r; 1 when there was one, 0 when
 * nothing is ready. At the release point:
 *   held             -> that item (REORDER_ITEM)
 *   missing          -> a gap up to the first held item (the head) when now
 *                       >= the head's deadline, or when an insert was
 *                       refused as FULL; with nothing held, a FULL insert's
 *                       seq makes the gap reach seq - capacity
 * now = UINT64_MAX drains everything held (shutdown). */
int reorder_pop_ready(reorder *w, uint64_t now, reorder_release *r);

/* When waiting for a gap ends: 1 and *deadline set (the head's deadline)
 * while the release point is missing and an item is held behind it, else 0
 * (nothing to wait for, or pop_ready has something now). */
int reorder_next_deadline(const reorder *w, uint64_t *deadline);

/* Items held now. */
size_t reorder_held(const reorder *w);
/* The release point; 0 before anything was inserted or started. */
uint64_t reorder_next(const reorder *w);

const char *reorder_strerror(reorder_error e);
/* "in_order", "buffered", "duplicate", "late", "full"; "unknown" otherwise. */
const char *reorder_insert_result_name(reorder_insert_result r);

#ifdef __cplusplus
}
#endif

#endif
