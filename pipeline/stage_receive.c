/*
 * stage_receive.c - the receive stage: reads whole multipart messages from
 * the input socket, validates them, copies the payload once into a pooled
 * frame buffer and queues the frame for forming under the overflow policy.
 *
 * Every part of a message is read even after the message has failed a
 * check, so that the next message starts aligned; a rejected message costs
 * a counter and at most one log line per reason per second.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "error_text.h"
#include "stage_receive.h"

void receive_reject(receiver *rx, protocol_reject reason, const char *detail)
{
    uint64_t suppressed;
    metrics_count_reject(rx->ctx->stats, reason);
    if (log_get_level() < LOG_LEVEL_WARN || !log_limiter_allow(&rx->reject_limit[reason], &suppressed))
        return;
    if (suppressed > 0)
        LOG_WARN("receive", "rejected message: %s%s%s (%llu more suppressed)", protocol_reject_name(reason),
                 detail[0] ? ": " : "", detail, (unsigned long long)suppressed);
    else
        LOG_WARN("receive", "rejected message: %s%s%s", protocol_reject_name(reason), detail[0] ? ": " : "",
                 detail);
}

/* The bytes of one payload element and the eig_precision its finite check
 * reads it as: a complex matrix element, or an IQ sample (cf32_le has the
 * bytes of complex float; ci16_le is always finite: 0, no check). */
static size_t payload_element(const protocol_header *h, uint8_t *finite_as)
{
    if (h->kind == PROTOCOL_KIND_IQ) {
        *finite_as = h->element == PROTOCOL_IQ_CF32_LE ? EIG_COMPLEX_FLOAT : 0;
        return protocol_iq_sample_bytes(h->element);
    }
    *finite_as = h->element;
    return eig_element_bytes(h->element);
}

receive_verdict receive_copy_payload(receiver *rx, frame *f, size_t offset, const receive_part *parts, size_t count)
{
    uint8_t finite_as;
    receive_job job = {.dst = (uint8_t *)f->a + offset, .parts = parts, .count = count,
                       .crc = (f->header.flags & PROTOCOL_FLAG_CRC) != 0};
    job.element = payload_element(&f->header, &finite_as);
    job.finite_as = finite_as;
    for (size_t i = 0; i < count; i++)
        job.total += parts[i].bytes;
    return receive_team_run(rx->team, &job);
}

/* An IQ cube's header against form.* and solver.n. */
static protocol_reject receive_check_iq_config(const receiver *rx, const protocol_header *h, char *detail,
                                               size_t detail_bytes)
{
    const frame_shape *c = rx->ctx->shape;
    protocol_reject r = protocol_iq_check_config(h, c->n, c->iq_pulses, c->iq_gates, c->iq_format, c->iq_layout);
    if (r != PROTOCOL_OK)
        snprintf(detail, detail_bytes,
                 "cube of %u channels x %u pulses x %u gates, %s %s; configured solver.n=%u form.pulses=%u "
                 "form.range_gates=%u form.iq_format=%s form.iq_layout=%s", h->n, h->count, h->gates,
                 protocol_iq_format_name(h->element), protocol_iq_layout_name(h->storage), c->n, c->iq_pulses,
                 c->iq_gates, protocol_iq_format_name(c->iq_format), protocol_iq_layout_name(c->iq_layout));
    return r;
}

