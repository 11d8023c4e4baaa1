/*
 * form_iq_window.c - the slow-time windows of IQ forming (form_iq.h):
 * coefficients computed once at plan creation, shared by the CPU and GPU
 * plans.
 */
#include <math.h>

#include "form_iq.h"

static const double form_pi = 3.14159265358979323846;

const char *form_window_name(form_window w)
{
    static const char *const names[] = {"none", "hann", "hamming", "chebyshev", "taylor"};
    if ((int)w < 0 || (size_t)w >= sizeof names / sizeof names[0])
        return "?";
    return names[w];
}

/* Chebyshev polynomial T_order(x) for any real x (|x| > 1 through cosh). */
static double chebyshev_t(double order, double x)
{
    if (x > 1.0)
        return cosh(order * acosh(x));
    if (x < -1.0)
        return (fmod(order, 2.0) == 0.0 ? 1.0 : -1.0) * cosh(order * acosh(-x));
    return cos(order * acos(x));
}

/* Dolph-Chebyshev: the zero-phase spectrum W(theta) = T_{M-1}(x0 cos(theta/2)),
 * x0 = cosh(acosh(r) / (M-1)), r = 10^(sidelobe_db/20), is equiripple at
 * 1/r outside the main lobe (Dolph 1946). Its M samples W_k at theta =
 * 2 pi k / M determine the M-tap window exactly:
 *   w[t] = (1/M) sum_k W_k cos(2 pi k (t - (M-1)/2) / M)
 * (the imaginary parts cancel: W is real and even). O(M^2), at create only. */
static void window_chebyshev(double sidelobe_db, uint32_t m, double *out)
{
    if (m == 1) {
        out[0] = 1.0;
        return;
    }
    double order = (double)m - 1.0;
    double x0 = cosh(acosh(pow(10.0, sidelobe_db / 20.0)) / order);
    for (uint32_t t = 0; t < m; t++) {
        double sum = 0.0, centred = (double)t - order / 2.0;
        for (uint32_t k = 0; k < m; k++)
            sum += chebyshev_t(order, x0 * cos(form_pi * k / m)) * cos(2.0 * form_pi * k * centred / m);
        out[t] = sum / m;
    }
}

/* Taylor (nbar = 4; Carrara, Goodman and Majewski, Spotlight Synthetic
 * Aperture Radar, 1995, eq. for the Taylor weighting): A = acosh(r) / pi,
 * sigma^2 = nbar^2 / (A^2 + (nbar - 1/2)^2), and for m = 1 .. nbar-1
 *   F_m = (-1)^(m+1) prod_{j=1}^{nbar-1} (1 - m^2 / (sigma^2 (A^2 + (j - 1/2)^2)))
 *         / (2 prod_{j != m} (1 - m^2 / j^2)),
 *   w[t] = 1 + 2 sum_m F_m cos(2 pi m (t - (M-1)/2) / M). */
static void window_taylor(double sidelobe_db, uint32_t m, double *out)
{
    enum { nbar = 4 };
    double a = acosh(pow(10.0, sidelobe_db / 20.0)) / form_pi;
    double sigma2 = (double)nbar * nbar / (a * a + (nbar - 0.5) * (nbar - 0.5));
    double f[nbar];
    for (int k = 1; k < nbar; k++) {
        double numerator = (k % 2 == 1) ? 1.0 : -1.0, denominator = 2.0;
        for (int j = 1; j < nbar; j++) {
            numerator *= 1.0 - (double)k * k / (sigma2 * (a * a + (j - 0.5) * (j - 0.5)));
            if (j != k)
                denominator *= 1.0 - (double)k * k / ((double)j * j);
        }
        f[k] = numerator / denominator;
    }
    for (uint32_t t = 0; t < m; t++) {
        double centred = (double)t - ((double)m - 1.0) / 2.0, sum = 1.0;
        for (int k = 1; k < nbar; k++)
            sum += 2.0 * f[k] * cos(2.0 * form_pi * k * centred / m);
        out[t] = sum;
    }
}

/* Divides by the largest coefficient (chebyshev and taylor peak at 1). */
static void window_peak_normalise(uint32_t m, double *out)
{
    double peak = 0.0;
    for (uint32_t t = 0; t < m; t++)
        peak = fmax(peak, out[t]);
    for (uint32_t t = 0; t < m; t++)
        out[t] /= peak;
}

form_iq_error form_iq_window_coefficients(form_window window, double sidelobe_db, uint32_t length, double *out)
{
    int tapered = window == FORM_WINDOW_CHEBYSHEV || window == FORM_WINDOW_TAYLOR;
    if (length == 0 || out == NULL || (tapered && !(sidelobe_db > 0.0 && sidelobe_db <= 300.0)))
        return FORM_IQ_EINVAL;
    /* numpy.hanning / numpy.hamming: symmetric, M = 1 gives [1]. */
    double span = length > 1 ? (double)length - 1.0 : 1.0;
    switch (window) {
    case FORM_WINDOW_NONE:
        for (uint32_t t = 0; t < length; t++)
            out[t] = 1.0;
        return FORM_IQ_OK;
    case FORM_WINDOW_HANN:
        for (uint32_t t = 0; t < length; t++)
            out[t] = length == 1 ? 1.0 : 0.5 - 0.5 * cos(2.0 * form_pi * t / span);
        return FORM_IQ_OK;
    case FORM_WINDOW_HAMMING:
        for (uint32_t t = 0; t < length; t++)
            out[t] = length == 1 ? 1.0 : 0.54 - 0.46 * cos(2.0 * form_pi * t / span);
        return FORM_IQ_OK;
    case FORM_WINDOW_CHEBYSHEV:
        window_chebyshev(sidelobe_db, length, out);
        window_peak_normalise(length, out);
        return FORM_IQ_OK;
    case FORM_WINDOW_TAYLOR:
        window_taylor(sidelobe_db, length, out);
        window_peak_normalise(length, out);
        return FORM_IQ_OK;
    }
    return FORM_IQ_EINVAL;
}
