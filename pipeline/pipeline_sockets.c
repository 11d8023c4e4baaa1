/*
 * pipeline_sockets.c - the daemon's ZeroMQ context and its three sockets:
 * input (PULL, SUB, or a DEALER to eigstream-dispatch), output (output.pattern pub: an XPUB with
 * ZMQ_XPUB_NODROP; push: a PUSH), metrics (PUB, optional). With security.*
 * set, each is a CURVE server with the daemon's key pair, and the ZAP
 * handler (auth_zap.h) lets in the allowed client keys only; but the
 * DEALER to eigstream-dispatch, which is the dispatcher's CURVE client
 * (security.curve_dispatcher_key: the dispatcher decides who gets frames).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "engine.h"
#include "transport_memory.h"

/* The ZeroMQ I/O threads: one per input socket (input.io_threads; socket k
 * on thread k by ZMQ_AFFINITY), then one for the output, so that a frame
 * arriving and an eigenspace leaving are never copied by one thread in turn
 * (ZeroMQ otherwise picks the least-loaded thread at each connection, and
 * may pick the same one for both). */
#define PIPELINE_ZMQ_IO_THREADS(cfg) ((cfg)->input.io_threads + 1)
#define PIPELINE_ZMQ_INPUT_AFFINITY(k) (UINT64_C(1) << (k))
#define PIPELINE_ZMQ_OUTPUT_AFFINITY(cfg) (UINT64_C(1) << (cfg)->input.io_threads)

#define OUTPUT_LINGER_MS 2000 /* how long shutdown waits for the last outputs to leave */
#define METRICS_LINGER_MS 200
#define OUTPUT_SEND_WAIT_MIN_MS 100 /* the shortest bounded wait of a refused send */

/* One integer socket option; an error names the socket and the option. */
static pipeline_error set_option(void *s, const char *role, int option, const char *name, const void *value,
                                 size_t bytes, char *err, size_t err_bytes)
{
    if (zmq_setsockopt(s, option, value, bytes) == 0)
        return PIPELINE_OK;
    error_text_set(err, err_bytes, "%s: cannot set %s: %s", role, name, zmq_strerror(errno));
    return PIPELINE_ESOCKET;
}

