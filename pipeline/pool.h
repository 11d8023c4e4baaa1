/*
 * pool.h - a fixed set of preallocated buffers handed out and returned.
 *
 * Every frame buffer (and every output buffer) the daemon will ever use is
 * added to a pool at pipeline_create; steady state allocates nothing. Get
 * blocks while every buffer is out; put never blocks (the free list can hold
 * them all) and may be called from any thread, including ZeroMQ's I/O thread
 * in a zero-copy release callback.
 */
#ifndef EIGSTREAM_POOL_H
#define EIGSTREAM_POOL_H

#include <stddef.h>

#include "queue.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pool {
    queue free_list;
    void **items; /* all items ever added, for destruction */
    size_t count;
    size_t capacity;
} pool;

typedef enum pool_status { POOL_OK = 0, POOL_ENOMEM, POOL_EFULL, POOL_TIMEOUT, POOL_CLOSED } pool_status;

pool_status pool_init(pool *p, size_t capacity);
/* Adds a new item (free); POOL_EFULL beyond the capacity. The pool does not
 * own the item's memory: pool_destroy hands each one to release. */
pool_status pool_add(pool *p, void *item);
pool_status pool_get(pool *p, void **item);
pool_status pool_get_timed(pool *p, void **item, int timeout_ms);
void pool_put(pool *p, void *item);
size_t pool_available(pool *p);
/* Calls release(item, ctx) on every item added, then frees the pool's lists. */
void pool_destroy(pool *p, void (*release)(void *item, void *ctx), void *ctx);

#ifdef __cplusplus
}
#endif

#endif
