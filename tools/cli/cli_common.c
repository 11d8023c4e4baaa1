/*
 * cli_common.c - signals, clocks, option values and the ZeroMQ socket of the
 * eigstream-sim and eigstream-sink mains.
 */
#include "cli_common.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

volatile sig_atomic_t cli_stop_requested;

static void cli_on_stop_signal(int sig)
{
    (void)sig;
    cli_stop_requested = 1;
}

void cli_stop_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cli_on_stop_signal; /* no SA_RESTART: blocked calls return EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

double cli_monotonic_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

uint64_t cli_realtime_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int cli_parse_choice(const char *value, const char *off, const char *on, int *out)
{
    if (strcmp(value, off) != 0 && strcmp(value, on) != 0)
        return -1;
    *out = strcmp(value, on) == 0;
    return 0;
}

int cli_socket_create(void **ctx, void **sock, int type)
{
    *ctx = zmq_ctx_new();
    *sock = *ctx != NULL ? zmq_socket(*ctx, type) : NULL;
    return *sock != NULL ? 0 : -1;
}

int cli_socket_attach(void *sock, const char *endpoint, int bind)
{
    return (bind ? zmq_bind(sock, endpoint) : zmq_connect(sock, endpoint)) == 0 ? 0 : -1;
}

void cli_socket_close(void **ctx, void **sock)
{
    if (*sock != NULL)
        zmq_close(*sock);
    *sock = NULL;
    if (*ctx != NULL)
        while (zmq_ctx_term(*ctx) != 0 && zmq_errno() == EINTR) {
        }
    *ctx = NULL;
}
