/*
 * eig_cuda_plan.cu - the cuda backend's plan: validation, kernel choice,
 * workspace (device and pinned host, all allocated here), the two execute
 * entry points of eig/eig_backend_cuda.h and the phase launcher of
 * eig_cuda_phases.h that the device entry point runs.
 *
 * Every CUDA call is checked; failures become EIG_EDEVICE (EIG_ENODEVICE when
 * there is no usable device). The plan's device is made current for each call
 * and the caller's current device is restored afterwards.
 */
#include <cstdlib>
#include <cstring>

#include "eig_backend_cuda.h"
#include "eig_cuda_internal.cuh"
#include "eig_cuda_phases.h"

/* Matrices per launch group: the per-matrix workspace times the group size
 * stays under an eighth of the device's memory, and under 1 GiB on a device
 * of less than 8 GiB, so any batch count works with bounded device memory.
 * (A fixed 1 GiB split 180 matrices of 512 in c128, 18 MB each, into four
 * launch groups of at most 56 matrices: 56 of 132 SMs busy in the
 * tridiagonalization.) */
static const size_t EIG_CUDA_WORKSPACE_MIN_BUDGET = (size_t)1 << 30;

/* Smallest n whose back-transformation takes the gemm path (cuBLAS products
 * of blocks of 32 reflectors) when the plan chooses (docs/gpu.md, run R1,
 * H200, 180 matrices: c128 back 0.252 -> 0.233 ms at n = 96, 0.525 -> 0.399
 * at 128, 81.7 -> 10.6 at 512; c64 0.151 -> 0.174 at 96, 0.276 -> 0.268 at
 * 128, 20.4 -> 6.9 at 512). */
static const int EIG_CUDA_BACK_GEMM_MIN_N_C128 = 96;
static const int EIG_CUDA_BACK_GEMM_MIN_N_C64 = 128;
/* ... for batches of fewer matrices than SMs only from this n on */
static const int EIG_CUDA_BACK_GEMM_ANY_BATCH_N = 192;

/* The cuBLAS workspace of a gemm-path plan (NVIDIA's recommendation for
 * Hopper; the batched products need less). */
static const size_t EIG_CUDA_BLAS_WORKSPACE = (size_t)32 << 20;

/* Smallest n tridiagonalized by panels when the plan chooses (docs/gpu.md,
 * run R2, H200, 180 matrices, tridiag sweep -> panel: c128 9.24 -> 6.91 ms at
 * n = 256, 101.8 -> 45.0 at 512; c64 4.25 -> 4.42 at 256, 22.0 -> 13.7 at
 * 384). */
static const int EIG_CUDA_PANEL_MIN_N_C128 = 256;
static const int EIG_CUDA_PANEL_MIN_N_C64 = 384;

/* Smallest n whose vectors jobs take the logged QR path (docs/gpu.md, run
 * M4: since its appliers follow the chase in the same launch it is faster
 * above n = 64: at 80 qr 1.09 -> 0.87 ms (c128), 0.73 -> 0.52 (c64), at 128
 * 1.97 -> 1.49 and 1.31 -> 0.90; at 64 the fused kernel's single-shift
 * sweeps are as fast, 0.39 against 0.42 ms in c64). */
static const int EIG_CUDA_QR_LOG_MIN_N = 65;

/* Smallest n whose complex double vectors jobs take the wavefront appliers
 * with groups of 16 bulges (docs/gpu.md, run R3, H200, 180 matrices, qr
 * phase logged (8 bulges) -> wavefront (16): 128.8 -> 106.6 ms at
 * n = 512, but 32.5 -> 35.5 at 384; run R4, with slices of 64 rows
 * (eig_cuda_qr_wave_rows): 32.4 -> 31.7 at 384, 20.8 -> 21.4 at 320; the
 * boundary halfway between the measured sizes). */
static const int EIG_CUDA_QR_WAVE_MIN_N_C128 = 352;

/* The same for complex float (run R4, H200, 180 matrices, one run, qr
 * phase logged -> wavefront: 4.47 -> 5.84 ms at n = 256, 16.26 -> 14.59
 * at 384, 33.39 -> 29.27 at 512, once its ticks ran unpredicated). */
static const int EIG_CUDA_QR_WAVE_MIN_N_C64 = 320;

/* Smallest n whose c128 logged QR path chases groups of 8 bulges (16 below). */
static const int EIG_CUDA_QR_FEW_BULGES_MIN_N = 384;

/* Shared memory a logged-path CTA takes besides its dynamic part: the
 * chase's static arrays (~1 KB) and the driver's reserve (1 KB). */
static const size_t EIG_CUDA_QR_LOG_CTA_EXTRA = 2048;

