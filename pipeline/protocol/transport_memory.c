/*
 * transport_memory.c - the allocator settings for large ZeroMQ messages
 * (transport_memory.h).
 */
#include "transport_memory.h"

/* Any C library header first: it is what defines __GLIBC__ (through
 * <features.h>). Tested before one was included, the macro was undefined
 * and this function compiled to nothing (found by a fault count: every
 * received 47 MB part was mapped afresh; test_transport_memory guards it). */
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int transport_tune_allocator(void)
{
#ifdef __GLIBC__
    int ok = mallopt(M_ARENA_MAX, 1) == 1;
    ok &= mallopt(M_MMAP_MAX, 0) == 1;
    ok &= mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024) == 1;
    return ok ? 0 : -1;
#else
    return -1;
#endif
}

int transport_return_memory(void)
{
#ifdef __GLIBC__
    (void)malloc_trim(0);
    return 0;
#else
    return -1;
#endif
}
