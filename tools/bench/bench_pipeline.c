/*
 * bench_pipeline.c - eigstream-bench pipeline mode: the daemon end to end
 * against its parts measured alone, in one run, on the same sizes.
 *
 * Alone (each the median over --frames messages or solves):
 *   input transfer   one covariance frame [header][payload] PUSH -> PULL over
 *                    the transport, sent zero-copy, timed from send to the
 *                    last part received (one message in flight at a time)
 *   solve            eig_plan_execute on the same batch, the same plan
 *                    parameters the pipeline uses
 *   output transfer  one eigenspace frame [header][meta][data] of the mode's
 *                    size, the same way
 * End to end (a pipeline in this process, on its own endpoints, output PUSH):
 *   max rate         frames sent as fast as the daemon takes them
 *                    (overflow_policy block): sustained frames/s over the
 *                    outputs after the first two
 *   fixed rate       frames sent every 1/R s (R = --rate, default 50 % of the
 *                    lower of the slowest part's capacity alone and the
 *                    max-rate throughput): latency from send to the output's
 *                    last part, p50/p90/p99/max. The default keeps frames from
 *                    overlapping where the CPU solver takes every core (then
 *                    a transfer overlapping a solve slows both); pass --rate
 *                    to measure latency under load.
 * --workers 1,2,3 runs the end-to-end part once per solver worker count
 * (solver.workers; on cuda that many workers share the GPU, as
 * solver.gpu_devices = [0, 0] does) and prints frames/s and latency side by
 * side, each as a ratio to the first count; --gpu-devices 0,1 lists the
 * devices instead (one worker each).
 * --metrics-http on runs the daemon with its HTTP server and 10 clients
 * scraping /metrics every second; both measures end to end without, then
 * with, and prints the two side by side.
 * Ratios (the targets the daemon is designed for):
 *   latency     end-to-end p99 at the fixed rate / (input + solve + output alone)  <= 1.1
 *   throughput  max-rate frames/s / (1 / slowest alone)                            >= 0.95
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>
#if defined(__SSE2__)
#include <emmintrin.h> /* _mm_clflush */
#endif

#include "bench.h"
#include "cli_choices.h"
#include "cli_options.h"
#include "config.h"
#include "eig.h"
#include "frame.h"
#include "output.h"
#include "path.h"
#include "pipeline.h"
#include "process_stats.h"
#include "protocol.h"
#include "transport_memory.h"
#include "workload.h"

#define LATENCY_TARGET 1.1     /* p99 end to end / sum of the parts alone, at most */
#define THROUGHPUT_TARGET 0.95 /* sustained frames/s / what the slowest part allows alone, at least */
#define MESSAGE_PARTS_MAX 4096 /* payload parts of one message: one, or one per matrix */

static const char pipeline_description[] =
    "Pipeline mode: ZeroMQ transfer of the input and output frames and the solve, each\n"
    "alone, then the daemon end to end in this process at max rate and at a fixed rate;\n"
    "prints latency percentiles, sustained frames/s and the target ratios.\n";

typedef struct options {
    int n, matrices, frames, threads;
    double rate;
    eig_precision precision;
    protocol_mode mode;
    eig_backend backend;
    int ipc;
    int per_matrix_parts;
    int fragments;    /* messages per input frame (docs/protocol.md, fragments) */
    uint8_t storage;
    const char *json_path;
    int metrics_http; /* 0 off, 1 on (scraped), 2 both */
    int scraped;      /* this end-to-end run: HTTP server on, scrapers running */
    config_int_list worker_counts; /* --workers: the counts compared, in order */
    config_int_list gpu_devices;   /* --gpu-devices: one worker per entry (replaces --workers) */
    int workers;      /* this end-to-end run: solver.workers */
    int input_hwm;    /* input.hwm */
    int copy_threads; /* input.copy_threads */
    int io_threads;   /* input.io_threads: connections from the daemon to the source */
    int source_each;  /* io_threads > 1: a PUSH socket per connection (1) or one for all (0) */
    char io_cpus[CONFIG_STRING_MAX]; /* realtime.cpu_affinity_io, "" = any */
} options;

/* "1,2,3": 1..CONFIG_LIST_MAX entries, each within [lo, hi]. */
static int parse_int_list(const char *text, config_int_list *list, long lo, long hi)
{
    config_int_list parsed = {0};
    const char *at = text;
    for (;;) {
        char *end;
        long value = strtol(at, &end, 10);
        if (end == at || value < lo || value > hi || parsed.count == CONFIG_LIST_MAX)
            return -1;
        parsed.values[parsed.count++] = (int)value;
        if (*end == '\0')
            break;
        if (*end != ',')
            return -1;
        at = end + 1;
    }
    *list = parsed;
    return 0;
}

static int parse_worker_counts(const char *text, void *dest)
{
    return parse_int_list(text, dest, 1, CONFIG_LIST_MAX);
}

static int parse_gpu_devices(const char *text, void *dest)
{
    return parse_int_list(text, dest, 0, 63);
}

/* A CPU list as realtime.cpu_affinity_io takes it ("2", "2-3,6"). */
static int parse_cpu_list(const char *text, void *dest)
{
    uint64_t mask[CONFIG_CPU_MAX / 64];
    if (strlen(text) >= CONFIG_STRING_MAX || config_cpu_list_parse(text, mask) != 0)
        return -1;
    snprintf((char *)dest, CONFIG_STRING_MAX, "%s", text);
    return 0;
}

static const char *const pipeline_transports[] = {"tcp", "ipc", NULL};
static const char *const pipeline_storages[] = {"full", "packed", NULL};
static const int pipeline_storage_values[] = {PROTOCOL_STORAGE_FULL, PROTOCOL_STORAGE_PACKED_LOWER};
static const char *const pipeline_parts[] = {"one", "per-matrix", NULL};
static const char *const pipeline_http[] = {"off", "on", "both", NULL};
static const char *const pipeline_source_sockets[] = {"one", "each", NULL};

/* Sets the defaults, then parses argv[2..] (argv[1] selected this mode) into
 * *o. Returns -1 to go on, else the exit status: 0 after --help, 1 after a
 * bad argument (named on stderr). */