struct eig_cuda_plan {
    eig_plan_params p;
    size_t chunk; /* matrices per launch group */
    eig_cuda_workspace ws;
    eig_cuda_tridiag_config tri;
    eig_cuda_qr_config qr;
    eig_cuda_back_config back;
    eig_cuda_blas blas; /* the gemm back path and the panel path only */
    /* eig_cuda_plan_execute only (none of it in a device_only plan): */
    cudaStream_t stream;
    size_t a_bytes, w_bytes, z_bytes, info_bytes;
    void *h_a, *h_w, *h_z; /* pinned staging */
    int *h_info;
    void *d_a, *d_w, *d_z; /* device copies */
    int *d_info;
};

static eig_error eig_cuda_error(cudaError_t e)
{
    if (e == cudaSuccess)
        return EIG_OK;
    (void)cudaGetLastError(); /* clear a non-sticky error */
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
        e == cudaErrorInvalidDevice || e == cudaErrorDevicesUnavailable)
        return EIG_ENODEVICE;
    return EIG_EDEVICE;
}

#define EIG_CUDA_TRY(call)                                                                        \
    do {                                                                                          \
        eig_error eig_try_e_ = eig_cuda_error(call);                                              \
        if (eig_try_e_ != EIG_OK)                                                                 \
            return eig_try_e_;                                                                    \
    } while (0)

/* Makes `device` current for the lifetime of the guard, restoring the
 * caller's device on exit. */
struct eig_cuda_device_guard {
    int saved;
    bool ok;
    cudaError_t err;
    explicit eig_cuda_device_guard(int device) : saved(-1), ok(false), err(cudaSuccess)
    {
        err = cudaGetDevice(&saved);
        if (err != cudaSuccess)
            return;
        if (saved != device) {
            err = cudaSetDevice(device);
            if (err != cudaSuccess)
                return;
        }
        ok = true;
    }
    ~eig_cuda_device_guard()
    {
        if (ok && saved >= 0)
            (void)cudaSetDevice(saved);
    }
};

extern "C" int eig_cuda_runtime_device_count(void)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

/* Rows per wavefront applier CTA. Their CTA fills an SM's shared memory
 * at the large complex double sizes, so more rows are more applier warps
 * on the SM: the most of 64, 48, 32 whose CTA fits (run R4, H200, 180
 * matrices, qr phase: n = 512, 32 -> 48 rows 86.5 -> 70.4 ms; n = 384,
 * 40 -> 48 rows 38.5 -> 34.1 in one run, 64 rows 31.7). Complex float
 * keeps 32: three CTAs of 32 rows share an SM at n = 512 (qr 29.5 ms; 48
 * rows, two CTAs: 32.5). */
template <typename R> static int eig_cuda_qr_wave_rows(int n, size_t chase_smem, int optin)
{
    const int widest = sizeof(R) == sizeof(double) ? 64 : 32;
    for (int rows = widest; rows > 32; rows -= 16)
        if (eig_cuda_qr_wave_smem<R>(n, rows) + chase_smem + EIG_CUDA_QR_LOG_CTA_EXTRA <=
            (size_t)optin)
            return rows;
    return 32;
}

/* QR phase, logged path (vectors jobs): one chase per matrix writes its
 * rotation log (log_cap rotations: 3 n^2 up to n = 256, 2 n^2 above; radar
 * input needs 1.1-1.8 n^2, the LAPACK test types up to 2.6 n^2; a matrix
 * that would overflow takes the fused kernel), and in the same launch
 * appliers of 32- or 64-row slices follow it, the log staged through two
 * shared buffers.
 * The plan's tuning (eig.h, eig_cuda_tuning) may force either path, set the
 * log capacity (tests of the overflow fallback) and the smallest block order
 * of a multishift group; its zeros keep the choices below. */
