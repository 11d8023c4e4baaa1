/*
 * form_iq.c - IQ cube forming on the CPU (form_iq.h): the parameters'
 * validator, the plan (FFTW wisdom, planning, workspace) and the dispatch
 * to one precision of form_iq.proto.c.
 *
 * The steps of form_iq_execute, for a cube of C channels, P pulses, G gates
 * and fft_size F, in one workspace `work` of F*G*C complex elements:
 *   1. convert: raw samples * scale * w[p] into work[p][g][c] (channel
 *      fastest) whatever the cube's layout, pulses P..F-1 zeroed (the
 *      padding). The conversion reads every sample once anyway; reordering
 *      there keeps the FFT at unit vector stride: FFTW's guru plan reading
 *      the cpg layout's strides and writing [bin][gate][channel] took 250 to
 *      680 ms per cube at the sizes on the development VM, against
 *      45 ms at unit stride, and the covariances need channels fastest;
 *   2. FFT: one FFTW guru plan, in place, rank 1 of size F at stride G*C,
 *      batched over the G*C (gate, channel) pairs at distance 1: work becomes
 *      the spectrum [bin][gate][channel], in which every (bin, gate range)
 *      is an n x K column-major block with ld = n;
 *   3. covariances: per matrix (bin major, then segment) one or two BLAS
 *      herk (lower) over the training gates left and right of the guard
 *      cells, alpha = 1/K, straight into the caller's matrix.
 * Steps 1 and 3 run on an OpenMP team of `threads`; the FFT on FFTW's
 * OpenMP threads (libfftw3_omp), the same number.
 */
#include "form_iq.h"

#include <complex.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>
#include <fftw3.h>

/* eig_threads_resolve and the OpenBLAS thread hold the host solvers use:
 * the covariance loop calls herk from an OpenMP team, as they do. */
#include "eig_threads.h"
#include "protocol.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "form_iq.c reads ci16_le and cf32_le samples in place: a little-endian host is assumed"
#endif


struct form_iq {
    form_iq_params p;       /* wisdom_file cleared: not kept */
    int threads;            /* resolved, >= 1 */
    uint32_t matrices, snapshots;
    uint32_t segment_gates; /* L = gates / segments */
    uint32_t hole_first, hole_count; /* guard cells within a segment, relative to its start */
    double *window;         /* P coefficients */
    void *work;             /* F*G*C complex: [pulse][gate][channel], then [bin][gate][channel] */
    size_t work_elements;
    union {
        fftw_plan z;
        fftwf_plan c;
    } fft;
    char note[320];         /* the wisdom file's fate, "" when nothing to say */
};

const char *form_iq_strerror(form_iq_error e)
{
    switch (e) {
    case FORM_IQ_OK: return "ok";
    case FORM_IQ_EINVAL: return "invalid argument";
    case FORM_IQ_ENOMEM: return "out of memory";
    case FORM_IQ_EPLAN: return "no FFT or BLAS plan for these parameters";
    case FORM_IQ_EDEVICE: return "device call failed";
    }
    return "unknown form_iq error";
}

uint32_t form_iq_matrices(const form_iq_params *p)
{
    return p->bin_count * p->segments;
}

void form_iq_guard_cells(const form_iq_params *p, uint32_t *first, uint32_t *count)
{
    uint32_t l = p->gates / p->segments, centre = l / 2;
    if (p->guard_gates == 0) {
        *first = *count = 0;
        return;
    }
    uint32_t lo = centre > p->guard_gates ? centre - p->guard_gates : 0;
    uint64_t hi = (uint64_t)centre + p->guard_gates;
    if (hi > l - 1)
        hi = l - 1;
    *first = lo;
    *count = (uint32_t)(hi - lo + 1);
}

uint32_t form_iq_snapshots(const form_iq_params *p)
{
    if (p->segments == 0 || p->gates < p->segments)
        return 0;
    uint32_t first, count;
    form_iq_guard_cells(p, &first, &count);
    return p->gates / p->segments - count;
}

