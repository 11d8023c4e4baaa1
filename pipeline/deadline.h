/*
 * deadline.h - the absolute CLOCK_MONOTONIC time a number of milliseconds
 * from now, as pthread_cond_timedwait takes it on a condition variable made
 * with pthread_condattr_setclock(CLOCK_MONOTONIC) (the queue's, the
 * receive merge's, the metrics thread's): a step of the wall clock neither
 * stretches nor cuts such a wait.
 */
#ifndef EIGSTREAM_DEADLINE_H
#define EIGSTREAM_DEADLINE_H

#include <time.h>

/* ms >= 0 */
static inline struct timespec deadline_after_ms(long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return until;
}

#endif
