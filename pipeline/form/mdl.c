/*
 * mdl.c - Wax-Kailath MDL estimate of the signal dimension (see mdl.h).
 */
#include "mdl.h"

#include <float.h>
#include <math.h>

static double value_at(const void *w, int is_float, int i)
{
    return is_float ? (double)((const float *)w)[i] : ((const double *)w)[i];
}

/* The noise set for candidate k is the m = n - k smallest eigenvalues, i.e.
 * w[0..m-1] in ascending order, so running sums over m = 1..n visit every
 * candidate once: O(n), no workspace. */
static int estimate(const void *w, int is_float, int n, double snapshots, double eps)
{
    if (n < 1 || !(snapshots >= 1.0))
        return -1;
    for (int i = 0; i < n; i++)
        if (!isfinite(value_at(w, is_float, i)))
            return -1;
    double top = value_at(w, is_float, n - 1);
    if (!(top > 0.0))
        return 0; /* zero or negative semidefinite: nothing stands out */
    double floor_value = (double)n * eps * top;
    double sum = 0.0, log_sum = 0.0, best = INFINITY;
    int best_k = 0;
    for (int m = 1; m <= n; m++) {
        double l = value_at(w, is_float, m - 1);
        if (l < floor_value)
            l = floor_value;
        sum += l;
        log_sum += log(l);
        int k = n - m;
        /* ln(g/a) = mean(ln l) - ln(mean l), <= 0 by AM-GM. */
        double log_ratio = log_sum / m - log(sum / m);
        double value = -snapshots * m * log_ratio + 0.5 * (double)k * (2.0 * n - k) * log(snapshots);
        if (value <= best) { /* on ties the smaller k (visited later) wins */
            best = value;
            best_k = k;
        }
    }
    return best_k;
}

int mdl_estimate(const double *w, int n, double snapshots)
{
    return estimate(w, 0, n, snapshots, DBL_EPSILON);
}

int mdl_estimate_float(const float *w, int n, double snapshots)
{
    return estimate(w, 1, n, snapshots, FLT_EPSILON);
}
