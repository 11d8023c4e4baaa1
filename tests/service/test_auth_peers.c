/*
 * test_auth_peers.c - a refused client's reconnects told from new clients
 * (pipeline/protocol/auth_peers.c, issue 26): the window, a peer that comes
 * back after it, and a full table, on a clock the test sets.
 *
 *   test_auth_peers
 */
#include <stdint.h>

#include "auth_peers.h"
#include "test_check.h"

#define S 1000000000ull /* ns */

static auth_peers table; /* 16 KiB: not on the stack */

/* One peer: new, retries within the window (the last refusal restarts it),
 * new again once a whole window passed since its last refusal. */
static void test_window(void)
{
    table.count = 0;
    uint64_t a = auth_peer_id(AUTH_PEER_ID_SEED, "a", 1), b = auth_peer_id(AUTH_PEER_ID_SEED, "b", 1);
    CHECK(a != b, "two names, one identity");
    CHECK(auth_peers_refused(&table, a, 100 * S) == 0, "first refusal of a: a retry");
    int retries = 0;
    for (uint64_t t = 1; t <= 150; t++) /* every 0.1 s for 15 s, libzmq's reconnects */
        retries += auth_peers_refused(&table, a, 100 * S + t * S / 10);
    CHECK(retries == 150, "%d retries of 150 reconnects in 15 s", retries);
    CHECK(auth_peers_refused(&table, b, 115 * S) == 0, "another peer counted as a's retry");
    CHECK(auth_peers_refused(&table, a, 115 * S + 60 * S - 1) == 1, "a, 1 ns inside the window: not a retry");
    CHECK(auth_peers_refused(&table, a, 115 * S + 60 * S - 1 + 60 * S) == 0, "a, a window later: a retry");
    CHECK(table.count == 2, "%zu identities held, want 2", table.count);
}

/* A full table: a further peer is new every time while every slot is
 * within the window (never hidden as a retry), then takes the stalest slot. */
static void test_full(void)
{
    table.count = 0;
    for (uint64_t i = 0; i < AUTH_PEERS_MAX; i++)
        CHECK(auth_peers_refused(&table, auth_peer_id(AUTH_PEER_ID_SEED, &i, sizeof i), i * S / 1000) == 0,
              "peer %llu: a retry", (unsigned long long)i);
    uint64_t extra = auth_peer_id(AUTH_PEER_ID_SEED, "extra", 5);
    CHECK(auth_peers_refused(&table, extra, 2 * S) == 0, "the extra peer: a retry");
    CHECK(auth_peers_refused(&table, extra, 3 * S) == 0, "the extra peer without room: counted as a retry");
    CHECK(table.count == AUTH_PEERS_MAX, "%zu identities, want %d", table.count, AUTH_PEERS_MAX);
    /* At 60.0005 s peer 0 (refused at 0) is past the window, peer 1 (at 0.001 s) not. */
    CHECK(auth_peers_refused(&table, extra, 60 * S + S / 2000) == 0, "the extra peer: a retry");
    CHECK(auth_peers_refused(&table, extra, 61 * S) == 1, "the extra peer in peer 0's slot: not a retry");
    uint64_t zero = 0, one = 1;
    CHECK(auth_peers_refused(&table, auth_peer_id(AUTH_PEER_ID_SEED, &one, sizeof one), 61 * S) == 0,
          "peer 1, past its window: a retry");
    CHECK(auth_peers_refused(&table, auth_peer_id(AUTH_PEER_ID_SEED, &zero, sizeof zero), 61 * S) == 0,
          "peer 0, evicted: a retry");
}

int main(void)
{
    test_window();
    test_full();
    return test_check_report("test_auth_peers");
}
