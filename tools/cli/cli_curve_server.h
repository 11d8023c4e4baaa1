/*
 * cli_curve_server.h - a tool's sockets as CURVE servers, the daemon's way
 * (security.* in docs/operations.md): the tool's own key pair, an
 * allow-list of client keys, and a ZAP handler (auth_zap.h) in the tool's
 * ZeroMQ context that lets the listed keys in and counts every refusal by
 * reason (key_not_allowed, plaintext, handshake).
 *
 *     cli_curve_server srv = {0};
 *     if (cli_curve_server_open(&srv, ctx, &files, err, sizeof err) != 0) ...  // before any socket binds
 *     if (cli_curve_server_secure(&srv, sock, "front", NULL, err, sizeof err) != 0) ... // each socket, before bind/connect
 *     if (cli_curve_server_start(&srv, err, sizeof err) != 0) ...              // after the last secure
 *     cli_curve_server_counts(&srv, counts);                                  // any time, from the tool's thread
 *     cli_curve_server_close(&srv);                                           // before zmq_ctx_term
 *
 * The ZAP endpoint belongs to a ZeroMQ context, so one context has one
 * allow-list: sockets that let in different clients (eigstream-dispatch's
 * sources and daemons) live in contexts of their own. With neither file set
 * every call is a no-op and the sockets stay plain text.
 *
 * Library eigstream_cli. Never prints (the ZAP handler logs its refusals
 * through log.h, once per key and address or per socket).
 */
#ifndef EIGSTREAM_CLI_CURVE_SERVER_H
#define EIGSTREAM_CLI_CURVE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "auth_zap.h"
#include "connection_watch.h"
#include "cli_text.h"
#include "curve_keys.h"

/* ZMQ_MAXMSGSIZE applies to the handshake's commands too: a CURVE server
 * socket must take at least this (INITIATE is 257 bytes plus its metadata:
 * the socket type and a routing id of up to 255 bytes), else every client
 * is cut off mid-handshake, uncounted. */
#define CLI_CURVE_HANDSHAKE_BYTES 1024

/* The two files and the option names that set them (for the messages). */
typedef struct cli_curve_server_files {
    const char *secret_key, *secret_option; /* BASE.key_secret (mode 0600), e.g. "--curve-secret-key" */
    const char *allow, *allow_option;       /* a file of keys or a directory of *.key files */
} cli_curve_server_files;

typedef struct cli_curve_server {
    auth_zap *zap;                                   /* NULL: CURVE off */
    char secret[CURVE_KEY_Z85_LENGTH + 1];           /* wiped by cli_curve_server_start */
    auth_zap_counts counts;  /* the handler's counts, by auth_zap_reject: refused clients, their retries */
} cli_curve_server;

/* Reads the key pair and the allow-list (curve_keys.h: a loose secret
 * file, a writable allow-list, an empty one, a malformed key are refused)
 * and binds the ZAP handler in ctx. Both files or neither (0, CURVE off).
 * 0, or -1 with err naming the option and the problem. */
int cli_curve_server_open(cli_curve_server *s, void *ctx, const cli_curve_server_files *files, char *err,
                          size_t err_bytes);

/* Makes sock a CURVE server with the pair, its handshakes watched (role
 * names it in the log: "front") and, when connections is not NULL (a
 * connection_watch_create_fed watcher), its connection events fed to it.
 * 0 (also when CURVE is off), or -1. */
int cli_curve_server_secure(cli_curve_server *s, void *sock, const char *role, connection_watch *connections,
                            char *err, size_t err_bytes);

/* Starts the handler's thread and wipes the secret key. 0 or -1. */
int cli_curve_server_start(cli_curve_server *s, char *err, size_t err_bytes);

/* The refusals so far, by auth_zap_reject (all 0 while CURVE is off). */
void cli_curve_server_counts(const cli_curve_server *s, uint64_t out[AUTH_ZAP_REJECT_COUNT_]);

/* Whether CURVE is on. */
int cli_curve_server_on(const cli_curve_server *s);

/* Stops the handler and closes its sockets; safe to call twice. */
void cli_curve_server_close(cli_curve_server *s);

/* Reports: the JSON object {"key_not_allowed":N,"plaintext":N,"handshake":N}
 * appended to t, and the Prometheus samples
 * name{LABELSreason="..."} N, labels "" or e.g. "end=\"front\",". */
void cli_curve_server_json(cli_text *t, const uint64_t counts[AUTH_ZAP_REJECT_COUNT_]);
void cli_curve_server_prometheus(cli_text *t, const char *name, const char *labels,
                                 const uint64_t counts[AUTH_ZAP_REJECT_COUNT_]);

#endif
