/*
 * metrics_http_guard.c - connection admission and the absolute request
 * deadline of the metrics HTTP server (metrics_http_guard.h).
 */
#include "metrics_http_guard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error_text.h"

#define SLOT_COUNT (METRICS_HTTP_CONNECTIONS + METRICS_HTTP_SCRAPER_SLOTS)
/* How often the sweeper looks: a connection is cut at most this late. */
#define SWEEP_PERIOD_MS 200

/* A client address reduced to what identifies it (no port): 16 bytes, IPv4
 * as an IPv4-mapped IPv6 address so that both families compare alike. */
typedef struct guard_address {
    uint8_t bytes[16];
} guard_address;

typedef struct guard_slot {
    int used;
    int fd;
    int scraper;
    int cut;                   /* shut down by the sweeper, not yet closed */
    guard_address address;
    uint64_t since_ns;         /* CLOCK_MONOTONIC: opened or last answered */
} guard_slot;

struct http_guard {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t sweeper;
    int sweeping, stopping;
    uint64_t deadline_ns;
    guard_address scrapers[METRICS_HTTP_SCRAPERS_MAX];
    int scraper_count;
    guard_slot slots[SLOT_COUNT];
    uint64_t refused[METRICS_HTTP_REFUSAL_COUNT_];
};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* 0, or -1 for a family other than IPv4 and IPv6. */
static int address_of(const struct sockaddr *sa, socklen_t len, guard_address *out)
{
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        out->bytes[10] = out->bytes[11] = 0xff;
        memcpy(out->bytes + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return 0;
    }
    if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        memcpy(out->bytes, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return 0;
    }
    return -1;
}

/* One numeric address of the scraper list ("127.0.0.1", "::1"). */
static int address_parse(const char *text, guard_address *out)
{
    struct sockaddr_in v4 = {.sin_family = AF_INET};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET, text, &v4.sin_addr) == 1)
        return address_of((const struct sockaddr *)&v4, sizeof v4, out);
    if (inet_pton(AF_INET6, text, &v6.sin6_addr) == 1)
        return address_of((const struct sockaddr *)&v6, sizeof v6, out);
    return -1;
}

/* "a,b , c" into g->scrapers; an empty list is none. */
static metrics_http_error scrapers_parse(http_guard *g, const char *list, char *err, size_t err_bytes)
{
    const char *p = list != NULL ? list : "";
    while (*p != '\0') {
        while (*p == ' ' || *p == ',')
            p++;
        size_t len = strcspn(p, ", ");
        if (len == 0)
            break;
        char one[64];
        if (len >= sizeof one || g->scraper_count == METRICS_HTTP_SCRAPERS_MAX)
            return ERROR_TEXT_FAIL(METRICS_HTTP_EINVAL, err, err_bytes,
                                   "metrics.http_scrapers: at most %d numeric addresses", METRICS_HTTP_SCRAPERS_MAX);
        memcpy(one, p, len);
        one[len] = '\0';
        if (address_parse(one, &g->scrapers[g->scraper_count]) != 0)
            return ERROR_TEXT_FAIL(METRICS_HTTP_EINVAL, err, err_bytes,
                                   "metrics.http_scrapers: \"%s\" is not a numeric IPv4 or IPv6 address", one);
        g->scraper_count++;
        p += len;
    }
    return METRICS_HTTP_OK;
}

static int is_scraper(const http_guard *g, const guard_address *a)
{
    for (int i = 0; i < g->scraper_count; i++)
        if (memcmp(&g->scrapers[i], a, sizeof *a) == 0)
            return 1;
    return 0;
}

/* Cuts every connection past its deadline; the lock is held. */
static void sweep(http_guard *g, uint64_t now)
{
    for (int i = 0; i < SLOT_COUNT; i++) {
        guard_slot *s = &g->slots[i];
        if (!s->used || s->cut || now - s->since_ns < g->deadline_ns)
            continue;
        /* The server owns the socket: shutdown only ends the stream, and
         * libmicrohttpd closes the descriptor (after closed(), which waits
         * for this lock). */
        (void)shutdown(s->fd, SHUT_RDWR);
        s->cut = 1;
        g->refused[METRICS_HTTP_REFUSED_DEADLINE]++;
    }
}

