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

/* The guru plan of form_iq.c's step 2: F points along the pulses (stride
 * in.pulse in, G*C out), batched over channels (in.channel in, 1 out) and
 * gates (in.gate in, C out). 1 when made. Under planner_lock. */
static int FIQ_NAME(plan_make)(form_iq *q)
{
    const form_iq_params *p = &q->p;
    ptrdiff_t c = p->channels, g = p->gates;
    FIQ_FFTW(iodim64) dft = {.n = p->fft_size, .is = q->in.pulse, .os = g * c};
    FIQ_FFTW(iodim64) batch[2] = {
        {.n = c, .is = q->in.channel, .os = 1},
        {.n = g, .is = q->in.gate, .os = c},
    };
    FIQ_FFTW(plan_with_nthreads)(q->threads);
    q->FIQ_PLAN = FIQ_FFTW(plan_guru64_dft)(1, &dft, 2, batch, (FIQ_FFTW(complex) *)q->padded,
                                             (FIQ_FFTW(complex) *)q->spectrum, FFTW_FORWARD, FFTW_MEASURE);
    return q->FIQ_PLAN != NULL;
}

/* Step 1: raw * scale * w[p] into the padded cube. The cube is a sequence
 * of rows of the fastest index that share one pulse: cpg has C*P rows of G
 * samples (pulse = row mod P), pcg and pgc P rows of C*G samples (pulse =
 * row). Row r lands at padded row (r div P) * F + r mod P, resp. r. */
static void FIQ_NAME(convert)(const form_iq *q, const void *cube, double scale)
{
    const form_iq_params *p = &q->p;
    int by_channel = p->layout == PROTOCOL_IQ_CPG;
    size_t row_len = by_channel ? p->gates : (size_t)p->channels * p->gates;
    size_t rows = by_channel ? (size_t)p->channels * p->pulses : p->pulses;
    FIQ_COMPLEX *padded = q->padded;
#pragma omp parallel for schedule(static) num_threads(q->threads)
    for (size_t r = 0; r < rows; r++) {
        size_t pulse = by_channel ? r % p->pulses : r;
        size_t dst_row = by_channel ? (r / p->pulses) * p->fft_size + pulse : r;
        FIQ_REAL k = (FIQ_REAL)(scale * q->window[pulse]);
        FIQ_COMPLEX *dst = padded + dst_row * row_len;
        if (p->format == PROTOCOL_IQ_CI16_LE) {
            const int16_t *src = (const int16_t *)cube + 2 * r * row_len;
            for (size_t t = 0; t < row_len; t++)
                dst[t] = k * (FIQ_REAL)src[2 * t] + I * (k * (FIQ_REAL)src[2 * t + 1]);
        } else {
            const float *src = (const float *)cube + 2 * r * row_len;
            for (size_t t = 0; t < row_len; t++)
                dst[t] = k * (FIQ_REAL)src[2 * t] + I * (k * (FIQ_REAL)src[2 * t + 1]);
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
    const FIQ_COMPLEX *spectrum = q->spectrum;
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
