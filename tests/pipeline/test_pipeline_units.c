/*
 * test_pipeline_units.c - unit tests of the pipeline's parts: bounded queue,
 * buffer pool, MDL (known spectra), latency histogram, host forming (against
 * the definitions on full matrices), the IQ forming's parameters from the
 * configuration (against form_iq.h's own validator and counts), the
 * per-thread scheduler account (against the thread's own CPU clock).
 */
#define _GNU_SOURCE /* pthread_setname_np: the name the account is found by */
#include <complex.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "form.h"
#include "form_iq.h"
#include "mdl.h"
#include "metrics.h"
#include "path.h"
#include "pipeline.h"
#include "pool.h"
#include "process_stats.h"
#include "protocol.h"
#include "queue.h"
#include "test_check.h"

static void *consumer(void *arg)
{
    queue *q = arg;
    void *item;
    uintptr_t expect = 1, bad = 0;
    while (queue_pop(q, &item) == QUEUE_OK)
        if ((uintptr_t)item != expect++)
            bad++;
    return (void *)(bad == 0 && expect == 10001 ? (uintptr_t)1 : (uintptr_t)0);
}

static void test_queue(void)
{
    queue q;
    void *item, *evicted;
    CHECK(queue_init(&q, 3) == QUEUE_OK, "init");
    for (uintptr_t i = 1; i <= 3; i++)
        CHECK(queue_push(&q, (void *)i) == QUEUE_OK, "push %zu", (size_t)i);
    CHECK(queue_try_push(&q, (void *)4) == QUEUE_TIMEOUT, "try_push on full");
    CHECK(queue_push_evict_oldest(&q, (void *)4, &evicted) == QUEUE_OK && evicted == (void *)1,
          "evict oldest gives 1, got %p", evicted);
    CHECK(queue_depth(&q) == 3, "depth %zu", queue_depth(&q));
    for (uintptr_t i = 2; i <= 4; i++)
        CHECK(queue_pop(&q, &item) == QUEUE_OK && item == (void *)i, "fifo %zu", (size_t)i);
    CHECK(queue_pop_timed(&q, &item, 10) == QUEUE_TIMEOUT, "timed pop on empty");
    CHECK(queue_try_pop(&q, &item) == QUEUE_TIMEOUT, "try_pop on empty");
    queue_push(&q, (void *)7);
    queue_close(&q);
    CHECK(queue_push(&q, (void *)8) == QUEUE_CLOSED, "push after close");
    CHECK(queue_pop(&q, &item) == QUEUE_OK && item == (void *)7, "drain after close");
    CHECK(queue_pop(&q, &item) == QUEUE_CLOSED, "closed and empty");
    queue_destroy(&q);

    /* Producer/consumer across threads through a 2-slot queue: order kept. */
    CHECK(queue_init(&q, 2) == QUEUE_OK, "init");
    pthread_t t;
    pthread_create(&t, NULL, consumer, &q);
    for (uintptr_t i = 1; i <= 10000; i++)
        queue_push(&q, (void *)i);
    queue_close(&q);
    void *ok;
    pthread_join(t, &ok);
    CHECK(ok == (void *)1, "threaded FIFO order");
    queue_destroy(&q);
}

static void count_release(void *item, void *ctx)
{
    (void)item;
    (*(int *)ctx)++;
}

static void test_pool(void)
{
    pool p;
    int items[3], released = 0;
    void *got[3], *extra;
    CHECK(pool_init(&p, 3) == POOL_OK, "init");
    for (int i = 0; i < 3; i++)
        CHECK(pool_add(&p, &items[i]) == POOL_OK, "add");
    CHECK(pool_add(&p, &released) == POOL_EFULL, "add beyond capacity");
    for (int i = 0; i < 3; i++)
        CHECK(pool_get(&p, &got[i]) == POOL_OK, "get %d", i);
    CHECK(pool_available(&p) == 0, "empty");
    CHECK(pool_get_timed(&p, &extra, 10) == POOL_TIMEOUT, "get on empty times out");
    pool_put(&p, got[1]);
    CHECK(pool_get_timed(&p, &extra, 10) == POOL_OK && extra == got[1], "put then get");
    pool_put(&p, got[0]);
    pool_put(&p, got[2]);
    pool_put(&p, extra);
    CHECK(pool_available(&p) == 3, "all back");
    pool_destroy(&p, count_release, &released);
    CHECK(released == 3, "released %d", released);
}

