/*
 * sim_main.c - eigstream-sim: publishes covariance frames of a synthetic radar scene.
 *
 * A pool of distinct frames is generated at start (generating one costs about
 * half a second) and cycled; each send carries its own seq and timestamp and
 * reuses the pool buffer zero-copy (the buffers are never written again, and
 * the pool outlives the socket, so the free callback does nothing).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "cli_choices.h"
#include "cli_common.h"
#include "cli_curve.h"
#include "cli_options.h"
#include "protocol.h"
#include "scene.h"
#include "sim_frame.h"

typedef struct sim_options {
    uint32_t n, cells, snapshots, pool, hwm;
    const char *sources, *jammers, *endpoint;
    int element, storage; /* eig_precision, protocol_storage */
    int crc, bind, pub, per_matrix_parts, quiet;
    double rate;
    uint64_t frames, seed;
    int linger_ms;
    cli_curve curve;
} sim_options;

static const char *const sim_patterns[] = {"push", "pub", NULL};
static const char *const sim_crc_choices[] = {"off", "on", NULL};

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: 0 after --help, 2 after a bad argument (named on stderr). */
static int parse_options(int argc, char **argv, sim_options *o)
{
    *o = (sim_options){.n = 128, .cells = 180, .snapshots = 256, .pool = 4, .hwm = 4,
                       .sources = SCENE_DEFAULT_SOURCES, .jammers = NULL,
                       .endpoint = "tcp://127.0.0.1:5550", .element = EIG_COMPLEX_DOUBLE,
                       .storage = PROTOCOL_STORAGE_FULL, .crc = 1, .rate = 2.0, .seed = 1, .linger_ms = 5000};
    const cli_choices precisions = cli_choices_precision(), storages = cli_choices_storage();
    const cli_option table[] = {
        CLI_STRING("endpoint", 0, &o->endpoint, "E", "ZeroMQ endpoint"),
        CLI_CHOICE("pattern", 0, &o->pub, sim_patterns, NULL, "socket type"),
        CLI_FLAG("bind", 0, &o->bind, "bind instead of connect"),
        CLI_INT("n", 0, &o->n, 1, EIG_N_MAX, "N", "channels = matrix order"),
        CLI_INT("cells", 0, &o->cells, 1, 100000, "C", "matrices per frame"),
        CLI_INT("snapshots", 0, &o->snapshots, 1, 1000000, "K", "snapshots per covariance"),
        CLI_STRING("sources", 0, &o->sources, "LIST", "angle_deg:power_db,..."),
        CLI_STRING("jammers", 0, &o->jammers, "LIST", "angle_deg:power_db,..."),
        CLI_CHOICE("precision", 0, &o->element, precisions.names, precisions.values, "element type"),
        CLI_CHOICE("storage", 0, &o->storage, storages.names, storages.values, "matrix storage"),
        CLI_CHOICE("crc", 0, &o->crc, sim_crc_choices, NULL, "CRC32C over the payload"),
        CLI_FLAG("per-matrix-parts", 0, &o->per_matrix_parts, "one message part per matrix"),
        CLI_DOUBLE("rate", 0, &o->rate, 0.0, 1e6, "R", "frames/s, 0 = as fast as possible"),
        CLI_INT("frames", 0, &o->frames, 0, UINT64_MAX, "N", "frames to send, 0 = until SIGINT"),
        CLI_INT("pool", 0, &o->pool, 1, 1024, "P", "distinct pre-generated frames to cycle"),
        CLI_INT("seed", 0, &o->seed, 0, UINT64_MAX, "S", "random seed"),
        CLI_INT("hwm", 0, &o->hwm, 1, 1000000, "H", "send high-water mark in frames"),
        CLI_INT("linger-ms", 0, &o->linger_ms, 0, 3600000, "L", "time to flush queued frames at exit"),
        CLI_FLAG("quiet", 0, &o->quiet, "only the summary line"),
        CLI_CURVE_OPTIONS(&o->curve),
        CLI_END};
    const cli_spec spec = {.prog = "eigstream-sim", .synopsis = "[options]",
                           .description = "Publishes covariance frames of a synthetic radar scene.\n",
                           .options = table};
    cli_args args;
    return cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
}

