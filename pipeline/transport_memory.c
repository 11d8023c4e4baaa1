/*
 * transport_memory.c - the allocator settings for large ZeroMQ messages
 * (transport_memory.h).
 */
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "transport_memory.h"

void transport_tune_allocator(void)
{
#ifdef __GLIBC__
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}
