/*
 * sim_main.c - eigstream-sim: publishes covariance frames of a synthetic radar
 * scene, or with --iq the raw IQ cubes of one (iq_scene.h).
 *
 * A pool of distinct frames is generated at start (generating one costs about
 * half a second) and cycled; each send carries its own seq and timestamp and
 * reuses the pool buffer zero-copy (the buffers are never written again, and
 * the pool outlives the socket, so the free callback does nothing).
 *
 * With --fragments F a covariance frame goes out as F messages of
 * consecutive whole matrices (docs/protocol.md, fragmented covariance
 * frames), back to back on the socket, each with its own payload_bytes and
 * CRC32C (computed once per pool frame).
 *
 * A send waits for the socket to take the message (ZMQ_POLLOUT), and the
 * sim gives up once no message could be queued for --stall-timeout-ms (no
 * receiver, or one that stopped reading): named, exit 1, with the frames
 * written to the connection and those still queued (issue 26: it used to
 * block in zmq_send until a signal).
 *
 * An --endpoint that lists K endpoints (push only) opens K PUSH sockets,
 * socket k on ZeroMQ I/O thread k (ZMQ_AFFINITY) and attached to the k-th
 * endpoint, and sends frame seq f, every fragment of it, on socket f mod K:
 * a daemon whose input.endpoint lists the same endpoints (input.io_threads
 * = K) then reads each connection in order on its own thread at both ends.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "cli_choices.h"
#include "cli_common.h"
#include "cli_curve.h"
#include "cli_endpoints.h"
#include "cli_options.h"
#include "cli_peer.h"
#include "protocol.h"
#include "iq_scene.h"
#include "scene.h"
#include "sim_frame.h"

typedef struct sim_options {
    uint32_t n, cells, snapshots, pool, hwm;
    const char *sources, *jammers, *endpoint;
    int element, storage; /* eig_precision, protocol_storage */
    int crc, bind, pub, per_matrix_parts, quiet;
    uint32_t fragments; /* messages per covariance frame, 1 = whole frames */
    double rate;
    uint64_t frames, seed;
    int linger_ms;
    int stall_timeout_ms; /* give up when nothing could be queued for this long; 0 = never */
    cli_curve curve;
    cli_endpoints endpoints; /* a listed --endpoint: one PUSH socket each; count 0 = one endpoint */
    /* --iq: IQ cubes of the scene instead of covariances */
    int iq, iq_format, iq_layout, per_slice_parts; /* protocol_iq_format, protocol_iq_layout */
    uint32_t pulses, gates, clutter_patches;
    const char *targets;
    double clutter_db, clutter_slope, iq_scale;
} sim_options;

/* What every frame of a run is: the header (seq, timestamp and CRC filled
 * per send), how the payload splits into parts, and into how many fragments
 * (1: whole frames; protocol_fragment_range says which matrices each carries). */
typedef struct sim_layout {
    protocol_header header;
    size_t parts, part_bytes, frame_bytes;
    uint32_t fragments;
    size_t matrix_bytes; /* covariance: one matrix; IQ: 0 */
} sim_layout;

