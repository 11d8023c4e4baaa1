/*
 * workload_generate.c - the deterministic test matrices of workload.h.
 *
 * Everything is built in double complex, then rounded to the requested
 * precision. Scaling constants follow LAPACK's zdrvst.f, with ulp, safe
 * minimum and overflow of the requested precision:
 *   near overflow:  anorm = sqrt(overflow) * ulp / n
 *   near underflow: anorm = sqrt(safe minimum) * n / ulp
 * Random numbers: splitmix64-seeded xoshiro256**, so a (type, n, seed)
 * triple gives the same bits everywhere.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "workload.h"
#include "workload_rng.h"

#define WORKLOAD_PI 3.14159265358979323846

/* ---- random numbers ------------------------------------------------------ */

static workload_rng workload_rng_seed(uint64_t seed, uint64_t stream_a, uint64_t stream_b)
{
    return workload_rng_from_splitmix64(seed ^ (stream_a * 0xD1342543DE82EF95ull) ^ (stream_b * 0xAF251AF3B0F025B5ull));
}

/* uniform in [0, 1) */
static double workload_uniform(workload_rng *r)
{
    return (double)(workload_rng_next(r) >> 11) * 0x1.0p-53;
}

/* uniform in [-1, 1) */
static double workload_uniform_signed(workload_rng *r)
{
    return 2.0 * workload_uniform(r) - 1.0;
}

/* complex normal, E|x|^2 = 1 (Box-Muller) */
static double complex workload_gauss(workload_rng *r)
{
    double u1 = workload_uniform(r), u2 = workload_uniform(r);
    double radius = sqrt(-log(1.0 - u1));
    double phase = 2.0 * WORKLOAD_PI * u2;
    return radius * cos(phase) + I * (radius * sin(phase));
}

/* uniform in the unit disc */
static double complex workload_disc(workload_rng *r)
{
    double radius = sqrt(workload_uniform(r));
    double phase = 2.0 * WORKLOAD_PI * workload_uniform(r);
    return radius * cos(phase) + I * (radius * sin(phase));
}

/* ---- precision constants ------------------------------------------------- */

typedef struct workload_limits {
    double ulp, safe_min, overflow;
} workload_limits;

static workload_limits workload_limits_of(eig_precision precision)
{
    workload_limits l;
    if (precision == EIG_COMPLEX_FLOAT) {
        l.ulp = FLT_EPSILON;
        l.safe_min = FLT_MIN;
    } else {
        l.ulp = DBL_EPSILON;
        l.safe_min = DBL_MIN;
    }
    l.overflow = 1.0 / l.safe_min;
    return l;
}

static double workload_scale_overflow(int n, const workload_limits *l)
{
    return sqrt(l->overflow) * l->ulp / (double)n;
}

static double workload_scale_underflow(int n, const workload_limits *l)
{
    return sqrt(l->safe_min) * (double)n / l->ulp;
}

/* ---- helpers ------------------------------------------------------------- */

static const char *const workload_names[] = {
    "invalid",           "zero",
    "identity",          "diag_arithmetic",
    "diag_geometric",    "diag_clustered",
    "diag_arith_overflow", "diag_arith_underflow",
    "unitary_arithmetic", "unitary_geometric",
    "unitary_clustered", "unitary_arith_overflow",
    "unitary_arith_underflow", "random_hermitian",
    "random_overflow",   "random_underflow",
    "band",              "band_overflow",
    "band_underflow",    "radar_rank_deficient",
    "radar_sources",     "tridiagonal",
    "diagonal_unsorted"};

const char *workload_type_name(int type)
{
    if (type < WORKLOAD_TYPE_MIN || type > WORKLOAD_TYPE_MAX)
        return workload_names[0];
    return workload_names[type];
}

static int compare_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* LAPACK zlatms modes with cond = 1/ulp: arithmetic 1..ulp (mode 4),
 * geometric 1..ulp (mode 3), clustered 1, ulp, ..., ulp (mode 1); each value
 * given a random sign, all scaled by anorm. */