template <typename R>
static void eig_cuda_qr_configure_log(eig_cuda_qr_config *qr, int n, bool vectors, int optin,
                                      const eig_cuda_tuning *tuning)
{
    typedef typename eig_cuda_complex<R>::type C;
    /* n <= 64: single-shift sweeps only (run L1: c128 qr 0.80 -> 0.62 ms,
     * c64 0.58 -> 0.41 at n = 64); above, multishift groups (0 = the
     * kernel's default block order) */
    qr->group_min = tuning->qr_group_min > 0 ? tuning->qr_group_min : n <= 64 ? n + 1 : 0;
    bool logged = vectors && n >= EIG_CUDA_QR_LOG_MIN_N;
    if (tuning->qr_path == EIG_CUDA_QR_PATH_FUSED)
        logged = false;
    if (tuning->qr_path == EIG_CUDA_QR_PATH_LOGGED || tuning->qr_path == EIG_CUDA_QR_PATH_WAVEFRONT)
        logged = vectors;
    const int wave_min_n = sizeof(R) == sizeof(double) ? EIG_CUDA_QR_WAVE_MIN_N_C128
                                                       : EIG_CUDA_QR_WAVE_MIN_N_C64;
    qr->wave = tuning->qr_path == EIG_CUDA_QR_PATH_WAVEFRONT ||
               (tuning->qr_path == EIG_CUDA_QR_PATH_AUTO && n >= wave_min_n);
    const size_t nn = (size_t)n * n;
    const size_t cap =
        tuning->qr_log_cap > 0 ? (size_t)tuning->qr_log_cap : (n <= 256 ? 3 : 2) * nn;
    qr->log_cap = (int)((cap + 63) / 64 * 64); /* 16-byte aligned per matrix */
    qr->head_cap = 4 * n + 16;
    /* Appliers of 64 rows (two per lane: run M4, c128 n = 128 qr 1.92 ->
     * 1.49 ms against 32) where two CTAs still fit an SM; else 32 (c128
     * n = 256: one 132 KB CTA per SM would start only 132 of 180 chases,
     * qr 9.8 -> 15.9 ms). 2 KB log chunks (768 bytes cost more staging
     * than they gained). */
    qr->apply_chunk = 2048 / (int)sizeof(C);
    qr->chase_smem = eig_cuda_qr_chase_smem<R>(n);
    qr->apply_rows = 64;
    qr->apply_smem = eig_cuda_qr_apply_smem<R>(n, qr->apply_rows, qr->apply_chunk);
    if (qr->wave) {
        qr->apply_rows = eig_cuda_qr_wave_rows<R>(n, qr->chase_smem, optin);
        qr->apply_smem = eig_cuda_qr_wave_smem<R>(n, qr->apply_rows);
    } else if (2 * (qr->apply_smem + qr->chase_smem + EIG_CUDA_QR_LOG_CTA_EXTRA) > (size_t)optin) {
        qr->apply_rows = 32;
        qr->apply_smem = eig_cuda_qr_apply_smem<R>(n, qr->apply_rows, qr->apply_chunk);
    }
    qr->logged = logged && qr->apply_smem + qr->chase_smem <= (size_t)optin;
    qr->wave = qr->wave && qr->logged;
    /* Bulges per group and the shift solve (run M1, H100, n = 96..512): 16
     * bulges with lane-parallel shifts where no consumer warps share the
     * chase's SM (values-only: c64 qr 1.16 -> 0.91 ms at n = 128; logged
     * path: c64 n = 256 8.10 -> 6.84); the fused vectors kernel keeps 8
     * (16 took 1.98 ms against 1.53 at c64 n = 128: the consumers are the
     * bound there), and at c128 the serial shift solve (the parallel one
     * took 2.39 ms against 2.23; run M3: 2.21 against 1.97 ms, and the
     * serial one for 16-bulge groups 1.22 against 1.10 values-only). */
    const bool fused_vectors = vectors && !qr->logged;
    /* run R1 (H200): the c128 logged path from n = 384 is bound by its
     * appliers, and 8 bulges log fewer rotations (1.6 n^2 against 1.8 n^2):
     * qr 35.2 -> 32.6 ms at n = 384, 140.0 -> 129.1 at 512 (c64 unchanged) */
    /* run R3: the wavefront appliers run a group's bulges at once, so more
     * bulges are more parallel work for them (16 rather than 8 at n = 512
     * c128: qr 125.6 -> 106.6 ms) */
    const bool few_rotations = fused_vectors || (qr->logged && !qr->wave &&
                                                 sizeof(R) == sizeof(double) &&
                                                 n >= EIG_CUDA_QR_FEW_BULGES_MIN_N);
    qr->bulges = tuning->qr_bulges > 0 ? tuning->qr_bulges : few_rotations ? 8 : 16;
    qr->serial_shifts = fused_vectors && sizeof(R) == sizeof(double);
}

/* Columns reduced by panels (a multiple of EIG_CUDA_PANEL_NB): when the
 * plan chooses, from min_n the fewest panels that leave the
 * tridiag kernel a trailing block of at most smem_order (it runs wholly in
 * shared memory); when forced, every panel that leaves at least 3 columns
 * (the panels' boundaries at small n, for tests). The panel kernel keeps
 * one row per thread: n <= EIG_CUDA_N_MAX = 512 threads. */
static int eig_cuda_panel_end(int n, int smem_order, int min_n, eig_cuda_tridiag_path path)
{
    const int most = (n - 3) / EIG_CUDA_PANEL_NB * EIG_CUDA_PANEL_NB;
    if (path == EIG_CUDA_TRIDIAG_PATH_SWEEP || n < 3 + EIG_CUDA_PANEL_NB)
        return 0;
    if (path == EIG_CUDA_TRIDIAG_PATH_PANEL)
        return n - most <= smem_order ? most : 0;
    if (n < min_n || n <= smem_order)
        return 0;
    const int fewest = (n - smem_order + EIG_CUDA_PANEL_NB - 1) / EIG_CUDA_PANEL_NB *
                       EIG_CUDA_PANEL_NB;
    return fewest <= most ? fewest : 0;
}

