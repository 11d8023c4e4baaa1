/*
 * eig_cuda_qr_apply.cuh - logged QR path, the apply side: applies the
 * rotation log that the chase (eig_cuda_qr.cu) writes for each matrix to the
 * real eigenvector matrix Zr of the tridiagonal, then writes Zr's columns in
 * ascending eigenvalue order. Included by eig_cuda_qr.cu, whose
 * qr_log_kernel runs the chase and its appliers in one launch: the appliers
 * follow the chase through the log as it grows (qr_log_publish below).
 *
 * An applier is one warp, one or two rows of a slice of Zr per lane (ROWS =
 * 32 or 64, the plan's apply_rows); the slice lives in shared memory
 * column-major ([n][rows]: conflict-free).
 * The log is staged in chunks of `chunk` rotations into two shared buffers
 * by cp.async (16-byte copies, coalesced), the next chunk loading while the
 * current one is applied; a sweep that crosses a chunk boundary is applied
 * in two parts (exactly equivalent). Every lane walks the same headers, so
 * the control flow is uniform over the warp, which synchronizes by itself
 * (__syncwarp): it may share its CTA with the chase's warp.
 */
#pragma once

#include <cuda_pipeline.h>

#include "eig_cuda_internal.cuh"

namespace {

/* Lane `lane` of the applier's warp: starts the copy of log chunk k
 * (rotations k*chunk .. (k+1)*chunk-1, those below total only) into buf;
 * one commit group per chunk, even when empty. */
template <typename R2>
__device__ __forceinline__ void stage_chunk(R2 *buf, const R2 *log, int k, int chunk, int total,
                                            int lane)
{
    const int per = 16 / (int)sizeof(R2); /* rotations per 16-byte copy */
    const int base = k * chunk;
    const int left = total - base < chunk ? total - base : chunk;
    const int pieces = left > 0 ? (left + per - 1) / per : 0;
    for (int i = lane; i < pieces; i += 32)
        __pipeline_memcpy_async(buf + i * per, log + base + i * per, 16);
    __pipeline_commit();
}

/* The rotations cs[0..A) and, for each of a lane's L rows (32 apart), the
 * columns zb[STEP], ..., zb[A STEP] that they take in. */
template <int A, int STEP, int L, typename R, typename R2>
__device__ __forceinline__ void sweep_block_load(const R2 *cs, const R *zb, R2 (&rot)[A],
                                                 R (&col)[A][L])
{
#pragma unroll
    for (int i = 0; i < A; ++i) {
        rot[i] = cs[i];
#pragma unroll
        for (int r = 0; r < L; ++r)
            col[i][r] = zb[(i + 1) * STEP + 32 * r];
    }
}

/* One sweep (or a part of one) in direction DIR on this lane's rows of a
 * slice of ROWS rows (rows lane + 32 r, r < ROWS / 32: two independent
 * chains per lane at ROWS = 64, and each rotation loaded once for both),
 * as eig_cuda_apply_sweep but written for latency and few instructions:
 * the columns and rotations of the next four rotations are loaded while
 * the current four are applied, so the loop waits on the carried columns'
 * FMA chains, not on shared-memory latency (the columns ahead are not
 * touched by the sweep until their turn); the last block loads its own
 * entries again instead of selecting, and every address is a running
 * pointer plus a constant (run M4). In the direction of the sweep, column
 * base carries; rotation q takes column base + DIR (q + 1) in and writes
 * column base + DIR q. QL logs (c, -s). */
template <int DIR, int ROWS, typename R, typename R2>
__device__ __forceinline__ void apply_sweep_dir(R *z, const R2 *cs, int count, int first)
{
    enum { AHEAD = 4, STEP = DIR * ROWS, LR = ROWS / 32 };
    R *zb = z + (DIR < 0 ? first + 1 : first) * ROWS;
    R carry[LR];
#pragma unroll
    for (int r = 0; r < LR; ++r)
        carry[r] = zb[32 * r];
    const int blocks = count / AHEAD;
    if (blocks > 0) {
        R2 rot[AHEAD];
        R col[AHEAD][LR];
        sweep_block_load<AHEAD, STEP, LR>(cs, zb, rot, col);
        for (int blk = 0; blk < blocks; ++blk) {
            const int ahead = blk + 1 < blocks ? AHEAD : 0;
            const R2 *cs_next = cs + ahead;
            const R *zb_next = zb + ahead * STEP;
            R2 rot_next[AHEAD];
            R col_next[AHEAD][LR];
            sweep_block_load<AHEAD, STEP, LR>(cs_next, zb_next, rot_next, col_next);
#pragma unroll
            for (int i = 0; i < AHEAD; ++i) {
                const R c = rot[i].x, s = DIR < 0 ? -rot[i].y : rot[i].y;
#pragma unroll
                for (int r = 0; r < LR; ++r) {
                    zb[i * STEP + 32 * r] = fma(c, carry[r], s * col[i][r]);
                    carry[r] = fma(-s, carry[r], c * col[i][r]); /* one FMA on a chain */
                }
            }
#pragma unroll
            for (int i = 0; i < AHEAD; ++i) {
                rot[i] = rot_next[i];
#pragma unroll
                for (int r = 0; r < LR; ++r)
                    col[i][r] = col_next[i][r];
            }
            cs += AHEAD;
            zb += AHEAD * STEP;
        }
    }
    const int left = count - blocks * AHEAD;
    for (int q = 0; q < left; ++q) {
        const R2 rt = cs[q];
        const R c = rt.x, s = DIR < 0 ? -rt.y : rt.y;
#pragma unroll
        for (int r = 0; r < LR; ++r) {
            const R x = zb[(q + 1) * STEP + 32 * r];
            zb[q * STEP + 32 * r] = fma(c, carry[r], s * x);
            carry[r] = fma(-s, carry[r], c * x);
        }
    }
#pragma unroll
    for (int r = 0; r < LR; ++r)
        zb[left * STEP + 32 * r] = carry[r];
}

/* ---- the chase's progress, as its appliers follow it --------------------------- */

/* ws.qr_state[b] is one 64-bit word: status << 56 | headers << 32 |
 * rotations, zero (EIG_CUDA_QR_LOG_RUNNING, nothing logged) before the
 * launch. The chase's lane 0 publishes it with release semantics after the
 * log entries it counts (and, with a final status, after w, info and the
 * ranks); an applier's lane 0 reads it with acquire semantics and hands it
 * to the warp. Headers and rotations only grow. */
struct qr_log_progress {
    int status, heads, rots;
};

__device__ __forceinline__ qr_log_progress qr_log_decode(unsigned long long v)
{
    qr_log_progress p;
    p.status = (int)(v >> 56);
    p.heads = (int)((v >> 32) & 0xffffffu);
    p.rots = (int)(v & 0xffffffffu);
    return p;
}

/* Lane 0 of the chase: the log entries, headers (and results) that the
 * warp wrote before are visible to any reader of this word (the caller has
 * every writing lane __threadfence() and __syncwarp() first). */
__device__ __forceinline__ void qr_log_publish(unsigned long long *word, int status, int heads,
                                               int rots)
{
    const unsigned long long v = (unsigned long long)status << 56 |
                                 (unsigned long long)heads << 32 | (unsigned)rots;
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(word), "l"(v) : "memory");
}

