/*
 * stage_publish.c - the publish stage: waits for the path to finish the
 * frame's output, applies the late policy, encodes the eigenspace frame
 * [header][meta][data] and sends it.
 *
 * The header and the meta part (a few KB) are copied by ZeroMQ; the data part
 * is sent zero-copy from the frame's output buffer, which ZeroMQ hands back
 * through output_release (from its I/O thread) once it is on the wire or
 * discarded. The output frame carries the input's seq and source timestamp,
 * and a CRC32C when the input carried one.
 *
 * Delivery (docs/daemon.md): a send waits at most frame.deadline_ms (but at
 * least 100 ms) for room (SNDTIMEO); PUB output is an XPUB with NODROP, so a subscriber at its
 * HWM makes the send fail rather than lose the frame silently: the frame is
 * then dropped as subscriber_slow (for every subscriber: ZeroMQ sends a
 * message to all matching subscribers or none), PUSH without a peer as
 * send_failed.
 *
 * Order (several solver workers; docs/daemon.md): frames reach this stage
 * in the order their workers finish them and leave in the order they were
 * taken from the form queue (f->ticket), through the reorder window. A
 * frame dropped by a worker stage arrives marked (f->drop_reason): its drop
 * is counted here and its ticket closed, so nothing waits for it. A missing
 * ticket is waited for until the deadline of the frame held behind it; then
 * the window releases past it (counted in reorder_gaps) and those frames go
 * out, late. The overtaken frame, when it comes, is below the release
 * point: late too (it was received earlier), so frame.late_policy decides:
 * published flagged late (counted in out_of_order) or dropped as late.
 */
#include <errno.h>
#include <stdint.h>
#include <zmq.h>

#include "reorder.h"
#include "stage.h"

/* ZeroMQ's free function for a zero-copy data part: any thread. */
static void output_release(void *data, void *hint)
{
    (void)data;
    output_buffer *out = hint;
    pool_put(out->home, out);
}

/* The frame's self-check, once path_output_wait returned: observed in the
 * metrics; a ratio above LAPACK's threshold (or NaN) is the alarm: counted,
 * logged (rate-limited) and flagged on the frame. Returns 1 for the alarm. */
static int publish_check(publisher *pub, const frame *f)
{
    const stage_context *ctx = pub->stage.ctx;
    const frame_check *c = &f->check;
    if (c->state != FRAME_CHECK_DONE)
        return 0;
    int vectors = output_sends_vectors(&ctx->shape->format);
    int failed = !(c->residual <= EIG_CHECK_THRESHOLD) || (vectors && !(c->orthogonality <= EIG_CHECK_THRESHOLD));
    metrics_check_observe(&ctx->stats->check, c->residual, c->orthogonality, vectors, c->ns, failed);
    uint64_t suppressed;
    if (failed && log_limiter_allow(&pub->check_limit, &suppressed))
        LOG_ERROR("self-check", "frame seq %llu matrix %u: WRONG RESULTS: residual ratio %.3g, orthogonality "
                  "ratio %.3g (LAPACK threshold %g; %s path); published flagged CHECK_FAILED, counted in "
                  "eigstream_self_check_failures_total (%llu more suppressed)",
                  (unsigned long long)f->header.seq, c->matrix, c->residual, vectors ? c->orthogonality : 0.0,
                  EIG_CHECK_THRESHOLD, path_name(f->path), (unsigned long long)suppressed);
    return failed;
}