typedef enum workload_spectrum {
    WORKLOAD_SPECTRUM_ARITHMETIC,
    WORKLOAD_SPECTRUM_GEOMETRIC,
    WORKLOAD_SPECTRUM_CLUSTERED
} workload_spectrum;

static void workload_spectrum_fill(int n, workload_spectrum kind, double ulp, double anorm,
                                   workload_rng *r, double *d)
{
    for (int i = 0; i < n; i++) {
        double t = n > 1 ? (double)i / (double)(n - 1) : 0.0;
        double v;
        if (kind == WORKLOAD_SPECTRUM_ARITHMETIC)
            v = 1.0 - t * (1.0 - ulp);
        else if (kind == WORKLOAD_SPECTRUM_GEOMETRIC)
            v = pow(ulp, t);
        else
            v = i == 0 ? 1.0 : ulp;
        double sign = workload_uniform(r) < 0.5 ? -1.0 : 1.0;
        d[i] = sign * v * anorm;
    }
}

/* Makes a exactly Hermitian from its lower triangle, real diagonal. */
static void workload_hermitian_from_lower(int n, double complex *a)
{
    for (int j = 0; j < n; j++) {
        a[j + (size_t)j * n] = creal(a[j + (size_t)j * n]);
        for (int i = j + 1; i < n; i++)
            a[j + (size_t)i * n] = conj(a[i + (size_t)j * n]);
    }
}

/* a = U diag(d) U^H with U the unitary factor of a complex Gaussian matrix. */
static int workload_unitary_similarity(int n, const double *d, workload_rng *r,
                                       double complex *a)
{
    size_t nn = (size_t)n * n;
    double complex *u = malloc(nn * sizeof(*u));
    double complex *ud = malloc(nn * sizeof(*ud));
    double complex *tau = malloc((size_t)n * sizeof(*tau));
    int rc = -1;
    if (u == NULL || ud == NULL || tau == NULL)
        goto out;
    for (size_t k = 0; k < nn; k++)
        u[k] = workload_gauss(r);
    if (LAPACKE_zgeqrf(LAPACK_COL_MAJOR, n, n, u, n, tau) != 0)
        goto out;
    if (LAPACKE_zungqr(LAPACK_COL_MAJOR, n, n, n, u, n, tau) != 0)
        goto out;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            ud[i + (size_t)j * n] = u[i + (size_t)j * n] * d[j];
    const double complex one = 1.0, zero = 0.0;
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasConjTrans, n, n, n, &one, ud, n, u, n, &zero,
                a, n);
    workload_hermitian_from_lower(n, a);
    rc = 0;
out:
    free(u);
    free(ud);
    free(tau);
    return rc;
}

/* Unitary similarity that zeroes everything below the second subdiagonal
 * (Householder reflectors from the left and right, one column at a time):
 * the spectrum is kept, the result is band Hermitian of bandwidth 2. */