static void test_mdl(void)
{
    /* d strong eigenvalues over a flat noise floor: MDL gives d. */
    enum { N = 16 };
    double w[N];
    float wf[N];
    for (int d = 0; d <= 5; d++) {
        for (int i = 0; i < N; i++)
            w[i] = 1.0 + 1e-3 * i; /* near-flat noise, ascending */
        for (int s = 0; s < d; s++)
            w[N - d + s] = 100.0 * (s + 1);
        int got = mdl_estimate(w, N, 200.0);
        CHECK(got == d, "MDL on %d strong + flat noise (n=%d, K=200): d=%d", d, N, got);
        for (int i = 0; i < N; i++)
            wf[i] = (float)w[i];
        got = mdl_estimate_float(wf, N, 200.0);
        CHECK(got == d, "float MDL on %d strong + flat noise: d=%d", d, got);
    }
    /* Exactly flat: nothing stands out. Scale does not matter. */
    for (int i = 0; i < N; i++)
        w[i] = 3.0;
    CHECK(mdl_estimate(w, N, 50.0) == 0, "flat spectrum");
    for (int i = 0; i < N; i++)
        w[i] = (i >= N - 2 ? 50.0 : 1.0) * 1e-200;
    CHECK(mdl_estimate(w, N, 100.0) == 2, "tiny scale: d=%d", mdl_estimate(w, N, 100.0));
    /* Rank-deficient (K < n): zeros and rounding negatives are floored. */
    for (int i = 0; i < N; i++)
        w[i] = i < 8 ? -1e-17 * i : 1.0 + i;
    int d = mdl_estimate(w, N, 8.0);
    CHECK(d >= 0 && d < N, "rank-deficient spectrum gives a valid d (%d)", d);
    w[3] = NAN;
    CHECK(mdl_estimate(w, N, 100.0) == -1, "NaN");
    CHECK(mdl_estimate(w, N, 0.0) == -1, "K = 0");
}

static void test_histogram(void)
{
    static metrics_histogram h; /* zero-initialized */
    int last = -1;
    for (uint64_t ns = 1; ns < 1000000000000ull; ns = ns * 3 / 2 + 1) {
        int b = metrics_bucket_index(ns);
        CHECK(b >= last, "bucket index not monotonic at %llu ns", (unsigned long long)ns);
        CHECK(ns < metrics_bucket_upper_ns(b), "%llu ns above its bucket's upper edge", (unsigned long long)ns);
        CHECK(b == 0 || ns >= metrics_bucket_upper_ns(b - 1), "%llu ns below its bucket", (unsigned long long)ns);
        last = b;
    }
    CHECK(metrics_bucket_index(500) == 0 && metrics_bucket_index(1000) == 1, "1 us edge");
    CHECK(metrics_bucket_index(2000) == 1 + METRICS_BUCKETS_PER_OCTAVE, "2 us starts the next octave (%d)",
          metrics_bucket_index(2000));
    /* 1..1000 ms uniformly: quantiles within one bucket (19 %) above. */
    for (int ms = 1; ms <= 1000; ms++)
        metrics_histogram_observe(&h, (uint64_t)ms * 1000000u);
    double p50 = (double)metrics_histogram_quantile_ns(&h, 0.5) / 1e6;
    double p99 = (double)metrics_histogram_quantile_ns(&h, 0.99) / 1e6;
    double p100 = (double)metrics_histogram_quantile_ns(&h, 1.0) / 1e6;
    CHECK(p50 >= 500 && p50 <= 500 * 1.19, "p50 %.1f ms for 500", p50);
    CHECK(p99 >= 990 && p99 <= 1000, "p99 %.1f ms for 990 (clamped to max)", p99);
    CHECK(p100 == 1000.0, "max %.1f", p100);
    CHECK(atomic_load(&h.count) == 1000, "count");
}

/* Random Hermitian full matrix (both triangles). */
static void random_hermitian(double complex *a, int n, unsigned *seed)
{
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            double re = rand_r(seed) / (double)RAND_MAX - 0.5, im = rand_r(seed) / (double)RAND_MAX - 0.5;
            a[i + j * n] = i == j ? re + 2.0 : re + I * im;
            a[j + i * n] = conj(a[i + j * n]);
        }
}

