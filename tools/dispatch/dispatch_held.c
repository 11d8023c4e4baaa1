/*
 * dispatch_held.c - eigstream-dispatch's held queue: the frames waiting for
 * credit, each a whole frame or the fragments of one frame (dispatch.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "dispatch.h"

int dispatch_held_init(dispatch_held *q, size_t frames)
{
    memset(q, 0, sizeof *q);
    q->f = calloc(frames, sizeof *q->f);
    q->cap = frames;
    return q->f != NULL ? 0 : -1;
}

void dispatch_held_free(dispatch_held *q)
{
    for (size_t i = 0; q->f != NULL && i < q->cap; i++) {
        for (size_t j = 0; j < q->f[i].cap; j++)
            cli_message_free(&q->f[i].m[j]);
        free(q->f[i].m);
    }
    free(q->f);
    memset(q, 0, sizeof *q);
}

/* Moves *m into slot f's next message by swapping: the slot's empty message
 * (with whatever part array it kept) becomes *m. 0, or -1 when out of memory. */
static int frame_take(dispatch_held_frame *f, cli_message *m)
{
    cli_message *grown = cli_array_grow(f->m, f->count, &f->cap, sizeof *grown, 1);
    if (grown == NULL)
        return -1;
    f->m = grown;
    cli_message empty = f->m[f->count];
    f->m[f->count++] = *m;
    *m = empty;
    return 0;
}

int dispatch_held_push(dispatch_held *q, cli_message *m, uint64_t seq, int fragmented)
{
    dispatch_held_frame *f = &q->f[(q->head + q->count) % q->cap];
    if (frame_take(f, m) != 0)
        return -1;
    f->seq = seq;
    f->fragmented = fragmented;
    q->count++;
    q->messages++;
    return 0;
}

int dispatch_held_append(dispatch_held *q, cli_message *m)
{
    if (frame_take(dispatch_held_tail(q), m) != 0)
        return -1;
    q->messages++;
    return 0;
}

dispatch_held_frame *dispatch_held_head(dispatch_held *q)
{
    return q->count > 0 ? &q->f[q->head] : NULL;
}

dispatch_held_frame *dispatch_held_tail(dispatch_held *q)
{
    return q->count > 0 ? &q->f[(q->head + q->count - 1) % q->cap] : NULL;
}

/* Closes f's parts and empties it (the arrays stay); its message count. */
static size_t frame_release(dispatch_held_frame *f)
{
    size_t messages = f->count;
    for (size_t j = 0; j < f->count; j++)
        cli_message_release(&f->m[j]);
    f->count = 0;
    return messages;
}

size_t dispatch_held_pop(dispatch_held *q)
{
    if (q->count == 0)
        return 0;
    size_t messages = frame_release(&q->f[q->head]);
    q->head = (q->head + 1) % q->cap;
    q->count--;
    q->messages -= messages;
    return messages;
}

size_t dispatch_held_pop_tail(dispatch_held *q)
{
    if (q->count == 0)
        return 0;
    size_t messages = frame_release(dispatch_held_tail(q));
    q->count--;
    q->messages -= messages;
    return messages;
}
