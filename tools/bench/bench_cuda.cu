/*
 * bench_cuda.cu - eigstream-bench CUDA mode: our cuda backend against cuSOLVER
 * in one process, on one GPU, on the same input copies.
 *
 * Solvers (all on data already on the device, timed with CUDA events):
 *   ours          eig_cuda_plan_execute_device (the device entry point; the
 *                 backend interface of eig/eig_backend_cuda.h)
 *   XsyevBatched  cusolverDnXsyevBatched (64-bit API, one call for the batch)
 *   heevd x8      cusolverDnZheevd / Cheevd, one call per matrix, round-robin
 *                 over 8 streams with one handle and workspace per stream
 * cuSOLVER overwrites A, so each of its runs first restores A from the pristine
 * copy (outside the timed region). Each solver gets 3 untimed warm-up runs and
 * then --runs timed runs; the median and the minimum are printed. Our time is
 * also split by phase (tridiagonalization, QR, back-transformation) from the
 * medians of separate runs that launch the plan's phases one by one
 * (cuda/eig_cuda_phases.h) with events between them. Accuracy: the
 * LAPACK residual and orthogonality ratios, max over the first --check
 * matrices of the batch, of each solver's last run.
 */
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench.h"
#include "eig.h"
#include "eig_backend_cuda.h"
#include "eig_cuda_phases.h"
#include "workload.h"

static const char usage[] =
    "usage: eigstream-bench --backend cuda [--n N | --sizes 64,128,256,512] [--batch B]\n"
    "                       [--precision c64|c128|both] [--input radar|random]\n"
    "                       [--vectors | --values] [--runs R] [--check K] [--no-heevd]\n"
    "                       [--qr-path auto|fused|logged|wavefront] [--qr-log-cap N]\n"
    "                       [--qr-group-min N] [--qr-bulges 8|16|32] [--back-path auto|slabs|gemm]\n"
    "                       [--tridiag-path auto|sweep|panel] [--json FILE]\n"
    "\n"
    "CUDA mode: times our cuda backend (device entry point) against cusolverDnXsyevBatched\n"
    "and cusolverDnZheevd/Cheevd looped over 8 streams, on the same device-resident batch,\n"
    "and prints median/min ms, the ratios cuSOLVER/ours and each solver's worst LAPACK\n"
    "residual and orthogonality ratios.\n"
    "  --n N          matrix order (default 128); --sizes sweeps several\n"
    "  --batch B      matrices per run (default 180)\n"
    "  --precision P  c128, c64 or both (default both)\n"
    "  --input I      radar (default, workload_radar_batch) or random Hermitian\n"
    "  --vectors      eigenvalues and eigenvectors (default); --values: eigenvalues only\n"
    "  --runs R       timed runs per solver (default 20, at least 10 recommended)\n"
    "  --check K      matrices checked for accuracy (default 16)\n"
    "  --no-heevd     skip the slow looped heevd\n"
    "  --qr-path P    our QR path: auto (default: logged for vectors at n > 64, wavefront\n"
    "                 from 352 c128, 320 c64), fused, logged, wavefront\n"
    "  --qr-log-cap N rotations logged per matrix (default 0: the plan's, 3 n^2 / 2 n^2)\n"
    "  --qr-group-min N smallest block order of a multishift group (default 0: the plan's)\n"
    "  --qr-bulges N    most bulges chased at once by a group, 8, 16 or 32 (default 0: the plan's)\n"
    "  --back-path P  our back-transformation: auto (default: gemm from n = 192, from 96 c128\n"
    "                 and 128 c64 when the batch has a matrix per SM), slabs, gemm\n"
    "  --tridiag-path P our tridiagonalization: auto (default: panel from n = 256 c128, 384\n"
    "                 c64), sweep, panel\n"
    "  --json FILE    also write the results as JSON\n";