/* The whole warp: waits until the chase has published at least `heads`
 * headers and `rots` rotations, or a final status, and returns what it
 * published (the same for every lane). */
__device__ __forceinline__ qr_log_progress qr_log_wait(const unsigned long long *word, int heads,
                                                       int rots)
{
    unsigned long long v = 0;
    if ((threadIdx.x & 31) == 0) {
        /* backing off to 2 us: a group logs ~16 len rotations at once, tens
         * of microseconds apart, and every poll takes an issue slot from
         * the chase that shares the SM (run M4) */
        for (unsigned ns = 128;; ns = ns < 2048 ? 2 * ns : ns) {
            asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(word) : "memory");
            const qr_log_progress p = qr_log_decode(v);
            if (p.status != EIG_CUDA_QR_LOG_RUNNING || (p.heads >= heads && p.rots >= rots))
                break;
            __nanosleep(ns);
        }
    }
    v = __shfl_sync(0xffffffffu, v, 0);
    __syncwarp();
    return qr_log_decode(v);
}

/* One warp: applies matrix b's log to rows slice * ROWS .. of Zr (a lane's
 * rows are lane + 32 r) as the chase writes it, then writes them sorted by
 * rank. `space` is the
 * warp's own shared memory (eig_cuda_qr_apply_smem bytes: two chunk
 * buffers, then the slice). A log that ends in a status other than
 * EIG_CUDA_QR_LOG_APPLY leaves Zr alone: bad input or no convergence (the
 * chase wrote info and NaN), or an overflow (the fused kernel redoes the
 * matrix). A staged chunk k + 2 waits until the chase has logged all of it
 * (or finished): the applier then lags at most two chunks behind the chase. */
