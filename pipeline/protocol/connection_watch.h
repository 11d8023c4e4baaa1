/*
 * connection_watch.h - a ZeroMQ socket's connections, watched through a
 * socket monitor (zmq_socket_monitor): how many there are now, since when
 * there have been none, and how many bytes written to them the peers have
 * not read yet, so that a sender can wait for its receivers before it
 * closes. The daemon's output and the tools' senders (tools/cli/cli_peer.h)
 * use it.
 *
 *   connection_watch *w = NULL;
 *   if (connection_watch_create(ctx, sock, &w) != 0) ...  // before bind/connect
 *   ... send ...
 *   if (connection_watch_drain(w, deadline_ns, NULL) != 0) ... // unread at the deadline
 *   connection_watch_destroy(&w);                         // before closing ctx
 *
 * Why drain: libzmq 4.3 drops what a receiver has not read yet when the
 * sender closes an IPC connection while the receiver is at its high-water
 * mark (the hang-up reaches the receiver before the data). Measured: 24
 * messages to a PULL at ZMQ_RCVHWM 1 reading 5 a second arrived 17 when the
 * sender closed once ZeroMQ had released them all, 24 when it first waited
 * for its kernel send queue to empty. Over TCP the same wait covers the
 * bytes not yet acknowledged.
 *
 * libzmq 4.3 gives a socket one monitor: a socket whose handshakes are
 * counted (auth_zap_watch, under CURVE) has the handshake counter's, which
 * feeds a watcher made with connection_watch_create_fed instead.
 *
 * A connection counts from ZMQ_EVENT_CONNECTED (connecting side) or
 * ZMQ_EVENT_ACCEPTED (binding side) until ZMQ_EVENT_DISCONNECTED; their
 * value is the connection's descriptor, which is only queried (ioctl
 * SIOCOUTQ), never touched otherwise. The queries are for one thread at a
 * time; a fed watcher's feeder may be another.
 */
#ifndef EIGSTREAM_CONNECTION_WATCH_H
#define EIGSTREAM_CONNECTION_WATCH_H

#include <signal.h>
#include <stdint.h>

typedef struct connection_watch connection_watch;

/* Starts watching sock (of context ctx); call before binding or connecting
 * it, so that no event is missed. Returns 0, or -1 with errno set (ENOMEM or
 * ZeroMQ's) and *w NULL. */
int connection_watch_create(void *ctx, void *sock, connection_watch **w);

/* A watcher without a monitor of its own: whoever monitors the socket calls
 * connection_watch_feed with each event (from any one thread; the queries
 * may come from another). Returns 0, or -1 (ENOMEM) and *w NULL. */
int connection_watch_create_fed(connection_watch **w);

/* Whether a monitor event (its u16 id) is one a watcher takes. */
int connection_watch_is_event(uint16_t event);

/* One monitor event (id and value); those not connection_watch_is_event are
 * ignored. */
void connection_watch_feed(connection_watch *w, uint16_t event, uint32_t value);

/* Reads the events that have come; returns the connections now. */
int connection_watch_count(connection_watch *w);

/* CLOCK_MONOTONIC ns since which the socket has had no connection (since
 * connection_watch_create before the first); 0 while it has one. */
uint64_t connection_watch_absent_since_ns(connection_watch *w);

/* Bytes written to the connections that their peers have not read yet: the
 * sum of the kernel send queues (ioctl SIOCOUTQ: for IPC the bytes the
 * receiving process has not read, for TCP those not yet acknowledged). */
long connection_watch_unread(connection_watch *w);

/* Waits until connection_watch_unread is 0 (seen twice, 10 ms apart: ZeroMQ's
 * I/O thread writes what it still holds as soon as the queue has room),
 * until deadline_ns (CLOCK_MONOTONIC), or until *stop (NULL: never) is set.
 * 0 drained, -1 not. */
int connection_watch_drain(connection_watch *w, uint64_t deadline_ns, const volatile sig_atomic_t *stop);

/* Stops watching and frees the watcher; *w is NULL afterwards (NULL is
 * fine). A watcher with its own monitor: call before closing the watched
 * socket. A fed one: after its feeder has stopped (auth_zap_destroy). */
void connection_watch_destroy(connection_watch **w);

#endif
