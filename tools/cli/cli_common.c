/*
 * cli_common.c - signals, clocks, option values and the ZeroMQ socket of the
 * eigstream-sim and eigstream-sink mains.
 */
#include "cli_common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
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

void cli_sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (!cli_stop_requested && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static int cli_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void *cli_array_grow(void *items, size_t count, size_t *cap, size_t item_bytes, size_t first_cap)
{
    if (count < *cap)
        return items;
    size_t grown_cap = *cap ? 2 * *cap : first_cap;
    unsigned char *grown = realloc(items, grown_cap * item_bytes);
    if (grown == NULL)
        return NULL;
    memset(grown + *cap * item_bytes, 0, (grown_cap - *cap) * item_bytes);
    *cap = grown_cap;
    return grown;
}

double cli_percentile(double *values, size_t count, double q)
{
    if (count == 0)
        return 0.0;
    qsort(values, count, sizeof *values, cli_compare_doubles);
    size_t rank = (size_t)ceil(q / 100.0 * (double)count);
    return values[rank > 0 ? (rank <= count ? rank - 1 : count - 1) : 0];
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
