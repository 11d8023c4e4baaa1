/*
 * stage_receive_merge.c - the receive stage over several input sockets
 * (input.io_threads > 1, input.pattern pull, input.bind false): each socket
 * is its own connection to the source's PUSH, read by its own ZeroMQ I/O
 * thread, and the PUSH deals frames over them in turn. Within a connection
 * frames keep their order; across connections one may overtake another.
 *
 * Each socket has a reader thread of its own (eigs-receive-K) that receives,
 * copies and checks its frames (receive_message, with its own share of
 * input.copy_threads), so that no one thread carries every frame's copy: one
 * receive thread at 97% of a core paced four GPUs at 935 frames/s while its
 * copy helpers idled at 43% (docs/performance.md, "Four GPUs"). A reader's
 * valid frame becomes its socket's head; the reader then waits until the
 * head has gone on before it takes the next frame buffer, so the merge still
 * holds at most one frame per socket.
 *
 * The merge (the receive thread) passes on the head of lowest seq when it is
 * the seq after the last passed on, or when every socket has a head (nothing
 * lower can still come), or when it has waited input.reorder_ms (a seq the
 * source skipped, or a connection that has gone quiet). A head at or below
 * the last seq passed on goes at once: one of the last MERGE_SKIPPED_SEQS
 * seqs the merge went on without is a late frame (a connection stalled past
 * input.reorder_ms), counted in input_late and passed on out of order; any
 * other is a source restart, counted by receive_accept. So frames leave in
 * seq order unless one comes later than input.reorder_ms.
 *
 * Behind eigstream-dispatch (input.pattern dispatch) each socket is a DEALER
 * of its own, a peer with its own credit (its share of the form queue's free
 * slots, receive_dispatch_credit) and heartbeats, and the dispatcher deals
 * each daemon only some of the seqs: there is nothing to wait for, and
 * eigstream-merge puts the daemons' frames back in order. So each reader
 * passes its frames on itself as they come (receive_accept with its own seq
 * books: a seq going back on one connection is a restart), the merge thread
 * only waits for a stop, and on a stop each reader says GOODBYE and takes
 * what was already on its way (receive_dispatch_drain).
 *
 * Locking: head, since, failed and closing are shared under lock; the seq
 * books (last_seq, skipped) are the merge thread's alone; frames are passed
 * on (receive_accept, which may block under overflow_policy block) outside
 * the lock, in the order decided under it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "deadline.h"
#include "stage_receive.h"

#define MERGE_SKIPPED_SEQS 64 /* the seqs merge.skipped remembers */

#define MERGE_READER_POLL_MS 100 /* how long a reader waits for input before it checks for a stop */

struct merge;

/* Socket k's reader: a copy of the receiver with message buffers and a copy
 * team of its own (receive_message touches nothing else of it). */
typedef struct merge_reader {
    struct merge *m;
    int k;
    receiver rx;
    pthread_t thread;
    int started;
} merge_reader;

