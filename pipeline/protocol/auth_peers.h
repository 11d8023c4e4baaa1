/*
 * auth_peers.h - which peers the CURVE sockets refused lately, so that a
 * client's reconnects are told from new clients (auth_zap.c).
 *
 * A peer is a 64-bit identity made by the caller (auth_peer_id: FNV-1a over
 * the socket, the reason and what names the client: its key and address
 * for ZAP; nothing more where libzmq names no peer). A refusal of an
 * identity last refused less than AUTH_PEERS_RETRY_NS ago is a retry; any
 * other is a new refused client. The table holds AUTH_PEERS_MAX identities;
 * when every one was refused within the window, a further identity is
 * counted as new (a refusal is never hidden as a retry for want of room).
 *
 * Not thread-safe: the ZAP thread owns it. No allocation.
 */
#ifndef EIGSTREAM_AUTH_PEERS_H
#define EIGSTREAM_AUTH_PEERS_H

#include <stddef.h>
#include <stdint.h>

#define AUTH_PEERS_MAX 1024
#define AUTH_PEERS_RETRY_NS (60ull * 1000000000ull) /* longer than libzmq's reconnect interval, 0.1 s */

typedef struct auth_peers {
    uint64_t id[AUTH_PEERS_MAX];
    uint64_t last_ns[AUTH_PEERS_MAX]; /* monotonic time of the identity's last refusal */
    size_t count;
} auth_peers;

/* FNV-1a of bytes [0, n) continued from h (start with AUTH_PEER_ID_SEED). */
#define AUTH_PEER_ID_SEED 14695981039346656037ull
uint64_t auth_peer_id(uint64_t h, const void *bytes, size_t n);

/* Records a refusal of id at now_ns (monotonic): 1 when it is a retry (id
 * refused within AUTH_PEERS_RETRY_NS before), 0 when a new client. */
int auth_peers_refused(auth_peers *t, uint64_t id, uint64_t now_ns);

#endif
