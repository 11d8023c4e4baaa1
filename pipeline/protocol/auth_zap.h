/*
 * auth_zap.h - who may talk to the daemon's CURVE sockets (security.*):
 * a ZAP handler (ZeroMQ RFC 27, ZAP 1.0) on inproc://zeromq.zap.01 of the
 * daemon's context, in its own thread, that lets in the client keys of the
 * allow-list and nobody else, and a monitor on each secured socket that
 * sees the handshakes the handler never hears of (a plain-text client
 * fails at the mechanism greeting, before ZAP).
 *
 * Every refusal is counted (metrics: auth_rejected by reason, Prometheus
 * eigstream_auth_rejected_total{reason}) and logged once:
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
 * Internal to pipeline/ (pipeline_sockets.c drives it).
 */
#ifndef EIGSTREAM_AUTH_ZAP_H
#define EIGSTREAM_AUTH_ZAP_H

#include "curve_keys.h"
#include "metrics.h"
#include "pipeline.h"

#define AUTH_ZAP_PEERS_LOGGED 1024
#define AUTH_ZAP_WATCH_MAX 12 /* the input sockets (up to 8), output, metrics, spare */

typedef struct auth_zap auth_zap;

/* Binds the handler's socket in the ZeroMQ context ctx (before any secured
 * socket binds, so that no handshake finds no handler). Takes the list:
 * *allow is emptied. Counts into stats. */
pipeline_error auth_zap_create(auth_zap **out, void *ctx, curve_allow_list *allow, metrics *stats, char *err,
                               size_t err_bytes);
/* Monitors socket's failed handshakes; role names it in the log ("input").
 * Before auth_zap_start, at most AUTH_ZAP_WATCH_MAX sockets. */
pipeline_error auth_zap_watch(auth_zap *a, void *socket, const char *role, char *err, size_t err_bytes);
/* Starts the thread; from here on the handler's sockets are the thread's. */
pipeline_error auth_zap_start(auth_zap *a, char *err, size_t err_bytes);
/* Stops and joins the thread and closes its sockets (before the context is
 * terminated); NULL is a no-op; *a <- NULL. */
void auth_zap_destroy(auth_zap **a);

#endif