static void encode_header(const publisher *pub, const frame *f, output_buffer *out, int late, int check_failed)
{
    const stage_context *ctx = pub->stage.ctx;
    protocol_header h;
    size_t meta_bytes = protocol_meta_bytes(ctx->shape->matrices);
    protocol_header_init(&h, PROTOCOL_KIND_EIGENSPACE);
    h.seq = f->header.seq;
    h.timestamp_ns = f->header.timestamp_ns;
    h.n = ctx->shape->n;
    h.count = ctx->shape->matrices;
    h.element = ctx->shape->precision;
    h.storage = PROTOCOL_STORAGE_FULL;
    h.mode = ctx->shape->format.mode;
    h.snapshots = output_frame_snapshots(&ctx->shape->format, f);
    h.flags = (late ? PROTOCOL_FLAG_LATE : 0) | (check_failed ? PROTOCOL_FLAG_CHECK_FAILED : 0);
    h.payload_bytes = meta_bytes + out->data_bytes;
    if (f->header.flags & PROTOCOL_FLAG_CRC) {
        h.flags |= PROTOCOL_FLAG_CRC;
        h.crc32c = protocol_crc32c(protocol_crc32c(0, out->meta, meta_bytes), out->data, out->data_bytes);
    }
    protocol_header_encode(&h, out->header);
}

/* Sends [header][meta][data] from *out; 0 on success. The data part takes
 * the buffer: once its message exists, *out is NULL and the buffer returns
 * through output_release whatever happens; before that it stays the
 * caller's. */
static int send_output(publisher *pub, output_buffer **out)
{
    const stage_context *ctx = pub->stage.ctx;
    zmq_msg_t data;
    output_buffer *o = *out;
    if (zmq_send(pub->output, o->header, PROTOCOL_HEADER_BYTES, ZMQ_SNDMORE) < 0)
        return -1;
    /* After the first part the rest of a multipart message is accepted
     * whatever the HWM; only a dying context fails here. */
    if (zmq_send(pub->output, o->meta, protocol_meta_bytes(ctx->shape->matrices), ZMQ_SNDMORE) < 0)
        return -1;
    if (zmq_msg_init_data(&data, o->data, o->data_bytes, output_release, o) != 0)
        return -1;
    *out = NULL;
    if (zmq_msg_send(&data, pub->output, 0) < 0) {
        zmq_msg_close(&data); /* calls output_release */
        return -1;
    }
    return 0;
}

#define PUBLISH_SUBSCRIPTIONS_MS 50

/* PUB output: reads what the XPUB received, the subscribe (first byte 1) and
 * unsubscribe (0) messages of its subscribers, so that they do not pile up,
 * and applies those that can match an eigenspace (pipeline_subscriptions_apply);
 * a frame with no subscriber is sent to nobody and counted as published
 * (ZeroMQ's PUB semantics, docs/daemon.md). */
static void subscriptions_drain(publisher *pub)
{
    const stage_context *ctx = pub->stage.ctx;
    static const uint8_t eigenspace[PROTOCOL_PREFIX_BYTES] = {'E', 'I', 'G', 'S', PROTOCOL_VERSION,
                                                              PROTOCOL_KIND_EIGENSPACE};
    if (ctx->cfg->output.pattern == CONFIG_OUTPUT_PUB)
        pipeline_subscriptions_apply(ctx->p, pub->output, eigenspace, sizeof eigenspace);
}

/* Why a send failed: EAGAIN on the XPUB is a subscriber at its HWM for the
 * whole bounded wait (NODROP); anything else, or PUSH, is send_failed. */
static metrics_drop_reason send_failure_reason(const publisher *pub, int error)
{
    const stage_context *ctx = pub->stage.ctx;
    if (error == EAGAIN && ctx->cfg->output.pattern == CONFIG_OUTPUT_PUB)
        return METRICS_DROP_SUBSCRIBER;
    return METRICS_DROP_SEND;
}

