/*
 * dispatch_daemons.c - the daemons behind eigstream-dispatch: who is
 * there, their credit, their heartbeats, their death.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "dispatch.h"

#define NS_PER_MS 1000000ull

static const char *const death_names[DISPATCH_DEATH_COUNT_] = {"alive", "silent", "unreachable", "goodbye"};

const char *dispatch_death_name(dispatch_death d)
{
    return (int)d >= 0 && d < DISPATCH_DEATH_COUNT_ ? death_names[d] : "unknown";
}

/* A printable name for a routing id: itself when it is printable ASCII
 * (daemons name themselves host:pid), else lowercase hex. */
static void name_of(const uint8_t *id, size_t bytes, char *out)
{
    int printable = bytes > 0;
    for (size_t i = 0; i < bytes; i++)
        printable &= id[i] > 0x20 && id[i] < 0x7f && id[i] != '"' && id[i] != '\\';
    if (printable) {
        memcpy(out, id, bytes);
        out[bytes] = '\0';
        return;
    }
    for (size_t i = 0; i < bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    out[2 * bytes] = '\0';
}

static dispatch_daemon *find(dispatch_daemons *t, const void *id, size_t bytes)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->d[i].id_bytes == bytes && memcmp(t->d[i].id, id, bytes) == 0)
            return &t->d[i];
    return NULL;
}

/* credit, or max_credit when it claims more (the excess counted). */
static uint64_t credit_capped(dispatch_daemons *t, uint64_t credit)
{
    if (credit <= t->max_credit)
        return credit;
    t->credit_capped += credit - t->max_credit;
    return t->max_credit;
}

/* An entry for a new daemon: a never-used one, else the one of the daemon
 * gone longest that owes nothing (its counts move to departed); NULL when
 * every entry is alive or owed. */
static dispatch_daemon *entry_reclaim(dispatch_daemons *t)
{
    if (t->count < DISPATCH_DAEMONS_MAX)
        return &t->d[t->count++];
    dispatch_daemon *oldest = NULL;
    for (size_t i = 0; i < t->count; i++) {
        dispatch_daemon *d = &t->d[i];
        if (d->state == DISPATCH_ALIVE || d->mid_frame || d->goodbye_owed || d->holding > 0)
            continue;
        if (oldest == NULL || d->last_heard_ns < oldest->last_heard_ns)
            oldest = d;
    }
    if (oldest != NULL) {
        t->departed.daemons++;
        t->departed.dispatched += oldest->dispatched;
        t->departed.frames += oldest->frames;
    }
    return oldest;
}

/* READY: a new daemon, or a known one (back after a restart of either
 * side): its credit is what READY says (at most max_credit), whatever it was. */
static dispatch_daemon *on_ready(dispatch_daemons *t, const zmq_msg_t *id, const dispatch_control *c, uint64_t now)
{
    dispatch_daemon *d = find(t, zmq_msg_data((zmq_msg_t *)id), zmq_msg_size((zmq_msg_t *)id));
    if (d == NULL) {
        if (zmq_msg_size((zmq_msg_t *)id) > DISPATCH_ID_MAX || (d = entry_reclaim(t)) == NULL) {
            t->table_full++;
            fprintf(stderr, "eigstream-dispatch: READY refused: %d daemons alive already\n", DISPATCH_DAEMONS_MAX);
            return NULL;
        }
        memset(d, 0, sizeof *d);
        d->id_bytes = zmq_msg_size((zmq_msg_t *)id);
        memcpy(d->id, zmq_msg_data((zmq_msg_t *)id), d->id_bytes);
        name_of(d->id, d->id_bytes, d->name);
    }
    int back = d->state != DISPATCH_ALIVE || d->readies > 0;
    d->readied_again = d->state == DISPATCH_ALIVE && d->readies > 0;
    d->state = DISPATCH_ALIVE;
    d->credit = credit_capped(t, c->credit);
    uint32_t heartbeat_ms = c->heartbeat_ms < DISPATCH_HEARTBEAT_MS_MAX ? c->heartbeat_ms : DISPATCH_HEARTBEAT_MS_MAX;
    d->interval_ns = (uint64_t)heartbeat_ms * NS_PER_MS;
    d->last_heard_ns = now;
    d->readies++;
    d->goodbye_owed = 0; /* back: it takes frames again, nothing to answer */
    fprintf(stderr, "eigstream-dispatch: daemon %s %s (credit %u, heartbeat %u ms), %zu alive\n", d->name,
            back ? "ready again" : "ready", c->credit, c->heartbeat_ms, dispatch_daemons_alive(t));
    return d;
}

