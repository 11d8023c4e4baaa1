/*
 * cli_curve_server.c - a tool's CURVE server sockets and their ZAP handler
 * (cli_curve_server.h).
 */
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "cli_curve_server.h"

int cli_curve_server_open(cli_curve_server *s, void *ctx, const cli_curve_server_files *files, char *err,
                          size_t err_bytes)
{
    s->zap = NULL;
    for (int r = 0; r < AUTH_ZAP_REJECT_COUNT_; r++) {
        atomic_store_explicit(&s->counts.rejected[r], 0, memory_order_relaxed);
        atomic_store_explicit(&s->counts.retries[r], 0, memory_order_relaxed);
    }
    if (files->secret_key == NULL && files->allow == NULL)
        return 0;
    if (files->secret_key == NULL || files->allow == NULL) {
        snprintf(err, err_bytes, "%s and %s go together (this end's key pair and the clients it lets in)",
                 files->secret_option, files->allow_option);
        return -1;
    }
    curve_key_pair pair;
    curve_allow_list allow;
    char why[512];
    if (curve_key_file_read(files->secret_key, 1, &pair, why, sizeof why) != CURVE_KEY_OK) {
        snprintf(err, err_bytes, "%s: %s", files->secret_option, why);
        return -1;
    }
    if (curve_allow_list_load(files->allow, &allow, why, sizeof why) != CURVE_KEY_OK) {
        memset(&pair, 0, sizeof pair);
        snprintf(err, err_bytes, "%s: %s", files->allow_option, why);
        return -1;
    }
    memcpy(s->secret, pair.secret_key, sizeof s->secret);
    memset(&pair, 0, sizeof pair);
    auth_zap_error e = auth_zap_create(&s->zap, ctx, &allow, &s->counts, err, err_bytes);
    curve_allow_list_free(&allow);
    if (e != AUTH_ZAP_OK)
        memset(s->secret, 0, sizeof s->secret);
    return e == AUTH_ZAP_OK ? 0 : -1;
}

int cli_curve_server_secure(cli_curve_server *s, void *sock, const char *role, connection_watch *connections,
                            char *err, size_t err_bytes)
{
    if (s->zap == NULL)
        return 0;
    int server = 1;
    /* The ZAP domain is the socket's role, as on the daemon's sockets: a
     * refusal is told apart by socket (auth_zap_watch). */
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &server, sizeof server) != 0 ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, s->secret, sizeof s->secret) != 0 ||
        zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, role, strlen(role)) != 0) {
        snprintf(err, err_bytes, "%s: CURVE socket options: %s", role, zmq_strerror(zmq_errno()));
        return -1;
    }
    return auth_zap_watch(s->zap, sock, role, connections, err, err_bytes) == AUTH_ZAP_OK ? 0 : -1;
}

int cli_curve_server_start(cli_curve_server *s, char *err, size_t err_bytes)
{
    memset(s->secret, 0, sizeof s->secret); /* in the sockets now */
    if (s->zap == NULL)
        return 0;
    return auth_zap_start(s->zap, err, err_bytes) == AUTH_ZAP_OK ? 0 : -1;
}

void cli_curve_server_counts(const cli_curve_server *s, uint64_t out[AUTH_ZAP_REJECT_COUNT_])
{
    for (int r = 0; r < AUTH_ZAP_REJECT_COUNT_; r++)
        out[r] = atomic_load_explicit(&s->counts.rejected[r], memory_order_relaxed);
}

int cli_curve_server_on(const cli_curve_server *s)
{
    return s->zap != NULL;
}

void cli_curve_server_close(cli_curve_server *s)
{
    memset(s->secret, 0, sizeof s->secret);
    auth_zap_destroy(&s->zap);
}

void cli_curve_server_json(cli_text *t, const uint64_t counts[AUTH_ZAP_REJECT_COUNT_])
{
    cli_text_put(t, "{");
    for (int r = 0; r < AUTH_ZAP_REJECT_COUNT_; r++)
        cli_text_put(t, "%s\"%s\":%llu", r ? "," : "", auth_zap_reject_name((auth_zap_reject)r),
                     (unsigned long long)counts[r]);
    cli_text_put(t, "}");
}

void cli_curve_server_prometheus(cli_text *t, const char *name, const char *labels,
                                 const uint64_t counts[AUTH_ZAP_REJECT_COUNT_])
{
    for (int r = 0; r < AUTH_ZAP_REJECT_COUNT_; r++)
        cli_text_put(t, "%s{%sreason=\"%s\"} %llu\n", name, labels, auth_zap_reject_name((auth_zap_reject)r),
                     (unsigned long long)counts[r]);
}
