/*
 * metrics_http.c - the HTTP server of the metrics (metrics_http.h).
 *
 * The listening socket is opened here rather than by libmicrohttpd, so that
 * a failing bind is reported with the errno it failed with; the server then
 * owns it (MHD_OPTION_LISTEN_SOCKET) and closes it when stopped. Who may
 * connect and for how long is the guard's (metrics_http_guard.c), called
 * from libmicrohttpd's accept policy and connection notifications.
 */
#include "metrics_http.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "error_text.h"
#include "metrics_http_guard.h"
#include "metrics_prometheus.h"

#define LISTEN_BACKLOG 64

struct metrics_http {
    struct MHD_Daemon *daemon;
    http_guard *guard;
    int port;
    pthread_mutex_t lock; /* guards documents; held only for a memcpy */
    size_t cap;
    struct {
        char *text;
        size_t len; /* 0: not published yet */
    } documents[METRICS_HTTP_DOCUMENT_COUNT_];
};

/* ---- listening socket ---------------------------------------------------------------------- */

/* Splits "HOST:PORT" (HOST may be "[v6]") into host and port; 0 or -1. */
static int address_split(const char *address, char *host, size_t host_cap, char *port, size_t port_cap)
{
    const char *colon = strrchr(address, ':');
    if (colon == NULL || (size_t)snprintf(port, port_cap, "%s", colon + 1) >= port_cap)
        return -1;
    const char *start = address;
    size_t len = (size_t)(colon - address);
    if (len >= 2 && address[0] == '[' && address[len - 1] == ']') {
        start++;
        len -= 2;
    }
    if (len == 0 || len >= host_cap)
        return -1;
    memcpy(host, start, len);
    host[len] = '\0';
    return 0;
}

/* A socket bound to the first address host:port resolves to, listening;
 * its fd, or -1 with errno set. */
static int listen_first(const struct addrinfo *list)
{
    int fd = -1;
    for (const struct addrinfo *a = list; a != NULL; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, LISTEN_BACKLOG) == 0)
            return fd;
        int saved = errno;
        close(fd);
        fd = -1;
        errno = saved;
    }
    return fd;
}

/* The port a listening socket has (the chosen one after port 0). */
static int socket_port(int fd)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
        return -1;
    if (sa.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
    return ntohs(((struct sockaddr_in *)&sa)->sin_port);
}

const char *metrics_http_strerror(metrics_http_error e)
{
    switch (e) {
    case METRICS_HTTP_OK: return "ok";
    case METRICS_HTTP_EINVAL: return "not HOST:PORT";
    case METRICS_HTTP_ENOMEM: return "out of memory";
    case METRICS_HTTP_ESOCKET: return "socket error";
    case METRICS_HTTP_ETHREAD: return "the server thread could not be started";
    }
    return "unknown metrics_http error";
}


static metrics_http_error address_listen(const char *address, int *fd_out, char *err, size_t err_bytes)
{
    char host[256], port[16];
    if (address_split(address, host, sizeof host, port, sizeof port) != 0) {
        return ERROR_TEXT_FAIL(METRICS_HTTP_EINVAL, err, err_bytes, "metrics.http: \"%s\" is not HOST:PORT", address);
    }
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
    struct addrinfo *list = NULL;
    int rc = getaddrinfo(host, port, &hints, &list);
    if (rc != 0) {
        return ERROR_TEXT_FAIL(METRICS_HTTP_ESOCKET, err, err_bytes, "metrics.http: cannot resolve %s: %s", address, gai_strerror(rc));
    }
    errno = 0;
    *fd_out = listen_first(list);
    int saved = errno;
    freeaddrinfo(list);
    if (*fd_out < 0) {
        return ERROR_TEXT_FAIL(METRICS_HTTP_ESOCKET, err, err_bytes, "metrics.http: cannot bind %s: %s", address, strerror(saved));
    }
    return METRICS_HTTP_OK;
}

/* ---- requests -------------------------------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type, void *body,
                               size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    if (r == NULL) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    enum MHD_Result result = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return result;
}

static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned status, const char *text)
{
    return respond(c, status, "text/plain; charset=utf-8", (void *)text, strlen(text), MHD_RESPMEM_PERSISTENT);
}

/* Serves a copy of document d, made under the lock (never the live buffer:
 * the response outlives the lock). */
static enum MHD_Result respond_document(metrics_http *h, struct MHD_Connection *c, metrics_http_document d,
                                        const char *type)
{
    char *copy = NULL;
    size_t len;
    pthread_mutex_lock(&h->lock);
    len = h->documents[d].len;
    if (len > 0 && (copy = malloc(len)) != NULL)
        memcpy(copy, h->documents[d].text, len);
    pthread_mutex_unlock(&h->lock);
    if (len == 0)
        return respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "metrics not formatted yet\n");
    if (copy == NULL)
        return respond_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return respond(c, MHD_HTTP_OK, type, copy, len, MHD_RESPMEM_MUST_FREE);
}

/* libmicrohttpd's access handler: one call per request is enough (GET and
 * HEAD carry no body; a body of another method is never read: 405). */
static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size,
                              void **request_state)
{
    (void)version, (void)upload_data, (void)upload_data_size, (void)request_state;
    metrics_http *h = cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return respond_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    if (strcmp(url, "/metrics") == 0)
        return respond_document(h, c, METRICS_HTTP_PROMETHEUS, METRICS_PROMETHEUS_CONTENT_TYPE);
    if (strcmp(url, "/api/metrics") == 0)
        return respond_document(h, c, METRICS_HTTP_API_JSON, "application/json");
    for (const metrics_http_asset *a = metrics_http_assets; a->path != NULL; a++)
        if (strcmp(url, a->path) == 0)
            return respond(c, MHD_HTTP_OK, a->content_type, (void *)a->bytes, a->length, MHD_RESPMEM_PERSISTENT);
    return respond_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* ---- the guard's hooks (libmicrohttpd's one polling thread) ------------------------------- */

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addr_len)
{
    metrics_http *h = cls;
    return http_guard_admit(h->guard, addr, addr_len) ? MHD_YES : MHD_NO;
}