/* Zero-copy payload parts handed to ZeroMQ and not yet released by it. */
static atomic_long parts_in_flight;

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
    uint32_t crc;
} pool_frame;

/* Sends one frame: a copied header then the pool payload, zero-copy. Returns
 * 0, or -1 with errno (EINTR when a signal interrupted a blocked send). */
static int send_frame(void *sock, const sim_options *o, const pool_frame *f, size_t matrix_bytes, uint64_t seq)
{
    protocol_header h;
    protocol_header_init(&h, PROTOCOL_KIND_COVARIANCE);
    h.seq = seq;
    h.timestamp_ns = cli_realtime_ns();
    h.n = o->n;
    h.count = o->cells;
    h.element = o->element;
    h.storage = o->storage;
    h.payload_bytes = (uint64_t)matrix_bytes * o->cells;
    h.snapshots = o->snapshots;
    if (o->crc) {
        h.flags |= PROTOCOL_FLAG_CRC;
        h.crc32c = f->crc;
    }
    uint8_t header[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&h, header);
    if (zmq_send(sock, header, sizeof header, ZMQ_SNDMORE) < 0)
        return -1;
    size_t parts = o->per_matrix_parts ? o->cells : 1;
    size_t part_bytes = o->per_matrix_parts ? matrix_bytes : matrix_bytes * o->cells;
    for (size_t i = 0; i < parts; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init_data(&msg, f->payload + i * part_bytes, part_bytes, pool_buffer_keep, NULL) != 0)
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
    }
    return 0;
}

/* Generates the pool's frames (payload and CRC). 0, or -1 when out of
 * memory (named on stderr). */
static int pool_generate(const sim_options *o, sim_frame_generator *gen, pool_frame *pool, size_t frame_bytes)
{
    for (uint32_t i = 0; i < o->pool; i++) {
        pool[i].payload = malloc(frame_bytes);
        if (pool[i].payload == NULL) {
            fprintf(stderr, "eigstream-sim: cannot allocate a pool of %u frames of %zu bytes\n", o->pool,
                    frame_bytes);
            return -1;
        }
        sim_frame_generate(gen, i, pool[i].payload);
        pool[i].crc = protocol_crc32c(0, pool[i].payload, frame_bytes);
    }
    return 0;
}

/* Sends frames from the pool, round robin, at o->rate (0 = as fast as the
 * socket takes them) until o->frames (0 = until a signal), reporting the
 * rate every second unless quiet. *sent counts them. 0, or -1 when a send
 * failed (named on stderr). */
static int send_loop(void *sock, const sim_options *o, const pool_frame *pool, size_t matrix_bytes,
                     size_t frame_bytes, double start, uint64_t *sent)
{
    double last_report = start;
    uint64_t sent_at_report = 0;
    while (!cli_stop_requested && (o->frames == 0 || *sent < o->frames)) {
        if (send_frame(sock, o, &pool[*sent % o->pool], matrix_bytes, *sent) != 0) {
            if (errno == EINTR)
                continue; /* the header was not queued: nothing half-sent */
            fprintf(stderr, "eigstream-sim: send: %s\n", zmq_strerror(errno));
            return -1;
        }
        (*sent)++;
        double t = cli_monotonic_s();
        if (!o->quiet && t - last_report >= 1.0) {
            double rate = (double)(*sent - sent_at_report) / (t - last_report);
            fprintf(stderr, "eigstream-sim: %.1f frames/s, %.1f MB/s, %llu sent\n", rate,
                    rate * (double)frame_bytes / 1e6, (unsigned long long)*sent);
            last_report = t;
            sent_at_report = *sent;
        }
        if (o->rate > 0 && (o->frames == 0 || *sent < o->frames))
            cli_sleep_until(start + (double)*sent / o->rate);
    }
    return 0;
}

