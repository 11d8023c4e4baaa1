/*
 * queue.c - bounded pointer FIFO on a mutex and two condition variables.
 */
#include "queue.h"

#include "deadline.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

queue_status queue_init(queue *q, size_t capacity)
{
    pthread_condattr_t attr;
    q->ring = calloc(capacity ? capacity : 1, sizeof *q->ring);
    if (q->ring == NULL)
        return QUEUE_ENOMEM;
    q->capacity = capacity ? capacity : 1;
    q->head = 0;
    q->count = 0;
    q->closed = 0;
    pthread_mutex_init(&q->lock, NULL);
    /* Timed waits use CLOCK_MONOTONIC so that wall-clock steps do not stall them. */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->not_empty, &attr);
    pthread_cond_init(&q->not_full, &attr);
    pthread_condattr_destroy(&attr);
    return QUEUE_OK;
}

void queue_destroy(queue *q)
{
    if (q->ring == NULL)
        return;
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
    q->ring = NULL;
}

static void append_locked(queue *q, void *item)
{
    q->ring[(q->head + q->count) % q->capacity] = item;
    q->count++;
    pthread_cond_signal(&q->not_empty);
}

static void *remove_oldest_locked(queue *q)
{
    void *item = q->ring[q->head];
    q->head = (q->head + 1) % q->capacity;
    q->count--;
    pthread_cond_signal(&q->not_full);
    return item;
}

queue_status queue_push(queue *q, void *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == q->capacity && !q->closed)
        pthread_cond_wait(&q->not_full, &q->lock);
    if (q->closed) {
        pthread_mutex_unlock(&q->lock);
        return QUEUE_CLOSED;
    }
    append_locked(q, item);
    pthread_mutex_unlock(&q->lock);
    return QUEUE_OK;
}

queue_status queue_try_push(queue *q, void *item)
{
    queue_status s = QUEUE_OK;
    pthread_mutex_lock(&q->lock);
    if (q->closed)
        s = QUEUE_CLOSED;
    else if (q->count == q->capacity)
        s = QUEUE_TIMEOUT;
    else
        append_locked(q, item);
    pthread_mutex_unlock(&q->lock);
    return s;
}

queue_status queue_push_evict_oldest(queue *q, void *item, void **evicted)
{
    *evicted = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->closed) {
        pthread_mutex_unlock(&q->lock);
        return QUEUE_CLOSED;
    }
    if (q->count == q->capacity)
        *evicted = remove_oldest_locked(q);
    append_locked(q, item);
    pthread_mutex_unlock(&q->lock);
    return QUEUE_OK;
}

queue_status queue_pop(queue *q, void **item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->lock);
    if (q->count == 0) {
        pthread_mutex_unlock(&q->lock);
        return QUEUE_CLOSED;
    }
    *item = remove_oldest_locked(q);
    pthread_mutex_unlock(&q->lock);
    return QUEUE_OK;
}

queue_status queue_pop_timed(queue *q, void **item, int timeout_ms)
{
    const struct timespec until = deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed) {
        if (pthread_cond_timedwait(&q->not_empty, &q->lock, &until) == ETIMEDOUT && q->count == 0) {
            pthread_mutex_unlock(&q->lock);
            return q->closed ? QUEUE_CLOSED : QUEUE_TIMEOUT;
        }
    }
    if (q->count == 0) {
        pthread_mutex_unlock(&q->lock);
        return QUEUE_CLOSED;
    }
    *item = remove_oldest_locked(q);
    pthread_mutex_unlock(&q->lock);
    return QUEUE_OK;
}

queue_status queue_try_pop(queue *q, void **item)
{
    queue_status s = QUEUE_TIMEOUT;
    pthread_mutex_lock(&q->lock);
    if (q->count > 0) {
        *item = remove_oldest_locked(q);
        s = QUEUE_OK;
    }
    pthread_mutex_unlock(&q->lock);
    return s;
}

void queue_close(queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->lock);
}

size_t queue_depth(queue *q)
{
    pthread_mutex_lock(&q->lock);
    size_t n = q->count;
    pthread_mutex_unlock(&q->lock);
    return n;
}