template <typename R, int ROWS>
__device__ void qr_apply_slice(int n, int slice, int b, int log_cap, int head_cap, int chunk,
                               const eig_cuda_workspace &ws, void *space)
{
    typedef typename eig_cuda_complex<R>::type R2;
    const int tid = threadIdx.x & 31, rows = ROWS;
    const unsigned long long *word = ws.qr_state + b;
    R2 *buf = (R2 *)space; /* [2][chunk] */
    R *zs = (R *)(buf + 2 * chunk); /* [n][rows] */
    const R2 *log = (const R2 *)ws.qr_log + (size_t)b * log_cap;
    const int4 *head = ws.qr_head + (size_t)b * head_cap;

    const int row0 = slice * rows;
    for (int col = 0; col < n; ++col)
        for (int r = tid; r < rows; r += 32)
            zs[col * rows + r] = row0 + r == col ? (R)1 : (R)0;
    qr_log_progress pr = qr_log_wait(word, 0, 2 * chunk);
    if (pr.status > EIG_CUDA_QR_LOG_APPLY)
        return;
    stage_chunk(buf, log, 0, chunk, pr.rots, tid);
    stage_chunk(buf + chunk, log, 1, chunk, pr.rots, tid);
    __pipeline_wait_prior(1);
    __syncwarp();

    R *z = zs + tid;
    int k = 0;   /* the chunk in buf[k & 1] */
    int pos = 0; /* next rotation of the log */
    for (int h = 0;; ++h) {
        if (h >= pr.heads && pr.status == EIG_CUDA_QR_LOG_RUNNING)
            pr = qr_log_wait(word, h + 1, 0);
        if (pr.status > EIG_CUDA_QR_LOG_APPLY || h >= pr.heads)
            break;
        const int4 cur = __ldcg(head + h);
        for (int sw = 0; sw < cur.w; ++sw) {
            int first = cur.x, left = cur.z;
            while (left > 0) {
                if (pos == (k + 1) * chunk) {
                    __syncwarp(); /* every lane is done with chunk k */
                    if (pr.rots < (k + 3) * chunk && pr.status == EIG_CUDA_QR_LOG_RUNNING)
                        pr = qr_log_wait(word, 0, (k + 3) * chunk);
                    stage_chunk(buf + (k & 1) * chunk, log, k + 2, chunk, pr.rots, tid);
                    __pipeline_wait_prior(1); /* chunk k + 1 has landed (this lane's part) */
                    __syncwarp();
                    ++k;
                }
                const int room = (k + 1) * chunk - pos;
                const int take = left < room ? left : room;
                const R2 *cs = buf + (k & 1) * chunk + (pos - k * chunk);
                if (cur.y < 0)
                    apply_sweep_dir<-1, ROWS>(z, cs, take, first);
                else
                    apply_sweep_dir<1, ROWS>(z, cs, take, first);
                first += cur.y * take;
                left -= take;
                pos += take;
            }
        }
    }
    __pipeline_wait_prior(0);
    __syncwarp();
    if (pr.status != EIG_CUDA_QR_LOG_APPLY)
        return;

    /* sorted columns: column i of Zr goes to rank[i] */
    const int *rank = ws.qr_rank + (size_t)b * n;
    R *zr = (R *)ws.zreal + (size_t)b * n * n;
    for (int col = 0; col < n; ++col) {
        R *dst = zr + (size_t)__ldcg(rank + col) * n;
        for (int r = tid; r < rows && row0 + r < n; r += 32)
            dst[row0 + r] = zs[col * rows + r];
    }
}

/* ---- wavefront appliers (run R3) ---------------------------------------------
 *
 * The sweep-after-sweep applier above carries one column per row through
 * every rotation of the log: one dependent FMA chain per row, and a slice of
 * 32 rows fills an SM's shared memory at n = 512 (c128: one warp per SM, ~28
 * cycles a rotation). A multishift group is ms sweeps whose bulges the chase
 * ran at once, bulge j LAG ticks (the chase's QR_BULGE_LAG) behind bulge
 * j - 1; a wavefront applier runs them at once too: ms lanes per row, one
 * bulge each, a __syncwarp per tick, so a group's chain is len + LAG (ms - 1)
 * ticks instead of ms len, and a slice is several such warps. Each warp
 * owns QR_WAVE_ROWS rows of the slice (row-major, stride qr_wave_stride)
 * and follows the log by itself: no warp reads another's rows. */