protocol_reject receive_check_header(const receiver *rx, frame *f, const void *part, size_t part_bytes, char *detail,
                                     size_t detail_bytes)
{
    /* One input kind per daemon (form.input): the other is bad_kind, before its fields. */
    uint8_t expect = rx->ctx->shape->iq_input ? PROTOCOL_KIND_IQ : PROTOCOL_KIND_COVARIANCE;
    protocol_reject r = protocol_header_decode_kind(part, part_bytes, expect, &f->header);
    if (r == PROTOCOL_REJECT_KIND)
        snprintf(detail, detail_bytes, "kind %u is not %s (form.input = %s)",
                 part_bytes > 5 ? ((const uint8_t *)part)[5] : 0, rx->ctx->shape->iq_input ? "IQ cube" : "covariance",
                 config_form_input_name(rx->ctx->cfg->form.input));
    if (r == PROTOCOL_OK && rx->ctx->shape->iq_input)
        return receive_check_iq_config(rx, &f->header, detail, detail_bytes);
    /* A frame's fragments must come in order on one connection; PUSH deals
     * each message to the next connection, and a recording replays frames. */
    if (r == PROTOCOL_OK && (f->header.flags & PROTOCOL_FLAG_FRAGMENT) &&
        (rx->recording != NULL || rx->ctx->cfg->input.io_threads > 1)) {
        snprintf(detail, detail_bytes, "a fragment (seq %llu, matrix %u): %s", (unsigned long long)f->header.seq,
                 f->header.fragment_first,
                 rx->recording != NULL ? "file input takes whole frames (replay the recording with eigstream-replay)"
                                      : "fragmented frames need input.io_threads = 1");
        return PROTOCOL_REJECT_CONFIG;
    }
    if (r == PROTOCOL_OK) {
        r = protocol_check_config(&f->header, rx->ctx->shape->n, rx->ctx->shape->matrices, rx->ctx->shape->precision);
        if (r != PROTOCOL_OK)
            snprintf(detail, detail_bytes, "frame n=%u matrices=%u %s, configured n=%u matrices=%u %s",
                     f->header.n, f->header.count, eig_precision_name(f->header.element), rx->ctx->shape->n,
                     rx->ctx->shape->matrices, eig_precision_name(rx->ctx->shape->precision));
    }
    return r;
}

protocol_reject receive_check_payload(const receiver *rx, frame *f, size_t parts, size_t copied,
                                      const receive_verdict *scan, char *detail, size_t detail_bytes)
{
    /* More parts than a valid frame has: f->part_bytes holds only the first
     * ones; checking no parts gives the header's size checks, then `parts`. */
    size_t listed = parts > rx->ctx->shape->part_capacity ? 0 : parts;
    protocol_reject r;
    if (rx->ctx->shape->iq_input)
        r = protocol_iq_check_sizes(&f->header, f->part_bytes, listed, rx->ctx->shape->max_payload_bytes);
    else
        r = protocol_covariance_check_sizes(&f->header, f->part_bytes, listed, rx->ctx->shape->max_payload_bytes);
    if (r != PROTOCOL_OK) {
        int iq = rx->ctx->shape->iq_input;
        snprintf(detail, detail_bytes, "%zu parts, %zu bytes; header says %llu bytes of %s %s", parts, copied,
                 (unsigned long long)f->header.payload_bytes,
                 iq ? protocol_iq_layout_name(f->header.storage) : protocol_storage_name(f->header.storage),
                 iq ? protocol_iq_format_name(f->header.element) : eig_precision_name(f->header.element));
        return r;
    }
    if ((f->header.flags & PROTOCOL_FLAG_CRC) && scan->crc != f->header.crc32c)
        return PROTOCOL_REJECT_CRC;
    if (scan->finite != PROTOCOL_OK)
        return scan->finite;
    if (rx->ctx->shape->format.mode >= PROTOCOL_MODE_SIGNAL && rx->ctx->cfg->output.signal_dimension == 0 &&
        output_frame_snapshots(&rx->ctx->shape->format, f) == 0 && rx->ctx->cfg->output.snapshots == 0) {
        snprintf(detail, detail_bytes,
                 "MDL needs the snapshot count: the frame's snapshots is 0 and output.snapshots is 0 "
                 "(set output.snapshots or output.signal_dimension)");
        return PROTOCOL_REJECT_CONFIG;
    }
    return PROTOCOL_OK;
}

static void receive_parts_close(receiver *rx, size_t held)
{
    for (size_t i = 0; i < held; i++)
        zmq_msg_close(&rx->parts[i]);
}