/* Counted last: a test that sees out == in knows every histogram is final. */
static void count_published(publisher *pub, const frame *f, int late, uint64_t start)
{
    const stage_context *ctx = pub->stage.ctx;
    /* info > 0: did not converge; info < 0: an invalid argument (input). */
    uint64_t nonconvergence = 0, invalid = 0;
    for (uint32_t b = 0; b < ctx->shape->matrices; b++) {
        nonconvergence += f->info[b] > 0;
        invalid += f->info[b] < 0;
    }
    uint64_t end = metrics_now_ns();
    if (late)
        atomic_fetch_add_explicit(&ctx->stats->frames_late, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ctx->stats->matrices_failed, nonconvergence + invalid, memory_order_relaxed);
    atomic_fetch_add_explicit(&ctx->stats->matrices_nonconvergence, nonconvergence, memory_order_relaxed);
    atomic_fetch_add_explicit(&ctx->stats->matrices_invalid, invalid, memory_order_relaxed);
    metrics_histogram_observe(&ctx->stats->latency[METRICS_STAGE_PUBLISH], end - start);
    metrics_histogram_observe(&ctx->stats->latency[METRICS_STAGE_END_TO_END], end - f->received_ns);
    atomic_fetch_add_explicit(&ctx->stats->frames_out, 1, memory_order_release);
}

/* Publishes f, or drops it (late under late_policy drop, or a refused
 * send), and ends its life either way: counted once, as out or as one
 * drop. overtaken: a later frame went out first; it is late whatever the
 * clock says. start: when publish_frame took it. */
static void publish_frame_now(publisher *pub, frame *f, int overtaken, uint64_t start)
{
    const stage_context *ctx = pub->stage.ctx;
    char err[192];
    if (path_output_wait(f->path, f, err, sizeof err) != PIPELINE_OK) {
        LOG_ERROR("publish", "frame seq %llu: %s", (unsigned long long)f->header.seq, err);
        pipeline_frame_drop(ctx->p, f, METRICS_DROP_SOLVER);
        return;
    }
    int late = overtaken || pipeline_frame_is_late(ctx->p, f, start);
    if (late && ctx->live->late_policy == CONFIG_LATE_DROP) {
        pipeline_frame_drop(ctx->p, f, METRICS_DROP_LATE);
        return;
    }
    protocol_stage_times times = {
        .received_ns = f->received_real_ns,
        .solve_start_ns = f->solve_start_real_ns,
        .solve_end_ns = f->solve_end_real_ns,
        .published_ns = metrics_realtime_ns(),
    };
    protocol_meta_encode(&times, f->out->matrix_meta, ctx->shape->matrices, f->out->meta);
    encode_header(pub, f, f->out, late, publish_check(pub, f));
    subscriptions_drain(pub);
    pipeline_sockets_output_wait_update(ctx->p);
    if (send_output(pub, &f->out) != 0) {
        int error = errno;
        LOG_DEBUG("publish", "send failed: %s", zmq_strerror(error));
        pipeline_frame_drop(ctx->p, f, send_failure_reason(pub, error));
        return;
    }
    if (overtaken)
        atomic_fetch_add_explicit(&ctx->stats->out_of_order, 1, memory_order_relaxed);
    count_published(pub, f, late, start);
    pipeline_frame_release(ctx->p, f);
}

/* publish_frame_now with the stage marked busy for the watchdog's health
 * check (pipeline_service.c) while the output wait and the send run. */
static void publish_frame(publisher *pub, frame *f, int overtaken)
{
    stage *s = &pub->stage;
    uint64_t start = metrics_now_ns();
    atomic_store_explicit(&s->busy_seq, f->header.seq, memory_order_relaxed);
    atomic_store_explicit(&s->busy_since_ns, start, memory_order_release);
    publish_frame_now(pub, f, overtaken, start);
    atomic_store_explicit(&s->busy_since_ns, 0, memory_order_release);
}

/* What the window released: a frame (or a closed ticket: NULL) in order,
 * or a gap of tickets overtaken by a later frame's deadline. */
