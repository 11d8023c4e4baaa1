/*
 * stage_publish.c - the publish stage: applies the late policy, assembles
 * the eigenspace frame [header][meta][data] and sends it.
 *
 * The header and the meta part (a few KB) are copied by ZeroMQ; the data part
 * is sent zero-copy from a pooled output buffer, which ZeroMQ hands back
 * through output_release (from its I/O thread) once it is on the wire or
 * discarded. The output frame carries the input's seq and source timestamp,
 * and a CRC32C when the input carried one.
 */
#include <errno.h>
#include <zmq.h>

#include "pipeline_internal.h"

/* ZeroMQ's free function for a zero-copy data part: any thread. */
static void output_release(void *data, void *hint)
{
    (void)data;
    output_buffer *out = hint;
    pool_put(&out->owner->outputs, out);
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
    h.element = p->element;
    h.storage = PROTOCOL_STORAGE_FULL;
    h.mode = p->mode;
    h.flags = late ? PROTOCOL_FLAG_LATE : 0;
    h.payload_bytes = meta_bytes + out->data_bytes;
    if (f->header.flags & PROTOCOL_FLAG_CRC) {
        h.flags |= PROTOCOL_FLAG_CRC;
        h.crc32c = protocol_crc32c(protocol_crc32c(0, out->meta, meta_bytes), out->data, out->data_bytes);
    }
    protocol_header_encode(&h, out->header);
}

/* Sends [header][meta][data]; 0 on success. On failure before the first part
 * was queued the buffer is still ours; the data part's buffer always returns
 * through output_release. */
static int send_output(pipeline *p, output_buffer *out, int *buffer_returned)
{
    zmq_msg_t data;
    *buffer_returned = 0;
    if (zmq_send(p->output, out->header, PROTOCOL_HEADER_BYTES, ZMQ_SNDMORE) < 0)
        return -1;
    /* After the first part the rest of a multipart message is accepted
     * whatever the HWM; only a dying context fails here. */
    if (zmq_send(p->output, out->meta, protocol_meta_bytes(p->matrices), ZMQ_SNDMORE) < 0)
        return -1;
    if (zmq_msg_init_data(&data, out->data, out->data_bytes, output_release, out) != 0)
        return -1;
    *buffer_returned = 1;
    if (zmq_msg_send(&data, p->output, 0) < 0) {
        zmq_msg_close(&data); /* calls output_release */
        return -1;
    }
    return 0;
}

static void publish_frame(pipeline *p, frame *f)
{
    uint64_t start = metrics_now_ns();
    int late = pipeline_frame_is_late(p, f, start);
    output_buffer *out = f->out;

#ifdef EIGSTREAM_PIPELINE_GPU
    if (p->gpu) {
        char err[160];
        /* The solve stage's copies into out must have landed. */
        if (pipeline_gpu_slot_finish(p->device, f->gpu_slot, err, sizeof err) != 0) {
            LOG_ERROR("publish", "frame seq %llu: device copy failed: %s", (unsigned long long)f->header.seq, err);
            pool_put(&p->outputs, out);
            f->out = NULL;
            pipeline_frame_drop(p, f, METRICS_DROP_SOLVER);
            return;
        }
    }
#endif
    if (late && p->cfg.frame.late_policy == CONFIG_LATE_DROP) {
        if (out != NULL)
            pool_put(&p->outputs, out);
        f->out = NULL;
        pipeline_frame_drop(p, f, METRICS_DROP_LATE);
        return;
    }
    if (out == NULL) {
        pool_get(&p->outputs, (void **)&out);
        output_assemble_host(p, f, out);
    }
    f->out = NULL;

    uint64_t failed = 0;
    for (uint32_t b = 0; b < p->matrices; b++)
        failed += out->matrix_meta[b].status != 0;
    protocol_stage_times times = {
        .received_ns = f->received_real_ns,
        .solve_start_ns = f->solve_start_real_ns,
        .solve_end_ns = f->solve_end_real_ns,
        .published_ns = metrics_realtime_ns(),
    };
    protocol_meta_encode(&times, out->matrix_meta, p->matrices, out->meta);
    encode_header(p, f, out, late);

    int returned;
    if (send_output(p, out, &returned) != 0) {
        LOG_DEBUG("publish", "send failed: %s", zmq_strerror(errno));
        if (!returned)
            pool_put(&p->outputs, out);
        pipeline_frame_drop(p, f, METRICS_DROP_SEND);
        return;
    }
    uint64_t end = metrics_now_ns();
    if (late)
        atomic_fetch_add_explicit(&p->stats.frames_late, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->stats.matrices_failed, failed, memory_order_relaxed);
    metrics_histogram_observe(&p->stats.latency[METRICS_STAGE_PUBLISH], end - start);
    metrics_histogram_observe(&p->stats.latency[METRICS_STAGE_END_TO_END], end - f->received_ns);
    /* Counted last: a test that sees out == in knows every histogram is final. */
    atomic_fetch_add_explicit(&p->stats.frames_out, 1, memory_order_release);
    pipeline_frame_release(p, f);
}

void *pipeline_publish_main(void *arg)
{
    pipeline *p = arg;
    frame *f;
    while (queue_pop(&p->to_publish, (void **)&f) == QUEUE_OK)
        publish_frame(p, f);
    return NULL;
}
