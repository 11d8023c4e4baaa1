/*
 * stage_receive_file.c - the receive stage of a file input (input.endpoint =
 * "file:NAME"): reads the frames of a recording (recording.h) in order and
 * hands them to the form stage exactly as a network frame: the same header,
 * size, CRC and finite checks, the same rejects, one copy into the frame
 * buffer. No ZeroMQ in the way.
 *
 * Lossless: the form queue is pushed with the block policy whatever
 * frame.overflow_policy says, so a recording is reprocessed whole however
 * slow the solver. Pacing (input.replay_timing): max reads the next frame as
 * soon as a frame buffer is free; original waits until the recorded time of
 * the frame since the first one (receipt time, or the source timestamp when
 * the recorder did not know it), divided by input.replay_speed, on
 * CLOCK_MONOTONIC against the start (no drift). After the last frame the
 * stage ends as on a stop request: the pipeline drains and pipeline_run
 * returns PIPELINE_OK.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "error_text.h"
#include "stage_receive.h"

pipeline_error receiver_recording_open(receiver *rx, const char *name, char *err, size_t err_bytes)
{
    const frame_shape *shape = rx->ctx->shape;
    char why[RECORDING_ERROR_MAX];
    if (recording_reader_open(&rx->recording, name, why, sizeof why) != RECORDING_OK) {
        error_text_set(err, err_bytes, "input.endpoint = file:%s: %s", name, why);
        return PIPELINE_EINVAL;
    }
    const recording_format *rf = recording_reader_format(rx->recording);
    uint64_t frames = recording_reader_frames(rx->recording);
    char have[160];
    recording_format_describe(rf, have, sizeof have);
    if (frames > 0 && shape->iq_input &&
        (rf->kind != PROTOCOL_KIND_IQ || rf->n != shape->n || rf->count != shape->iq_pulses ||
         rf->gates != shape->iq_gates || rf->element != shape->iq_format || rf->storage != shape->iq_layout)) {
        error_text_set(err, err_bytes, "input.endpoint = file:%s: the recording holds %s; form.input = iq is "
                       "configured for cubes of solver.n=%u form.pulses=%u form.range_gates=%u form.iq_format=%s "
                       "form.iq_layout=%s", name, have, shape->n, shape->iq_pulses, shape->iq_gates,
                       protocol_iq_format_name(shape->iq_format), protocol_iq_layout_name(shape->iq_layout));
        return PIPELINE_EINVAL;
    }
    if (frames > 0 && !shape->iq_input &&
        (rf->kind != PROTOCOL_KIND_COVARIANCE || rf->n != shape->n || rf->count != shape->matrices ||
         rf->element != shape->precision)) {
        error_text_set(err, err_bytes, "input.endpoint = file:%s: the recording holds %s; configured covariance "
                       "frames of solver.n=%u solver.matrices=%u solver.precision=%s", name, have, shape->n,
                       shape->matrices, eig_precision_name(shape->precision));
        return PIPELINE_EINVAL;
    }
    size_t largest = PROTOCOL_HEADER_BYTES;
    for (uint64_t i = 0; i < frames; i++) {
        const recording_frame *fr = recording_reader_frame(rx->recording, i);
        if (fr->bytes > largest)
            largest = (size_t)fr->bytes;
    }
    rx->recorded_frame = malloc(largest);
    rx->recorded_frame_bytes = largest;
    if (rx->recorded_frame == NULL) {
        error_text_set(err, err_bytes, "cannot allocate a %zu-byte frame buffer for file:%s", largest, name);
        return PIPELINE_ENOMEM;
    }
    LOG_INFO("receive", "file input %s: %llu frames, %s timing", name, (unsigned long long)frames,
             config_replay_timing_name(rx->ctx->cfg->input.replay_timing));
    return PIPELINE_OK;
}

void receiver_recording_close(receiver *rx)
{
    recording_reader_close(&rx->recording);
    free(rx->recorded_frame);
    rx->recorded_frame = NULL;
}

/* The recorded time of frame i in ns (receipt, else source timestamp). */
static uint64_t recorded_ns(const recording_frame *fr)
{
    return fr->received_ns != 0 ? fr->received_ns : fr->timestamp_ns;
}

