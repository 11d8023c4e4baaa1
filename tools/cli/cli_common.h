/*
 * cli_common.h - what the mains of eigstream-sim and eigstream-sink share:
 * stopping on SIGINT/SIGTERM, the two clocks they read, two-way option
 * values, and the life of their one ZeroMQ socket.
 *
 * Library eigstream_cli. Never prints: the mains report errors under their
 * own names (zmq_errno() says why a socket call failed).
 */
#ifndef EIGSTREAM_CLI_COMMON_H
#define EIGSTREAM_CLI_COMMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Set (never cleared) by the handler that cli_stop_on_signals installs. */
extern volatile sig_atomic_t cli_stop_requested;

/* Makes SIGINT and SIGTERM set cli_stop_requested. Without SA_RESTART, so a
 * blocked zmq_send, zmq_msg_recv, zmq_poll or clock_nanosleep returns early
 * (EINTR) and the caller's loop sees the flag. */
void cli_stop_on_signals(void);

/* Seconds on CLOCK_MONOTONIC, for intervals and rates. */
double cli_monotonic_s(void);

/* Nanoseconds since the epoch on CLOCK_REALTIME, the wire timestamps' clock. */
uint64_t cli_realtime_ns(void);

/* Sleeps until the absolute CLOCK_MONOTONIC time t (seconds, as
 * cli_monotonic_s) with clock_nanosleep(TIMER_ABSTIME), so that a schedule
 * kept against one start time accumulates no drift. Returns early, when
 * cli_stop_requested is set by a signal. */
void cli_sleep_until(double t);

/* Room for one more item in an array of *cap items of item_bytes each
 * that holds count (<= *cap) of them: items itself when count < *cap, else
 * items realloc'd to twice *cap (first_cap when *cap is 0), the new tail
 * zeroed, *cap updated. NULL when out of memory (items and *cap untouched,
 * still the caller's). */
void *cli_array_grow(void *items, size_t count, size_t *cap, size_t item_bytes, size_t first_cap);

/* Nearest-rank percentile q in [0, 100] of count values (sorts them in
 * place); 0 when count is 0. */
double cli_percentile(double *values, size_t count, double q);

/* Parses an option value that must be `off` or `on`: *out = 0 or 1 and
 * returns 0; any other value returns -1 and leaves *out alone. */
int cli_parse_choice(const char *value, const char *off, const char *on, int *out);

/* Creates a ZeroMQ context and a socket of `type` (ZMQ_PUSH, ZMQ_SUB...).
 * Returns 0, or -1 with zmq_errno() set; either way *ctx and *sock hold what
 * was created (NULL where nothing), for cli_socket_close. */
int cli_socket_create(void **ctx, void **sock, int type);

/* Binds sock to endpoint when bind != 0, else connects it. Returns 0, or -1
 * with zmq_errno() set. */
int cli_socket_attach(void *sock, const char *endpoint, int bind);

/* Closes *sock, then terminates *ctx, retrying when a signal interrupts the
 * termination; the socket's ZMQ_LINGER bounds how long queued messages may
 * hold it. Either may be NULL; both are NULL afterwards. */
void cli_socket_close(void **ctx, void **sock);

#endif