enum { QR_WAVE_ROWS = EIG_CUDA_QR_WAVE_ROWS };

/* Row stride of a wavefront applier's rows in shared memory: n padded to 8
 * mod 16 doubles (16 mod 32 floats), so that the lanes of one tick (the ms
 * bulges of 32 / ms rows, columns LAG apart) fall in distinct banks (c64
 * with 8 bulges: two-way). */
template <typename R> __host__ __device__ inline int qr_wave_stride(int n)
{
    const int m = sizeof(R) == sizeof(double) ? 16 : 32, want = m / 2;
    return n + ((want - n) % m + m) % m;
}

/* How many ticks ahead a wavefront lane loads the column that a rotation
 * takes in (QR_WAVE_DEPTH: the load is issued at the start of a tick,
 * before the tick's stores, so it has that many whole ticks to land), and
 * the appliers' own lag between bulges: not the chase's, since any lag >= 2
 * applies a group's sweeps in order; loading DEPTH ahead needs DEPTH + 2
 * (apply_group_wave), and 3 or 5 keep the lanes of a tick in distinct banks
 * where 4 would not. Rotations are read from the log in blocks of
 * QR_WAVE_BLOCK ticks (a multiple of the depth: the columns ahead rotate
 * through registers without moves). Run R4 (H200, n = 512 c128, QR phase
 * in one run): depth 1 and lag 3 90.2 ms, depth 2 and lag 5 95.7 ms. */
enum { QR_WAVE_DEPTH = 1, QR_WAVE_LAG = 3, QR_WAVE_BLOCK = 8 };

/* Tick u of a lane's bulge of a wavefront group on its L rows (z, rows
 * RPP P apart; x[d] holds the column that rotation u + d takes in): loads
 * the column of rotation u + D (for rotation 0 also its start column, into
 * carry), then applies rotation rt if 0 <= u <= last. STEADY: the whole
 * warp is inside its bulges, the load in range and no bulge ends in this
 * tick, so nothing is predicated (run R4: the predicates and the loads
 * after the stores were most of a tick's ~45 instructions). */
template <int DIR, int L, int RPP, int D, bool STEADY, typename R, typename R2>
__device__ __forceinline__ void wave_tick(R *z, int P, int u, int last, R2 rt, R (&carry)[L],
                                          R (&x)[D][L])
{
    const int ud = u + D;
    const bool load = STEADY || (ud >= 0 && ud <= last);
    R xn[L];
#pragma unroll
    for (int p = 0; p < L; ++p) {
        if (!STEADY && ud == 0)
            carry[p] = z[p * RPP * P];
        xn[p] = load ? z[p * RPP * P + DIR * (ud + 1)] : (R)0;
    }
    if (STEADY || (u >= 0 && u <= last)) {
        const R c = rt.x, s = DIR < 0 ? -rt.y : rt.y;
#pragma unroll
        for (int p = 0; p < L; ++p) {
            R *zp = z + p * RPP * P + DIR * u;
            zp[0] = fma(c, carry[p], s * x[0][p]);
            carry[p] = fma(-s, carry[p], c * x[0][p]); /* one FMA on a chain */
            if (!STEADY && u == last)
                zp[DIR] = carry[p];
        }
    }
#pragma unroll
    for (int p = 0; p < L; ++p) {
#pragma unroll
        for (int d = 0; d + 1 < D; ++d)
            x[d][p] = x[d + 1][p];
        x[D - 1][p] = xn[p];
    }
    __syncwarp();
}

/* QR_WAVE_BLOCK ticks from u with the rotations rot, loading the next
 * block's from cs (a lane's bulge) meanwhile: a tick must not wait on a
 * global load (run R3: with the rotations two ticks ahead, moved along
 * every tick, 254 ms at n = 512 c128 against 129). */
template <int DIR, int L, int RPP, int D, bool STEADY, typename R, typename R2>
__device__ __forceinline__ void wave_block(R *z, int P, const R2 *cs, int u, int last,
                                           R2 (&rot)[QR_WAVE_BLOCK], R (&carry)[L],
                                           R (&x)[D][L])
{
    enum { A = QR_WAVE_BLOCK };
    R2 next[A];
#pragma unroll
    for (int i = 0; i < A; ++i)
        next[i] = cs[STEADY ? min(u + A + i, last) : min(max(u + A + i, 0), last)];
#pragma unroll
    for (int i = 0; i < A; ++i)
        wave_tick<DIR, L, RPP, D, STEADY>(z, P, u + i, last, rot[i], carry, x);
#pragma unroll
    for (int i = 0; i < A; ++i)
        rot[i] = next[i];
}

