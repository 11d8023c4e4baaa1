/*
 * cli_peer.c - whether a tool's socket has a peer, and the wait for its
 * receivers at exit (cli_peer.h), on the shared connection watcher
 * (pipeline/protocol/connection_watch.h) with the tools' stop flag.
 */
#include <stdint.h>
#include <time.h>
#include <zmq.h>

#include "cli_common.h"
#include "cli_peer.h"

int cli_peer_create(void *ctx, void *sock, cli_peer **watch)
{
    return connection_watch_create(ctx, sock, watch);
}

int cli_peer_count(cli_peer *watch)
{
    return connection_watch_count(watch);
}

double cli_peer_absent_s(cli_peer *watch)
{
    uint64_t since = connection_watch_absent_since_ns(watch);
    return since == 0 ? 0.0 : cli_monotonic_s() - (double)since / 1e9;
}

int cli_peer_wait(cli_peer *watch, int timeout_ms)
{
    double end = cli_monotonic_s() + timeout_ms / 1e3;
    while (cli_peer_count(watch) == 0) {
        double left = end - cli_monotonic_s();
        if (cli_stop_requested || (timeout_ms >= 0 && left <= 0))
            return -1;
        /* the monitor's events wake nobody here: look again every 10 ms */
        struct timespec ten = {0, 10000000L};
        nanosleep(&ten, NULL);
    }
    return 0;
}

long cli_peer_unread(cli_peer *watch)
{
    return connection_watch_unread(watch);
}

int cli_peer_drain(cli_peer *watch, double deadline)
{
    double left = deadline - cli_monotonic_s();
    uint64_t now = (uint64_t)(cli_monotonic_s() * 1e9);
    return connection_watch_drain(watch, now + (uint64_t)(left > 0 ? left * 1e9 : 0), &cli_stop_requested);
}

void cli_peer_destroy(cli_peer **watch)
{
    connection_watch_destroy(watch);
}
