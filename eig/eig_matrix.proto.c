/*
 * eig_matrix.proto.c - input checks and triangle copies, written once for
 * both precisions. Included by eig_matrix.c with:
 *   EIG_T      complex element type     EIG_R    its real type
 *   EIG_FN(x)  x##_z or x##_c           EIG_ULP  the precision's epsilon
 *   EIG_CREAL, EIG_CIMAG, EIG_CONJ, EIG_FABS, EIG_HYPOT: the typed math
 */

int EIG_FN(eig_matrix_check)(int n, eig_storage storage, eig_uplo uplo, const EIG_T *a)
{
    EIG_R max_abs = 0;
    EIG_R max_diag_im = 0;
    for (int j = 0; j < n; j++) {
        eig_triangle_column col = eig_triangle_column_of(n, storage, uplo, j);
        const EIG_T *p = a + col.start;
        EIG_R col_max = max_abs;
        /* Cheap filter: only elements whose larger component could beat the
         * running maximum pay for a hypot. */
        for (int k = 0; k < col.count; k++) {
            EIG_R re = EIG_FABS(EIG_CREAL(p[k]));
            EIG_R im = EIG_FABS(EIG_CIMAG(p[k]));
            if (!(re <= EIG_R_MAX && im <= EIG_R_MAX))
                return EIG_INFO_NONFINITE;
            EIG_R big = re > im ? re : im;
            if (big * (EIG_R)1.4142135623730951 > col_max) {
                EIG_R m = EIG_HYPOT(re, im);
                if (m > col_max)
                    col_max = m;
            }
        }
        if (col_max > max_abs)
            max_abs = col_max;
        EIG_R dim = EIG_FABS(EIG_CIMAG(p[col.diag]));
        if (dim > max_diag_im)
            max_diag_im = dim;
    }
    if (max_diag_im > (EIG_R)n * EIG_ULP * max_abs)
        return EIG_INFO_NONREAL_DIAGONAL;
    return 0;
}

void EIG_FN(eig_matrix_copy_triangle)(int n, eig_storage storage, eig_uplo uplo,
                                      const EIG_T *a, EIG_T *dst)
{
    if (storage == EIG_STORAGE_PACKED) {
        memcpy(dst, a, eig_matrix_elements(n, storage) * sizeof(EIG_T));
        return;
    }
    for (int j = 0; j < n; j++) {
        eig_triangle_column col = eig_triangle_column_of(n, storage, uplo, j);
        memcpy(dst + col.start, a + col.start, (size_t)col.count * sizeof(EIG_T));
    }
}

void EIG_FN(eig_matrix_unpack_lower)(int n, eig_storage storage, eig_uplo uplo,
                                     const EIG_T *a, EIG_T *dst)
{
    for (int j = 0; j < n; j++) {
        eig_triangle_column col = eig_triangle_column_of(n, storage, uplo, j);
        const EIG_T *p = a + col.start;
        if (uplo == EIG_LOWER) {
            EIG_T *d = dst + (size_t)j * n + j;
            d[0] = EIG_CREAL(p[0]);
            for (int k = 1; k < col.count; k++)
                d[k] = p[k];
        } else {
            /* Column j of the upper triangle is row j of the lower one. */
            for (int i = 0; i < j; i++)
                dst[j + (size_t)i * n] = EIG_CONJ(p[i]);
            dst[j + (size_t)j * n] = EIG_CREAL(p[j]);
        }
    }
}

EIG_R EIG_FN(eig_matrix_unpack_lower_split)(int n, eig_storage storage, eig_uplo uplo,
                                            const EIG_T *a, EIG_R *dr, EIG_R *di)
{
    EIG_R big = 0;
    for (int j = 0; j < n; j++) {
        eig_triangle_column col = eig_triangle_column_of(n, storage, uplo, j);
        const EIG_T *p = a + col.start;
        if (uplo == EIG_LOWER) {
            EIG_R *cr = dr + (size_t)j * n + j, *ci = di + (size_t)j * n + j;
            for (int k = 0; k < col.count; k++) {
                EIG_R re = EIG_CREAL(p[k]), im = k == 0 ? 0 : EIG_CIMAG(p[k]);
                cr[k] = re;
                ci[k] = im;
                EIG_R m = EIG_FABS(re) > EIG_FABS(im) ? EIG_FABS(re) : EIG_FABS(im);
                big = m > big ? m : big;
            }
        } else {
            /* Column j of the upper triangle is row j of the lower one. */
            for (int i = 0; i <= j; i++) {
                EIG_R re = EIG_CREAL(p[i]), im = i == j ? 0 : -EIG_CIMAG(p[i]);
                dr[j + (size_t)i * n] = re;
                di[j + (size_t)i * n] = im;
                EIG_R m = EIG_FABS(re) > EIG_FABS(im) ? EIG_FABS(re) : EIG_FABS(im);
                big = m > big ? m : big;
            }
        }
    }
    return big;
}