/* One multishift group on a warp's QR_WAVE_ROWS rows (zw, row stride P):
 * ms = MS sweeps of len rotations in direction DIR from pivot `first`,
 * bulge j's rotations at gl[j len ..] (the group equals its sweeps done in
 * order). Lane (r, j) = (lane / MS, lane % MS) applies bulge j to rows
 * r + p 32 / MS, rotation u in tick LAG j + u (wave_tick). Valid: rotation
 * u takes in column u + 1, which bulge j - 1 wrote last (its rotation
 * u + 1) in tick LAG (j - 1) + u + 1, so it may be loaded from tick
 * LAG j + u - D on when LAG >= D + 2; the column that rotation u writes is
 * next read by bulge j + 1, D ticks before its rotation u - 1, in tick
 * LAG (j + 1) + u - 1 - D > LAG j + u likewise; no column is read and
 * written in one tick. The ticks run in three stretches: the bulges
 * starting, all of them inside (STEADY), the bulges ending. */
template <int DIR, int MS, typename R, typename R2>
__device__ __forceinline__ void apply_group_wave(R *zw, int P, const R2 *gl, int first, int len)
{
    enum { RPP = 32 / MS, L = QR_WAVE_ROWS / RPP, D = QR_WAVE_DEPTH, LAG = QR_WAVE_LAG };
    enum { A = QR_WAVE_BLOCK };
    static_assert(LAG >= D + 2, "a column is loaded D ticks ahead of its rotation");
    static_assert(A % D == 0, "the columns ahead come back to their registers every block");
    const int lane = threadIdx.x & 31, j = lane % MS;
    R *z = zw + (lane / MS) * P + (DIR < 0 ? first + 1 : first);
    const R2 *cs = gl + j * len;
    const int last = len - 1, ramp = LAG * (MS - 1), ticks = len + ramp;
    int u = -LAG * j;
    R carry[L], x[D][L];
#pragma unroll
    for (int p = 0; p < L; ++p) {
        carry[p] = j == 0 ? z[p * RPP * P] : (R)0;
#pragma unroll
        for (int d = 0; d < D; ++d)
            x[d][p] = j == 0 && d <= last ? z[p * RPP * P + DIR * (d + 1)] : (R)0;
    }
    R2 rot[A];
#pragma unroll
    for (int i = 0; i < A; ++i)
        rot[i] = cs[min(max(u + i, 0), last)];
    /* ticks past the last are no-ops (every bulge is done) */
    int t = 0;
    for (; t < ticks && t < ramp; t += A, u += A)
        wave_block<DIR, L, RPP, D, false>(z, P, cs, u, last, rot, carry, x);
    for (; t + A + D <= len; t += A, u += A) /* lane 0's u = t, lane ms - 1's >= 0 */
        wave_block<DIR, L, RPP, D, true>(z, P, cs, u, last, rot, carry, x);
    for (; t < ticks; t += A, u += A)
        wave_block<DIR, L, RPP, D, false>(z, P, cs, u, last, rot, carry, x);
}

/* The single sweeps of event cur (cur.w sweeps of cur.z rotations in
 * direction DIR from pivot cur.x, consecutive in cs: single-shift sweeps
 * and 2 x 2 rotations) on a warp's rows, one row per lane below
 * QR_WAVE_ROWS. The rotations come from the log 32 at a time, one per lane,
 * and reach the rows' lanes by shuffles (run R4: read from global memory
 * one rotation ahead, every rotation waited on the log's latency); the
 * other lanes only hold rotations (their updates are never stored). The
 * column a rotation takes in is loaded before the previous one's store. */