/* The held parts into f->a at offset, checked (receive_copy_payload). */
static receive_verdict receive_copy_parts(receiver *rx, frame *f, size_t offset, size_t held)
{
    for (size_t i = 0; i < held; i++)
        rx->list[i] = (receive_part){zmq_msg_data(&rx->parts[i]), zmq_msg_size(&rx->parts[i])};
    return receive_copy_payload(rx, f, offset, rx->list, held);
}

void receive_assembly_give_up(receiver *rx, const char *why, int stale, uint64_t now_ns)
{
    if (!rx->assembly.active)
        return;
    uint64_t waited = now_ns - rx->assembly.last_ns;
    if (stale && waited <= (uint64_t)rx->ctx->cfg->input.fragment_timeout_ms * 1000000u)
        return;
    char detail[256];
    snprintf(detail, sizeof detail, "frame seq %llu given up with %u of its %u matrices: %s",
             (unsigned long long)rx->assembly.f.frame.seq, rx->assembly.f.next, rx->assembly.f.frame.count, why);
    rx->assembly.active = 0;
    receive_reject(rx, PROTOCOL_REJECT_INCOMPLETE, detail);
}

/* Where a message's payload goes in the frame buffer, decided before it is
 * copied there: a whole frame, or a fragment that begins a frame, at 0
 * (giving up a frame being assembled: its bytes are overwritten); the next
 * fragment of that frame at its first matrix; any other fragment nowhere
 * (incomplete), leaving the frame being assembled as it is. */
static protocol_reject receive_fragment_place(receiver *rx, const protocol_header *h, size_t *offset, char *detail,
                                              size_t detail_bytes)
{
    *offset = 0;
    int fragment = (h->flags & PROTOCOL_FLAG_FRAGMENT) != 0;
    if (!fragment || h->fragment_first == 0) {
        receive_assembly_give_up(rx, fragment ? "a new frame began" : "a whole frame came in between", 0, 0);
        if (fragment) {
            rx->assembly.active = 1;
            protocol_fragments_begin(&rx->assembly.f, h);
        }
        return PROTOCOL_OK;
    }
    if (rx->assembly.active && protocol_fragments_continues(&rx->assembly.f, h)) {
        *offset = (size_t)h->fragment_first * protocol_matrix_bytes(h->n, h->element, h->storage);
        return PROTOCOL_OK;
    }
    if (rx->assembly.active)
        snprintf(detail, detail_bytes, "fragment of seq %llu at matrix %u while seq %llu waits for matrix %u",
                 (unsigned long long)h->seq, h->fragment_first, (unsigned long long)rx->assembly.f.frame.seq,
                 rx->assembly.f.next);
    else
        snprintf(detail, detail_bytes, "fragment of seq %llu at matrix %u, and no frame is being assembled",
                 (unsigned long long)h->seq, h->fragment_first);
    return PROTOCOL_REJECT_INCOMPLETE;
}

/* A placed fragment after its checks (r; its CRC, when flagged, matched
 * its payload): joined to its frame (the whole frame then in f, with the
 * frame's header), or its frame given up. */
static receive_result receive_fragment_join(receiver *rx, frame *f, protocol_reject r, const char *detail)
{
    if (r != PROTOCOL_OK) {
        /* Counted once, by the fragment's reason (docs/protocol.md: a frame
         * is counted once); the frame it belonged to is given up with it. */
        char both[512];
        snprintf(both, sizeof both, "%s%sfragment at matrix %u; frame seq %llu given up with %u of its %u matrices",
                 detail, detail[0] ? "; " : "", f->header.fragment_first,
                 (unsigned long long)rx->assembly.f.frame.seq, rx->assembly.f.next, rx->assembly.f.frame.count);
        rx->assembly.active = 0;
        receive_reject(rx, r, both);
        return RECEIVE_NOTHING;
    }
    rx->assembly.last_ns = metrics_now_ns(); /* the wait for the next fragment starts now */
    if (!protocol_fragments_join(&rx->assembly.f, &f->header))
        return RECEIVE_FRAGMENT;
    f->header = rx->assembly.f.frame;
    rx->assembly.active = 0;
    return RECEIVE_FRAME;
}