form_iq_error form_iq_params_check(const form_iq_params *p, char *err, size_t err_bytes)
{
#define BAD(...) return (snprintf(err, err_bytes, __VA_ARGS__), FORM_IQ_EINVAL)
    if (p->channels == 0 || p->pulses == 0 || p->gates == 0)
        BAD("channels %u, pulses %u, gates %u: each must be at least 1", p->channels, p->pulses, p->gates);
    if (protocol_iq_sample_bytes(p->format) == 0)
        BAD("sample format %u: expected 1 (cf32_le) or 3 (ci16_le)", p->format);
    if (p->layout > PROTOCOL_IQ_PGC)
        BAD("layout %u: expected 0 (cpg), 1 (pcg) or 2 (pgc)", p->layout);
    if (p->precision != EIG_COMPLEX_FLOAT && p->precision != EIG_COMPLEX_DOUBLE)
        BAD("precision %d: expected complex float or complex double", (int)p->precision);
    if ((unsigned)p->window > FORM_WINDOW_TAYLOR)
        BAD("window %d: unknown", (int)p->window);
    if ((p->window == FORM_WINDOW_CHEBYSHEV || p->window == FORM_WINDOW_TAYLOR) &&
        !(p->sidelobe_db > 0.0 && p->sidelobe_db <= 300.0))
        BAD("sidelobe level %g dB: expected more than 0 and at most 300", p->sidelobe_db);
    if (p->fft_size < p->pulses)
        BAD("fft size %u is below the pulse count %u", p->fft_size, p->pulses);
    if (p->bin_first >= p->fft_size || p->bin_count == 0 || p->bin_count > p->fft_size)
        BAD("bins %u..%u+%u: the first must be below the fft size %u and the count in 1..%u", p->bin_first,
            p->bin_first, p->bin_count, p->fft_size, p->fft_size);
    if (p->segments == 0 || p->gates % p->segments != 0)
        BAD("range segments %u: must divide the %u gates", p->segments, p->gates);
    if (form_iq_snapshots(p) == 0)
        BAD("guard gates %u leave no training gate in a segment of %u gates", p->guard_gates,
            p->gates / p->segments);
    if (p->threads < 0)
        BAD("threads %d: expected 0 (all cores) or more", p->threads);
    if ((uint64_t)p->fft_size * p->channels * p->gates > (uint64_t)INT_MAX)
        BAD("fft size %u x channels %u x gates %u exceeds 2^31 samples", p->fft_size, p->channels, p->gates);
#undef BAD
    return FORM_IQ_OK;
}

form_iq_error form_iq_check_solver(const form_iq_params *p, uint32_t n, uint32_t matrices, eig_precision precision,
                                   char *err, size_t err_bytes)
{
    if (p->channels == n && form_iq_matrices(p) == matrices && p->precision == precision)
        return FORM_IQ_OK;
    snprintf(err, err_bytes, "IQ forming gives %u matrices (%u bins x %u segments) of %u channels in %s, the solver "
             "takes %u of %u in %s", form_iq_matrices(p), p->bin_count, p->segments, p->channels,
             eig_precision_name(p->precision), matrices, n, eig_precision_name(precision));
    return FORM_IQ_EINVAL;
}

/* ---- the two precisions ------------------------------------------------------ */

#define FIQ_REAL float
#define FIQ_COMPLEX float complex
#define FIQ_FFTW(x) fftwf_##x
#define FIQ_PLAN fft.c
#define FIQ_HERK cblas_cherk
#define FIQ_NAME(x) x##_c
#include "form_iq.proto.c"

#define FIQ_REAL double
#define FIQ_COMPLEX double complex
#define FIQ_FFTW(x) fftw_##x
#define FIQ_PLAN fft.z
#define FIQ_HERK cblas_zherk
#define FIQ_NAME(x) x##_z
#include "form_iq.proto.c"

/* ---- planning and wisdom ---------------------------------------------------------- */

/* The FFTW planner and its wisdom are process-wide and not thread-safe:
 * every plan creation, wisdom import/export and destruction holds this. */
static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;
static int threads_ready;

static void fftw_threads_init(void)
{
    threads_ready = fftw_init_threads() != 0 && fftwf_init_threads() != 0;
}

/* Imports wisdom_file into the precision's wisdom, noting (not failing) a
 * file that exists but is not wisdom of this precision. */
static void wisdom_load(form_iq *q, const char *file)
{
    int is_double = q->p.precision == EIG_COMPLEX_DOUBLE;
    if (access(file, F_OK) != 0)
        return; /* the first start: nothing saved yet */
    int ok = is_double ? fftw_import_wisdom_from_filename(file) : fftwf_import_wisdom_from_filename(file);
    if (!ok)
        snprintf(q->note, sizeof q->note,
                 "FFTW wisdom file %s is not %s-precision FFTW wisdom (corrupt, unreadable or of the other "
                 "precision): ignored, planned afresh and rewritten", file, is_double ? "double" : "single");
}

/* Saves the precision's wisdom: file.tmp, then rename (a reader never sees
 * half a file). A failure is noted. */
static void wisdom_save(form_iq *q, const char *file)
{
    char tmp[4096];
    int is_double = q->p.precision == EIG_COMPLEX_DOUBLE;
    errno = 0;
    int n = snprintf(tmp, sizeof tmp, "%s.tmp", file);
    int ok = n > 0 && (size_t)n < sizeof tmp &&
             (is_double ? fftw_export_wisdom_to_filename(tmp) : fftwf_export_wisdom_to_filename(tmp));
    if (ok && rename(tmp, file) != 0)
        ok = 0;
    if (!ok) {
        int e = errno;
        (void)unlink(tmp);
        size_t used = strlen(q->note);
        snprintf(q->note + used, sizeof q->note - used, "%scannot save FFTW wisdom to %s (%s): restarts plan again",
                 used ? "; " : "", file, e != 0 ? strerror(e) : "path too long or write failed");
    }
}

