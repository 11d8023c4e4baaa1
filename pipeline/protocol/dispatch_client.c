/*
 * dispatch_client.c - credit and heartbeats of a daemon behind
 * eigstream-dispatch (dispatch_client.h says what and why).
 */
#include "dispatch_client.h"

#include <errno.h>
#include <stdlib.h>
#include <zmq.h>

#include "log.h"
#include "protocol.h"

#define NS_PER_MS 1000000ull

struct dispatch_client {
    void *socket;
    uint64_t interval_ns, liveness;
    int listening;        /* the dispatcher has our READY and was heard from lately */
    uint64_t granted;     /* credit granted since the last READY */
    uint64_t received;    /* frames received since the last READY */
    uint64_t last_heard;  /* when the dispatcher was last heard from (or READY sent) */
    uint64_t last_sent;   /* when we last sent anything */
    uint64_t ready_sent;  /* READY messages sent (1 per (re)connection) */
    int leaving;          /* our GOODBYE was sent; waiting for the dispatcher's */
    uint64_t unconnected_since; /* first READY refused for want of a connection (0: none pending) */
    int unconnected_logged;     /* that wait was logged */
};

dispatch_client_error dispatch_client_create(void *socket, int heartbeat_ms, int liveness, dispatch_client **out)
{
    *out = NULL;
    if (socket == NULL || heartbeat_ms < 1 || liveness < 1)
        return DISPATCH_CLIENT_EINVAL;
    dispatch_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return DISPATCH_CLIENT_ENOMEM;
    c->socket = socket;
    c->interval_ns = (uint64_t)heartbeat_ms * NS_PER_MS;
    c->liveness = (uint64_t)liveness;
    *out = c;
    return DISPATCH_CLIENT_OK;
}

/* One control message, never blocking; 0 when ZeroMQ took it. */
static int send_control(dispatch_client *c, uint8_t type, uint32_t credit, uint32_t heartbeat_ms, uint64_t now)
{
    uint8_t wire[DISPATCH_CONTROL_BYTES];
    dispatch_control m = {.type = type, .credit = credit, .heartbeat_ms = heartbeat_ms};
    dispatch_control_encode(&m, wire);
    if (zmq_send(c->socket, wire, sizeof wire, ZMQ_DONTWAIT) != (int)sizeof wire)
        return -1; /* no dispatcher connected yet, or its pipe is full: next tick */
    c->last_sent = now;
    return 0;
}

/* A READY that found no completed connection (ZMQ_IMMEDIATE): no
 * dispatcher listens, or, under CURVE, its handshake refused us. Said once
 * per wait, after liveness intervals, with what to check. */
static void unconnected_note(dispatch_client *c, uint64_t now)
{
    if (c->unconnected_since == 0)
        c->unconnected_since = now == 0 ? 1 : now;
    if (c->unconnected_logged || now - c->unconnected_since < c->liveness * c->interval_ns)
        return;
    c->unconnected_logged = 1;
    LOG_WARN("dispatch", "no connection to eigstream-dispatch for %llu ms: is it running on input.endpoint? With "
             "CURVE, is security.curve_dispatcher_key its public key and this daemon's public key in its "
             "--back-curve-allow? Each refused handshake is counted there; ZeroMQ does not try an unlisted key "
             "again: fix the keys and restart this daemon",
             (unsigned long long)((now - c->unconnected_since) / NS_PER_MS));
}

/* READY replaces whatever credit the dispatcher held for us: both sides
 * start counting again from here. */
static void offer_ready(dispatch_client *c, size_t free_slots, uint64_t now)
{
    uint32_t credit = free_slots > UINT32_MAX ? UINT32_MAX : (uint32_t)free_slots;
    if (now - c->last_sent < c->interval_ns && c->ready_sent > 0)
        return; /* one READY per interval while nobody answers */
    if (send_control(c, DISPATCH_CONTROL_READY, credit, (uint32_t)(c->interval_ns / NS_PER_MS), now) != 0) {
        unconnected_note(c, now);
        return;
    }
    c->unconnected_since = 0;
    c->unconnected_logged = 0;
    c->ready_sent++;
    c->listening = 1;
    c->granted = credit;
    c->received = 0;
    c->last_heard = now; /* the dispatcher gets `liveness` intervals to answer */
    LOG_INFO("dispatch", "READY sent (credit %u)", credit);
}