/* Kernel configurations for one precision; EIG_EUNSUPPORTED when a kernel's
 * shared memory does not fit the device's opt-in limit. */
template <typename R> static eig_error eig_cuda_plan_configure(eig_cuda_plan *plan, int optin)
{
    typedef typename eig_cuda_complex<R>::type C;
    const int n = plan->p.n;
    const bool vectors = plan->p.job == EIG_JOB_VECTORS;

    /* tridiag: as large a trailing block in shared memory as fits; half the
     * opt-in limit (two CTAs per SM: 180 matrices in one wave on 132 SMs)
     * when that leaves at most n/2 rows and columns to global memory (only
     * their L-shaped part is there: c128 n = 128 runs one wave with 50) and
     * the batch does not fit one CTA per SM anyway (run M4: at batch 18 the
     * whole block in shared memory is faster) */
    eig_cuda_tridiag_config *tri = &plan->tri;
    tri->threads = 512;
    const size_t fixed = eig_cuda_tridiag_smem<R>(n, tri->threads, 0);
    if (fixed >= (size_t)optin)
        return EIG_EUNSUPPORTED;
    auto largest_order = [&](size_t budget) {
        int o = 1;
        while (o < n && (size_t)(o + 1) * (o + 1) * sizeof(C) + fixed <= budget)
            ++o;
        return o;
    };
    int order = largest_order((size_t)optin);
    const int half = largest_order((size_t)optin / 2 - 1024);
    if (n - half <= n / 2 && plan->p.batch > plan->qr.sms)
        order = half;
    if (order < 3 && n > order)
        return EIG_EUNSUPPORTED;
    tri->smem_order = order;
    tri->smem = eig_cuda_tridiag_smem<R>(n, tri->threads, order);
    tri->two_per_sm = tri->smem <= (size_t)optin / 2 - 1024;
    tri->panel_end = eig_cuda_panel_end(
        n, order,
        sizeof(R) == sizeof(double) ? EIG_CUDA_PANEL_MIN_N_C128 : EIG_CUDA_PANEL_MIN_N_C64,
        plan->p.cuda.tridiag_path);

    eig_cuda_qr_config *qr = &plan->qr;
    /* 64 rows per CTA up to n = 128 (180 matrices of 128 in c128: 360 CTAs of
     * 72 KB, one wave on 132 SMs), 32 rows above (the Zr slice must fit) */
    qr->consumer_warps = vectors ? (n <= 128 ? 2 : 1) : 0;
    qr->row_chunks = vectors ? (n + 32 * qr->consumer_warps - 1) / (32 * qr->consumer_warps) : 1;
    qr->smem = eig_cuda_qr_smem<R>(n, qr->consumer_warps);
    if (qr->smem > (size_t)optin)
        return EIG_EUNSUPPORTED;
    eig_cuda_qr_configure_log<R>(qr, n, vectors, optin, &plan->p.cuda);

    if (!eig_cuda_back_choose<R>(n, optin, &plan->back))
        return EIG_EUNSUPPORTED;
    const eig_cuda_back_path back_path = plan->p.cuda.back_path;
    /* the gemm path's ~4 n/32 launches cost more than the slab kernel's
     * single wave below one matrix per SM (batch 18, n = 128: back 0.096 ->
     * 0.123 ms c128, 0.071 -> 0.114 c64) */
    const int gemm_min = sizeof(R) == sizeof(double) ? EIG_CUDA_BACK_GEMM_MIN_N_C128
                                                     : EIG_CUDA_BACK_GEMM_MIN_N_C64;
    const bool gemm_pays = n >= EIG_CUDA_BACK_GEMM_ANY_BATCH_N ||
                           (n >= gemm_min && plan->p.batch >= plan->qr.sms);
    plan->back.gemm = vectors && (back_path == EIG_CUDA_BACK_PATH_GEMM ||
                                  (back_path == EIG_CUDA_BACK_PATH_AUTO && gemm_pays));
    plan->back.gemm_per = plan->back.gemm ? eig_cuda_back_gemm_per(n) : 0;

    EIG_CUDA_TRY(eig_cuda_tridiag_set_smem<R>(tri->smem));
    EIG_CUDA_TRY(eig_cuda_qr_set_smem<R>(qr->consumer_warps, qr->smem));
    if (qr->logged)
        EIG_CUDA_TRY(eig_cuda_qr_log_set_smem<R>(qr));
    if (vectors)
        EIG_CUDA_TRY(eig_cuda_back_set_smem<R>(&plan->back));
    return EIG_OK;
}

