/*
 * form_iq.proto.c - one precision of form_iq.c; included with
 *   FIQ_REAL      float / double
 *   FIQ_COMPLEX   float complex / double complex (the memory layout of
 *                 fftwf_complex / fftw_complex)
 *   FIQ_FFTW(x)   fftwf_##x / fftw_##x
 *   FIQ_PLAN      the member of form_iq's fft union
 *   FIQ_HERK      cblas_cherk / cblas_zherk
 *   FIQ_NAME(x)   x##_c / x##_z
 */

/* The guru plan of form_iq.c's step 2: F points at stride G*C, batched over
 * the G*C (gate, channel) pairs at distance 1, in place. 1 when made.
 * Under planner_lock. */
static int FIQ_NAME(plan_make)(form_iq *q)
{
    ptrdiff_t pairs = (ptrdiff_t)q->p.gates * q->p.channels;
    FIQ_FFTW(iodim64) dft = {.n = q->p.fft_size, .is = pairs, .os = pairs};
    FIQ_FFTW(iodim64) batch = {.n = pairs, .is = 1, .os = 1};
    FIQ_FFTW(plan_with_nthreads)(q->threads);
    q->FIQ_PLAN = FIQ_FFTW(plan_guru64_dft)(1, &dft, 1, &batch, (FIQ_FFTW(complex) *)q->work,
                                             (FIQ_FFTW(complex) *)q->work, FFTW_FORWARD, FFTW_MEASURE);
    return q->FIQ_PLAN != NULL;
}

/* Raw sample i of the cube (ci16_le or cf32_le), times k. */
static inline FIQ_COMPLEX FIQ_NAME(sample)(const void *cube, int ci16, size_t i, FIQ_REAL k)
{
    if (ci16) {
        const int16_t *s = (const int16_t *)cube + 2 * i;
        return k * (FIQ_REAL)s[0] + I * (k * (FIQ_REAL)s[1]);
    }
    const float *s = (const float *)cube + 2 * i;
    return k * (FIQ_REAL)s[0] + I * (k * (FIQ_REAL)s[1]);
}

/* Step 1: raw * scale * w[p] into work[p][g][c] (channel fastest), pulses
 * P..F-1 zeroed (the in-place FFT overwrote them). pgc is that order: one
 * contiguous run per pulse. cpg and pcg have gates fastest: per pulse, a
 * transpose of the C x G slab, in blocks of kGateBlock gates so that the
 * kGateBlock destination lines of a block stay in L1 while every channel
 * writes its element into each. */
static void FIQ_NAME(convert)(const form_iq *q, const void *cube, double scale)
{
    enum { kGateBlock = 64 };
    const form_iq_params *p = &q->p;
    const size_t nc = p->channels, np = p->pulses, ng = p->gates, slab = nc * ng;
    const int ci16 = p->format == PROTOCOL_IQ_CI16_LE;
    FIQ_COMPLEX *work = q->work;
#pragma omp parallel for schedule(static) num_threads(q->threads)
    for (size_t t = 0; t < p->fft_size; t++) {
        FIQ_COMPLEX *dst = work + t * slab;
        if (t >= np) {
            memset(dst, 0, slab * sizeof *dst);
            continue;
        }
        FIQ_REAL k = (FIQ_REAL)(scale * q->window[t]);
        if (p->layout == PROTOCOL_IQ_PGC) {
            for (size_t i = 0; i < slab; i++)
                dst[i] = FIQ_NAME(sample)(cube, ci16, t * slab + i, k);
            continue;
        }
        for (size_t g0 = 0; g0 < ng; g0 += kGateBlock) {
            size_t g1 = g0 + kGateBlock < ng ? g0 + kGateBlock : ng;
            for (size_t c = 0; c < nc; c++) {
                size_t row = p->layout == PROTOCOL_IQ_CPG ? (c * np + t) * ng : (t * nc + c) * ng;
                for (size_t g = g0; g < g1; g++)
                    dst[g * nc + c] = FIQ_NAME(sample)(cube, ci16, row + g, k);
            }
        }
    }
}

/* Step 3: R[m] = (1/K) X X^H over the training gates of matrix m's bin and
 * segment, as herk on the n x gates blocks of the spectrum left and right
 * of the guard cells (the first call with beta 0 overwrites, the second
 * adds). Only the lower triangle of R[m] is written. */
static void FIQ_NAME(covariances)(const form_iq *q, FIQ_COMPLEX *out)
{
    const form_iq_params *p = &q->p;
    const int n = (int)p->channels;
    const size_t bin_elements = (size_t)p->gates * p->channels;
    const FIQ_REAL alpha = (FIQ_REAL)(1.0 / q->snapshots);
    const int team = eig_threads_team(q->threads, (int)q->matrices);
    const int blas_before = eig_blas_threads_enter(team, q->threads);
    const FIQ_COMPLEX *spectrum = q->work;
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (uint32_t m = 0; m < q->matrices; m++) {
        uint32_t bin = (p->bin_first + m / p->segments) % p->fft_size, segment = m % p->segments;
        const FIQ_COMPLEX *x = spectrum + bin * bin_elements + (size_t)segment * q->segment_gates * n;
        FIQ_COMPLEX *r = out + (size_t)m * n * n;
        /* Gates [0, hole_first) and [hole_first + hole_count, L) of the segment. */
        int left = (int)q->hole_first, right_first = (int)(q->hole_first + q->hole_count);
        int right = (int)q->segment_gates - right_first;
        FIQ_REAL beta = 0;
        if (left > 0) {
            FIQ_HERK(CblasColMajor, CblasLower, CblasNoTrans, n, left, alpha, x, n, beta, r, n);
            beta = 1;
        }
        if (right > 0)
            FIQ_HERK(CblasColMajor, CblasLower, CblasNoTrans, n, right, alpha, x + (size_t)right_first * n, n, beta,
                     r, n);
    }
    eig_blas_threads_leave(blas_before);
}

static void FIQ_NAME(execute)(form_iq *q, const void *cube, double scale, void *out)
{
    FIQ_NAME(convert)(q, cube, scale);
    FIQ_FFTW(execute)(q->FIQ_PLAN);
    FIQ_NAME(covariances)(q, out);
}

/* The next inclusion defines them anew. */
#undef FIQ_REAL
#undef FIQ_COMPLEX
#undef FIQ_FFTW
#undef FIQ_PLAN
#undef FIQ_HERK
#undef FIQ_NAME
