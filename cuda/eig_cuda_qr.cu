/*
 * eig_cuda_qr.cu - implicit QL/QR with Wilkinson shift on the real symmetric
 * tridiagonal (LAPACK dsteqr's algorithm: split test, QL or QR by which end
 * is larger, 2x2 blocks closed directly, at most 30 sweeps per eigenvalue),
 * eigenvalue sort, and accumulation of the rotations into the real n x n
 * eigenvector matrix Zr of the tridiagonal.
 *
 * Grid (matrices, row_chunks); CTA = 32 * (1 + consumer_warps) threads.
 * The bulge chase is a chain of dependent rotations: lane 0 of warp 0 runs it
 * on d, e in shared memory and logs each event's rotations (c, s) into
 * one of two shared buffers; meanwhile the consumer warps apply the previous
 * buffer to their 32 * consumer_warps rows of Zr (one row per thread, Zr
 * slice in shared memory, column-major over the slice: conflict-free). One
 * __syncthreads per event. Each of the row_chunks CTAs of a matrix re-runs
 * the same chase bit for bit, so no CTA waits on another and the slices of Zr
 * stay small (32 rows: n*32*R bytes).
 * Values-only: consumer_warps = 0, row_chunks = 1, one warp per matrix.
 *
 * Logged path (the plan's choice for vectors above n = 64): qr_log_kernel
 * runs the same chase once per matrix (one warp) and writes its rotations
 * to a global log, which the matrix's appliers (eig_cuda_qr_apply.cuh, one
 * warp per 32- or 64-row slice of Zr, in the same launch) apply as it
 * grows; a matrix whose log would overflow is redone by qr_kernel
 * (overflowed_only).
 *
 * Shared memory: 2 buffers * n * 2R (logged c, s) + 2(n+1) R (d, e) + the Zr
 * slice 32 * consumer_warps * n R + n int (rank). Each event's log is one
 * sweep (consecutive pivots, first and direction in __shared__ ints) or one
 * 2x2 rotation; consecutive rotations let the consumers carry a column in a
 * register.
 */
#include "eig_cuda_internal.cuh"
#include "eig_cuda_qr_apply.cuh"

/* The chase is plain scalar code: it also compiles for the host, where a
 * harness can run it against LAPACK without a GPU. */
#define QR_CHASE_FN __host__ __device__ __forceinline__
/* #pragma unroll for the device pass only (the host compiler knows no such pragma) */
#ifdef __CUDA_ARCH__
#define QR_UNROLL _Pragma("unroll")
#else
#define QR_UNROLL
#endif