dispatch_daemon *dispatch_daemons_receive(dispatch_daemons *t, void *router, const cli_message *m, uint64_t now)
{
    dispatch_control c;
    dispatch_control_error e = DISPATCH_CONTROL_ESIZE;
    if (m->count == 2 && m->extra == 0)
        e = dispatch_control_decode(zmq_msg_data(&m->part[1]), zmq_msg_size(&m->part[1]), &c);
    if (e != DISPATCH_CONTROL_OK) {
        t->control_errors[e]++;
        fprintf(stderr, "eigstream-dispatch: malformed control message from a daemon: %s\n",
                dispatch_control_strerror(e));
        return NULL;
    }
    if (c.type == DISPATCH_CONTROL_READY)
        return on_ready(t, &m->part[0], &c, now);
    dispatch_daemon *d = find(t, zmq_msg_data(&m->part[0]), zmq_msg_size(&m->part[0]));
    if (d == NULL || d->state != DISPATCH_ALIVE) {
        /* Paranoid Pirate: a peer we do not count as alive must say READY
         * first; its credit from before is void. Its GOODBYE is still
         * answered: nothing is on its way to it, and it may stop now. */
        t->unknown_peers++;
        if (c.type == DISPATCH_CONTROL_GOODBYE) {
            uint8_t wire[DISPATCH_CONTROL_BYTES];
            dispatch_control_encode(&c, wire);
            if (zmq_send(router, zmq_msg_data((zmq_msg_t *)&m->part[0]), zmq_msg_size((zmq_msg_t *)&m->part[0]),
                         ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0)
                (void)zmq_send(router, wire, sizeof wire, ZMQ_DONTWAIT);
        }
        return NULL;
    }
    d->last_heard_ns = now;
    if (c.type == DISPATCH_CONTROL_CREDIT)
        d->credit = credit_capped(t, d->credit + c.credit);
    else if (c.type == DISPATCH_CONTROL_GOODBYE) {
        dispatch_daemons_bury(t, d, DISPATCH_DEATH_GOODBYE);
        /* Mid-frame, the rest of the frame is still its: answered when it ends. */
        if (d->mid_frame)
            d->goodbye_owed = 1;
        else
            (void)dispatch_daemons_send_control(router, d, DISPATCH_CONTROL_GOODBYE, now);
    }
    return d;
}

dispatch_daemon *dispatch_daemons_pick(dispatch_daemons *t)
{
    dispatch_daemon *best = NULL;
    for (size_t i = 0; i < t->count; i++) {
        dispatch_daemon *d = &t->d[i];
        if (d->state != DISPATCH_ALIVE || d->credit == 0)
            continue;
        if (best == NULL || d->credit > best->credit || (d->credit == best->credit && d->last_turn < best->last_turn))
            best = d;
    }
    return best;
}

void dispatch_daemons_bury(dispatch_daemons *t, dispatch_daemon *d, dispatch_death why)
{
    d->state = why;
    d->credit = 0;
    if (d->frames > 0)
        fprintf(stderr,
                "eigstream-dispatch: daemon %s gone (%s): it was sent %llu frames, seq %llu..%llu; "
                "those it had not published are lost with it; %zu alive\n",
                d->name, dispatch_death_name(why), (unsigned long long)d->frames,
                (unsigned long long)d->first_seq, (unsigned long long)d->last_seq, dispatch_daemons_alive(t));
    else
        fprintf(stderr, "eigstream-dispatch: daemon %s gone (%s): it was sent no frames; %zu alive\n", d->name,
                dispatch_death_name(why), dispatch_daemons_alive(t));
}

int dispatch_daemons_send_control(void *router, dispatch_daemon *d, uint8_t type, uint64_t now)
{
    uint8_t wire[DISPATCH_CONTROL_BYTES];
    dispatch_control c = {.type = type};
    dispatch_control_encode(&c, wire);
    if (zmq_send(router, d->id, d->id_bytes, ZMQ_SNDMORE | ZMQ_DONTWAIT) != (int)d->id_bytes)
        return -1;
    if (zmq_send(router, wire, sizeof wire, ZMQ_DONTWAIT) != (int)sizeof wire)
        return -1;
    d->last_sent_ns = now;
    return 0;
}

void dispatch_daemons_tick(dispatch_daemons *t, void *router, uint64_t now)
{
    for (size_t i = 0; i < t->count; i++) {
        dispatch_daemon *d = &t->d[i];
        if (d->state != DISPATCH_ALIVE)
            continue;
        if (now - d->last_heard_ns > t->liveness * d->interval_ns) {
            dispatch_daemons_bury(t, d, DISPATCH_DEATH_SILENT);
            continue;
        }
        if (now - d->last_sent_ns >= d->interval_ns &&
            dispatch_daemons_send_control(router, d, DISPATCH_CONTROL_HEARTBEAT, now) != 0 &&
            zmq_errno() == EHOSTUNREACH)
            dispatch_daemons_bury(t, d, DISPATCH_DEATH_UNREACHABLE);
    }
}

size_t dispatch_daemons_alive(const dispatch_daemons *t)
{
    size_t alive = 0;
    for (size_t i = 0; i < t->count; i++)
        alive += t->d[i].state == DISPATCH_ALIVE;
    return alive;
}

void dispatch_daemons_frame_ended(void *router, dispatch_daemon *d, uint64_t now)
{
    d->mid_frame = 0;
    if (d->goodbye_owed) {
        d->goodbye_owed = 0;
        (void)dispatch_daemons_send_control(router, d, DISPATCH_CONTROL_GOODBYE, now);
    }
}

int dispatch_daemons_takes_rest(const dispatch_daemon *d)
{
    return d->state == DISPATCH_ALIVE || (d->state == DISPATCH_DEATH_GOODBYE && d->goodbye_owed);
}
