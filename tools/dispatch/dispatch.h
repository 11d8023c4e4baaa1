/*
 * dispatch.h - eigstream-dispatch: one source's covariance frames spread
 * over N daemons by credit (zguide's load-balancing broker with
 * credit-based flow control and Paranoid Pirate heartbeats; docs/scaleout.md).
 *
 *   front end  PULL (binds by default): the source PUSHes frames here
 *   back end   ROUTER (binds): daemons' DEALERs connect, say READY with their
 *              free slots as credit, return credit as slots free up, and
 *              heartbeat; a frame goes to the live daemon with the most credit
 *
 * Files: dispatch_main.c (options, sockets, the loop, the held queue),
 * dispatch_daemons.c (the daemon table: control messages, choice, liveness),
 * dispatch_report.c (JSON, Prometheus text, the periodic line).
 */
#ifndef EIGSTREAM_DISPATCH_H
#define EIGSTREAM_DISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_message.h"
#include "dispatch_control.h"
#include "protocol.h"

#define DISPATCH_DAEMONS_MAX 64
#define DISPATCH_ID_MAX 255 /* ZeroMQ routing ids are 1..255 bytes */

/* Why a frame that came in was not dispatched: one counter each. */
typedef enum dispatch_drop {
    DISPATCH_DROP_QUEUE_FULL = 0, /* overflow drop_oldest: evicted, no daemon had credit */
    DISPATCH_DROP_SHUTDOWN,       /* still held when the dispatcher stopped */
    DISPATCH_DROP_COUNT_
} dispatch_drop;

const char *dispatch_drop_name(dispatch_drop d);

/* Why a daemon stopped getting frames. */
typedef enum dispatch_death {
    DISPATCH_ALIVE = 0,
    DISPATCH_DEATH_SILENT,      /* no message for liveness x its heartbeat interval */
    DISPATCH_DEATH_UNREACHABLE, /* ZeroMQ has no connection to it any more (EHOSTUNREACH) */
    DISPATCH_DEATH_GOODBYE,     /* it said it is stopping */
    DISPATCH_DEATH_COUNT_
} dispatch_death;

const char *dispatch_death_name(dispatch_death d);

typedef struct dispatch_daemon {
    uint8_t id[DISPATCH_ID_MAX];
    size_t id_bytes;
    char name[2 * DISPATCH_ID_MAX + 1]; /* the id if printable, else its hex */
    dispatch_death state;
    uint64_t credit;                    /* frames it may still be sent */
    uint64_t interval_ns;               /* its heartbeat interval (READY) */
    uint64_t last_heard_ns, last_sent_ns;
    uint64_t dispatched, readies, first_seq, last_seq;
    uint64_t last_turn;                 /* dispatch_daemons.turns when it was last sent a frame */
} dispatch_daemon;

typedef struct dispatch_daemons {
    dispatch_daemon d[DISPATCH_DAEMONS_MAX];
    size_t count;
    uint64_t liveness;
    uint64_t control_errors[DISPATCH_CONTROL_ERROR_COUNT_];
    uint64_t unknown_peers;      /* CREDIT or HEARTBEAT from a peer that never said READY */
    uint64_t table_full;         /* READY refused: DISPATCH_DAEMONS_MAX daemons known */
    uint64_t turns;              /* frames dispatched so far: the clock of last_turn */
} dispatch_daemons;

/* Handles one message from the back end (parts[0] the routing id, then the
 * control message). Returns the daemon it concerns, or NULL. Logs
 * arrivals, departures and malformed messages. A daemon's GOODBYE is
 * answered with GOODBYE on router: behind every frame sent to it, so the
 * daemon knows when the last one has arrived. */
dispatch_daemon *dispatch_daemons_receive(dispatch_daemons *t, void *router, const cli_message *m, uint64_t now_ns);

/* The live daemon with the most credit, or NULL when none has credit. Ties
 * go to the one sent a frame least recently, so that idle daemons take
 * turns rather than the first one taking every frame. */
dispatch_daemon *dispatch_daemons_pick(dispatch_daemons *t);

/* Marks d dead for `why` and logs it with what it was sent. */
void dispatch_daemons_bury(dispatch_daemons *t, dispatch_daemon *d, dispatch_death why);

/* Sends a HEARTBEAT to each live daemon silent from our side for its
 * interval, and buries those not heard from for liveness intervals. */
void dispatch_daemons_tick(dispatch_daemons *t, void *router, uint64_t now_ns);

/* Sends one control message of type to d (never blocks); 0 when sent. */
int dispatch_daemons_send_control(void *router, dispatch_daemon *d, uint8_t type, uint64_t now_ns);

size_t dispatch_daemons_alive(const dispatch_daemons *t);

/* Everything the reports show. */
typedef struct dispatch_stats {
    uint64_t frames_in, dispatched, rejected_total, dropped_total, resent;
    uint64_t rejected[PROTOCOL_REJECT_COUNT_];
    uint64_t dropped[DISPATCH_DROP_COUNT_];
    uint64_t blocked_ns;  /* overflow block: time the front end was not read */
    size_t queued;
    double started_s;
} dispatch_stats;

/* The metrics as one JSON object (no newline) into out; the bytes needed. */
size_t dispatch_report_json(const dispatch_stats *s, const dispatch_daemons *t, double now_s, char *out,
                            size_t out_bytes);
/* Writes the JSON to path (replaced atomically); 0, or -1 with errno. */
int dispatch_report_json_file(const dispatch_stats *s, const dispatch_daemons *t, double now_s, const char *path);
/* Writes Prometheus text exposition to path (replaced atomically); 0 or -1. */
int dispatch_report_prometheus_file(const dispatch_stats *s, const dispatch_daemons *t, double now_s,
                                    const char *path);

#endif