namespace {

struct options {
    std::vector<int> sizes;
    int batch = 180;
    bool c64 = true, c128 = true;
    bool radar = true;
    bool vectors = true;
    int runs = 20;
    int check = 16;
    bool heevd = true;
    eig_cuda_tuning tuning = {}; /* eig.h: all 0 = the plan's choices */
    const char *json = nullptr;
};

struct solver_result {
    const char *name;
    bool ran = false;
    double median_ms = 0, min_ms = 0;
    double residual = 0, orthogonality = 0;
    int bad_info = 0;
};

struct case_result {
    int n, batch;
    eig_precision precision;
    solver_result ours, syevb, heevd;
    float split[EIG_CUDA_PHASE_COUNT] = {0, 0, 0}; /* median ms per phase */
};

#define CUDA_OK(call)                                                                             \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "eigstream-bench: %s: %s\n", #call, cudaGetErrorString(e_));          \
            return 2;                                                                             \
        }                                                                                         \
    } while (0)

#define SOLVER_OK(call)                                                                           \
    do {                                                                                          \
        cusolverStatus_t s_ = (call);                                                             \
        if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                      \
            fprintf(stderr, "eigstream-bench: %s: cusolver status %d\n", #call, (int)s_);         \
            return 2;                                                                             \
        }                                                                                         \
    } while (0)

int parse_sizes(const char *s, std::vector<int> &out)
{
    out.clear();
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 4096)
            return -1;
        out.push_back((int)v);
        if (*end == ',')
            ++end;
        else if (*end != '\0')
            return -1;
        s = end;
    }
    return out.empty() ? -1 : 0;
}

int parse(int argc, char **argv, options &o)
{
    o.sizes = {128};
    for (int k = 1; k < argc; ++k) {
        const char *a = argv[k];
        const char *v = k + 1 < argc ? argv[k + 1] : nullptr;
        if (strcmp(a, "--backend=cuda") == 0)
            continue;
        if (strcmp(a, "--backend") == 0 && v) {
            ++k;
        } else if (strcmp(a, "--n") == 0 && v) {
            if (parse_sizes(v, o.sizes) != 0 || o.sizes.size() != 1)
                return -1;
            ++k;
        } else if (strcmp(a, "--sizes") == 0 && v) {
            if (parse_sizes(v, o.sizes) != 0)
                return -1;
            ++k;
        } else if (strcmp(a, "--batch") == 0 && v) {
            o.batch = atoi(v);
            ++k;
        } else if (strcmp(a, "--precision") == 0 && v) {
            o.c64 = strcmp(v, "c64") == 0 || strcmp(v, "both") == 0;
            o.c128 = strcmp(v, "c128") == 0 || strcmp(v, "both") == 0;
            if (!o.c64 && !o.c128)
                return -1;
            ++k;
        } else if (strcmp(a, "--input") == 0 && v) {
            if (strcmp(v, "radar") != 0 && strcmp(v, "random") != 0)
                return -1;
            o.radar = strcmp(v, "radar") == 0;
            ++k;
        } else if (strcmp(a, "--vectors") == 0) {
            o.vectors = true;
        } else if (strcmp(a, "--values") == 0) {
            o.vectors = false;
        } else if (strcmp(a, "--runs") == 0 && v) {
            o.runs = atoi(v);
            ++k;
        } else if (strcmp(a, "--check") == 0 && v) {
            o.check = atoi(v);
            ++k;
        } else if (strcmp(a, "--no-heevd") == 0) {
            o.heevd = false;
        } else if (strcmp(a, "--qr-path") == 0 && v) {
            if (eig_cuda_qr_path_parse(v, &o.tuning.qr_path) != EIG_OK)
                return -1;
            ++k;
        } else if (strcmp(a, "--qr-log-cap") == 0 && v) {
            o.tuning.qr_log_cap = atoi(v);
            ++k;
        } else if (strcmp(a, "--qr-group-min") == 0 && v) {
            o.tuning.qr_group_min = atoi(v);
            ++k;
        } else if (strcmp(a, "--qr-bulges") == 0 && v) {
            o.tuning.qr_bulges = atoi(v);
            ++k;
        } else if (strcmp(a, "--back-path") == 0 && v) {
            if (eig_cuda_back_path_parse(v, &o.tuning.back_path) != EIG_OK)
                return -1;
            ++k;
        } else if (strcmp(a, "--tridiag-path") == 0 && v) {
            if (eig_cuda_tridiag_path_parse(v, &o.tuning.tridiag_path) != EIG_OK)
                return -1;
            ++k;
        } else if (strcmp(a, "--json") == 0 && v) {
            o.json = v;
            ++k;
        } else {
            return -1;
        }
    }
    if (o.batch < 1 || o.runs < 1 || o.check < 0 || o.tuning.qr_log_cap < 0 ||
        o.tuning.qr_group_min < 0 ||
        (o.tuning.qr_bulges != 0 && o.tuning.qr_bulges != 8 && o.tuning.qr_bulges != 16 &&
         o.tuning.qr_bulges != 32))
        return -1;
    return 0;
}