static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.n = 128, .matrices = 180, .frames = 20, .storage = PROTOCOL_STORAGE_FULL,
                   .worker_counts = {.count = 1, .values = {1}}, .workers = 1, .input_hwm = 4, .io_threads = 1, .source_each = 1,
                   .fragments = 1};
    /* Choice names from each concept's one name table (eig.h, protocol.h). */
    const cli_choices precisions = cli_choices_precision(), modes = cli_choices_mode(),
                      backends = cli_choices_backend();
    int precision = EIG_COMPLEX_DOUBLE, mode = PROTOCOL_MODE_FULL, backend = EIG_BACKEND_AUTO;
    int storage = PROTOCOL_STORAGE_FULL;
    const cli_option table[] = {
        CLI_INT("n", 0, &o->n, 1, EIG_N_MAX, "N", "matrix order"),
        CLI_INT("matrices", 0, &o->matrices, 1, MESSAGE_PARTS_MAX, "M", "matrices per frame"),
        CLI_CHOICE("precision", 0, &precision, precisions.names, precisions.values, "element type"),
        CLI_CHOICE("mode", 0, &mode, modes.names, modes.values, "output mode (signal/noise use MDL, K = 2n)"),
        CLI_CHOICE("backend", 0, &backend, backends.names, backends.values, "solver backend"),
        CLI_INT("frames", 0, &o->frames, 4, INT_MAX, "F", "frames per measurement"),
        CLI_DOUBLE("rate", 0, &o->rate, 0.0, 1e9, "FPS",
                   "fixed input rate, 0 = half the lower of the slowest part alone and max rate"),
        CLI_CHOICE("transport", 0, &o->ipc, pipeline_transports, NULL, "tcp (127.0.0.1) or ipc"),
        CLI_CHOICE("storage", 0, &storage, pipeline_storages, pipeline_storage_values,
                   "full, or packed (lower triangle: half the bytes)"),
        CLI_CHOICE("parts", 0, &o->per_matrix_parts, pipeline_parts, NULL,
                   "payload in one part or one part per matrix"),
        CLI_INT("fragments", 0, &o->fragments, 1, MESSAGE_PARTS_MAX, "F",
                "input frames sent as F fragments of whole matrices (docs/protocol.md), copied by the daemon "
                "as they land; the input transfer alone then sends the same F messages"),
        CLI_INT("threads", 0, &o->threads, 0, INT_MAX, "T", "solver CPU threads, 0 = all cores"),
        CLI_CUSTOM("workers", 0, &o->worker_counts, parse_worker_counts, "counts 1..16, comma-separated", "W[,W..]",
                   "solver workers (solver.workers; cuda: sharing the GPU); several: compared in one run"),
        CLI_CUSTOM("gpu-devices", 0, &o->gpu_devices, parse_gpu_devices, "device indices 0..63, comma-separated",
                   "D[,D..]", "solver.gpu_devices: one worker per listed device (instead of --workers)"),
        CLI_INT("input-hwm", 0, &o->input_hwm, 0, 1000000, "H",
                "the daemon's input.hwm: frames ZeroMQ reads ahead (memory: H x frame size)"),
        CLI_INT("copy-threads", 0, &o->copy_threads, 0, CONFIG_COPY_THREADS_MAX, "T",
                "the daemon's input.copy_threads, 0 = auto"),
        CLI_INT("input-io-threads", 0, &o->io_threads, 1, CONFIG_INPUT_IO_THREADS_MAX, "K",
                "the daemon's input.io_threads: K connections to the source, each read by its own I/O thread"),
        CLI_CUSTOM("io-cpus", 0, o->io_cpus, parse_cpu_list, "a CPU list such as 2-3,6", "LIST",
                   "the daemon's realtime.cpu_affinity_io: CPUs of ZeroMQ's I/O threads (default any)"),
        CLI_CHOICE("source-sockets", 0, &o->source_each, pipeline_source_sockets, NULL,
                   "with K connections, the source's PUSH sockets: each (one per connection, each bound on its "
                   "own endpoint and I/O thread, seq f on socket f mod K; input.endpoint lists them) or one "
                   "(one socket dealing over the K connections)"),
        CLI_STRING("json", 0, &o->json_path, "FILE", "also write the results as JSON"),
        CLI_CHOICE("metrics-http", 0, &o->metrics_http, pipeline_http, NULL,
                   "daemon HTTP metrics server with 10 clients scraping /metrics each second: "
                   "off, on, or both (compared)"),
        CLI_END};
    const cli_spec spec = {.prog = "eigstream-bench pipeline", .synopsis = "[options]",
                           .description = pipeline_description, .options = table};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 2, &args, 1);
    o->precision = (eig_precision)precision;
    o->mode = (protocol_mode)mode;
    o->backend = (eig_backend)backend;
    o->storage = (uint8_t)storage;
    return status;
}

/* ---- messages ------------------------------------------------------------------------ */

typedef struct message {
    uint8_t header[PROTOCOL_HEADER_BYTES];
    const void *part[MESSAGE_PARTS_MAX]; /* after the header */
    size_t bytes[MESSAGE_PARTS_MAX];
    size_t parts;
    int fragments; /* a covariance frame: sent as this many messages (0 or 1: one) */
    int uncached;  /* flush the parts from the CPU caches before each send (message_flush) */
} message;

static void no_free(void *data, void *hint)
{
    (void)data;
    (void)hint;
}

/* Sends header (copied) then each part zero-copy from buffers that outlive the send. */
static int message_send_parts(void *s, const uint8_t *header, const void *const *part, const size_t *bytes,
                              size_t parts)
{
    if (zmq_send(s, header, PROTOCOL_HEADER_BYTES, ZMQ_SNDMORE) < 0)
        return -1;
    for (size_t i = 0; i < parts; i++) {
        zmq_msg_t msg;
        zmq_msg_init_data(&msg, (void *)part[i], bytes[i], no_free, NULL);
        if (zmq_msg_send(&msg, s, i + 1 < parts ? ZMQ_SNDMORE : 0) < 0) {
            zmq_msg_close(&msg);
            return -1;
        }
    }
    return 0;
}

/* A covariance frame as m->fragments messages of consecutive matrices
 * (protocol_fragment_range), each with the frame's header plus FRAGMENT,
 * its place and its bytes. The bench's frames carry no CRC. */
static int message_send_fragments(void *s, const message *m)
{
    protocol_header h;
    if (protocol_header_decode(m->header, PROTOCOL_HEADER_BYTES, &h) != PROTOCOL_OK)
        return -1;
    size_t matrix = protocol_matrix_bytes(h.n, h.element, h.storage);
    int per_matrix = m->parts > 1;
    for (int i = 0; i < m->fragments; i++) {
        uint32_t first, matrices;
        protocol_fragment_range(h.count, (uint32_t)m->fragments, (uint32_t)i, &first, &matrices);
        protocol_header f = h;
        f.flags |= PROTOCOL_FLAG_FRAGMENT;
        f.fragment_first = first;
        f.fragment_matrices = matrices;
        f.payload_bytes = (uint64_t)matrix * matrices;
        uint8_t header[PROTOCOL_HEADER_BYTES];
        protocol_header_encode(&f, header);
        const void *one = (const uint8_t *)m->part[0] + (size_t)first * matrix;
        size_t one_bytes = (size_t)f.payload_bytes;
        int sent = per_matrix ? message_send_parts(s, header, m->part + first, m->bytes + first, matrices)
                              : message_send_parts(s, header, &one, &one_bytes, 1);
        if (sent != 0)
            return -1;
    }
    return 0;
}

/* Evicts every part's cache lines (their bytes unchanged), as a GPU copy
 * into host memory leaves the daemon's output buffers: what a send then
 * reads comes from memory, not from the cache a buffer sent again and again
 * stays in. 0, or -1 where the CPU has no cache flush instruction here. */
static int message_flush(const message *m)
{
#if defined(__SSE2__)
    for (size_t i = 0; i < m->parts; i++)
        for (size_t at = 0; at < m->bytes[i]; at += 64)
            _mm_clflush((const uint8_t *)m->part[i] + at);
    _mm_mfence();
    return 0;
#else
    (void)m;
    return -1;
#endif
}

static int message_send(void *s, const message *m)
{
    if (m->fragments > 1)
        return message_send_fragments(s, m);
    return message_send_parts(s, m->header, m->part, m->bytes, m->parts);
}

/* Receives every part of one message; returns its header's seq (or -1). For
 * an eigenspace frame, times (when not NULL) gets the daemon's stage times,
 * decoded by the protocol's codec from the meta part. */
static long message_receive_times(void *s, protocol_stage_times *times)
{
    zmq_msg_t part;
    protocol_header h;
    long seq = -1;
    int more = 1, index = 0;
    while (more) {
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, s, 0) < 0) {
            zmq_msg_close(&part);
            return -1;
        }
        if (index == 0 && protocol_header_decode(zmq_msg_data(&part), zmq_msg_size(&part), &h) == PROTOCOL_OK)
            seq = (long)h.seq;
        else if (index == 1 && seq >= 0 && times != NULL && h.kind == PROTOCOL_KIND_EIGENSPACE &&
                 protocol_meta_decode(zmq_msg_data(&part), zmq_msg_size(&part), h.count, times, NULL) != PROTOCOL_OK)
            seq = -1;
        index++;
        more = zmq_msg_more(&part);
        zmq_msg_close(&part);
    }
    return seq;
}

static long message_receive(void *s)
{
    return message_receive_times(s, NULL);
}

/* Wall clock in ms, the clock of the daemon's stage times. */
static double realtime_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void covariance_message(message *m, const options *o, const void *payload, size_t payload_bytes,
                               uint64_t seq)
{
    protocol_header h;
    protocol_header_init(&h, PROTOCOL_KIND_COVARIANCE);
    h.seq = seq;
    h.timestamp_ns = 0;
    h.n = (uint32_t)o->n;
    h.count = (uint32_t)o->matrices;
    h.element = o->precision;
    h.storage = o->storage;
    h.payload_bytes = payload_bytes;
    h.snapshots = (uint32_t)(2 * o->n);
    protocol_header_encode(&h, m->header);
    m->fragments = o->fragments < o->matrices ? o->fragments : o->matrices;
    if (o->per_matrix_parts) {
        size_t one = payload_bytes / (size_t)o->matrices;
        for (int b = 0; b < o->matrices; b++) {
            m->part[b] = (const uint8_t *)payload + (size_t)b * one;
            m->bytes[b] = one;
        }
        m->parts = (size_t)o->matrices;
    } else {
        m->part[0] = payload;
        m->bytes[0] = payload_bytes;
        m->parts = 1;
    }
}

