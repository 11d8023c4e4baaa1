/*
 * cli_message.h - one whole ZeroMQ multipart message, received part by part
 * into a growable array (eigstream-record, eigstream-sink, eigstream-bench
 * record).
 *
 *     cli_message m = {0};
 *     if (cli_message_receive(sock, &m, 1 + RECORDING_PARTS_MAX) == 0) {
 *         ... m.part[0 .. m.count-1], m.extra parts beyond the limit were dropped ...
 *     }
 *     cli_message_release(&m);  // closes the parts, keeps the array for the next message
 *     cli_message_free(&m);     // at the end
 *
 * Library eigstream_cli. Never prints.
 */
#ifndef EIGSTREAM_CLI_MESSAGE_H
#define EIGSTREAM_CLI_MESSAGE_H

#include <stddef.h>
#include <zmq.h>

typedef struct cli_message {
    zmq_msg_t *part; /* count received parts, each open until cli_message_release */
    size_t count;    /* parts kept (at most the limit given to cli_message_receive) */
    size_t extra;    /* parts past the limit: received, closed and counted only */
    size_t cap;      /* allocated entries of part */
    size_t bytes;    /* sum of the kept parts' sizes */
    int oversized;   /* cli_message_receive_bounded: the parts summed past its max_bytes */
} cli_message;

/* Receives one multipart message (blocking; call after zmq_poll says POLLIN)
 * into *m, which must be empty (fresh or released). Keeps at most `limit`
 * parts and drains the rest into m->extra, so a message is always consumed
 * whole. A signal that interrupts it after the first part is retried (the
 * rest of the message is already queued). Returns 0, or -1 with errno (EINTR
 * before the first part, ENOMEM; *m is released then). */
int cli_message_receive(void *sock, cli_message *m, size_t limit);

/* The same with a bound on the whole message: the sizes of its parts are
 * summed as they arrive, and once the sum passes max_bytes the parts kept
 * so far are closed and the rest received and closed one by one, so that no
 * more than one part (which the socket's ZMQ_MAXMSGSIZE bounds) is held at
 * a time; m->oversized is set then (m->count 0, m->extra the parts
 * discarded). max_bytes 0: no bound. Returns as cli_message_receive. */
int cli_message_receive_bounded(void *sock, cli_message *m, size_t limit, size_t max_bytes);

/* Closes the parts of *m and empties it (the array stays for reuse). */
void cli_message_release(cli_message *m);

/* Releases *m and frees its array; *m is empty afterwards. */
void cli_message_free(cli_message *m);

#endif