static int workload_reduce_to_band2(int n, double complex *a)
{
    double complex *v = malloc((size_t)n * sizeof(*v));
    double complex *p = malloc((size_t)n * sizeof(*p));
    if (v == NULL || p == NULL) {
        free(v);
        free(p);
        return -1;
    }
    for (int j = 0; j + 3 < n; j++) {
        int r0 = j + 2, m = n - r0;
        double complex *x = a + r0 + (size_t)j * n;
        double norm = 0;
        for (int i = 0; i < m; i++)
            norm = hypot(norm, cabs(x[i]));
        if (norm == 0.0)
            continue;
        double ax0 = cabs(x[0]);
        double complex phase = ax0 > 0 ? x[0] / ax0 : 1.0;
        for (int i = 0; i < m; i++)
            v[i] = x[i];
        v[0] += phase * norm;
        double sigma = 1.0 / (norm * (norm + ax0)); /* H = I - sigma v v^H */
        /* p = sigma A v over the trailing block (full storage, both triangles) */
        for (int i = 0; i < m; i++) {
            double complex s = 0;
            for (int k = 0; k < m; k++)
                s += a[r0 + i + (size_t)(r0 + k) * n] * v[k];
            p[i] = sigma * s;
        }
        double complex vp = 0;
        for (int i = 0; i < m; i++)
            vp += conj(v[i]) * p[i];
        double half = 0.5 * sigma * creal(vp);
        for (int i = 0; i < m; i++)
            p[i] -= half * v[i];
        /* trailing block: A -= v p^H + p v^H */
        for (int k = 0; k < m; k++)
            for (int i = 0; i < m; i++)
                a[r0 + i + (size_t)(r0 + k) * n] -= v[i] * conj(p[k]) + p[i] * conj(v[k]);
        /* column j+1 (inside the band) meets H from the left, row j+1 from the right */
        double complex *y = a + r0 + (size_t)(j + 1) * n;
        double complex vy = 0;
        for (int i = 0; i < m; i++)
            vy += conj(v[i]) * y[i];
        for (int i = 0; i < m; i++) {
            y[i] -= sigma * vy * v[i];
            a[j + 1 + (size_t)(r0 + i) * n] = conj(y[i]);
        }
        /* column j and row j: the reflector maps x to -phase*norm*e1 */
        x[0] = -phase * norm;
        for (int i = 1; i < m; i++)
            x[i] = 0;
        for (int i = 0; i < m; i++)
            a[j + (size_t)(r0 + i) * n] = conj(x[i]);
    }
    free(v);
    free(p);
    workload_hermitian_from_lower(n, a);
    return 0;
}

/* Sample covariance X X^H / K of K snapshots of a uniform linear array
 * (half-wavelength spacing): `sources` plane waves at random angles in
 * [-60, 60] degrees with powers 10-30 dB over unit complex white noise. */
static int workload_radar_covariance(int n, int snapshots, int sources, workload_rng *r,
                                     double complex *a)
{
    double complex *x = malloc((size_t)n * (size_t)snapshots * sizeof(*x));
    if (x == NULL)
        return -1;
    double sin_theta[8], amplitude[8];
    for (int s = 0; s < sources; s++) {
        double theta = (workload_uniform(r) * 120.0 - 60.0) * WORKLOAD_PI / 180.0;
        sin_theta[s] = sin(theta);
        amplitude[s] = pow(10.0, (10.0 + 20.0 * workload_uniform(r)) / 20.0);
    }
    for (int k = 0; k < snapshots; k++) {
        double complex *col = x + (size_t)k * n;
        for (int i = 0; i < n; i++)
            col[i] = workload_gauss(r);
        for (int s = 0; s < sources; s++) {
            double complex g = amplitude[s] * workload_gauss(r);
            for (int i = 0; i < n; i++)
                col[i] += g * cexp(I * WORKLOAD_PI * (double)i * sin_theta[s]);
        }
    }
    cblas_zherk(CblasColMajor, CblasLower, CblasNoTrans, n, snapshots, 1.0 / snapshots, x, n,
                0.0, a, n);
    workload_hermitian_from_lower(n, a);
    free(x);
    return 0;
}

static void workload_store(int n, eig_precision precision, const double complex *src, void *dst)
{
    size_t nn = (size_t)n * n;
    if (precision == EIG_COMPLEX_DOUBLE) {
        memcpy(dst, src, nn * sizeof(double complex));
        return;
    }
    float complex *f = dst;
    for (size_t k = 0; k < nn; k++)
        f[k] = (float)creal(src[k]) + I * (float)cimag(src[k]);
}

/* Rounds a value to the precision (what a stored diagonal holds exactly). */
static double workload_round(eig_precision precision, double v)
{
    return precision == EIG_COMPLEX_FLOAT ? (double)(float)v : v;
}

/* m = diag(d), d first rounded to the precision, so that the exact
 * eigenvalues are the stored ones; m (n x n, column-major) is zero
 * elsewhere already. */
