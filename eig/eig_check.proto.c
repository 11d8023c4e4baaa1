/*
 * eig_check.proto.c - the self-check ratios of eig_check_pairs (eig.h),
 * written once for both precisions. Included by eig_check.c with:
 *   EIG_T      complex element type     EIG_FN(x)  x##_z or x##_c
 * Every sum is taken in double complex whatever the precision: the ratios
 * judge the solver's rounding, not the check's own.
 */

/* A(i, j) of the Hermitian matrix from the triangle it is stored in. */
static double complex EIG_FN(check_element)(const EIG_T *a, int n, eig_storage storage, eig_uplo uplo, int i,
                                            int j)
{
    int conj_it = 0;
    size_t at = check_index(n, storage, uplo, i, j, &conj_it);
    double complex x = (double complex)a[at];
    return conj_it ? conj(x) : x;
}

/* max_j sum_i |A(i, j)|: the 1-norm (= the infinity norm, A Hermitian). */
static double EIG_FN(check_norm1)(const EIG_T *a, int n, eig_storage storage, eig_uplo uplo)
{
    double norm = 0;
    for (int j = 0; j < n; j++) {
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += cabs(EIG_FN(check_element)(a, n, storage, uplo, i, j));
        if (!(sum <= norm)) /* NaN wins */
            norm = sum;
    }
    return norm;
}

/* ||A V - V diag(w)||_1 over k columns, ||V^H V - I||_1, and ||A||_1. */
static void EIG_FN(check_sums)(const EIG_T *a, int n, eig_storage storage, eig_uplo uplo, int k, const double *w,
                               const EIG_T *v, double *residual, double *orthogonality)
{
    double res = 0, orth = 0;
    for (int j = 0; j < k; j++) {
        const EIG_T *vj = v + (size_t)j * n;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double complex r = -w[j] * (double complex)vj[i];
            for (int l = 0; l < n; l++)
                r += EIG_FN(check_element)(a, n, storage, uplo, i, l) * (double complex)vj[l];
            sum += cabs(r);
        }
        if (!(sum <= res))
            res = sum;
        double osum = 0;
        for (int i = 0; i < k; i++) {
            const EIG_T *vi = v + (size_t)i * n;
            double complex g = i == j ? -1.0 : 0.0;
            for (int l = 0; l < n; l++)
                g += conj((double complex)vi[l]) * (double complex)vj[l];
            osum += cabs(g);
        }
        if (!(osum <= orth))
            orth = osum;
    }
    *residual = res;
    *orthogonality = orth;
}

/* Values only: |sum w - trace A|, the identity every eigenvalue set meets. */
static double EIG_FN(check_trace)(const EIG_T *a, int n, eig_storage storage, eig_uplo uplo, const double *w)
{
    double trace = 0, sum = 0;
    for (int i = 0; i < n; i++) {
        trace += creal(EIG_FN(check_element)(a, n, storage, uplo, i, i));
        sum += w[i];
    }
    return fabs(sum - trace);
}