/* The kernels' device workspace for one launch group (any input layout: the
 * tridiagonalization reads full and packed input in place), sized so that a
 * group stays under EIG_CUDA_WORKSPACE_BUDGET. */
static eig_error eig_cuda_plan_allocate(eig_cuda_plan *plan)
{
    const eig_plan_params *p = &plan->p;
    const size_t n = (size_t)p->n, nn = n * n;
    const size_t rsize = p->precision == EIG_COMPLEX_DOUBLE ? 8 : 4, csize = 2 * rsize;
    const bool vectors = p->job == EIG_JOB_VECTORS;
    const bool panels = plan->tri.panel_end > 0;
    const bool global_matrix = plan->tri.smem_order < p->n || panels;

    /* the QR log lives in the wy buffer (free until the back-transformation),
     * which grows to log_cap entries per matrix when that is larger */
    const bool logged = plan->qr.logged;
    const size_t wy_per = logged && (size_t)plan->qr.log_cap > nn ? (size_t)plan->qr.log_cap : nn;
    size_t per = 3 * n * rsize + 2 * sizeof(int);
    if (global_matrix)
        per += nn * csize;
    if (vectors)
        per += nn * csize + wy_per * csize + nn * rsize + n * csize +
               plan->back.gemm_per * csize;
    if (panels)
        per += n * csize + n * 4 * EIG_CUDA_PANEL_NB * csize +
               eig_cuda_panel_sums_per(p->n) * csize;
    if (logged) /* (plus the launch's counters, EIG_CUDA_QR_LOG_COUNTER_WORDS) */
        per += (size_t)plan->qr.head_cap * sizeof(int4) + n * sizeof(int) +
               sizeof(*plan->ws.qr_state);
    size_t free_bytes = 0, total_bytes = 0;
    EIG_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
    size_t budget = total_bytes / 8;
    if (budget < EIG_CUDA_WORKSPACE_MIN_BUDGET)
        budget = EIG_CUDA_WORKSPACE_MIN_BUDGET;
    size_t chunk = budget / per;
    if (chunk < 1)
        chunk = 1;
    if (chunk > (size_t)p->batch)
        chunk = (size_t)p->batch;
    plan->chunk = chunk;

    eig_cuda_workspace *ws = &plan->ws;
    if (global_matrix)
        EIG_CUDA_TRY(cudaMalloc(&ws->matrix, chunk * nn * csize));
    if (vectors) {
        EIG_CUDA_TRY(cudaMalloc(&ws->reflector, chunk * nn * csize));
        EIG_CUDA_TRY(cudaMalloc(&ws->wy, chunk * wy_per * csize));
        EIG_CUDA_TRY(cudaMalloc(&ws->zreal, chunk * nn * rsize));
        EIG_CUDA_TRY(cudaMalloc(&ws->phase, chunk * n * csize));
    }
    if (panels) {
        EIG_CUDA_TRY(cudaMalloc(&ws->subdiag, chunk * n * csize));
        EIG_CUDA_TRY(cudaMalloc(&ws->panel, chunk * n * 4 * EIG_CUDA_PANEL_NB * csize));
        EIG_CUDA_TRY(
            cudaMalloc(&ws->panel_sums, chunk * eig_cuda_panel_sums_per(p->n) * csize));
    }
    if (plan->back.gemm)
        EIG_CUDA_TRY(cudaMalloc(&ws->back_gemm, chunk * plan->back.gemm_per * csize));
    if (plan->back.gemm || panels) {
        if (cublasCreate(&plan->blas.handle) != CUBLAS_STATUS_SUCCESS) {
            plan->blas.handle = nullptr;
            return EIG_EDEVICE;
        }
        plan->blas.workspace_bytes = EIG_CUDA_BLAS_WORKSPACE;
        EIG_CUDA_TRY(cudaMalloc(&plan->blas.workspace, plan->blas.workspace_bytes));
    }
    EIG_CUDA_TRY(cudaMalloc(&ws->sigma, chunk * n * rsize));
    EIG_CUDA_TRY(cudaMalloc(&ws->diag, chunk * n * rsize));
    EIG_CUDA_TRY(cudaMalloc(&ws->offdiag, chunk * n * rsize));
    EIG_CUDA_TRY(cudaMalloc((void **)&ws->scale_exp, chunk * sizeof(int)));
    EIG_CUDA_TRY(cudaMalloc((void **)&ws->status, chunk * sizeof(int)));
    if (logged) {
        ws->qr_log = ws->wy;
        EIG_CUDA_TRY(cudaMalloc((void **)&ws->qr_head, chunk * plan->qr.head_cap * sizeof(int4)));
        EIG_CUDA_TRY(cudaMalloc((void **)&ws->qr_rank, chunk * n * sizeof(int)));
        EIG_CUDA_TRY(cudaMalloc((void **)&ws->qr_state, (chunk + EIG_CUDA_QR_LOG_COUNTER_WORDS) *
                                                             sizeof(*ws->qr_state)));
    }
    return EIG_OK;
}

