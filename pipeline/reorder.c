/*
 * reorder.c - the bounded reorder window (reorder.h).
 *
 * One ring of capacity slots, seq s in slot s % capacity. Held items lie in
 * [next, next + capacity), so no two of them share a slot. A slot keeps the
 * seq it last held after its item left: an insert below the release point
 * that finds its own seq there, released, is a duplicate; anything else
 * below the release point is late (skipped as a gap, or too old to tell).
 */
#include <stdlib.h>

#include "reorder.h"

typedef enum slot_state { SLOT_EMPTY = 0, SLOT_HELD, SLOT_RELEASED } slot_state;

typedef struct reorder_slot {
    uint64_t seq;
    uint64_t deadline;
    void *item;
    slot_state state;
} reorder_slot;

struct reorder {
    reorder_slot *ring;
    size_t capacity;
    size_t held;
    uint64_t next;         /* the release point */
    int started;           /* next is set (first insert or reorder_start) */
    int overflow;          /* an insert was refused as FULL ... */
    uint64_t overflow_seq; /* ... the largest such seq */
};

reorder_error reorder_create(reorder **out, size_t capacity)
{
    *out = NULL;
    if (capacity == 0)
        return REORDER_EINVAL;
    reorder *w = calloc(1, sizeof *w);
    if (w == NULL)
        return REORDER_ENOMEM;
    w->ring = calloc(capacity, sizeof *w->ring);
    if (w->ring == NULL) {
        free(w);
        return REORDER_ENOMEM;
    }
    w->capacity = capacity;
    *out = w;
    return REORDER_OK;
}

void reorder_destroy(reorder **w)
{
    if (w == NULL || *w == NULL)
        return;
    free((*w)->ring);
    free(*w);
    *w = NULL;
}

reorder_error reorder_start(reorder *w, uint64_t first_seq)
{
    if (w->started)
        return REORDER_EINVAL;
    w->next = first_seq;
    w->started = 1;
    return REORDER_OK;
}

static reorder_slot *slot_of(const reorder *w, uint64_t seq)
{
    return &w->ring[seq % w->capacity];
}

reorder_insert_result reorder_insert(reorder *w, uint64_t seq, void *item, uint64_t deadline)
{
    if (!w->started) {
        w->next = seq;
        w->started = 1;
    }
    reorder_slot *s = slot_of(w, seq);
    if (seq < w->next)
        return s->seq == seq && s->state == SLOT_RELEASED ? REORDER_DUPLICATE : REORDER_LATE;
    /* Written as a difference: next + capacity may not fit in 64 bits. */
    if (seq - w->next >= w->capacity) {
        if (!w->overflow || seq > w->overflow_seq)
            w->overflow_seq = seq;
        w->overflow = 1;
        return REORDER_FULL;
    }
    if (s->state == SLOT_HELD) /* in the window, so its own seq */
        return REORDER_DUPLICATE;
    *s = (reorder_slot){.seq = seq, .deadline = deadline, .item = item, .state = SLOT_HELD};
    w->held++;
    return seq == w->next ? REORDER_IN_ORDER : REORDER_BUFFERED;
}

/* The first held seq after the (missing) release point; held > 0. */
static const reorder_slot *head_find(const reorder *w)
{
    for (size_t i = 1; i < w->capacity; i++) {
        const reorder_slot *s = slot_of(w, w->next + i);
        if (s->state == SLOT_HELD)
            return s;
    }
    return NULL; /* not reached while held > 0 and the release point is missing */
}

/* An insert refused as FULL still does not fit. */
static int overflow_pending(const reorder *w)
{
    return w->overflow && w->overflow_seq - w->next >= w->capacity;
}

static void gap_release(reorder *w, uint64_t last, reorder_release *r)
{
    *r = (reorder_release){.kind = REORDER_GAP, .seq = w->next, .last = last};
    w->next = last + 1;
}

int reorder_pop_ready(reorder *w, uint64_t now, reorder_release *r)
{
    if (!w->started)
        return 0;
    reorder_slot *s = slot_of(w, w->next);
    if (s->state == SLOT_HELD) {
        *r = (reorder_release){.kind = REORDER_ITEM, .seq = s->seq, .last = s->seq, .item = s->item,
                               .deadline = s->deadline};
        s->state = SLOT_RELEASED;
        s->item = NULL;
        w->held--;
        w->next++;
    } else if (w->held > 0) {
        const reorder_slot *head = head_find(w);
        if (head == NULL || (now < head->deadline && !overflow_pending(w)))
            return 0;
        gap_release(w, head->seq - 1, r);
    } else if (overflow_pending(w)) {
        /* Nothing held: jump so that the refused seq is the window's last. */
        gap_release(w, w->overflow_seq - w->capacity, r);
    } else {
        return 0;
    }
    if (!overflow_pending(w))
        w->overflow = 0;
    return 1;
}

int reorder_next_deadline(const reorder *w, uint64_t *deadline)
{
    if (!w->started || w->held == 0 || slot_of(w, w->next)->state == SLOT_HELD)
        return 0;
    const reorder_slot *head = head_find(w);
    if (head == NULL)
        return 0;
    *deadline = head->deadline;
    return 1;
}

size_t reorder_held(const reorder *w)
{
    return w->held;
}

uint64_t reorder_next(const reorder *w)
{
    return w->next;
}

const char *reorder_strerror(reorder_error e)
{
    switch (e) {
    case REORDER_OK: return "ok";
    case REORDER_EINVAL: return "invalid argument (capacity 0, or start after the first insert)";
    case REORDER_ENOMEM: return "out of memory";
    }
    return "unknown reorder error";
}

const char *reorder_insert_result_name(reorder_insert_result r)
{
    switch (r) {
    case REORDER_IN_ORDER: return "in_order";
    case REORDER_BUFFERED: return "buffered";
    case REORDER_DUPLICATE: return "duplicate";
    case REORDER_LATE: return "late";
    case REORDER_FULL: return "full";
    }
    return "unknown";
}