#define SET_OPTION(s, role, option, value)                                                              \
    do {                                                                                                \
        pipeline_error e_ = set_option(s, role, option, #option, &(value), sizeof(value), err, err_bytes); \
        if (e_ != PIPELINE_OK)                                                                          \
            return e_;                                                                                  \
    } while (0)

/* The ZAP handler's error as the pipeline's (its text is already in err). */
static pipeline_error from_auth(auth_zap_error e)
{
    switch (e) {
    case AUTH_ZAP_OK: return PIPELINE_OK;
    case AUTH_ZAP_EINVAL: return PIPELINE_EINVAL;
    case AUTH_ZAP_ENOMEM: return PIPELINE_ENOMEM;
    case AUTH_ZAP_ESOCKET: return PIPELINE_ESOCKET;
    case AUTH_ZAP_ETHREAD: return PIPELINE_ETHREAD;
    }
    return PIPELINE_ESOCKET;
}

/* security.*: the key pair and the allow-list (a key file that is missing,
 * malformed or readable by others stops the start), then the ZAP handler,
 * bound before any socket so that no handshake finds none. */
static pipeline_error security_open(pipeline *p, char *err, size_t err_bytes)
{
    const eigstream_config *cfg = &p->cfg;
    char why[CONFIG_ERROR_MAX];
    curve_key_pair keys;
    curve_allow_list allow;
    if (cfg->security.curve_secret_key[0] == '\0')
        return PIPELINE_OK;
    if (curve_key_file_read(cfg->security.curve_secret_key, 1, &keys, why, sizeof why) != CURVE_KEY_OK) {
        error_text_set(err, err_bytes, "security.curve_secret_key: %s", why);
        return PIPELINE_EINVAL;
    }
    if (curve_allow_list_load(cfg->security.curve_allow, &allow, why, sizeof why) != CURVE_KEY_OK) {
        memset(&keys, 0, sizeof keys);
        error_text_set(err, err_bytes, "security.curve_allow: %s", why);
        return PIPELINE_EINVAL;
    }
    memcpy(p->curve_secret, keys.secret_key, sizeof p->curve_secret);
    memset(&keys, 0, sizeof keys);
    LOG_INFO("security", "CURVE on every ZeroMQ socket; %zu client key(s) allowed (%s)", allow.count,
             cfg->security.curve_allow);
    auth_zap_error e = auth_zap_create(&p->auth, p->zmq, &allow, &p->stats.auth, err, err_bytes);
    curve_allow_list_free(&allow);
    return from_auth(e);
}

/* A CURVE server socket with the daemon's secret key, watched by the ZAP
 * handler; nothing without security.*. Before bind/connect. */
static pipeline_error socket_secure(pipeline *p, void *s, const char *role, connection_watch *connections, char *err,
                                    size_t err_bytes)
{
    if (p->auth == NULL)
        return PIPELINE_OK;
    int server = 1;
    SET_OPTION(s, role, ZMQ_CURVE_SERVER, server);
    pipeline_error e = set_option(s, role, ZMQ_CURVE_SECRETKEY, "ZMQ_CURVE_SECRETKEY", p->curve_secret,
                                  sizeof p->curve_secret, err, err_bytes);
    if (e == PIPELINE_OK)
        e = set_option(s, role, ZMQ_ZAP_DOMAIN, "ZMQ_ZAP_DOMAIN", role, strlen(role), err, err_bytes); /* auth_zap_watch */
    return e == PIPELINE_OK ? from_auth(auth_zap_watch(p->auth, s, role, connections, err, err_bytes)) : e;
}

pipeline_error pipeline_sockets_auth_start(pipeline *p, char *err, size_t err_bytes)
{
    return p->auth != NULL ? from_auth(auth_zap_start(p->auth, err, err_bytes)) : PIPELINE_OK;
}

/* Creates a socket of type with its linger (ms) and, when hwm_option is not
 * 0, its high-water mark (ZMQ_RCVHWM or ZMQ_SNDHWM) set; secured
 * (socket_secure, feeding connections when not NULL) when security.* is set
 * and curve_server. */
static pipeline_error socket_create(pipeline *p, void **out, int type, const char *role, int linger,
                                    int hwm_option, int hwm, int curve_server, connection_watch *connections,
                                    char *err, size_t err_bytes)
{
    *out = zmq_socket(p->zmq, type);
    if (*out == NULL) {
        error_text_set(err, err_bytes, "%s: cannot create socket: %s", role, zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    SET_OPTION(*out, role, ZMQ_LINGER, linger);
    pipeline_error e = PIPELINE_OK;
    if (hwm_option != 0)
        e = set_option(*out, role, hwm_option, hwm_option == ZMQ_RCVHWM ? "ZMQ_RCVHWM" : "ZMQ_SNDHWM", &hwm,
                       sizeof hwm, err, err_bytes);
    if (e != PIPELINE_OK || !curve_server)
        return e;
    return socket_secure(p, *out, role, connections, err, err_bytes);
}

static pipeline_error socket_attach(void *s, const char *role, const char *endpoint, int bind, char *err,
                                    size_t err_bytes)
{
    if ((bind ? zmq_bind(s, endpoint) : zmq_connect(s, endpoint)) == 0)
        return PIPELINE_OK;
    error_text_set(err, err_bytes, "%s: cannot %s %s: %s", role, bind ? "bind" : "connect", endpoint,
                       zmq_strerror(errno));
    return PIPELINE_ESOCKET;
}

/* input.pattern dispatch with security.*: DEALER k is a CURVE client of
 * eigstream-dispatch (which binds and lets in the daemons' keys), with the
 * daemon's own pair and security.curve_dispatcher_key as the server key.
 * The pair is read again here: the pipeline keeps only its secret half. */
static pipeline_error input_dispatch_curve(pipeline *p, int k, char *err, size_t err_bytes)
{
    const eigstream_config *cfg = &p->cfg;
    char why[CONFIG_ERROR_MAX];
    curve_key_pair own, dispatcher;
    if (p->auth == NULL)
        return PIPELINE_OK;
    if (curve_key_file_read(cfg->security.curve_dispatcher_key, 0, &dispatcher, why, sizeof why) != CURVE_KEY_OK) {
        error_text_set(err, err_bytes, "security.curve_dispatcher_key: %s", why);
        return PIPELINE_EINVAL;
    }
    if (curve_key_file_read(cfg->security.curve_secret_key, 1, &own, why, sizeof why) != CURVE_KEY_OK) {
        error_text_set(err, err_bytes, "security.curve_secret_key: %s", why);
        return PIPELINE_EINVAL;
    }
    void *s = p->receive.inputs[k];
    pipeline_error e = set_option(s, "input", ZMQ_CURVE_SERVERKEY, "ZMQ_CURVE_SERVERKEY", dispatcher.public_key,
                                  CURVE_KEY_Z85_LENGTH + 1, err, err_bytes);
    if (e == PIPELINE_OK)
        e = set_option(s, "input", ZMQ_CURVE_PUBLICKEY, "ZMQ_CURVE_PUBLICKEY", own.public_key,
                       CURVE_KEY_Z85_LENGTH + 1, err, err_bytes);
    if (e == PIPELINE_OK)
        e = set_option(s, "input", ZMQ_CURVE_SECRETKEY, "ZMQ_CURVE_SECRETKEY", own.secret_key,
                       CURVE_KEY_Z85_LENGTH + 1, err, err_bytes);
    memset(&own, 0, sizeof own);
    if (e == PIPELINE_OK && k == 0)
        LOG_INFO("security", "input: CURVE client of eigstream-dispatch (server key %s)",
                 cfg->security.curve_dispatcher_key);
    return e;
}

/* input.pattern dispatch, DEALER k: its control messages go only to a
 * completed connection (ZMQ_IMMEDIATE: with CURVE, one whose handshake
 * succeeded), so a READY is never queued for a dispatcher that is not
 * there; the dispatch client tries again. With input.io_threads = K above 1
 * each DEALER is a peer of its own to the dispatcher, with its own credit:
 * one connection carries ~3 GB/s, less than two GPUs solve. */
static pipeline_error input_dispatch_open(pipeline *p, int k, char *err, size_t err_bytes)
{
    /* The daemon's name in the dispatcher's logs and metrics: host:pid, and
     * host:pid/K for its K-th DEALER when it has several. */
    char id[128] = "eigstream";
    size_t used = gethostname(id, sizeof id - 24) == 0 ? strnlen(id, sizeof id - 24) : strlen(id);
    if (p->cfg.input.io_threads > 1)
        snprintf(id + used, sizeof id - used, ":%ld/%d", (long)getpid(), k + 1);
    else
        snprintf(id + used, sizeof id - used, ":%ld", (long)getpid());
    if (zmq_setsockopt(p->receive.inputs[k], ZMQ_ROUTING_ID, id, strlen(id)) != 0) {
        error_text_set(err, err_bytes, "input: cannot set ZMQ_ROUTING_ID: %s", zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    int immediate = 1;
    SET_OPTION(p->receive.inputs[k], "input", ZMQ_IMMEDIATE, immediate);
    pipeline_error e = input_dispatch_curve(p, k, err, err_bytes);
    if (e != PIPELINE_OK)
        return e;
    if (dispatch_client_create(p->receive.inputs[k], p->cfg.input.heartbeat_ms, p->cfg.input.heartbeat_liveness,
                               &p->receive.dispatch[k]) != DISPATCH_CLIENT_OK) {
        error_text_set(err, err_bytes, "input: cannot create the dispatch client");
        return PIPELINE_ENOMEM;
    }
    return PIPELINE_OK;
}

/* ZMQ_MAXMSGSIZE, the largest single part ZeroMQ takes: twice the largest
 * part a valid message has (a whole frame's payload in full storage, an IQ
 * cube), at most input.max_message_bytes. ZeroMQ delivers a message only
 * once all its parts are in, so the receive loop's sum limit
 * (input.max_message_bytes, stage_receive.c) cannot keep ZeroMQ from
 * buffering a message; this keeps each buffered part near one frame's size,
 * and a part above it makes ZeroMQ drop the connection as the part's length
 * arrives, before it allocates anything. Twice, so that a payload a little
 * longer than its header says still reaches the receiver to be counted
 * (oversized) rather than cut off. */
static int64_t input_part_limit(const pipeline *p)
{
    const frame_shape *c = &p->shape;
    uint64_t frame = c->iq_input ? (uint64_t)c->n * c->iq_pulses * c->iq_gates * protocol_iq_sample_bytes(c->iq_format)
                                 : (uint64_t)c->matrices * protocol_matrix_bytes(c->n, (uint8_t)c->precision,
                                                                                 PROTOCOL_STORAGE_FULL);
    uint64_t limit = 2 * frame + PROTOCOL_HEADER_BYTES;
    return limit < (uint64_t)p->cfg.input.max_message_bytes ? (int64_t)limit : p->cfg.input.max_message_bytes;
}

/* Input socket k: its own ZeroMQ I/O thread (ZMQ_AFFINITY), the message
 * limit, the subscription. Options that must precede bind/connect are set
 * between the two. */
static pipeline_error input_socket_open(pipeline *p, int k, char *err, size_t err_bytes)
{
    const eigstream_config *cfg = &p->cfg;
    int sub = cfg->input.pattern == CONFIG_INPUT_SUB, dispatch = cfg->input.pattern == CONFIG_INPUT_DISPATCH;
    void **s = &p->receive.inputs[k];
    /* Behind a dispatcher the input is its CURVE client (input_dispatch_curve). */
    pipeline_error e = socket_create(p, s, sub ? ZMQ_SUB : dispatch ? ZMQ_DEALER : ZMQ_PULL, "input", 0,
                                     ZMQ_RCVHWM, cfg->input.hwm, !dispatch, NULL, err, err_bytes);
    if (e != PIPELINE_OK)
        return e;
    if (dispatch && (e = input_dispatch_open(p, k, err, err_bytes)) != PIPELINE_OK)
        return e;
    /* A part above the limit makes ZeroMQ drop the connection rather than
     * buffer it; smaller lies about sizes are the receiver's rejects. */
    int64_t max_bytes = input_part_limit(p);
    SET_OPTION(*s, "input", ZMQ_MAXMSGSIZE, max_bytes);
    uint64_t affinity = PIPELINE_ZMQ_INPUT_AFFINITY(k);
    SET_OPTION(*s, "input", ZMQ_AFFINITY, affinity);
    if (sub) {
        uint8_t prefix[PROTOCOL_PREFIX_BYTES] = {'E', 'I', 'G', 'S', PROTOCOL_VERSION, PROTOCOL_KIND_COVARIANCE};
        SET_OPTION(*s, "input", ZMQ_SUBSCRIBE, prefix);
    }
    char endpoint[CONFIG_STRING_MAX];
    config_input_endpoint(cfg, k, endpoint, sizeof endpoint);
    return socket_attach(*s, "input", endpoint, cfg->input.bind, err, err_bytes);
}

/* input.io_threads sockets (several: each a connection to the source's
 * PUSH, which deals frames over them in turn, or a DEALER of its own to
 * eigstream-dispatch; stage_receive_merge.c). */
static pipeline_error input_open(pipeline *p, char *err, size_t err_bytes)
{
    pipeline_error e = PIPELINE_OK;
    for (int k = 0; e == PIPELINE_OK && k < p->cfg.input.io_threads; k++)
        e = input_socket_open(p, k, err, err_bytes);
    return e;
}

/* The bounded wait of a refused send for a deadline (see output_open). */
static int output_wait_ms(int deadline_ms)
{
    return deadline_ms > OUTPUT_SEND_WAIT_MIN_MS ? deadline_ms : OUTPUT_SEND_WAIT_MIN_MS;
}

/* Refused unsubscriptions in one pass from which the heap is given back:
 * a client that leaves unsubscribes everything it sent (libzmq's XPUB_MANUAL
 * does it for the pipe), so a flood's departure brings that many at once. */
#define SUBSCRIPTIONS_LEFT_TRIM 1024
#define SUBSCRIPTIONS_TRIM_INTERVAL_NS 1000000000ull

/* Gives the heap's free memory back to the system (transport_memory.h) once
 * `left` says a flood left, or later when one is pending: at most once a
 * second in the process (the heap is the process's, and so is this state;
 * a client sending junk unsubscriptions cannot make the threads that call
 * this trim often). */
static void subscriptions_left_trim(size_t left)
{
    static _Atomic uint64_t last_ns;
    static atomic_int pending;
    if (left >= SUBSCRIPTIONS_LEFT_TRIM)
        atomic_store(&pending, 1);
    if (!atomic_load(&pending))
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, last = atomic_load(&last_ns);
    if (now - last < SUBSCRIPTIONS_TRIM_INTERVAL_NS || !atomic_compare_exchange_strong(&last_ns, &last, now))
        return;
    atomic_store(&pending, 0);
    if (transport_return_memory() == 0)
        LOG_INFO("publish", "a client's refused subscriptions went with it: free memory given back to the system");
}

void pipeline_subscriptions_apply(pipeline *p, void *s, const uint8_t *sends, size_t sends_bytes)
{
    /* A subscription longer than this is refused whatever it holds. */
    uint8_t msg[1 + PROTOCOL_PREFIX_BYTES + 1];
    int bytes;
    size_t left = 0;
    while ((bytes = zmq_recv(s, msg, sizeof msg, ZMQ_DONTWAIT)) >= 0) {
        if (bytes == 0 || msg[0] > 1)
            continue; /* not a subscription message */
        size_t prefix = (size_t)bytes - 1;
        if (prefix > sends_bytes || memcmp(msg + 1, sends, prefix) != 0) {
            if (msg[0] == 1)
                atomic_fetch_add_explicit(&p->stats.subscriptions_refused, 1, memory_order_relaxed);
            else
                left++;
            continue;
        }
        /* Applied to the subscriber that sent it (ZeroMQ's last pipe); an
         * unsubscription it never made changes nothing. */
        if (zmq_setsockopt(s, msg[0] == 1 ? ZMQ_SUBSCRIBE : ZMQ_UNSUBSCRIBE, msg + 1, prefix) != 0)
            LOG_WARN("publish", "cannot apply a subscription: %s", zmq_strerror(errno));
        else
            LOG_DEBUG("publish", "subscriber %s (%zu-byte prefix)", msg[0] == 1 ? "subscribed" : "left", prefix);
    }
    subscriptions_left_trim(left);
}

void pipeline_sockets_output_wait_update(pipeline *p)
{
    int wait = output_wait_ms(pipeline_live_get(p)->deadline_ms);
    if (wait == p->output_wait_ms)
        return;
    if (zmq_setsockopt(p->publish.output, ZMQ_SNDTIMEO, &wait, sizeof wait) != 0) {
        LOG_ERROR("publish", "cannot set the output's send wait to %d ms: %s", wait, zmq_strerror(errno));
        return;
    }
    p->output_wait_ms = wait;
}

static pipeline_error output_open(pipeline *p, char *err, size_t err_bytes)
{
    const eigstream_config *cfg = &p->cfg;
    int push = cfg->output.pattern == CONFIG_OUTPUT_PUSH;
    /* The output's connections, watched so that pipeline_sockets_flush can
     * wait for its receivers to read what was written (connection_watch.h
     * says why): under CURVE fed by the handshake counter's monitor (a
     * socket has one), else by a monitor of its own, set before attaching. */
    if (p->auth != NULL && connection_watch_create_fed(&p->output_watch) != 0)
        LOG_WARN("publish", "cannot watch the output's connections: at shutdown the last frames are not waited "
                            "for past ZeroMQ");
    pipeline_error e = socket_create(p, &p->publish.output, push ? ZMQ_PUSH : ZMQ_XPUB, "output", OUTPUT_LINGER_MS,
                                     ZMQ_SNDHWM, cfg->output.hwm, 1, p->output_watch, err, err_bytes);
    if (e != PIPELINE_OK)
        return e;
    /* A PUB drops silently for a subscriber at its HWM; an XPUB with NODROP
     * refuses the send instead (EAGAIN), so that the publish stage counts
     * the frame as subscriber_slow. PUSH blocks without a peer. Either way
     * a bounded wait, the frame's deadline but at least
     * OUTPUT_SEND_WAIT_MIN_MS (a peer's reconnection or a busy machine must
     * not turn a millisecond deadline into lost frames), turns the refusal
     * into a counted drop. */
    int nodrop = 1;
    p->output_wait_ms = output_wait_ms(cfg->frame.deadline_ms);
    if (!push) {
        SET_OPTION(p->publish.output, "output", ZMQ_XPUB_NODROP, nodrop);
        SET_OPTION(p->publish.output, "output", ZMQ_XPUB_MANUAL, nodrop); /* pipeline_subscriptions_apply */
    }
    SET_OPTION(p->publish.output, "output", ZMQ_SNDTIMEO, p->output_wait_ms);
    uint64_t affinity = PIPELINE_ZMQ_OUTPUT_AFFINITY(cfg);
    SET_OPTION(p->publish.output, "output", ZMQ_AFFINITY, affinity);
    if (p->auth == NULL && connection_watch_create(p->zmq, p->publish.output, &p->output_watch) != 0)
        LOG_WARN("publish", "cannot watch the output's connections (%s): at shutdown the last frames are not "
                            "waited for past ZeroMQ", zmq_strerror(errno));
    return socket_attach(p->publish.output, "output", cfg->output.endpoint, cfg->output.bind, err, err_bytes);
}

static pipeline_error metrics_open(pipeline *p, char *err, size_t err_bytes)
{
    if (p->cfg.metrics.endpoint[0] == '\0')
        return PIPELINE_OK;
    /* An XPUB that sends like a PUB (drops at a subscriber's HWM) but takes
     * only the empty subscription (pipeline_subscriptions_apply). */
    pipeline_error e = socket_create(p, &p->metrics_socket, ZMQ_XPUB, "metrics", METRICS_LINGER_MS, 0, 0, 1, NULL,
                                     err, err_bytes);
    if (e != PIPELINE_OK)
        return e;
    int manual = 1;
    SET_OPTION(p->metrics_socket, "metrics", ZMQ_XPUB_MANUAL, manual);

    return socket_attach(p->metrics_socket, "metrics", p->cfg.metrics.endpoint, 1, err, err_bytes);
}

/* File descriptors the daemon needs for cfg, counted from what libzmq 4.3
 * and libmicrohttpd open: *minimum to start with one peer a socket, *full
 * with every HTTP connection the server admits as well.
 *   3                    stdin, stdout, stderr
 *   + 2                  the signal pipe (app/main.c)
 *   + 3                  ZeroMQ's context mailbox, its reaper's epoll and mailbox
 *   + 2 x io_threads     each I/O thread's epoll and mailbox (input.io_threads + 1)
 *   + 2 x sockets        a socket's mailbox and its listener or connection
 *                        (input.io_threads inputs, the output, the metrics PUB)
 *   + 1 x sockets        one peer each (a bound socket's first connection)
 *   + 4 x sockets + 2    security.*: a ZAP monitor pair and its mailboxes per
 *                        socket, the handler's socket and mailbox
 *   + 4                  metrics.http: listener, epoll, inter-thread pipe (2)
 *   + 1                  recording or file input
 *   + 8                  spare (the CUDA driver, /proc reads, log files)
 *   full: + every HTTP connection the server takes (the shared ones and the
 *   scrapers') - 1 and 16 more ZeroMQ peers. */
static void sockets_fd_need(const eigstream_config *cfg, long *minimum, long *full)
{
    long io_threads = PIPELINE_ZMQ_IO_THREADS(cfg);
    long sockets = cfg->input.io_threads + 1 + (cfg->metrics.endpoint[0] != '\0');
    long need = 3 + 2 + 3 + 2 * io_threads + 3 * sockets + 1 + 8;
    if (cfg->security.curve_secret_key[0] != '\0')
        need += 4 * sockets + 2;
    if (cfg->metrics.http[0] != '\0')
        need += 4;
    *minimum = need;
    *full = need + (cfg->metrics.http[0] != '\0' ? METRICS_HTTP_CONNECTIONS + METRICS_HTTP_SCRAPER_SLOTS - 1 : 0) + 16;
}

pipeline_error pipeline_check_fd_limit(const eigstream_config *cfg, char *err, size_t err_bytes)
{
    long minimum, full;
    sockets_fd_need(cfg, &minimum, &full);
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
        return PIPELINE_OK; /* nothing to compare against */
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (rlim_t)full) {
        /* Raising the soft limit up to the hard one needs no privilege. */
        struct rlimit raised = limit;
        raised.rlim_cur = limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= (rlim_t)full ? (rlim_t)full
                                                                                          : limit.rlim_max;
        if (raised.rlim_cur > limit.rlim_cur && setrlimit(RLIMIT_NOFILE, &raised) == 0)
            limit = raised;
    }
    if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= (rlim_t)full)
        return PIPELINE_OK;
    if (limit.rlim_cur < (rlim_t)minimum) {
        error_text_set(err, err_bytes,
                       "RLIMIT_NOFILE (ulimit -n) is %llu, hard limit %llu: these settings need at least %ld open "
                       "files (input.io_threads = %d, metrics.endpoint %s, metrics.http %s, security %s; "
                       "docs/operations.md, Limits); raise it (ulimit -n %ld, LimitNOFILE= under systemd)",
                       (unsigned long long)limit.rlim_cur, (unsigned long long)limit.rlim_max, minimum,
                       cfg->input.io_threads, cfg->metrics.endpoint[0] ? "on" : "off",
                       cfg->metrics.http[0] ? "on" : "off", cfg->security.curve_secret_key[0] ? "on" : "off", full);
        return PIPELINE_ELIMIT;
    }
    LOG_WARN("pipeline", "RLIMIT_NOFILE (ulimit -n) is %llu, below the %ld open files that every HTTP connection "
             "and 16 peers a socket need: connections past it are refused (raise it: ulimit -n %ld)",
             (unsigned long long)limit.rlim_cur, full, full);
    return PIPELINE_OK;
}

pipeline_error pipeline_sockets_open(pipeline *p, char *err, size_t err_bytes)
{
    /* ZeroMQ's part buffers (transport_memory.h); the daemon's main has
     * already done it before its first thread, a process embedding the
     * pipeline gets it here. */
    if (transport_tune_allocator() != 0)
        LOG_INFO("transport", "the C library's allocator cannot be tuned (not glibc, or a sanitizer's): "
                              "large message parts are mapped afresh, each page faulted in");
    p->zmq = zmq_ctx_new();
    if (p->zmq == NULL) {
        error_text_set(err, err_bytes, "cannot create the ZeroMQ context: %s", zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    /* The input's I/O threads and the output's (PIPELINE_ZMQ_IO_THREADS), so
     * that a frame arriving and an eigenspace leaving (each ~47 MB at the
     * defaults) are copied by different threads at the same time: with
     * ZeroMQ's default single I/O thread they serialize and the sustained
     * rate is 1 / (input + output transfer) instead of 1 / max(input, output). */
    if (zmq_ctx_set(p->zmq, ZMQ_IO_THREADS, PIPELINE_ZMQ_IO_THREADS(&p->cfg)) != 0) {
        error_text_set(err, err_bytes, "cannot set ZeroMQ I/O threads: %s", zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    pipeline_error e = pipeline_realtime_io(p, p->zmq, err, err_bytes);
    if (e == PIPELINE_OK)
        e = security_open(p, err, err_bytes);
    /* A file input reads its recording instead (stage_receive_file.c). */
    if (e == PIPELINE_OK && p->receive.recording == NULL)
        e = input_open(p, err, err_bytes);
    if (e == PIPELINE_OK)
        e = output_open(p, err, err_bytes);
    if (e == PIPELINE_OK)
        e = metrics_open(p, err, err_bytes);
    memset(p->curve_secret, 0, sizeof p->curve_secret); /* in the sockets now */
    return e;
}

/* Every published frame has been written to its connection or discarded by
 * a PUB once ZeroMQ has released its buffer; closing the socket before that
 * can strand messages (libzmq 4.3 leaves them queued behind a peer's HWM on
 * a closed socket). Written is not yet read: a receiver at its HWM loses
 * what it has not read when the daemon closes first, so the flush also
 * waits for the output's kernel send queues to empty. One OUTPUT_LINGER_MS
 * for both; what is left then is named (counted out, perhaps not delivered). */
void pipeline_sockets_flush(pipeline *p)
{
    uint64_t deadline = metrics_now_ns() + (uint64_t)OUTPUT_LINGER_MS * 1000000u;
    while (pool_available(&p->outputs) != p->outputs.count && metrics_now_ns() < deadline) {
        struct timespec five = {0, 5000000L};
        nanosleep(&five, NULL);
    }
    size_t queued = p->outputs.count - pool_available(&p->outputs);
    if (queued > 0) {
        LOG_WARN("pipeline", "%zu published frames still queued for the output after %d ms: not delivered", queued,
                 OUTPUT_LINGER_MS);
        return;
    }
    if (p->output_watch != NULL && connection_watch_drain(p->output_watch, deadline, NULL) != 0)
        LOG_WARN("pipeline", "%ld bytes of published frames still unread by the output's receivers after %d ms: "
                             "the last frames may not be delivered", connection_watch_unread(p->output_watch),
                 OUTPUT_LINGER_MS);
}

void pipeline_sockets_close(pipeline *p)
{
    for (int k = 0; k < CONFIG_INPUT_IO_THREADS_MAX; k++)
        dispatch_client_destroy(&p->receive.dispatch[k]);
    for (int k = 0; k < CONFIG_INPUT_IO_THREADS_MAX; k++)
        if (p->receive.inputs[k] != NULL)
            zmq_close(p->receive.inputs[k]);
    memset(p->receive.inputs, 0, sizeof p->receive.inputs);
    /* The output's watch: with a monitor of its own, before its socket
     * closes; fed by the ZAP thread (CURVE), after that thread has stopped. */
    if (p->auth == NULL)
        connection_watch_destroy(&p->output_watch);
    if (p->publish.output != NULL)
        zmq_close(p->publish.output);
    if (p->metrics_socket != NULL)
        zmq_close(p->metrics_socket);
    p->publish.output = p->metrics_socket = NULL;
    auth_zap_destroy(&p->auth); /* its sockets too, before the context ends */
    connection_watch_destroy(&p->output_watch);
    /* Term waits (output linger at most) for queued outputs; their zero-copy
     * buffers come back to the output pool, which is freed after this. */
    if (p->zmq != NULL)
        while (zmq_ctx_term(p->zmq) != 0 && errno == EINTR)
            ;
    p->zmq = NULL;
}
