/*
 * dispatch_client.h - the daemon's side of eigstream-dispatch
 * (input.pattern = dispatch): credit and heartbeats over the input DEALER
 * socket, which the receive thread alone uses.
 *
 * Credit is the daemon's real free capacity: the free slots of its receive
 * queue (the form stage's input) minus the frames already credited but not
 * yet received. A slow daemon's queue stays full, so it returns credit
 * slowly and the dispatcher sends it fewer frames; the queue never
 * overflows, so the overflow policy never has to drop a dispatched frame.
 * Heartbeats follow zguide's Paranoid Pirate: each side sends one per
 * interval when it has sent nothing else, and declares the other dead after
 * `liveness` silent intervals. A silent dispatcher is offered READY again
 * (the dispatcher may have restarted; ZeroMQ reconnects the socket).
 *
 *     dispatch_client *c = NULL;
 *     dispatch_client_create(socket, 1000, 3, &c);
 *     loop: dispatch_client_tick(c, free_slots, now_ns);          // sends READY, CREDIT, HEARTBEAT
 *           message's first part: if (dispatch_client_take(c, data, bytes, more, now_ns)) skip it;
 *     dispatch_client_goodbye(c);          // then take() until dispatch_client_drained(c) or drain_ns
 *     dispatch_client_destroy(&c);
 *
 * Not thread-safe: the thread that owns the socket calls everything.
 * Logs through log.h; never aborts or exits.
 */
#ifndef EIGSTREAM_DISPATCH_CLIENT_H
#define EIGSTREAM_DISPATCH_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch_control.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How long the receive thread waits on its socket in dispatch mode: freed
 * slots are returned as credit at most this late. */
#define DISPATCH_CLIENT_POLL_MS 5

typedef struct dispatch_client dispatch_client;

typedef enum dispatch_client_error {
    DISPATCH_CLIENT_OK = 0,
    DISPATCH_CLIENT_EINVAL, /* NULL socket, interval or liveness below 1 */
    DISPATCH_CLIENT_ENOMEM
} dispatch_client_error;

/* A client on socket (a DEALER connected to the dispatcher's back end; the
 * caller keeps owning it) with its heartbeat interval (ms) and liveness
 * (intervals of silence before the dispatcher counts as gone). *out is NULL
 * on error. */
dispatch_client_error dispatch_client_create(void *socket, int heartbeat_ms, int liveness, dispatch_client **out);

/* A daemon of `sockets` DEALERs (input.io_threads) shares its free slots
 * out: client k's share is (free_slots + (k + turn) mod sockets) / sockets.
 * The shares add up to free_slots, and the slots of the remainder turn with
 * `turn` (the caller's count of frames received): with one slot free at a
 * time, the clients get it in turn, not always the last one. */
size_t dispatch_client_share(size_t free_slots, int k, int sockets, uint64_t turn);

/* Sends what is due at now_ns (CLOCK_MONOTONIC): READY when the dispatcher
 * is not (or no longer) known to listen, else CREDIT for free_slots minus
 * the credit outstanding, else a HEARTBEAT once per interval of silence.
 * Sends never block: a message ZeroMQ refuses is tried again next tick. */
void dispatch_client_tick(dispatch_client *c, size_t free_slots, uint64_t now_ns);

/* Looks at a message's first part: a one-part control message (HEARTBEAT or
 * GOODBYE from the dispatcher) is consumed and 1 returned; a malformed one
 * is logged, consumed and 1 returned too. Anything else is a frame, which
 * uses one credit: 0 is returned and the caller receives it as a frame. */
int dispatch_client_take(dispatch_client *c, const void *part, size_t part_bytes, int more, uint64_t now_ns);

/* Tells the dispatcher to send nothing more (GOODBYE), without blocking.
 * The dispatcher answers GOODBYE behind the last frame it sent us: keep
 * receiving (dispatch_client_take) until dispatch_client_drained says so,
 * for at most dispatch_client_drain_ns, and a stop loses no frame. */
void dispatch_client_goodbye(dispatch_client *c);

/* 1 once nothing more can come: the dispatcher answered our GOODBYE, or it
 * was never told (it was not listening, or the GOODBYE could not be sent). */
int dispatch_client_drained(const dispatch_client *c);

/* How long to wait for that answer at the most: liveness x the interval. */
uint64_t dispatch_client_drain_ns(const dispatch_client *c);

/* Frees *c (not the socket) and sets *c to NULL; NULL is fine. */
void dispatch_client_destroy(dispatch_client **c);

#ifdef __cplusplus
}
#endif

#endif
