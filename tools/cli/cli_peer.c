/*
 * cli_peer.c - a socket monitor's events reduced to "has a peer" (cli_peer.h).
 *
 * zmq_socket_monitor publishes each event as a two-part message on an inproc
 * PAIR: a 6-byte part (u16 event, u32 value, host byte order) and the
 * endpoint. Only the connection events matter here; the retries of a
 * connect to nobody (CONNECT_DELAYED, CONNECT_RETRIED) leave the count at 0.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <zmq.h>

#include "cli_common.h"
#include "cli_peer.h"

/* Connections whose send queues cli_peer_drain watches; a socket with more
 * is drained only on its first this many. */
#define PEER_FDS_MAX 64

struct cli_peer {
    void *sock;    /* the watched socket (not owned) */
    void *monitor; /* our PAIR end of the monitor */
    int peers;
    double absent_since; /* when peers last became 0 */
    int fds;
    int fd[PEER_FDS_MAX]; /* the connections' descriptors (ZeroMQ's; only queried) */
};

int cli_peer_create(void *ctx, void *sock, cli_peer **watch)
{
    char address[64];
    *watch = NULL;
    cli_peer *w = calloc(1, sizeof *w);
    if (w == NULL) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(address, sizeof address, "inproc://cli-peer-%p", (void *)sock);
    w->sock = sock;
    w->absent_since = cli_monotonic_s();
    int events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED;
    if (zmq_socket_monitor(sock, address, events) != 0 || (w->monitor = zmq_socket(ctx, ZMQ_PAIR)) == NULL ||
        zmq_connect(w->monitor, address) != 0) {
        int error = zmq_errno();
        if (w->monitor != NULL)
            zmq_close(w->monitor);
        zmq_socket_monitor(sock, NULL, 0);
        free(w);
        errno = error;
        return -1;
    }
    int linger = 0;
    zmq_setsockopt(w->monitor, ZMQ_LINGER, &linger, sizeof linger);
    *watch = w;
    return 0;
}

/* Reads one pending event without blocking; 1 read, 0 none. */
static int peer_read_event(cli_peer *w)
{
    uint8_t head[6];
    char endpoint[256];
    int bytes = zmq_recv(w->monitor, head, sizeof head, ZMQ_DONTWAIT);
    if (bytes < 0)
        return 0;
    int more = 0;
    size_t more_bytes = sizeof more;
    while (zmq_getsockopt(w->monitor, ZMQ_RCVMORE, &more, &more_bytes) == 0 && more)
        zmq_recv(w->monitor, endpoint, sizeof endpoint, 0); /* the endpoint: not needed */
    if (bytes < 2)
        return 1;
    uint16_t event;
    uint32_t fd = UINT32_MAX;
    memcpy(&event, head, sizeof event);
    if (bytes >= 6)
        memcpy(&fd, head + 2, sizeof fd);
    if (event == ZMQ_EVENT_CONNECTED || event == ZMQ_EVENT_ACCEPTED) {
        w->peers++;
        if (w->fds < PEER_FDS_MAX && fd != UINT32_MAX)
            w->fd[w->fds++] = (int)fd;
    } else if (event == ZMQ_EVENT_DISCONNECTED) {
        for (int i = 0; i < w->fds; i++)
            if (w->fd[i] == (int)fd) {
                w->fd[i] = w->fd[--w->fds];
                break;
            }
        if (w->peers > 0 && --w->peers == 0)
            w->absent_since = cli_monotonic_s();
    }
    return 1;
}

int cli_peer_count(cli_peer *watch)
{
    while (peer_read_event(watch)) {
    }
    return watch->peers;
}

double cli_peer_absent_s(cli_peer *watch)
{
    return cli_peer_count(watch) > 0 ? 0.0 : cli_monotonic_s() - watch->absent_since;
}

int cli_peer_wait(cli_peer *watch, int timeout_ms)
{
    double end = cli_monotonic_s() + timeout_ms / 1e3;
    while (cli_peer_count(watch) == 0) {
        double left = end - cli_monotonic_s();
        if (cli_stop_requested || (timeout_ms >= 0 && left <= 0))
            return -1;
        zmq_pollitem_t item = {.socket = watch->monitor, .events = ZMQ_POLLIN};
        zmq_poll(&item, 1, timeout_ms >= 0 && left < 0.1 ? (long)(left * 1e3) + 1 : 100);
    }
    return 0;
}

long cli_peer_unread(cli_peer *watch)
{
    cli_peer_count(watch);
    long unread = 0;
    for (int i = 0; i < watch->fds; i++) {
        int queued = 0;
        if (ioctl(watch->fd[i], SIOCOUTQ, &queued) == 0 && queued > 0)
            unread += queued;
    }
    return unread;
}

int cli_peer_drain(cli_peer *watch, double deadline)
{
    int empty_seen = 0;
    for (;;) {
        /* Twice empty, 10 ms apart: ZeroMQ's I/O thread writes the bytes it
         * still holds as soon as the queue has room, well within that. */
        empty_seen = cli_peer_unread(watch) == 0 ? empty_seen + 1 : 0;
        if (empty_seen >= 2)
            return 0;
        if (cli_stop_requested || cli_monotonic_s() >= deadline)
            return -1;
        struct timespec ten = {0, 10000000L};
        nanosleep(&ten, NULL);
    }
}

void cli_peer_destroy(cli_peer **watch)
{
    cli_peer *w = *watch;
    if (w == NULL)
        return;
    zmq_socket_monitor(w->sock, NULL, 0);
    zmq_close(w->monitor);
    free(w);
    *watch = NULL;
}