/* Times `run` (which enqueues on stream s) with events; `prepare` runs untimed
 * before each (restoring inputs). */
template <typename Prep, typename Run>
int time_solver(cudaStream_t s, int runs, Prep prepare, Run run, solver_result &r)
{
    cudaEvent_t t0, t1;
    CUDA_OK(cudaEventCreate(&t0));
    CUDA_OK(cudaEventCreate(&t1));
    std::vector<double> ms;
    for (int k = 0; k < 3 + runs; ++k) {
        if (prepare() != 0)
            return 2;
        CUDA_OK(cudaEventRecord(t0, s));
        if (run() != 0)
            return 2;
        CUDA_OK(cudaEventRecord(t1, s));
        CUDA_OK(cudaEventSynchronize(t1));
        float f;
        CUDA_OK(cudaEventElapsedTime(&f, t0, t1));
        if (k >= 3)
            ms.push_back(f);
    }
    CUDA_OK(cudaEventDestroy(t0));
    CUDA_OK(cudaEventDestroy(t1));
    r.min_ms = bench_min(ms.data(), (int)ms.size());
    r.median_ms = bench_median(ms.data(), (int)ms.size());
    r.ran = true;
    return 0;
}

/* One run of the plan with its phases launched one by one, launch group
 * after launch group, and events between them: adds each phase's time to
 * ms[phase]. The plan's device (0) is current. */
int time_phases(eig_cuda_plan *plan, int batch, const void *d_a, void *d_w, void *d_z,
                int *d_info, cudaStream_t s, float ms[EIG_CUDA_PHASE_COUNT])
{
    cudaEvent_t ev[EIG_CUDA_PHASE_COUNT + 1];
    for (cudaEvent_t &e : ev)
        CUDA_OK(cudaEventCreate(&e));
    const size_t group = eig_cuda_plan_group_size(plan);
    int rc = 0;
    for (size_t first = 0; first < (size_t)batch && rc == 0; first += group) {
        const int count = (int)((size_t)batch - first < group ? (size_t)batch - first : group);
        CUDA_OK(cudaEventRecord(ev[0], s));
        for (int ph = 0; ph < EIG_CUDA_PHASE_COUNT && rc == 0; ++ph) {
            eig_error e = eig_cuda_plan_enqueue_phase(plan, (eig_cuda_phase)ph, EIG_STORAGE_FULL,
                                                      EIG_LOWER, first, count, d_a, d_w, d_z,
                                                      d_info, s);
            if (e != EIG_OK) {
                fprintf(stderr, "eigstream-bench: phase %d: %s\n", ph, eig_strerror(e));
                rc = 2;
            }
            CUDA_OK(cudaEventRecord(ev[ph + 1], s));
        }
        CUDA_OK(cudaEventSynchronize(ev[EIG_CUDA_PHASE_COUNT]));
        for (int ph = 0; ph < EIG_CUDA_PHASE_COUNT && rc == 0; ++ph) {
            float f;
            CUDA_OK(cudaEventElapsedTime(&f, ev[ph], ev[ph + 1]));
            ms[ph] += f;
        }
    }
    for (cudaEvent_t &e : ev)
        CUDA_OK(cudaEventDestroy(e));
    return rc;
}