typedef struct merge {
    receiver *rx;
    int count; /* input sockets */
    pthread_mutex_t lock;
    pthread_cond_t arrived;                      /* a head came, or a reader failed */
    pthread_cond_t taken[CONFIG_INPUT_IO_THREADS_MAX]; /* head k went on, or closing */
    frame *head[CONFIG_INPUT_IO_THREADS_MAX];    /* a valid frame from socket k, or NULL */
    uint64_t since[CONFIG_INPUT_IO_THREADS_MAX]; /* when it became the head (monotonic ns) */
    int failed;                                  /* a reader's socket failed */
    int closing;                                 /* the readers stop */
    merge_reader reader[CONFIG_INPUT_IO_THREADS_MAX];
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

/* A frame the merge passes on, late (a seq it had gone on without) or not. */
typedef struct merge_pass {
    frame *f;
    int late;
} merge_pass;

/* Takes every head that may go now (see the file comment), in the order
 * they go, into out (room for m->count); under the lock. Returns how many. */
static int merge_take(merge *m, uint64_t now, int draining, merge_pass *out)
{
    uint64_t wait_ns = (uint64_t)m->rx->ctx->cfg->input.reorder_ms * 1000000u;
    int n = 0;
    for (int k; (k = merge_lowest(m)) >= 0;) {
        frame *f = m->head[k];
        int heads = 0;
        for (int i = 0; i < m->count; i++)
            heads += m->head[i] != NULL;
        int next = m->passed && f->header.seq <= m->last_seq + 1;
        if (!draining && !next && heads < m->count && now - m->since[k] < wait_ns)
            break;
        m->head[k] = NULL;
        pthread_cond_signal(&m->taken[k]);
        if (m->passed && f->header.seq <= m->last_seq && merge_take_skipped(m, f->header.seq)) {
            out[n++] = (merge_pass){f, 1};
            continue;
        }
        if (m->passed && f->header.seq > m->last_seq)
            merge_advance(m, f->header.seq);
        else { /* the first frame, or a restart: the seqs start again from it */
            m->last_seq = f->header.seq;
            m->skipped_count = 0;
            m->passed = 1;
        }
        out[n++] = (merge_pass){f, 0};
    }
    return n;
}

/* Passes on what merge_take took, in order; outside the lock. */
static void merge_pass_on(merge *m, const merge_pass *out, int n)
{
    for (int i = 0; i < n; i++) {
        if (out[i].late)
            receive_accept_late(m->rx, out[i].f);
        else
            receive_accept(m->rx, out[i].f);
    }
}

/* How long to wait for a head: until the lowest head's wait is over, at
 * most 100 ms (a stop request waits no longer); under the lock. */
static int merge_wait_ms(const merge *m, uint64_t now)
{
    int k = merge_lowest(m);
    if (k < 0)
        return 100;
    uint64_t wait_ns = (uint64_t)m->rx->ctx->cfg->input.reorder_ms * 1000000u, waited = now - m->since[k];
    uint64_t left_ms = waited >= wait_ns ? 0 : (wait_ns - waited + 999999u) / 1000000u;
    return left_ms < 100 ? (int)left_ms : 100;
}

/* Waits on cond (CLOCK_MONOTONIC) for at most ms; under the lock. */
static void merge_cond_wait(merge *m, pthread_cond_t *cond, int ms)
{
    const struct timespec until = deadline_after_ms(ms);
    pthread_cond_timedwait(cond, &m->lock, &until);
}

/* Whether reader r may receive: its head has gone on and the merge is not
 * closing (it then waits MERGE_READER_POLL_MS at most). */
static int reader_may_receive(merge_reader *r)
{
    merge *m = r->m;
    pthread_mutex_lock(&m->lock);
    if (m->head[r->k] != NULL && !m->closing)
        merge_cond_wait(m, &m->taken[r->k], MERGE_READER_POLL_MS);
    int may = m->head[r->k] == NULL && !m->closing;
    int closing = m->closing;
    pthread_mutex_unlock(&m->lock);
    return closing ? -1 : may;
}

/* Makes f socket r->k's head, or (f NULL) says that the socket failed. */
static void reader_hand_over(merge_reader *r, frame *f)
{
    merge *m = r->m;
    pthread_mutex_lock(&m->lock);
    if (f != NULL) {
        m->head[r->k] = f;
        m->since[r->k] = metrics_now_ns();
    } else {
        m->failed = 1;
    }
    pthread_cond_signal(&m->arrived);
    pthread_mutex_unlock(&m->lock);
}

/* Whether a reader's socket failed (the daemon then stops without a drain). */
static int merge_failed(merge *m)
{
    pthread_mutex_lock(&m->lock);
    int failed = m->failed;
    pthread_mutex_unlock(&m->lock);
    return failed;
}

/* Reader thread (arg: its merge_reader): receives socket k's messages into
 * frame buffers until the merge closes; counts rejects itself. Behind a
 * dispatcher it also returns its credit and passes its frames on itself. */
static void *reader_main(void *arg)
{
    merge_reader *r = arg;
    receiver *rx = &r->rx;
    dispatch_client *client = rx->dispatch[r->k];
    frame *f = NULL;
    char detail[256];
    int failed = 0;
    zmq_pollitem_t item = {.socket = rx->inputs[r->k], .events = ZMQ_POLLIN};
    for (int may; (may = reader_may_receive(r)) >= 0;) {
        if (client != NULL)
            receive_dispatch_credit(rx, r->k, r->m->count);
        if (!may)
            continue;
        if (f == NULL && pool_get_timed(rx->ctx->frames, (void **)&f, MERGE_READER_POLL_MS) != POOL_OK) {
            f = NULL; /* every buffer is out: ask again (a closed pool closes only after this thread) */
            continue;
        }
        int ready = zmq_poll(&item, 1, client != NULL ? DISPATCH_CLIENT_POLL_MS : MERGE_READER_POLL_MS);
        if (ready < 0 && errno != EINTR) {
            LOG_ERROR("receive", "input socket %d poll failed: %s", r->k, zmq_strerror(errno));
            failed = 1;
            reader_hand_over(r, NULL);
            break;
        }
        protocol_reject reason = PROTOCOL_OK;
        receive_result got = ready > 0 ? receive_message(rx, rx->inputs[r->k], f, &reason, detail, sizeof detail)
                                       : RECEIVE_NOTHING;
        if (got == RECEIVE_FRAME && client != NULL) {
            receive_accept(rx, f); /* the reader's own seq books: this connection's order */
            f = NULL;
        } else if (got == RECEIVE_FRAME) {
            reader_hand_over(r, f);
            f = NULL;
        } else if (got == RECEIVE_REJECTED) {
            receive_reject(rx, reason, detail); /* keep f for the next message */
        } else if (got == RECEIVE_FATAL) {
            LOG_ERROR("receive", "input socket %d failed: %s", r->k, zmq_strerror(errno));
            failed = 1;
            reader_hand_over(r, NULL);
            break;
        }
    }
    if (client != NULL && !failed && !merge_failed(r->m))
        f = receive_dispatch_drain(rx, r->k, f, detail, sizeof detail);
    if (f != NULL)
        pipeline_frame_release(rx->ctx->p, f);
    return NULL;
}

/* Starts socket k's reader with copy_threads of the copy team (1: alone).
 * 0, or -1 (logged) when its buffers or thread cannot be had. */
static int reader_start(merge *m, int k, int copy_threads)
{
    merge_reader *r = &m->reader[k];
    *r = (merge_reader){.m = m, .k = k, .rx = *m->rx};
    r->rx.team = NULL;
    r->rx.parts = calloc(m->rx->ctx->shape->part_capacity, sizeof *r->rx.parts);
    r->rx.list = calloc(m->rx->ctx->shape->part_capacity, sizeof *r->rx.list);
    if (r->rx.parts == NULL || r->rx.list == NULL) {
        LOG_ERROR("receive", "input socket %d: out of memory for its reader", k);
        return -1;
    }
    if (copy_threads > 1 && (r->rx.team = receive_team_create(copy_threads)) == NULL)
        LOG_WARN("receive", "input socket %d: cannot start %d copy threads; its reader copies alone", k,
                 copy_threads);
    int rc = pthread_create(&r->thread, NULL, reader_main, r);
    if (rc != 0) {
        LOG_ERROR("receive", "cannot start the reader of input socket %d: %s", k, strerror(rc));
        return -1;
    }
    r->started = 1;
    /* names eigs-receive-1 .. -K; their copy helpers follow them */
    pipeline_realtime_thread(m->rx->ctx->p, r->thread, CONFIG_THREAD_RECEIVE, k + 1);
    for (int i = 0; r->rx.team != NULL && i < receive_team_threads(r->rx.team) - 1; i++)
        pipeline_realtime_thread(m->rx->ctx->p, receive_team_helper(r->rx.team, i), CONFIG_THREAD_RECEIVE,
                                 m->count + 1 + k * (copy_threads - 1) + i);
    return 0;
}

/* Closes the readers (each finishes the message in hand, which still
 * becomes a head), joins them and frees what they had. */
static void readers_stop(merge *m)
{
    pthread_mutex_lock(&m->lock);
    m->closing = 1;
    for (int k = 0; k < m->count; k++)
        pthread_cond_broadcast(&m->taken[k]);
    pthread_mutex_unlock(&m->lock);
    for (int k = 0; k < m->count; k++) {
        merge_reader *r = &m->reader[k];
        if (r->started)
            pthread_join(r->thread, NULL);
        receive_team_destroy(&r->rx.team);
        free(r->rx.parts);
        free(r->rx.list);
    }
}

/* The lock and the condition variables (CLOCK_MONOTONIC); -1, with none of
 * them left initialized, when one cannot be had. */
static int merge_init(merge *m)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&m->lock, NULL);
    const int locked = rc == 0;
    const int arrived = locked && (rc = pthread_cond_init(&m->arrived, &attr)) == 0;
    int taken = 0;
    while (rc == 0 && taken < m->count && (rc = pthread_cond_init(&m->taken[taken], &attr)) == 0)
        taken++;
    if (rc != 0) { /* undo what was made */
        while (taken > 0)
            pthread_cond_destroy(&m->taken[--taken]);
        if (arrived)
            pthread_cond_destroy(&m->arrived);
        if (locked)
            pthread_mutex_destroy(&m->lock);
    }
    pthread_condattr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

