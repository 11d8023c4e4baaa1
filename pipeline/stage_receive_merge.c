/*
 * stage_receive_merge.c - the receive stage over several input sockets
 * (input.io_threads > 1, input.pattern pull, input.bind false): each socket
 * is its own connection to the source's PUSH, read by its own ZeroMQ I/O
 * thread, and the PUSH deals frames over them in turn. Within a connection
 * frames keep their order; across connections one may overtake another.
 *
 * The merge holds the next frame of each socket (its head) and passes on the
 * head of lowest seq when it is the seq after the last passed on, or when
 * every socket has a head (nothing lower can still come), or when it has
 * waited input.reorder_ms (a seq the source skipped, or a connection that
 * has gone quiet). A head at or below the last seq passed on goes at once:
 * one of the last MERGE_SKIPPED_SEQS seqs the merge went on without is a
 * late frame (a connection stalled past input.reorder_ms), counted in
 * input_late and passed on out of order; any other is a source restart,
 * counted by receive_accept. So frames leave in seq order unless one comes
 * later than input.reorder_ms, and the merge holds at most one frame per
 * socket.
 */
#include <errno.h>
#include <stdint.h>
#include <zmq.h>

#include "stage_receive.h"

#define MERGE_SKIPPED_SEQS 64 /* the seqs merge.skipped remembers */

typedef struct merge {
    receiver *rx;
    int count;                                  /* input sockets */
    frame *head[CONFIG_INPUT_IO_THREADS_MAX];   /* a valid frame from socket k, or NULL */
    uint64_t since[CONFIG_INPUT_IO_THREADS_MAX]; /* when it became the head (monotonic ns) */
    frame *spare;                               /* a buffer to receive into */
    uint64_t last_seq;
    int passed; /* a frame has been passed on */
    /* The last MERGE_SKIPPED_SEQS seqs gone past without their frame, a
     * ring: skipped_count valid entries ending before skipped_next. */
    uint64_t skipped[MERGE_SKIPPED_SEQS];
    int skipped_next, skipped_count;
} merge;

/* Passes seq on after last_seq: the seqs between them were gone past (the
 * most recent MERGE_SKIPPED_SEQS of them remembered). */
static void merge_advance(merge *m, uint64_t seq)
{
    uint64_t from = seq - m->last_seq > MERGE_SKIPPED_SEQS ? seq - MERGE_SKIPPED_SEQS : m->last_seq + 1;
    for (uint64_t s = from; s < seq; s++) {
        m->skipped[m->skipped_next] = s;
        m->skipped_next = (m->skipped_next + 1) % MERGE_SKIPPED_SEQS;
        m->skipped_count += m->skipped_count < MERGE_SKIPPED_SEQS;
    }
    m->last_seq = seq;
}

/* Whether seq is one the merge went on without; forgets it. */
static int merge_take_skipped(merge *m, uint64_t seq)
{
    for (int i = 1; i <= m->skipped_count; i++) {
        int at = (m->skipped_next - i + MERGE_SKIPPED_SEQS) % MERGE_SKIPPED_SEQS;
        if (m->skipped[at] == seq) {
            m->skipped[at] = UINT64_MAX; /* never asked for: queries are at or below last_seq */
            return 1;
        }
    }
    return 0;
}

/* The head of lowest seq, or -1 when there is none. */
static int merge_lowest(const merge *m)
{
    int best = -1;
    for (int k = 0; k < m->count; k++)
        if (m->head[k] != NULL && (best < 0 || m->head[k]->header.seq < m->head[best]->header.seq))
            best = k;
    return best;
}

