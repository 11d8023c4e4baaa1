/*
 * pipeline_test_util.c - see pipeline_test_util.h.
 */
#include "pipeline_test_util.h"

#include <complex.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

void test_sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

void test_config(eigstream_config *cfg, int n, int matrices)
{
    config_defaults(cfg);
    cfg->solver.n = n;
    cfg->solver.matrices = matrices;
    cfg->solver.backend = EIG_BACKEND_LAPACK;
    /* EIGSTREAM_TEST_BACKEND=cuda runs the same cases on the GPU path. */
    const char *backend = getenv("EIGSTREAM_TEST_BACKEND");
    if (backend != NULL)
        eig_backend_parse(backend, &cfg->solver.backend);
    cfg->solver.cpu_threads = 1;
    cfg->metrics.endpoint[0] = '\0';
    cfg->metrics.http[0] = '\0'; /* tests run in parallel: no shared default port */
    cfg->log.level = LOG_LEVEL_WARN;
    cfg->output.pattern = CONFIG_OUTPUT_PUSH;
    /* Tests send bursts: nothing may be dropped unless a test asks for it. */
    cfg->frame.overflow_policy = CONFIG_OVERFLOW_BLOCK;
    cfg->frame.deadline_ms = 60000;
}

static void *run_main(void *arg)
{
    test_daemon *d = arg;
    d->run_result = pipeline_run(d->p);
    atomic_store(&d->finished, 1);
    return NULL;
}

static int bind_wildcard(void *s, char *endpoint, size_t bytes)
{
    if (zmq_bind(s, "tcp://127.0.0.1:*") != 0)
        return -1;
    size_t len = bytes;
    return zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, endpoint, &len);
}

/* A PAIR on d's context that receives push's handshake events. */
static int monitor_handshakes(test_daemon *d)
{
    char name[64];
    int linger = 0;
    snprintf(name, sizeof name, "inproc://test-push-monitor-%p", (void *)d);
    if (zmq_socket_monitor(d->push, name, ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0)
        return -1;
    d->push_monitor = zmq_socket(d->zmq, ZMQ_PAIR);
    if (d->push_monitor == NULL)
        return -1;
    zmq_setsockopt(d->push_monitor, ZMQ_LINGER, &linger, sizeof linger);
    return zmq_connect(d->push_monitor, name);
}

int test_wait_input_connections(test_daemon *d, int count, int timeout_ms)
{
    int seen = 0;
    if (d->push_monitor == NULL)
        return -1;
    while (seen < count) {
        zmq_msg_t event, endpoint;
        zmq_pollitem_t item = {.socket = d->push_monitor, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, timeout_ms) <= 0)
            return -1;
        zmq_msg_init(&event);
        zmq_msg_init(&endpoint);
        int ok = zmq_msg_recv(&event, d->push_monitor, 0) >= 0 && zmq_msg_more(&event) &&
                 zmq_msg_recv(&endpoint, d->push_monitor, 0) >= 0 && zmq_msg_size(&event) >= 2;
        uint16_t id = 0;
        if (ok)
            memcpy(&id, zmq_msg_data(&event), sizeof id);
        zmq_msg_close(&event);
        zmq_msg_close(&endpoint);
        if (!ok)
            return -1;
        seen += id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
    }
    return 0;
}

int test_daemon_start(test_daemon *d, eigstream_config *cfg, const char *ipc_tag)
{
    return test_daemon_start_hwm(d, cfg, ipc_tag, 1000);
}

static void *push_socket(test_daemon *d)
{
    void *s = zmq_socket(d->zmq, ZMQ_PUSH);
    int linger = 0, hwm = 1000;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm);
    return s;
}

/* The PUSH sockets after the first, bound, their endpoints appended to the
 * list in cfg->input.endpoint (which holds the first's). */
static int bind_more_pushes(test_daemon *d, eigstream_config *cfg)
{
    d->pushes[0] = d->push;
    for (d->push_count = 1; d->push_count < cfg->input.io_threads; d->push_count++) {
        char endpoint[CONFIG_STRING_MAX];
        void *s = d->pushes[d->push_count] = push_socket(d);
        size_t used = strlen(cfg->input.endpoint);
        if (s == NULL || bind_wildcard(s, endpoint, sizeof endpoint) != 0 ||
            snprintf(cfg->input.endpoint + used, CONFIG_STRING_MAX - used, ",%s", endpoint) >=
                (int)(CONFIG_STRING_MAX - used))
            return -1;
    }
    return 0;
}

