/*
 * cli_peer.h - whether a tool's one ZeroMQ socket has a peer: a socket
 * monitor (zmq_socket_monitor) counts the connections made and lost, so that
 * a tool can give up on an endpoint nobody serves after a bounded time,
 * with a message, instead of queueing into nothing or waiting forever.
 *
 *   cli_peer *watch = NULL;
 *   if (cli_peer_create(ctx, sock, &watch) != 0) ...   // before attaching sock
 *   cli_socket_attach(sock, endpoint, bind);
 *   if (cli_peer_wait(watch, 5000) != 0) ...            // nobody there after 5 s
 *   ...
 *   cli_peer_destroy(&watch);                           // before cli_socket_close
 *
 * A peer counts from the TCP/IPC connection (ZMQ_EVENT_CONNECTED on the
 * connecting side, ZMQ_EVENT_ACCEPTED on the binding side) until
 * ZMQ_EVENT_DISCONNECTED. Library eigstream_cli, on the shared connection
 * watcher (connection_watch.h, which the daemon's output uses too); never
 * prints.
 */
#ifndef EIGSTREAM_CLI_PEER_H
#define EIGSTREAM_CLI_PEER_H

#include "connection_watch.h"

typedef connection_watch cli_peer;

/* Starts watching sock (of context ctx); call before binding or connecting
 * it, so that no event is missed. *watch receives the watcher. Returns 0, or
 * -1 with zmq_errno() set (or ENOMEM) and *watch NULL. */
int cli_peer_create(void *ctx, void *sock, cli_peer **watch);

/* Reads the events that have come; returns the peers connected now. */
int cli_peer_count(cli_peer *watch);

/* Seconds (CLOCK_MONOTONIC) for which the socket has had no peer, 0 while it
 * has one; counts from cli_peer_create before the first connection. */
double cli_peer_absent_s(cli_peer *watch);

/* Waits until the socket has a peer, for at most timeout_ms (< 0: no limit),
 * returning early when cli_stop_requested is set. Returns 0 with a peer, -1
 * without one. */
int cli_peer_wait(cli_peer *watch, int timeout_ms);

/* connection_watch_unread: bytes written that the peers have not read. */
long cli_peer_unread(cli_peer *watch);

/* connection_watch_drain until deadline (cli_monotonic_s), returning early
 * (-1) when cli_stop_requested is set: what a sender waits for before it
 * closes, after ZeroMQ has released its last message (connection_watch.h
 * says why). 0 drained, -1 not. */
int cli_peer_drain(cli_peer *watch, double deadline);

/* Stops watching and frees the watcher; *watch is NULL afterwards (NULL is
 * fine). Call before closing the watched socket's context. */
void cli_peer_destroy(cli_peer **watch);

#endif
