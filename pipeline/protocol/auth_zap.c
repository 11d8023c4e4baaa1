/*
 * auth_zap.c - the ZAP handler and the handshake monitors (auth_zap.h).
 *
 * ZAP 1.0 (rfc.zeromq.org/spec/27): a request is the frames version
 * ("1.0"), request_id, domain, address, routing id, mechanism, then the
 * mechanism's credentials (CURVE: the client's 32-byte public key). The
 * reply is version, request_id, status code ("200" let in, "400" refused,
 * "500" a request the handler cannot read), status text, user id, metadata.
 *
 * Monitor events (zmq_socket_monitor, libzmq 4.3): two frames, a 6-byte
 * [uint16 event][uint32 value] in host order and the endpoint (the socket's
 * own, never the peer's); a HANDSHAKE_FAILED_* carries an error code.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "auth_zap.h"
#include "error_text.h"
#include "log.h"

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define ZAP_FRAMES_MAX 8
#define POLL_MS 100 /* how soon the thread sees a stop */

typedef struct auth_watch {
    void *monitor;               /* PAIR connected to the socket's monitor endpoint */
    connection_watch *connections; /* fed the socket's connection events, or NULL */
    char role[16];
    unsigned logged;             /* bit per auth_zap_reject: logged once */
} auth_watch;

struct auth_zap {
    void *ctx, *handler;
    curve_allow_list allow;
    auth_zap_counts *counts;     /* the caller's */
    auth_peers refused;          /* peers refused lately: their retries */
    auth_watch watches[AUTH_ZAP_WATCH_MAX];
    int watch_count;
    pthread_t thread;
    int started;
    atomic_int stop;
    uint64_t peers[AUTH_ZAP_PEERS_LOGGED]; /* FNV-1a of key + address of the peers logged */
    size_t peer_count;
    log_limiter peers_limit;     /* after the table is full */
};

static const char *const reject_names[AUTH_ZAP_REJECT_COUNT_] = {
    [AUTH_ZAP_KEY_NOT_ALLOWED] = "key_not_allowed",
    [AUTH_ZAP_PLAINTEXT] = "plaintext",
    [AUTH_ZAP_HANDSHAKE] = "handshake",
};

const char *auth_zap_reject_name(auth_zap_reject r)
{
    if ((int)r < 0 || r >= AUTH_ZAP_REJECT_COUNT_)
        return "unknown";
    return reject_names[r];
}

const char *auth_zap_strerror(auth_zap_error e)
{
    switch (e) {
    case AUTH_ZAP_OK: return "ok";
    case AUTH_ZAP_EINVAL: return "invalid argument";
    case AUTH_ZAP_ENOMEM: return "out of memory";
    case AUTH_ZAP_ESOCKET: return "socket error";
    case AUTH_ZAP_ETHREAD: return "thread could not be started";
    }
    return "unknown auth_zap error";
}

/* Counts one refusal for reason of the peer id (the caller mixed in the
 * socket; known = 0: a request that names no peer), as a retry when that
 * peer was refused for it lately (auth_peers.h), else as a refused client. */
static void count_reject(auth_zap *a, auth_zap_reject reason, uint64_t id, int known)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    id = auth_peer_id(id, &reason, sizeof reason);
    int retry = known && auth_peers_refused(&a->refused, id, now);
    atomic_fetch_add_explicit(retry ? &a->counts->retries[reason] : &a->counts->rejected[reason], 1,
                              memory_order_relaxed);
}