/* The dispatch client of the input socket a message came on (NULL: not
 * input.pattern dispatch). */
static dispatch_client *receive_dispatch_client(const receiver *rx, const void *socket)
{
    for (int k = 0; k < CONFIG_INPUT_IO_THREADS_MAX; k++)
        if (rx->inputs[k] == socket)
            return rx->dispatch[k];
    return NULL;
}

/* Reads one whole message into f. On RECEIVE_REJECTED *reason and detail say why. */
receive_result receive_message(receiver *rx, void *socket, frame *f, protocol_reject *reason, char *detail,
                                      size_t detail_bytes)
{
    zmq_msg_t part;
    protocol_reject r = PROTOCOL_OK;
    receive_verdict scan = {0, PROTOCOL_OK};
    int more;

    detail[0] = '\0';
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, socket, ZMQ_DONTWAIT) < 0) {
        int e = errno;
        zmq_msg_close(&part);
        return (e == EAGAIN || e == EINTR) ? RECEIVE_NOTHING : RECEIVE_FATAL;
    }
    f->received_ns = metrics_now_ns();
    f->received_real_ns = metrics_realtime_ns();
    more = zmq_msg_more(&part);
    dispatch_client *client = receive_dispatch_client(rx, socket);
    if (client != NULL && dispatch_client_take(client, zmq_msg_data(&part), zmq_msg_size(&part), more,
                                               f->received_ns)) {
        zmq_msg_close(&part); /* a control message from eigstream-dispatch */
        return RECEIVE_NOTHING;
    }

    r = receive_check_header(rx, f, zmq_msg_data(&part), zmq_msg_size(&part), detail, detail_bytes);
    zmq_msg_close(&part);
    size_t offset = 0;
    if (r == PROTOCOL_OK)
        r = receive_fragment_place(rx, &f->header, &offset, detail, detail_bytes);
    int placed_fragment = r == PROTOCOL_OK && (f->header.flags & PROTOCOL_FLAG_FRAGMENT);

    /* The payload parts: held until the last has been read (ZeroMQ has all
     * of them by now), then copied once, back to back, into the frame buffer
     * by the receive team while the message still looks valid and they fit;
     * always drained. Whether the parts are too many or too large is decided
     * only once all of them are counted (receive_check_payload), in the order
     * of docs/protocol.md, whatever the storage. Memory stays bounded as the
     * parts are read: a part that no longer fits the frame buffer, or that
     * takes the message past input.max_message_bytes (oversized, counted
     * once), releases every part held, and each later part is released as
     * soon as it is read. */
    size_t held = 0, total = 0;
    int fits = 1;
    protocol_message_budget budget;
    protocol_message_budget_begin(&budget, rx->ctx->shape->max_payload_bytes);
    while (more) {
        zmq_msg_t *m = fits && held < rx->ctx->shape->part_capacity ? &rx->parts[held] : &part;
        zmq_msg_init(m);
        if (zmq_msg_recv(m, socket, 0) < 0) {
            int e = errno;
            zmq_msg_close(m);
            if (e == EINTR)
                continue; /* parts of a message arrive together; retry */
            receive_parts_close(rx, held);
            return RECEIVE_FATAL;
        }
        more = zmq_msg_more(m);
        size_t bytes = zmq_msg_size(m);
        if (budget.parts < rx->ctx->shape->part_capacity)
            f->part_bytes[budget.parts] = bytes;
        int within = protocol_message_budget_take(&budget, bytes);
        fits = fits && within && bytes <= f->a_bytes - offset - total; /* else the sizes check rejects it */
        total += fits ? bytes : 0;
        if (m != &part && fits) {
            held++;
        } else {
            zmq_msg_close(m); /* more parts than a valid frame has, or too large: rejected */
            receive_parts_close(rx, held);
            held = 0;
        }
    }
    size_t parts = (size_t)budget.parts, seen = (size_t)budget.seen;
    if (r == PROTOCOL_OK && fits && parts <= rx->ctx->shape->part_capacity)
        scan = receive_copy_parts(rx, f, offset, held);
    receive_parts_close(rx, held);
    if (r == PROTOCOL_OK && budget.oversized) {
        snprintf(detail, detail_bytes, "%zu parts of %zu bytes in all, above input.max_message_bytes = %zu: "
                 "released as read", parts, seen, rx->ctx->shape->max_payload_bytes);
        r = PROTOCOL_REJECT_OVERSIZED;
    }

    if (r == PROTOCOL_OK)
        r = receive_check_payload(rx, f, parts, seen, &scan, detail, detail_bytes);
    if (placed_fragment)
        return receive_fragment_join(rx, f, r, detail);
    *reason = r;
    return r == PROTOCOL_OK ? RECEIVE_FRAME : RECEIVE_REJECTED;
}

