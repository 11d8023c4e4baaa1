/*
 * metrics_check.c - the self-check's counters and ratio histograms
 * (metrics_check.h).
 */
#include "metrics_check.h"

#include <math.h>
#include <string.h>

#define RELAXED memory_order_relaxed

const double metrics_check_edges[METRICS_CHECK_EDGES] = {0.1, 0.3, 1, 3, 10, 30, 60, 100, 1e3, 1e6};

static uint64_t double_bits(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static void ratio_observe(metrics_ratio_histogram *h, double ratio)
{
    int b = 0;
    while (b < METRICS_CHECK_EDGES && !(ratio <= metrics_check_edges[b]))
        b++; /* a NaN passes every edge: the last bucket */
    atomic_fetch_add_explicit(&h->bucket[b], 1, RELAXED);
    if (isfinite(ratio) && ratio >= 0) {
        double micro = ratio * 1e6;
        uint64_t add = micro < 1e18 ? (uint64_t)micro : UINT64_C(1000000000000000000);
        uint64_t sum = atomic_load_explicit(&h->sum_micro, RELAXED), next;
        do
            next = sum + add < sum ? UINT64_MAX : sum + add;
        while (!atomic_compare_exchange_weak_explicit(&h->sum_micro, &sum, next, RELAXED, RELAXED));
    }
    /* Non-negative doubles order like their bits; a NaN counts as +Inf. */
    uint64_t bits = double_bits(isnan(ratio) ? INFINITY : (ratio > 0 ? ratio : 0.0));
    uint64_t max = atomic_load_explicit(&h->max_bits, RELAXED);
    while (bits > max && !atomic_compare_exchange_weak_explicit(&h->max_bits, &max, bits, RELAXED, RELAXED))
        ;
}

void metrics_check_observe(metrics_check *c, double residual, double orthogonality, int has_vectors, uint64_t ns,
                           int failed)
{
    ratio_observe(&c->residual, residual);
    if (has_vectors)
        ratio_observe(&c->orthogonality, orthogonality);
    atomic_fetch_add_explicit(&c->cost_ns, ns, RELAXED);
    uint64_t max = atomic_load_explicit(&c->cost_max_ns, RELAXED);
    while (ns > max && !atomic_compare_exchange_weak_explicit(&c->cost_max_ns, &max, ns, RELAXED, RELAXED))
        ;
    if (failed)
        atomic_fetch_add_explicit(&c->failed, 1, RELAXED);
    atomic_fetch_add_explicit(&c->checked, 1, memory_order_release);
}

double metrics_ratio_max(const metrics_ratio_histogram *h)
{
    uint64_t bits = atomic_load_explicit(&h->max_bits, RELAXED);
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}