/* Worst ratios over the first `check` matrices; w, z on the device. */
int accuracy(const options &o, int n, eig_precision prec, const std::vector<char> &host_a,
             const void *d_w, const void *d_z, const int *d_info, solver_result &r)
{
    const size_t rsize = prec == EIG_COMPLEX_DOUBLE ? 8 : 4, csize = 2 * rsize;
    const size_t nn = (size_t)n * n;
    const int k = o.check < o.batch ? o.check : o.batch;
    std::vector<char> w((size_t)o.batch * n * rsize), z(o.vectors ? (size_t)k * nn * csize : 0);
    std::vector<int> info(o.batch);
    CUDA_OK(cudaMemcpy(w.data(), d_w, w.size(), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(info.data(), d_info, info.size() * sizeof(int), cudaMemcpyDeviceToHost));
    if (o.vectors)
        CUDA_OK(cudaMemcpy(z.data(), d_z, z.size(), cudaMemcpyDeviceToHost));
    r.bad_info = 0;
    for (int b = 0; b < o.batch; ++b)
        r.bad_info += info[b] != 0;
    r.residual = r.orthogonality = 0;
    for (int b = 0; b < k && o.vectors; ++b) {
        const void *a = host_a.data() + b * nn * csize;
        double res = workload_residual_ratio(n, prec, a, w.data() + b * n * rsize,
                                             z.data() + b * nn * csize);
        double orth = workload_orthogonality_ratio(n, prec, z.data() + b * nn * csize);
        r.residual = std::isnan(res) || res > r.residual ? res : r.residual;
        r.orthogonality = std::isnan(orth) || orth > r.orthogonality ? orth : r.orthogonality;
    }
    return 0;
}

/* One case's inputs and outputs on the device, shared by the three solvers:
 * d_a0 the batch as generated (ours reads it in place), d_a a copy the
 * cuSOLVER routines overwrite (restored before each run). */
struct case_buffers {
    int n;
    eig_precision prec;
    bool dbl;
    size_t rsize, csize, nn, a_bytes, w_bytes;
    std::vector<char> host_a;
    void *d_a0 = nullptr, *d_a = nullptr, *d_w = nullptr, *d_z = nullptr;
    int *d_info = nullptr;
    cudaStream_t s = nullptr;
};

int buffers_create(const options &o, int n, eig_precision prec, case_buffers &b)
{
    b.n = n;
    b.prec = prec;
    b.dbl = prec == EIG_COMPLEX_DOUBLE;
    b.rsize = b.dbl ? 8 : 4;
    b.csize = 2 * b.rsize;
    b.nn = (size_t)n * n;
    b.a_bytes = (size_t)o.batch * b.nn * b.csize;
    b.w_bytes = (size_t)o.batch * n * b.rsize;
    b.host_a.resize(b.a_bytes);
    int g = o.radar ? workload_radar_batch(n, o.batch, prec, 2014, b.host_a.data())
                    : workload_random_batch(n, o.batch, prec, 2014, b.host_a.data());
    if (g != 0) {
        fprintf(stderr, "eigstream-bench: generating the batch failed\n");
        return 1;
    }
    CUDA_OK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
    CUDA_OK(cudaMalloc(&b.d_a0, b.a_bytes));
    CUDA_OK(cudaMalloc(&b.d_a, b.a_bytes));
    CUDA_OK(cudaMalloc(&b.d_w, b.w_bytes));
    CUDA_OK(cudaMalloc((void **)&b.d_info, o.batch * sizeof(int)));
    if (o.vectors)
        CUDA_OK(cudaMalloc(&b.d_z, b.a_bytes));
    CUDA_OK(cudaMemcpy(b.d_a0, b.host_a.data(), b.a_bytes, cudaMemcpyHostToDevice));
    return 0;
}

int buffers_destroy(case_buffers &b)
{
    CUDA_OK(cudaFree(b.d_a0));
    CUDA_OK(cudaFree(b.d_a));
    CUDA_OK(cudaFree(b.d_w));
    CUDA_OK(cudaFree(b.d_info));
    CUDA_OK(cudaFree(b.d_z));
    if (b.s != nullptr)
        CUDA_OK(cudaStreamDestroy(b.s));
    return 0;
}

/* Ours: the whole solve timed, its accuracy, then each phase timed alone. */
int run_ours(const options &o, case_buffers &b, case_result &cr)
{
    eig_plan_params p = eig_plan_params_default();
    p.n = b.n;
    p.batch = o.batch;
    p.precision = b.prec;
    p.job = o.vectors ? EIG_JOB_VECTORS : EIG_JOB_VALUES;
    p.backend = EIG_BACKEND_CUDA;
    p.device_only = 1;
    p.cuda = o.tuning;
    eig_cuda_plan *plan;
    eig_error e = eig_cuda_plan_create(&plan, &p);
    if (e != EIG_OK) {
        fprintf(stderr, "eigstream-bench: eig_cuda_plan_create: %s\n", eig_strerror(e));
        return 2;
    }
    auto nothing = []() -> int { return 0; };
    int rc = time_solver(
        b.s, o.runs, nothing,
        [&]() -> int {
            eig_error ee = eig_cuda_plan_execute_device(plan, EIG_STORAGE_FULL, EIG_LOWER, b.d_a0, b.d_w, b.d_z,
                                                        b.d_info, b.s);
            if (ee != EIG_OK)
                fprintf(stderr, "eigstream-bench: execute_device: %s\n", eig_strerror(ee));
            return ee == EIG_OK ? 0 : 2;
        },
        cr.ours);
    if (rc == 0)
        rc = accuracy(o, b.n, b.prec, b.host_a, b.d_w, b.d_z, b.d_info, cr.ours);
    std::vector<double> st[EIG_CUDA_PHASE_COUNT];
    for (int k = 0; k < o.runs && rc == 0; ++k) {
        float ms[EIG_CUDA_PHASE_COUNT] = {0, 0, 0};
        rc = time_phases(plan, o.batch, b.d_a0, b.d_w, b.d_z, b.d_info, b.s, ms);
        for (int i = 0; i < EIG_CUDA_PHASE_COUNT; ++i)
            st[i].push_back(ms[i]);
    }
    for (int i = 0; i < EIG_CUDA_PHASE_COUNT && rc == 0; ++i)
        cr.split[i] = (float)bench_median(st[i].data(), (int)st[i].size());
    eig_cuda_plan_destroy(plan);
    return rc;
}

/* cusolverDnXsyevBatched on the restored copy. */
int run_syevb(const options &o, case_buffers &b, case_result &cr)
{
    cusolverDnHandle_t h;
    cusolverDnParams_t params;
    SOLVER_OK(cusolverDnCreate(&h));
    SOLVER_OK(cusolverDnSetStream(h, b.s));
    SOLVER_OK(cusolverDnCreateParams(&params));
    const cudaDataType ta = b.dbl ? CUDA_C_64F : CUDA_C_32F, tw = b.dbl ? CUDA_R_64F : CUDA_R_32F;
    const cusolverEigMode_t jobz = o.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const int n = b.n;
    size_t dev_bytes = 0, host_bytes = 0;
    SOLVER_OK(cusolverDnXsyevBatched_bufferSize(h, params, jobz, CUBLAS_FILL_MODE_LOWER, n, ta, b.d_a, n, tw,
                                                b.d_w, ta, &dev_bytes, &host_bytes, o.batch));
    void *d_work = nullptr;
    std::vector<char> h_work(host_bytes + 1);
    CUDA_OK(cudaMalloc(&d_work, dev_bytes + 1));
    auto restore = [&]() -> int {
        CUDA_OK(cudaMemcpyAsync(b.d_a, b.d_a0, b.a_bytes, cudaMemcpyDeviceToDevice, b.s));
        return 0;
    };
    int rc = time_solver(
        b.s, o.runs, restore,
        [&]() -> int {
            SOLVER_OK(cusolverDnXsyevBatched(h, params, jobz, CUBLAS_FILL_MODE_LOWER, n, ta, b.d_a, n, tw, b.d_w,
                                             ta, d_work, dev_bytes, h_work.data(), host_bytes, b.d_info,
                                             o.batch));
            return 0;
        },
        cr.syevb);
    if (rc == 0)
        rc = accuracy(o, n, b.prec, b.host_a, b.d_w, b.d_a, b.d_info, cr.syevb);
    CUDA_OK(cudaFree(d_work));
    SOLVER_OK(cusolverDnDestroyParams(params));
    SOLVER_OK(cusolverDnDestroy(h));
    return rc;
}

/* zheevd / cheevd looped over 8 streams, one handle and workspace each. */
struct heevd_streams {
    static const int NS = 8;
    cudaStream_t ss[NS];
    cusolverDnHandle_t hh[NS];
    void *work[NS];
    int *dinfo[NS];
    int lwork = 0;
    cudaEvent_t fork, join[NS];
};

int heevd_create(case_buffers &b, cusolverEigMode_t jobz, heevd_streams &hs)
{
    CUDA_OK(cudaEventCreateWithFlags(&hs.fork, cudaEventDisableTiming));
    for (int i = 0; i < hs.NS; ++i) {
        CUDA_OK(cudaStreamCreateWithFlags(&hs.ss[i], cudaStreamNonBlocking));
        CUDA_OK(cudaEventCreateWithFlags(&hs.join[i], cudaEventDisableTiming));
        SOLVER_OK(cusolverDnCreate(&hs.hh[i]));
        SOLVER_OK(cusolverDnSetStream(hs.hh[i], hs.ss[i]));
        if (b.dbl)
            SOLVER_OK(cusolverDnZheevd_bufferSize(hs.hh[i], jobz, CUBLAS_FILL_MODE_LOWER, b.n,
                                                  (const cuDoubleComplex *)b.d_a, b.n, (const double *)b.d_w,
                                                  &hs.lwork));
        else
            SOLVER_OK(cusolverDnCheevd_bufferSize(hs.hh[i], jobz, CUBLAS_FILL_MODE_LOWER, b.n,
                                                  (const cuComplex *)b.d_a, b.n, (const float *)b.d_w,
                                                  &hs.lwork));
        CUDA_OK(cudaMalloc(&hs.work[i], (size_t)hs.lwork * b.csize));
        CUDA_OK(cudaMalloc((void **)&hs.dinfo[i], sizeof(int)));
    }
    return 0;
}

int heevd_destroy(heevd_streams &hs)
{
    for (int i = 0; i < hs.NS; ++i) {
        CUDA_OK(cudaFree(hs.work[i]));
        CUDA_OK(cudaFree(hs.dinfo[i]));
        SOLVER_OK(cusolverDnDestroy(hs.hh[i]));
        CUDA_OK(cudaStreamDestroy(hs.ss[i]));
        CUDA_OK(cudaEventDestroy(hs.join[i]));
    }
    CUDA_OK(cudaEventDestroy(hs.fork));
    return 0;
}

/* One batch: every matrix's heevd on stream b % 8, forked from and joined
 * back to the timing stream. */
int heevd_batch(const options &o, case_buffers &b, cusolverEigMode_t jobz, heevd_streams &hs)
{
    CUDA_OK(cudaEventRecord(hs.fork, b.s));
    for (int i = 0; i < hs.NS; ++i)
        CUDA_OK(cudaStreamWaitEvent(hs.ss[i], hs.fork, 0));
    for (int m = 0; m < o.batch; ++m) {
        const int i = m % hs.NS;
        char *a = (char *)b.d_a + m * b.nn * b.csize;
        char *w = (char *)b.d_w + m * (size_t)b.n * b.rsize;
        if (b.dbl)
            SOLVER_OK(cusolverDnZheevd(hs.hh[i], jobz, CUBLAS_FILL_MODE_LOWER, b.n, (cuDoubleComplex *)a, b.n,
                                       (double *)w, (cuDoubleComplex *)hs.work[i], hs.lwork, hs.dinfo[i]));
        else
            SOLVER_OK(cusolverDnCheevd(hs.hh[i], jobz, CUBLAS_FILL_MODE_LOWER, b.n, (cuComplex *)a, b.n,
                                       (float *)w, (cuComplex *)hs.work[i], hs.lwork, hs.dinfo[i]));
    }
    for (int i = 0; i < hs.NS; ++i) {
        CUDA_OK(cudaEventRecord(hs.join[i], hs.ss[i]));
        CUDA_OK(cudaStreamWaitEvent(b.s, hs.join[i], 0));
    }
    return 0;
}

int run_heevd(const options &o, case_buffers &b, case_result &cr)
{
    const cusolverEigMode_t jobz = o.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    heevd_streams hs;
    int rc = heevd_create(b, jobz, hs);
    auto restore = [&]() -> int {
        CUDA_OK(cudaMemcpyAsync(b.d_a, b.d_a0, b.a_bytes, cudaMemcpyDeviceToDevice, b.s));
        return 0;
    };
    if (rc == 0)
        rc = time_solver(b.s, o.runs, restore, [&]() -> int { return heevd_batch(o, b, jobz, hs); }, cr.heevd);
    CUDA_OK(cudaMemsetAsync(b.d_info, 0, o.batch * sizeof(int), b.s)); /* per-stream info only */
    CUDA_OK(cudaStreamSynchronize(b.s));
    if (rc == 0)
        rc = accuracy(o, b.n, b.prec, b.host_a, b.d_w, b.d_a, b.d_info, cr.heevd);
    int rd = heevd_destroy(hs);
    return rc != 0 ? rc : rd;
}

int run_case(const options &o, int n, eig_precision prec, case_result &cr)
{
    cr.n = n;
    cr.batch = o.batch;
    cr.precision = prec;
    cr.ours.name = "ours";
    cr.syevb.name = "XsyevBatched";
    cr.heevd.name = prec == EIG_COMPLEX_DOUBLE ? "zheevd x8 streams" : "cheevd x8 streams";
    case_buffers b;
    int rc = buffers_create(o, n, prec, b);
    if (rc == 0)
        rc = run_ours(o, b, cr);
    if (rc == 0)
        rc = run_syevb(o, b, cr);
    if (rc == 0 && o.heevd)
        rc = run_heevd(o, b, cr);
    int rd = buffers_destroy(b);
    return rc != 0 ? rc : rd;
}

void print_solver(const solver_result &r, const solver_result &ours)
{
    if (!r.ran)
        return;
    printf("  %-18s %10.3f %10.3f %9.2fx %11.3g %13.3g %6d\n", r.name, r.median_ms, r.min_ms,
           r.median_ms / ours.median_ms, r.residual, r.orthogonality, r.bad_info);
}

void print_case(const options &o, const case_result &c)
{
    const double n = c.n;
    printf("\nn=%d batch=%d %s %s input=%s runs=%d qr-path=%s back-path=%s tridiag-path=%s "
           "(accuracy over the first %d matrices)\n",
           c.n, c.batch, c.precision == EIG_COMPLEX_DOUBLE ? "c128" : "c64",
           o.vectors ? "vectors" : "values", o.radar ? "radar" : "random", o.runs,
           eig_cuda_qr_path_name(o.tuning.qr_path), eig_cuda_back_path_name(o.tuning.back_path),
           eig_cuda_tridiag_path_name(o.tuning.tridiag_path), o.check < o.batch ? o.check : o.batch);
    printf("  %-18s %10s %10s %10s %11s %13s %6s\n", "solver", "median ms", "min ms", "time/ours",
           "residual", "orthogonality", "info!=0");
    print_solver(c.ours, c.ours);
    print_solver(c.syevb, c.ours);
    print_solver(c.heevd, c.ours);
    /* LAPACK flop counts: zhetrd 16/3 n^3, zunmtr (n vectors) 8 n^3 real flops */
    const double tri_gf = 16.0 / 3.0 * n * n * n * c.batch * 1e-6;
    const double back_gf = 8.0 * n * n * n * c.batch * 1e-6;
    printf("  ours split: tridiag %.3f ms (%.1f GFLOP/s), qr %.3f ms, back %.3f ms (%.1f GFLOP/s)\n",
           c.split[0], c.split[0] > 0 ? tri_gf / c.split[0] : 0.0, c.split[1], c.split[2],
           c.split[2] > 0 ? back_gf / c.split[2] : 0.0);
    if (c.syevb.ran)
        printf("  speed-up vs XsyevBatched: %.2fx\n", c.syevb.median_ms / c.ours.median_ms);
}

void json_solver(FILE *f, const char *key, const solver_result &r, bool last)
{
    fprintf(f, "      \"%s\": {\"ran\": %s, \"median_ms\": %.6g, \"min_ms\": %.6g, "
               "\"residual\": %.6g, \"orthogonality\": %.6g, \"bad_info\": %d}%s\n",
            key, r.ran ? "true" : "false", r.median_ms, r.min_ms,
            std::isnan(r.residual) ? -1.0 : r.residual,
            std::isnan(r.orthogonality) ? -1.0 : r.orthogonality, r.bad_info, last ? "" : ",");
}

int write_json(const options &o, const char *gpu, const std::vector<case_result> &cases)
{
    FILE *f = fopen(o.json, "w");
    if (f == nullptr) {
        fprintf(stderr, "eigstream-bench: cannot write %s\n", o.json);
        return 1;
    }
    fprintf(f, "{\n  \"mode\": \"cuda\",\n  \"gpu\": \"%s\",\n  \"job\": \"%s\",\n"
               "  \"input\": \"%s\",\n  \"runs\": %d,\n  \"cases\": [\n",
            gpu, o.vectors ? "vectors" : "values", o.radar ? "radar" : "random", o.runs);
    for (size_t i = 0; i < cases.size(); ++i) {
        const case_result &c = cases[i];
        fprintf(f, "    {\"n\": %d, \"batch\": %d, \"precision\": \"%s\",\n", c.n, c.batch,
                c.precision == EIG_COMPLEX_DOUBLE ? "c128" : "c64");
        fprintf(f, "      \"split_ms\": {\"tridiag\": %.6g, \"qr\": %.6g, \"back\": %.6g},\n",
                c.split[0], c.split[1], c.split[2]);
        fprintf(f, "      \"ratio_xsyevbatched_over_ours\": %.6g,\n",
                c.syevb.ran ? c.syevb.median_ms / c.ours.median_ms : 0.0);
        fprintf(f, "      \"ratio_heevd_over_ours\": %.6g,\n",
                c.heevd.ran ? c.heevd.median_ms / c.ours.median_ms : 0.0);
        json_solver(f, "ours", c.ours, false);
        json_solver(f, "xsyevbatched", c.syevb, false);
        json_solver(f, "heevd_8_streams", c.heevd, true);
        fprintf(f, "    }%s\n", i + 1 < cases.size() ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : 1;
}

} // namespace

extern "C" int bench_cuda_main(int argc, char **argv)
{
    for (int k = 1; k < argc; ++k)
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
            fputs(usage, stdout); /* with or without a GPU, as every mode's help */
            return 0;
        }
    options o;
    if (parse(argc, argv, o) != 0) {
        fputs(usage, stderr);
        return 1;
    }
    if (eig_cuda_runtime_device_count() == 0) {
        fprintf(stderr, "eigstream-bench: no usable CUDA device\n");
        return 1;
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        fprintf(stderr, "eigstream-bench: cudaGetDeviceProperties failed\n");
        return 1;
    }
    int rt = 0;
    (void)cudaRuntimeGetVersion(&rt);
    printf("GPU: %s (%d SMs, %.0f MB L2, %zu KB opt-in shared memory per block), CUDA runtime %d\n",
           prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0,
           prop.sharedMemPerBlockOptin / 1024, rt);
    std::vector<case_result> cases;
    for (int n : o.sizes) {
        for (int pi = 0; pi < 2; ++pi) {
            eig_precision prec = pi == 0 ? EIG_COMPLEX_DOUBLE : EIG_COMPLEX_FLOAT;
            if ((prec == EIG_COMPLEX_DOUBLE && !o.c128) || (prec == EIG_COMPLEX_FLOAT && !o.c64))
                continue;
            case_result c;
            int rc = run_case(o, n, prec, c);
            if (rc != 0)
                return rc;
            print_case(o, c);
            fflush(stdout);
            cases.push_back(c);
        }
    }
    if (o.json && write_json(o, prop.name, cases) != 0)
        return 1;
    return 0;
}