static void connection_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    metrics_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        http_guard_closed(h->guard, *socket_context);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *peer = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (fd == NULL || peer == NULL || peer->client_addr == NULL)
        return; /* untracked: never cut (libmicrohttpd's idle timeout still applies) */
    socklen_t len = peer->client_addr->sa_family == AF_INET6 ? (socklen_t)sizeof(struct sockaddr_in6)
                                                             : (socklen_t)sizeof(struct sockaddr_in);
    http_guard_opened(h->guard, fd->connect_fd, peer->client_addr, len, socket_context);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **request_state,
                              enum MHD_RequestTerminationCode code)
{
    (void)request_state, (void)code;
    metrics_http *h = cls;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info != NULL)
        http_guard_request_done(h->guard, info->socket_context);
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

/* One polling thread, no thread pool: the guard's admit and opened calls
 * for a connection follow each other on it (metrics_http_guard.h). The
 * server's own connection limit is one above the guard's slots, so that
 * the guard sees (and counts) every refusal first. */
static metrics_http_error server_start(metrics_http *h, int fd, char *err, size_t err_bytes)
{
    unsigned flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD;
    unsigned int limit = METRICS_HTTP_CONNECTIONS + METRICS_HTTP_SCRAPER_SLOTS + 1;
    h->daemon = MHD_start_daemon(flags, 0, accept_policy, h, answer, h,
                                 MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                                 MHD_OPTION_CONNECTION_LIMIT, limit,
                                 MHD_OPTION_NOTIFY_CONNECTION, connection_notify, h,
                                 MHD_OPTION_NOTIFY_COMPLETED, request_completed, h,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_HTTP_TIMEOUT_S,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_HTTP_MEMORY_BYTES,
                                 MHD_OPTION_END);
    if (h->daemon == NULL) {
        return ERROR_TEXT_FAIL(METRICS_HTTP_ETHREAD, err, err_bytes, "metrics.http: cannot start the HTTP server: %s", strerror(errno));
    }
    return METRICS_HTTP_OK;
}

metrics_http_error metrics_http_start(metrics_http **out, const char *address, const metrics_http_limits *limits,
                                      size_t document_cap, char *err, size_t err_bytes)
{
    *out = NULL;
    metrics_http *h = calloc(1, sizeof *h);
    if (h == NULL) {
        return ERROR_TEXT_FAIL(METRICS_HTTP_ENOMEM, err, err_bytes, "metrics.http: out of memory");
    }
    pthread_mutex_init(&h->lock, NULL);
    h->cap = document_cap;
    for (int d = 0; d < METRICS_HTTP_DOCUMENT_COUNT_; d++)
        if ((h->documents[d].text = malloc(document_cap)) == NULL) {
            metrics_http_stop(&h);
            return ERROR_TEXT_FAIL(METRICS_HTTP_ENOMEM, err, err_bytes, "metrics.http: out of memory");
        }
    metrics_http_error e = http_guard_create(&h->guard, limits, err, err_bytes);
    if (e != METRICS_HTTP_OK) {
        metrics_http_stop(&h);
        return e;
    }
    int fd = -1;
    e = address_listen(address, &fd, err, err_bytes);
    if (e == METRICS_HTTP_OK) {
        h->port = socket_port(fd);
        if ((e = server_start(h, fd, err, err_bytes)) != METRICS_HTTP_OK)
            close(fd);
    }
    if (e != METRICS_HTTP_OK) {
        metrics_http_stop(&h);
        return e;
    }
    *out = h;
    return METRICS_HTTP_OK;
}

int metrics_http_port(const metrics_http *h)
{
    return h->port;
}

const char *metrics_http_refusal_name(metrics_http_refusal r)
{
    switch (r) {
    case METRICS_HTTP_REFUSED_PER_ADDRESS: return "per_address";
    case METRICS_HTTP_REFUSED_FULL: return "full";
    case METRICS_HTTP_REFUSED_DEADLINE: return "deadline";
    case METRICS_HTTP_REFUSAL_COUNT_: break;
    }
    return "?";
}

void metrics_http_counts_read(metrics_http *h, metrics_http_counts *out)
{
    http_guard_counts(h->guard, out);
}

int metrics_http_publish(metrics_http *h, metrics_http_document d, const char *text, size_t len)
{
    if (len > h->cap)
        return -1;
    pthread_mutex_lock(&h->lock);
    memcpy(h->documents[d].text, text, len);
    h->documents[d].len = len;
    pthread_mutex_unlock(&h->lock);
    return 0;
}

void metrics_http_stop(metrics_http **hp)
{
    metrics_http *h = hp != NULL ? *hp : NULL;
    if (h == NULL)
        return;
    http_guard_stop(h->guard); /* first: no cut while the server closes its sockets */
    if (h->daemon != NULL)
        MHD_stop_daemon(h->daemon); /* joins the server thread, closes the listening socket */
    http_guard_destroy(&h->guard);
    for (int d = 0; d < METRICS_HTTP_DOCUMENT_COUNT_; d++)
        free(h->documents[d].text);
    pthread_mutex_destroy(&h->lock);
    free(h);
    *hp = NULL;
}