static void test_forming(void)
{
    enum { N = 7, M = 3 };
    double complex full[M * N * N], buf[M * N * N];
    unsigned seed = 42;
    for (int b = 0; b < M; b++)
        random_hermitian(full + b * N * N, N, &seed);

    for (int storage = PROTOCOL_STORAGE_PACKED_LOWER; storage <= PROTOCOL_STORAGE_PACKED_UPPER; storage++) {
        size_t k = 0;
        memset(buf, 0, sizeof buf);
        for (int b = 0; b < M; b++)
            for (int j = 0; j < N; j++)
                for (int i = storage == PROTOCOL_STORAGE_PACKED_LOWER ? j : 0;
                     i < (storage == PROTOCOL_STORAGE_PACKED_LOWER ? N : j + 1); i++)
                    buf[k++] = full[b * N * N + i + j * N];
        form_unpack_in_place(buf, N, M, EIG_COMPLEX_DOUBLE, (uint8_t)storage);
        int bad = 0;
        for (int b = 0; b < M; b++)
            for (int j = 0; j < N; j++)
                for (int i = j; i < N; i++)
                    bad += buf[b * N * N + i + j * N] != full[b * N * N + i + j * N];
        CHECK(bad == 0, "unpack %s (n=%d, %d matrices): %d lower elements wrong",
              protocol_storage_name((uint8_t)storage), N, M, bad);
    }

    /* Forward-backward and loading against the definitions (lower triangle). */
    memcpy(buf, full, sizeof buf);
    form_forward_backward(buf, N, M, EIG_COMPLEX_DOUBLE);
    form_diagonal_loading(buf, N, M, EIG_COMPLEX_DOUBLE, 0.1);
    double worst = 0.0;
    for (int b = 0; b < M; b++) {
        const double complex *r = full + b * N * N;
        double trace = 0.0;
        for (int i = 0; i < N; i++)
            trace += creal(r[i + i * N]);
        for (int j = 0; j < N; j++)
            for (int i = j; i < N; i++) {
                double complex ref = 0.5 * (r[i + j * N] + conj(r[(N - 1 - i) + (N - 1 - j) * N]));
                if (i == j)
                    ref += 0.1 * trace / N;
                double e = cabs(buf[b * N * N + i + j * N] - ref);
                if (!(e <= worst))
                    worst = e;
            }
    }
    CHECK(worst < 1e-14, "forward-backward + loading error %.3g", worst);

    /* Complex float packed lower. */
    float complex ff[N * N], fb[N * N];
    for (int k = 0; k < N * N; k++)
        ff[k] = (float complex)full[k];
    size_t k = 0;
    for (int j = 0; j < N; j++)
        for (int i = j; i < N; i++)
            fb[k++] = ff[i + j * N];
    form_unpack_in_place(fb, N, 1, EIG_COMPLEX_FLOAT, PROTOCOL_STORAGE_PACKED_LOWER);
    int bad = 0;
    for (int j = 0; j < N; j++)
        for (int i = j; i < N; i++)
            bad += fb[i + j * N] != ff[i + j * N];
    CHECK(bad == 0, "float unpack: %d wrong", bad);
}

/* pipeline_create refuses what config_validate refuses, with its message,
 * before it opens a socket or allocates a frame. */
static void test_create_validates(void)
{
    eigstream_config cfg;
    config_defaults(&cfg);
    cfg.metrics.interval_ms = 5;
    pipeline *p = (pipeline *)&cfg; /* any non-NULL value: create must clear it */
    char err[CONFIG_ERROR_MAX];
    CHECK(pipeline_create(&p, &cfg, err, sizeof err) == PIPELINE_EINVAL && p == NULL,
          "interval_ms = 5 accepted");
    CHECK(strcmp(err, "metrics.interval_ms: 5 is out of range 10..3600000") == 0, "message \"%s\"", err);
    config_defaults(&cfg);
    cfg.solver.backend = EIG_BACKEND_CUDA;
    cfg.solver.n = 513;
    CHECK(pipeline_create(&p, &cfg, err, sizeof err) == PIPELINE_EINVAL && p == NULL,
          "cuda with n = 513 accepted");
    CHECK(strncmp(err, "solver.n: 513 is too large: backend cuda", 40) == 0, "message \"%s\"", err);
}

/* Every valid IQ configuration gives forming parameters that form_iq's own
 * validator accepts, with the matrices and K the configuration's rules
 * assumed (config_form_*), and the fields copied over. */
