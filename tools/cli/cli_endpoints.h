/*
 * cli_endpoints.h - several ZeroMQ endpoints in one option value, separated
 * by commas ("tcp://127.0.0.1:5550,tcp://127.0.0.1:5551"): one socket per
 * entry, each on an I/O thread of its own (eigstream-dispatch --front).
 *
 *     cli_endpoints e = {0};
 *     if (cli_endpoints_parse(&e, text, 8, "--front", err, sizeof err) != 0) ... // err says why
 *     for (size_t k = 0; k < e.count; k++) ... e.entry[k] ...
 *     cli_endpoints_free(&e);
 *
 * Library eigstream_cli. Never prints: a refused list is described in err.
 */
#ifndef EIGSTREAM_CLI_ENDPOINTS_H
#define EIGSTREAM_CLI_ENDPOINTS_H

#include <stddef.h>

#define CLI_ENDPOINTS_MAX 8 /* the most entries any list may hold */

typedef struct cli_endpoints {
    char *text;                            /* a copy of the list, its commas made NULs */
    const char *entry[CLI_ENDPOINTS_MAX];  /* count entries, pointing into text */
    size_t count;
} cli_endpoints;

/* Splits text into *e. A value without a comma is one entry, taken as it is
 * (ZeroMQ judges it when the socket attaches). A list must have 2..max
 * entries (max <= CLI_ENDPOINTS_MAX), each tcp://, ipc:// or inproc://
 * and an address, none empty and none twice (one socket cannot bind or
 * connect one endpoint twice). 0; or -1 with err naming option and the
 * entry (also when out of memory), *e then empty. */
int cli_endpoints_parse(cli_endpoints *e, const char *text, size_t max, const char *option, char *err,
                        size_t err_bytes);

/* Frees the copy; *e is empty afterwards. */
void cli_endpoints_free(cli_endpoints *e);

#endif