/* A seq that does not increase means the source restarted (or a second
 * source shares the input): counted and logged once per restart, never a
 * loss; the frame is accepted like any other. */
static void receive_check_seq(receiver *rx, const frame *f)
{
    uint64_t seq = f->header.seq;
    if (rx->seq_seen && seq <= rx->last_seq) {
        atomic_fetch_add_explicit(&rx->ctx->stats->source_restarts, 1, memory_order_relaxed);
        LOG_WARN("receive", "source restart: seq %llu after %llu", (unsigned long long)seq,
                 (unsigned long long)rx->last_seq);
    }
    rx->last_seq = seq;
    rx->seq_seen = 1;
}

/* Hands an accepted frame to the form stage under the overflow policy. File
 * input, a frame whose sender asked for it (flag LOSSLESS: eigstream-replay
 * by default) and a frame eigstream-dispatch sent always block: a recording
 * is reprocessed losslessly, the wait pushes back on that sender through
 * ZeroMQ, and the dispatcher sent its frame on this daemon's credit (with
 * several DEALERs their shares of the free slots may briefly promise one
 * more than is free: the reader waits for it rather than drop). */
static void receive_queue(receiver *rx, frame *f)
{
    atomic_fetch_add_explicit(&rx->ctx->stats->frames_in, 1, memory_order_relaxed);
    metrics_histogram_observe(&rx->ctx->stats->latency[METRICS_STAGE_RECEIVE], metrics_now_ns() - f->received_ns);
    int lossless = rx->recording != NULL || (f->header.flags & PROTOCOL_FLAG_LOSSLESS) || rx->dispatch[0] != NULL;
    if (rx->ctx->live->overflow_policy == CONFIG_OVERFLOW_DROP_OLDEST && !lossless) {
        void *evicted = NULL;
        if (queue_push_evict_oldest(rx->ctx->to_form, f, &evicted) != QUEUE_OK)
            pipeline_frame_drop(rx->ctx->p, f, METRICS_DROP_OVERFLOW); /* closed: cannot happen while we run */
        else if (evicted != NULL)
            pipeline_frame_drop(rx->ctx->p, evicted, METRICS_DROP_OVERFLOW);
        return;
    }
    /* block: while the form queue is full the receiver stops reading, the
     * socket's receive HWM fills and ZeroMQ pushes back on the sender. */
    if (queue_try_push(rx->ctx->to_form, f) == QUEUE_OK)
        return;
    atomic_fetch_add_explicit(&rx->ctx->stats->overflow_blocked, 1, memory_order_relaxed);
    if (queue_push(rx->ctx->to_form, f) != QUEUE_OK)
        pipeline_frame_drop(rx->ctx->p, f, METRICS_DROP_OVERFLOW);
}