static const char *const sim_patterns[] = {"push", "pub", NULL};
static const char *const sim_crc_choices[] = {"off", "on", NULL};

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: 0 after --help, 2 after a bad argument (named on stderr). */
static int parse_options(int argc, char **argv, sim_options *o)
{
    *o = (sim_options){.n = 128, .cells = 180, .snapshots = 256, .pool = 4, .hwm = 4,
                       .sources = SCENE_DEFAULT_SOURCES, .jammers = NULL,
                       .endpoint = "tcp://127.0.0.1:5550", .element = EIG_COMPLEX_DOUBLE,
                       .storage = PROTOCOL_STORAGE_FULL, .crc = 1, .fragments = 1, .rate = 2.0, .seed = 1,
                       .linger_ms = 5000, .stall_timeout_ms = 30000,
                       .iq_format = PROTOCOL_IQ_CI16_LE, .iq_layout = PROTOCOL_IQ_CPG, .pulses = 180, .gates = 256,
                       .targets = IQ_SCENE_DEFAULT_TARGETS, .clutter_db = 30.0, .clutter_slope = 1.0};
    const cli_choices precisions = cli_choices_precision(), storages = cli_choices_storage();
    const cli_choices iq_formats = cli_choices_iq_format(), iq_layouts = cli_choices_iq_layout();
    const cli_option table[] = {
        CLI_STRING("endpoint", 0, &o->endpoint, "E",
                   "ZeroMQ endpoint; or K (2..8) separated by commas: one PUSH socket each, on its own I/O "
                   "thread, frame seq f on the (f mod K)-th (a daemon's input.endpoint listing them, "
                   "input.io_threads = K)"),
        CLI_CHOICE("pattern", 0, &o->pub, sim_patterns, NULL, "socket type"),
        CLI_FLAG("bind", 0, &o->bind, "bind instead of connect (each endpoint of a list)"),
        CLI_INT("n", 0, &o->n, 1, EIG_N_MAX, "N", "channels = matrix order"),
        CLI_INT("cells", 0, &o->cells, 1, 100000, "C", "matrices per frame"),
        CLI_INT("snapshots", 0, &o->snapshots, 1, 1000000, "K", "snapshots per covariance"),
        CLI_STRING("sources", 0, &o->sources, "LIST", "angle_deg:power_db,..."),
        CLI_STRING("jammers", 0, &o->jammers, "LIST", "angle_deg:power_db,..."),
        CLI_CHOICE("precision", 0, &o->element, precisions.names, precisions.values, "element type"),
        CLI_CHOICE("storage", 0, &o->storage, storages.names, storages.values, "matrix storage"),
        CLI_CHOICE("crc", 0, &o->crc, sim_crc_choices, NULL, "CRC32C over the payload"),
        CLI_FLAG("per-matrix-parts", 0, &o->per_matrix_parts, "one message part per matrix"),
        CLI_INT("fragments", 0, &o->fragments, 1, 100000, "F",
                "send each frame as F fragments of consecutive whole matrices (sizes differ by at most 1, "
                "the larger first; F <= --cells, else a usage error; not with --iq)"),
        CLI_DOUBLE("rate", 0, &o->rate, 0.0, 1e6, "R", "frames/s, 0 = as fast as possible"),
        CLI_INT("frames", 0, &o->frames, 0, UINT64_MAX, "N", "frames to send, 0 = until SIGINT"),
        CLI_INT("pool", 0, &o->pool, 1, 1024, "P", "distinct pre-generated frames to cycle"),
        CLI_INT("seed", 0, &o->seed, 0, UINT64_MAX, "S", "random seed"),
        CLI_INT("hwm", 0, &o->hwm, 1, 1000000, "H", "send high-water mark in frames (per socket)"),
        CLI_INT("linger-ms", 0, &o->linger_ms, 0, 3600000, "L", "time to flush queued frames at exit"),
        CLI_INT("stall-timeout-ms", 0, &o->stall_timeout_ms, 0, 86400000, "T",
                "give up (exit 1) when no frame could be queued for T ms: no receiver, or one that takes "
                "nothing; 0 = wait for ever"),
        CLI_FLAG("quiet", 0, &o->quiet, "only the summary line"),
        CLI_CURVE_OPTIONS(&o->curve),
        CLI_FLAG("iq", 0, &o->iq, "send raw IQ cubes (kind 3) instead of covariances; --n channels"),
        CLI_INT("pulses", 0, &o->pulses, 1, 65536, "P", "--iq: pulses per cube"),
        CLI_INT("gates", 0, &o->gates, 1, 1048576, "G", "--iq: range gates per pulse"),
        CLI_STRING("targets", 0, &o->targets, "LIST",
                   "--iq: angle_deg:doppler:power_db,... (doppler in cycles/pulse, -0.5..0.5)"),
        CLI_INT("clutter-patches", 0, &o->clutter_patches, 0, 100000, "K",
                "--iq: clutter ridge patches, 0 = no clutter"),
        CLI_DOUBLE("clutter-db", 0, &o->clutter_db, -200.0, 200.0, "DB", "--iq: total clutter power"),
        CLI_DOUBLE("clutter-slope", 0, &o->clutter_slope, -100.0, 100.0, "B",
                   "--iq: ridge Doppler = B * sin(angle) / 2 cycles/pulse"),
        CLI_CHOICE("iq-format", 0, &o->iq_format, iq_formats.names, iq_formats.values, "--iq: sample format"),
        CLI_CHOICE("iq-layout", 0, &o->iq_layout, iq_layouts.names, iq_layouts.values,
                   "--iq: sample order, slowest index first"),
        CLI_DOUBLE("iq-scale", 0, &o->iq_scale, 0.0, 1e30, "S",
                   "--iq: sample value = raw * S; 0 = ci16: 4 sigma at full scale, cf32: 1"),
        CLI_FLAG("per-slice-parts", 0, &o->per_slice_parts,
                 "--iq: one message part per channel (cpg) or per pulse (pcg, pgc)"),
        CLI_END};
    const cli_spec spec = {.prog = "eigstream-sim", .synopsis = "[options]",
                           .description = "Publishes covariance frames of a synthetic radar scene, or with --iq\n"
                                          "raw IQ cubes of targets (angle, Doppler, power), barrage jammers\n"
                                          "(--jammers angle:power: every Doppler bin), an optional clutter ridge\n"
                                          "and unit thermal noise on a half-wavelength ULA (README, Forming\n"
                                          "from raw IQ).\n",
                           .options = table};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
    if (status >= 0)
        return status;
    if (strchr(o->endpoint, ',') != NULL) {
        char why[CLI_ENDPOINTS_WHY_BYTES];
        if (cli_endpoints_parse(o->endpoint, &o->endpoints, why, sizeof why) != 0)
            return cli_usage_error("eigstream-sim", "--endpoint: %s", why);
        if (o->pub)
            return cli_usage_error("eigstream-sim", "--endpoint lists %d endpoints, one PUSH socket each: a list "
                                   "is for --pattern push; pub takes one endpoint", o->endpoints.count);
    }
    if (o->iq && o->fragments > 1)
        return cli_usage_error("eigstream-sim", "--fragments is for covariance frames; IQ cubes (--iq) go whole");
    if (!o->iq && o->fragments > o->cells)
        return cli_usage_error("eigstream-sim",
                               "--fragments %u exceeds the %u matrices of a frame (--cells); a fragment carries at "
                               "least one", o->fragments, o->cells);
    return -1;
}