static void workload_diagonal(int n, eig_precision precision, double *d, double complex *m)
{
    for (int i = 0; i < n; i++) {
        d[i] = workload_round(precision, d[i]);
        m[i + (size_t)i * n] = d[i];
    }
}

/* ---- the generator ------------------------------------------------------- */

int workload_generate(int type, int n, eig_precision precision, uint64_t seed, void *a,
                      double *exact_w)
{
    if (type < WORKLOAD_TYPE_MIN || type > WORKLOAD_TYPE_MAX || n < 1 || n > EIG_N_MAX ||
        a == NULL || (precision != EIG_COMPLEX_FLOAT && precision != EIG_COMPLEX_DOUBLE))
        return -1;
    size_t nn = (size_t)n * n;
    double complex *m = calloc(nn, sizeof(*m));
    double *d = malloc((size_t)n * sizeof(*d));
    if (m == NULL || d == NULL) {
        free(m);
        free(d);
        return -1;
    }
    workload_rng r = workload_rng_seed(seed, (uint64_t)type, (uint64_t)n);
    workload_limits l = workload_limits_of(precision);
    int known = 1, rc = 0;
    double anorm = 1.0;
    workload_spectrum spectrum = WORKLOAD_SPECTRUM_ARITHMETIC;

    switch (type) {
    case WORKLOAD_ZERO:
    case WORKLOAD_IDENTITY:
        for (int i = 0; i < n; i++)
            d[i] = type == WORKLOAD_IDENTITY ? 1.0 : 0.0;
        workload_diagonal(n, precision, d, m);
        break;
    case WORKLOAD_DIAG_ARITHMETIC:
    case WORKLOAD_DIAG_GEOMETRIC:
    case WORKLOAD_DIAG_CLUSTERED:
    case WORKLOAD_DIAG_ARITH_OVERFLOW:
    case WORKLOAD_DIAG_ARITH_UNDERFLOW:
        if (type == WORKLOAD_DIAG_GEOMETRIC)
            spectrum = WORKLOAD_SPECTRUM_GEOMETRIC;
        else if (type == WORKLOAD_DIAG_CLUSTERED)
            spectrum = WORKLOAD_SPECTRUM_CLUSTERED;
        if (type == WORKLOAD_DIAG_ARITH_OVERFLOW)
            anorm = workload_scale_overflow(n, &l);
        else if (type == WORKLOAD_DIAG_ARITH_UNDERFLOW)
            anorm = workload_scale_underflow(n, &l);
        workload_spectrum_fill(n, spectrum, l.ulp, anorm, &r, d);
        workload_diagonal(n, precision, d, m);
        break;
    case WORKLOAD_UNITARY_ARITHMETIC:
    case WORKLOAD_UNITARY_GEOMETRIC:
    case WORKLOAD_UNITARY_CLUSTERED:
    case WORKLOAD_UNITARY_ARITH_OVERFLOW:
    case WORKLOAD_UNITARY_ARITH_UNDERFLOW:
    case WORKLOAD_BAND:
    case WORKLOAD_BAND_OVERFLOW:
    case WORKLOAD_BAND_UNDERFLOW:
        if (type == WORKLOAD_UNITARY_GEOMETRIC)
            spectrum = WORKLOAD_SPECTRUM_GEOMETRIC;
        else if (type == WORKLOAD_UNITARY_CLUSTERED)
            spectrum = WORKLOAD_SPECTRUM_CLUSTERED;
        if (type == WORKLOAD_UNITARY_ARITH_OVERFLOW || type == WORKLOAD_BAND_OVERFLOW)
            anorm = workload_scale_overflow(n, &l);
        else if (type == WORKLOAD_UNITARY_ARITH_UNDERFLOW || type == WORKLOAD_BAND_UNDERFLOW)
            anorm = workload_scale_underflow(n, &l);
        workload_spectrum_fill(n, spectrum, l.ulp, anorm, &r, d);
        rc = workload_unitary_similarity(n, d, &r, m);
        if (rc == 0 && type >= WORKLOAD_BAND)
            rc = workload_reduce_to_band2(n, m);
        break;
    case WORKLOAD_RANDOM_HERMITIAN:
    case WORKLOAD_RANDOM_OVERFLOW:
    case WORKLOAD_RANDOM_UNDERFLOW:
        if (type == WORKLOAD_RANDOM_OVERFLOW)
            anorm = workload_scale_overflow(n, &l);
        else if (type == WORKLOAD_RANDOM_UNDERFLOW)
            anorm = workload_scale_underflow(n, &l);
        for (int j = 0; j < n; j++) {
            m[j + (size_t)j * n] = anorm * workload_uniform_signed(&r);
            for (int i = j + 1; i < n; i++)
                m[i + (size_t)j * n] = anorm * workload_disc(&r);
        }
        workload_hermitian_from_lower(n, m);
        known = 0;
        break;
    case WORKLOAD_RADAR_RANK_DEFICIENT:
        rc = workload_radar_covariance(n, n / 2 > 0 ? n / 2 : 1, 3, &r, m);
        known = 0;
        break;
    case WORKLOAD_RADAR_SOURCES:
        rc = workload_radar_covariance(n, 4 * n, 3, &r, m);
        known = 0;
        break;
    case WORKLOAD_TRIDIAGONAL:
        for (int i = 0; i < n; i++) {
            m[i + (size_t)i * n] = workload_uniform_signed(&r);
            /* every fourth off-diagonal exactly zero: the matrix splits */
            if (i + 1 < n && i % 4 != 3)
                m[i + 1 + (size_t)i * n] = workload_disc(&r);
        }
        workload_hermitian_from_lower(n, m);
        known = 0;
        break;
    case WORKLOAD_DIAGONAL_UNSORTED:
        for (int i = 0; i < n; i++)
            d[i] = workload_uniform_signed(&r);
        workload_diagonal(n, precision, d, m);
        break;
    }
    if (rc == 0) {
        workload_store(n, precision, m, a);
        if (known && exact_w != NULL) {
            memcpy(exact_w, d, (size_t)n * sizeof(double));
            qsort(exact_w, (size_t)n, sizeof(double), compare_double);
        }
    }
    free(m);
    free(d);
    if (rc != 0)
        return -1;
    return known;
}