void receive_accept(receiver *rx, frame *f)
{
    receive_check_seq(rx, f);
    receive_queue(rx, f);
}

void receive_accept_late(receiver *rx, frame *f)
{
    uint64_t suppressed;
    atomic_fetch_add_explicit(&rx->ctx->stats->input_late, 1, memory_order_relaxed);
    if (log_get_level() >= LOG_LEVEL_WARN && log_limiter_allow(&rx->input_late_limit, &suppressed))
        LOG_WARN("receive", "frame seq %llu came after input.reorder_ms, behind seq %llu from another connection: "
                 "passed on out of order (%llu more suppressed)", (unsigned long long)f->header.seq,
                 (unsigned long long)rx->last_seq, (unsigned long long)suppressed);
    receive_queue(rx, f);
}

void receive_dispatch_credit(receiver *rx, int k, int sockets)
{
    queue *to_form = rx->ctx->to_form;
    size_t used = queue_depth(to_form) + (rx->assembly.active ? 1u : 0u);
    size_t free_slots = used < to_form->capacity ? to_form->capacity - used : 0;
    uint64_t turn = atomic_load_explicit(&rx->ctx->stats->frames_in, memory_order_relaxed);
    dispatch_client_tick(rx->dispatch[k], dispatch_client_share(free_slots, k, sockets, turn), metrics_now_ns());
}

/* GOODBYE stops the dispatcher, which answers behind the frames it had
 * already sent; those are received like any other until the answer. */
frame *receive_dispatch_drain(receiver *rx, int k, frame *f, char *detail, size_t detail_bytes)
{
    dispatch_client *client = rx->dispatch[k];
    zmq_pollitem_t item = {.socket = rx->inputs[k], .events = ZMQ_POLLIN};
    dispatch_client_goodbye(client);
    uint64_t end = metrics_now_ns() + dispatch_client_drain_ns(client);
    while (!dispatch_client_drained(client) && metrics_now_ns() < end) {
        if (f == NULL && pool_get(rx->ctx->frames, (void **)&f) != POOL_OK)
            break;
        if (zmq_poll(&item, 1, DISPATCH_CLIENT_POLL_MS) <= 0)
            continue; /* nothing yet, or a signal */
        protocol_reject reason = PROTOCOL_OK;
        receive_result result = receive_message(rx, rx->inputs[k], f, &reason, detail, detail_bytes);
        if (result == RECEIVE_FRAME) {
            receive_accept(rx, f);
            f = NULL;
        } else if (result == RECEIVE_REJECTED) {
            receive_reject(rx, reason, detail);
        } else if (result == RECEIVE_FATAL) {
            break;
        } /* RECEIVE_FRAGMENT: its frame stays in f */
    }
    if (!dispatch_client_drained(client))
        LOG_WARN("dispatch", "input socket %d: no answer to GOODBYE: frames still on their way to this daemon "
                             "are lost", k);
    return f;
}

_Static_assert(CONFIG_COPY_THREADS_MAX <= RECEIVE_TEAM_MAX, "input.copy_threads exceeds the receive team");

/* input.copy_threads 0: a quarter of the online cores, at most 8 (the copy
 * is bound by memory: on an H100 host one thread copies ~5.5 GB/s, eight
 * together ~37 GB/s; with two GPUs behind one receive thread its copy is
 * what paces the input, README "Several solver workers"); fewer than 8 cores get
 * none. */
int receive_copy_threads(const receiver *rx)
{
    int threads = rx->ctx->cfg->input.copy_threads;
    if (threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores >= 32 ? 8 : cores >= 4 ? (int)(cores / 4) : 1;
    }
    return threads;
}