/* The host entry point's pinned staging, device copies and stream (not for
 * a device_only plan). */
static eig_error eig_cuda_plan_allocate_staging(eig_cuda_plan *plan)
{
    const eig_plan_params *p = &plan->p;
    const size_t batch = (size_t)p->batch, n = (size_t)p->n;
    const size_t csize = eig_element_bytes(p->precision);
    const size_t in_elems = p->storage == EIG_STORAGE_FULL ? n * n : n * (n + 1) / 2;
    plan->a_bytes = batch * in_elems * csize;
    plan->w_bytes = batch * n * (csize / 2);
    plan->z_bytes = p->job == EIG_JOB_VECTORS ? batch * n * n * csize : 0;
    plan->info_bytes = batch * sizeof(int);
    EIG_CUDA_TRY(cudaStreamCreateWithFlags(&plan->stream, cudaStreamNonBlocking));
    EIG_CUDA_TRY(cudaMallocHost(&plan->h_a, plan->a_bytes));
    EIG_CUDA_TRY(cudaMallocHost(&plan->h_w, plan->w_bytes));
    EIG_CUDA_TRY(cudaMallocHost((void **)&plan->h_info, plan->info_bytes));
    EIG_CUDA_TRY(cudaMalloc(&plan->d_a, plan->a_bytes));
    EIG_CUDA_TRY(cudaMalloc(&plan->d_w, plan->w_bytes));
    EIG_CUDA_TRY(cudaMalloc((void **)&plan->d_info, plan->info_bytes));
    if (plan->z_bytes > 0) {
        EIG_CUDA_TRY(cudaMallocHost(&plan->h_z, plan->z_bytes));
        EIG_CUDA_TRY(cudaMalloc(&plan->d_z, plan->z_bytes));
    }
    return EIG_OK;
}

static void eig_cuda_plan_free(eig_cuda_plan *plan)
{
    eig_cuda_workspace *ws = &plan->ws;
    if (plan->blas.handle != nullptr)
        (void)cublasDestroy(plan->blas.handle);
    void *dev[] = {ws->matrix,    ws->subdiag,   ws->panel,     ws->panel_sums,  ws->reflector,
                   ws->wy,        ws->back_gemm, ws->zreal,     ws->phase,
                   ws->sigma,     ws->diag,      ws->offdiag,   ws->scale_exp,
                   ws->status,    ws->qr_head,   ws->qr_rank,   ws->qr_state,
                   plan->blas.workspace,         plan->d_a,     plan->d_w,
                   plan->d_z,     plan->d_info};
    for (void *ptr : dev)
        if (ptr != nullptr)
            (void)cudaFree(ptr);
    void *host[] = {plan->h_a, plan->h_w, plan->h_z, plan->h_info};
    for (void *ptr : host)
        if (ptr != nullptr)
            (void)cudaFreeHost(ptr);
    if (plan->stream != nullptr)
        (void)cudaStreamDestroy(plan->stream);
}

static eig_error eig_cuda_plan_build(eig_cuda_plan *plan)
{
    const eig_plan_params *p = &plan->p;
    int count = eig_cuda_runtime_device_count();
    if (count == 0)
        return EIG_ENODEVICE;
    if (p->device >= count)
        return EIG_ENODEVICE;
    eig_cuda_device_guard guard(p->device);
    if (!guard.ok)
        return eig_cuda_error(guard.err);
    int optin = 0;
    EIG_CUDA_TRY(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p->device));
    EIG_CUDA_TRY(cudaDeviceGetAttribute(&plan->qr.sms, cudaDevAttrMultiProcessorCount, p->device));
    eig_error e = p->precision == EIG_COMPLEX_DOUBLE ? eig_cuda_plan_configure<double>(plan, optin)
                                                     : eig_cuda_plan_configure<float>(plan, optin);
    if (e != EIG_OK)
        return e;
    e = eig_cuda_plan_allocate(plan);
    if (e != EIG_OK || p->device_only)
        return e;
    return eig_cuda_plan_allocate_staging(plan);
}