static void test_iq_params_from_config(void)
{
    static const struct {
        int n, matrices, pulses, gates, fft, first, bins, segments, guards, loading;
        form_window window;
    } cases[] = {
        {128, 180, 180, 256, 0, 0, 0, 1, 0, 0, FORM_WINDOW_HANN},       /* the defaults with input iq */
        {8, 32, 16, 128, 0, 0, 0, 2, 0, 0, FORM_WINDOW_HANN},           /* the demo_iq ctest */
        {4, 16, 8, 16, 0, 6, 8, 2, 1, 1, FORM_WINDOW_HAMMING},          /* bins wrap, guards, K = 5 >= n */
        {64, 360, 64, 512, 128, 100, 90, 4, 2, 1, FORM_WINDOW_TAYLOR},  /* the config test's full file */
        {16, 20, 10, 300, 40, 35, 10, 2, 3, 1, FORM_WINDOW_CHEBYSHEV},  /* K = 143 */
        {32, 12, 12, 24, 0, 0, 12, 1, 0, 1, FORM_WINDOW_NONE},          /* K = 24 < n, loading on */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        eigstream_config cfg;
        config_defaults(&cfg);
        cfg.form.input = CONFIG_FORM_INPUT_IQ;
        cfg.solver.n = cases[i].n;
        cfg.solver.matrices = cases[i].matrices;
        cfg.form.pulses = cases[i].pulses;
        cfg.form.range_gates = cases[i].gates;
        cfg.form.fft_size = cases[i].fft;
        cfg.form.doppler_first = cases[i].first;
        cfg.form.doppler_bins = cases[i].bins;
        cfg.form.range_segments = cases[i].segments;
        cfg.form.guard_gates = cases[i].guards;
        cfg.form.diagonal_loading = cases[i].loading;
        cfg.form.window = cases[i].window;
        char err[CONFIG_ERROR_MAX];
        CHECK(config_validate(&cfg, err, sizeof err) == CONFIG_OK, "case %zu: config: %s", i, err);
        path_params params;
        path_params_from_config(&params, &cfg, 1);
        const form_iq_params *q = &params.iq;
        CHECK(params.iq_input == 1 && form_iq_params_check(q, err, sizeof err) == FORM_IQ_OK, "case %zu: form_iq: %s",
              i, err);
        CHECK(form_iq_matrices(q) == (uint32_t)cfg.solver.matrices && form_iq_snapshots(q) == config_form_snapshots(&cfg),
              "case %zu: form_iq matrices %u K %u, config matrices %d K %u", i, form_iq_matrices(q),
              form_iq_snapshots(q), cfg.solver.matrices, config_form_snapshots(&cfg));
        CHECK(q->channels == (uint32_t)cfg.solver.n && q->pulses == (uint32_t)cfg.form.pulses &&
                  q->gates == (uint32_t)cfg.form.range_gates && q->format == cfg.form.iq_format &&
                  q->layout == cfg.form.iq_layout && q->precision == cfg.solver.precision &&
                  q->window == cfg.form.window && q->bin_first == (uint32_t)cfg.form.doppler_first &&
                  q->fft_size == (cases[i].fft ? (uint32_t)cases[i].fft : (uint32_t)cases[i].pulses) &&
                  q->wisdom_file == cfg.form.fft_wisdom_file,
              "case %zu: fields", i);
    }
}

/* A thread named "eigs-unit-burn" that spins until its own CPU clock has
 * run BURN_NS, then waits to be read. */
#define BURN_NS 60000000ull
typedef struct burner {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int burnt, done;
    uint64_t cpu_ns; /* CLOCK_THREAD_CPUTIME_ID when it stopped spinning */
} burner;

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *burn_main(void *arg)
{
    burner *b = arg;
    volatile uint64_t sink = 0;
    while (thread_cpu_ns() < BURN_NS)
        sink += 1;
    pthread_mutex_lock(&b->lock);
    b->cpu_ns = thread_cpu_ns();
    b->burnt = 1;
    pthread_cond_broadcast(&b->cond);
    while (!b->done)
        pthread_cond_wait(&b->cond, &b->lock);
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* process_threads_read finds the named thread, and its time on a core agrees
 * with the thread's own CPU clock (both the kernel's accounting, read two
 * ways): at least the 60 ms it spun, within 20 % of the clock. */
static void test_threads_read(void)
{
    burner b = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, burn_main, &b) == 0, "pthread_create");
    pthread_setname_np(t, "eigs-unit-burn");
    pthread_mutex_lock(&b.lock);
    while (!b.burnt)
        pthread_cond_wait(&b.cond, &b.lock);
    pthread_mutex_unlock(&b.lock);
    process_thread threads[64];
    int n = process_threads_read(threads, 64), found = -1;
    CHECK(n >= 2, "process_threads_read: %d threads, want the main one and the burner", n);
    for (int i = 0; i < n; i++)
        found = strcmp(threads[i].name, "eigs-unit-burn") == 0 ? i : found;
    CHECK(found >= 0, "the burner thread is not among the %d read", n);
    if (found >= 0) {
        double run = (double)threads[found].run_ns, clock = (double)b.cpu_ns;
        CHECK(run >= (double)BURN_NS * 0.99 && fabs(run - clock) <= 0.2 * clock,
              "burner: %.1f ms on a core by schedstat, %.1f ms by its CPU clock", run * 1e-6, clock * 1e-6);
    }
    pthread_mutex_lock(&b.lock);
    b.done = 1;
    pthread_cond_broadcast(&b.cond);
    pthread_mutex_unlock(&b.lock);
    pthread_join(t, NULL);
}

int main(void)
{
    test_threads_read();
    test_queue();
    test_pool();
    test_mdl();
    test_histogram();
    test_forming();
    test_create_validates();
    test_iq_params_from_config();
    return test_check_report("test_pipeline_units");
}