/* ---- alone ------------------------------------------------------------------------------ */

/* The bench's sender and receiver stand for two separate processes (the
 * radar front end, the downstream stage): each has its own ZeroMQ context
 * (the sender an I/O thread per connection the daemon makes to it, the
 * receiver one), so that the bench never copies an input frame and an output
 * frame with one thread in turn (the daemon would be blamed for it). */
typedef struct bench_zmq {
    void *source, *sink;
} bench_zmq;

typedef struct endpoints {
    char in[256], out[256];
    char each[CONFIG_INPUT_IO_THREADS_MAX][256]; /* --source-sockets each: socket k's, bound by the bench */
} endpoints;

static double median_of(double *v, int count)
{
    return bench_median(v, count);
}

/* Median one-message transfer time (ms) of m from a PUSH in source to a
 * PULL in sink (the same context, or two). */
static double transfer_alone(void *source, void *sink, const options *o, message *m, int frames)
{
    char endpoint[256];
    void *push = zmq_socket(source, ZMQ_PUSH), *pull = zmq_socket(sink, ZMQ_PULL);
    int zero = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(pull, ZMQ_LINGER, &zero, sizeof zero);
    if (o->ipc) {
        static atomic_int pairs; /* transfers_together runs two at once */
        snprintf(endpoint, sizeof endpoint, "ipc:///tmp/eigstream-bench-%d-alone-%d", (int)getpid(),
                 atomic_fetch_add(&pairs, 1));
        zmq_bind(pull, endpoint);
    } else {
        size_t len = sizeof endpoint;
        zmq_bind(pull, "tcp://127.0.0.1:*");
        zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, endpoint, &len);
    }
    zmq_connect(push, endpoint);
    double *t = malloc(sizeof *t * (size_t)(frames + 1));
    if (t == NULL) {
        zmq_close(push);
        zmq_close(pull);
        return -1;
    }
    int flushed = 0;
    for (int k = 0; k <= frames; k++) { /* k = 0 warms the connection up */
        flushed = m->uncached && message_flush(m) == 0;
        double start = bench_now_ms();
        message_send(push, m);
        for (int i = 1; i < m->fragments; i++)
            message_receive(pull);
        message_receive(pull);
        if (k > 0)
            t[k - 1] = bench_now_ms() - start;
    }
    double result = m->uncached && !flushed ? -1.0 : median_of(t, frames);
    free(t);
    zmq_close(push);
    zmq_close(pull);
    if (o->ipc)
        unlink(endpoint + strlen("ipc://")); /* libzmq 4.3 leaves the socket file */
    return result;
}

/* The daemon's configuration for o, as both the stage alone and the end to
 * end runs use it (endpoints aside). */
static void bench_config(const options *o, eigstream_config *cfg)
{
    config_defaults(cfg);
    cfg->solver.n = o->n;
    cfg->solver.matrices = o->matrices;
    cfg->solver.precision = o->precision;
    cfg->solver.backend = o->backend;
    cfg->solver.cpu_threads = o->threads;
    cfg->solver.workers = o->workers;
    cfg->solver.gpu_devices = o->gpu_devices;
    cfg->output.mode = o->mode;
    cfg->output.pattern = CONFIG_OUTPUT_PUSH;
    cfg->frame.overflow_policy = CONFIG_OVERFLOW_BLOCK;
    cfg->frame.deadline_ms = 3600 * 1000;
    cfg->metrics.endpoint[0] = '\0';
    snprintf(cfg->metrics.http, CONFIG_STRING_MAX, "%s", o->scraped ? "127.0.0.1:0" : "");
    cfg->log.level = LOG_LEVEL_WARN;
    cfg->input.hwm = o->input_hwm;
    cfg->input.copy_threads = o->copy_threads;
    cfg->input.io_threads = o->io_threads;
    snprintf(cfg->realtime.cpu_affinity[CONFIG_THREAD_IO], CONFIG_STRING_MAX, "%s", o->io_cpus);
}

/* One frame's buffers as the daemon allocates them (pipeline_frames.c): the
 * path's host memory, pinned on the cuda path. */
typedef struct stage_frame {
    frame f;
    output_buffer out;
} stage_frame;

static void stage_frame_free(path *p, stage_frame *s)
{
    path_buffer_free(p, s->f.a);
    path_buffer_free(p, s->f.w);
    path_buffer_free(p, s->f.info);
    path_buffer_free(p, s->out.data);
    free(s->f.signal_dim);
    free(s->out.meta);
    free(s->out.matrix_meta);
}

static int stage_frame_make(path *p, const options *o, const output_format *format, stage_frame *s)
{
    size_t elem = eig_element_bytes(o->precision), m = (size_t)o->matrices;
    *s = (stage_frame){.f = {.slot = -1, .drop_reason = -1}};
    s->f.a_bytes = m * o->n * o->n * elem;
    s->f.a = path_buffer_alloc(p, s->f.a_bytes);
    s->f.w = path_buffer_alloc(p, m * o->n * elem / 2);
    s->f.info = path_buffer_alloc(p, m * sizeof *s->f.info);
    s->f.signal_dim = calloc(m, sizeof *s->f.signal_dim);
    s->out.meta = calloc(1, protocol_meta_bytes((uint32_t)m));
    s->out.matrix_meta = calloc(m, sizeof *s->out.matrix_meta);
    s->out.data = path_buffer_alloc(p, output_data_capacity(format));
    return s->f.a && s->f.w && s->f.info && s->f.signal_dim && s->out.meta && s->out.matrix_meta && s->out.data
               ? 0
               : -1;
}

/* One frame through the steps of the form and solve stages and the publish
 * stage's wait, as stage_form.c, stage_solve.c and stage_publish.c call
 * them, the self-check of matrix `ticket mod matrices` included (its cost in
 * f->check.ns once the wait returned). */
static int stage_frame_solve(path *p, const output_format *format, stage_frame *s, uint64_t ticket, char *err,
                             size_t err_bytes)
{
    frame *f = &s->f;
    int ok = path_form(p, f, err, err_bytes) == PIPELINE_OK && path_solve(p, f, err, err_bytes) == PIPELINE_OK;
    f->check = (frame_check){.matrix = (uint32_t)(ticket % format->matrices)};
    if (ok && f->info[f->check.matrix] == 0)
        ok = path_check_start(p, f, err, err_bytes) == PIPELINE_OK;
    if (ok) {
        output_signal_dimensions(format, f);
        output_describe(format, f, &s->out);
        ok = path_output_start(p, f, &s->out, err, err_bytes) == PIPELINE_OK &&
             path_output_wait(p, f, err, err_bytes) == PIPELINE_OK;
    }
    path_release(p, f);
    return ok ? 0 : -1;
}

/* Both transfers at once and nothing else: the input frame from one pair of
 * contexts and the output frame from another, each pair a sender and a
 * receiver of its own, for the same number of messages. Not a target's
 * yardstick: what the transport itself allows when both directions share
 * the machine, as they do end to end. */
typedef struct transfer_run {
    void *source, *sink;
    const options *o;
    message *m;
    double median_ms;
} transfer_run;

static void *transfer_run_main(void *arg)
{
    transfer_run *t = arg;
    t->median_ms = transfer_alone(t->source, t->sink, t->o, t->m, t->o->frames);
    return NULL;
}

