/*
 * receive_team.c - the receive stage's copy of a large frame on several
 * threads (receive_team.h).
 */
#include <stdlib.h>
#include <string.h>

#include "receive_team.h"

/* The CRC and the finite check run over each chunk right after it is
 * copied, while it is still in cache: one pass over the payload, not three. */
#define CHUNK_BYTES (128 * 1024)

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
    while (pos < hi && k < job->count) {
        const receive_part *part = &job->parts[k];
        size_t offset = pos - at, n = part->bytes - offset;
        if (n > hi - pos)
            n = hi - pos;
        if (n > CHUNK_BYTES)
            n = CHUNK_BYTES;
        memcpy(job->dst + pos, part->data + offset, n);
        if (job->crc)
            v.crc = protocol_crc32c(v.crc, job->dst + pos, n);
        pos += n;
        /* A part boundary inside an element is checked with the next chunk. */
        size_t upto = pos - pos % job->element;
        if (job->finite_as != 0 && v.finite == PROTOCOL_OK && upto > checked)
            v.finite = protocol_check_finite(job->dst + checked, upto - checked, job->finite_as);
        if (upto > checked)
            checked = upto;
        if (pos - at == part->bytes) {
            at += part->bytes;
            k++;
        }
    }
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
