/*
 * test_qr_chase_host.cu - the cuda backend's QR phase run on the CPU, against
 * LAPACK, so that CI (which has nvcc but no GPU) checks the algorithm the GPU
 * runs: cuda/eig_cuda_qr.cu's chase is written for the host too.
 *
 * The test drives the chase as qr_kernel does (lane 0's control flow, every
 * lane's group_shift or lane 0's group_shifts_serial, the group ticks lane
 * by lane, the log applied in chunks of n / g_ms ticks by apply_group and
 * single events by eig_cuda_apply_sweep) on real symmetric tridiagonals
 * from LAPACK's zhetrd (radar covariances and LAPACK's test types 1-22,
 * scaled by a power of two as the tridiagonalization kernel does), for
 * group caps of 8, 16 and 32 bulges and both shift solves, in float and
 * double. Oracles: LAPACK dsterf's eigenvalues of the same tridiagonal, and
 * the accumulated rotations Zr as eigenvectors of T (residual
 * |T Zr - Zr D| and orthogonality |Zr^T Zr - I|, LAPACK's ratios, <= 60).
 * It also checks that groups ran (radar, n >= 64) and every matrix converged.
 * Sizes: EIGSTREAM_QR_HOST_SIZES=20,64,128 or the default below.
 */
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "eig_cuda_qr.cu" /* the chase: host-compiled, its anonymous namespace */

extern "C" {
#include <lapacke.h>

#include "test_check.h"
#include "workload.h"
}