static void transfers_together(const options *o, message *in_msg, message *out_msg, double *t_in, double *t_out)
{
    transfer_run runs[2] = {{zmq_ctx_new(), zmq_ctx_new(), o, in_msg, -1},
                            {zmq_ctx_new(), zmq_ctx_new(), o, out_msg, -1}};
    pthread_t threads[2];
    int started[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        started[k] = runs[k].source != NULL && runs[k].sink != NULL &&
                     pthread_create(&threads[k], NULL, transfer_run_main, &runs[k]) == 0;
    for (int k = 0; k < 2; k++) {
        if (started[k])
            pthread_join(threads[k], NULL);
        if (runs[k].source != NULL)
            zmq_ctx_term(runs[k].source);
        if (runs[k].sink != NULL)
            zmq_ctx_term(runs[k].sink);
    }
    *t_in = runs[0].median_ms;
    *t_out = runs[1].median_ms;
}

/* The solve alone: the daemon's own data path (path.h, the one its solver
 * worker creates) on one frame at a time in the path's buffers: upload and
 * forming, the batched solve, the signal dimensions, the copy of what the
 * mode sends into the output buffer. Copying the payload into the frame is
 * the receive stage's work and stays out of the time. Median over min(frames,
 * 7) runs after a warm-up; -1 when no path could be made. */
static double solve_alone(const options *o, const void *payload, size_t payload_bytes, const uint8_t *header,
                          char *backend, size_t backend_bytes)
{
    eigstream_config cfg;
    bench_config(o, &cfg);
    output_format format = {.n = (uint32_t)o->n, .matrices = (uint32_t)o->matrices, .precision = o->precision,
                            .mode = (uint8_t)o->mode};
    path_params params;
    path_params_from_config(&params, &cfg, output_sends_vectors(&format));
    if (o->gpu_devices.count > 0)
        params.gpu_device = o->gpu_devices.values[0];
    char err[256];
    path *p;
    if (path_create(&p, &params, err, sizeof err) != PIPELINE_OK) {
        fprintf(stderr, "eigstream-bench pipeline: solver path: %s\n", err);
        return -1.0;
    }
    snprintf(backend, backend_bytes, "%s", eig_backend_name(p->backend));
    stage_frame s;
    int runs = o->frames < 7 ? o->frames : 7; /* the solve is steady; 7 runs give a stable median */
    double t[7], check_us[7], result = -1.0;
    int k = -1, ok = stage_frame_make(p, o, &format, &s) == 0 &&
                     protocol_header_decode(header, PROTOCOL_HEADER_BYTES, &s.f.header) == PROTOCOL_OK;
    for (; ok && k < runs; k++) { /* k = -1 warms up */
        memcpy(s.f.a, payload, payload_bytes); /* the host path forms in place */
        double start = bench_now_ms();
        ok = stage_frame_solve(p, &format, &s, (uint64_t)(k + 1), err, sizeof err) == 0;
        if (k >= 0) {
            t[k] = bench_now_ms() - start;
            check_us[k] = s.f.check.state == FRAME_CHECK_DONE ? (double)s.f.check.ns * 1e-3 : 0;
        }
    }
    if (ok) {
        result = median_of(t, runs);
        /* The self-check's cost (docs/daemon.md): GPU time between its events on the cuda path, wall time
         * on the host; its share of the solve alone, which includes it as the daemon's solve stage does. */
        double check = median_of(check_us, runs);
        printf("self-check: one matrix of %d a frame, median %.1f us (%s), %.2f %% of the solve alone (%.3f ms)\n",
               o->matrices, check, strcmp(path_name(p), "cuda") == 0 ? "GPU time" : "host wall time",
               result > 0 ? 100.0 * check * 1e-3 / result : 0.0, result);
    } else
        fprintf(stderr, "eigstream-bench pipeline: solve alone: %s\n", err);
    stage_frame_free(p, &s);
    path_destroy(&p);
    return result;
}

/* ---- end to end ---------------------------------------------------------------------- */

typedef struct feeder {
    void *const *push; /* seq f on push[f % sockets]; bound or connected, and closed, by the caller */
    int sockets;
    const options *o;
    const void *payload;
    size_t payload_bytes;
    int frames;
    double interval_ms; /* 0: max rate */
    double *send_ms;    /* per seq, monotonic */
    double *send_real_ms; /* per seq, wall clock */
} feeder;

static void *feeder_main(void *arg)
{
    feeder *f = arg;
    double start = bench_now_ms();
    message *m = malloc(sizeof *m);
    for (int k = 0; k < f->frames && m != NULL; k++) {
        if (f->interval_ms > 0) {
            double due = start + k * f->interval_ms, now;
            while ((now = bench_now_ms()) < due) {
                double wait = due - now;
                struct timespec ts = {(time_t)(wait / 1e3), (long)(fmod(wait, 1e3) * 1e6)};
                nanosleep(&ts, NULL);
            }
        }
        covariance_message(m, f->o, f->payload, f->payload_bytes, (uint64_t)k);
        f->send_ms[k] = bench_now_ms();
        f->send_real_ms[k] = realtime_ms();
        message_send(f->push[k % f->sockets], m);
    }
    free(m);
    /* The caller closes the socket once every output is in: closing it here
     * with frames still queued behind the daemon's receive HWM can strand
     * them (seen with libzmq 4.3 over ipc). */
    return NULL;
}

/* A frame's timeline, from the bench's send and receipt (wall clock) and the
 * daemon's stage times in the meta part: where the time goes. */
enum { SEGMENTS = 5 };
static const char *const segment_names[SEGMENTS] = {
    "send->receipt",       /* the input transfer: the whole message is in the daemon's socket */
    "receipt->solve",      /* copy and check, the form queue, forming */
    "solve",               /* the solve stage's worker, upload to the host copy of the values */
    "solve->hand-over",    /* the vectors' copy-out, the publish queue, encoding */
    "hand-over->received", /* the output transfer */
};

static void timeline_split(double send_ms, const protocol_stage_times *t, double received_ms, double **segment,
                           int frame)
{
    double at[SEGMENTS + 1] = {send_ms, (double)t->received_ns * 1e-6, (double)t->solve_start_ns * 1e-6,
                               (double)t->solve_end_ns * 1e-6, (double)t->published_ns * 1e-6, received_ms};
    for (int k = 0; k < SEGMENTS; k++)
        segment[k][frame] = at[k + 1] - at[k];
}

/* ---- threads (the scheduler's account, process_stats.h) ----------------------------- */

enum { THREAD_SHARES = 16, THREADS_READ = 256 };

/* One thread's share of a measurement: on a core, and runnable but waiting
 * for one (what says whether a stage is starved of CPU or of work). */
typedef struct thread_share {
    char name[16];
    double busy, waiting; /* fractions of the wall time */
} thread_share;

static int compare_busy(const void *x, const void *y)
{
    double a = ((const thread_share *)x)->busy, b = ((const thread_share *)y)->busy;
    return (a < b) - (a > b);
}

/* The shares between two reads of process_threads_read of the threads in
 * both, above 5 % busy or 2 % waiting: the THREAD_SHARES busiest, busiest
 * first, into out; returns how many. */
static int thread_shares(const process_thread *a, int na, const process_thread *b, int nb, double wall_ns,
                         thread_share *out)
{
    thread_share all[THREADS_READ];
    int n = 0;
    for (int i = 0; i < nb && wall_ns > 0; i++)
        for (int j = 0; j < na; j++) {
            if (a[j].tid != b[i].tid)
                continue;
            thread_share s = {.busy = (double)(b[i].run_ns - a[j].run_ns) / wall_ns,
                              .waiting = (double)(b[i].wait_ns - a[j].wait_ns) / wall_ns};
            snprintf(s.name, sizeof s.name, "%s", b[i].name);
            if (s.busy >= 0.05 || s.waiting >= 0.02)
                all[n++] = s;
            break;
        }
    qsort(all, (size_t)n, sizeof all[0], compare_busy);
    n = n < THREAD_SHARES ? n : THREAD_SHARES;
    memcpy(out, all, sizeof all[0] * (size_t)n);
    return n;
}

/* A read of every thread's account, and when it was taken. */
typedef struct thread_watch {
    process_thread at[THREADS_READ];
    int count; /* -1: no schedstat */
    double start_ms;
} thread_watch;

static void thread_watch_start(thread_watch *w)
{
    w->count = process_threads_read(w->at, THREADS_READ);
    w->start_ms = bench_now_ms();
}

/* The shares since thread_watch_start into out; returns how many (0 when
 * either read failed). */
static int thread_watch_stop(const thread_watch *w, thread_share *out)
{
    process_thread now[THREADS_READ];
    int n = process_threads_read(now, THREADS_READ);
    if (w->count <= 0 || n <= 0)
        return 0;
    return thread_shares(w->at, w->count, now, n, (bench_now_ms() - w->start_ms) * 1e6, out);
}

typedef struct run_result {
    double fps;                   /* sustained outputs/s after the first two */
    double p50, p90, p99, max;    /* ms, send -> output received */
    int received;
    double stage_mean_ms[5];      /* the daemon's own histograms: receive form solve publish end_to_end */
    double segment_ms[SEGMENTS];  /* medians of each frame's timeline (segment_names) */
    double slowest_ms[SEGMENTS];  /* the timeline of the slowest frame after the first: where a tail comes from */
    int slowest_at;               /* its place among the received */
    long scrapes;                 /* --metrics-http: /metrics responses read during the run */
    int workers;                  /* solver workers, and the frames dealt to each */
    uint64_t worker_frames[PIPELINE_WORKERS_MAX];
    thread_share threads[THREAD_SHARES]; /* max rate: the busiest threads, busiest first */
    int thread_count;                     /* of threads[]; 0 when /proc had no schedstat */
} run_result;

static const char *const stage_names[5] = {"receive", "form", "solve", "publish", "end_to_end"};

/* Mean of each stage histogram from the daemon's metrics document. */
static void read_stage_means(pipeline *p, run_result *r)
{
    static char doc[32768];
    if (pipeline_metrics_json(p, doc, sizeof doc) == 0)
        return;
    for (int s = 0; s < 5; s++) {
        char key[64];
        snprintf(key, sizeof key, "\"%s\":{\"count\":", stage_names[s]);
        const char *at = strstr(doc, key);
        unsigned long long count;
        double mean_us;
        if (at != NULL && sscanf(at + strlen(key), "%llu,\"mean\":%lf", &count, &mean_us) == 2)
            r->stage_mean_ms[s] = mean_us * 1e-3;
    }
}

/* ---- scrapers (--metrics-http) ------------------------------------------------------- */

#define SCRAPERS 10

typedef struct scraper {
    int port;
    atomic_int *stop;
    long scrapes; /* complete responses read */
} scraper;

/* One GET /metrics over a fresh connection, read to the end; 0 or -1. */
static int scrape_once(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    static const char request[] = "GET /metrics HTTP/1.0\r\n\r\n";
    char buf[16384];
    ssize_t k = -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && write(fd, request, sizeof request - 1) > 0)
        while ((k = read(fd, buf, sizeof buf)) > 0)
            ;
    close(fd);
    return k == 0 ? 0 : -1;
}

