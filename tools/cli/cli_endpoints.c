/*
 * cli_endpoints.c - a comma-separated list of ZeroMQ endpoints (cli_endpoints.h).
 *
 * The entries are checked here, before any socket exists, so that a typo
 * in the fifth entry is named as such rather than surfacing as a failed
 * connect after four sockets are already attached.
 */
#include <stdio.h>
#include <string.h>

#include "cli_endpoints.h"

/* The transports the daemon's input.endpoint accepts (config_validate.c). */
static const char *const endpoint_transports[] = {"tcp://", "ipc://", "inproc://", "pgm://", "epgm://"};

/* Whether the entry of length bytes is a known transport and an address. */
static int endpoint_well_formed(const char *entry, size_t length)
{
    if (memchr(entry, ' ', length) != NULL)
        return 0;
    for (size_t i = 0; i < sizeof endpoint_transports / sizeof endpoint_transports[0]; i++) {
        size_t prefix = strlen(endpoint_transports[i]);
        if (length > prefix && strncmp(entry, endpoint_transports[i], prefix) == 0)
            return 1;
    }
    return 0;
}

int cli_endpoints_parse(const char *text, cli_endpoints *list, char *why, size_t why_bytes)
{
    list->count = 0;
    if (strchr(text, ',') == NULL) {
        snprintf(why, why_bytes, "not a list: no comma in \"%.80s\"", text);
        return -1;
    }
    for (const char *at = text;; at++) {
        size_t length = strcspn(at, ",");
        int number = list->count + 1;
        if (number > CLI_ENDPOINTS_MAX) {
            snprintf(why, why_bytes, "more than %d endpoints listed (one per socket, at most %d)",
                     CLI_ENDPOINTS_MAX, CLI_ENDPOINTS_MAX);
            return -1;
        }
        if (length == 0) {
            snprintf(why, why_bytes, "entry %d of the list is empty", number);
            return -1;
        }
        if (!endpoint_well_formed(at, length) || length >= CLI_ENDPOINT_BYTES) {
            snprintf(why, why_bytes, "entry %d of the list: expected tcp://, ipc://, inproc://, pgm:// or epgm:// "
                     "and an address (under %d bytes), not \"%.*s\"", number, CLI_ENDPOINT_BYTES,
                     (int)(length < 80 ? length : 80), at);
            return -1;
        }
        memcpy(list->entry[list->count], at, length);
        list->entry[list->count][length] = '\0';
        for (int k = 0; k < list->count; k++)
            if (strcmp(list->entry[k], list->entry[list->count]) == 0) {
                snprintf(why, why_bytes, "entry %d of the list repeats entry %d (one socket per endpoint)", number,
                         k + 1);
                return -1;
            }
        list->count++;
        at += length;
        if (*at == '\0')
            return 0;
    }
}
