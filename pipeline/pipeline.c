/*
 * pipeline.c - create / run / stop / destroy, the buffer pools, the shared
 * frame helpers and the metrics thread (see pipeline.h, pipeline_internal.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "pipeline_internal.h"

#define OUTPUT_LINGER_MS 2000 /* how long shutdown waits for the last outputs to leave */
#define METRICS_LINGER_MS 200

const char *pipeline_strerror(pipeline_error e)
{
    switch (e) {
    case PIPELINE_OK: return "ok";
    case PIPELINE_EINVAL: return "configuration the pipeline cannot run";
    case PIPELINE_ENOMEM: return "out of memory";
    case PIPELINE_ESOCKET: return "socket error";
    case PIPELINE_ESOLVER: return "solver plan could not be created";
    case PIPELINE_ETHREAD: return "thread could not be started";
    }
    return "unknown pipeline error";
}

const char *pipeline_drop_name(pipeline_drop_reason r)
{
    return metrics_drop_name((metrics_drop)r);
}

static void set_error(char *err, size_t err_bytes, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_error(char *err, size_t err_bytes, const char *fmt, ...)
{
    if (err == NULL || err_bytes == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_bytes, fmt, ap);
    va_end(ap);
}

/* ---- buffers -------------------------------------------------------------------- */

/* Host memory for frame payloads and output data: pinned on the GPU path
 * (DMA straight from/to it), 64-byte aligned otherwise. Zeroed, which also
 * faults every page in now rather than on the first frames. */
static void *buffer_alloc(const pipeline *p, size_t bytes)
{
    void *ptr = NULL;
    if (bytes == 0)
        bytes = 64;
#ifdef EIGSTREAM_PIPELINE_GPU
    if (p->gpu) {
        if (pipeline_gpu_host_alloc(&ptr, bytes) != 0)
            return NULL;
        memset(ptr, 0, bytes);
        return ptr;
    }
#else
    (void)p;
#endif
    if (posix_memalign(&ptr, 64, bytes) != 0)
        return NULL;
    memset(ptr, 0, bytes);
    return ptr;
}

static void buffer_free(const pipeline *p, void *ptr)
{
    if (ptr == NULL)
        return;
#ifdef EIGSTREAM_PIPELINE_GPU
    if (p->gpu) {
        pipeline_gpu_host_free(ptr);
        return;
    }
#else
    (void)p;
#endif
    free(ptr);
}

static void frame_free(void *item, void *ctx)
{
    frame *f = item;
    buffer_free(ctx, f->a);
    buffer_free(ctx, f->w);
    free(f->z);
    buffer_free(ctx, f->info);
    free(f->signal_dim);
    free(f->part_bytes);
    free(f);
}

static frame *frame_alloc(const pipeline *p)
{
    frame *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->gpu_slot = -1;
    f->a_bytes = (size_t)p->matrices * p->n * p->n * p->element_bytes;
    f->a = buffer_alloc(p, f->a_bytes);
    /* Values and info come back from the device on the GPU path: pinned too. */
    f->w = buffer_alloc(p, (size_t)p->matrices * p->n * p->real_bytes);
    /* The GPU path copies vectors from the device straight into the output. */
    if (p->need_vectors && !p->gpu)
        f->z = malloc(f->a_bytes);
    f->info = buffer_alloc(p, p->matrices * sizeof *f->info);
    f->signal_dim = calloc(p->matrices, sizeof *f->signal_dim);
    f->part_bytes = calloc(p->matrices, sizeof *f->part_bytes);
    if (f->a == NULL || f->w == NULL || (p->need_vectors && !p->gpu && f->z == NULL) || f->info == NULL ||
        f->signal_dim == NULL || f->part_bytes == NULL) {
        frame_free(f, (void *)p);
        return NULL;
    }
    if (f->z != NULL)
        memset(f->z, 0, f->a_bytes);
    return f;
}

static void output_free(void *item, void *ctx)
{
    output_buffer *o = item;
    buffer_free(ctx, o->data);
    free(o->meta);
    free(o->matrix_meta);
    free(o);
}

static output_buffer *output_alloc(pipeline *p)
{
    output_buffer *o = calloc(1, sizeof *o);
    if (o == NULL)
        return NULL;
    o->owner = p;
    o->meta = calloc(1, protocol_meta_bytes(p->matrices));
    o->matrix_meta = calloc(p->matrices, sizeof *o->matrix_meta);
    o->data = buffer_alloc(p, p->output_data_capacity);
    if (o->meta == NULL || o->matrix_meta == NULL || o->data == NULL) {
        output_free(o, p);
        return NULL;
    }
    return o;
}

/* ---- frame helpers shared by the stages ------------------------------------------ */

void pipeline_frame_release(pipeline *p, frame *f)
{
#ifdef EIGSTREAM_PIPELINE_GPU
    if (f->gpu_slot >= 0) {
        char err[160];
        /* The slot's copies may still read f->a or write f->out: wait first. */
        if (pipeline_gpu_slot_finish(p->device, f->gpu_slot, err, sizeof err) != 0)
            LOG_ERROR("pipeline", "device slot %d: %s", f->gpu_slot, err);
        pipeline_gpu_slot_release(p->device, f->gpu_slot);
    }
#endif
    if (f->out != NULL)
        pool_put(&p->outputs, f->out);
    f->out = NULL;
    f->gpu_slot = -1;
    f->solver_failed = 0;
    pool_put(&p->frames, f);
}

void pipeline_frame_drop(pipeline *p, frame *f, metrics_drop reason)
{
    uint64_t suppressed;
    metrics_count_drop(&p->stats, reason);
    if (log_get_level() >= CONFIG_LOG_WARN && log_limiter_allow(&p->drop_limit[reason], &suppressed))
        LOG_WARN("pipeline", "dropped frame seq %llu: %s (%llu more suppressed)",
                 (unsigned long long)f->header.seq, metrics_drop_name(reason), (unsigned long long)suppressed);
    pipeline_frame_release(p, f);
}

int pipeline_frame_is_late(const pipeline *p, const frame *f, uint64_t now_ns)
{
    return now_ns - f->received_ns > (uint64_t)p->cfg.frame.deadline_ms * 1000000u;
}

/* ---- metrics thread ----------------------------------------------------------------- */

static void metrics_fill_context(pipeline *p, metrics_context *c)
{
    c->backend = eig_backend_name(p->backend);
    c->precision = p->element == EIG_COMPLEX_DOUBLE ? "double" : "float";
    c->mode = protocol_mode_name(p->mode);
    c->n = (int)p->n;
    c->matrices = (int)p->matrices;
    c->queue_form = queue_depth(&p->to_form);
    c->queue_solve = queue_depth(&p->to_solve);
    c->queue_publish = queue_depth(&p->to_publish);
    c->queue_capacity = p->to_form.capacity;
    c->frames_free = pool_available(&p->frames);
    c->frames_total = p->frames.count;
    c->outputs_free = pool_available(&p->outputs);
    c->outputs_total = p->outputs.count;
}

/* The periodic task: rates, then the JSON document, then the send (no lock). */
static void metrics_publish(pipeline *p)
{
    metrics_context c;
    metrics_fill_context(p, &c);
    pthread_mutex_lock(&p->metrics_lock);
    metrics_tick(&p->stats, metrics_now_ns());
    size_t len = metrics_format_json(&p->stats, &c, metrics_realtime_ns(), p->metrics_text,
                                     sizeof p->metrics_text);
    pthread_mutex_unlock(&p->metrics_lock);
    if (len == 0) {
        LOG_ERROR("metrics", "document larger than %zu bytes", sizeof p->metrics_text);
        return;
    }
    LOG_DEBUG("metrics", "in %.1f/s out %.1f/s rejected %.1f/s", p->stats.rate_in, p->stats.rate_out,
              p->stats.rate_rejected);
    if (p->metrics_socket != NULL && zmq_send(p->metrics_socket, p->metrics_text, len, ZMQ_DONTWAIT) < 0 &&
        errno != EAGAIN)
        LOG_WARN("metrics", "send failed: %s", zmq_strerror(errno));
}

void *pipeline_metrics_main(void *arg)
{
    pipeline *p = arg;
    pthread_mutex_lock(&p->metrics_lock);
    while (!atomic_load(&p->metrics_stop)) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        long ms = p->cfg.metrics.interval_ms;
        until.tv_sec += ms / 1000;
        until.tv_nsec += (ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        int rc = 0;
        while (!atomic_load(&p->metrics_stop) && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&p->metrics_wake, &p->metrics_lock, &until);
        if (atomic_load(&p->metrics_stop))
            break;
        pthread_mutex_unlock(&p->metrics_lock);
        metrics_publish(p);
        pthread_mutex_lock(&p->metrics_lock);
    }
    pthread_mutex_unlock(&p->metrics_lock);
    metrics_publish(p); /* the final counts */
    return NULL;
}

size_t pipeline_metrics_json(pipeline *p, char *buf, size_t cap)
{
    metrics_context c;
    metrics_fill_context(p, &c);
    pthread_mutex_lock(&p->metrics_lock);
    size_t len = metrics_format_json(&p->stats, &c, metrics_realtime_ns(), buf, cap);
    pthread_mutex_unlock(&p->metrics_lock);
    return len;
}

void pipeline_get_counters(const pipeline *p, pipeline_counters *c)
{
    const metrics *m = &p->stats;
    memset(c, 0, sizeof *c);
    c->out = atomic_load_explicit(&m->frames_out, memory_order_acquire);
    c->in = atomic_load(&m->frames_in);
    c->late = atomic_load(&m->frames_late);
    for (int d = 0; d < PIPELINE_DROP_COUNT_; d++)
        c->dropped[d] = atomic_load(&m->dropped[d]);
    for (int r = 0; r < PROTOCOL_REJECT_COUNT_; r++)
        c->rejected[r] = atomic_load(&m->rejected[r]);
    c->rejected_total = metrics_rejected_total(m);
    uint64_t done = c->out + metrics_dropped_total(m);
    c->in_flight = c->in > done ? c->in - done : 0;
    c->matrices_failed = atomic_load(&m->matrices_failed);
    c->overflow_blocked = atomic_load(&m->overflow_blocked);
}

const char *pipeline_backend_name(const pipeline *p)
{
    return eig_backend_name(p->backend);
}

/* ---- create / destroy ---------------------------------------------------------------- */

static pipeline_error open_socket(pipeline *p, void **out, int type, const char *role, const char *endpoint,
                                  int bind, char *err, size_t err_bytes)
{
    void *s = zmq_socket(p->zmq, type);
    if (s == NULL) {
        set_error(err, err_bytes, "%s: cannot create socket: %s", role, zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    *out = s;
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero); /* the caller raises it where it matters */
    if ((bind ? zmq_bind(s, endpoint) : zmq_connect(s, endpoint)) != 0) {
        set_error(err, err_bytes, "%s: cannot %s %s: %s", role, bind ? "bind" : "connect", endpoint,
                  zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    return PIPELINE_OK;
}

static pipeline_error open_sockets(pipeline *p, char *err, size_t err_bytes)
{
    const eigstream_config *cfg = &p->cfg;
    pipeline_error e;
    int input_type = cfg->input.pattern == CONFIG_INPUT_SUB ? ZMQ_SUB : ZMQ_PULL;
    int output_type = cfg->output.pattern == CONFIG_OUTPUT_PUSH ? ZMQ_PUSH : ZMQ_PUB;

    p->zmq = zmq_ctx_new();
    if (p->zmq == NULL) {
        set_error(err, err_bytes, "cannot create the ZeroMQ context: %s", zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    /* Two I/O threads, so that a frame arriving and an eigenspace leaving
     * (each ~47 MB at the defaults) are copied by different threads at the
     * same time: with ZeroMQ's default single I/O thread they serialize and
     * the sustained rate is 1 / (input + output transfer) instead of
     * 1 / max(input, output). */
    if (zmq_ctx_set(p->zmq, ZMQ_IO_THREADS, PIPELINE_ZMQ_IO_THREADS) != 0) {
        set_error(err, err_bytes, "cannot set ZeroMQ I/O threads: %s", zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    /* Options that must precede bind/connect go on a socket created here. */
    p->input = zmq_socket(p->zmq, input_type);
    if (p->input == NULL) {
        set_error(err, err_bytes, "input: cannot create socket: %s", zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    int zero = 0, hwm = cfg->input.hwm;
    int64_t max_bytes = cfg->input.max_message_bytes;
    zmq_setsockopt(p->input, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(p->input, ZMQ_RCVHWM, &hwm, sizeof hwm);
    /* A part above the limit makes ZeroMQ drop the connection rather than
     * buffer it; smaller lies about sizes are the receiver's rejects. */
    zmq_setsockopt(p->input, ZMQ_MAXMSGSIZE, &max_bytes, sizeof max_bytes);
    if (input_type == ZMQ_SUB) {
        uint8_t prefix[PROTOCOL_PREFIX_BYTES] = {'E', 'I', 'G', 'S', PROTOCOL_VERSION, PROTOCOL_KIND_COVARIANCE};
        zmq_setsockopt(p->input, ZMQ_SUBSCRIBE, prefix, sizeof prefix);
    }
    if ((cfg->input.bind ? zmq_bind(p->input, cfg->input.endpoint) : zmq_connect(p->input, cfg->input.endpoint)) != 0) {
        set_error(err, err_bytes, "input: cannot %s %s: %s", cfg->input.bind ? "bind" : "connect",
                  cfg->input.endpoint, zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }

    p->output = zmq_socket(p->zmq, output_type);
    if (p->output == NULL) {
        set_error(err, err_bytes, "output: cannot create socket: %s", zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }
    int linger = OUTPUT_LINGER_MS, out_hwm = cfg->output.hwm, timeout = cfg->frame.deadline_ms;
    zmq_setsockopt(p->output, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(p->output, ZMQ_SNDHWM, &out_hwm, sizeof out_hwm);
    /* PUSH blocks without a peer; a bounded wait turns that into a counted drop. */
    if (output_type == ZMQ_PUSH)
        zmq_setsockopt(p->output, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
    if ((cfg->output.bind ? zmq_bind(p->output, cfg->output.endpoint)
                          : zmq_connect(p->output, cfg->output.endpoint)) != 0) {
        set_error(err, err_bytes, "output: cannot %s %s: %s", cfg->output.bind ? "bind" : "connect",
                  cfg->output.endpoint, zmq_strerror(errno));
        return PIPELINE_ESOCKET;
    }

    if (cfg->metrics.endpoint[0] != '\0') {
        e = open_socket(p, &p->metrics_socket, ZMQ_PUB, "metrics", cfg->metrics.endpoint, 1, err, err_bytes);
        if (e != PIPELINE_OK)
            return e;
        int metrics_linger = METRICS_LINGER_MS;
        zmq_setsockopt(p->metrics_socket, ZMQ_LINGER, &metrics_linger, sizeof metrics_linger);
    }
    return PIPELINE_OK;
}

/* Every limit and rule between settings is config_validate's (config/). */
static pipeline_error check_config(const eigstream_config *cfg, char *err, size_t err_bytes)
{
    return config_validate(cfg, err, err_bytes) == CONFIG_OK ? PIPELINE_OK : PIPELINE_EINVAL;
}

static pipeline_error create_plans(pipeline *p, char *err, size_t err_bytes)
{
    const eigstream_config *cfg = &p->cfg;
    eig_plan_params params = eig_plan_params_default();
    params.n = (int)p->n;
    params.batch = (int)p->matrices;
    params.precision = p->element == EIG_COMPLEX_DOUBLE ? EIG_COMPLEX_DOUBLE : EIG_COMPLEX_FLOAT;
    params.job = p->need_vectors ? EIG_JOB_VECTORS : EIG_JOB_VALUES;
    params.storage = EIG_STORAGE_FULL;
    params.uplo = EIG_LOWER;
    params.threads = cfg->solver.cpu_threads;
    params.device = cfg->solver.gpu_device;
    params.backend = cfg->solver.backend;
    eig_error e = eig_plan_create(&p->plan, &params);
    if (e != EIG_OK) {
        if (e == EIG_ENODEVICE || e == EIG_ENOCUDA)
            set_error(err, err_bytes, "solver.backend = %s: %s (eigstream built %s CUDA, %d usable GPU)",
                      eig_backend_name(cfg->solver.backend), eig_strerror(e),
                      eig_cuda_built() ? "with" : "without", eig_cuda_device_count());
        else
            set_error(err, err_bytes, "solver plan (n=%u, matrices=%u, backend %s): %s", p->n, p->matrices,
                      eig_backend_name(cfg->solver.backend), eig_strerror(e));
        return PIPELINE_ESOLVER;
    }
    p->backend = eig_plan_get_params(p->plan)->backend;
    p->gpu = 0;
#ifdef EIGSTREAM_PIPELINE_GPU
    if (p->backend == EIG_BACKEND_CUDA) {
        p->gpu = 1;
        /* Without forming a packed frame is solved as it came: one plan per
         * packed triangle; with forming every frame is unpacked to FULL. */
        if (!cfg->form.forward_backward && !cfg->form.diagonal_loading) {
            for (int u = 0; u < 2; u++) {
                params.storage = EIG_STORAGE_PACKED;
                params.uplo = u == 0 ? EIG_LOWER : EIG_UPPER;
                e = eig_plan_create(&p->plan_packed[u], &params);
                if (e == EIG_EUNSUPPORTED) {
                    /* The backend cannot read packed storage: unpack on the device instead. */
                    eig_plan_destroy(&p->plan_packed[0]);
                    break;
                }
                if (e != EIG_OK) {
                    set_error(err, err_bytes, "packed solver plan: %s", eig_strerror(e));
                    return PIPELINE_ESOLVER;
                }
            }
        }
        pipeline_gpu_params gp = {
            .device = cfg->solver.gpu_device,
            .n = p->n,
            .matrices = p->matrices,
            .element = p->element,
            .need_vectors = p->need_vectors,
            .solve_packed = p->plan_packed[0] != NULL && p->plan_packed[1] != NULL,
            .slots = 2,
        };
        if (pipeline_gpu_create(&p->device, &gp, err, err_bytes) != 0)
            return PIPELINE_ESOLVER;
    }
#endif
    return PIPELINE_OK;
}

static pipeline_error create_pools(pipeline *p, char *err, size_t err_bytes)
{
    size_t depth = (size_t)p->cfg.frame.queue_depth;
    size_t frames = 3 * depth + 4;
    size_t outputs = (size_t)(p->cfg.output.hwm > 0 ? p->cfg.output.hwm : 4) + 2;
    if (queue_init(&p->to_form, depth) != QUEUE_OK || queue_init(&p->to_solve, depth) != QUEUE_OK ||
        queue_init(&p->to_publish, depth) != QUEUE_OK || pool_init(&p->frames, frames) != POOL_OK ||
        pool_init(&p->outputs, outputs) != POOL_OK)
        goto nomem;
    for (size_t i = 0; i < frames; i++) {
        frame *f = frame_alloc(p);
        if (f == NULL)
            goto nomem;
        pool_add(&p->frames, f);
    }
    for (size_t i = 0; i < outputs; i++) {
        output_buffer *o = output_alloc(p);
        if (o == NULL)
            goto nomem;
        pool_add(&p->outputs, o);
    }
    return PIPELINE_OK;
nomem:
    set_error(err, err_bytes, "cannot allocate %zu frame buffers of %.1f MB and %zu output buffers of %.1f MB%s",
              frames, (double)p->matrices * p->n * p->n * p->element_bytes * (p->need_vectors && !p->gpu ? 2 : 1) / 1e6,
              outputs, (double)p->output_data_capacity / 1e6, p->gpu ? " (pinned)" : "");
    return PIPELINE_ENOMEM;
}

pipeline_error pipeline_create(pipeline **out, const eigstream_config *cfg, char *err, size_t err_bytes)
{
    pipeline_error e;
    *out = NULL;
    if (err != NULL && err_bytes > 0)
        err[0] = '\0';
    e = check_config(cfg, err, err_bytes);
    if (e != PIPELINE_OK)
        return e;

    pipeline *p = calloc(1, sizeof *p);
    if (p == NULL) {
        set_error(err, err_bytes, "out of memory");
        return PIPELINE_ENOMEM;
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->metrics_lock, NULL);
    pthread_cond_init(&p->metrics_wake, &attr);
    pthread_condattr_destroy(&attr);

    p->cfg = *cfg;
    log_set_level(cfg->log.level);
    p->n = (uint32_t)cfg->solver.n;
    p->matrices = (uint32_t)cfg->solver.matrices;
    p->element = cfg->solver.precision;
    p->element_bytes = eig_element_bytes(p->element);
    p->real_bytes = p->element_bytes / 2;
    p->mode = cfg->output.mode;
    p->need_vectors = p->mode != PROTOCOL_MODE_VALUES;
    p->loading_factor = pow(10.0, cfg->form.diagonal_loading_db / 10.0);
    p->max_payload_bytes = (size_t)cfg->input.max_message_bytes;
    p->output_data_capacity = (size_t)p->matrices * output_matrix_bytes(p, p->need_vectors ? p->n : 0);

    size_t packed_frame = (size_t)p->matrices * protocol_matrix_bytes(p->n, p->element, PROTOCOL_STORAGE_PACKED_LOWER);
    if (cfg->input.max_message_bytes > 0 && (size_t)cfg->input.max_message_bytes < packed_frame) {
        set_error(err, err_bytes,
                  "input.max_message_bytes = %lld is smaller than one frame (%zu bytes even packed)",
                  (long long)cfg->input.max_message_bytes, packed_frame);
        e = PIPELINE_EINVAL;
        goto fail;
    }
    if ((e = create_plans(p, err, err_bytes)) != PIPELINE_OK)
        goto fail;
    if ((e = create_pools(p, err, err_bytes)) != PIPELINE_OK)
        goto fail;
    if ((e = open_sockets(p, err, err_bytes)) != PIPELINE_OK)
        goto fail;
    metrics_init(&p->stats, metrics_now_ns());
    LOG_DEBUG("pipeline", "%zu frame buffers, %zu output buffers (%.1f MB each)%s", p->frames.count,
              p->outputs.count, (double)p->output_data_capacity / 1e6, p->gpu ? ", pinned" : "");
    *out = p;
    return PIPELINE_OK;
fail:
    pipeline_destroy(&p);
    return e;
}

void pipeline_destroy(pipeline **pp)
{
    pipeline *p = pp != NULL ? *pp : NULL;
    if (p == NULL)
        return;
    if (p->input != NULL)
        zmq_close(p->input);
    if (p->output != NULL)
        zmq_close(p->output);
    if (p->metrics_socket != NULL)
        zmq_close(p->metrics_socket);
    /* Term waits (output linger at most) for queued outputs; their zero-copy
     * buffers come back to the output pool before it is freed below. */
    if (p->zmq != NULL)
        while (zmq_ctx_term(p->zmq) != 0 && errno == EINTR)
            ;
    pool_destroy(&p->frames, frame_free, p);
    pool_destroy(&p->outputs, output_free, p);
    queue_destroy(&p->to_form);
    queue_destroy(&p->to_solve);
    queue_destroy(&p->to_publish);
#ifdef EIGSTREAM_PIPELINE_GPU
    pipeline_gpu_destroy(&p->device);
    eig_plan_destroy(&p->plan_packed[0]);
    eig_plan_destroy(&p->plan_packed[1]);
#endif
    eig_plan_destroy(&p->plan);
    pthread_cond_destroy(&p->metrics_wake);
    pthread_mutex_destroy(&p->metrics_lock);
    free(p);
    *pp = NULL;
}

/* ---- run / stop -------------------------------------------------------------------- */

void pipeline_stop(pipeline *p)
{
    atomic_store(&p->stop_requested, 1);
}

static void log_accounting(pipeline *p)
{
    pipeline_counters c;
    pipeline_get_counters(p, &c);
    uint64_t dropped = 0;
    for (int d = 0; d < PIPELINE_DROP_COUNT_; d++)
        dropped += c.dropped[d];
    LOG_INFO("pipeline",
             "accounting: in=%llu out=%llu (late %llu) dropped=%llu (overflow=%llu late=%llu solver_error=%llu "
             "send_failed=%llu) in_flight=%llu rejected=%llu",
             (unsigned long long)c.in, (unsigned long long)c.out, (unsigned long long)c.late,
             (unsigned long long)dropped, (unsigned long long)c.dropped[PIPELINE_DROP_OVERFLOW],
             (unsigned long long)c.dropped[PIPELINE_DROP_LATE], (unsigned long long)c.dropped[PIPELINE_DROP_SOLVER],
             (unsigned long long)c.dropped[PIPELINE_DROP_SEND], (unsigned long long)c.in_flight,
             (unsigned long long)c.rejected_total);
}

/* Waits (at most the output linger) until ZeroMQ has released every output
 * buffer, i.e. every published frame has been written to its connection or
 * discarded by a PUB, so that closing the socket strands nothing (libzmq 4.3
 * can leave messages queued behind a peer's HWM on a closed socket). */
static void flush_outputs(pipeline *p)
{
    for (int waited = 0; waited < OUTPUT_LINGER_MS; waited += 5) {
        if (pool_available(&p->outputs) == p->outputs.count)
            return;
        struct timespec five = {0, 5000000L};
        nanosleep(&five, NULL);
    }
    LOG_WARN("pipeline", "%zu outputs still queued after %d ms", p->outputs.count - pool_available(&p->outputs),
             OUTPUT_LINGER_MS);
}

pipeline_error pipeline_run(pipeline *p)
{
    static void *(*const mains[PIPELINE_THREAD_COUNT_])(void *) = {
        pipeline_receive_main, pipeline_form_main, pipeline_solve_main, pipeline_publish_main,
        pipeline_metrics_main,
    };
    if (p->ran)
        return PIPELINE_EINVAL;
    p->ran = 1;

    int started = 0, rc = 0;
    for (; started < PIPELINE_THREAD_COUNT_; started++)
        if ((rc = pthread_create(&p->threads[started], NULL, mains[started], p)) != 0)
            break;
    if (started < PIPELINE_THREAD_COUNT_) {
        LOG_ERROR("pipeline", "cannot start thread %d: %s", started, strerror(rc));
        /* Unblock whatever runs: nothing downstream of the gap would drain. */
        pipeline_stop(p);
        queue_close(&p->to_form);
        queue_close(&p->to_solve);
        queue_close(&p->to_publish);
        atomic_store(&p->metrics_stop, 1);
        for (int i = 0; i < started; i++)
            pthread_join(p->threads[i], NULL);
        return PIPELINE_ETHREAD;
    }
    /* Shutdown drains in stage order: each stage exits when its input queue
     * is closed and empty, then closes its output queue. */
    for (int i = PIPELINE_THREAD_RECEIVE; i <= PIPELINE_THREAD_PUBLISH; i++)
        pthread_join(p->threads[i], NULL);
    flush_outputs(p);
    pthread_mutex_lock(&p->metrics_lock);
    atomic_store(&p->metrics_stop, 1);
    pthread_cond_signal(&p->metrics_wake);
    pthread_mutex_unlock(&p->metrics_lock);
    pthread_join(p->threads[PIPELINE_THREAD_METRICS], NULL);
    log_accounting(p);
    return PIPELINE_OK;
}