static void merge_destroy(merge *m)
{
    for (int k = 0; k < m->count; k++)
        pthread_cond_destroy(&m->taken[k]);
    pthread_cond_destroy(&m->arrived);
    pthread_mutex_destroy(&m->lock);
}

/* The merge loop: passes heads on as they may go until a stop request or a
 * reader's failure (rx->result PIPELINE_ESOCKET). */
static void merge_run(merge *m)
{
    receiver *rx = m->rx;
    merge_pass out[CONFIG_INPUT_IO_THREADS_MAX];
    pthread_mutex_lock(&m->lock);
    while (!atomic_load(rx->ctx->stop_requested) && !m->failed) {
        uint64_t now = metrics_now_ns();
        int n = merge_take(m, now, 0, out);
        if (n > 0) {
            pthread_mutex_unlock(&m->lock);
            merge_pass_on(m, out, n);
            pthread_mutex_lock(&m->lock);
            continue;
        }
        merge_cond_wait(m, &m->arrived, merge_wait_ms(m, now));
    }
    if (m->failed)
        rx->result = PIPELINE_ESOCKET;
    pthread_mutex_unlock(&m->lock);
}

/* As receive_main, over rx->inputs[0 .. io_threads), a reader per socket. */
void *receive_merge_main(void *arg)
{
    receiver *rx = arg;
    merge *m = calloc(1, sizeof *m);
    rx->result = PIPELINE_OK;
    if (m == NULL || (m->rx = rx, m->count = rx->ctx->cfg->input.io_threads, merge_init(m)) != 0) {
        LOG_ERROR("receive", "cannot set up the merge of %d input sockets", rx->ctx->cfg->input.io_threads);
        rx->result = PIPELINE_ETHREAD;
        free(m);
        queue_close(rx->ctx->to_form);
        return NULL;
    }
    /* input.copy_threads shared out: each reader copies with its share */
    int share = receive_copy_threads(rx) / m->count, started = 0;
    for (int k = 0; k < m->count && started == k; k++)
        started += reader_start(m, k, share > 1 ? share : 1) == 0;
    if (started == m->count)
        merge_run(m);
    else
        rx->result = PIPELINE_ETHREAD;
    readers_stop(m);
    merge_pass out[CONFIG_INPUT_IO_THREADS_MAX];
    merge_pass_on(m, out, merge_take(m, metrics_now_ns(), 1, out)); /* what the heads hold goes on, in order */
    merge_destroy(m);
    free(m);
    LOG_DEBUG("receive", "stopped accepting; draining");
    queue_close(rx->ctx->to_form);
    return NULL;
}
