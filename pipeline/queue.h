/*
 * queue.h - bounded FIFO of pointers between two stage threads.
 *
 * Capacity is fixed at creation (the ring is allocated once); push blocks
 * while full, pop blocks while empty. Closing wakes everybody: push then
 * fails, pop drains what is left and then reports QUEUE_CLOSED, which is how
 * a stage learns that its upstream has finished (shutdown drains in order).
 * Ownership of an item moves with it: push takes it, pop hands it out.
 */
#ifndef EIGSTREAM_QUEUE_H
#define EIGSTREAM_QUEUE_H

#include <pthread.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum queue_status {
    QUEUE_OK = 0,
    QUEUE_CLOSED,  /* push: the queue is closed; pop: closed and empty */
    QUEUE_TIMEOUT, /* pop_timed: nothing arrived in time */
    QUEUE_ENOMEM
} queue_status;

typedef struct queue {
    pthread_mutex_t lock;
    pthread_cond_t not_empty;
    pthread_cond_t not_full;
    void **ring;
    size_t capacity;
    size_t head; /* index of the oldest item */
    size_t count;
    int closed;
} queue;

queue_status queue_init(queue *q, size_t capacity);
void queue_destroy(queue *q);

/* Blocks while full; QUEUE_CLOSED (item not taken) when the queue is closed. */
queue_status queue_push(queue *q, void *item);

/* Never blocks: QUEUE_TIMEOUT (item not taken) when full. */
queue_status queue_try_push(queue *q, void *item);

/* Never blocks: when full, the oldest item is removed and handed back in
 * *evicted (NULL when nothing was evicted) before item is appended. */
queue_status queue_push_evict_oldest(queue *q, void *item, void **evicted);

/* Blocks until an item is available (QUEUE_OK) or the queue is closed and
 * empty (QUEUE_CLOSED). */
queue_status queue_pop(queue *q, void **item);

/* As queue_pop, but gives up after timeout_ms (QUEUE_TIMEOUT). */
queue_status queue_pop_timed(queue *q, void **item, int timeout_ms);

/* Non-blocking pop of the oldest item: QUEUE_OK or QUEUE_TIMEOUT when empty. */
queue_status queue_try_pop(queue *q, void **item);

void queue_close(queue *q);
size_t queue_depth(queue *q);

#ifdef __cplusplus
}
#endif

#endif