static void *scraper_main(void *arg)
{
    scraper *s = arg;
    while (!atomic_load(s->stop)) {
        s->scrapes += scrape_once(s->port) == 0;
        struct timespec tenth = {0, 100000000L}; /* a second in tenths: the stop is seen quickly */
        for (int i = 0; i < 10 && !atomic_load(s->stop); i++)
            nanosleep(&tenth, NULL);
    }
    return NULL;
}

/* Starts SCRAPERS clients of the daemon's /metrics (none when port is 0). */
static int scrapers_start(pthread_t *threads, scraper *s, int port, atomic_int *stop)
{
    int started = 0;
    for (; port > 0 && started < SCRAPERS; started++) {
        s[started] = (scraper){port, stop, 0};
        if (pthread_create(&threads[started], NULL, scraper_main, &s[started]) != 0)
            break;
    }
    return started;
}

static long scrapers_stop(pthread_t *threads, scraper *s, int started, atomic_int *stop)
{
    long total = 0;
    atomic_store(stop, 1);
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        total += s[i].scrapes;
    }
    return total;
}

static void *pipeline_main(void *arg)
{
    pipeline_run(arg);
    return NULL;
}

static double percentile(const double *sorted, int count, double q)
{
    int k = (int)ceil(q * count) - 1;
    return sorted[k < 0 ? 0 : (k >= count ? count - 1 : k)];
}

/* The source's PUSH sockets (linger 0) and the daemon's input.endpoint.
 * One socket: on ipc with one connection the daemon binds (its default) and
 * the bench connects after pipeline_create (returns 1); otherwise the bench
 * binds and the daemon's K connections join it. Several (--source-sockets
 * each): socket k is pinned to the source's I/O thread k (ZMQ_AFFINITY) and
 * bound on its own endpoint, and input.endpoint lists them, so that each
 * connection has an I/O thread of its own at both ends. Returns 1 when the
 * daemon binds (push[0] connects to ep->in after pipeline_create), 0 when
 * the bench binds, -1 when the endpoints do not fit input.endpoint. */
static int source_open(void *ctx, const options *o, int sockets, void **push, endpoints *ep, eigstream_config *cfg)
{
    int zero = 0;
    cfg->input.endpoint[0] = '\0';
    for (int k = 0; k < sockets; k++) {
        push[k] = zmq_socket(ctx, ZMQ_PUSH);
        zmq_setsockopt(push[k], ZMQ_LINGER, &zero, sizeof zero);
        if (sockets > 1) {
            uint64_t affinity = (uint64_t)1 << k;
            zmq_setsockopt(push[k], ZMQ_AFFINITY, &affinity, sizeof affinity);
        }
        char *endpoint = sockets > 1 ? ep->each[k] : ep->in;
        size_t len = sizeof ep->in;
        if (o->ipc && sockets > 1) /* short: eight of them fit input.endpoint */
            snprintf(endpoint, len, "ipc:///tmp/esb-%d-%d", (int)getpid(), k);
        else if (o->ipc)
            snprintf(endpoint, len, "ipc:///tmp/eigstream-bench-%d-in", (int)getpid());
        if (o->ipc && o->io_threads == 1) {
            snprintf(cfg->input.endpoint, CONFIG_STRING_MAX, "%s", endpoint);
            return 1;
        }
        if (o->ipc)
            zmq_bind(push[k], endpoint);
        else {
            zmq_bind(push[k], "tcp://127.0.0.1:*");
            zmq_getsockopt(push[k], ZMQ_LAST_ENDPOINT, endpoint, &len);
        }
        size_t used = strlen(cfg->input.endpoint);
        if (snprintf(cfg->input.endpoint + used, CONFIG_STRING_MAX - used, "%s%s", k > 0 ? "," : "", endpoint) >=
            (int)(CONFIG_STRING_MAX - used))
            return -1;
    }
    cfg->input.bind = 0;
    return 0;
}

static void source_close(void **push, int sockets, const endpoints *ep)
{
    for (int k = 0; k < sockets; k++) {
        zmq_close(push[k]);
        const char *endpoint = sockets > 1 ? ep->each[k] : ep->in;
        if (strncmp(endpoint, "ipc://", 6) == 0)
            unlink(endpoint + 6);
    }
}