/* Zero-copy payload parts handed to ZeroMQ and not yet released by it. */
static atomic_long parts_in_flight;

/* Where a run's sends stand: the context, its sockets (frame seq f goes on
 * sock[f % sockets]) and their peers, the payload parts queued (a part
 * queued and no longer in flight was written to the connection) and when
 * the last message was queued on any socket. */
typedef struct sim_sender {
    void *ctx;
    int sockets; /* 1, or the endpoints listed */
    void *sock[CLI_ENDPOINTS_MAX];
    cli_peer *watch[CLI_ENDPOINTS_MAX];
    const sim_options *o;
    uint64_t parts_queued;
    double last_queued; /* CLOCK_MONOTONIC s */
} sim_sender;

static void pool_buffer_keep(void *data, void *hint)
{
    /* The pool owns the buffer and outlives the socket: nothing to free,
     * only the count of parts ZeroMQ still holds. Called from an I/O thread. */
    (void)data;
    (void)hint;
    atomic_fetch_sub(&parts_in_flight, 1);
}

/* Waits (at most linger_ms) until ZeroMQ has released every payload part,
 * i.e. written it to its connection. Closing earlier can strand frames that
 * wait behind the receiver's HWM (libzmq 4.3), so at the end of a burst the
 * sim waits here, and says so when frames are still queued at the limit.
 * Returns the parts still held. */
static long wait_parts_released(int linger_ms)
{
    for (int waited = 0; waited < linger_ms; waited += 5) {
        if (atomic_load(&parts_in_flight) <= 0)
            return 0;
        struct timespec five = {0, 5000000L};
        nanosleep(&five, NULL);
    }
    return atomic_load(&parts_in_flight);
}

typedef struct pool_frame {
    uint8_t *payload;
    uint32_t *crc; /* per fragment (l->fragments entries): CRC32C of its payload */
} pool_frame;

/* Waits until socket sock takes a message, then queues the header (ZeroMQ
 * applies the high-water mark to a message's first part only, so the rest
 * never blocks). 0; -1 with errno EINTR on a stop, ETIMEDOUT when nothing
 * was queued for --stall-timeout-ms (on any socket: the others wait behind
 * this one's frame), or the send's error. */
