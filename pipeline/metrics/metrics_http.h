/*
 * metrics_http.h - the read-only HTTP server of the metrics (libmicrohttpd):
 *   GET /              the dashboard (pipeline/metrics/dashboard/, embedded at build time)
 *   GET /metrics       Prometheus text format 0.0.4
 *   GET /api/metrics   the metrics JSON plus the dashboard's history
 * HEAD on each; any other method 405, any other path 404.
 *
 * Isolation from the stream: the server runs in its own thread (internal
 * polling, epoll where available) and serves only copies of documents that
 * the metrics thread handed over with metrics_http_publish: the copy is
 * made under a mutex held for a memcpy, so a slow or hostile client can
 * delay nothing but its own response. Connections are bounded in number
 * (METRICS_HTTP_PER_ADDRESS from one address, METRICS_HTTP_CONNECTIONS from
 * every address but the scrapers', METRICS_HTTP_SCRAPER_SLOTS more kept for
 * the scrapers), in time (a request answered within limits.deadline_s of
 * the connection's start or its previous answer, whatever bytes arrive;
 * idle METRICS_HTTP_TIMEOUT_S) and in request size
 * (METRICS_HTTP_MEMORY_BYTES: a longer header is refused). Refusals and
 * cuts are counted (metrics_http_counts_read; metrics_http_guard.h).
 */
#ifndef EIGSTREAM_METRICS_HTTP_H
#define EIGSTREAM_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define METRICS_HTTP_CONNECTIONS 64     /* from every address but the scrapers' */
#define METRICS_HTTP_SCRAPER_SLOTS 8    /* kept for metrics.http_scrapers */
#define METRICS_HTTP_PER_ADDRESS 4      /* from one address, a scraper's too */
#define METRICS_HTTP_SCRAPERS_MAX 16    /* addresses in metrics.http_scrapers */
#define METRICS_HTTP_TIMEOUT_S 5        /* idle (reset by each byte) */
#define METRICS_HTTP_MEMORY_BYTES (32 * 1024)

typedef struct metrics_http metrics_http;

typedef enum metrics_http_error {
    METRICS_HTTP_OK = 0,
    METRICS_HTTP_EINVAL,  /* the address is not HOST:PORT */
    METRICS_HTTP_ENOMEM,
    METRICS_HTTP_ESOCKET, /* unresolvable, or bind/listen refused */
    METRICS_HTTP_ETHREAD  /* the server thread could not be started */
} metrics_http_error;

const char *metrics_http_strerror(metrics_http_error e);

/* Connections refused or cut, by reason (metrics_http_refusal_name: the
 * Prometheus label). */
typedef enum metrics_http_refusal {
    METRICS_HTTP_REFUSED_PER_ADDRESS = 0, /* "per_address": METRICS_HTTP_PER_ADDRESS open from its address */
    METRICS_HTTP_REFUSED_FULL,            /* "full": every slot its address may take is held */
    METRICS_HTTP_REFUSED_DEADLINE,        /* "deadline": cut, its request not answered within deadline_s */
    METRICS_HTTP_REFUSAL_COUNT_
} metrics_http_refusal;

const char *metrics_http_refusal_name(metrics_http_refusal r);

typedef struct metrics_http_counts {
    uint64_t refused[METRICS_HTTP_REFUSAL_COUNT_];
    int open;          /* connections open now, the scrapers' included */
    int open_scrapers; /* ... from scraper addresses */
} metrics_http_counts;

/* The server's limits from the settings (metrics.http_*). */
typedef struct metrics_http_limits {
    int deadline_s;          /* >= 1: a request answered within this, from the connection's
                                start or its previous answer */
    const char *scrapers;    /* numeric addresses, comma-separated, that have
                                METRICS_HTTP_SCRAPER_SLOTS kept for them; "" = none */
} metrics_http_limits;

typedef enum metrics_http_document {
    METRICS_HTTP_PROMETHEUS = 0, /* /metrics */
    METRICS_HTTP_API_JSON,       /* /api/metrics */
    METRICS_HTTP_DOCUMENT_COUNT_
} metrics_http_document;

/* A file of the dashboard, embedded by CMake (dashboard_assets.c, generated
 * from pipeline/metrics/dashboard/): the table ends with a NULL path. */
typedef struct metrics_http_asset {
    const char *path;         /* "/", "/dashboard.js" */
    const char *content_type;
    const unsigned char *bytes;
    size_t length;
} metrics_http_asset;
extern const metrics_http_asset metrics_http_assets[];

/* Listens on address ("HOST:PORT", as metrics.http: a name, an IPv4 address
 * or a bracketed IPv6 one; port 0 = any free port) and starts the server
 * thread under limits; documents hold up to document_cap bytes each. Until
 * the first metrics_http_publish a document is answered 503. Errors (err
 * names the address or scraper and the reason): METRICS_HTTP_EINVAL,
 * METRICS_HTTP_ESOCKET, METRICS_HTTP_ENOMEM, METRICS_HTTP_ETHREAD. */
metrics_http_error metrics_http_start(metrics_http **out, const char *address, const metrics_http_limits *limits,
                                      size_t document_cap, char *err, size_t err_bytes);
/* Refusals and cuts so far, connections open now. Any thread. */
void metrics_http_counts_read(metrics_http *h, metrics_http_counts *out);
/* The port listened on (the one chosen when the address said 0). */
int metrics_http_port(const metrics_http *h);
/* Replaces document d with text[0..len) (copied; len <= document_cap, a
 * longer one is refused with -1 and the old one kept). Any thread. */
int metrics_http_publish(metrics_http *h, metrics_http_document d, const char *text, size_t len);
/* Stops the server (closing every connection), frees *h, sets it NULL. */
void metrics_http_stop(metrics_http **h);

#endif