static void *sweeper_main(void *arg)
{
    http_guard *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += SWEEP_PERIOD_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        (void)pthread_cond_timedwait(&g->wake, &g->lock, &until);
        if (!g->stopping)
            sweep(g, now_ns());
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

metrics_http_error http_guard_create(http_guard **out, const metrics_http_limits *limits, char *err,
                                     size_t err_bytes)
{
    *out = NULL;
    if (limits->deadline_s < 1)
        return ERROR_TEXT_FAIL(METRICS_HTTP_EINVAL, err, err_bytes, "metrics.http_deadline_s: %d is below 1",
                               limits->deadline_s);
    http_guard *g = calloc(1, sizeof *g);
    if (g == NULL)
        return ERROR_TEXT_FAIL(METRICS_HTTP_ENOMEM, err, err_bytes, "metrics.http: out of memory");
    g->deadline_ns = (uint64_t)limits->deadline_s * 1000000000u;
    metrics_http_error e = scrapers_parse(g, limits->scrapers, err, err_bytes);
    if (e != METRICS_HTTP_OK) {
        free(g);
        return e;
    }
    pthread_mutex_init(&g->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&g->wake, &attr);
    pthread_condattr_destroy(&attr);
    int rc = pthread_create(&g->sweeper, NULL, sweeper_main, g);
    if (rc != 0) {
        http_guard_destroy(&g);
        return ERROR_TEXT_FAIL(METRICS_HTTP_ETHREAD, err, err_bytes,
                               "metrics.http: cannot start the deadline thread: %s", strerror(rc));
    }
    g->sweeping = 1;
    *out = g;
    return METRICS_HTTP_OK;
}

void http_guard_stop(http_guard *g)
{
    if (g == NULL || !g->sweeping)
        return;
    pthread_mutex_lock(&g->lock);
    g->stopping = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->sweeper, NULL);
    g->sweeping = 0;
}

void http_guard_destroy(http_guard **gp)
{
    http_guard *g = gp != NULL ? *gp : NULL;
    if (g == NULL)
        return;
    http_guard_stop(g);
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->lock);
    free(g);
    *gp = NULL;
}

int http_guard_admit(http_guard *g, const struct sockaddr *addr, socklen_t addr_len)
{
    guard_address a;
    if (address_of(addr, addr_len, &a) != 0)
        return 0; /* the server listens on IPv4 or IPv6 only */
    int scraper = is_scraper(g, &a);
    pthread_mutex_lock(&g->lock);
    int same = 0, in_class = 0;
    for (int i = 0; i < SLOT_COUNT; i++) {
        const guard_slot *s = &g->slots[i];
        if (!s->used)
            continue;
        same += memcmp(&s->address, &a, sizeof a) == 0;
        in_class += s->scraper == scraper;
    }
    int limit = scraper ? METRICS_HTTP_SCRAPER_SLOTS : METRICS_HTTP_CONNECTIONS;
    metrics_http_refusal why = METRICS_HTTP_REFUSAL_COUNT_;
    if (same >= METRICS_HTTP_PER_ADDRESS)
        why = METRICS_HTTP_REFUSED_PER_ADDRESS;
    else if (in_class >= limit)
        why = METRICS_HTTP_REFUSED_FULL;
    if (why != METRICS_HTTP_REFUSAL_COUNT_)
        g->refused[why]++;
    pthread_mutex_unlock(&g->lock);
    return why == METRICS_HTTP_REFUSAL_COUNT_;
}

void http_guard_opened(http_guard *g, int fd, const struct sockaddr *addr, socklen_t addr_len, void **slot)
{
    *slot = NULL;
    guard_address a;
    if (addr == NULL || address_of(addr, addr_len, &a) != 0)
        return;
    pthread_mutex_lock(&g->lock);
    /* admit() counted what is open on this same thread just before: a slot is free. */
    for (int i = 0; i < SLOT_COUNT; i++) {
        guard_slot *s = &g->slots[i];
        if (s->used)
            continue;
        *s = (guard_slot){.used = 1, .fd = fd, .scraper = is_scraper(g, &a), .address = a, .since_ns = now_ns()};
        *slot = s;
        break;
    }
    pthread_mutex_unlock(&g->lock);
}

void http_guard_request_done(http_guard *g, void *slot)
{
    if (slot == NULL)
        return;
    pthread_mutex_lock(&g->lock);
    ((guard_slot *)slot)->since_ns = now_ns();
    pthread_mutex_unlock(&g->lock);
}

void http_guard_closed(http_guard *g, void *slot)
{
    if (slot == NULL)
        return;
    pthread_mutex_lock(&g->lock);
    ((guard_slot *)slot)->used = 0;
    pthread_mutex_unlock(&g->lock);
}

void http_guard_counts(http_guard *g, metrics_http_counts *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&g->lock);
    memcpy(out->refused, g->refused, sizeof out->refused);
    for (int i = 0; i < SLOT_COUNT; i++) {
        out->open += g->slots[i].used;
        out->open_scrapers += g->slots[i].used && g->slots[i].scraper;
    }
    pthread_mutex_unlock(&g->lock);
}