static int send_header(sim_sender *s, void *sock, const uint8_t *header, size_t bytes)
{
    for (;;) {
        if (zmq_send(sock, header, bytes, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0) {
            s->last_queued = cli_monotonic_s();
            return 0;
        }
        if (errno != EAGAIN && errno != EINTR)
            return -1;
        zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLOUT};
        if (zmq_poll(&item, 1, 100) < 0 && zmq_errno() != EINTR)
            return -1;
        if (cli_stop_requested) {
            errno = EINTR;
            return -1;
        }
        if (s->o->stall_timeout_ms > 0 && (cli_monotonic_s() - s->last_queued) * 1e3 >= s->o->stall_timeout_ms) {
            errno = ETIMEDOUT;
            return -1;
        }
    }
}

/* Sends one message on socket sock: header h then `parts` zero-copy parts
 * of part_bytes each from payload. Returns 0, or -1 with errno; EINTR or
 * ETIMEDOUT only when the header was not queued (nothing half-sent). */
static int send_message(sim_sender *s, void *sock, const protocol_header *h, uint8_t *payload, size_t parts,
                        size_t part_bytes)
{
    uint8_t header[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(h, header);
    if (send_header(s, sock, header, sizeof header) < 0)
        return -1;
    for (size_t i = 0; i < parts; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init_data(&msg, payload + i * part_bytes, part_bytes, pool_buffer_keep, NULL) != 0)
            return -1;
        atomic_fetch_add(&parts_in_flight, 1); /* zmq_msg_close or the send releases it */
        /* Once the first part is queued, the rest must follow: a partial
         * multipart message is never delivered, but retry on EINTR. */
        int rc;
        while ((rc = zmq_msg_send(&msg, sock, i + 1 < parts ? ZMQ_SNDMORE : 0)) < 0 && errno == EINTR) {
        }
        if (rc < 0) {
            zmq_msg_close(&msg);
            return -1;
        }
        s->parts_queued++;
    }
    return 0;
}

/* Sends one frame on socket seq % s->sockets: whole, or as l->fragments
 * fragments back to back on that socket, so that they stay in order (each
 * with its own header, payload_bytes and CRC; per-matrix parts inside each).
 * Returns 0, or -1 with errno; EINTR when a signal interrupted a blocked
 * send: before anything of the frame was queued, or, with the sim stopping,
 * between fragments (the frame ends early and a receiver counts it
 * incomplete, rather than the sim blocking on a receiver that may be gone). */