static int end_to_end(const bench_zmq *z, const options *o, const void *payload, size_t payload_bytes,
                      double interval_ms, run_result *r)
{
    eigstream_config cfg;
    endpoints ep;
    char err[512];
    bench_config(o, &cfg);

    void *pull = zmq_socket(z->sink, ZMQ_PULL), *push[CONFIG_INPUT_IO_THREADS_MAX] = {NULL};
    int zero = 0, sockets = o->io_threads > 1 && o->source_each ? o->io_threads : 1;
    zmq_setsockopt(pull, ZMQ_LINGER, &zero, sizeof zero);
    if (o->ipc) {
        snprintf(ep.out, sizeof ep.out, "ipc:///tmp/eigstream-bench-%d-out", (int)getpid());
    } else {
        size_t len = sizeof ep.out;
        zmq_bind(pull, "tcp://127.0.0.1:*");
        zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep.out, &len);
        cfg.output.bind = 0;
    }
    int daemon_binds = source_open(z->source, o, sockets, push, &ep, &cfg);
    snprintf(cfg.output.endpoint, CONFIG_STRING_MAX, "%s", ep.out);
    pipeline *p;
    if (daemon_binds < 0)
        snprintf(err, sizeof err, "the source's %d endpoints do not fit input.endpoint (%d bytes)", sockets,
                 CONFIG_STRING_MAX - 1);
    if (daemon_binds < 0 || pipeline_create(&p, &cfg, err, sizeof err) != PIPELINE_OK) {
        fprintf(stderr, "eigstream-bench pipeline: %s\n", err);
        zmq_close(pull);
        source_close(push, sockets, &ep);
        return -1;
    }
    if (daemon_binds)
        zmq_connect(push[0], ep.in);
    if (o->ipc)
        zmq_connect(pull, ep.out);
    pthread_t runner, feed;
    double *send_ms = calloc((size_t)o->frames, sizeof *send_ms);
    double *latency = calloc((size_t)o->frames, sizeof *latency);
    double *arrive = calloc((size_t)o->frames, sizeof *arrive);
    double *send_real = calloc((size_t)o->frames, sizeof *send_real);
    double *segment[SEGMENTS];
    for (int k = 0; k < SEGMENTS; k++)
        segment[k] = calloc((size_t)o->frames, sizeof *segment[k]);
    feeder f = {push, sockets, o, payload, payload_bytes, o->frames, interval_ms, send_ms, send_real};
    /* At the maximum rate: each thread's share of the sustained part (from
     * the third output on, as the rate itself). */
    thread_watch *watch = interval_ms > 0 ? NULL : malloc(sizeof *watch);
    pthread_create(&runner, NULL, pipeline_main, p);
    pthread_t scraper_threads[SCRAPERS];
    scraper scrapers[SCRAPERS];
    atomic_int scrapers_done = 0;
    int scraping = scrapers_start(scraper_threads, scrapers, pipeline_metrics_http_port(p), &scrapers_done);
    pthread_create(&feed, NULL, feeder_main, &f);

    int timeout = 30000;
    zmq_setsockopt(pull, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    int received = 0;
    for (; received < o->frames; received++) {
        protocol_stage_times times = {0};
        long seq = message_receive_times(pull, &times);
        double now = bench_now_ms(), now_real = realtime_ms();
        if (seq < 0 || seq >= o->frames) {
            pipeline_counters c;
            pipeline_get_counters(p, &c);
            fprintf(stderr,
                    "eigstream-bench pipeline: output %d missing (%s); daemon in=%llu out=%llu rejected=%llu "
                    "in_flight=%llu\n",
                    received, zmq_strerror(errno), (unsigned long long)c.in, (unsigned long long)c.out,
                    (unsigned long long)c.rejected_total, (unsigned long long)c.in_flight);
            break;
        }
        arrive[received] = now;
        latency[received] = now - send_ms[seq];
        timeline_split(send_real[seq], &times, now_real, segment, received);
        if (received == 2 && watch != NULL)
            thread_watch_start(watch);
    }
    r->thread_count = watch != NULL && received == o->frames ? thread_watch_stop(watch, r->threads) : 0;
    free(watch);
    pthread_join(feed, NULL);
    r->scrapes = scrapers_stop(scraper_threads, scrapers, scraping, &scrapers_done);
    source_close(push, sockets, &ep);
    pipeline_stop(p);
    pthread_join(runner, NULL);
    read_stage_means(p, r);
    pipeline_counters counters;
    pipeline_get_counters(p, &counters);
    r->workers = counters.workers;
    memcpy(r->worker_frames, counters.worker_frames, sizeof r->worker_frames);
    pipeline_destroy(&p);
    zmq_close(pull);
    if (o->ipc)
        unlink(ep.out + strlen("ipc://"));

    r->received = received;
    if (received == o->frames) {
        r->fps = (received - 3) / ((arrive[received - 1] - arrive[2]) * 1e-3);
        /* The first frame pays for connection set-up: leave it out. */
        r->slowest_at = 1;
        for (int i = 2; i < received; i++)
            r->slowest_at = latency[i] > latency[r->slowest_at] ? i : r->slowest_at;
        for (int k = 0; k < SEGMENTS; k++)
            r->slowest_ms[k] = segment[k][r->slowest_at];
        qsort(latency + 1, (size_t)(received - 1), sizeof *latency, bench_compare_doubles);
        r->p50 = percentile(latency + 1, received - 1, 0.50);
        r->p90 = percentile(latency + 1, received - 1, 0.90);
        r->p99 = percentile(latency + 1, received - 1, 0.99);
        r->max = latency[received - 1];
        for (int k = 0; k < SEGMENTS; k++)
            r->segment_ms[k] = bench_median(segment[k] + 1, received - 1);
    }
    free(send_real);
    for (int k = 0; k < SEGMENTS; k++)
        free(segment[k]);
    free(send_ms);
    free(latency);
    free(arrive);
    return received == o->frames ? 0 : -1;
}

/* ---- report ----------------------------------------------------------------------------- */

/* The frames one measurement sends and the daemon would publish. */
typedef struct bench_frames {
    void *a;              /* the radar batch, full storage */
    void *payload;        /* as sent: full, or the lower triangles packed */
    size_t payload_bytes;
    uint8_t *meta, *data; /* an eigenspace frame of the mode, for the output transfer alone */
    size_t meta_bytes, data_bytes;
} bench_frames;

static void bench_frames_free(bench_frames *b)
{
    free(b->a);
    free(b->payload);
    free(b->meta);
    free(b->data);
}

/* 0, or -1 when out of memory. */
static int bench_frames_make(const options *o, bench_frames *b)
{
    size_t elem = eig_element_bytes(o->precision);
    size_t full_bytes = (size_t)o->matrices * o->n * o->n * elem;
    *b = (bench_frames){0};
    b->a = malloc(full_bytes);
    b->payload = malloc(full_bytes);
    if (b->a == NULL || b->payload == NULL || workload_radar_batch(o->n, o->matrices, o->precision, 2026, b->a) != 0)
        return -1;
    b->payload_bytes = (size_t)o->matrices * protocol_matrix_bytes((uint32_t)o->n, o->precision, o->storage);
    if (o->storage == PROTOCOL_STORAGE_FULL) {
        memcpy(b->payload, b->a, full_bytes);
    } else {
        uint8_t *dst = b->payload;
        for (int m = 0; m < o->matrices; m++)
            for (int j = 0; j < o->n; j++) {
                size_t run = (size_t)(o->n - j) * elem;
                memcpy(dst, (uint8_t *)b->a + ((size_t)m * o->n * o->n + (size_t)j * o->n + j) * elem, run);
                dst += run;
            }
    }
    /* The eigenspace frame of the mode (signal/noise: sized for d = 3). */
    uint32_t k_sent, first_index;
    b->meta_bytes = protocol_meta_bytes((uint32_t)o->matrices);
    b->data_bytes = (size_t)o->matrices * protocol_eigenspace_matrix_layout(o->mode, (uint32_t)o->n, o->precision, 3,
                                                                            &k_sent, &first_index);
    b->meta = calloc(1, b->meta_bytes);
    b->data = calloc(1, b->data_bytes);
    return b->meta == NULL || b->data == NULL ? -1 : 0;
}

/* What one bench run measured. */
typedef struct bench_report {
    char backend[32];
    double t_in, t_solve, t_out, sum_alone, slowest, rate;
    double t_in_together, t_out_together; /* both transfers at once (transfers_together) */
    double t_out_uncached; /* the output transfer from memory no cache holds; -1: not measured */
    run_result max_rate, fixed;
    double latency_ratio, throughput_ratio;
} bench_report;

/* Each part alone (medians): the input transfer, the solve, the output
 * transfer. Each transfer is timed between the source and sink contexts (two
 * processes, an I/O thread each) and within one context of one I/O thread,
 * and the faster counts: the strictest yardstick for the end-to-end ratios
 * (on a loaded 2-core machine either can win). Returns 0, or -1 when the
 * solver could not run. */