namespace {

struct chase_counts {
    int groups, info;
};

/* The chase of one tridiagonal (d, e of order n, e[n-1] unused, d[n] and
 * e[n] spare slots) with its rotations accumulated into z (n x n,
 * column-major, identity on entry): qr_kernel's loop with one consumer row
 * per row of z. */
template <typename R>
chase_counts run_chase(std::vector<R> &d, std::vector<R> &e, std::vector<R> &z, int n,
                       int bulges, bool serial)
{
    typedef typename eig_cuda_complex<R>::type R2;
    chase_counts c = {0, 0};
    chase_state st;
    chase_init(st, n, 20, bulges); /* groups from block order 20 at every n */
    const int log_entries = qr_log_entries(n);
    std::vector<R2> log((size_t)log_entries);
    bulge_state<R> bulge[QR_BULGES_MAX];
    R sigma[QR_BULGES_MAX], shifts[QR_BULGES_MAX], scratch[2 * QR_BULGES_MAX];
    shift_block<R> blk;
    for (;;) {
        int first = 0, dir = 0;
        const int k = chase_advance<true, false>(st, d.data(), e.data(), n, log.data(), first, dir);
        if (k == CHASE_FINISHED)
            break;
        if (k != CHASE_GROUP) {
            for (int row = 0; row < n; ++row)
                eig_cuda_apply_sweep(z.data() + row, n, log.data(), k, first, dir);
            continue;
        }
        ++c.groups;
        if (serial)
            group_shifts_serial(st, d.data(), e.data(), shifts, scratch);
        else
            shift_block_prepare(st, d.data(), e.data(), blk);
        for (int j = 0; j < QR_BULGES_MAX; ++j) {
            sigma[j] = serial ? shifts[j < st.g_ms ? j : 0] : group_shift(st, blk, j);
            bulge_idle(bulge[j]);
        }
        const int end = QR_GROUP_FIRST_TICK + group_ticks(st), chunk = log_entries / st.g_ms;
        for (int t0 = QR_GROUP_FIRST_TICK; t0 < end; t0 += chunk) {
            const int ticks = chunk < end - t0 ? chunk : end - t0;
            for (int t = t0; t < t0 + ticks; ++t)
                for (int j = 0; j < QR_BULGES_MAX; ++j) { /* the warp's lanes, in turn */
                    R2 *slot = log.data() + (t - t0) * st.g_ms + (j % st.g_ms);
                    if (st.g_dir < 0)
                        group_tick_dir<-1, true>(bulge[j], j < st.g_ms, j, t, st, d.data(),
                                                 e.data(), n, sigma[j], slot);
                    else
                        group_tick_dir<1, true>(bulge[j], j < st.g_ms, j, t, st, d.data(),
                                                e.data(), n, sigma[j], slot);
                }
            for (int row = 0; row < n; ++row)
                apply_group(z.data() + row, n, log.data(), t0, ticks, st.g_top, st.g_len, st.g_dir,
                            st.g_ms);
        }
    }
    c.info = st.info;
    return c;
}

/* LAPACK's ratios for T = tridiag(d0, e0) and the chase's result (d, z):
 * eigenvalues against dsterf, residual and orthogonality, all in double. */
template <typename R>
void check_result(const char *what, const std::vector<double> &d0, const std::vector<double> &e0,
                  const std::vector<R> &d, const std::vector<R> &z, int n)
{
    const double ulp = sizeof(R) == sizeof(double) ? DBL_EPSILON : FLT_EPSILON;
    double tnorm = 0;
    for (int i = 0; i < n; ++i)
        tnorm = fmax(tnorm, fabs(d0[i]) + (i > 0 ? fabs(e0[i - 1]) : 0) +
                                (i < n - 1 ? fabs(e0[i]) : 0));
    tnorm = fmax(tnorm, DBL_MIN);
    std::vector<double> wr(d0), er(e0);
    if (LAPACKE_dsterf(n, wr.data(), er.data()) != 0) {
        FAIL("%s: dsterf failed", what);
        return;
    }
    std::vector<double> w(d.begin(), d.begin() + n);
    std::vector<double> ws(w);
    std::sort(ws.begin(), ws.end());
    double eig = 0, res = 0, orth = 0;
    for (int i = 0; i < n; ++i)
        eig = fmax(eig, fabs(ws[i] - wr[i]));
    for (int k = 0; k < n; ++k) { /* column k: T z_k - w_k z_k, and z_j . z_k */
        const R *zk = z.data() + (size_t)k * n;
        double rk = 0;
        for (int i = 0; i < n; ++i) {
            double t = d0[i] * zk[i] - w[k] * zk[i];
            if (i > 0)
                t += e0[i - 1] * zk[i - 1];
            if (i < n - 1)
                t += e0[i] * zk[i + 1];
            rk += fabs(t);
        }
        res = fmax(res, rk);
        for (int j = 0; j < n; ++j) {
            const R *zj = z.data() + (size_t)j * n;
            double dot = 0;
            for (int i = 0; i < n; ++i)
                dot += (double)zj[i] * zk[i];
            orth = fmax(orth, fabs(dot - (j == k)));
        }
    }
    const double r_eig = eig / (n * ulp * tnorm), r_res = res / (n * ulp * tnorm),
                 r_orth = orth / (n * ulp);
    if (!(r_eig <= WORKLOAD_RATIO_THRESHOLD && r_res <= WORKLOAD_RATIO_THRESHOLD &&
          r_orth <= WORKLOAD_RATIO_THRESHOLD))
        FAIL("%s: eigenvalue ratio %.3g, residual %.3g, orthogonality %.3g (limit %g)", what,
             r_eig, r_res, r_orth, WORKLOAD_RATIO_THRESHOLD);
}

/* T of a Hermitian matrix (column-major, both triangles) as the GPU forms
 * it: zhetrd's d and |e| (the phases make the off-diagonal real and
 * non-negative), scaled by 2^-e so that max |t_ij| is in [1, 2). */
void tridiagonal_of(std::vector<std::complex<double>> a, int n, std::vector<double> &d,
                    std::vector<double> &e)
{
    d.assign(n, 0);
    e.assign(n, 0);
    std::vector<std::complex<double>> tau(n > 1 ? n - 1 : 1);
    std::vector<double> eoff(n > 1 ? n - 1 : 1);
    LAPACKE_zhetrd(LAPACK_COL_MAJOR, 'L', n, reinterpret_cast<lapack_complex_double *>(a.data()),
                   n, d.data(), eoff.data(), reinterpret_cast<lapack_complex_double *>(tau.data()));
    double mx = 0;
    for (int i = 0; i < n; ++i) {
        if (i < n - 1)
            e[i] = fabs(eoff[i]);
        mx = fmax(mx, fmax(fabs(d[i]), e[i]));
    }
    if (mx > 0) {
        const int ex = ilogb(mx);
        for (int i = 0; i < n; ++i) {
            d[i] = scalbn(d[i], -ex);
            e[i] = scalbn(e[i], -ex);
        }
    }
}

/* Every group cap and shift solve on one tridiagonal, in precision R. */
template <typename R>
int check_tridiagonal(const char *name, const std::vector<double> &d0,
                      const std::vector<double> &e0, int n)
{
    static const int caps[] = {8, 16, 32};
    int groups = 0;
    for (int cap : caps)
        for (int serial = 0; serial < 2; ++serial) {
            std::vector<R> d(d0.begin(), d0.end()), e(e0.begin(), e0.end());
            d.push_back(QR_SPARE_D); /* d[n], e[n]: the kernels' spare slots for idle bulges */
            e.push_back(QR_SPARE_E);
            std::vector<R> z((size_t)n * n, 0);
            for (int i = 0; i < n; ++i)
                z[(size_t)i * n + i] = 1;
            /* the tridiagonal actually solved: d0, e0 rounded to R */
            std::vector<double> dr(d.begin(), d.begin() + n), er(e.begin(), e.begin() + n);
            const chase_counts c = run_chase<R>(d, e, z, n, cap, serial != 0);
            char what[160];
            snprintf(what, sizeof what, "%s n=%d %s cap %d %s shifts", name, n,
                     sizeof(R) == sizeof(double) ? "double" : "float", cap,
                     serial ? "serial" : "parallel");
            CHECK(c.info == 0, "%s: %d off-diagonals did not converge", what, c.info);
            if (c.info == 0)
                check_result<R>(what, dr, er, d, z, n);
            groups += c.groups;
        }
    return groups;
}

void check_size(int n)
{
    std::vector<std::complex<double>> a((size_t)n * n);
    std::vector<double> d, e;
    char name[64];
    for (int m = 0; m < 3; ++m) { /* radar: groups must run from n = 64 */
        workload_radar_batch(n, 1, EIG_COMPLEX_DOUBLE, 1000 + 17 * m, a.data());
        tridiagonal_of(a, n, d, e);
        snprintf(name, sizeof name, "radar %d", m);
        const int g = check_tridiagonal<double>(name, d, e, n) +
                      check_tridiagonal<float>(name, d, e, n);
        CHECK(n < 64 || g > 0, "%s n=%d: no multishift group ran", name, n);
    }
    for (int type = WORKLOAD_TYPE_MIN; type <= WORKLOAD_TYPE_MAX; ++type) {
        if (workload_generate(type, n, EIG_COMPLEX_DOUBLE, 7 + type, a.data(), nullptr) < 0) {
            FAIL("workload_generate(%d, %d) failed", type, n);
            continue;
        }
        tridiagonal_of(a, n, d, e);
        snprintf(name, sizeof name, "type %d (%s)", type, workload_type_name(type));
        check_tridiagonal<double>(name, d, e, n);
        check_tridiagonal<float>(name, d, e, n);
    }
}

} // namespace

int main()
{
    std::vector<int> sizes = {20, 45, 64, 128};
    if (const char *env = getenv("EIGSTREAM_QR_HOST_SIZES")) {
        sizes.clear();
        for (const char *p = env; *p;) {
            char *end;
            const long v = strtol(p, &end, 10);
            if (end == p || v < 1 || v > 512) {
                fprintf(stderr, "bad EIGSTREAM_QR_HOST_SIZES '%s'\n", env);
                return 1;
            }
            sizes.push_back((int)v);
            p = *end == ',' ? end + 1 : end;
        }
    }
    for (int n : sizes) {
        check_size(n);
        printf("n=%d checked (radar, types 1-22; caps 8, 16, 32; both shift solves; "
               "float, double)\n",
               n);
    }
    return test_check_report("test_qr_chase_host");
}