static int daemon_start(test_daemon *d, eigstream_config *cfg, const char *ipc_tag, int pull_hwm, int endpoints)
{
    char err[512];
    int pub = cfg->output.pattern == CONFIG_OUTPUT_PUB;
    memset(d, 0, sizeof *d);
    d->zmq = zmq_ctx_new();
    d->push = push_socket(d);
    d->pull = zmq_socket(d->zmq, pub ? ZMQ_SUB : ZMQ_PULL);
    int linger = 0;
    zmq_setsockopt(d->pull, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(d->pull, ZMQ_RCVHWM, &pull_hwm, sizeof pull_hwm);
    if (pub)
        zmq_setsockopt(d->pull, ZMQ_SUBSCRIBE, "EIGS\x01\x02", PROTOCOL_PREFIX_BYTES);

    if (ipc_tag != NULL) {
        /* The daemon binds (the default), the test connects. */
        snprintf(cfg->input.endpoint, CONFIG_STRING_MAX, "ipc:///tmp/eigstream-test-%d-%s-in", (int)getpid(), ipc_tag);
        snprintf(cfg->output.endpoint, CONFIG_STRING_MAX, "ipc:///tmp/eigstream-test-%d-%s-out", (int)getpid(),
                 ipc_tag);
        cfg->input.bind = 1;
        cfg->output.bind = 1;
    } else {
        /* The test binds on free ports and the daemon connects. */
        if (cfg->input.io_threads > 1 && !endpoints && monitor_handshakes(d) != 0) {
            fprintf(stderr, "test: cannot monitor the input: %s\n", zmq_strerror(errno));
            return -1;
        }
        if (bind_wildcard(d->push, cfg->input.endpoint, CONFIG_STRING_MAX) != 0 ||
            bind_wildcard(d->pull, cfg->output.endpoint, CONFIG_STRING_MAX) != 0) {
            fprintf(stderr, "test: cannot bind: %s\n", zmq_strerror(errno));
            return -1;
        }
        if (endpoints && bind_more_pushes(d, cfg) != 0) {
            fprintf(stderr, "test: cannot bind input socket %d: %s\n", d->push_count, zmq_strerror(errno));
            return -1;
        }
        cfg->input.bind = 0;
        cfg->output.bind = 0;
    }
    pipeline_error e = pipeline_create(&d->p, cfg, err, sizeof err);
    if (e != PIPELINE_OK) {
        fprintf(stderr, "test: pipeline_create: %s (%s)\n", err, pipeline_strerror(e));
        return -1;
    }
    if (ipc_tag != NULL) {
        zmq_connect(d->push, cfg->input.endpoint);
        zmq_connect(d->pull, cfg->output.endpoint);
    }
    if (pthread_create(&d->thread, NULL, run_main, d) != 0)
        return -1;
    return 0; /* a SUB output is not joined yet: test_pub_join */
}

int test_daemon_start_hwm(test_daemon *d, eigstream_config *cfg, const char *ipc_tag, int pull_hwm)
{
    return daemon_start(d, cfg, ipc_tag, pull_hwm, 0);
}

int test_daemon_start_endpoints(test_daemon *d, eigstream_config *cfg)
{
    return daemon_start(d, cfg, NULL, 1000, 1);
}

void *test_subscribe(test_daemon *d, const char *endpoint, int rcvhwm)
{
    void *sub = zmq_socket(d->zmq, ZMQ_SUB);
    int linger = 0;
    if (sub == NULL)
        return NULL;
    zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sub, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm);
    zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "EIGS\x01\x02", PROTOCOL_PREFIX_BYTES);
    if (zmq_connect(sub, endpoint) != 0) {
        zmq_close(sub);
        return NULL;
    }
    return sub;
}

/* Primers are sent one at a time, each followed by a wait for it that
 * doubles from 10 ms up to 1 s: a fast join costs one primer, a slow one
 * about 26 s before the join gives up (TEST_JOIN_PRIMERS = 32). */
