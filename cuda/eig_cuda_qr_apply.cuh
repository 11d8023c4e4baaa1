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

} // namespace