extern "C" eig_error eig_cuda_plan_create(eig_cuda_plan **out, const eig_plan_params *params)
{
    if (out == nullptr)
        return EIG_EINVAL;
    *out = nullptr;
    if (params == nullptr || params->n < 1 || params->batch < 1 || params->device < 0 ||
        eig_element_bytes(params->precision) == 0 ||
        (unsigned)params->job > EIG_JOB_VECTORS ||
        (unsigned)params->storage > EIG_STORAGE_PACKED || (unsigned)params->uplo > EIG_UPPER ||
        (unsigned)params->device_only > 1 ||
        (unsigned)params->cuda.qr_path > EIG_CUDA_QR_PATH_WAVEFRONT ||
        (unsigned)params->cuda.back_path > EIG_CUDA_BACK_PATH_GEMM ||
        (unsigned)params->cuda.tridiag_path > EIG_CUDA_TRIDIAG_PATH_PANEL ||
        params->cuda.qr_log_cap < 0 || params->cuda.qr_group_min < 0 ||
        (params->cuda.qr_bulges != 0 && params->cuda.qr_bulges != 8 &&
         params->cuda.qr_bulges != 16 && params->cuda.qr_bulges != 32))
        return EIG_EINVAL;
    /* EIG_CUDA_N_MAX (eig.h): all three kernels fit shared memory up to
     * there in both precisions (docs/gpu.md). */
    if (params->n > EIG_CUDA_N_MAX)
        return EIG_EUNSUPPORTED;
    eig_cuda_plan *plan = (eig_cuda_plan *)calloc(1, sizeof(*plan));
    if (plan == nullptr)
        return EIG_ENOMEM;
    plan->p = *params;
    eig_error e = eig_cuda_plan_build(plan);
    if (e != EIG_OK) {
        eig_cuda_device_guard guard(plan->p.device);
        eig_cuda_plan_free(plan);
        free(plan);
        return e;
    }
    *out = plan;
    return EIG_OK;
}

/* One phase of the launch group first .. first+count-1 in precision R (see
 * eig_cuda_phases.h); nothing checked. */
template <typename R>
static cudaError_t eig_cuda_phase_launch(const eig_cuda_plan *plan, eig_cuda_phase phase,
                                         eig_storage storage, eig_uplo uplo, size_t first,
                                         int count, const void *d_a, void *d_w, void *d_z,
                                         int *d_info, cudaStream_t stream)
{
    typedef typename eig_cuda_complex<R>::type C;
    const eig_plan_params *p = &plan->p;
    const size_t n = (size_t)p->n, nn = n * n;
    const size_t in_elems = storage == EIG_STORAGE_FULL ? nn : n * (n + 1) / 2;
    const int vectors = p->job == EIG_JOB_VECTORS;
    R *w = (R *)d_w + first * n;
    int *info = d_info + first;
    switch (phase) {
    case EIG_CUDA_PHASE_TRIDIAG:
        return eig_cuda_tridiag_launch<R>(&plan->tri, p->n, count, storage, uplo, vectors,
                                          (const C *)d_a + first * in_elems, &plan->ws,
                                          &plan->blas, w, info, stream);
    case EIG_CUDA_PHASE_QR:
        return eig_cuda_qr_launch<R>(&plan->qr, p->n, count, &plan->ws, w, info, stream);
    case EIG_CUDA_PHASE_BACK:
        if (!vectors)
            return cudaSuccess;
        return eig_cuda_back_launch<R>(&plan->back, p->n, count, &plan->ws, &plan->blas,
                                       (C *)d_z + first * nn, info, stream);
    case EIG_CUDA_PHASE_COUNT:
        break;
    }
    return cudaErrorInvalidValue;
}

static eig_error eig_cuda_phase_launch_any(const eig_cuda_plan *plan, eig_cuda_phase phase,
                                           eig_storage storage, eig_uplo uplo, size_t first,
                                           int count, const void *d_a, void *d_w, void *d_z,
                                           int *d_info, cudaStream_t stream)
{
    return eig_cuda_error(plan->p.precision == EIG_COMPLEX_DOUBLE
                              ? eig_cuda_phase_launch<double>(plan, phase, storage, uplo, first,
                                                              count, d_a, d_w, d_z, d_info, stream)
                              : eig_cuda_phase_launch<float>(plan, phase, storage, uplo, first,
                                                             count, d_a, d_w, d_z, d_info, stream));
}

extern "C" size_t eig_cuda_plan_group_size(const eig_cuda_plan *plan)
{
    return plan == nullptr ? 0 : plan->chunk;
}

extern "C" eig_error eig_cuda_plan_enqueue_phase(eig_cuda_plan *plan, eig_cuda_phase phase,
                                                 eig_storage storage, eig_uplo uplo, size_t first,
                                                 int count, const void *d_a, void *d_w, void *d_z,
                                                 int *d_info, cudaStream_t stream)
{
    if (plan == nullptr || (unsigned)phase >= EIG_CUDA_PHASE_COUNT ||
        (unsigned)storage > EIG_STORAGE_PACKED || (unsigned)uplo > EIG_UPPER || count < 1 ||
        (size_t)count > plan->chunk || first >= (size_t)plan->p.batch ||
        (size_t)count > (size_t)plan->p.batch - first)
        return EIG_EINVAL;
    return eig_cuda_phase_launch_any(plan, phase, storage, uplo, first, count, d_a, d_w, d_z,
                                     d_info, stream);
}

