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
 */
#include <errno.h>
#include <zmq.h>

#include "pipeline_internal.h"

/* ZeroMQ's free function for a zero-copy data part: any thread. */
static void output_release(void *data, void *hint)
{
    (void)data;
    output_buffer *out = hint;
    pool_put(out->home, out);
}

static void encode_header(const pipeline *p, const frame *f, output_buffer *out, int late)
{
    protocol_header h;
    size_t meta_bytes = protocol_meta_bytes(p->matrices);
    protocol_header_init(&h, PROTOCOL_KIND_EIGENSPACE);
    h.seq = f->header.seq;
    h.timestamp_ns = f->header.timestamp_ns;
    h.n = p->n;
    h.count = p->matrices;
    h.element = p->precision;
    h.storage = PROTOCOL_STORAGE_FULL;
    h.mode = p->format.mode;
    h.flags = late ? PROTOCOL_FLAG_LATE : 0;
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
static int send_output(pipeline *p, output_buffer **out)
{
    zmq_msg_t data;
    output_buffer *o = *out;
    if (zmq_send(p->output, o->header, PROTOCOL_HEADER_BYTES, ZMQ_SNDMORE) < 0)
        return -1;
    /* After the first part the rest of a multipart message is accepted
     * whatever the HWM; only a dying context fails here. */
    if (zmq_send(p->output, o->meta, protocol_meta_bytes(p->matrices), ZMQ_SNDMORE) < 0)
        return -1;
    if (zmq_msg_init_data(&data, o->data, o->data_bytes, output_release, o) != 0)
        return -1;
    *out = NULL;
    if (zmq_msg_send(&data, p->output, 0) < 0) {
        zmq_msg_close(&data); /* calls output_release */
        return -1;
    }
    return 0;
}

/* PUB output: reads what the XPUB received, the subscribe (first byte 1) and
 * unsubscribe (0) messages of its subscribers, so that they do not pile up;
 * a frame with no subscriber is sent to nobody and counted as published
 * (ZeroMQ's PUB semantics, docs/daemon.md). */
static void subscriptions_drain(pipeline *p)
{
    uint8_t msg[PROTOCOL_PREFIX_BYTES + 1];
    int bytes;
    if (p->cfg.output.pattern != CONFIG_OUTPUT_PUB)
        return;
    while ((bytes = zmq_recv(p->output, msg, sizeof msg, ZMQ_DONTWAIT)) >= 0)
        LOG_DEBUG("publish", "subscriber %s (%d-byte prefix)", bytes > 0 && msg[0] == 1 ? "subscribed" : "left",
                  bytes > 0 ? bytes - 1 : 0);
}

/* Why a send failed: EAGAIN on the XPUB is a subscriber at its HWM for the
 * whole bounded wait (NODROP); anything else, or PUSH, is send_failed. */
static pipeline_drop_reason send_failure_reason(const pipeline *p, int error)
{
    if (error == EAGAIN && p->cfg.output.pattern == CONFIG_OUTPUT_PUB)
        return PIPELINE_DROP_SUBSCRIBER;
    return PIPELINE_DROP_SEND;
}

/* Counted last: a test that sees out == in knows every histogram is final. */
static void count_published(pipeline *p, const frame *f, int late, uint64_t start)
{
    /* info > 0: did not converge; info < 0: an invalid argument (input). */
    uint64_t nonconvergence = 0, invalid = 0;
    for (uint32_t b = 0; b < p->matrices; b++) {
        nonconvergence += f->info[b] > 0;
        invalid += f->info[b] < 0;
    }
    uint64_t end = metrics_now_ns();
    if (late)
        atomic_fetch_add_explicit(&p->stats.frames_late, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->stats.matrices_failed, nonconvergence + invalid, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->stats.matrices_nonconvergence, nonconvergence, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->stats.matrices_invalid, invalid, memory_order_relaxed);
    metrics_histogram_observe(&p->stats.latency[METRICS_STAGE_PUBLISH], end - start);
    metrics_histogram_observe(&p->stats.latency[METRICS_STAGE_END_TO_END], end - f->received_ns);
    atomic_fetch_add_explicit(&p->stats.frames_out, 1, memory_order_release);
}

stage_outcome stage_publish_step(pipeline *p, frame *f, pipeline_drop_reason *reason)
{
    uint64_t start = metrics_now_ns();
    char err[192];
    if (path_output_wait(f->path, f, err, sizeof err) != PIPELINE_OK) {
        LOG_ERROR("publish", "frame seq %llu: %s", (unsigned long long)f->header.seq, err);
        *reason = PIPELINE_DROP_SOLVER;
        return STAGE_DROP;
    }
    int late = pipeline_frame_is_late(p, f, start);
    if (late && pipeline_live_get(p)->late_policy == CONFIG_LATE_DROP) {
        *reason = PIPELINE_DROP_LATE;
        return STAGE_DROP;
    }
    protocol_stage_times times = {
        .received_ns = f->received_real_ns,
        .solve_start_ns = f->solve_start_real_ns,
        .solve_end_ns = f->solve_end_real_ns,
        .published_ns = metrics_realtime_ns(),
    };
    protocol_meta_encode(&times, f->out->matrix_meta, p->matrices, f->out->meta);
    encode_header(p, f, f->out, late);
    subscriptions_drain(p);
    pipeline_sockets_output_wait_update(p);
    if (send_output(p, &f->out) != 0) {
        int error = errno;
        LOG_DEBUG("publish", "send failed: %s", zmq_strerror(error));
        *reason = send_failure_reason(p, error);
        return STAGE_DROP;
    }
    count_published(p, f, late, start);
    pipeline_frame_release(p, f);
    return STAGE_DONE;
}
