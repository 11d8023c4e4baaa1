/*
 * pool.c - buffer pool: a free list (bounded queue) holding every item.
 */
#include "pool.h"

#include <stdlib.h>

pool_status pool_init(pool *p, size_t capacity)
{
    p->items = calloc(capacity ? capacity : 1, sizeof *p->items);
    if (p->items == NULL)
        return POOL_ENOMEM;
    if (queue_init(&p->free_list, capacity) != QUEUE_OK) {
        free(p->items);
        p->items = NULL;
        return POOL_ENOMEM;
    }
    p->count = 0;
    p->capacity = capacity;
    return POOL_OK;
}

pool_status pool_add(pool *p, void *item)
{
    if (p->count == p->capacity)
        return POOL_EFULL;
    p->items[p->count++] = item;
    /* The free list has room for every item, so this never blocks. */
    queue_push(&p->free_list, item);
    return POOL_OK;
}

pool_status pool_get(pool *p, void **item)
{
    return queue_pop(&p->free_list, item) == QUEUE_OK ? POOL_OK : POOL_CLOSED;
}

pool_status pool_get_timed(pool *p, void **item, int timeout_ms)
{
    switch (queue_pop_timed(&p->free_list, item, timeout_ms)) {
    case QUEUE_OK: return POOL_OK;
    case QUEUE_TIMEOUT: return POOL_TIMEOUT;
    default: return POOL_CLOSED;
    }
}

void pool_put(pool *p, void *item)
{
    queue_push(&p->free_list, item);
}

size_t pool_available(pool *p)
{
    return queue_depth(&p->free_list);
}

void pool_destroy(pool *p, void (*release)(void *item, void *ctx), void *ctx)
{
    if (p->items == NULL)
        return;
    if (release != NULL)
        for (size_t i = 0; i < p->count; i++)
            release(p->items[i], ctx);
    queue_destroy(&p->free_list);
    free(p->items);
    p->items = NULL;
    p->count = 0;
}