/* 1 when this key and address were not logged before (and now are). */
static int peer_first_time(auth_zap *a, const uint8_t *key, size_t key_bytes, const char *address)
{
    uint64_t h = 14695981039346656037u;
    for (size_t i = 0; i < key_bytes; i++)
        h = (h ^ key[i]) * 1099511628211u;
    for (const char *c = address; *c != '\0'; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211u;
    for (size_t i = 0; i < a->peer_count; i++)
        if (a->peers[i] == h)
            return 0;
    if (a->peer_count < AUTH_ZAP_PEERS_LOGGED) {
        a->peers[a->peer_count++] = h;
        return 1;
    }
    uint64_t suppressed;
    return log_limiter_allow(&a->peers_limit, &suppressed);
}

/* Frame i of a request as a NUL-terminated string (at most cap - 1 bytes). */
static void frame_text(zmq_msg_t *frames, int i, char *out, size_t cap)
{
    size_t len = zmq_msg_size(&frames[i]);
    if (len >= cap)
        len = cap - 1;
    memcpy(out, zmq_msg_data(&frames[i]), len);
    out[len] = '\0';
}

/* The verdict on one complete request (count frames): status code and text. */
static const char *zap_decide(auth_zap *a, zmq_msg_t *frames, int count, const char **text)
{
    char version[8], domain[16], address[64], mechanism[16];
    frame_text(frames, 0, version, sizeof version);
    if (count < 6 || strcmp(version, "1.0") != 0) {
        *text = "not a ZAP 1.0 request";
        count_reject(a, AUTH_ZAP_HANDSHAKE, 0, 0);
        LOG_WARN("auth", "ZAP request with %d frames, version \"%s\": refused", count, version);
        return "500";
    }
    frame_text(frames, 2, domain, sizeof domain);
    frame_text(frames, 3, address, sizeof address);
    frame_text(frames, 5, mechanism, sizeof mechanism);
    if (strcmp(mechanism, "CURVE") == 0 && count == 7 && zmq_msg_size(&frames[6]) == CURVE_KEY_BYTES &&
        curve_allow_list_contains(&a->allow, zmq_msg_data(&frames[6]))) {
        *text = "OK";
        return "200";
    }
    *text = "client key not allowed";
    const uint8_t *key = count == 7 ? zmq_msg_data(&frames[6]) : NULL;
    size_t key_bytes = count == 7 ? zmq_msg_size(&frames[6]) : 0;
    /* The peer: the socket (its ZAP domain), the address (IP, or over ipc
     * ":uid:gid:pid") and the key. */
    uint64_t id = auth_peer_id(AUTH_PEER_ID_SEED, domain, strlen(domain) + 1);
    id = auth_peer_id(auth_peer_id(id, address, strlen(address) + 1), key, key_bytes);
    count_reject(a, AUTH_ZAP_KEY_NOT_ALLOWED, id, 1);
    if (peer_first_time(a, key, key_bytes, address)) {
        char z85[CURVE_KEY_Z85_LENGTH + 1] = "(none)";
        if (key_bytes == CURVE_KEY_BYTES)
            zmq_z85_encode(z85, key, CURVE_KEY_BYTES);
        LOG_WARN("auth", "refused %s client key %s from %s: not in security.curve_allow (logged once per key "
                 "and address; counted in eigstream_auth_rejected_total{reason=\"key_not_allowed\"})",
                 mechanism, z85, address[0] ? address : "(local)");
    }
    return "400";
}

/* Reads one request (all its frames) and sends the reply. */
static void zap_serve(auth_zap *a)
{
    zmq_msg_t frames[ZAP_FRAMES_MAX];
    int count = 0, more = 1;
    while (more) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, a->handler, 0) < 0) {
            zmq_msg_close(&part);
            break;
        }
        more = zmq_msg_more(&part);
        if (count < ZAP_FRAMES_MAX)
            frames[count++] = part;
        else
            zmq_msg_close(&part); /* too many frames: the request is refused below */
    }
    if (count >= 2) {
        const char *text;
        const char *status = count < ZAP_FRAMES_MAX ? zap_decide(a, frames, count, &text) : "500";
        if (count >= ZAP_FRAMES_MAX)
            text = "too many frames";
        zmq_send(a->handler, "1.0", 3, ZMQ_SNDMORE);
        zmq_send(a->handler, zmq_msg_data(&frames[1]), zmq_msg_size(&frames[1]), ZMQ_SNDMORE);
        zmq_send(a->handler, status, strlen(status), ZMQ_SNDMORE);
        zmq_send(a->handler, text, strlen(text), ZMQ_SNDMORE);
        zmq_send(a->handler, "", 0, ZMQ_SNDMORE);
        zmq_send(a->handler, "", 0, 0);
    }
    for (int i = 0; i < count; i++)
        zmq_msg_close(&frames[i]);
}