static int send_frame(sim_sender *s, const sim_layout *l, const pool_frame *f, uint64_t seq)
{
    const sim_options *o = s->o;
    void *sock = s->sock[seq % (uint64_t)s->sockets];
    protocol_header h = l->header;
    h.seq = seq;
    h.timestamp_ns = cli_realtime_ns();
    if (o->crc)
        h.flags |= PROTOCOL_FLAG_CRC;
    if (l->fragments <= 1) {
        h.crc32c = o->crc ? f->crc[0] : 0;
        return send_message(s, sock, &h, f->payload, l->parts, l->part_bytes);
    }
    h.flags |= PROTOCOL_FLAG_FRAGMENT;
    for (uint32_t i = 0; i < l->fragments; i++) {
        uint32_t first, matrices;
        protocol_fragment_range(l->header.count, l->fragments, i, &first, &matrices);
        h.fragment_first = first;
        h.fragment_matrices = matrices;
        h.payload_bytes = (uint64_t)matrices * l->matrix_bytes;
        h.crc32c = o->crc ? f->crc[i] : 0;
        uint8_t *payload = f->payload + (size_t)first * l->matrix_bytes;
        int rc;
        while ((rc = send_message(s, sock, &h, payload, o->per_matrix_parts ? matrices : 1,
                                  o->per_matrix_parts ? l->matrix_bytes : (size_t)h.payload_bytes)) < 0 &&
               errno == EINTR && i > 0 && !cli_stop_requested) {
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The covariance frame layout of the options. */
static sim_layout covariance_layout(const sim_options *o)
{
    sim_layout l;
    size_t matrix_bytes = protocol_matrix_bytes(o->n, (uint8_t)o->element, (uint8_t)o->storage);
    protocol_header_init(&l.header, PROTOCOL_KIND_COVARIANCE);
    l.header.n = o->n;
    l.header.count = o->cells;
    l.header.element = (uint8_t)o->element;
    l.header.storage = (uint8_t)o->storage;
    l.header.snapshots = o->snapshots;
    l.frame_bytes = matrix_bytes * o->cells;
    l.header.payload_bytes = l.frame_bytes;
    l.parts = o->per_matrix_parts ? o->cells : 1;
    l.part_bytes = l.frame_bytes / l.parts;
    l.fragments = o->fragments;
    l.matrix_bytes = matrix_bytes;
    return l;
}

/* The IQ cube layout of the options; scale as iq_scene says (or --iq-scale). */
static sim_layout iq_layout(const sim_options *o, const iq_scene *sc)
{
    sim_layout l;
    protocol_header_init(&l.header, PROTOCOL_KIND_IQ);
    l.header.n = o->n;
    l.header.count = o->pulses;
    l.header.gates = o->gates;
    l.header.element = (uint8_t)o->iq_format;
    l.header.storage = (uint8_t)o->iq_layout;
    l.header.scale = o->iq_scale > 0 ? (float)o->iq_scale
                     : o->iq_format == PROTOCOL_IQ_CI16_LE ? iq_scene_ci16_scale(sc) : 1.0f;
    l.frame_bytes = protocol_iq_cube_bytes(o->n, o->pulses, o->gates, (uint8_t)o->iq_format);
    l.header.payload_bytes = l.frame_bytes;
    l.parts = o->per_slice_parts ? protocol_iq_parts(&l.header) : 1;
    l.part_bytes = l.frame_bytes / l.parts;
    l.fragments = 1;
    l.matrix_bytes = 0;
    return l;
}

/* Generates the pool's frames (payload and CRC): covariances from gen, or
 * with iq (non-NULL) quantised cubes of that scene. 0, or -1 when out of
 * memory (named on stderr). */
static int pool_generate(const sim_options *o, sim_frame_generator *gen, const iq_scene *iq, const sim_layout *l,
                         pool_frame *pool)
{
    double complex *cube = iq != NULL ? malloc((size_t)o->n * o->pulses * o->gates * sizeof *cube) : NULL;
    uint64_t clipped = 0;
    int rc = iq != NULL && cube == NULL ? -1 : 0;
    for (uint32_t i = 0; rc == 0 && i < o->pool; i++) {
        pool[i].payload = malloc(l->frame_bytes);
        pool[i].crc = malloc(l->fragments * sizeof *pool[i].crc);
        if (pool[i].payload == NULL || pool[i].crc == NULL ||
            (iq != NULL && iq_scene_generate(iq, o->seed, i, cube) != SCENE_OK)) {
            rc = -1;
            break;
        }
        if (iq != NULL)
            clipped += iq_scene_quantise(iq, cube, l->header.element, l->header.storage, l->header.scale,
                                         pool[i].payload);
        else
            sim_frame_generate(gen, i, pool[i].payload);
        if (l->fragments <= 1)
            pool[i].crc[0] = protocol_crc32c(0, pool[i].payload, l->frame_bytes);
        for (uint32_t k = 0; l->fragments > 1 && k < l->fragments; k++) {
            uint32_t first, matrices;
            protocol_fragment_range(l->header.count, l->fragments, k, &first, &matrices);
            pool[i].crc[k] = protocol_crc32c(0, pool[i].payload + (size_t)first * l->matrix_bytes,
                                             (size_t)matrices * l->matrix_bytes);
        }
    }
    free(cube);
    if (rc != 0)
        fprintf(stderr, "eigstream-sim: cannot allocate a pool of %u frames of %zu bytes\n", o->pool, l->frame_bytes);
    else if (clipped > 0)
        fprintf(stderr, "eigstream-sim: %llu int16 values saturated at full scale (scale %g): set --iq-scale\n",
                (unsigned long long)clipped, (double)l->header.scale);
    return rc;
}

/* Says why the sim gives up: nothing could be queued for the bound on the
 * socket of frame seq, with or without a receiver connected to it. */
static void report_stall(sim_sender *s, uint64_t seq)
{
    int k = (int)(seq % (uint64_t)s->sockets);
    const char *endpoint = s->sockets > 1 ? s->o->endpoints.entry[k] : s->o->endpoint;
    double stalled = cli_monotonic_s() - s->last_queued;
    if (cli_peer_count(s->watch[k]) == 0)
        fprintf(stderr, "eigstream-sim: no receiver at %s: no frame could be queued for %.1f s (is the daemon "
                        "running, its input.endpoint this one?): giving up (--stall-timeout-ms %d)\n",
                endpoint, stalled, s->o->stall_timeout_ms);
    else
        fprintf(stderr, "eigstream-sim: the receiver at %s has taken nothing for %.1f s (busy, or it stopped "
                        "reading): giving up (--stall-timeout-ms %d)\n", endpoint, stalled,
                s->o->stall_timeout_ms);
}

/* Sends frames from the pool, round robin, at o->rate (0 = as fast as the
 * socket takes them) until o->frames (0 = until a signal), reporting the
 * rate every second unless quiet. *sent counts them. 0, or -1 when a send
 * failed or nothing could be queued for --stall-timeout-ms (named on
 * stderr). */
static int send_loop(sim_sender *s, const sim_layout *l, const pool_frame *pool, double start, uint64_t *sent)
{
    const sim_options *o = s->o;
    double last_report = start;
    uint64_t sent_at_report = 0;
    while (!cli_stop_requested && (o->frames == 0 || *sent < o->frames)) {
        if (send_frame(s, l, &pool[*sent % o->pool], *sent) != 0) {
            if (errno == EINTR)
                continue; /* not sent (or cut short by a stop): not counted; try again or stop */
            if (errno == ETIMEDOUT)
                report_stall(s, *sent);
            else
                fprintf(stderr, "eigstream-sim: send: %s\n", zmq_strerror(errno));
            return -1;
        }
        (*sent)++;
        double t = cli_monotonic_s();
        if (!o->quiet && t - last_report >= 1.0) {
            double rate = (double)(*sent - sent_at_report) / (t - last_report);
            fprintf(stderr, "eigstream-sim: %.1f frames/s, %.1f MB/s, %llu sent\n", rate,
                    rate * (double)l->frame_bytes / 1e6, (unsigned long long)*sent);
            last_report = t;
            sent_at_report = *sent;
        }
        if (o->rate > 0 && (o->frames == 0 || *sent < o->frames))
            cli_sleep_until(start + (double)*sent / o->rate);
    }
    return 0;
}

/* The pool of the options: covariance frames of the scene (sources,
 * jammers), or with --iq cubes of the IQ scene; *l says their layout.
 * Returns 0, 2 for a bad scene (named on stderr), 1 when out of memory. */
static int pool_create(const sim_options *o, sim_layout *l, pool_frame **pool)
{
    scene *sc = NULL;
    iq_scene iq;
    sim_frame_generator *gen = NULL;
    scene_error se = o->iq ? iq_scene_init(&iq, o->n, o->pulses, o->gates, o->targets, o->jammers, o->clutter_db,
                                           o->clutter_slope, o->clutter_patches)
                           : scene_create(&sc, o->n, o->sources, o->jammers);
    if (se != SCENE_OK) {
        fprintf(stderr, "eigstream-sim: scene: %s\n", o->iq ? "invalid IQ scene (--targets angle:doppler:power_db,...; "
                        "-90 < angle < 90, -0.5 <= doppler < 0.5; --jammers angle:power_db,...)" : scene_strerror(se));
        return 2;
    }
    *l = o->iq ? iq_layout(o, &iq) : covariance_layout(o);
    sim_frame_params fp = {.scene = sc, .cells = o->cells, .snapshots = o->snapshots, .element = (uint8_t)o->element,
                           .storage = (uint8_t)o->storage, .seed = o->seed};
    *pool = calloc(o->pool, sizeof **pool);
    int rc = 1;
    if (*pool == NULL || (!o->iq && (se = sim_frame_generator_create(&gen, &fp)) != SCENE_OK))
        fprintf(stderr, "eigstream-sim: %s\n", scene_strerror(*pool == NULL ? SCENE_ENOMEM : se));
    else {
        double t0 = cli_monotonic_s();
        rc = pool_generate(o, gen, o->iq ? &iq : NULL, l, *pool) == 0 ? 0 : 1;
        double generate_s = cli_monotonic_s() - t0;
        if (rc == 0 && !o->quiet && o->iq)
            fprintf(stderr, "eigstream-sim: pool of %u IQ cubes (%u channels x %u pulses x %u gates %s %s, scale %g, "
                            "%zu targets, %zu jammers, %u clutter patches) generated in %.2f s\n", o->pool, o->n,
                    o->pulses, o->gates, protocol_iq_format_name(o->iq_format), protocol_iq_layout_name(o->iq_layout),
                    (double)l->header.scale, iq.targets, iq.jammers, o->clutter_patches, generate_s);
        else if (rc == 0 && !o->quiet)
            fprintf(stderr, "eigstream-sim: pool of %u frames (%u x %ux%u %s %s, K=%u, d=%zu) generated in %.2f s "
                            "(%.0f ms/frame)\n", o->pool, o->cells, o->n, o->n, eig_precision_name(o->element),
                    protocol_storage_name(o->storage), o->snapshots, scene_dimension(sc), generate_s,
                    1e3 * generate_s / o->pool);
    }
    sim_frame_generator_destroy(&gen);
    scene_destroy(&sc);
    return rc;
}

/* Opens socket k of s (PUSH, or PUB) with the options' high-water mark,
 * linger and CURVE keys, pinned to I/O thread k when there are several,
 * watching its peers, and attaches it to endpoint. 0, or -1 after saying
 * why on stderr. */
static int socket_open(sim_sender *s, int k, const char *endpoint)
{
    const sim_options *o = s->o;
    void *sock = s->sock[k] = zmq_socket(s->ctx, o->pub ? ZMQ_PUB : ZMQ_PUSH);
    if (sock == NULL) {
        fprintf(stderr, "eigstream-sim: zmq: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    /* The limit counts messages: a fragmented frame is `fragments` of them. */
    int hwm = (int)(o->hwm * (uint64_t)o->fragments > INT_MAX ? INT_MAX : o->hwm * (uint64_t)o->fragments);
    uint64_t affinity = (uint64_t)1 << k;
    if (zmq_setsockopt(sock, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(sock, ZMQ_LINGER, &o->linger_ms, sizeof o->linger_ms) != 0 ||
        (s->sockets > 1 && zmq_setsockopt(sock, ZMQ_AFFINITY, &affinity, sizeof affinity) != 0)) {
        fprintf(stderr, "eigstream-sim: socket options: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    char curve_err[640];
    if (cli_curve_apply(&o->curve, sock, curve_err, sizeof curve_err) != 0) {
        fprintf(stderr, "eigstream-sim: %s\n", curve_err);
        return -1;
    }
    if (cli_peer_create(s->ctx, sock, &s->watch[k]) != 0) {
        fprintf(stderr, "eigstream-sim: socket monitor: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    if (cli_socket_attach(sock, endpoint, o->bind) != 0) {
        fprintf(stderr, "eigstream-sim: %s %s: %s\n", o->bind ? "bind" : "connect", endpoint,
                zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* Opens the context and the sockets of the options into s: one for a
 * single endpoint; for a list, one I/O thread per socket (set before any
 * socket exists, as ZeroMQ requires) and socket k attached to entry k. 0,
 * or -1 after saying why on stderr (sockets_close releases what opened). */
static int sockets_open(sim_sender *s)
{
    const sim_options *o = s->o;
    s->sockets = o->endpoints.count > 1 ? o->endpoints.count : 1;
    if ((s->ctx = zmq_ctx_new()) == NULL ||
        (s->sockets > 1 && zmq_ctx_set(s->ctx, ZMQ_IO_THREADS, s->sockets) != 0)) {
        fprintf(stderr, "eigstream-sim: zmq: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    for (int k = 0; k < s->sockets; k++)
        if (socket_open(s, k, s->sockets > 1 ? o->endpoints.entry[k] : o->endpoint) != 0)
            return -1;
    return 0;
}

/* Stops watching the sockets, closes them and terminates the context (each
 * socket's ZMQ_LINGER bounds the wait); what is closed is NULL afterwards,
 * so a second call does nothing. */
static void sockets_close(sim_sender *s)
{
    for (int k = 0; k < CLI_ENDPOINTS_MAX; k++) {
        cli_peer_destroy(&s->watch[k]);
        if (s->sock[k] != NULL)
            zmq_close(s->sock[k]);
        s->sock[k] = NULL;
    }
    void *closed = NULL;
    cli_socket_close(&s->ctx, &closed);
}

/* Frames whose every payload part ZeroMQ has released, i.e. written to the
 * connection (parts go out in order); call before closing the socket, which
 * releases what it drops. */
static uint64_t frames_written(const sim_sender *s, const sim_layout *l)
{
    const sim_options *o = s->o;
    uint64_t per_frame = l->fragments > 1 ? (o->per_matrix_parts ? o->cells : l->fragments) : l->parts;
    long held = atomic_load(&parts_in_flight);
    return (s->parts_queued - (uint64_t)(held > 0 ? held : 0)) / per_frame;
}

/* The summary on stdout: frames sent, then written vs still queued and
 * over how many sockets. */
static void print_summary(const sim_layout *l, int sockets, uint64_t sent, uint64_t written, double elapsed)
{
    printf("eigstream-sim: sent %llu frames (%.1f MB) in %.2f s: %.2f frames/s, %.1f MB/s%s\n",
           (unsigned long long)sent, (double)sent * (double)l->frame_bytes / 1e6, elapsed,
           elapsed > 0 ? (double)sent / elapsed : 0.0,
           elapsed > 0 ? (double)sent * (double)l->frame_bytes / 1e6 / elapsed : 0.0,
           cli_stop_requested ? " (interrupted)" : "");
    printf("eigstream-sim: %llu frames written to the connection, %llu still queued at exit (not delivered), "
           "over %d socket%s\n", (unsigned long long)written, (unsigned long long)(sent - written), sockets,
           sockets > 1 ? "s" : "");
    fflush(stdout);
}

/* The tool once its options are parsed (CLI_MAIN below); the exit status:
 * 0, 1 when a send failed or nothing was queued for --stall-timeout-ms. */
static int tool_main(sim_options *o)
{
    sim_layout l;
    pool_frame *pool = NULL;
    int rc = pool_create(o, &l, &pool);
    sim_sender s = {.o = o};
    if (rc != 0 || sockets_open(&s) != 0) {
        rc = rc != 0 ? rc : 1;
        goto done;
    }
    cli_stop_on_signals(); /* a blocked send returns EINTR */

    uint64_t sent = 0;
    double start = cli_monotonic_s();
    s.last_queued = start;
    rc = send_loop(&s, &l, pool, start, &sent) == 0 ? 0 : 1;
    if (rc != 0) {
        int zero = 0; /* what is queued now is not delivered: do not linger on it */
        for (int k = 0; k < s.sockets; k++)
            zmq_setsockopt(s.sock[k], ZMQ_LINGER, &zero, sizeof zero);
    } else {
        /* Wait for ZeroMQ to write out every queued frame and for the
         * receivers to read it (cli_peer_drain says why), then close (with
         * linger as a second line); the elapsed time includes the flush. */
        double deadline = cli_monotonic_s() + o->linger_ms / 1e3;
        long held = wait_parts_released(o->linger_ms);
        if (held > 0)
            fprintf(stderr, "eigstream-sim: %ld payload parts still queued after %d ms: the last frames "
                            "may not have been delivered\n", held, o->linger_ms);
        for (int k = 0; held == 0 && k < s.sockets; k++)
            if (cli_peer_drain(s.watch[k], deadline) != 0) {
                fprintf(stderr, "eigstream-sim: %ld bytes not yet read by the receiver at %s after %d ms: the "
                                "last frames may not have been delivered\n", cli_peer_unread(s.watch[k]),
                        s.sockets > 1 ? o->endpoints.entry[k] : o->endpoint, o->linger_ms);
                break;
            }
    }
    uint64_t written = frames_written(&s, &l);
    sockets_close(&s);
    print_summary(&l, s.sockets, sent, written, cli_monotonic_s() - start);
done:
    sockets_close(&s);
    for (uint32_t i = 0; pool != NULL && i < o->pool; i++) {
        free(pool[i].payload);
        free(pool[i].crc);
    }
    free(pool);
    return rc;
}

CLI_MAIN(main, sim_options, parse_options, tool_main)
