/*
 * receive_team.c - the receive stage's copy of a large frame on several
 * threads (receive_team.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h> /* SSE2: part of x86-64 */
#endif

#include "receive_team.h"

/* The CRC and the finite check run over each chunk of the source right
 * after it is read, while it is still in cache: one pass over the payload,
 * not three. */
#define CHUNK_BYTES (128 * 1024)
/* Copies this long or longer store around the cache (below). */
#define STREAM_MIN_BYTES 256

/* dst[0..n) = src[0..n). Large frames (the team's) are stored with
 * non-temporal stores: the frame buffer is read next by the GPU's DMA or,
 * tens of MB later, by the solver, never from this core's cache, so a plain
 * store's read-for-ownership of every destination line (a third of the
 * copy's memory traffic) and the cache lines it evicts are pure cost on a
 * host whose memory every stage shares (README, "The daemon end to end").
 * Visible to other threads after stream_fence. */
static void copy_streaming(uint8_t *dst, const uint8_t *src, size_t n)
{
#if defined(__x86_64__)
    if (n >= STREAM_MIN_BYTES) {
        size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
        memcpy(dst, src, head);
        dst += head;
        src += head;
        n -= head;
        for (; n >= 64; n -= 64, dst += 64, src += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)src), b = _mm_loadu_si128((const __m128i *)(src + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + 32)), d = _mm_loadu_si128((const __m128i *)(src + 48));
            _mm_stream_si128((__m128i *)dst, a);
            _mm_stream_si128((__m128i *)(dst + 16), b);
            _mm_stream_si128((__m128i *)(dst + 32), c);
            _mm_stream_si128((__m128i *)(dst + 48), d);
        }
    }
#endif
    memcpy(dst, src, n);
}

/* Orders the non-temporal stores before whatever publishes the copy. */
static void stream_fence(void)
{
#if defined(__x86_64__)
    _mm_sfence();
#endif
}

typedef struct helper_arg {
    struct receive_team *team;
    int share;
} helper_arg;

struct receive_team {
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    uint64_t generation;     /* one per job; helpers wait for the next */
    int pending;             /* helpers still on the current job */
    int stop;
    const receive_job *job;
    receive_verdict verdict[RECEIVE_TEAM_MAX];
    int threads, started;
    pthread_t helper[RECEIVE_TEAM_MAX - 1];
    helper_arg args[RECEIVE_TEAM_MAX - 1];
};

/* Share k of threads: [*lo, *hi), split at multiples of 64 bytes and of the
 * element (whole elements for the finite check, whole cache lines for the
 * copies); the last share ends at total. */
static void share_bounds(const receive_job *job, int k, int threads, size_t *lo, size_t *hi)
{
    size_t unit = job->element > 0 && 64 % job->element == 0 ? 64 : (job->element > 0 ? job->element : 1);
    *lo = job->total / (size_t)threads * (size_t)k / unit * unit;
    *hi = k + 1 == threads ? job->total : job->total / (size_t)threads * (size_t)(k + 1) / unit * unit;
}

/* Copies and checks payload bytes [lo, hi): the CRC of those bytes alone
 * (from 0), the finite check of the whole elements among them. */
static receive_verdict scan_share(const receive_job *job, size_t lo, size_t hi)
{
    receive_verdict v = {0, PROTOCOL_OK};
    size_t k = 0, at = 0; /* part k starts at payload byte at */
    while (k < job->count && at + job->parts[k].bytes <= lo) {
        at += job->parts[k].bytes;
        k++;
    }
    size_t pos = lo, checked = lo;
    int stream = job->total >= RECEIVE_TEAM_MIN_BYTES;
    while (pos < hi && k < job->count) {
        const receive_part *part = &job->parts[k];
        size_t offset = pos - at, n = part->bytes - offset;
        if (n > hi - pos)
            n = hi - pos;
        if (n > CHUNK_BYTES)
            n = CHUNK_BYTES;
        const uint8_t *src = part->data + offset;
        if (stream)
            copy_streaming(job->dst + pos, src, n);
        else
            memcpy(job->dst + pos, src, n);
        if (job->crc)
            v.crc = protocol_crc32c(v.crc, src, n);
        pos += n;
        /* Whole elements: from the source chunk just read when the chunk
         * starts at one; after an element split by a part boundary, from
         * the frame buffer, with the chunk that completes it. */
        size_t upto = pos - pos % job->element;
        if (job->finite_as != 0 && v.finite == PROTOCOL_OK && upto > checked) {
            const uint8_t *from = checked == pos - n ? src : job->dst + checked;
            v.finite = protocol_check_finite(from, upto - checked, job->finite_as);
        }
        if (upto > checked)
            checked = upto;
        if (pos - at == part->bytes) {
            at += part->bytes;
            k++;
        }
    }
    if (stream)
        stream_fence();
    return v;
}

