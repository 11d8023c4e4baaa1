/*
 * connection_watch.c - a socket monitor's connection events reduced to the
 * connections and their unread bytes (connection_watch.h).
 *
 * zmq_socket_monitor publishes each event as a two-part message on an inproc
 * PAIR: a 6-byte part (u16 event, u32 value, host byte order) and the
 * endpoint. Only the connection events are asked for; the retries of a
 * connect to nobody leave the count at 0.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <zmq.h>

#include "connection_watch.h"

/* Connections whose send queues are watched; a socket with more is drained
 * only on its first this many. */
#define WATCH_FDS_MAX 64

struct connection_watch {
    void *sock;    /* the watched socket (not owned), or NULL when fed */
    void *monitor; /* our PAIR end of the monitor, or NULL when fed */
    pthread_mutex_t lock; /* the books below: a feeder's thread writes them */
    int connections;
    uint64_t absent_since_ns; /* when connections last became 0 */
    int fds;
    int fd[WATCH_FDS_MAX]; /* the connections' descriptors (ZeroMQ's) */
};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int connection_watch_create_fed(connection_watch **w)
{
    *w = NULL;
    connection_watch *c = calloc(1, sizeof *c);
    if (c == NULL || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        errno = ENOMEM;
        return -1;
    }
    c->absent_since_ns = now_ns();
    *w = c;
    return 0;
}

int connection_watch_create(void *ctx, void *sock, connection_watch **w)
{
    char address[64];
    connection_watch *c;
    if (connection_watch_create_fed(&c) != 0)
        return -1;
    snprintf(address, sizeof address, "inproc://connection-watch-%p", (void *)sock);
    c->sock = sock;
    int events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED, linger = 0;
    if (zmq_socket_monitor(sock, address, events) != 0 || (c->monitor = zmq_socket(ctx, ZMQ_PAIR)) == NULL ||
        zmq_setsockopt(c->monitor, ZMQ_LINGER, &linger, sizeof linger) != 0 || zmq_connect(c->monitor, address) != 0) {
        int error = zmq_errno();
        if (c->monitor != NULL)
            zmq_close(c->monitor);
        zmq_socket_monitor(sock, NULL, 0);
        pthread_mutex_destroy(&c->lock);
        free(c);
        errno = error;
        return -1;
    }
    *w = c;
    return 0;
}

/* The connection of descriptor fd came (1) or went (0); under the lock. */
static void watch_note(connection_watch *w, int came, int fd)
{
    if (came) {
        w->connections++;
        if (w->fds < WATCH_FDS_MAX && fd >= 0)
            w->fd[w->fds++] = fd;
        return;
    }
    for (int i = 0; i < w->fds; i++)
        if (w->fd[i] == fd) {
            w->fd[i] = w->fd[--w->fds];
            break;
        }
    if (w->connections > 0 && --w->connections == 0)
        w->absent_since_ns = now_ns();
}

/* Reads one pending event without blocking; 1 read, 0 none. */
static int watch_read_event(connection_watch *w)
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
    if (bytes < 6)
        return 1;
    uint16_t event;
    uint32_t value;
    memcpy(&event, head, sizeof event);
    memcpy(&value, head + 2, sizeof value);
    connection_watch_feed(w, event, value);
    return 1;
}

int connection_watch_is_event(uint16_t event)
{
    return event == ZMQ_EVENT_CONNECTED || event == ZMQ_EVENT_ACCEPTED || event == ZMQ_EVENT_DISCONNECTED;
}

void connection_watch_feed(connection_watch *w, uint16_t event, uint32_t value)
{
    if (!connection_watch_is_event(event))
        return;
    pthread_mutex_lock(&w->lock);
    watch_note(w, event != ZMQ_EVENT_DISCONNECTED, value <= (uint32_t)INT32_MAX ? (int)value : -1);
    pthread_mutex_unlock(&w->lock);
}

/* Reads what the own monitor has (a fed watcher has none). */
static void watch_read_events(connection_watch *w)
{
    while (w->monitor != NULL && watch_read_event(w)) {
    }
}

int connection_watch_count(connection_watch *w)
{
    watch_read_events(w);
    pthread_mutex_lock(&w->lock);
    int connections = w->connections;
    pthread_mutex_unlock(&w->lock);
    return connections;
}

uint64_t connection_watch_absent_since_ns(connection_watch *w)
{
    watch_read_events(w);
    pthread_mutex_lock(&w->lock);
    uint64_t since = w->connections > 0 ? 0 : w->absent_since_ns;
    pthread_mutex_unlock(&w->lock);
    return since;
}

long connection_watch_unread(connection_watch *w)
{
    watch_read_events(w);
    long unread = 0;
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < w->fds; i++) {
        int queued = 0;
        if (ioctl(w->fd[i], SIOCOUTQ, &queued) == 0 && queued > 0)
            unread += queued;
    }
    pthread_mutex_unlock(&w->lock);
    return unread;
}

int connection_watch_drain(connection_watch *w, uint64_t deadline_ns, const volatile sig_atomic_t *stop)
{
    for (int empty_seen = 0;;) {
        empty_seen = connection_watch_unread(w) == 0 ? empty_seen + 1 : 0;
        if (empty_seen >= 2)
            return 0;
        if ((stop != NULL && *stop) || now_ns() >= deadline_ns)
            return -1;
        struct timespec ten = {0, 10000000L};
        nanosleep(&ten, NULL);
    }
}

void connection_watch_destroy(connection_watch **w)
{
    connection_watch *c = *w;
    if (c == NULL)
        return;
    if (c->monitor != NULL) {
        zmq_socket_monitor(c->sock, NULL, 0);
        zmq_close(c->monitor);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
    *w = NULL;
}