pipeline_error receiver_prepare(receiver *rx, char *err, size_t err_bytes)
{
    /* Several input sockets: each socket's reader has its own part buffers
     * and shares the copy threads out (stage_receive_merge.c); the receive
     * thread only merges. */
    if (rx->ctx->cfg->input.io_threads > 1)
        return PIPELINE_OK;
    rx->parts = calloc(rx->ctx->shape->part_capacity, sizeof *rx->parts);
    rx->list = calloc(rx->ctx->shape->part_capacity, sizeof *rx->list);
    if (rx->parts == NULL || rx->list == NULL) {
        error_text_set(err, err_bytes, "out of memory");
        return PIPELINE_ENOMEM;
    }
    int threads = receive_copy_threads(rx);
    if (threads < 2 || rx->recording != NULL)
        return PIPELINE_OK;
    rx->team = receive_team_create(threads);
    if (rx->team == NULL) {
        error_text_set(err, err_bytes, "input.copy_threads: cannot start %d copy threads", threads);
        return PIPELINE_ETHREAD;
    }
    for (int i = 0; i < threads - 1; i++)
        pipeline_realtime_thread(rx->ctx->p, receive_team_helper(rx->team, i), CONFIG_THREAD_RECEIVE, i + 1);
    LOG_DEBUG("receive", "%d threads copy each frame of %u kB or more", threads, RECEIVE_TEAM_MIN_BYTES / 1024);
    return PIPELINE_OK;
}

void receiver_release(receiver *rx)
{
    receive_team_destroy(&rx->team);
    free(rx->parts);
    free(rx->list);
    rx->parts = NULL;
    rx->list = NULL;
}

/* Ends with PIPELINE_OK on a stop request, PIPELINE_ESOCKET when the input
 * socket fails (the pipeline then stops and drains), after closing the form
 * queue either way. */
void *receive_main(void *arg)
{
    receiver *rx = arg;
    frame *f = NULL;
    char detail[256];
    zmq_pollitem_t item = {.socket = rx->inputs[0], .events = ZMQ_POLLIN};

    rx->result = PIPELINE_OK;
    while (!atomic_load(rx->ctx->stop_requested)) {
        /* Only a closed pool refuses, and it closes after this thread ends. */
        if (f == NULL && pool_get(rx->ctx->frames, (void **)&f) != POOL_OK)
            break;
        /* dispatch: credit for the slots the form stage freed (a frame being
         * assembled will take one), heartbeats */
        if (rx->dispatch[0] != NULL)
            receive_dispatch_credit(rx, 0, 1);
        /* A short poll bounds how long a stop request waits. */
        int ready = zmq_poll(&item, 1, rx->dispatch[0] != NULL ? DISPATCH_CLIENT_POLL_MS : 100);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0) {
            LOG_ERROR("receive", "input socket poll failed: %s", zmq_strerror(errno));
            rx->result = PIPELINE_ESOCKET;
            break;
        }
        if (ready == 0) {
            receive_assembly_give_up(rx, "no next fragment within input.fragment_timeout_ms", 1, metrics_now_ns());
            continue;
        }
        protocol_reject reason = PROTOCOL_OK;
        receive_result result = receive_message(rx, rx->inputs[0], f, &reason, detail, sizeof detail);
        if (result == RECEIVE_FRAME) {
            receive_accept(rx, f);
            f = NULL;
        } else if (result == RECEIVE_REJECTED) {
            receive_reject(rx, reason, detail); /* keep f for the next message */
        } else if (result == RECEIVE_FATAL) {
            LOG_ERROR("receive", "input socket failed: %s", zmq_strerror(errno));
            rx->result = PIPELINE_ESOCKET;
            break;
        }
    }
    if (rx->dispatch[0] != NULL && rx->result == PIPELINE_OK)
        f = receive_dispatch_drain(rx, 0, f, detail, sizeof detail);
    receive_assembly_give_up(rx, "the daemon stopped", 0, 0);
    if (f != NULL)
        pipeline_frame_release(rx->ctx->p, f);
    LOG_DEBUG("receive", "stopped accepting; draining");
    queue_close(rx->ctx->to_form);
    return NULL;
}
