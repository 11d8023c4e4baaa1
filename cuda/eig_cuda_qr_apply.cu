/*
 * eig_cuda_qr_apply.cu - logged QR path, part (b): applies the rotation log
 * that qr_chase_kernel (eig_cuda_qr.cu) wrote for each matrix to the real
 * eigenvector matrix Zr of the tridiagonal, then writes Zr's columns in
 * ascending eigenvalue order.
 *
 * Grid (row slices, matrices): the slices of one matrix are neighbours in
 * launch order, so they stream the same log through L2 at about the same
 * time. CTA = `rows` threads, one row of the slice each; the slice lives in
 * shared memory column-major ([n][rows]: conflict-free). The log is staged in
 * chunks of `chunk` rotations into two shared buffers by cp.async (16-byte
 * copies, coalesced), the next chunk loading while the current one is
 * applied; a sweep that crosses a chunk boundary is applied in two parts
 * (exactly equivalent). Every thread walks the same headers, so the control
 * flow and the barriers are uniform over the CTA.
 */
#include <cuda_pipeline.h>

#include "eig_cuda_internal.cuh"

namespace {

/* Starts the copy of log chunk k (rotations k*chunk .. (k+1)*chunk-1, those
 * below total only) into buf; one commit group per chunk, even when empty. */
template <typename R2>
__device__ __forceinline__ void stage_chunk(R2 *buf, const R2 *log, int k, int chunk, int total,
                                            int tid, int nt)
{
    const int per = 16 / (int)sizeof(R2); /* rotations per 16-byte copy */
    const int base = k * chunk;
    const int left = total - base < chunk ? total - base : chunk;
    const int pieces = left > 0 ? (left + per - 1) / per : 0;
    for (int i = tid; i < pieces; i += nt)
        __pipeline_memcpy_async(buf + i * per, log + base + i * per, 16);
    __pipeline_commit();
}

/* One sweep (or a part of one) on this thread's row, as eig_cuda_apply_sweep
 * but written for latency: the columns and rotations of the next four
 * rotations are loaded while the current four are applied, so the loop
 * waits on the carried column's FMA chain, not on shared-memory latency
 * (the columns ahead are not touched by the sweep until their turn). In
 * the direction of the sweep, column base carries; rotation q takes column
 * base + dir (q + 1) in and writes column base + dir q. */
template <typename R, typename R2>
__device__ __forceinline__ void apply_sweep_ahead(R *z, int rows, const R2 *cs, int count,
                                                  int first, int dir)
{
    enum { AHEAD = 4 };
    if (count <= 0)
        return;
    const int step = dir * rows;
    R *zb = z + (dir < 0 ? first + 1 : first) * rows;
    const R sg = dir < 0 ? (R)-1 : (R)1; /* QL logs (c, -s) */
    R carry = zb[0];
    const int blocks = count / AHEAD;
    R2 rot[AHEAD];
    R col[AHEAD];
    if (blocks > 0) {
#pragma unroll
        for (int i = 0; i < AHEAD; ++i) {
            rot[i] = cs[i];
            col[i] = zb[(i + 1) * step];
        }
    }
    for (int blk = 0; blk < blocks; ++blk) {
        const int q0 = blk * AHEAD;
        const bool more = blk + 1 < blocks;
        R2 rot_next[AHEAD];
        R col_next[AHEAD];
#pragma unroll
        for (int i = 0; i < AHEAD; ++i) {
            rot_next[i] = more ? cs[q0 + AHEAD + i] : rot[i];
            col_next[i] = more ? zb[(q0 + AHEAD + i + 1) * step] : col[i];
        }
#pragma unroll
        for (int i = 0; i < AHEAD; ++i) {
            const R c = rot[i].x, s = sg * rot[i].y;
            zb[(q0 + i) * step] = fma(c, carry, s * col[i]);
            carry = fma(-s, carry, c * col[i]); /* one FMA on the chain */
        }
#pragma unroll
        for (int i = 0; i < AHEAD; ++i) {
            rot[i] = rot_next[i];
            col[i] = col_next[i];
        }
    }
    for (int q = blocks * AHEAD; q < count; ++q) {
        const R2 r = cs[q];
        const R x = zb[(q + 1) * step];
        const R c = r.x, s = sg * r.y;
        zb[q * step] = fma(c, carry, s * x);
        carry = fma(-s, carry, c * x);
    }
    zb[count * step] = carry;
}

template <typename R>
__global__ void __launch_bounds__(128)
    qr_apply_kernel(int n, int log_cap, int head_cap, int chunk, eig_cuda_workspace ws)
{
    typedef typename eig_cuda_complex<R>::type R2;
    const int slice = blockIdx.x, b = blockIdx.y, tid = threadIdx.x, rows = blockDim.x;
    const int *state = ws.qr_state + 4 * b;
    if (state[0] != EIG_CUDA_QR_LOG_APPLY)
        return;
    const int nh = state[1], total = state[2];

    extern __shared__ double2 smem_raw[];
    R2 *buf = (R2 *)smem_raw; /* [2][chunk] */
    R *zs = (R *)(buf + 2 * chunk); /* [n][rows] */
    const R2 *log = (const R2 *)ws.qr_log + (size_t)b * log_cap;
    const int4 *head = ws.qr_head + (size_t)b * head_cap;

    stage_chunk(buf, log, 0, chunk, total, tid, rows);
    stage_chunk(buf + chunk, log, 1, chunk, total, tid, rows);
    const int row0 = slice * rows;
    for (int col = 0; col < n; ++col)
        zs[col * rows + tid] = row0 + tid == col ? (R)1 : (R)0;
    __pipeline_wait_prior(1);
    __syncthreads();

    R *z = zs + tid;
    int k = 0;        /* the chunk in buf[k & 1] */
    int pos = 0;      /* next rotation of the log */
    int4 hd = nh > 0 ? head[0] : make_int4(0, 0, 0, 0);
    for (int h = 0; h < nh; ++h) {
        const int4 cur = hd;
        if (h + 1 < nh)
            hd = head[h + 1]; /* next header: its latency hides behind this one */
        for (int sw = 0; sw < cur.w; ++sw) {
            int first = cur.x, left = cur.z;
            while (left > 0) {
                if (pos == (k + 1) * chunk) {
                    __syncthreads(); /* everyone is done with chunk k */
                    stage_chunk(buf + (k & 1) * chunk, log, k + 2, chunk, total, tid, rows);
                    __pipeline_wait_prior(1); /* chunk k + 1 has landed (this thread's part) */
                    __syncthreads();
                    ++k;
                }
                const int room = (k + 1) * chunk - pos;
                const int take = left < room ? left : room;
                apply_sweep_ahead(z, rows, buf + (k & 1) * chunk + (pos - k * chunk), take,
                                  first, cur.y);
                first += cur.y * take;
                left -= take;
                pos += take;
            }
        }
    }
    __pipeline_wait_prior(0);
    __syncthreads();

    /* sorted columns: column i of Zr goes to rank[i] */
    const int *rank = ws.qr_rank + (size_t)b * n;
    R *zr = (R *)ws.zreal + (size_t)b * n * n;
    if (row0 + tid < n)
        for (int col = 0; col < n; ++col)
            zr[(size_t)(row0 + tid) + (size_t)rank[col] * n] = zs[col * rows + tid];
}

} // namespace