static int measure_alone(const bench_zmq *z, const options *o, const bench_frames *b, message *in_msg,
                         message *out_msg, bench_report *r)
{
    void *ctx1 = zmq_ctx_new();
    r->t_in = transfer_alone(z->source, z->sink, o, in_msg, o->frames);
    r->t_out = transfer_alone(z->source, z->sink, o, out_msg, o->frames);
    if (ctx1 != NULL) {
        double t_in1 = transfer_alone(ctx1, ctx1, o, in_msg, o->frames);
        double t_out1 = transfer_alone(ctx1, ctx1, o, out_msg, o->frames);
        if (t_in1 >= 0 && t_in1 < r->t_in)
            r->t_in = t_in1;
        if (t_out1 >= 0 && t_out1 < r->t_out)
            r->t_out = t_out1;
        zmq_ctx_term(ctx1);
    }
    r->t_solve = solve_alone(o, b->payload, b->payload_bytes, in_msg->header, r->backend, sizeof r->backend);
    if (r->t_solve < 0)
        return -1;
    transfers_together(o, in_msg, out_msg, &r->t_in_together, &r->t_out_together);
    /* Not a yardstick: beside it, what the daemon's sends meet (their buffers just written by the GPU). */
    message uncached = *out_msg;
    uncached.uncached = 1;
    r->t_out_uncached = transfer_alone(z->source, z->sink, o, &uncached, o->frames);
    r->slowest = fmax(r->t_solve, fmax(r->t_in, r->t_out));
    r->sum_alone = r->t_in + r->t_solve + r->t_out;
    return 0;
}

/* The daemon end to end at its maximum rate, then at a fixed rate well below
 * capacity (for latency): half of what the slowest part allows alone or of
 * what the pipeline sustained, whichever is lower. 0, or -1. */
static int measure_end_to_end(const bench_zmq *z, const options *o, const bench_frames *b, bench_report *r)
{
    r->rate = o->rate > 0 ? o->rate : 0.5 * 1e3 / r->slowest;
    if (end_to_end(z, o, b->payload, b->payload_bytes, 0.0, &r->max_rate) != 0)
        return -1;
    if (o->rate <= 0 && r->max_rate.fps < 1e3 / r->slowest)
        r->rate = 0.5 * r->max_rate.fps;
    if (end_to_end(z, o, b->payload, b->payload_bytes, 1e3 / r->rate, &r->fixed) != 0)
        return -1;
    r->latency_ratio = r->fixed.p99 / r->sum_alone;
    r->throughput_ratio = r->max_rate.fps / (1e3 / r->slowest);
    return 0;
}

/* The busiest threads at the maximum rate, with the legend of the ZeroMQ
 * I/O threads' names. */
static void report_threads(const options *o, const run_result *m)
{
    if (m->thread_count == 0) {
        printf("  threads, max rate   (no per-thread schedstat in /proc)\n");
        return;
    }
    printf("  threads, max rate   %% of the time on a core (waiting for one):");
    for (int i = 0; i < m->thread_count; i++)
        printf("%s %s %.0f (%.0f)", i % 5 ? "," : "\n                     ", m->threads[i].name,
               100 * m->threads[i].busy, 100 * m->threads[i].waiting);
    printf("\n                      (1/ZMQbg/IO the bench's source, 2/ZMQbg/IO its sink, ZMQbg/IO/0..%d the "
           "daemon's input connections, ZMQbg/IO/%d its output)\n", o->io_threads - 1, o->io_threads);
}

static void report_print(const options *o, const bench_frames *b, const bench_report *r)
{
    const run_result *m = &r->max_rate, *f = &r->fixed;
    printf("eigstream-bench pipeline: n=%d matrices=%d complex %s mode %s backend %s transport %s storage %s "
           "parts %s, %d fragment(s), %d frames, %d solver worker(s), %d input connection(s) from %d source "
           "socket(s)\n",
           o->n, o->matrices, eig_precision_name(o->precision), protocol_mode_name(o->mode), r->backend,
           o->ipc ? "ipc" : "tcp", o->storage == PROTOCOL_STORAGE_FULL ? "full" : "packed",
           o->per_matrix_parts ? "per-matrix" : "one", o->fragments, o->frames, m->workers, o->io_threads,
           o->source_each ? o->io_threads : 1);
    printf("  frame sizes         input %.2f MB, output %.2f MB\n", (double)(b->payload_bytes + 64) / 1e6,
           (double)(b->meta_bytes + b->data_bytes + 64) / 1e6);
    printf("  alone (median)      input transfer %.2f ms, solve %.2f ms, output transfer %.2f ms; sum %.2f ms\n",
           r->t_in, r->t_solve, r->t_out, r->sum_alone);
    printf("  transfers together  input %.2f ms, output %.2f ms (both at once, no daemon: allows %.2f frames/s)\n",
           r->t_in_together, r->t_out_together, 1e3 / fmax(r->t_solve, fmax(r->t_in_together, r->t_out_together)));
    if (r->t_out_uncached >= 0)
        printf("  output, uncached    %.2f ms (its buffer flushed from the caches before each send, as the GPU's "
               "copy leaves the daemon's; not a yardstick)\n", r->t_out_uncached);
    printf("  end to end, max     %.2f frames/s sustained (slowest alone allows %.2f)\n", m->fps, 1e3 / r->slowest);
    printf("                      latency p50 %.2f p90 %.2f p99 %.2f max %.2f ms (queueing included)\n", m->p50,
           m->p90, m->p99, m->max);
    printf("  end to end, %.2f/s  latency p50 %.2f p90 %.2f p99 %.2f max %.2f ms\n", r->rate, f->p50, f->p90,
           f->p99, f->max);
    printf("  daemon stage means  max rate:   receive %.1f form %.1f solve %.1f publish %.1f end-to-end %.1f ms\n",
           m->stage_mean_ms[0], m->stage_mean_ms[1], m->stage_mean_ms[2], m->stage_mean_ms[3], m->stage_mean_ms[4]);
    printf("                      fixed rate: receive %.1f form %.1f solve %.1f publish %.1f end-to-end %.1f ms\n",
           f->stage_mean_ms[0], f->stage_mean_ms[1], f->stage_mean_ms[2], f->stage_mean_ms[3], f->stage_mean_ms[4]);
    for (int k = 0; k < 2; k++) {
        const run_result *x = k ? f : m;
        printf("  %-19s", k ? "timeline, fixed" : "timeline, max rate");
        for (int g = 0; g < SEGMENTS; g++)
            printf("%s%s %.2f", g ? ", " : "", segment_names[g], x->segment_ms[g]);
        printf(" ms (medians)\n");
    }
    report_threads(o, m);
    printf("  slowest, fixed      ");
    for (int g = 0; g < SEGMENTS; g++)
        printf("%s%s %.2f", g ? ", " : "", segment_names[g], f->slowest_ms[g]);
    printf(" ms (frame %d of %d received)\n", f->slowest_at + 1, f->received);
    printf("  ratios              latency p99 / sum alone = %.3f (target <= %.2f) %s\n", r->latency_ratio,
           LATENCY_TARGET, r->latency_ratio <= LATENCY_TARGET ? "met" : "MISSED");
    printf("                      throughput / slowest alone = %.3f (target >= %.2f) %s\n", r->throughput_ratio,
           THROUGHPUT_TARGET, r->throughput_ratio >= THROUGHPUT_TARGET ? "met" : "MISSED");
}