static void *helper_main(void *arg)
{
    helper_arg *a = arg;
    receive_team *t = a->team;
    uint64_t seen = 0;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (!t->stop && t->generation == seen)
            pthread_cond_wait(&t->start, &t->lock);
        if (t->stop)
            break;
        seen = t->generation;
        const receive_job *job = t->job;
        pthread_mutex_unlock(&t->lock);
        size_t lo, hi;
        share_bounds(job, a->share, t->threads, &lo, &hi);
        receive_verdict v = scan_share(job, lo, hi);
        pthread_mutex_lock(&t->lock);
        t->verdict[a->share] = v;
        if (--t->pending == 0)
            pthread_cond_signal(&t->done);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

receive_team *receive_team_create(int threads)
{
    if (threads < 2 || threads > RECEIVE_TEAM_MAX)
        return NULL;
    receive_team *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->start, NULL);
    pthread_cond_init(&t->done, NULL);
    t->threads = threads;
    for (int i = 0; i < threads - 1; i++) {
        t->args[i] = (helper_arg){t, i + 1};
        if (pthread_create(&t->helper[i], NULL, helper_main, &t->args[i]) != 0) {
            receive_team_destroy(&t);
            return NULL;
        }
        t->started++;
    }
    return t;
}

void receive_team_destroy(receive_team **t)
{
    receive_team *x = *t;
    if (x == NULL)
        return;
    pthread_mutex_lock(&x->lock);
    x->stop = 1;
    pthread_cond_broadcast(&x->start);
    pthread_mutex_unlock(&x->lock);
    for (int i = 0; i < x->started; i++)
        pthread_join(x->helper[i], NULL);
    pthread_cond_destroy(&x->start);
    pthread_cond_destroy(&x->done);
    pthread_mutex_destroy(&x->lock);
    free(x);
    *t = NULL;
}

int receive_team_threads(const receive_team *t)
{
    return t->threads;
}

pthread_t receive_team_helper(const receive_team *t, int i)
{
    return t->helper[i];
}

receive_verdict receive_team_run(receive_team *t, const receive_job *job)
{
    if (t == NULL || job->total < RECEIVE_TEAM_MIN_BYTES)
        return scan_share(job, 0, job->total);
    pthread_mutex_lock(&t->lock);
    t->job = job;
    t->pending = t->threads - 1;
    t->generation++;
    pthread_cond_broadcast(&t->start);
    pthread_mutex_unlock(&t->lock);

    size_t lo, hi;
    share_bounds(job, 0, t->threads, &lo, &hi);
    receive_verdict v = scan_share(job, lo, hi);
    pthread_mutex_lock(&t->lock);
    while (t->pending > 0)
        pthread_cond_wait(&t->done, &t->lock);
    pthread_mutex_unlock(&t->lock);
    /* In payload order: the first failing share's verdict, the CRCs joined. */
    for (int k = 1; k < t->threads; k++) {
        share_bounds(job, k, t->threads, &lo, &hi);
        if (job->crc)
            v.crc = protocol_crc32c_combine(v.crc, t->verdict[k].crc, hi - lo);
        if (v.finite == PROTOCOL_OK)
            v.finite = t->verdict[k].finite;
    }
    return v;
}
