/*
 * cli_message.c - receiving one whole multipart message (cli_message.h).
 */
#include "cli_message.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "cli_common.h"

/* Makes room for one more kept part; 0, or -1 when out of memory. */
static int cli_message_grow(cli_message *m)
{
    zmq_msg_t *part = cli_array_grow(m->part, m->count, &m->cap, sizeof *part, 8);
    if (part == NULL)
        return -1;
    m->part = part;
    return 0;
}

int cli_message_receive(void *sock, cli_message *m, size_t limit)
{
    return cli_message_receive_bounded(sock, m, limit, 0);
}

/* Closes the parts kept so far: the message is over max_bytes, and what
 * is left of it is only counted (m->extra) as it arrives. */
static void cli_message_discard_kept(cli_message *m)
{
    size_t dropped = m->count + m->extra;
    cli_message_release(m);
    m->extra = dropped;
    m->oversized = 1;
}

int cli_message_receive_bounded(void *sock, cli_message *m, size_t limit, size_t max_bytes)
{
    int more = 1, failed = 0;
    uint64_t total = 0;
    while (more) {
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, sock, 0) < 0) {
            int err = errno;
            zmq_msg_close(&msg);
            if (err == EINTR && (m->count > 0 || m->extra > 0))
                continue; /* finish the message: its parts are already here */
            cli_message_release(m);
            errno = err;
            return -1;
        }
        more = zmq_msg_more(&msg);
        total += zmq_msg_size(&msg);
        if (max_bytes > 0 && total > max_bytes && !m->oversized)
            cli_message_discard_kept(m);
        if (m->oversized || failed || m->count >= limit || cli_message_grow(m) != 0) {
            failed |= !m->oversized && m->count < limit; /* out of memory: drain, then report */
            m->extra++;
            zmq_msg_close(&msg);
            continue;
        }
        m->bytes += zmq_msg_size(&msg);
        zmq_msg_init(&m->part[m->count]);
        zmq_msg_move(&m->part[m->count++], &msg);
        zmq_msg_close(&msg);
    }
    if (failed) {
        cli_message_release(m);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void cli_message_release(cli_message *m)
{
    for (size_t i = 0; i < m->count; i++)
        zmq_msg_close(&m->part[i]);
    m->count = m->extra = m->bytes = 0;
    m->oversized = 0;
}

void cli_message_free(cli_message *m)
{
    cli_message_release(m);
    free(m->part);
    m->part = NULL;
    m->cap = 0;
}