int workload_radar_batch(int n, int batch, eig_precision precision, uint64_t seed, void *a)
{
    if (n < 1 || n > EIG_N_MAX || batch < 1 || a == NULL ||
        (precision != EIG_COMPLEX_FLOAT && precision != EIG_COMPLEX_DOUBLE))
        return -1;
    size_t nn = (size_t)n * n;
    size_t elem = precision == EIG_COMPLEX_DOUBLE ? sizeof(double complex) : sizeof(float complex);
    double complex *m = malloc(nn * sizeof(*m));
    if (m == NULL)
        return -1;
    int rc = 0;
    for (int b = 0; b < batch && rc == 0; b++) {
        workload_rng r = workload_rng_seed(seed, 0x52414441ull, (uint64_t)b);
        rc = workload_radar_covariance(n, 2 * n, 3, &r, m);
        if (rc == 0)
            workload_store(n, precision, m, (char *)a + (size_t)b * nn * elem);
    }
    free(m);
    return rc;
}

int workload_random_batch(int n, int batch, eig_precision precision, uint64_t seed, void *a)
{
    if (n < 1 || n > EIG_N_MAX || batch < 1 || a == NULL ||
        (precision != EIG_COMPLEX_FLOAT && precision != EIG_COMPLEX_DOUBLE))
        return -1;
    size_t elem = precision == EIG_COMPLEX_DOUBLE ? sizeof(double complex) : sizeof(float complex);
    for (int b = 0; b < batch; b++)
        if (workload_generate(WORKLOAD_RANDOM_HERMITIAN, n, precision, seed + (uint64_t)b,
                              (char *)a + (size_t)b * (size_t)n * n * elem, NULL) < 0)
            return -1;
    return 0;
}