template <typename R> size_t eig_cuda_qr_apply_smem(int n, int rows, int chunk)
{
    typedef typename eig_cuda_complex<R>::type R2;
    return 2 * (size_t)chunk * sizeof(R2) + (size_t)n * rows * sizeof(R);
}

template <typename R> cudaError_t eig_cuda_qr_apply_set_smem(size_t bytes)
{
    return cudaFuncSetAttribute(qr_apply_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)bytes);
}

template <typename R>
cudaError_t eig_cuda_qr_apply_launch(const eig_cuda_qr_config *cfg, int n, int count,
                                     const eig_cuda_workspace *ws, cudaStream_t stream)
{
    dim3 grid((n + cfg->apply_rows - 1) / cfg->apply_rows, count);
    qr_apply_kernel<R><<<grid, cfg->apply_rows, cfg->apply_smem, stream>>>(
        n, cfg->log_cap, cfg->head_cap, cfg->apply_chunk, *ws);
    return cudaGetLastError();
}

#define EIG_CUDA_QR_APPLY_INSTANTIATE(R)                                                          \
    template size_t eig_cuda_qr_apply_smem<R>(int, int, int);                                    \
    template cudaError_t eig_cuda_qr_apply_set_smem<R>(size_t);                                  \
    template cudaError_t eig_cuda_qr_apply_launch<R>(const eig_cuda_qr_config *, int, int,       \
                                                     const eig_cuda_workspace *, cudaStream_t);
EIG_CUDA_QR_APPLY_INSTANTIATE(float)
EIG_CUDA_QR_APPLY_INSTANTIATE(double)
