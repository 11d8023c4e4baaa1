/*
 * auth_zap.h - who may talk to the daemon's CURVE sockets (security.*):
 * a ZAP handler (ZeroMQ RFC 27, ZAP 1.0) on inproc://zeromq.zap.01 of the
 * daemon's context, in its own thread, that lets in the client keys of the
 * allow-list and nobody else, and a monitor on each secured socket that
 * sees the handshakes the handler never hears of (a plain-text client
 * fails at the mechanism greeting, before ZAP).
 *
 * Every refusal is counted by reason into the caller's counters (the
 * daemon's metrics: Prometheus eigstream_auth_rejected_total{reason} and
 * eigstream_auth_retries_total{reason}), as a refused client when its peer
 * was not refused for that reason on that socket within the last
 * AUTH_PEERS_RETRY_NS (auth_peers.h), else as a retry (a refused libzmq
 * client reconnects every 100 ms: each reconnect is a handshake of its own).
 * The peer is what names the client: for key_not_allowed its key and
 * address (ZAP's request names them); for a handshake that fails before ZAP
 * (plaintext, handshake) the socket alone: libzmq 4.3's monitor names the
 * socket's endpoint, not the peer's, and the fd of its ACCEPTED event is
 * mostly closed already when the monitor is read (measured: a wrong-key
 * client's failure takes about a millisecond from accept to close), so
 * those failures on one socket are one client until 60 s pass without one.
 * Each refusal is logged once:
 *   key_not_allowed  a CURVE client whose key is not listed: once per key
 *                    and address (the first AUTH_ZAP_PEERS_LOGGED peers;
 *                    then at most one line a second)
 *   plaintext        a client without CURVE (NULL or PLAIN): once per
 *                    socket (ZeroMQ's monitor names the socket's endpoint,
 *                    not the peer's address)
 *   handshake        any other failed handshake (a client with the wrong
 *                    server key, a broken greeting, a peer that hangs up
 *                    during the handshake, as a refused client may when it
 *                    reconnects): once per socket
 * A refused client gets nothing: ZeroMQ closes its connection, and it
 * never joins the socket's peers.
 *
 * The daemon's pipeline_sockets.c drives it.
 */
#ifndef EIGSTREAM_AUTH_ZAP_H
#define EIGSTREAM_AUTH_ZAP_H

#include <stdatomic.h>
#include <stdint.h>

#include "auth_peers.h"
#include "connection_watch.h"
#include "curve_keys.h"

#define AUTH_ZAP_PEERS_LOGGED 1024
#define AUTH_ZAP_WATCH_MAX 12 /* the input sockets (up to 8), output, metrics, spare */

typedef struct auth_zap auth_zap;

typedef enum auth_zap_error {
    AUTH_ZAP_OK = 0,
    AUTH_ZAP_EINVAL,  /* more sockets than AUTH_ZAP_WATCH_MAX, or watched after the start */
    AUTH_ZAP_ENOMEM,
    AUTH_ZAP_ESOCKET, /* the handler could not bind, or a socket could not be monitored */
    AUTH_ZAP_ETHREAD  /* the handler's thread could not be started */
} auth_zap_error;

const char *auth_zap_strerror(auth_zap_error e);

/* Why a client was refused (auth_zap_reject_name gives the metrics key). */
typedef enum auth_zap_reject {
    AUTH_ZAP_KEY_NOT_ALLOWED = 0, /* "key_not_allowed": a CURVE key not in security.curve_allow */
    AUTH_ZAP_PLAINTEXT,           /* "plaintext": a client without CURVE */
    AUTH_ZAP_HANDSHAKE,           /* "handshake": any other failed handshake */
    AUTH_ZAP_REJECT_COUNT_
} auth_zap_reject;

/* "key_not_allowed", "plaintext", "handshake"; "unknown" for a bad value. */
const char *auth_zap_reject_name(auth_zap_reject r);

/* The refusals, by reason: rejected + retries = failed handshakes. */
typedef struct auth_zap_counts {
    _Atomic uint64_t rejected[AUTH_ZAP_REJECT_COUNT_]; /* refused clients: a peer's first refusal in the window */
    _Atomic uint64_t retries[AUTH_ZAP_REJECT_COUNT_];  /* refusals of a peer refused within the window: reconnects */
} auth_zap_counts;

/* Binds the handler's socket in the ZeroMQ context ctx (before any secured
 * socket binds, so that no handshake finds no handler). Takes the list:
 * *allow is emptied. Counts each refusal into *counts (relaxed atomics; the
 * caller's counts outlive the handler). */
auth_zap_error auth_zap_create(auth_zap **out, void *ctx, curve_allow_list *allow, auth_zap_counts *counts,
                               char *err, size_t err_bytes);
/* Monitors socket's failed handshakes; role names it in the log ("input").
 * The socket's ZMQ_ZAP_DOMAIN must be role, so that ZAP's refusals are told
 * apart by socket. Before auth_zap_start, at most AUTH_ZAP_WATCH_MAX sockets.
 * connections (a connection_watch_create_fed watcher, or NULL) is fed the
 * socket's connection events from the handler's thread: the socket's one
 * monitor is this. */
auth_zap_error auth_zap_watch(auth_zap *a, void *socket, const char *role, connection_watch *connections,
                              char *err, size_t err_bytes);
/* Starts the thread; from here on the handler's sockets are the thread's. */
auth_zap_error auth_zap_start(auth_zap *a, char *err, size_t err_bytes);
/* Stops and joins the thread and closes its sockets (before the context is
 * terminated); NULL is a no-op; *a <- NULL. */
void auth_zap_destroy(auth_zap **a);

#endif