long test_pub_join(test_daemon *d, void *sub, const void *set, uint32_t n, uint32_t matrices, uint8_t element,
                   const test_frame_spec *spec, uint64_t first)
{
    const size_t frame_bytes = (size_t)matrices * n * n * eig_element_bytes(element);
    const uint8_t *frames = set;
    uint64_t next = first;
    long seen = -1;
    test_output o;
    for (int wait_ms = 10; seen < 0 && next < first + TEST_JOIN_PRIMERS; wait_ms = wait_ms < 500 ? 2 * wait_ms : 1000) {
        test_frame_spec s = *spec;
        s.seq = next;
        if (test_send_frame(d->push, frames + next * frame_bytes, n, matrices, element, &s) != 0) {
            FAIL("join: cannot send primer seq %llu", (unsigned long long)next);
            return -1;
        }
        next++;
        if (test_receive_output(sub, &o, wait_ms) == 0) {
            seen = (long)o.header.seq;
            CHECK(o.header.seq >= first && o.header.seq < next, "join: primer seq %ld, sent %llu..%llu", seen,
                  (unsigned long long)first, (unsigned long long)next - 1);
            test_check_output(&o, o.header.seq < next ? frames + o.header.seq * frame_bytes : NULL, n, matrices,
                              element, "join primer");
            test_output_free(&o);
        }
    }
    if (seen < 0) {
        FAIL("join: none of %d primers reached the subscriber", TEST_JOIN_PRIMERS);
        return -1;
    }
    /* The subscription holds from the primer seen on: each later primer arrives, in order. */
    while ((uint64_t)seen + 1 < next) {
        if (test_receive_output(sub, &o, 30000) != 0) {
            FAIL("join: primer after seq %ld of %llu..%llu did not arrive", seen, (unsigned long long)first,
                 (unsigned long long)next - 1);
            return -1;
        }
        CHECK((long)o.header.seq == seen + 1, "join: primer seq %llu after %ld", (unsigned long long)o.header.seq,
              seen);
        seen = (long)o.header.seq;
        test_check_output(&o, o.header.seq < next ? frames + o.header.seq * frame_bytes : NULL, n, matrices,
                          element, "join primer");
        test_output_free(&o);
    }
    return (long)next;
}

pipeline_error test_daemon_stop(test_daemon *d, pipeline_counters *final_counters)
{
    pipeline_stop(d->p);
    pthread_join(d->thread, NULL);
    if (final_counters != NULL)
        pipeline_get_counters(d->p, final_counters);
    if (d->push_monitor != NULL) {
        zmq_socket_monitor(d->push, NULL, 0);
        zmq_close(d->push_monitor);
    }
    for (int k = 1; k < d->push_count; k++)
        zmq_close(d->pushes[k]);
    zmq_close(d->push);
    zmq_close(d->pull);
    pipeline_destroy(&d->p);
    zmq_ctx_term(d->zmq);
    return d->run_result;
}

int test_wait_done(test_daemon *d, uint64_t target, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 5) {
        pipeline_counters c;
        pipeline_get_counters(d->p, &c);
        uint64_t dropped = 0;
        for (int r = 0; r < METRICS_DROP_COUNT_; r++)
            dropped += c.dropped[r];
        if (c.out + dropped >= target)
            return 0;
        test_sleep_ms(5);
    }
    return -1;
}

void test_covariance_header(protocol_header *h, uint64_t seq, uint32_t n, uint32_t matrices, uint8_t element)
{
    protocol_header_init(h, PROTOCOL_KIND_COVARIANCE);
    h->seq = seq;
    h->timestamp_ns = (uint64_t)time(NULL) * 1000000000u;
    h->n = n;
    h->count = matrices;
    h->element = element;
    h->storage = PROTOCOL_STORAGE_FULL;
    h->payload_bytes = (uint64_t)matrices * protocol_matrix_bytes(n, element, PROTOCOL_STORAGE_FULL);
}

int test_send_parts(void *push, const void *const *part, const size_t *bytes, size_t parts)
{
    for (size_t i = 0; i < parts; i++)
        if (zmq_send(push, part[i], bytes[i], i + 1 < parts ? ZMQ_SNDMORE : 0) < 0)
            return -1;
    return 0;
}

