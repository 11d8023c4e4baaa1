/*
 * metrics_check.h - the self-check's metrics (docs/daemon.md, "Results that
 * check themselves"): how many matrices were checked and how many failed,
 * the two LAPACK ratios as histograms over fixed edges around the
 * threshold 60, and what each check cost. Lock-free, any thread (the
 * publish stage observes; the metrics thread formats).
 */
#ifndef EIGSTREAM_METRICS_CHECK_H
#define EIGSTREAM_METRICS_CHECK_H

#include <stdatomic.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Upper bucket edges of the ratio histograms; one more bucket holds the
 * rest (+Inf, NaN included). 60 is LAPACK's threshold. */
#define METRICS_CHECK_EDGES 10
extern const double metrics_check_edges[METRICS_CHECK_EDGES];

typedef struct metrics_ratio_histogram {
    _Atomic uint64_t bucket[METRICS_CHECK_EDGES + 1];
    _Atomic uint64_t sum_micro; /* sum of the finite ratios x 1e6, saturating */
    _Atomic uint64_t max_bits;  /* the largest ratio as the bits of a double (+Inf for a NaN) */
} metrics_ratio_histogram;

typedef struct metrics_check {
    _Atomic uint64_t checked;  /* matrices checked (one a frame at most) */
    _Atomic uint64_t failed;   /* ... whose ratio was above the threshold, or NaN */
    metrics_ratio_histogram residual, orthogonality;
    _Atomic uint64_t cost_ns;  /* the checks' total cost */
    _Atomic uint64_t cost_max_ns;
} metrics_check;

/* One check: both ratios (orthogonality only when has_vectors: the values
 * mode has none), its cost, whether the caller judged it failed. */
void metrics_check_observe(metrics_check *c, double residual, double orthogonality, int has_vectors, uint64_t ns,
                           int failed);
/* The largest ratio observed so far (0 before any). */
double metrics_ratio_max(const metrics_ratio_histogram *h);

#ifdef __cplusplus
}
#endif

#endif