/* A failed handshake that ZAP never heard of, on watched socket wi:
 * counted with the socket as its peer (libzmq names no other: see
 * auth_zap.h) and logged once per reason and socket. */
static void monitor_failure(auth_zap *a, int wi, const char *endpoint, uint16_t id, uint32_t value)
{
    auth_watch *w = &a->watches[wi];
    auth_zap_reject reason = id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
                                          value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
                                      ? AUTH_ZAP_PLAINTEXT
                                      : AUTH_ZAP_HANDSHAKE;
    count_reject(a, reason, auth_peer_id(AUTH_PEER_ID_SEED, &wi, sizeof wi), 1);
    if (w->logged & (1u << reason))
        return;
    w->logged |= 1u << reason;
    /* NO_DETAIL carries an errno: a client that hung up mid-handshake (a
     * plain-text one that read our CURVE greeting first looks like this). */
    char detail[96] = "";
    if (id == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        snprintf(detail, sizeof detail, ": the client hung up mid-handshake (%s)", strerror((int)value));
    LOG_WARN("auth", "%s %s: refused a %s%s (logged once per socket; counted in "
             "eigstream_auth_rejected_total{reason=\"%s\"}, its reconnects in eigstream_auth_retries_total)",
             w->role, endpoint, reason == AUTH_ZAP_PLAINTEXT ? "client without CURVE" : "failed CURVE handshake",
             detail, auth_zap_reject_name(reason));
}

/* One monitor event of watched socket wi: a failed handshake, counted and
 * logged unless ZAP refused it (counted there). */
static void monitor_serve(auth_zap *a, int wi)
{
    auth_watch *w = &a->watches[wi];
    uint8_t event[6];
    char endpoint[256];
    int got = zmq_recv(w->monitor, event, sizeof event, 0);
    int len = zmq_recv(w->monitor, endpoint, sizeof endpoint - 1, 0);
    if (got != 6 || len < 0)
        return;
    endpoint[len < (int)sizeof endpoint ? len : (int)sizeof endpoint - 1] = '\0';
    uint16_t id;
    uint32_t value;
    memcpy(&id, event, 2);
    memcpy(&value, event + 2, 4);
    LOG_DEBUG("auth", "%s %s: monitor event 0x%x value %u", w->role, endpoint, (unsigned)id, (unsigned)value);
    if (connection_watch_is_event(id)) {
        if (w->connections != NULL)
            connection_watch_feed(w->connections, id, value);
        return;
    }
    if (id != ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) /* AUTH: the ZAP handler's own refusal, counted there */
        monitor_failure(a, wi, endpoint, id, value);
}

static void *auth_main(void *arg)
{
    auth_zap *a = arg;
    zmq_pollitem_t items[1 + AUTH_ZAP_WATCH_MAX];
    items[0] = (zmq_pollitem_t){a->handler, 0, ZMQ_POLLIN, 0};
    for (int i = 0; i < a->watch_count; i++)
        items[1 + i] = (zmq_pollitem_t){a->watches[i].monitor, 0, ZMQ_POLLIN, 0};
    while (!atomic_load(&a->stop)) {
        int ready = zmq_poll(items, 1 + a->watch_count, POLL_MS);
        if (ready < 0 && zmq_errno() != EINTR) {
            LOG_ERROR("auth", "poll: %s; no more clients can be let in", zmq_strerror(zmq_errno()));
            break;
        }
        if (ready > 0 && (items[0].revents & ZMQ_POLLIN))
            zap_serve(a);
        for (int i = 0; ready > 0 && i < a->watch_count; i++)
            if (items[1 + i].revents & ZMQ_POLLIN)
                monitor_serve(a, i);
    }
    return NULL;
}

auth_zap_error auth_zap_create(auth_zap **out, void *ctx, curve_allow_list *allow, auth_zap_counts *counts,
                               char *err, size_t err_bytes)
{
    *out = NULL;
    auth_zap *a = calloc(1, sizeof *a);
    if (a == NULL) {
        return ERROR_TEXT_FAIL(AUTH_ZAP_ENOMEM, err, err_bytes, "out of memory");
    }
    a->ctx = ctx;
    a->counts = counts;
    a->allow = *allow;
    memset(allow, 0, sizeof *allow);
    int linger = 0;
    a->handler = zmq_socket(ctx, ZMQ_REP);
    if (a->handler == NULL || zmq_setsockopt(a->handler, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_bind(a->handler, ZAP_ENDPOINT) != 0) {
        auth_zap_error e = ERROR_TEXT_FAIL(AUTH_ZAP_ESOCKET, err, err_bytes, "security: cannot bind the ZAP handler %s: %s",
                                    ZAP_ENDPOINT, zmq_strerror(zmq_errno()));
        auth_zap_destroy(&a);
        return e;
    }
    *out = a;
    return AUTH_ZAP_OK;
}

auth_zap_error auth_zap_watch(auth_zap *a, void *socket, const char *role, connection_watch *connections,
                              char *err, size_t err_bytes)
{
    if (a->watch_count >= AUTH_ZAP_WATCH_MAX || a->started) {
        return ERROR_TEXT_FAIL(AUTH_ZAP_EINVAL, err, err_bytes, "security: %s: too many sockets to watch", role);
    }
    auth_watch *w = &a->watches[a->watch_count];
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "inproc://eigstream-auth-monitor-%d", a->watch_count);
    snprintf(w->role, sizeof w->role, "%s", role);
    w->connections = connections;
    int events = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
    if (connections != NULL)
        events |= ZMQ_EVENT_CONNECTED | ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED;
    int linger = 0;
    if (zmq_socket_monitor(socket, endpoint, events) != 0 || (w->monitor = zmq_socket(a->ctx, ZMQ_PAIR)) == NULL ||
        zmq_setsockopt(w->monitor, ZMQ_LINGER, &linger, sizeof linger) != 0 || zmq_connect(w->monitor, endpoint) != 0) {
        auth_zap_error e = ERROR_TEXT_FAIL(AUTH_ZAP_ESOCKET, err, err_bytes, "security: %s: cannot monitor its handshakes: %s",
                                    role, zmq_strerror(zmq_errno()));
        if (w->monitor != NULL)
            zmq_close(w->monitor);
        w->monitor = NULL;
        return e;
    }
    a->watch_count++;
    return AUTH_ZAP_OK;
}

auth_zap_error auth_zap_start(auth_zap *a, char *err, size_t err_bytes)
{
    int rc = pthread_create(&a->thread, NULL, auth_main, a);
    if (rc != 0) {
        return ERROR_TEXT_FAIL(AUTH_ZAP_ETHREAD, err, err_bytes, "security: cannot start the ZAP thread: %s", strerror(rc));
    }
    a->started = 1;
    return AUTH_ZAP_OK;
}

void auth_zap_destroy(auth_zap **ap)
{
    auth_zap *a = ap != NULL ? *ap : NULL;
    if (a == NULL)
        return;
    if (a->started) {
        atomic_store(&a->stop, 1);
        pthread_join(a->thread, NULL);
    }
    for (int i = 0; i < a->watch_count; i++)
        zmq_close(a->watches[i].monitor);
    if (a->handler != NULL)
        zmq_close(a->handler);
    curve_allow_list_free(&a->allow);
    free(a);
    *ap = NULL;
}