/* Copies matrix a (full, both triangles) into dst in the given storage. */
static size_t pack_matrix(const uint8_t *a, uint32_t n, size_t eb, uint8_t storage, uint8_t *dst)
{
    size_t k = 0;
    if (storage == PROTOCOL_STORAGE_FULL) {
        memcpy(dst, a, (size_t)n * n * eb);
        return (size_t)n * n * eb;
    }
    for (uint32_t j = 0; j < n; j++) {
        uint32_t lo = storage == PROTOCOL_STORAGE_PACKED_LOWER ? j : 0;
        uint32_t hi = storage == PROTOCOL_STORAGE_PACKED_LOWER ? n : j + 1;
        for (uint32_t i = lo; i < hi; i++, k++)
            memcpy(dst + k * eb, a + ((size_t)i + (size_t)j * n) * eb, eb);
    }
    return k * eb;
}

int test_send_frame(void *push, const void *a, uint32_t n, uint32_t matrices, uint8_t element,
                    const test_frame_spec *spec)
{
    size_t eb = eig_element_bytes(element);
    size_t one = protocol_matrix_bytes(n, element, spec->storage);
    uint8_t *payload = malloc(one * matrices);
    const void **parts = malloc((matrices + 1) * sizeof *parts);
    size_t *bytes = malloc((matrices + 1) * sizeof *bytes);
    uint8_t header_bytes[PROTOCOL_HEADER_BYTES];
    protocol_header h;
    for (uint32_t b = 0; b < matrices; b++)
        pack_matrix((const uint8_t *)a + (size_t)b * n * n * eb, n, eb, spec->storage, payload + b * one);
    test_covariance_header(&h, spec->seq, n, matrices, element);
    h.storage = spec->storage;
    h.payload_bytes = one * matrices;
    h.snapshots = spec->snapshots;
    if (spec->crc) {
        h.flags |= PROTOCOL_FLAG_CRC;
        h.crc32c = protocol_crc32c(0, payload, one * matrices);
    }
    protocol_header_encode(&h, header_bytes);
    parts[0] = header_bytes;
    bytes[0] = PROTOCOL_HEADER_BYTES;
    size_t count = 1;
    if (spec->per_matrix_parts) {
        for (uint32_t b = 0; b < matrices; b++, count++) {
            parts[count] = payload + b * one;
            bytes[count] = one;
        }
    } else {
        parts[1] = payload;
        bytes[1] = one * matrices;
        count = 2;
    }
    int rc = test_send_parts(push, parts, bytes, count);
    free(payload);
    free(parts);
    free(bytes);
    return rc;
}

static int receive_part(void *s, zmq_msg_t *m, int timeout_ms)
{
    zmq_pollitem_t item = {.socket = s, .events = ZMQ_POLLIN};
    if (zmq_poll(&item, 1, timeout_ms) <= 0)
        return -1;
    return zmq_msg_recv(m, s, 0) < 0 ? -1 : 0;
}

int test_receive_output(void *pull, test_output *o, int timeout_ms)
{
    zmq_msg_t parts[3];
    int got = 0, more = 1, rc = -1;
    memset(o, 0, sizeof *o);
    for (int i = 0; i < 3; i++)
        zmq_msg_init(&parts[i]);
    while (more && got < 3) {
        if (receive_part(pull, &parts[got], got == 0 ? timeout_ms : 1000) != 0)
            goto done;
        more = zmq_msg_more(&parts[got]);
        got++;
    }
    if (more || got != 3) {
        fprintf(stderr, "test: eigenspace frame with %d%s parts\n", got, more ? "+" : "");
        goto done;
    }
    if (protocol_header_decode(zmq_msg_data(&parts[0]), zmq_msg_size(&parts[0]), &o->header) != PROTOCOL_OK ||
        o->header.kind != PROTOCOL_KIND_EIGENSPACE) {
        fprintf(stderr, "test: bad eigenspace header\n");
        goto done;
    }
    o->meta = calloc(o->header.count, sizeof *o->meta);
    if (protocol_meta_decode(zmq_msg_data(&parts[1]), zmq_msg_size(&parts[1]), o->header.count, &o->times,
                             o->meta) != PROTOCOL_OK) {
        fprintf(stderr, "test: bad meta part\n");
        goto done;
    }
    size_t sizes[2] = {zmq_msg_size(&parts[1]), zmq_msg_size(&parts[2])};
    protocol_reject r = protocol_eigenspace_check_sizes(&o->header, o->meta, sizes, 2, 0);
    for (uint32_t b = 0; r == PROTOCOL_OK && b < o->header.count; b++)
        r = protocol_matrix_meta_check(o->header.n, o->header.mode, &o->meta[b]);
    if (r == PROTOCOL_OK && (o->header.flags & PROTOCOL_FLAG_CRC)) {
        uint32_t crc = protocol_crc32c(protocol_crc32c(0, zmq_msg_data(&parts[1]), sizes[0]),
                                       zmq_msg_data(&parts[2]), sizes[1]);
        if (crc != o->header.crc32c)
            r = PROTOCOL_REJECT_CRC;
    }
    if (r != PROTOCOL_OK) {
        fprintf(stderr, "test: eigenspace frame seq %llu fails %s\n", (unsigned long long)o->header.seq,
                protocol_reject_name(r));
        goto done;
    }
    o->data_bytes = sizes[1];
    o->data = malloc(sizes[1] ? sizes[1] : 1);
    memcpy(o->data, zmq_msg_data(&parts[2]), sizes[1]);
    rc = 0;
done:
    for (int i = 0; i < 3; i++)
        zmq_msg_close(&parts[i]);
    return rc;
}