static void publish_release(publisher *pub, const reorder_release *r)
{
    const stage_context *ctx = pub->stage.ctx;
    if (r->kind == REORDER_GAP) {
        uint64_t count = r->last - r->seq + 1, suppressed;
        atomic_fetch_add_explicit(&ctx->stats->reorder_gaps, count, memory_order_relaxed);
        if (log_get_level() >= LOG_LEVEL_WARN && log_limiter_allow(&pub->gap_limit, &suppressed))
            LOG_WARN("publish", "%llu frame(s) still solving past a later frame's deadline: published out of order "
                     "or dropped as late (frame.late_policy) when they come (%llu more suppressed)",
                     (unsigned long long)count, (unsigned long long)suppressed);
        return;
    }
    if (r->item != NULL)
        publish_frame(pub, r->item, 0);
    pipeline_ticket_closed(ctx->p);
}

static void publish_release_ready(publisher *pub, uint64_t now)
{
    reorder_release r;
    while (reorder_pop_ready(pub->window, now, &r))
        publish_release(pub, &r);
}

/* One frame from the publish queue into the window; a dropped frame is
 * counted now and holds its ticket as NULL. */
static void publish_accept(publisher *pub, frame *f)
{
    const stage_context *ctx = pub->stage.ctx;
    uint64_t ticket = f->ticket;
    /* The deadline in force when the frame reaches the window (SIGHUP may change it). */
    uint64_t deadline = f->received_ns + (uint64_t)ctx->live->deadline_ms * 1000000u;
    frame *item = f;
    if (f->drop_reason >= 0) {
        pipeline_frame_drop(ctx->p, f, (metrics_drop_reason)f->drop_reason);
        item = NULL;
    }
    reorder_insert_result r = reorder_insert(pub->window, ticket, item, deadline);
    if (r == REORDER_FULL) {
        /* Not reached (the deal stage bounds what is unpublished); if it
         * were, releasing past the gap keeps the stream going. */
        LOG_ERROR("publish", "reorder window full at ticket %llu", (unsigned long long)ticket);
        publish_release_ready(pub, metrics_now_ns());
        r = reorder_insert(pub->window, ticket, item, deadline);
    }
    if (r == REORDER_IN_ORDER || r == REORDER_BUFFERED)
        return;
    if (r == REORDER_LATE && item != NULL) {
        publish_frame(pub, item, 1);
    } else if (item != NULL) { /* a ticket twice: a bug, never a silent loss */
        LOG_ERROR("publish", "frame seq %llu: ticket %llu %s", (unsigned long long)f->header.seq,
                  (unsigned long long)ticket, reorder_insert_result_name(r));
        pipeline_frame_drop(ctx->p, item, METRICS_DROP_SOLVER);
    }
    pipeline_ticket_closed(ctx->p);
}

/* How long the publish queue may be waited on: until the window stops
 * waiting for a missing ticket, else indefinitely (-1). */
static int publish_wait_ms(const publisher *pub)
{
    uint64_t deadline;
    if (!reorder_next_deadline(pub->window, &deadline))
        return -1;
    uint64_t now = metrics_now_ns();
    if (deadline <= now)
        return 0;
    uint64_t ms = (deadline - now + 999999u) / 1000000u;
    return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

void *stage_publish_main(void *arg)
{
    publisher *pub = arg;
    stage *s = &pub->stage;
    s->result = PIPELINE_OK;
    for (;;) {
        frame *f = NULL;
        /* Woken at least every PUBLISH_SUBSCRIPTIONS_MS to read subscriptions
         * while no frame comes: ZeroMQ queues them for this thread without bound. */
        int wait_ms = publish_wait_ms(pub);
        if (wait_ms < 0 || wait_ms > PUBLISH_SUBSCRIPTIONS_MS)
            wait_ms = PUBLISH_SUBSCRIPTIONS_MS;
        queue_status st = queue_pop_timed(s->in, (void **)&f, wait_ms);
        if (st == QUEUE_CLOSED)
            break;
        if (st == QUEUE_OK)
            publish_accept(pub, f);
        else
            subscriptions_drain(pub);
        publish_release_ready(pub, metrics_now_ns());
    }
    /* Every ticket given was closed or is held: release what is held. */
    publish_release_ready(pub, UINT64_MAX);
    return NULL;
}