void dispatch_client_tick(dispatch_client *c, size_t free_slots, uint64_t now)
{
    if (c->listening && now - c->last_heard > c->liveness * c->interval_ns) {
        LOG_WARN("dispatch", "dispatcher silent for %llu ms: offering READY again",
                 (unsigned long long)((now - c->last_heard) / NS_PER_MS));
        c->listening = 0;
    }
    if (!c->listening) {
        offer_ready(c, free_slots, now);
        return;
    }
    /* Frames in flight to us hold credit already: only slots nobody has
     * been promised are offered. */
    uint64_t outstanding = c->granted > c->received ? c->granted - c->received : 0;
    if (free_slots > outstanding) {
        uint64_t more = free_slots - outstanding;
        if (more > UINT32_MAX)
            more = UINT32_MAX;
        if (send_control(c, DISPATCH_CONTROL_CREDIT, (uint32_t)more, 0, now) == 0)
            c->granted += more;
        return;
    }
    if (now - c->last_sent >= c->interval_ns)
        (void)send_control(c, DISPATCH_CONTROL_HEARTBEAT, 0, 0, now);
}

/* Whether a message (its first part) spent a credit: a frame does, and a
 * fragmented frame once, at its first fragment; the dispatcher sends the
 * rest of its fragments after it whatever the credit (docs/scaleout.md). */
static int spends_credit(const void *part, size_t part_bytes)
{
    protocol_header h;
    if (protocol_header_decode(part, part_bytes, &h) != PROTOCOL_OK)
        return 1;
    return !(h.flags & PROTOCOL_FLAG_FRAGMENT) || h.fragment_first == 0;
}

int dispatch_client_take(dispatch_client *c, const void *part, size_t part_bytes, int more, uint64_t now)
{
    c->last_heard = now;
    if (more || !dispatch_control_is_control(part, part_bytes)) {
        c->received += (uint64_t)spends_credit(part, part_bytes);
        return 0;
    }
    dispatch_control m;
    dispatch_control_error e = dispatch_control_decode(part, part_bytes, &m);
    if (e != DISPATCH_CONTROL_OK) {
        LOG_WARN("dispatch", "malformed control message from the dispatcher: %s", dispatch_control_strerror(e));
        return 1;
    }
    if (m.type == DISPATCH_CONTROL_GOODBYE && c->leaving) {
        c->leaving = 0; /* the answer to ours: the last frame is in */
    } else if (m.type == DISPATCH_CONTROL_GOODBYE) {
        LOG_WARN("dispatch", "the dispatcher said goodbye: offering READY until one answers");
        c->listening = 0;
    } else if (m.type != DISPATCH_CONTROL_HEARTBEAT) {
        LOG_WARN("dispatch", "unexpected %s message from the dispatcher ignored", dispatch_control_type_name(m.type));
    }
    return 1;
}

void dispatch_client_goodbye(dispatch_client *c)
{
    if (c->listening)
        c->leaving = send_control(c, DISPATCH_CONTROL_GOODBYE, 0, 0, c->last_sent) == 0;
    c->listening = 0;
}

int dispatch_client_drained(const dispatch_client *c)
{
    return !c->leaving;
}

uint64_t dispatch_client_drain_ns(const dispatch_client *c)
{
    return c->liveness * c->interval_ns;
}

size_t dispatch_client_share(size_t free_slots, int k, int sockets, uint64_t turn)
{
    if (sockets < 1 || k < 0 || k >= sockets)
        return 0;
    return (free_slots + (size_t)(((uint64_t)k + turn) % (uint64_t)sockets)) / (size_t)sockets;
}

void dispatch_client_destroy(dispatch_client **c)
{
    if (c == NULL || *c == NULL)
        return;
    free(*c);
    *c = NULL;
}
