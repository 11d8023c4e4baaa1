/*
 * form.proto.c - one precision of form.c; included with
 *   FORM_COMPLEX  the element type (float complex / double complex)
 *   FORM_REAL     its real type
 *   FORM_CONJ     conjf / conj
 *   FORM_NAME(x)  x##_c / x##_z
 */

static void FORM_NAME(unpack_lower)(FORM_COMPLEX *a, size_t n, size_t count)
{
    size_t full = n * n, packed = n * (n + 1) / 2;
    for (size_t b = count; b-- > 0;) {
        for (size_t j = n; j-- > 0;) {
            /* LAPACK 'L': A(i,j), i >= j, at i + j(2n-j-1)/2. */
            const FORM_COMPLEX *src = a + b * packed + j * (2 * n - j - 1) / 2;
            FORM_COMPLEX *dst = a + b * full + j * n;
            for (size_t i = n; i-- > j;)
                dst[i] = src[i];
        }
    }
}

static void FORM_NAME(unpack_upper)(FORM_COMPLEX *a, size_t n, size_t count)
{
    size_t full = n * n, packed = n * (n + 1) / 2;
    for (size_t b = count; b-- > 0;) {
        FORM_COMPLEX *m = a + b * full;
        for (size_t j = n; j-- > 0;) {
            /* LAPACK 'U': A(i,j), i <= j, at i + j(j+1)/2. */
            const FORM_COMPLEX *src = a + b * packed + j * (j + 1) / 2;
            for (size_t i = j + 1; i-- > 0;)
                m[i + j * n] = src[i];
        }
        /* Matrix b now occupies its own full slot, above every packed element
         * still unread (those of matrices < b), so mirroring it is safe. */
        for (size_t j = 0; j < n; j++)
            for (size_t i = j + 1; i < n; i++)
                m[i + j * n] = FORM_CONJ(m[j + i * n]);
    }
}

static void FORM_NAME(forward_backward)(FORM_COMPLEX *a, size_t n, size_t count)
{
    for (size_t b = 0; b < count; b++) {
        FORM_COMPLEX *m = a + b * n * n;
        for (size_t j = 0; j < n; j++) {
            for (size_t i = j; i < n; i++) {
                size_t self = i + j * n;
                size_t mirror = (n - 1 - j) + (n - 1 - i) * n;
                /* Each pair once (from its lower-indexed member); the
                 * anti-diagonal maps to itself and stays unchanged. */
                if (mirror <= self)
                    continue;
                FORM_COMPLEX mean = (m[self] + m[mirror]) * (FORM_REAL)0.5;
                m[self] = mean;
                m[mirror] = mean;
            }
        }
    }
}

static void FORM_NAME(diagonal_loading)(FORM_COMPLEX *a, size_t n, size_t count, double factor)
{
    for (size_t b = 0; b < count; b++) {
        FORM_COMPLEX *m = a + b * n * n;
        double trace = 0.0;
        for (size_t i = 0; i < n; i++)
            trace += (double)FORM_CREAL(m[i + i * n]);
        FORM_REAL load = (FORM_REAL)(factor * trace / (double)n);
        for (size_t i = 0; i < n; i++)
            m[i + i * n] += load;
    }
}

/* The next inclusion defines them anew. */
#undef FORM_COMPLEX
#undef FORM_REAL
#undef FORM_CONJ
#undef FORM_CREAL
#undef FORM_NAME
