/*
 * cli_endpoints.h - an --endpoint value that lists several ZeroMQ endpoints
 * separated by commas, one per socket (eigstream-sim's source of K PUSH
 * sockets, matching a daemon whose input.endpoint lists the same ones, or
 * eigstream-dispatch's front end of K PULL sockets).
 *
 *   cli_endpoints list;
 *   char why[CLI_ENDPOINTS_WHY_BYTES];
 *   if (strchr(text, ',') == NULL) ...                              // one endpoint: use text as it is
 *   else if (cli_endpoints_parse(text, &list, why, sizeof why) != 0) ... // why says which entry
 *   for (int k = 0; k < list.count; k++) ... list.entry[k] ...
 *
 * Library eigstream_cli. Never prints.
 */
#ifndef EIGSTREAM_CLI_ENDPOINTS_H
#define EIGSTREAM_CLI_ENDPOINTS_H

#include <stddef.h>

/* Most entries of a list: the daemon's most input sockets
 * (CONFIG_INPUT_IO_THREADS_MAX), one I/O thread each. */
#define CLI_ENDPOINTS_MAX 8
/* Longest entry, NUL included: the daemon's whole input.endpoint field. */
#define CLI_ENDPOINT_BYTES 256
#define CLI_ENDPOINTS_WHY_BYTES 384

typedef struct cli_endpoints {
    int count; /* entries, 2..CLI_ENDPOINTS_MAX */
    char entry[CLI_ENDPOINTS_MAX][CLI_ENDPOINT_BYTES];
} cli_endpoints;

/* Splits text, which holds at least one comma, at its commas into *list
 * (a single endpoint is not a list: the caller passes it to ZeroMQ as it
 * is). A list has 2..CLI_ENDPOINTS_MAX entries, each a transport (tcp://,
 * ipc://, inproc://, pgm://, epgm://) and an address, without spaces,
 * shorter than CLI_ENDPOINT_BYTES, none twice (a socket each). Returns 0, or -1 with why (why_bytes)
 * saying what is wrong, naming the entry by its number from 1 (*list then
 * holds the entries before it). */
int cli_endpoints_parse(const char *text, cli_endpoints *list, char *why, size_t why_bytes);

#endif