/* Makes the FFT plan (FFTW_MEASURE overwrites the workspace: convert
 * rewrites all of it every frame). */
static form_iq_error plan_fft(form_iq *q, const char *wisdom_file, char *err, size_t err_bytes)
{
    int is_double = q->p.precision == EIG_COMPLEX_DOUBLE;
    pthread_once(&threads_once, fftw_threads_init);
    if (!threads_ready) {
        snprintf(err, err_bytes, "FFTW threads could not be initialised");
        return FORM_IQ_EPLAN;
    }
    pthread_mutex_lock(&planner_lock);
    if (wisdom_file != NULL && wisdom_file[0] != '\0')
        wisdom_load(q, wisdom_file);
    int made = is_double ? plan_make_z(q) : plan_make_c(q);
    if (made && wisdom_file != NULL && wisdom_file[0] != '\0')
        wisdom_save(q, wisdom_file);
    pthread_mutex_unlock(&planner_lock);
    if (!made) {
        snprintf(err, err_bytes, "FFTW made no plan for %u-point FFTs of %u x %u (channels x gates)", q->p.fft_size,
                 q->p.channels, q->p.gates);
        return FORM_IQ_EPLAN;
    }
    return FORM_IQ_OK;
}

static form_iq_error workspace_alloc(form_iq *q, char *err, size_t err_bytes)
{
    size_t bytes = q->work_elements * eig_element_bytes(q->p.precision);
    q->window = malloc(q->p.pulses * sizeof *q->window);
    /* fftw_malloc: the alignment FFTW's SIMD codelets want. */
    q->work = fftw_malloc(bytes);
    if (q->window == NULL || q->work == NULL) {
        snprintf(err, err_bytes, "cannot allocate the forming workspace (%.1f MB)", (double)bytes / 1e6);
        return FORM_IQ_ENOMEM;
    }
    return FORM_IQ_OK;
}

form_iq_error form_iq_create(form_iq **out, const form_iq_params *params, char *err, size_t err_bytes)
{
    *out = NULL;
    form_iq_error e = form_iq_params_check(params, err, err_bytes);
    if (e != FORM_IQ_OK)
        return e;
    form_iq *q = calloc(1, sizeof *q);
    if (q == NULL) {
        snprintf(err, err_bytes, "out of memory");
        return FORM_IQ_ENOMEM;
    }
    q->p = *params;
    q->p.wisdom_file = NULL;
    q->threads = eig_threads_resolve(params->threads);
    q->matrices = form_iq_matrices(params);
    q->snapshots = form_iq_snapshots(params);
    q->segment_gates = params->gates / params->segments;
    form_iq_guard_cells(params, &q->hole_first, &q->hole_count);
    q->work_elements = (size_t)params->fft_size * params->channels * params->gates;
    e = workspace_alloc(q, err, err_bytes);
    if (e == FORM_IQ_OK)
        e = form_iq_window_coefficients(params->window, params->sidelobe_db, params->pulses, q->window);
    if (e == FORM_IQ_OK)
        e = plan_fft(q, params->wisdom_file, err, err_bytes);
    if (e != FORM_IQ_OK) {
        form_iq_destroy(&q);
        return e;
    }
    *out = q;
    return FORM_IQ_OK;
}

form_iq_error form_iq_execute(form_iq *plan, const void *cube, float scale, void *out)
{
    if (plan == NULL || cube == NULL || out == NULL || !isfinite(scale) || !(scale > 0.0f))
        return FORM_IQ_EINVAL;
    if (plan->p.precision == EIG_COMPLEX_DOUBLE)
        execute_z(plan, cube, scale, out);
    else
        execute_c(plan, cube, scale, out);
    return FORM_IQ_OK;
}

const char *form_iq_wisdom_note(const form_iq *plan)
{
    return plan != NULL && plan->note[0] != '\0' ? plan->note : NULL;
}

void form_iq_destroy(form_iq **plan)
{
    form_iq *q = *plan;
    if (q == NULL)
        return;
    pthread_mutex_lock(&planner_lock);
    if (q->p.precision == EIG_COMPLEX_DOUBLE && q->fft.z != NULL)
        fftw_destroy_plan(q->fft.z);
    else if (q->p.precision == EIG_COMPLEX_FLOAT && q->fft.c != NULL)
        fftwf_destroy_plan(q->fft.c);
    pthread_mutex_unlock(&planner_lock);
    fftw_free(q->work);
    free(q->window);
    free(q);
    *plan = NULL;
}