template <int DIR, typename R, typename R2>
__device__ __forceinline__ void apply_sweeps_rows(R *zw, int P, const R2 *cs, int4 cur)
{
    const int lane = threadIdx.x & 31, len = cur.z;
    const bool row = lane < QR_WAVE_ROWS;
    R *z = zw + (row ? lane : 0) * P + (DIR < 0 ? cur.x + 1 : cur.x);
    for (int sw = 0; sw < cur.w; ++sw, cs += len) {
        R2 held = lane < len ? cs[lane] : R2{};
        R carry = row ? z[0] : (R)0, x = row ? z[DIR] : (R)0;
        for (int q = 0; q < len; ++q) {
            const int k = q & 31;
            const R c = __shfl_sync(0xffffffffu, held.x, k);
            const R sn = __shfl_sync(0xffffffffu, held.y, k);
            if (k == 31)
                held = q + 1 + lane < len ? cs[q + 1 + lane] : R2{};
            const R s = DIR < 0 ? -sn : sn;
            const R xn = row && q + 1 < len ? z[DIR * (q + 2)] : (R)0;
            if (row)
                z[DIR * q] = fma(c, carry, s * x);
            carry = fma(-s, carry, c * x);
            x = xn;
        }
        if (row)
            z[DIR * len] = carry;
        __syncwarp();
    }
}

/* One event of the log (header cur, rotations at cs) on a warp's rows. */
template <int DIR, typename R, typename R2>
__device__ __forceinline__ void apply_event_wave(R *zw, int P, const R2 *cs, int4 cur)
{
    switch (cur.w) {
    case 8:
        apply_group_wave<DIR, 8>(zw, P, cs, cur.x, cur.z);
        break;
    case 16:
        apply_group_wave<DIR, 16>(zw, P, cs, cur.x, cur.z);
        break;
    case 32:
        apply_group_wave<DIR, 32>(zw, P, cs, cur.x, cur.z);
        break;
    default:
        apply_sweeps_rows<DIR>(zw, P, cs, cur);
    }
}

/* Applier warp `warp` of a wavefront CTA of `warps` appliers: applies
 * matrix b's log to its QR_WAVE_ROWS rows of slice `slice` (rows
 * (slice warps + warp) QR_WAVE_ROWS ..) as the chase writes it, then
 * writes them sorted by rank. `space` is the CTA's applier shared memory (eig_cuda_qr_wave_smem).
 * The rotations are read from the log in global memory (an event's
 * rotations are published with its header); the same statuses as
 * qr_apply_slice. */
template <typename R>
__device__ void qr_apply_wave(int n, int warps, int slice, int b, int log_cap, int head_cap,
                              const eig_cuda_workspace &ws, void *space)
{
    typedef typename eig_cuda_complex<R>::type R2;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, P = qr_wave_stride<R>(n);
    const int row0 = (slice * warps + warp) * QR_WAVE_ROWS;
    if (row0 >= n)
        return;
    R *zw = (R *)space + (size_t)warp * QR_WAVE_ROWS * P;
    for (int i = lane; i < QR_WAVE_ROWS * P; i += 32)
        zw[i] = row0 + i / P == i % P ? (R)1 : (R)0;
    __syncwarp();
    const unsigned long long *word = ws.qr_state + b;
    const R2 *log = (const R2 *)ws.qr_log + (size_t)b * log_cap;
    const int4 *head = ws.qr_head + (size_t)b * head_cap;
    qr_log_progress pr = qr_log_wait(word, 1, 0);
    int pos = 0, ahead = -1; /* the header in next, read during the event before */
    int4 next = make_int4(0, 0, 0, 0);
    for (int h = 0;; ++h) {
        if (h >= pr.heads && pr.status == EIG_CUDA_QR_LOG_RUNNING)
            pr = qr_log_wait(word, h + 1, 0);
        if (pr.status > EIG_CUDA_QR_LOG_APPLY || h >= pr.heads)
            break;
        const int4 cur = ahead == h ? next : __ldcg(head + h);
        if (h + 1 < pr.heads) {
            next = __ldcg(head + h + 1);
            ahead = h + 1;
        }
        if (cur.y < 0)
            apply_event_wave<-1>(zw, P, log + pos, cur);
        else
            apply_event_wave<1>(zw, P, log + pos, cur);
        pos += cur.z * cur.w;
    }
    if (pr.status != EIG_CUDA_QR_LOG_APPLY)
        return;

    /* sorted columns: column i of Zr goes to rank[i] (lanes: 8 rows x 4
     * columns, 64-byte runs of a column) */
    const int *rank = ws.qr_rank + (size_t)b * n;
    R *zr = (R *)ws.zreal + (size_t)b * n * n;
    for (int i = lane; i < QR_WAVE_ROWS * n; i += 32) {
        const int r = i % QR_WAVE_ROWS, col = i / QR_WAVE_ROWS;
        if (row0 + r < n)
            zr[(size_t)__ldcg(rank + col) * n + row0 + r] = zw[r * P + col];
    }
}

} // namespace