/* The whole batch, launch group after launch group, on stream. */
static eig_error eig_cuda_plan_enqueue(const eig_cuda_plan *plan, eig_storage storage,
                                       eig_uplo uplo, const void *d_a, void *d_w, void *d_z,
                                       int *d_info, cudaStream_t stream)
{
    const size_t batch = (size_t)plan->p.batch;
    for (size_t first = 0; first < batch; first += plan->chunk) {
        const size_t left = batch - first;
        const int count = (int)(left < plan->chunk ? left : plan->chunk);
        for (int phase = 0; phase < EIG_CUDA_PHASE_COUNT; ++phase) {
            eig_error e = eig_cuda_phase_launch_any(plan, (eig_cuda_phase)phase, storage, uplo,
                                                    first, count, d_a, d_w, d_z, d_info, stream);
            if (e != EIG_OK)
                return e;
        }
    }
    return EIG_OK;
}

extern "C" eig_error eig_cuda_plan_execute_device(eig_cuda_plan *plan, eig_storage storage,
                                                  eig_uplo uplo, const void *d_a, void *d_w,
                                                  void *d_z, int *d_info, void *stream)
{
    if (plan == nullptr || d_a == nullptr || d_w == nullptr || d_info == nullptr ||
        (unsigned)storage > EIG_STORAGE_PACKED || (unsigned)uplo > EIG_UPPER)
        return EIG_EINVAL;
    if (plan->p.job == EIG_JOB_VECTORS && d_z == nullptr)
        return EIG_EINVAL;
    eig_cuda_device_guard guard(plan->p.device);
    if (!guard.ok)
        return eig_cuda_error(guard.err);
    return eig_cuda_plan_enqueue(plan, storage, uplo, d_a, d_w, d_z, d_info,
                                 (cudaStream_t)stream);
}

extern "C" eig_error eig_cuda_plan_execute(eig_cuda_plan *plan, const void *a, void *w, void *z,
                                           int *info)
{
    if (plan == nullptr || a == nullptr || w == nullptr || info == nullptr)
        return EIG_EINVAL;
    const bool vectors = plan->p.job == EIG_JOB_VECTORS;
    if (vectors && z == nullptr)
        return EIG_EINVAL;
    if (plan->p.device_only)
        return EIG_EUNSUPPORTED;
    eig_cuda_device_guard guard(plan->p.device);
    if (!guard.ok)
        return eig_cuda_error(guard.err);
    cudaStream_t s = plan->stream;
    memcpy(plan->h_a, a, plan->a_bytes);
    EIG_CUDA_TRY(cudaMemcpyAsync(plan->d_a, plan->h_a, plan->a_bytes, cudaMemcpyHostToDevice, s));
    eig_error e = eig_cuda_plan_enqueue(plan, plan->p.storage, plan->p.uplo, plan->d_a, plan->d_w,
                                        plan->d_z, plan->d_info, s);
    if (e != EIG_OK) {
        (void)cudaStreamSynchronize(s);
        return e;
    }
    EIG_CUDA_TRY(cudaMemcpyAsync(plan->h_w, plan->d_w, plan->w_bytes, cudaMemcpyDeviceToHost, s));
    EIG_CUDA_TRY(
        cudaMemcpyAsync(plan->h_info, plan->d_info, plan->info_bytes, cudaMemcpyDeviceToHost, s));
    if (vectors)
        EIG_CUDA_TRY(
            cudaMemcpyAsync(plan->h_z, plan->d_z, plan->z_bytes, cudaMemcpyDeviceToHost, s));
    EIG_CUDA_TRY(cudaStreamSynchronize(s));
    memcpy(w, plan->h_w, plan->w_bytes);
    memcpy(info, plan->h_info, plan->info_bytes);
    if (vectors)
        memcpy(z, plan->h_z, plan->z_bytes);
    for (int b = 0; b < plan->p.batch; ++b)
        if (info[b] != 0)
            return EIG_EMATRIX;
    return EIG_OK;
}

extern "C" void eig_cuda_plan_destroy(eig_cuda_plan *plan)
{
    if (plan == nullptr)
        return;
    {
        eig_cuda_device_guard guard(plan->p.device);
        if (plan->stream != nullptr)
            (void)cudaStreamSynchronize(plan->stream);
        eig_cuda_plan_free(plan);
    }
    free(plan);
}