/* Passes on every head that may go now (see the file comment). */
static void merge_release(merge *m, uint64_t now, int draining)
{
    uint64_t wait_ns = (uint64_t)m->rx->ctx->cfg->input.reorder_ms * 1000000u;
    for (int k; (k = merge_lowest(m)) >= 0;) {
        frame *f = m->head[k];
        int heads = 0;
        for (int i = 0; i < m->count; i++)
            heads += m->head[i] != NULL;
        int next = m->passed && f->header.seq <= m->last_seq + 1;
        if (!draining && !next && heads < m->count && now - m->since[k] < wait_ns)
            return;
        m->head[k] = NULL;
        if (m->passed && f->header.seq <= m->last_seq && merge_take_skipped(m, f->header.seq)) {
            receive_accept_late(m->rx, f);
            continue;
        }
        if (m->passed && f->header.seq > m->last_seq)
            merge_advance(m, f->header.seq);
        else { /* the first frame, or a restart: the seqs start again from it */
            m->last_seq = f->header.seq;
            m->skipped_count = 0;
            m->passed = 1;
        }
        receive_accept(m->rx, f);
    }
}

/* Reads socket k while it has no head: a frame becomes its head, rejects
 * are counted. 0, or -1 when the socket failed. */
static int merge_read(merge *m, int k, char *detail, size_t detail_bytes)
{
    receiver *rx = m->rx;
    while (m->head[k] == NULL) {
        if (m->spare == NULL && pool_get(rx->ctx->frames, (void **)&m->spare) != POOL_OK)
            return -1;
        protocol_reject reason = PROTOCOL_OK;
        receive_result r = receive_message(rx, rx->inputs[k], m->spare, &reason, detail, detail_bytes);
        if (r == RECEIVE_NOTHING)
            return 0;
        if (r == RECEIVE_FATAL)
            return -1;
        if (r == RECEIVE_REJECTED) {
            receive_reject(rx, reason, detail);
            continue;
        }
        m->head[k] = m->spare;
        m->since[k] = metrics_now_ns();
        m->spare = NULL;
    }
    return 0;
}

/* How long to wait for input: until the lowest head's wait is over, at
 * most 100 ms (a stop request waits no longer). */
static int merge_poll_ms(const merge *m, uint64_t now)
{
    int k = merge_lowest(m);
    if (k < 0)
        return 100;
    uint64_t wait_ns = (uint64_t)m->rx->ctx->cfg->input.reorder_ms * 1000000u, waited = now - m->since[k];
    uint64_t left_ms = waited >= wait_ns ? 0 : (wait_ns - waited + 999999u) / 1000000u;
    return left_ms < 100 ? (int)left_ms : 100;
}

/* As receive_main, over rx->inputs[0 .. io_threads). */
void *receive_merge_main(void *arg)
{
    receiver *rx = arg;
    merge m = {.rx = rx, .count = rx->ctx->cfg->input.io_threads};
    zmq_pollitem_t items[CONFIG_INPUT_IO_THREADS_MAX];
    char detail[256];
    rx->result = PIPELINE_OK;
    while (!atomic_load(rx->ctx->stop_requested)) {
        int waiting = 0;
        for (int k = 0; k < m.count; k++)
            if (m.head[k] == NULL)
                items[waiting++] = (zmq_pollitem_t){.socket = rx->inputs[k], .events = ZMQ_POLLIN};
        int ready = zmq_poll(items, waiting, merge_poll_ms(&m, metrics_now_ns()));
        if (ready < 0 && errno != EINTR) {
            LOG_ERROR("receive", "input socket poll failed: %s", zmq_strerror(errno));
            rx->result = PIPELINE_ESOCKET;
            break;
        }
        int failed = 0;
        for (int k = 0; k < m.count && !failed; k++)
            failed = merge_read(&m, k, detail, sizeof detail) != 0;
        if (failed) {
            if (atomic_load(rx->ctx->stop_requested))
                break; /* the frame pool closed */
            LOG_ERROR("receive", "input socket failed: %s", zmq_strerror(errno));
            rx->result = PIPELINE_ESOCKET;
            break;
        }
        merge_release(&m, metrics_now_ns(), 0);
    }
    merge_release(&m, metrics_now_ns(), 1); /* what the heads hold goes on, in order */
    if (m.spare != NULL)
        pipeline_frame_release(rx->ctx->p, m.spare);
    LOG_DEBUG("receive", "stopped accepting; draining");
    queue_close(rx->ctx->to_form);
    return NULL;
}