namespace {

enum { CHASE_TOP = 0, CHASE_QL, CHASE_QR, CHASE_END };

/* A multishift group chases up to QR_BULGES_MAX bulges at once, one per
 * lane of the chasing warp; a block of order k gets the largest of 32, 16, 8
 * bulges (at most the plan's cap) with k >= 2 * bulges + 4, and blocks
 * below QR_GROUP_MIN (the default; the plan may raise it) single-shift
 * sweeps. Consecutive bulges start QR_BULGE_LAG ticks apart. */
enum {
    QR_BULGES_MAX = 32,
    QR_BULGES_MIN = 8,
    QR_BULGE_LAG = 3,
    QR_GROUP_MIN = 2 * QR_BULGES_MIN + 4
};
/* after this many groups in a row without progress, one single-shift sweep
 * (Wilkinson) */
enum { QR_GROUP_STALLS = 3 };
/* Quadrisection steps of a group's shift solve (group_shift): 2 bits each.
 * Double stops at 2^-44 of Gershgorin's interval: on the host harness
 * (radar n = 64/128/256) that costs 0-1.7% more group ticks than 2^-52 for
 * 15% less solve, and on an H100 values-only c128 n = 128 qr took 1.109
 * against 1.187 ms (run M3); below 2^-26 (float's 13) ticks rise 17%. */
enum { QR_SHIFT_STEPS_DOUBLE = 22, QR_SHIFT_STEPS_FLOAT = 13 };
/* values of the spare slots d[n], e[n] that idle bulges read (bulge_idle) */
enum { QR_SPARE_D = 0, QR_SPARE_E = 1 };

/* chase_advance's return codes besides a rotation count */
enum { CHASE_FINISHED = -1, CHASE_GROUP = -2 };

struct chase_state {
    int l1, l, lend, mode, jtot, nmaxit, done, info;
    /* the group started by the last CHASE_GROUP: sweeps start at position
     * top (QL: pivots top-1 down to bottom; QR: top up to bottom-1), each of
     * its bulges makes len rotations, dir = -1 (QL) or +1 (QR) */
    int g_top, g_bottom, g_len, g_dir;
    int after_group; /* the last event was a group: the next scan judges its progress */
    int stalled;     /* groups in a row that neither deflated nor split their block */
    int group_min;   /* smallest block order that gets a group (QR_GROUP_MIN by default) */
    int bulges_max;  /* the plan's cap on bulges per group (QR_BULGES_MIN..QR_BULGES_MAX) */
    /* the current group: g_ms bulges, shifts from the g_ms x g_ms block at
     * d[g_b0..], e[g_b0..] */
    int g_ms, g_b0;
};

/* One bulge of a multishift group, in the registers of its lane. */
template <typename R> struct bulge_state {
    R g, p, c, s, dip1, di, ei;
    int r_slot;
};

/* name<R>(x), R float or double: the hardware approximation on the device,
 * PTX "op.approx.ftz.f32/.f64" (MUFU), host_f32 / host_f64 on the host. The
 * device flushes subnormal inputs to zero. */
#ifdef __CUDA_ARCH__
#define QR_MUFU_BODY(ptx, reg, T, x, host) \
    T y;                                   \
    asm(ptx " %0, %1;" : "=" reg(y) : reg(x)); \
    return y;
#else
#define QR_MUFU_BODY(ptx, reg, T, x, host) return host;
#endif
#define QR_MUFU_APPROX(name, op, host_f64, host_f32)                                               \
    template <typename R> QR_CHASE_FN R name(R x);                                                 \
    template <> QR_CHASE_FN double name<double>(double x)                                          \
    {                                                                                              \
        QR_MUFU_BODY(op ".approx.ftz.f64", "d", double, x, host_f64)                               \
    }                                                                                              \
    template <> QR_CHASE_FN float name<float>(float x)                                             \
    {                                                                                              \
        QR_MUFU_BODY(op ".approx.ftz.f32", "f", float, x, host_f32)                                \
    }

/* Reciprocal square root (FP64: MUFU.RSQ64H on the high word, relative error
 * about 2^-22 in both precisions). rot_make never passes a subnormal (its
 * fast path needs t in [lo, hi]). */
QR_MUFU_APPROX(rsqrt_approx, "rsqrt", 1 / sqrt(x), 1 / sqrtf(x))
/* Reciprocal (relative error about 2^-23 in both precisions; exact on the host). */
QR_MUFU_APPROX(rcp_approx, "rcp", 1 / x, 1 / x)

/* Rare path of rot_make: t = f*f + g*g out of [lo, hi] (both zero, or a
 * square under/overflows). Rescales by a power of two first; f = g = 0 gives
 * the identity rotation. */
template <typename R> struct rotation {
    R c, s, r;
};
template <typename R> QR_CHASE_FN rotation<R> rot_make_scaled(R f, R g)
{
    rotation<R> q;
    const R mx = fmax(fabs(f), fabs(g));
    if (mx == 0) {
        q.c = 1;
        q.s = 0;
        q.r = 0;
        return q;
    }
    const int ex = ilogb(mx);
    const R fs = scalbn(f, -ex), gs = scalbn(g, -ex);
    const R ts = fma(fs, fs, gs * gs);
    const R ri = (R)1 / sqrt(ts);
    q.c = fs * ri;
    q.s = gs * ri;
    q.r = scalbn(ts * ri, ex);
    return q;
}

/* Plane rotation with c*f + s*g = r, -s*f + c*g = 0, r = +sqrt(f*f + g*g)
 * (any sign of r is a valid rotation for the QL/QR recurrences; the positive
 * one needs no copysign on the chain). This is the critical path of the
 * chase, so the common case is straight-line code: t, one MUFU rsqrt y, then
 * one third-order correction of y folded into the products:
 *   e = 1 - t y^2,  1/sqrt(t) = y (1 + e/2 + 3e^2/8 + O(e^3)),
 * so with |e| ~ 2^-22 the correction error is ~2^-66 and c, s, r are within
 * about 1 ulp (c*c + s*s = 1 within a few ulp: the rotations stay orthogonal
 * to working precision). Four dependent FP operations after the MUFU. `f`
 * is the argument that arrives last on the chain (the chase's g).
 * rot_fast is that common case for a given t = f*f + g*g; rot_make adds the
 * rare rescaled path (t out of [lo, hi]), rot_make_warp (group ticks) puts
 * it behind a warp vote. */
template <typename R> QR_CHASE_FN void rot_fast(R f, R g, R t, R &c, R &s, R &r)
{
    const R y = rsqrt_approx(t);
    const R fy = f * y, gy = g * y, ty = t * y;
    const R e = fma(-ty, y, (R)1);
    const R e2 = fma(e, (R)0.375, (R)0.5);
    c = fma(fy * e, e2, fy);
    s = fma(gy * e, e2, gy);
    r = fma(ty * e, e2, ty);
}

template <typename R> QR_CHASE_FN void rot_make(R f, R g, R &c, R &s, R &r)
{
    typedef eig_cuda_limits<R> lim;
    const R t = fma(f, f, g * g);
    rot_fast(f, g, t, c, s, r);
    const R lo = lim::rot_tiny() * lim::rot_tiny(), hi = lim::rot_huge() * lim::rot_huge();
    if (__builtin_expect(!(t >= lo && t <= hi), 0)) {
        const rotation<R> q = rot_make_scaled(f, g);
        c = q.c;
        s = q.s;
        r = q.r;
    }
}

template <typename R2> QR_CHASE_FN R2 rot_pair(decltype(R2::x) c, decltype(R2::x) s)
{
    R2 v;
    v.x = c;
    v.y = s;
    return v;
}

/* Eigen-decomposition of [[a b][b c]]: rt1 (larger |.|), rt2 and (cs, sn),
 * the unit eigenvector of rt1, as LAPACK's dlaev2 defines them. */
template <typename R>
QR_CHASE_FN void sym2x2_eig(R a, R b, R c, R &rt1, R &rt2, R &cs1, R &sn1)
{
    const R sm = a + c, df = a - c, adf = fabs(df), tb = b + b, ab = fabs(tb);
    R acmx, acmn;
    if (fabs(a) > fabs(c)) {
        acmx = a;
        acmn = c;
    } else {
        acmx = c;
        acmn = a;
    }
    R rt;
    if (adf > ab)
        rt = adf * sqrt(1 + (ab / adf) * (ab / adf));
    else if (adf < ab)
        rt = ab * sqrt(1 + (adf / ab) * (adf / ab));
    else
        rt = ab * sqrt((R)2);
    int sgn1;
    if (sm < 0) {
        rt1 = (R)0.5 * (sm - rt);
        sgn1 = -1;
        rt2 = (acmx / rt1) * acmn - (b / rt1) * b;
    } else if (sm > 0) {
        rt1 = (R)0.5 * (sm + rt);
        sgn1 = 1;
        rt2 = (acmx / rt1) * acmn - (b / rt1) * b;
    } else {
        rt1 = (R)0.5 * rt;
        rt2 = (R)-0.5 * rt;
        sgn1 = 1;
    }
    int sgn2;
    R cs;
    if (df >= 0) {
        cs = df + rt;
        sgn2 = 1;
    } else {
        cs = df - rt;
        sgn2 = -1;
    }
    if (fabs(cs) > ab) {
        const R ct = -tb / cs;
        sn1 = 1 / sqrt(1 + ct * ct);
        cs1 = ct * sn1;
    } else if (ab == 0) {
        cs1 = 1;
        sn1 = 0;
    } else {
        const R tn = -cs / tb;
        cs1 = 1 / sqrt(1 + tn * tn);
        sn1 = tn * cs1;
    }
    if (sgn1 == sgn2) {
        const R tn = cs1;
        cs1 = -sn1;
        sn1 = tn;
    }
}

template <bool LOG, bool SHIFT_SOLVE, typename R>
QR_CHASE_FN int chase_advance(chase_state &st, R *d, R *e, int n,
                              typename eig_cuda_complex<R>::type *cs, int &first, int &dir);

QR_CHASE_FN void chase_init(chase_state &st, int n, int group_min, int bulges_max)
{
    st.l1 = 0;
    st.l = st.lend = 0;
    st.mode = CHASE_TOP;
    st.jtot = 0;
    st.nmaxit = n * EIG_QR_MAX_SWEEPS;
    st.done = 0;
    st.info = 0;
    st.g_top = st.g_bottom = st.g_len = st.g_dir = 0;
    st.after_group = 0;
    st.stalled = 0;
    st.group_min = group_min > 0 ? group_min : QR_GROUP_MIN;
    st.bulges_max = bulges_max;
    st.g_ms = st.g_b0 = 0;
}

/* Bulges of a group on a block of the given order: the largest of
 * bulges_max, bulges_max / 2, ..., QR_BULGES_MIN with order >= 2 * bulges + 4
 * (0: none fits, single shift). */
QR_CHASE_FN int group_bulges(int order, int bulges_max)
{
    int ms = bulges_max;
    while (ms > QR_BULGES_MIN && order < 2 * ms + 4)
        ms /= 2;
    return order >= 2 * ms + 4 ? ms : 0;
}

/* Starts a multishift group on the unreduced block from l (the end where
 * eigenvalues deflate) to m, when it is long enough and the sweep budget
 * allows its sweeps: g_ms bulges whose shifts are the eigenvalues of the
 * g_ms x g_ms block at l's end (d[g_b0..], e[g_b0..]), which the lanes
 * compute next (group_shift). The group counts as g_ms sweeps. Returns false
 * (nothing changed but the stall count) when a single-shift sweep should be
 * done instead. */
QR_CHASE_FN bool group_start(chase_state &st, int l, int m)
{
    const int dir = m < l ? 1 : -1;
    const int len = dir < 0 ? m - l : l - m; /* rotations per bulge; block order len + 1 */
    const int ms = group_bulges(len + 1, st.bulges_max);
    if (len + 1 < st.group_min || ms == 0 || st.jtot + ms > st.nmaxit)
        return false;
    if (st.stalled >= QR_GROUP_STALLS) {
        st.stalled = 0;
        return false;
    }
    st.jtot += ms;
    st.g_ms = ms;
    st.g_b0 = dir < 0 ? l : l - ms + 1;
    st.g_top = m;
    st.g_bottom = l;
    st.g_len = len;
    st.g_dir = dir;
    st.after_group = 1;
    return true;
}

/* The current group's trailing block, prepared once by one lane for every
 * lane's shift solve: d, e^2 (kept >= pivmin, LAPACK dlaebz's bound, so that
 * a zero pivot needs no test on the recurrences' chains) and Gershgorin's
 * interval. Before run M3 every lane recomputed e^2 and its guard inside
 * each quadrisection step (34% of the c128 values-only QR phase was the
 * shift solve, by ncu's samples). */
template <typename R> struct shift_block {
    R d[QR_BULGES_MAX], e2[QR_BULGES_MAX];
    R lo, hi;
};

template <typename R>
QR_CHASE_FN void shift_block_prepare(const chase_state &st, const R *d, const R *e,
                                     shift_block<R> &blk)
{
    typedef eig_cuda_limits<R> lim;
    const int ms = st.g_ms;
    const R *db = d + st.g_b0, *eb = e + st.g_b0;
    R lo = db[0], hi = db[0], emax = 0;
    for (int i = 0; i < ms; ++i) {
        const R el = i > 0 ? fabs(eb[i - 1]) : (R)0, er = i < ms - 1 ? fabs(eb[i]) : (R)0;
        lo = fmin(lo, db[i] - (el + er));
        hi = fmax(hi, db[i] + (el + er));
        emax = fmax(emax, er);
    }
    const R pivmin = lim::safmin() * fmax((R)1, emax * emax);
    for (int i = 0; i < ms; ++i) {
        blk.d[i] = db[i];
        blk.e2[i] = i > 0 ? fmax(eb[i - 1] * eb[i - 1], pivmin) : (R)0;
    }
    blk.lo = lo;
    blk.hi = hi;
}

/* The (k+1)-th smallest eigenvalue of the ms x ms block, as group_shift
 * (below) describes. MS > 0: ms == MS, and the block is loaded into
 * registers once (unrolled: no load latency on the recurrences' chains; the
 * clock64 profile of run M2 found the solve at 12.7 k cycles per 16-bulge
 * group in c64 when it read shared memory); MS = 0: any ms, read from blk. */
template <int MS, typename R>
QR_CHASE_FN R block_eigenvalue(const shift_block<R> &blk, int ms, int k)
{
    enum { REG = MS > 0 ? MS : 1 };
    R dr[REG], e2r[REG];
QR_UNROLL
    for (int i = 0; i < (MS > 0 ? MS : 1); ++i) {
        dr[i] = blk.d[i];
        e2r[i] = blk.e2[i];
    }
    R lo = blk.lo, hi = blk.hi;
    const R d0 = blk.d[0];
    const int steps = sizeof(R) == sizeof(double) ? QR_SHIFT_STEPS_DOUBLE : QR_SHIFT_STEPS_FLOAT;
    for (int step = 0; step < steps; ++step) {
        const R w4 = (R)0.25 * (hi - lo);
        const R x1 = lo + w4, x2 = (R)0.5 * (lo + hi), x3 = hi - w4;
        R q1 = d0 - x1, q2 = d0 - x2, q3 = d0 - x3;
        int c1 = q1 < 0, c2 = q2 < 0, c3 = q3 < 0;
        /* no pivot guard on the chains: a zero pivot gives 1/q = inf, the
         * next pivot -inf (counted) and the one after d - x again, IEEE
         * arithmetic's own answer (as LAPACK dlaneg relies on) */
        auto advance = [&](R di, R e2) {
            q1 = fma(-e2, rcp_approx(q1), di - x1);
            q2 = fma(-e2, rcp_approx(q2), di - x2);
            q3 = fma(-e2, rcp_approx(q3), di - x3);
            c1 += q1 < 0;
            c2 += q2 < 0;
            c3 += q3 < 0;
        };
        if (MS > 0) {
QR_UNROLL
            for (int i = 1; i < REG; ++i)
                advance(dr[i], e2r[i]);
        } else {
            for (int i = 1; i < ms; ++i)
                advance(blk.d[i], blk.e2[i]);
        }
        /* the eigenvalue lies above x_i when at most k lie below it */
        if (c3 <= k) {
            lo = x3;
        } else if (c2 <= k) {
            lo = x2;
            hi = x3;
        } else if (c1 <= k) {
            lo = x1;
            hi = x2;
        } else {
            hi = x1;
        }
    }
    return (R)0.5 * (lo + hi);
}

/* Shift of bulge j of the current group: the (j+1)-th smallest eigenvalue of
 * the g_ms x g_ms block at d[g_b0..], e[g_b0..] (prepared in blk by
 * shift_block_prepare), to about working precision (accurate shifts save
 * group ticks: docs/gpu.md, run M1). Each lane computes its own shift, so a
 * group's shifts cost one lane's solve, not g_ms serial ones; a lane without
 * a bulge computes a clamped one and ignores it. Quadrisection on Sturm
 * counts from Gershgorin's interval: three counts per step, three
 * independent recurrences interleaved (the latency of one), each step keeps
 * a quarter of the interval: 22 steps in double and 13 in float reach
 * 2^-44 / 2^-26 of it. The recurrence q_i = (d_i - x) - e_{i-1}^2 / q_{i-1}
 * takes the hardware reciprocal instead of a division: that is the exact
 * count of a block whose e^2 moved by ~2^-23 relative, so the shift is
 * within ~2^-23 |e| of this block's eigenvalue, and the deflation tests
 * decide as always. */
template <typename R>
QR_CHASE_FN R group_shift(const chase_state &st, const shift_block<R> &blk, int j)
{
    const int ms = st.g_ms, k = j < ms ? j : ms - 1;
    /* float: the usual group sizes with the block in registers (run M2:
     * c64 n = 128 qr 1.540 -> 1.389 ms with vectors, 0.906 -> 0.883
     * values-only); double reads it from shared memory (MS = 0): 16 bulges'
     * d and e^2 took 64 more registers and qr_kernel<double> spilled (c128
     * values-only qr 1.617 -> 1.840) */
    if (sizeof(R) == sizeof(float) && ms == 8)
        return block_eigenvalue<8>(blk, ms, k);
    if (sizeof(R) == sizeof(float) && ms == 16)
        return block_eigenvalue<16>(blk, ms, k);
    return block_eigenvalue<0>(blk, ms, k);
}

/* The shifts of the current group computed serially, by one lane: this
 * same QL/QR (single shift, loose tolerance) on a copy of the g_ms x g_ms
 * block in scratch[2 g_ms], the eigenvalues written to shifts[g_ms]. The
 * fused kernel's c128 vectors path uses it instead of group_shift (run M1:
 * with the lane-parallel solve its QR phase took 2.39 ms instead of 2.23 at
 * n = 128, where c64 gained 7%; run M3: the same group ticks, but the fixed
 * quadrisection steps on an 8 x 8 block cost more than this QL, which on a
 * 16 x 16 block costs more than they do). Should the copy not converge, its diagonal
 * serves: any real shifts are valid, the deflation tests decide. */
template <typename R>
QR_CHASE_FN void group_shifts_serial(const chase_state &st, const R *d, const R *e, R *shifts,
                                     R *scratch)
{
    typedef typename eig_cuda_complex<R>::type R2;
    const int ms = st.g_ms, b0 = st.g_b0;
    R *sd = scratch, *se = scratch + ms;
    for (int i = 0; i < ms; ++i) {
        sd[i] = d[b0 + i];
        se[i] = i < ms - 1 ? e[b0 + i] : (R)0;
    }
    chase_state small;
    chase_init(small, ms, 0, QR_BULGES_MIN);
    int f, dd;
    while (chase_advance<false, true>(small, sd, se, ms, (R2 *)nullptr, f, dd) >= 0) {
    }
    for (int i = 0; i < ms; ++i)
        shifts[i] = small.info == 0 ? sd[i] : d[b0 + i];
}

/* Ticks of a group: bulge j (lane j) starts QR_BULGE_LAG * j ticks after
 * bulge 0 and then moves one pivot per tick; ticks are numbered from
 * QR_GROUP_FIRST_TICK = -1, the tick in which bulge 0 reads its start
 * values (every bulge reads them one tick before it starts). */
enum { QR_GROUP_FIRST_TICK = -1 };
QR_CHASE_FN int group_ticks(const chase_state &st)
{
    return 1 + QR_BULGE_LAG * (st.g_ms - 1) + st.g_len;
}

/* The idle bulge state: a fixed point of group_tick_dir's update when the
 * lane reads the spare slots d[n] = 0, e[n] = 1 (c = 1, s = 0, p = 0 and
 * g = 2c^2 - 1 = 1, to rounding), so an idle lane runs the tick's arithmetic
 * on its fast path (t = 1) and needs no select to keep its state. */
template <typename R> QR_CHASE_FN void bulge_idle(bulge_state<R> &b)
{
    b.g = 1;
    b.p = 0;
    b.c = 1;
    b.s = 0;
    b.dip1 = b.di = 0;
    b.ei = 1;
    b.r_slot = 0;
}

/* rot_make for the lanes of a group tick: the same rotation, with the rare
 * rescaled path behind one warp vote (cast as soon as t is known, so that
 * its latency hides behind the MUFU and the corrections), so that the
 * common tick has no divergent branch. The squares cannot overflow (the
 * matrix is scaled to max|a| in [1, 2) and rotations keep the norm), so
 * only t < lo is tested. Every lane of the warp must call it. */
template <typename R> QR_CHASE_FN void rot_make_warp(R f, R g, R &c, R &s, R &r)
{
    typedef eig_cuda_limits<R> lim;
    const R t = fma(f, f, g * g);
    const bool rare = !(t >= lim::rot_tiny() * lim::rot_tiny());
#ifdef __CUDA_ARCH__
    const bool any_rare = __any_sync(0xffffffffu, rare);
#else
    const bool any_rare = rare;
#endif
    rot_fast(f, g, t, c, s, r);
    if (any_rare) { /* warp-uniform: every lane computes, the rare ones keep it */
        const rotation<R> q = rot_make_scaled(f, g);
        c = rare ? q.c : c;
        s = rare ? q.s : s;
        r = rare ? q.r : r;
    }
}

/* *a = v when p, as one predicated shared-memory store on the device (a
 * branch around a group of stores costs a convergence barrier per tick). */
template <typename R> QR_CHASE_FN void store_if(bool p, R *a, R v)
{
#ifdef __CUDA_ARCH__
    const unsigned sa = (unsigned)__cvta_generic_to_shared(a);
    if (sizeof(R) == sizeof(double))
        asm volatile("{ .reg .pred q; setp.ne.b32 q, %0, 0; @q st.shared.f64 [%1], %2; }"
                     :: "r"((int)p), "r"(sa), "d"((double)v) : "memory");
    else
        asm volatile("{ .reg .pred q; setp.ne.b32 q, %0, 0; @q st.shared.f32 [%1], %2; }"
                     :: "r"((int)p), "r"(sa), "f"((float)v) : "memory");
#else
    if (p)
        *a = v;
#endif
}

/* One tick of bulge `lane` of the current group, whose sweeps run in
 * direction DIR (-1 QL: pivots top-1 down to bottom; +1 QR: top up to
 * bottom-1): exactly the rotation that the single-shift sweep with shift
 * sigma makes at this pivot. Bulge j at pivot i reads d, e at i-1..i+1 (QL)
 * that bulge j-1 finished writing at least one tick earlier (lag 3), and
 * writes pivots that no other bulge touches in this tick; so after a
 * __syncwarp per tick the group is the sequence of its g_ms single-shift
 * sweeps, reordered only between rotations on disjoint pivots.
 * Straight-line code for every lane of the warp (run M3: the branchy tick
 * executed ~123 instructions with four convergence barriers): a lane that
 * is not an active bulge this tick (mine == false, not started, or done)
 * reads the spare slots d[n], e[n] (which nobody writes), stores nothing
 * (predicated stores) and sits in bulge_idle's fixed point, so every lane
 * takes the same update and only the start and the last step select.
 * A bulge reads its start values in the tick before it starts (u == -1),
 * from pivots that bulge lane-1 finished one tick earlier. Logs (c, s) as
 * eig_cuda_apply_sweep expects, or the identity for an idle bulge. */
template <int DIR, bool LOG, typename R>
QR_CHASE_FN void group_tick_dir(bulge_state<R> &b, bool mine, int lane, int t,
                                const chase_state &st, R *d, R *e, int n, R sigma,
                                typename eig_cuda_complex<R>::type *log_slot)
{
    typedef typename eig_cuda_complex<R>::type R2;
    const bool QL = DIR < 0;
    const int len = st.g_len, top = st.g_top, bot = st.g_bottom;
    const int u = t - QR_BULGE_LAG * lane;
    const bool act = mine && u >= 0 && u < len;
    const bool start = mine && u == -1, last = act && u == len - 1, first = mine && u == 0;
    const int uc = u < 0 ? 0 : u >= len ? len - 1 : u;
    const int i = QL ? top - 1 - uc : top + uc;
    /* next tick's values: QL d[i-1], e[i-1]; QR d[i+2], e[i+1] (clamped at
     * the block's end); at u == -1 the start values instead */
    const int nd = QL ? (i > bot ? i - 1 : bot) : (i + 2 <= bot ? i + 2 : bot);
    const int ne = QL ? nd : (i + 1 <= bot - 1 ? i + 1 : bot - 1);
    const int s0 = QL ? top - 1 : top; /* start values: d[s0], e[s0], d[s0 + 1] */
    const R d_next = d[start ? s0 : act ? nd : n];
    const R e_next = e[start ? s0 : act ? ne : n];
    const R d_start = d[start ? s0 + 1 : n];
    /* the chain: only a select before rot_make */
    const R g_in = first ? (QL ? b.dip1 : b.di) - sigma : b.g;
    const R f = b.s * b.ei, bb = b.c * b.ei;
    R c, s, r;
    rot_make_warp(g_in, f, c, s, r);
    const R g = (QL ? b.dip1 : b.di) - b.p;
    const R rr = fma((QL ? b.di : b.dip1) - g, s, c * (bb + bb));
    const R p = s * rr;
    const R gn = fma(c, rr, -bb);
    const R d_bot = QL ? b.di : b.dip1; /* d[bot] when this is the last pivot */
    store_if(act, e + b.r_slot, r);
    store_if(act, d + (QL ? i + 1 : i), g + p);
    store_if(last, d + bot, d_bot - p);
    store_if(last, e + (QL ? bot : bot - 1), gn);
    if (LOG && mine)
        *log_slot = act ? rot_pair<R2>(c, QL ? -s : s) : rot_pair<R2>((R)1, (R)0);
    /* the state: the shifted window (QL: dip1 <- di <- d_next; QR: di <- dip1
     * <- d_next), the rotation; the start values; after the last step the
     * idle fixed point */
    if (QL) {
        b.dip1 = start ? d_start : b.di;
        b.di = d_next;
    } else {
        b.di = start ? d_next : b.dip1;
        b.dip1 = start ? d_start : d_next;
    }
    b.ei = last ? (R)QR_SPARE_E : e_next;
    b.r_slot = start ? n - 1 : i;
    b.c = start || last ? (R)1 : c;
    b.s = start ? (R)1 : last ? (R)0 : s;
    b.p = start || last ? (R)0 : p;
    b.g = start ? (R)0 : last ? (R)1 : gn;
}

template <bool LOG, bool SHIFT_SOLVE, typename R>
QR_CHASE_FN int chase_advance(chase_state &st, R *d, R *e, int n,
                              typename eig_cuda_complex<R>::type *cs, int &first, int &dir)
{
    typedef eig_cuda_limits<R> lim;
    typedef typename eig_cuda_complex<R>::type R2;
    /* SHIFT_SOLVE: group_shifts_serial's solve, which starts no groups, and
     * where an off-diagonal counts as negligible already at eps^(1/4)
     * relative size, which moves those eigenvalues by O(sqrt(eps)) only
     * (second order): shifts that good converge as fast for a quarter to a
     * half of the solve's sweeps */
    const R eps = lim::eps(), eps2 = SHIFT_SOLVE ? sqrt(eps) : eps * eps, safmin = lim::safmin();
    for (;;) {
        if (st.mode == CHASE_TOP) {
            if (st.l1 >= n) {
                st.done = 1;
                return CHASE_FINISHED;
            }
            if (st.l1 > 0)
                e[st.l1 - 1] = 0;
            int m = st.l1;
            for (; m < n - 1; ++m) {
                const R tst = fabs(e[m]);
                if (tst == 0)
                    break;
                if (tst <= sqrt(fabs(d[m])) * sqrt(fabs(d[m + 1])) * eps) {
                    e[m] = 0;
                    break;
                }
            }
            int l = st.l1, lend = m;
            st.l1 = m + 1;
            if (lend == l)
                continue;
            if (fabs(d[lend]) < fabs(d[l])) {
                const int t = l;
                l = lend;
                lend = t;
            }
            st.l = l;
            st.lend = lend;
            st.mode = lend > l ? CHASE_QL : CHASE_QR;
            continue;
        }
        if (st.mode == CHASE_END) {
            if (st.jtot < st.nmaxit) {
                st.mode = CHASE_TOP;
                continue;
            }
            int bad = 0;
            for (int i = 0; i < n - 1; ++i)
                bad += e[i] != 0;
            st.info = bad;
            st.done = 1;
            return CHASE_FINISHED;
        }
        const int l = st.l, lend = st.lend;
        if (st.mode == CHASE_QL) {
            /* look for a small subdiagonal below l */
            /* four candidates per step: their loads overlap instead of each
             * waiting on the previous compare */
            int m = l;
            for (; m + 4 <= lend; m += 4) {
                const R e0 = e[m], e1 = e[m + 1], e2 = e[m + 2], e3 = e[m + 3];
                const R d0 = fabs(d[m]), d1 = fabs(d[m + 1]), d2 = fabs(d[m + 2]),
                        d3 = fabs(d[m + 3]), d4 = fabs(d[m + 4]);
                const bool s0 = e0 * e0 <= (eps2 * d0) * d1 + safmin;
                const bool s1 = e1 * e1 <= (eps2 * d1) * d2 + safmin;
                const bool s2 = e2 * e2 <= (eps2 * d2) * d3 + safmin;
                const bool s3 = e3 * e3 <= (eps2 * d3) * d4 + safmin;
                if (s0 | s1 | s2 | s3) {
                    m += s0 ? 0 : s1 ? 1 : s2 ? 2 : 3;
                    break;
                }
            }
            if (m + 4 > lend) {
                for (; m < lend; ++m) {
                    const R t = fabs(e[m]);
                    if (t * t <= (eps2 * fabs(d[m])) * fabs(d[m + 1]) + safmin)
                        break;
                }
            }
            if (m < lend)
                e[m] = 0;
            if (st.after_group) {
                st.after_group = 0;
                st.stalled = m != l && m == st.g_top ? st.stalled + 1 : 0;
            }
            R p = d[l];
            if (m == l) {
                st.l = l + 1;
                if (st.l > lend)
                    st.mode = CHASE_END;
                continue;
            }
            if (m == l + 1) {
                R rt1, rt2, c, s;
                sym2x2_eig(d[l], e[l], d[l + 1], rt1, rt2, c, s);
                d[l] = rt1;
                d[l + 1] = rt2;
                e[l] = 0;
                st.l = l + 2;
                if (st.l > lend)
                    st.mode = CHASE_END;
                if (LOG) {
                    cs[0] = rot_pair<R2>(c, s);
                    first = l;
                    dir = 1;
                }
                return 1;
            }
            if (st.jtot == st.nmaxit) {
                st.mode = CHASE_END;
                continue;
            }
            if constexpr (!SHIFT_SOLVE) {
                if (group_start(st, l, m))
                    return CHASE_GROUP;
            }
            st.jtot++;
            R g = (d[l + 1] - p) / (2 * e[l]);
            R r = hypot(g, (R)1);
            g = d[m] - p + (e[l] / (g + copysign(r, g)));
            R s = 1, c = 1;
            p = 0;
            /* d[i], e[i] are read before this sweep writes them: load them one
             * rotation ahead so that their latency is off the chain. The body
             * is branch-free: the first rotation's r (not an e of the block)
             * goes to e[n-1], which the algorithm never reads. */
            int cnt = 0;
            R dip1 = d[m], di = d[m - 1], ei = e[m - 1];
            int r_slot = n - 1;
            for (int i = m - 1; i >= l; --i) {
                const int nx = i > l ? i - 1 : l;
                const R di_next = d[nx], ei_next = e[nx];
                const R f = s * ei, bb = c * ei;
                rot_make(g, f, c, s, r);
                e[r_slot] = r;
                r_slot = i;
                g = dip1 - p;
                r = fma(di - g, s, c * (bb + bb));
                p = s * r;
                d[i + 1] = g + p;
                g = fma(c, r, -bb);
                if (LOG)
                    cs[cnt] = rot_pair<R2>(c, -s);
                ++cnt;
                dip1 = di;
                di = di_next;
                ei = ei_next;
            }
            d[l] = d[l] - p;
            e[l] = g;
            first = m - 1;
            dir = -1;
            return cnt;
        }
        /* CHASE_QR: l > lend, look for a small subdiagonal above l */
        int m = l;
        for (; m - 4 >= lend; m -= 4) {
            const R e0 = e[m - 1], e1 = e[m - 2], e2 = e[m - 3], e3 = e[m - 4];
            const R d0 = fabs(d[m]), d1 = fabs(d[m - 1]), d2 = fabs(d[m - 2]), d3 = fabs(d[m - 3]),
                    d4 = fabs(d[m - 4]);
            const bool s0 = e0 * e0 <= (eps2 * d0) * d1 + safmin;
            const bool s1 = e1 * e1 <= (eps2 * d1) * d2 + safmin;
            const bool s2 = e2 * e2 <= (eps2 * d2) * d3 + safmin;
            const bool s3 = e3 * e3 <= (eps2 * d3) * d4 + safmin;
            if (s0 | s1 | s2 | s3) {
                m -= s0 ? 0 : s1 ? 1 : s2 ? 2 : 3;
                break;
            }
        }
        if (m - 4 < lend) {
            for (; m > lend; --m) {
                const R t = fabs(e[m - 1]);
                if (t * t <= (eps2 * fabs(d[m])) * fabs(d[m - 1]) + safmin)
                    break;
            }
        }
        if (m > lend)
            e[m - 1] = 0;
        if (st.after_group) {
            st.after_group = 0;
            st.stalled = m != l && m == st.g_top ? st.stalled + 1 : 0;
        }
        R p = d[l];
        if (m == l) {
            st.l = l - 1;
            if (st.l < lend)
                st.mode = CHASE_END;
            continue;
        }
        if (m == l - 1) {
            R rt1, rt2, c, s;
            sym2x2_eig(d[l - 1], e[l - 1], d[l], rt1, rt2, c, s);
            d[l - 1] = rt1;
            d[l] = rt2;
            e[l - 1] = 0;
            st.l = l - 2;
            if (st.l < lend)
                st.mode = CHASE_END;
            if (LOG) {
                cs[0] = rot_pair<R2>(c, s);
                first = l - 1;
                dir = 1;
            }
            return 1;
        }
        if (st.jtot == st.nmaxit) {
            st.mode = CHASE_END;
            continue;
        }
        if constexpr (!SHIFT_SOLVE) {
            if (group_start(st, l, m))
                return CHASE_GROUP;
        }
        st.jtot++;
        R g = (d[l - 1] - p) / (2 * e[l - 1]);
        R r = hypot(g, (R)1);
        g = d[m] - p + (e[l - 1] / (g + copysign(r, g)));
        R s = 1, c = 1;
        p = 0;
        int cnt = 0;
        R di = d[m], dip1 = d[m + 1], ei = e[m];
        int r_slot = n - 1;
        for (int i = m; i <= l - 1; ++i) {
            const int nx = i + 2 <= l ? i + 2 : l;
            const R dip2 = d[nx], ei_next = e[i + 1 <= l - 1 ? i + 1 : l - 1];
            const R f = s * ei, bb = c * ei;
            rot_make(g, f, c, s, r);
            e[r_slot] = r;
            r_slot = i;
            g = di - p;
            r = fma(dip1 - g, s, c * (bb + bb));
            p = s * r;
            d[i] = g + p;
            g = fma(c, r, -bb);
            if (LOG)
                cs[cnt] = rot_pair<R2>(c, s);
            ++cnt;
            di = dip1;
            dip1 = dip2;
            ei = ei_next;
        }
        d[l] = d[l] - p;
        e[l - 1] = g;
        first = m;
        dir = 1;
        return cnt;
    }
}

/* Applies ticks t0 .. t0+nticks-1 of the current group (log: ms entries per
 * tick) to one row of Zr (z at the row, stride rows), bulge after bulge:
 * within the chunk, bulge j's rotations are a run of consecutive pivots
 * (one eig_cuda_apply_sweep with log stride ms: one load and one store per
 * rotation, the shared column carried in a register). The order is valid:
 * the group equals its ms sweeps done one after the other, and a rotation
 * of bulge j+1 that overlaps one of bulge j comes at least two ticks later
 * (so never in an earlier chunk). */
template <typename R>
QR_CHASE_FN void apply_group(R *z, int rows, const typename eig_cuda_complex<R>::type *log,
                             int t0, int nticks, int top, int len, int dir, int ms)
{
    for (int j = 0; j < ms; ++j) {
        const int lag = QR_BULGE_LAG * j;
        const int u0 = t0 - lag > 0 ? t0 - lag : 0;
        const int u1 = t0 + nticks - lag < len ? t0 + nticks - lag : len;
        if (u1 <= u0)
            continue;
        const int first = dir < 0 ? top - 1 - u0 : top + u0;
        eig_cuda_apply_sweep(z, rows, log + (u0 + lag - t0) * ms + j, u1 - u0, first, dir, ms);
    }
}

/* Every lane's copy of the group that lane 0's chase_advance has just
 * started (CHASE_GROUP). */
__device__ __forceinline__ void group_broadcast(chase_state &st)
{
    const unsigned full = 0xffffffffu;
    st.g_top = __shfl_sync(full, st.g_top, 0);
    st.g_bottom = __shfl_sync(full, st.g_bottom, 0);
    st.g_len = __shfl_sync(full, st.g_len, 0);
    st.g_dir = __shfl_sync(full, st.g_dir, 0);
    st.g_ms = __shfl_sync(full, st.g_ms, 0);
    st.g_b0 = __shfl_sync(full, st.g_b0, 0);
}

/* This lane's shift by the lane-parallel solve: lane 0 prepares the
 * group's block in blk (shared), then every lane solves for its own. */
template <typename R>
__device__ __forceinline__ R group_shift_warp(const chase_state &st, const R *d, const R *e,
                                              shift_block<R> &blk, int lane)
{
    if (lane == 0)
        shift_block_prepare(st, d, e, blk);
    __syncwarp();
    return group_shift(st, blk, lane);
}

/* Ticks t0 .. t0+ticks-1 of the current group in direction DIR, a
 * __syncwarp after each; tick t logs at log[(t - t0) * stride] (LOG). */
template <int DIR, bool LOG, typename R>
__device__ __forceinline__ void group_ticks_run(bulge_state<R> &b, int lane, int t0, int ticks,
                                                const chase_state &st, R *d, R *e, int n, R sigma,
                                                typename eig_cuda_complex<R>::type *log,
                                                int stride)
{
    const bool mine = lane < st.g_ms;
#pragma unroll 2
    for (int t = t0; t < t0 + ticks; ++t) {
        group_tick_dir<DIR, LOG>(b, mine, lane, t, st, d, e, n, sigma, log + (t - t0) * stride);
        __syncwarp();
    }
}

/* A whole group of the logged path in direction DIR: bulge `lane` writes
 * its len rotations to mine[0 .. len), an idle tick's identity to sink. */
template <int DIR, typename R>
__device__ __forceinline__ void chase_group_logged(bulge_state<R> &b, int lane, int end,
                                                   const chase_state &st, R *d, R *e, int n,
                                                   R sigma,
                                                   typename eig_cuda_complex<R>::type *mine,
                                                   typename eig_cuda_complex<R>::type *sink)
{
    const bool own = lane < st.g_ms;
    for (int t = QR_GROUP_FIRST_TICK; t < end; ++t) {
        const int u = t - QR_BULGE_LAG * lane;
        group_tick_dir<DIR, true>(b, own, lane, t, st, d, e, n, sigma,
                                  own && u >= 0 && u < st.g_len ? mine + u : sink);
        __syncwarp();
    }
}

/* Entries (c, s) of each of the fused kernel's two shared log buffers: a
 * whole sweep, or n / g_ms ticks of a group. More would cost occupancy:
 * c128 n = 128 runs three CTAs per SM (70.5 KB each); with 16 KB of log
 * buffers only two fit (two waves: the QR phase took 4.15 ms instead of
 * 2.23, run M1). */
__host__ __device__ inline int qr_log_entries(int n)
{
    return n;
}

/* (160, 1): with the bare bound ptxas held qr_kernel<float> to 72 registers
 * and spilled (c64 n = 128 qr 1.344 ms); asking for one CTA per SM lets it
 * take 95 (1.299 ms, run M3); occupancy is set by shared memory anyway */
template <typename R>
__global__ void __launch_bounds__(160, 1)
    qr_kernel(int n, int group_min, int bulges_max, bool serial_shifts, eig_cuda_workspace ws,
              R *__restrict__ w_all, int *__restrict__ info_all, bool overflowed_only)
{
    typedef typename eig_cuda_complex<R>::type R2;
    const int b = blockIdx.x, chunk = blockIdx.y, tid = threadIdx.x, nt = blockDim.x;
    const int rows = nt - 32; /* 0 for values-only */
    if (ws.status[b] != 0)
        return; /* the input check already wrote info and NaN eigenvalues */
    if (overflowed_only && qr_log_decode(ws.qr_state[b]).status != EIG_CUDA_QR_LOG_OVERFLOW)
        return; /* the logged path (qr_log_kernel) did this matrix */

    extern __shared__ double2 smem_raw[];
    const int log_entries = rows > 0 ? qr_log_entries(n) : 0; /* values-only logs nothing */
    R2 *cs = (R2 *)smem_raw; /* [2][log_entries] logged (c, s) */
    R *d = (R *)(cs + 2 * log_entries);
    R *e = d + n + 1; /* d[n], e[n]: spare slots that idle bulges read */
    R *zs = e + n + 1; /* [n][rows] */
    int *rank = (int *)(zs + (size_t)n * rows);
    __shared__ int evt_count[2], evt_first[2], evt_dir[2], evt_ticks[2], evt_top[2], evt_len[2],
        evt_ms[2];
    __shared__ int unconverged;
    __shared__ R shifts[QR_BULGES_MAX], scratch[2 * QR_BULGES_MAX]; /* serial_shifts */
    __shared__ shift_block<R> blk;

    const R *dg = (const R *)ws.diag + (size_t)b * n;
    const R *eg = (const R *)ws.offdiag + (size_t)b * n;
    for (int i = tid; i <= n; i += nt) {
        d[i] = i < n ? dg[i] : (R)QR_SPARE_D;
        e[i] = i < n ? eg[i] : (R)QR_SPARE_E;
    }
    const int row0 = chunk * rows;
    for (int idx = tid; idx < n * rows; idx += nt) {
        const int r = idx % rows, col = idx / rows;
        zs[idx] = row0 + r == col ? (R)1 : (R)0;
    }
    __syncthreads();

    /* Warp 0 chases: lane 0 runs the control flow (splits, single sweeps,
     * 2x2 blocks); a multishift group is run by lanes 0..g_ms-1, one bulge
     * each: every lane computes its shift, then the ticks, separated by
     * __syncwarp. Its log goes out in events of log_entries / g_ms ticks
     * (g_ms (c, s) per tick, identity for an idle bulge). */
    const int lane = tid & 31;
    const unsigned full = 0xffffffffu;
    chase_state st;
    chase_init(st, n, group_min, bulges_max);
    bulge_state<R> bulge;
    R sigma = 0;
    bool in_group = false;
    int group_t = 0, group_end = 0, group_chunk = 1;
    for (int it = 0;; ++it) {
        const int cur = it & 1;
        R2 *log = cs + cur * log_entries;
        if (tid < 32) {
            if (!in_group) {
                int k = 0, first = 0, dir = 0;
                if (lane == 0) {
                    k = rows > 0 ? chase_advance<true, false>(st, d, e, n, log, first, dir)
                                 : chase_advance<false, false>(st, d, e, n, log, first, dir);
                    if (k != CHASE_GROUP) {
                        evt_count[cur] = k;
                        evt_first[cur] = first;
                        evt_dir[cur] = dir;
                    }
                    if (k == CHASE_FINISHED)
                        unconverged = st.info;
                }
                k = __shfl_sync(full, k, 0);
                if (k == CHASE_GROUP) {
                    group_broadcast(st);
                    if (serial_shifts) {
                        if (lane == 0)
                            group_shifts_serial(st, d, e, shifts, scratch);
                        __syncwarp();
                        sigma = shifts[lane < st.g_ms ? lane : 0];
                    } else {
                        sigma = group_shift_warp(st, d, e, blk, lane);
                    }
                    bulge_idle(bulge);
                    in_group = true;
                    group_t = QR_GROUP_FIRST_TICK;
                    group_end = QR_GROUP_FIRST_TICK + group_ticks(st);
                    group_chunk = log_entries / st.g_ms;
                }
            }
            if (in_group) {
                const int ms = st.g_ms;
                const int ticks = rows > 0 ? min(group_chunk, group_end - group_t)
                                           : group_end - group_t;
                if (rows > 0 && st.g_dir < 0)
                    group_ticks_run<-1, true>(bulge, lane, group_t, ticks, st, d, e, n, sigma,
                                              log + lane, ms);
                else if (rows > 0)
                    group_ticks_run<1, true>(bulge, lane, group_t, ticks, st, d, e, n, sigma,
                                             log + lane, ms);
                else if (st.g_dir < 0)
                    group_ticks_run<-1, false>(bulge, lane, group_t, ticks, st, d, e, n, sigma,
                                               log, 0);
                else
                    group_ticks_run<1, false>(bulge, lane, group_t, ticks, st, d, e, n, sigma,
                                              log, 0);
                if (lane == 0) {
                    evt_count[cur] = CHASE_GROUP;
                    evt_first[cur] = group_t;
                    evt_dir[cur] = st.g_dir;
                    evt_ticks[cur] = ticks;
                    evt_top[cur] = st.g_top;
                    evt_len[cur] = st.g_len;
                    evt_ms[cur] = ms;
                }
                group_t += ticks;
                in_group = group_t < group_end;
            }
        } else if (it > 0) {
            const int prev = cur ^ 1;
            const R2 *plog = cs + prev * log_entries;
            if (evt_count[prev] == CHASE_GROUP)
                apply_group(zs + (tid - 32), rows, plog, evt_first[prev], evt_ticks[prev],
                            evt_top[prev], evt_len[prev], evt_dir[prev], evt_ms[prev]);
            else
                eig_cuda_apply_sweep(zs + (tid - 32), rows, plog, evt_count[prev],
                                     evt_first[prev], evt_dir[prev]);
        }
        if (rows > 0)
            __syncthreads();
        else
            __syncwarp();
        if (evt_count[cur] == CHASE_FINISHED)
            break;
    }
    __syncthreads();

    /* ascending order: rank by comparison count (ties by index) */
    for (int i = tid; i < n; i += nt) {
        const R di = d[i];
        int r = 0;
        for (int j = 0; j < n; ++j) {
            const R dj = d[j];
            r += (dj < di) || (dj == di && j < i);
        }
        rank[i] = r;
    }
    __syncthreads();
    const int bad = unconverged;
    if (chunk == 0) {
        R *w = w_all + (size_t)b * n;
        const int ex = ws.scale_exp[b];
        for (int i = tid; i < n; i += nt)
            w[bad ? i : rank[i]] = bad ? (R)NAN : scalbn(d[i], ex);
        if (tid == 0)
            info_all[b] = bad;
    }
    if (rows > 0 && !bad) {
        R *zr = (R *)ws.zreal + (size_t)b * n * n;
        for (int idx = tid; idx < n * rows; idx += nt) {
            const int r = idx % rows, col = idx / rows;
            if (row0 + r < n)
                zr[(size_t)(row0 + r) + (size_t)rank[col] * n] = zs[idx];
        }
    }
}


/* Logged path, the chase: matrix b's chase by one warp (no consumers), the
 * fused kernel's bit for bit, its rotations written to the global log that
 * the matrix's appliers (qr_apply_slice, eig_cuda_qr_apply.cuh) follow.
 * Log layout per matrix: headers (first pivot, direction, rotations per
 * sweep, sweeps) in application order, and the rotations (c, s) in the
 * same order, sweep after sweep; a multishift group is one header of
 * g_ms sweeps (bulge j's rotations consecutive: the group equals its
 * sweeps done one after the other). Progress is published after every
 * group and whenever single events have logged `chunk` more rotations (an
 * applier stages whole chunks). Before each event the chase checks that
 * the log has room for it (a single sweep: n rotations; a group:
 * g_ms * len); if not, it stops and marks the matrix
 * EIG_CUDA_QR_LOG_OVERFLOW, and the fused qr_kernel redoes that matrix from
 * d, e (never a truncated log). Otherwise it writes w (sorted), info and
 * the ranks, then publishes its final status. */
template <typename R>
__device__ void qr_chase_matrix(int b, int n, int group_min, int bulges_max, int log_cap,
                                int head_cap, int chunk, const eig_cuda_workspace &ws,
                                R *__restrict__ w_all, int *__restrict__ info_all, R *d)
{
    typedef typename eig_cuda_complex<R>::type R2;
    const int lane = threadIdx.x & 31;
    const unsigned full = 0xffffffffu;
    unsigned long long *word = ws.qr_state + b;
    if (ws.status[b] != 0) {
        if (lane == 0) /* the input check wrote info and NaN */
            qr_log_publish(word, EIG_CUDA_QR_LOG_SKIP, 0, 0);
        return;
    }
    R *e = d + n + 1; /* d[n], e[n]: spare slots that idle bulges read */
    __shared__ R2 idle_sink[QR_BULGES_MAX]; /* identity entries of idle bulges */
    __shared__ shift_block<R> blk;
    const R *dg = (const R *)ws.diag + (size_t)b * n;
    const R *eg = (const R *)ws.offdiag + (size_t)b * n;
    for (int i = lane; i <= n; i += 32) {
        d[i] = i < n ? dg[i] : (R)QR_SPARE_D;
        e[i] = i < n ? eg[i] : (R)QR_SPARE_E;
    }
    __syncwarp();

    R2 *log = (R2 *)ws.qr_log + (size_t)b * log_cap;
    int4 *head = ws.qr_head + (size_t)b * head_cap;
    chase_state st;
    chase_init(st, n, group_min, bulges_max);
    bulge_state<R> bulge;
    int pos = 0, nh = 0, published = 0; /* uniform over the warp */
    bool overflow = false;
    for (;;) {
        if (log_cap - pos < n || nh >= head_cap) {
            overflow = true;
            break;
        }
        int k = 0, first = 0, dir = 0;
        if (lane == 0) {
            k = chase_advance<true, false>(st, d, e, n, log + pos, first, dir);
            if (k > 0)
                head[nh] = make_int4(first, dir, k, 1);
        }
        k = __shfl_sync(full, k, 0);
        if (k == CHASE_FINISHED)
            break;
        if (k > 0) {
            ++nh;
            pos += k;
            if (pos - published >= chunk) { /* lane 0 wrote the event */
                if (lane == 0)
                    qr_log_publish(word, EIG_CUDA_QR_LOG_RUNNING, nh, pos);
                published = pos;
            }
            continue;
        }
        if (k != CHASE_GROUP)
            continue;
        group_broadcast(st);
        const int len = st.g_len, ms = st.g_ms;
        if (pos + ms * len > log_cap) {
            overflow = true;
            break;
        }
        const R sigma = group_shift_warp(st, d, e, blk, lane);
        bulge_idle(bulge);
        const int end = QR_GROUP_FIRST_TICK + group_ticks(st);
        R2 *mine = log + pos + lane * len;
        if (st.g_dir < 0)
            chase_group_logged<-1>(bulge, lane, end, st, d, e, n, sigma, mine, idle_sink + lane);
        else
            chase_group_logged<1>(bulge, lane, end, st, d, e, n, sigma, mine, idle_sink + lane);
        if (lane == 0)
            head[nh] = make_int4(st.g_dir < 0 ? st.g_top - 1 : st.g_top, st.g_dir, len, ms);
        ++nh;
        pos += ms * len;
        __threadfence(); /* every bulge's rotations before the publication */
        __syncwarp();
        if (lane == 0)
            qr_log_publish(word, EIG_CUDA_QR_LOG_RUNNING, nh, pos);
        published = pos;
    }
    __syncwarp();
    if (overflow) {
        if (lane == 0)
            qr_log_publish(word, EIG_CUDA_QR_LOG_OVERFLOW, nh, pos);
        return;
    }
    const int bad = __shfl_sync(full, st.info, 0);
    R *w = w_all + (size_t)b * n;
    int *rank_out = ws.qr_rank + (size_t)b * n;
    const int ex = ws.scale_exp[b];
    for (int i = lane; i < n; i += 32) {
        const R di = d[i];
        int r = 0;
        for (int j = 0; j < n; ++j) {
            const R dj = d[j];
            r += (dj < di) || (dj == di && j < i);
        }
        rank_out[i] = r;
        w[bad ? i : r] = bad ? (R)NAN : scalbn(di, ex);
    }
    if (lane == 0)
        info_all[b] = bad;
    __threadfence(); /* the ranks (and w, info) before the final status */
    __syncwarp();
    if (lane == 0)
        qr_log_publish(word, bad ? EIG_CUDA_QR_LOG_SKIP : EIG_CUDA_QR_LOG_APPLY, nh, pos);
}

/* The role of a logged-path CTA that has just started (thread 0): role[0]
 * the matrix, role[1] the slice (0: with the chase). counters: chases
 * claimed, applier jobs claimed, CTAs started per SM; count * slices CTAs
 * claim count chases and count * (slices - 1) applier jobs, so every CTA
 * finds one. */
__device__ void qr_log_role(unsigned *counters, int count, int slices, int quota, int role[2])
{
    unsigned sm;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    const unsigned started = atomicAdd(counters + 2 + sm % EIG_CUDA_QR_LOG_SM_SLOTS, 1u);
    if (slices == 1 || started < (unsigned)quota) {
        const int b = (int)atomicAdd(counters, 1u);
        if (b < count) {
            role[0] = b;
            role[1] = 0;
            return;
        }
    }
    const int jobs = count * (slices - 1);
    const int j = jobs > 0 ? (int)atomicAdd(counters + 1, 1u) : jobs;
    if (j < jobs) {
        role[0] = j / (slices - 1);
        role[1] = 1 + j % (slices - 1);
        return;
    }
    role[0] = (int)atomicAdd(counters, 1u); /* the applier jobs ran out: chase */
    role[1] = 0;
}

/* Logged path: one launch runs every matrix's chase (one warp) and its
 * appliers (one warp per ROWS-row slice of Zr), which apply the log
 * while the chase writes it. A CTA is two warps: warp 0 applies a slice,
 * warp 1 chases in the CTA of the matrix's slice 0 and leaves at once in
 * the others (a chase in a CTA of its own would hold the launch's shared
 * memory, an applier's, for nothing: fewer appliers would fit at once;
 * alternating the chasing warp between CTAs on one SM was slower, run M4).
 * Roles are claimed as the CTAs start (qr_log_role): a chase (with its
 * matrix's slice 0) while its SM has started fewer than `quota` CTAs
 * (ceil(count / SMs)), else the next applier job. The hardware starts
 * CTAs unevenly (run M4, H100: of the first 180 of 360 such CTAs, 22 SMs
 * got three and 30 none), and chases that share an SM slow each other
 * (with the quota c128 n = 128 qr 1.50 -> 1.40 ms, n = 96 1.07 -> 0.92).
 * Waiting appliers never starve a chase of resources: a CTA becomes an
 * applier only on an SM that has already started `quota` CTAs, so while
 * chases are unclaimed some SM can still start one, and once the applier
 * jobs run out the remaining CTAs chase. The chases wait
 * on nothing. Shared memory: the applier's space (eig_cuda_qr_apply_smem),
 * then the chase's d and e. (64, 1): with the bare bound ptxas held the
 * float kernel to 72 registers and spilled, as qr_kernel's; shared memory
 * sets the occupancy anyway.) WAVE (run R3): the CTA's appliers are
 * ROWS / QR_WAVE_ROWS wavefront warps of QR_WAVE_ROWS rows each
 * (qr_apply_wave: a group's bulges applied at once; their space
 * eig_cuda_qr_wave_smem), the chase's warp last. */
template <typename R, int ROWS, bool WAVE>
__global__ void __launch_bounds__(WAVE ? 32 * (ROWS / QR_WAVE_ROWS + 1) : 64, 1)
    qr_log_kernel(int n, int count, int quota, int group_min, int bulges_max, int log_cap,
                  int head_cap, int chunk, size_t apply_smem, eig_cuda_workspace ws,
                  R *__restrict__ w_all, int *__restrict__ info_all)
{
    enum { APPLIERS = WAVE ? ROWS / QR_WAVE_ROWS : 1 };
    extern __shared__ double2 smem_raw[];
    __shared__ int role[2];
    const int slices = (n + ROWS - 1) / ROWS;
    if (threadIdx.x == 0)
        qr_log_role((unsigned *)(ws.qr_state + count), count, slices, quota, role);
    __syncthreads();
    const int b = role[0], slice = role[1];
    if (threadIdx.x < 32 * APPLIERS) {
        if (WAVE)
            qr_apply_wave<R>(n, APPLIERS, slice, b, log_cap, head_cap, ws, smem_raw);
        else
            qr_apply_slice<R, ROWS>(n, slice, b, log_cap, head_cap, chunk, ws, smem_raw);
    } else if (slice == 0) {
        qr_chase_matrix<R>(b, n, group_min, bulges_max, log_cap, head_cap, chunk, ws, w_all,
                           info_all, (R *)((char *)smem_raw + apply_smem));
    }
}

} // namespace