/* original timing: sleeps until frame i's time since the first frame,
 * scaled, after start_ns (CLOCK_MONOTONIC), in slices so that a stop
 * request is seen within 100 ms. */
static void pace(receiver *rx, uint64_t i, uint64_t start_ns)
{
    if (rx->ctx->cfg->input.replay_timing != CONFIG_REPLAY_ORIGINAL || i == 0)
        return;
    uint64_t first = recorded_ns(recording_reader_frame(rx->recording, 0));
    uint64_t at = recorded_ns(recording_reader_frame(rx->recording, i));
    double offset = at > first ? (double)(at - first) / rx->ctx->cfg->input.replay_speed : 0.0;
    uint64_t due = start_ns + (uint64_t)offset;
    for (uint64_t now = metrics_now_ns(); now < due && !atomic_load(rx->ctx->stop_requested); now = metrics_now_ns()) {
        uint64_t wait = due - now < 100000000u ? due - now : 100000000u;
        struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

/* Reads recorded frame i into f and runs the network path's checks. */
static protocol_reject receive_recorded(receiver *rx, uint64_t i, frame *f, char *detail, size_t detail_bytes)
{
    const recording_frame *fr = recording_reader_frame(rx->recording, i);
    char why[RECORDING_ERROR_MAX];
    size_t parts = 0;
    detail[0] = '\0';
    f->received_ns = metrics_now_ns();
    f->received_real_ns = metrics_realtime_ns();
    recording_error e = recording_reader_read(rx->recording, i, rx->recorded_frame, rx->recorded_frame_bytes, why,
                                              sizeof why);
    if (e != RECORDING_OK) {
        /* The payload changed since it was recorded, or the frame cannot be
         * read back whole: counted like the network's CRC and truncation. */
        snprintf(detail, detail_bytes, "recorded frame %llu: %s", (unsigned long long)i, why);
        return e == RECORDING_ECRC ? PROTOCOL_REJECT_CRC : PROTOCOL_REJECT_TRUNCATED;
    }
    protocol_reject r = receive_check_header(rx, f, rx->recorded_frame, PROTOCOL_HEADER_BYTES, detail, detail_bytes);
    if (r != PROTOCOL_OK)
        return r;
    size_t payload = (size_t)fr->bytes - PROTOCOL_HEADER_BYTES;
    if (payload > f->a_bytes) {
        snprintf(detail, detail_bytes, "recorded frame %llu: payload exceeds %zu bytes", (unsigned long long)i,
                 f->a_bytes);
        return PROTOCOL_REJECT_OVERSIZED;
    }
    size_t capacity = rx->ctx->shape->part_capacity;
    if (recording_reader_part_sizes(rx->recording, i, f->part_bytes, capacity, &parts) != RECORDING_OK) {
        snprintf(detail, detail_bytes, "recorded frame %llu: %u parts, at most %zu taken", (unsigned long long)i,
                 fr->parts, capacity);
        return PROTOCOL_REJECT_PARTS;
    }
    receive_part all = {rx->recorded_frame + PROTOCOL_HEADER_BYTES, payload};
    receive_verdict scan = receive_copy_payload(rx, f, 0, &all, 1);
    return receive_check_payload(rx, f, parts, payload, &scan, detail, detail_bytes);
}

void *receive_file_main(void *arg)
{
    receiver *rx = arg;
    frame *f = NULL;
    char detail[RECORDING_ERROR_MAX + 64];
    uint64_t frames = recording_reader_frames(rx->recording), start = metrics_now_ns();

    rx->result = PIPELINE_OK;
    for (uint64_t i = 0; i < frames && !atomic_load(rx->ctx->stop_requested); i++) {
        /* Only a closed pool refuses, and it closes after this thread ends. */
        if (f == NULL && pool_get(rx->ctx->frames, (void **)&f) != POOL_OK)
            break;
        pace(rx, i, start);
        protocol_reject reason = receive_recorded(rx, i, f, detail, sizeof detail);
        if (reason == PROTOCOL_OK) {
            receive_accept(rx, f);
            f = NULL;
        } else {
            receive_reject(rx, reason, detail); /* keep f for the next frame */
        }
    }
    if (f != NULL)
        pipeline_frame_release(rx->ctx->p, f);
    LOG_INFO("receive", "end of the recording; draining");
    queue_close(rx->ctx->to_form);
    return NULL;
}
