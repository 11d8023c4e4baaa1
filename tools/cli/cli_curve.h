/*
 * cli_curve.h - the tools' side of the daemon's CURVE security: two options
 * that every tool with a ZeroMQ socket takes, and the socket setup.
 *
 *     typedef struct tool_options { ...; cli_curve curve; } tool_options;
 *     const cli_option table[] = { ..., CLI_CURVE_OPTIONS(&o->curve), CLI_END };
 *     ...
 *     if (cli_curve_apply(&o.curve, sock, err, sizeof err) != 0) ...   // before connect/bind
 *
 * --curve-server-key FILE  the daemon's public key (its BASE.key)
 * --curve-key FILE         this client's pair (BASE.key_secret, mode 0600),
 *                          whose BASE.key is in the daemon's security.curve_allow
 * Both or neither: without them the socket is plain text.
 *
 * Library eigstream_cli. Never prints.
 */
#ifndef EIGSTREAM_CLI_CURVE_H
#define EIGSTREAM_CLI_CURVE_H

#include <stddef.h>

typedef struct cli_curve {
    const char *server_key; /* NULL: no CURVE */
    const char *client_key;
} cli_curve;

#define CLI_CURVE_OPTIONS(curve_)                                                                        \
    CLI_STRING("curve-server-key", 0, &(curve_)->server_key, "FILE",                                     \
               "the daemon's CURVE public key file (BASE.key); needs --curve-key"),                      \
    CLI_STRING("curve-key", 0, &(curve_)->client_key, "FILE",                                            \
               "this client's CURVE key pair (BASE.key_secret, listed in security.curve_allow)")

/* Makes sock a CURVE client of the server key with the client's pair (both
 * files read and checked: curve_keys.h). 0, also when neither option is
 * set; -1 with err naming the option and the problem. */
int cli_curve_apply(const cli_curve *curve, void *sock, char *err, size_t err_bytes);

#endif
