/*
 * transport_memory.h - how a process that receives large ZeroMQ messages
 * should have its C library allocate them: the daemon, the bench and every
 * tool that takes frames (sink, merge, dispatch, record) call it first.
 */
#ifndef EIGSTREAM_TRANSPORT_MEMORY_H
#define EIGSTREAM_TRANSPORT_MEMORY_H

/* Process-wide (glibc's mallopt; nothing elsewhere): ZeroMQ allocates every
 * message part it receives and the receiver frees it once used, ~47 MB a
 * frame at the defaults. glibc would map each part of 128 kB or more afresh
 * and unmap it at free: page faults on every byte and TLB shootdowns, which
 * serialize on the process's memory map with every other thread's. Measured
 * on an H100 host (eigstream-bench pipeline, 180 x 128 complex double, full
 * mode, tcp), a 47 MB part took 34 ms to arrive this way and 12 ms from a
 * reused heap, and the daemon sustained 28 frames/s against 60. So: one
 * arena, no mapped chunks, no trimming. The heap then
 * keeps its peak, the frames in flight, which the queues and high-water
 * marks bound (the soak test watches its floor). Any other process (a Python
 * consumer) gets the same from the environment:
 * GLIBC_TUNABLES=glibc.malloc.arena_max=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1073741824
 * Call it first in main, before any thread starts: glibc fixes its arena
 * limit when a thread first allocates, so a later call still stops the
 * mapping but not the extra arenas. Idempotent. Returns 0, or -1 where the
 * allocator is not glibc's (or a sanitizer's replaces it): large parts are
 * then mapped afresh, slower but correct. */
int transport_tune_allocator(void);

/* Gives the heap's free memory back to the system (glibc's malloc_trim):
 * for a receiver that has just thrown away a message far larger than the
 * frames it keeps (an oversized one a peer sent), so that its peak does not
 * stay resident under the settings above. Costs a walk of the heap: call it
 * only then, never per frame. 0, or -1 where the allocator is not glibc's. */
int transport_return_memory(void);

#endif
