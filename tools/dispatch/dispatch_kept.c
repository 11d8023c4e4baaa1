/*
 * dispatch_kept.c - frames kept after they were sent, for re-dispatch when
 * the daemon they went to dies (dispatch.h). A kept frame shares its
 * buffers with the one sent (zmq_msg_copy counts references on large
 * parts), so keeping costs no copy; the buffers live until it is released.
 */
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

int dispatch_kept_init(dispatch_kept *k, size_t frames)
{
    memset(k, 0, sizeof *k);
    k->f = calloc(frames, sizeof *k->f);
    k->cap = frames;
    return k->f != NULL ? 0 : -1;
}

void dispatch_kept_free(dispatch_kept *k)
{
    for (size_t i = 0; k->f != NULL && i < k->cap; i++)
        cli_message_free(&k->f[i].m);
    free(k->f);
    memset(k, 0, sizeof *k);
}

dispatch_kept_frame *dispatch_kept_oldest(dispatch_kept *k)
{
    return k->count > 0 ? &k->f[k->head] : NULL;
}

void dispatch_kept_pop(dispatch_kept *k)
{
    if (k->count == 0)
        return;
    cli_message_release(&k->f[k->head].m);
    k->head = (k->head + 1) % k->cap;
    k->count--;
}

void dispatch_kept_pop_newest(dispatch_kept *k)
{
    if (k->count == 0)
        return;
    cli_message_release(&k->f[(k->head + k->count - 1) % k->cap].m);
    k->count--;
}

/* The slot a new frame goes to, the oldest released first when full. */
static dispatch_kept_frame *slot_next(dispatch_kept *k)
{
    if (k->count == k->cap)
        dispatch_kept_pop(k);
    dispatch_kept_frame *f = &k->f[(k->head + k->count) % k->cap];
    k->count++;
    return f;
}

/* Grows f's part array to parts entries; 0 or -1. */
static int parts_reserve(cli_message *m, size_t parts)
{
    if (m->cap >= parts)
        return 0;
    zmq_msg_t *grown = realloc(m->part, parts * sizeof *grown);
    if (grown == NULL)
        return -1;
    m->part = grown;
    m->cap = parts;
    return 0;
}

int dispatch_kept_push(dispatch_kept *k, const cli_message *m, uint64_t seq, uint64_t now_ns)
{
    dispatch_kept_frame *f = slot_next(k);
    if (parts_reserve(&f->m, m->count) != 0) {
        k->count--; /* the slot is the newest: give it back */
        return -1;
    }
    for (size_t i = 0; i < m->count; i++) {
        zmq_msg_init(&f->m.part[i]);
        if (zmq_msg_copy(&f->m.part[i], (zmq_msg_t *)&m->part[i]) != 0) {
            zmq_msg_close(&f->m.part[i]);
            f->m.count = i;
            cli_message_release(&f->m);
            k->count--;
            return -1;
        }
    }
    f->m.count = m->count;
    f->seq = seq;
    f->sent_ns = now_ns;
    return 0;
}

int dispatch_kept_move_oldest(dispatch_kept *from, dispatch_kept *to)
{
    dispatch_kept_frame *src = dispatch_kept_oldest(from);
    if (src == NULL)
        return -1;
    dispatch_kept_frame *dst = slot_next(to);
    dispatch_kept_frame empty = *dst; /* its part array, kept for reuse */
    *dst = *src;
    *src = empty;
    src->m.count = 0;
    from->head = (from->head + 1) % from->cap;
    from->count--;
    return 0;
}

size_t dispatch_kept_expire(dispatch_kept *k, uint64_t sent_before_ns)
{
    size_t expired = 0;
    while (k->count > 0 && k->f[k->head].sent_ns < sent_before_ns) {
        dispatch_kept_pop(k);
        expired++;
    }
    return expired;
}