void test_output_free(test_output *o)
{
    free(o->meta);
    free(o->data);
    memset(o, 0, sizeof *o);
}

static double norm1(const double complex *a, int n)
{
    double best = 0.0;
    for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int i = 0; i < n; i++)
            s += cabs(a[i + j * n]);
        if (!(s <= best))
            best = s;
    }
    return best;
}

int test_check_output(const test_output *o, const void *a, uint32_t n, uint32_t matrices, uint8_t element,
                      const char *label)
{
    if (a == NULL) { /* the output names a frame the test never sent */
        FAIL("%s: output seq %llu is not a frame the test sent", label, (unsigned long long)o->header.seq);
        return 1;
    }
    int failures = 0, is_double = element == EIG_COMPLEX_DOUBLE;
    double ulp = is_double ? DBL_EPSILON : FLT_EPSILON;
    size_t eb = eig_element_bytes(element), rb = eb / 2;
    double complex *ad = malloc(sizeof *ad * n * n);
    double complex *zr = malloc(sizeof *zr * n * n);
    double complex *v = malloc(sizeof *v * n * n);
    double *wr = malloc(sizeof *wr * n);
    double *w = malloc(sizeof *w * n);
    double complex *dots = malloc(sizeof *dots * n);
    const uint8_t *data = o->data;

    if (o->header.count != matrices || o->header.n != n || o->header.element != element) {
        fprintf(stderr, "FAIL %s: seq %llu: output n=%u count=%u element=%u\n", label,
                (unsigned long long)o->header.seq, o->header.n, o->header.count, o->header.element);
        failures++;
        goto done;
    }
    for (uint32_t b = 0; b < matrices; b++) {
        const protocol_matrix_meta *m = &o->meta[b];
        /* The input matrix in double, and LAPACK's decomposition of it. */
        for (size_t k = 0; k < (size_t)n * n; k++)
            ad[k] = is_double ? ((const double complex *)a)[b * (size_t)n * n + k]
                              : (double complex)((const float complex *)a)[b * (size_t)n * n + k];
        if (is_double) {
            memcpy(zr, ad, sizeof *zr * n * n);
            LAPACKE_zheevd(LAPACK_COL_MAJOR, 'V', 'L', (lapack_int)n, (lapack_complex_double *)zr, (lapack_int)n, wr);
        } else {
            float complex *zf = malloc(sizeof *zf * n * n);
            float *wf = malloc(sizeof *wf * n);
            for (size_t k = 0; k < (size_t)n * n; k++)
                zf[k] = (float complex)ad[k];
            LAPACKE_cheevd(LAPACK_COL_MAJOR, 'V', 'L', (lapack_int)n, (lapack_complex_float *)zf, (lapack_int)n, wf);
            for (size_t k = 0; k < (size_t)n * n; k++)
                zr[k] = zf[k];
            for (uint32_t i = 0; i < n; i++)
                wr[i] = wf[i];
            free(zf);
            free(wf);
        }
        double anorm = norm1(ad, (int)n);
        double scale = (double)n * ulp * (anorm > DBL_MIN ? anorm : DBL_MIN);
        if (m->status != 0) {
            fprintf(stderr, "FAIL %s: seq %llu matrix %u: status %d\n", label, (unsigned long long)o->header.seq, b,
                    m->status);
            failures++;
        }
        /* Eigenvalues. */
        double worst = 0.0;
        for (uint32_t i = 0; i < n; i++) {
            w[i] = is_double ? ((const double *)data)[i] : (double)((const float *)data)[i];
            double r = fabs(w[i] - wr[i]) / scale;
            if (!(r <= worst))
                worst = r;
        }
        if (!(worst <= 60.0)) {
            fprintf(stderr, "FAIL %s: seq %llu matrix %u (n=%u): eigenvalue ratio %.3g > 60\n", label,
                    (unsigned long long)o->header.seq, b, n, worst);
            failures++;
        }
        data += n * rb;
        /* The vectors sent: residual, orthonormality, subspace. */
        uint32_t k = m->k_sent, first = m->first_index;
        for (uint32_t c = 0; c < k; c++)
            for (uint32_t i = 0; i < n; i++)
                v[i + (size_t)c * n] = is_double ? ((const double complex *)data)[i + (size_t)c * n]
                                                 : (double complex)((const float complex *)data)[i + (size_t)c * n];
        data += (size_t)k * n * eb;
        double res = 0.0, orth = 0.0, sub = 0.0;
        for (uint32_t c = 0; c < k; c++) {
            double lambda = w[first + c], r = 0.0;
            for (uint32_t i = 0; i < n; i++) {
                double complex s = -lambda * v[i + (size_t)c * n];
                for (uint32_t j = 0; j < n; j++)
                    s += ad[i + (size_t)j * n] * v[j + (size_t)c * n];
                r += cabs(s);
            }
            if (!(r / scale <= res))
                res = r / scale;
            for (uint32_t c2 = 0; c2 < k; c2++) {
                double complex dot = 0.0;
                for (uint32_t i = 0; i < n; i++)
                    dot += conj(v[i + (size_t)c * n]) * v[i + (size_t)c2 * n];
                double e = cabs(dot - (c == c2 ? 1.0 : 0.0)) / ((double)n * ulp);
                if (!(e <= orth))
                    orth = e;
            }
            /* Distance of v_c from LAPACK's span of the same eigenvalue indices. */
            for (uint32_t q = first; q < first + k; q++) {
                double complex dot = 0.0;
                for (uint32_t t = 0; t < n; t++)
                    dot += conj(zr[t + (size_t)q * n]) * v[t + (size_t)c * n];
                dots[q] = dot;
            }
            double dist2 = 0.0;
            for (uint32_t i = 0; i < n; i++) {
                double complex s = v[i + (size_t)c * n];
                for (uint32_t q = first; q < first + k; q++)
                    s -= zr[i + (size_t)q * n] * dots[q];
                dist2 += creal(s * conj(s));
            }
            if (!(sqrt(dist2) <= sub))
                sub = sqrt(dist2);
        }
        double sub_tol = is_double ? 1e-8 : 1e-3;
        if (!(res <= 60.0) || !(orth <= 60.0) || !(sub <= sub_tol)) {
            fprintf(stderr,
                    "FAIL %s: seq %llu matrix %u (n=%u, k=%u from %u): residual ratio %.3g, orthogonality ratio "
                    "%.3g, subspace distance %.3g\n",
                    label, (unsigned long long)o->header.seq, b, n, k, first, res, orth, sub);
            failures++;
        }
    }
done:
    free(ad);
    free(zr);
    free(v);
    free(wr);
    free(w);
    free(dots);
    test_check_failures += failures;
    return failures;
}

int test_mdl_reference(const double *w, int n, double snapshots)
{
    /* Direct from the definition with eigenvalues sorted descending. */
    double best = INFINITY;
    int best_k = 0;
    for (int k = 0; k < n; k++) {
        int m = n - k;
        double g = 0.0, a = 0.0;
        for (int i = 0; i < m; i++) {
            double l = w[i] > 1e-300 ? w[i] : 1e-300; /* the m smallest: w ascending */
            g += log(l) / m;
            a += l / m;
        }
        double mdl = -snapshots * m * (g - log(a)) + 0.5 * k * (2.0 * n - k) * log(snapshots);
        if (mdl < best) {
            best = mdl;
            best_k = k;
        }
    }
    return best_k;
}
