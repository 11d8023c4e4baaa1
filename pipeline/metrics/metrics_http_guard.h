/*
 * metrics_http_guard.h - who may hold a connection to the metrics HTTP
 * server, and for how long (internal to metrics_http.c).
 *
 * Admission (libmicrohttpd's accept policy, before a connection is taken):
 *   - at most METRICS_HTTP_PER_ADDRESS connections from one address;
 *   - at most METRICS_HTTP_CONNECTIONS from every address that is not a
 *     configured scraper, and METRICS_HTTP_SCRAPER_SLOTS more kept for the
 *     scrapers (metrics.http_scrapers), so that a flood from other addresses
 *     never takes the scrapers' room.
 * Deadline: a request must be answered within deadline_s of the moment the
 * connection opened or its previous request completed. The clock is not
 * reset by bytes arriving (libmicrohttpd's own timeout is, so a client that
 * drips one byte a second would hold a connection for ever): the guard's
 * thread shuts down every connection past its deadline (shutdown(2) on its
 * socket; libmicrohttpd then sees the end and closes it).
 * Each refusal and each cut is counted (metrics_http_counts).
 *
 * Threads: admit/opened/request_done/closed run on libmicrohttpd's one
 * polling thread (no thread pool), in that order for one connection; the
 * guard's own thread sweeps. A table under one mutex holds every open
 * connection; closed() runs before libmicrohttpd closes the socket, so the
 * sweeper never shuts down a descriptor that was reused.
 */
#ifndef EIGSTREAM_METRICS_HTTP_GUARD_H
#define EIGSTREAM_METRICS_HTTP_GUARD_H

#include <stddef.h>
#include <sys/socket.h>

#include "metrics_http.h"

typedef struct http_guard http_guard;

/* Parses limits->scrapers, starts the sweeping thread. Errors:
 * METRICS_HTTP_EINVAL (a scraper that is no numeric address: err names it),
 * METRICS_HTTP_ENOMEM, METRICS_HTTP_ETHREAD. */
metrics_http_error http_guard_create(http_guard **out, const metrics_http_limits *limits, char *err,
                                     size_t err_bytes);
/* Stops the sweeping thread (before the server closes its connections). */
void http_guard_stop(http_guard *g);
/* Frees *g (stopped, and after the server is gone), sets it NULL. */
void http_guard_destroy(http_guard **g);

/* Whether a connection from addr may be taken; a refusal is counted. */
int http_guard_admit(http_guard *g, const struct sockaddr *addr, socklen_t addr_len);
/* A taken connection: its socket and address; *slot is what the other calls take. */
void http_guard_opened(http_guard *g, int fd, const struct sockaddr *addr, socklen_t addr_len, void **slot);
/* Its request was answered: its deadline starts again. */
void http_guard_request_done(http_guard *g, void *slot);
/* It is closing (its socket still open). */
void http_guard_closed(http_guard *g, void *slot);
/* The counts so far and the connections open now. */
void http_guard_counts(http_guard *g, metrics_http_counts *out);

#endif