template <typename R> size_t eig_cuda_qr_smem(int n, int consumer_warps)
{
    const size_t rows = 32 * (size_t)consumer_warps;
    const size_t log = consumer_warps > 0 ? 2 * (size_t)qr_log_entries(n) : 0; /* (c, s) */
    return (2 * log + 2 * ((size_t)n + 1) + rows * n) * sizeof(R) + (size_t)n * sizeof(int);
}

template <typename R> size_t eig_cuda_qr_chase_smem(int n)
{
    return 2 * ((size_t)n + 1) * sizeof(R);
}

template <typename R> cudaError_t eig_cuda_qr_set_smem(int consumer_warps, size_t bytes)
{
    (void)consumer_warps;
    return cudaFuncSetAttribute(qr_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)bytes);
}

template <typename R> size_t eig_cuda_qr_apply_smem(int n, int rows, int chunk)
{
    typedef typename eig_cuda_complex<R>::type R2;
    return 2 * (size_t)chunk * sizeof(R2) + (size_t)n * rows * sizeof(R);
}

template <typename R> size_t eig_cuda_qr_wave_smem(int n, int rows)
{
    return (size_t)rows * qr_wave_stride<R>(n) * sizeof(R);
}

/* The logged path's kernel for the plan's appliers: wavefront slices of
 * 32 rows, 48 or 64 in complex double (eig_cuda_qr_wave_rows), or sweep
 * appliers of 32 or 64 rows. */
