/*
 * cli_endpoints.c - a comma-separated list of ZeroMQ endpoints, checked
 * entry by entry (cli_endpoints.h).
 */
#include "cli_endpoints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The transports a list entry may use: those of a point-to-point socket
 * (PGM is multicast, for publish/subscribe only). */
static const char *const list_transports[] = {"tcp://", "ipc://", "inproc://", NULL};

/* Whether entry is one of list_transports and a non-empty address. */
static int entry_is_endpoint(const char *entry)
{
    for (const char *const *t = list_transports; *t != NULL; t++) {
        size_t length = strlen(*t);
        if (strncmp(entry, *t, length) == 0)
            return entry[length] != '\0';
    }
    return 0;
}

/* Checks the entries of e against the list's rules; 0, or -1 with err. */
static int entries_check(const cli_endpoints *e, const char *option, char *err, size_t err_bytes)
{
    for (size_t k = 0; k < e->count; k++) {
        if (e->entry[k][0] == '\0') {
            snprintf(err, err_bytes, "%s: entry %zu of the list is empty", option, k + 1);
            return -1;
        }
        if (!entry_is_endpoint(e->entry[k])) {
            snprintf(err, err_bytes, "%s: entry %zu of the list: expected tcp://, ipc:// or inproc:// and an "
                     "address, not \"%s\"", option, k + 1, e->entry[k]);
            return -1;
        }
        for (size_t j = 0; j < k; j++)
            if (strcmp(e->entry[j], e->entry[k]) == 0) {
                snprintf(err, err_bytes, "%s: entry %zu of the list repeats entry %zu (%s)", option, k + 1, j + 1,
                         e->entry[k]);
                return -1;
            }
    }
    return 0;
}

int cli_endpoints_parse(cli_endpoints *e, const char *text, size_t max, const char *option, char *err,
                        size_t err_bytes)
{
    *e = (cli_endpoints){0};
    if (max > CLI_ENDPOINTS_MAX)
        max = CLI_ENDPOINTS_MAX;
    size_t listed = 1;
    for (const char *p = text; *p != '\0'; p++)
        listed += *p == ',';
    if (listed > max) {
        snprintf(err, err_bytes, "%s: %zu endpoints listed, at most %zu", option, listed, max);
        return -1;
    }
    if ((e->text = strdup(text)) == NULL) {
        snprintf(err, err_bytes, "%s: out of memory", option);
        return -1;
    }
    for (char *p = e->text;; p++) {
        e->entry[e->count++] = p;
        if ((p = strchr(p, ',')) == NULL)
            break;
        *p = '\0';
    }
    if (e->count > 1 && entries_check(e, option, err, err_bytes) != 0) {
        cli_endpoints_free(e);
        return -1;
    }
    return 0;
}

void cli_endpoints_free(cli_endpoints *e)
{
    free(e->text);
    *e = (cli_endpoints){0};
}