int main(int argc, char **argv)
{
    sim_options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;

    scene *sc = NULL;
    scene_error se = scene_create(&sc, o.n, o.sources, o.jammers);
    if (se != SCENE_OK) {
        fprintf(stderr, "eigstream-sim: scene: %s\n", scene_strerror(se));
        return 2;
    }
    int rc = 1;
    void *ctx = NULL, *sock = NULL;
    sim_frame_generator *gen = NULL;
    pool_frame *pool = calloc(o.pool, sizeof *pool);
    size_t matrix_bytes = protocol_matrix_bytes(o.n, o.element, o.storage);
    size_t frame_bytes = matrix_bytes * o.cells;
    sim_frame_params fp = {.scene = sc, .cells = o.cells, .snapshots = o.snapshots, .element = o.element,
                           .storage = o.storage, .seed = o.seed};
    if (pool == NULL || (se = sim_frame_generator_create(&gen, &fp)) != SCENE_OK) {
        fprintf(stderr, "eigstream-sim: %s\n", scene_strerror(pool == NULL ? SCENE_ENOMEM : se));
        goto done;
    }

    double t0 = cli_monotonic_s();
    if (pool_generate(&o, gen, pool, frame_bytes) != 0)
        goto done;
    double generate_s = cli_monotonic_s() - t0;
    if (!o.quiet)
        fprintf(stderr, "eigstream-sim: pool of %u frames (%u x %ux%u %s %s, K=%u, d=%zu) generated in %.2f s (%.0f ms/frame)\n",
                o.pool, o.cells, o.n, o.n, eig_precision_name(o.element), protocol_storage_name(o.storage),
                o.snapshots, scene_dimension(sc), generate_s, 1e3 * generate_s / o.pool);

    if (cli_socket_create(&ctx, &sock, o.pub ? ZMQ_PUB : ZMQ_PUSH) != 0) {
        fprintf(stderr, "eigstream-sim: zmq: %s\n", zmq_strerror(zmq_errno()));
        goto done;
    }
    int hwm = (int)o.hwm;
    if (zmq_setsockopt(sock, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(sock, ZMQ_LINGER, &o.linger_ms, sizeof o.linger_ms) != 0) {
        fprintf(stderr, "eigstream-sim: socket options: %s\n", zmq_strerror(zmq_errno()));
        goto done;
    }
    char curve_err[640];
    if (cli_curve_apply(&o.curve, sock, curve_err, sizeof curve_err) != 0) {
        fprintf(stderr, "eigstream-sim: %s\n", curve_err);
        goto done;
    }
    if (cli_socket_attach(sock, o.endpoint, o.bind) != 0) {
        fprintf(stderr, "eigstream-sim: %s %s: %s\n", o.bind ? "bind" : "connect", o.endpoint,
                zmq_strerror(zmq_errno()));
        goto done;
    }

    cli_stop_on_signals(); /* a blocked send returns EINTR */

    uint64_t sent = 0;
    double start = cli_monotonic_s();
    if (send_loop(sock, &o, pool, matrix_bytes, frame_bytes, start, &sent) != 0)
        goto done;
    /* Wait for ZeroMQ to write out every queued frame, then close (with
     * linger as a second line); the context terminates only when they are
     * out, so the pool is freed after that and the elapsed time includes the
     * flush. */
    long held = wait_parts_released(o.linger_ms);
    if (held > 0)
        fprintf(stderr, "eigstream-sim: %ld payload parts still queued after %d ms: the last frames "
                        "may not have been delivered\n", held, o.linger_ms);
    cli_socket_close(&ctx, &sock);
    double elapsed = cli_monotonic_s() - start;
    printf("eigstream-sim: sent %llu frames (%.1f MB) in %.2f s: %.2f frames/s, %.1f MB/s; "
           "pool %u frames generated in %.2f s (%.0f ms/frame)%s\n",
           (unsigned long long)sent, (double)sent * (double)frame_bytes / 1e6, elapsed,
           elapsed > 0 ? (double)sent / elapsed : 0.0, elapsed > 0 ? (double)sent * (double)frame_bytes / 1e6 / elapsed : 0.0,
           o.pool, generate_s, 1e3 * generate_s / o.pool, cli_stop_requested ? " (interrupted)" : "");
    fflush(stdout);
    rc = 0;
done:
    cli_socket_close(&ctx, &sock);
    for (uint32_t i = 0; pool != NULL && i < o.pool; i++)
        free(pool[i].payload);
    free(pool);
    sim_frame_generator_destroy(&gen);
    scene_destroy(&sc);
    return rc;
}