template <typename R>
static decltype(&qr_log_kernel<R, 64, false>) qr_log_kernel_for(const eig_cuda_qr_config *cfg)
{
    if constexpr (sizeof(R) == sizeof(double)) {
        if (cfg->wave && cfg->apply_rows > 32)
            return cfg->apply_rows == 64 ? qr_log_kernel<R, 64, true> : qr_log_kernel<R, 48, true>;
    }
    if (cfg->wave)
        return qr_log_kernel<R, 32, true>;
    return cfg->apply_rows == 64 ? qr_log_kernel<R, 64, false> : qr_log_kernel<R, 32, false>;
}

template <typename R> cudaError_t eig_cuda_qr_log_set_smem(const eig_cuda_qr_config *cfg)
{
    return cudaFuncSetAttribute(qr_log_kernel_for<R>(cfg),
                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)(cfg->apply_smem + cfg->chase_smem));
}

/* Fused path: one launch. Logged path: the progress words and the role
 * counters zeroed, the chases and appliers in one launch, then the fused
 * kernel over the matrices whose log overflowed (its other CTAs return at
 * once). */
template <typename R>
cudaError_t eig_cuda_qr_launch(const eig_cuda_qr_config *cfg, int n, int count,
                               const eig_cuda_workspace *ws, void *w, int *info,
                               cudaStream_t stream)
{
    dim3 grid(count, cfg->row_chunks);
    const int threads = 32 * (1 + cfg->consumer_warps);
    if (!cfg->logged) {
        qr_kernel<R><<<grid, threads, cfg->smem, stream>>>(
            n, cfg->group_min, cfg->bulges, cfg->serial_shifts, *ws, (R *)w, info, false);
        return cudaGetLastError();
    }
    cudaError_t e = cudaMemsetAsync(
        ws->qr_state, 0, ((size_t)count + EIG_CUDA_QR_LOG_COUNTER_WORDS) * sizeof(*ws->qr_state),
        stream);
    if (e != cudaSuccess)
        return e;
    const int slices = (n + cfg->apply_rows - 1) / cfg->apply_rows;
    const int quota = (count + cfg->sms - 1) / cfg->sms;
    const int log_threads = 32 * ((cfg->wave ? cfg->apply_rows / QR_WAVE_ROWS : 1) + 1);
    qr_log_kernel_for<R>(cfg)<<<count * slices, log_threads, cfg->apply_smem + cfg->chase_smem,
                                stream>>>(n, count, quota, cfg->group_min, cfg->bulges,
                                          cfg->log_cap, cfg->head_cap, cfg->apply_chunk,
                                          cfg->apply_smem, *ws, (R *)w, info);
    e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    qr_kernel<R><<<grid, threads, cfg->smem, stream>>>(
        n, cfg->group_min, cfg->bulges, cfg->serial_shifts, *ws, (R *)w, info, true);
    return cudaGetLastError();
}

#define EIG_CUDA_QR_INSTANTIATE(R)                                                                \
    template size_t eig_cuda_qr_smem<R>(int, int);                                               \
    template size_t eig_cuda_qr_chase_smem<R>(int);                                              \
    template cudaError_t eig_cuda_qr_set_smem<R>(int, size_t);                                   \
    template size_t eig_cuda_qr_apply_smem<R>(int, int, int);                                    \
    template size_t eig_cuda_qr_wave_smem<R>(int, int);                                          \
    template cudaError_t eig_cuda_qr_log_set_smem<R>(const eig_cuda_qr_config *);                \
    template cudaError_t eig_cuda_qr_launch<R>(const eig_cuda_qr_config *, int, int,             \
                                               const eig_cuda_workspace *, void *, int *,        \
                                               cudaStream_t);
EIG_CUDA_QR_INSTANTIATE(float)
EIG_CUDA_QR_INSTANTIATE(double)