/* 0, or 1 when the file cannot be written (named on stderr). */
static int report_json(const char *path, const options *o, const bench_frames *b, const bench_report *r)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "eigstream-bench pipeline: %s: %s\n", path, strerror(errno));
        return 1;
    }
    const run_result *m = &r->max_rate, *x = &r->fixed;
    fprintf(f,
            "{\"mode\":\"pipeline\",\"n\":%d,\"matrices\":%d,\"precision\":\"%s\",\"output_mode\":\"%s\","
            "\"backend\":\"%s\",\"transport\":\"%s\",\"storage\":\"%s\",\"parts\":\"%s\",\"fragments\":%d,\"frames\":%d,"
            "\"input_bytes\":%zu,\"output_bytes\":%zu,"
            "\"alone_ms\":{\"input_transfer\":%.4f,\"solve\":%.4f,\"output_transfer\":%.4f,\"sum\":%.4f},"
            "\"output_transfer_uncached_ms\":%.4f,"
            "\"max_rate\":{\"fps\":%.4f,\"p50_ms\":%.4f,\"p90_ms\":%.4f,\"p99_ms\":%.4f,\"max_ms\":%.4f},"
            "\"fixed_rate\":{\"rate_fps\":%.4f,\"p50_ms\":%.4f,\"p90_ms\":%.4f,\"p99_ms\":%.4f,\"max_ms\":%.4f},"
            "\"ratios\":{\"latency_p99_over_sum_alone\":%.4f,\"latency_target\":%.2f,"
            "\"throughput_over_slowest_alone\":%.4f,\"throughput_target\":%.2f},\"threads_max_rate\":[",
            o->n, o->matrices, eig_precision_name(o->precision), protocol_mode_name(o->mode), r->backend,
            o->ipc ? "ipc" : "tcp", o->storage == PROTOCOL_STORAGE_FULL ? "full" : "packed",
            o->per_matrix_parts ? "per-matrix" : "one", o->fragments, o->frames, b->payload_bytes + 64,
            b->meta_bytes + b->data_bytes + 64, r->t_in, r->t_solve, r->t_out, r->sum_alone, r->t_out_uncached,
            m->fps, m->p50,
            m->p90, m->p99, m->max, r->rate, x->p50, x->p90, x->p99, x->max, r->latency_ratio, LATENCY_TARGET,
            r->throughput_ratio, THROUGHPUT_TARGET);
    for (int i = 0; i < m->thread_count; i++) {
        char name[16]; /* a JSON string as it is: quotes, backslashes and controls become '_' */
        snprintf(name, sizeof name, "%s", m->threads[i].name);
        for (char *c = name; *c != '\0'; c++)
            *c = *c == '"' || *c == '\\' || (unsigned char)*c < 0x20 ? '_' : *c;
        fprintf(f, "%s{\"name\":\"%s\",\"busy\":%.4f,\"waiting\":%.4f}", i ? "," : "", name, m->threads[i].busy,
                m->threads[i].waiting);
    }
    /* the input path's shape, as the command line set it */
    fprintf(f, "],\"input\":{\"connections\":%d,\"source_sockets\":%d,\"hwm\":%d,\"copy_threads\":%d,"
               "\"io_cpus\":\"%s\"},\"gpu_devices\":[",
            o->io_threads, o->io_threads > 1 && o->source_each ? o->io_threads : 1, o->input_hwm, o->copy_threads,
            o->io_cpus);
    for (int i = 0; i < o->gpu_devices.count; i++)
        fprintf(f, "%s%d", i ? "," : "", o->gpu_devices.values[i]);
    fprintf(f, "]}\n");
    fclose(f);
    return 0;
}

/* --metrics-http both: end to end again, HTTP server on and scraped, at
 * the rate the first run used; 0 or 2. */
static int measure_scraped(const bench_zmq *z, const options *o, const bench_frames *b, const bench_report *off,
                           bench_report *on)
{
    options scraped = *o;
    scraped.scraped = 1;
    scraped.rate = off->rate;
    *on = *off;
    return measure_end_to_end(z, &scraped, b, on) != 0 ? 2 : 0;
}

static void report_compare(const bench_report *off, const bench_report *on)
{
    const run_result *runs[2][2] = {{&off->max_rate, &off->fixed}, {&on->max_rate, &on->fixed}};
    printf("  metrics http        max rate frames/s | fixed %.2f/s latency p50 p99 max ms | scrapes\n", off->rate);
    for (int k = 0; k < 2; k++)
        printf("    %-17s %8.2f          | %8.2f %8.2f %8.2f                | %ld\n",
               k ? "on, 10 scrapers" : "off", runs[k][0]->fps, runs[k][1]->p50, runs[k][1]->p99, runs[k][1]->max,
               runs[k][0]->scrapes + runs[k][1]->scrapes);
}

/* --workers W1,W2,..: the end-to-end runs of each count after the first
 * (r[0], measured with the rest of the report), at the first's fixed rate
 * so that latencies compare. 0, or 2 when a run failed. */
static int measure_worker_counts(const bench_zmq *z, const options *o, const bench_frames *b, bench_report *r)
{
    for (int k = 1; k < o->worker_counts.count; k++) {
        options each = *o;
        each.workers = o->worker_counts.values[k];
        each.rate = r[0].rate;
        r[k] = r[0];
        if (measure_end_to_end(z, &each, b, &r[k]) != 0)
            return 2;
    }
    return 0;
}

static void report_worker_counts(const options *o, const bench_report *r)
{
    printf("  solver workers      max rate frames/s (x first) | fixed %.2f/s latency p50 p99 ms | frames dealt "
           "per worker (max-rate run)\n",
           r[0].rate);
    for (int k = 0; k < o->worker_counts.count; k++) {
        const run_result *m = &r[k].max_rate;
        printf("    %2d %17.2f (%.3f)       | %8.2f %8.2f              |", m->workers, m->fps,
               m->fps / r[0].max_rate.fps, r[k].fixed.p50, r[k].fixed.p99);
        for (int w = 0; w < m->workers; w++)
            printf(" %llu", (unsigned long long)m->worker_frames[w]);
        printf("\n");
    }
}

int bench_pipeline_main(int argc, char **argv)
{
    /* Before anything starts a thread (the batch's OpenBLAS calls do): the
     * daemon's allocator for the parts alone too (transport_memory.h). */
    (void)transport_tune_allocator();
    options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    bench_frames b;
    if (bench_frames_make(&o, &b) != 0) {
        fprintf(stderr, "eigstream-bench pipeline: cannot make the batch\n");
        bench_frames_free(&b);
        return 1;
    }
    bench_zmq z = {zmq_ctx_new(), zmq_ctx_new()};
    if (z.source != NULL) /* an I/O thread per connection the daemon makes to the source */
        zmq_ctx_set(z.source, ZMQ_IO_THREADS, o.io_threads);
    /* Their I/O threads' names: 1/ZMQbg/IO/k the source's, 2/ZMQbg/IO/0 the
     * sink's, apart from the daemon's ZMQbg/IO/k (report_threads). */
    if (z.source != NULL)
        zmq_ctx_set(z.source, ZMQ_THREAD_NAME_PREFIX, 1);
    if (z.sink != NULL)
        zmq_ctx_set(z.sink, ZMQ_THREAD_NAME_PREFIX, 2);
    if (z.source == NULL || z.sink == NULL) {
        fprintf(stderr, "eigstream-bench pipeline: ZeroMQ context: %s\n", zmq_strerror(errno));
        bench_frames_free(&b);
        return 1;
    }
    static message in_msg, out_msg;
    covariance_message(&in_msg, &o, b.payload, b.payload_bytes, 0);
    memcpy(out_msg.header, in_msg.header, PROTOCOL_HEADER_BYTES);
    out_msg.part[0] = b.meta;
    out_msg.bytes[0] = b.meta_bytes;
    out_msg.part[1] = b.data;
    out_msg.bytes[1] = b.data_bytes;
    out_msg.parts = 2;

    static bench_report counts[CONFIG_LIST_MAX];
    bench_report r = {.backend = "?"}, scraped;
    o.scraped = o.metrics_http == 1;
    if (o.gpu_devices.count > 0)
        o.worker_counts = (config_int_list){.count = 1, .values = {1}};
    o.workers = o.worker_counts.values[0];
    status = measure_alone(&z, &o, &b, &in_msg, &out_msg, &r) != 0          ? 1
             : measure_end_to_end(&z, &o, &b, &r) != 0                       ? 2
                                                                               : 0;
    if (status == 0 && o.metrics_http == 2)
        status = measure_scraped(&z, &o, &b, &r, &scraped);
    counts[0] = r;
    if (status == 0)
        status = measure_worker_counts(&z, &o, &b, counts);
    zmq_ctx_term(z.source);
    if (z.sink != z.source)
        zmq_ctx_term(z.sink);
    if (status == 0) {
        report_print(&o, &b, &r);
        if (o.metrics_http == 2)
            report_compare(&r, &scraped);
        if (o.worker_counts.count > 1)
            report_worker_counts(&o, counts);
        if (o.json_path != NULL)
            status = report_json(o.json_path, &o, &b, &r);
    }
    bench_frames_free(&b);
    return status;
}
