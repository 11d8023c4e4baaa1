/*
 * eig_cpu.proto.c - the cpu backend for one precision (Cosnuau 2014 on the
 * host). Included twice by eig_cpu.c with:
 *   EIG_T, EIG_R       complex element and real types
 *   EIG_FN(x)          x##_z or x##_c
 *   EIG_EPS, EIG_SAFMIN  the precision's epsilon and smallest normal
 *   EIG_CREAL, EIG_CIMAG, EIG_FABS, EIG_SQRT, EIG_HYPOT: typed math
 *   EIG_CPU_ROW_BLOCK  rows of Zr per pass of the rotation kernel
 * and EIG_CPU_CLONES / EIG_CPU_CLONES_AVX2 / EIG_CPU_TARGET_AVX512, the
 * function-clone and target attributes of the hot loops.
 *
 * One matrix, all in the thread's workspace (eig_cpu_workspace):
 *  1. unpack the referenced triangle into the lower triangle of A (real and
 *     imaginary parts split, so every loop below is unit-stride real
 *     arithmetic), scale A by a power of two to max|a_ij| in [1, 2), so that
 *     squares neither overflow nor matter when they underflow; steps 2-5 run with subnormals
 *     flushed (eig_cpu_solve_one says why);
 *  2. Householder tridiagonalization in the reduced form, one Hermitian
 *     matrix-vector product per column, fused with the previous column's
 *     rank-2 update (one pass over the trailing triangle): A = Q T Q^H;
 *  3. the diagonal phases S with S^H T S real symmetric (d, e);
 *  4. implicit QR with the Wilkinson shift on (d, e); each rotation is
 *     recorded, then all of them are applied to a real Zr in cache-sized row
 *     blocks;
 *  5. sort ascending, form Q S (reflectors applied four at a time), then
 *     Z = (Q S) Zr by our own register-blocked real-times-complex product
 *     written straight into the interleaved output, unscale the eigenvalues.
 * The values-only job does 1-3, QR without recording, the sort and unscaling.
 */

/* Reflectors per pass of the Q formation; eig_cpu_reflect_block_q is written
 * out for exactly this many (defined once for both precisions). */
#ifndef EIG_CPU_Q_BLOCK
#define EIG_CPU_Q_BLOCK 4
#endif

typedef struct EIG_FN(eig_cpu_work) {
    EIG_R *ar, *ai; /* n x n each, lower: the matrix split, then the reflectors */
    EIG_R *pr, *pi;   /* n each: matrix-vector product, split */
    EIG_R *pnr, *pni; /* n each: the next step's product (fused tridiagonalization) */
    EIG_R *qr, *qi; /* n x n each: real and imaginary parts of Q S */
    EIG_R *vr, *vi; /* n x EIG_CPU_Q_BLOCK each: one block of reflectors, split */
    EIG_R *qtau;    /* EIG_CPU_Q_BLOCK: the block's tau */
    EIG_R *gram_r, *gram_i; /* EIG_CPU_Q_BLOCK^2: the block's u_r^H u_s */
    EIG_T *b;     /* n: complex subdiagonal of T */
    EIG_T *phase; /* n: diagonal of S */
    EIG_R *tau;   /* n: sigma of each reflector (0: identity) */
    EIG_R *d, *e; /* n: real symmetric tridiagonal */
    EIG_R *zr;    /* n x n: the real eigenvectors of (d, e) */
    EIG_R *rot_c, *rot_s; /* rotation_capacity each */
    int *rot_k;           /* column pair (k, k+1) of each recorded rotation */
    int *rot_rows;        /* rows [0, rot_rows) of Zr the rotation can change */
    int *zr_rows;         /* n: column j of Zr is zero from row zr_rows[j] down */
    int *order;           /* n: eigenvalue order */
} EIG_FN(eig_cpu_work);

/* Carves one thread's workspace out of `base` (64-byte aligned pieces);
 * with base NULL only adds up the size. Returns the bytes used. */
static size_t EIG_FN(eig_cpu_work_carve)(int n, int vectors, size_t rotation_capacity,
                                        unsigned char *base, EIG_FN(eig_cpu_work) *w)
{
    size_t nn = (size_t)n * (size_t)n, off = 0;
#define EIG_CARVE(field, type, count)                                                        \
    do {                                                                                     \
        if (base != NULL)                                                                    \
            w->field = (type *)(base + off);                                                 \
        off += eig_cpu_round_up((count) * sizeof(type));                                     \
    } while (0)
    EIG_CARVE(ar, EIG_R, nn);
    EIG_CARVE(ai, EIG_R, nn);
    EIG_CARVE(pr, EIG_R, (size_t)n);
    EIG_CARVE(pi, EIG_R, (size_t)n);
    EIG_CARVE(pnr, EIG_R, (size_t)n);
    EIG_CARVE(pni, EIG_R, (size_t)n);
    EIG_CARVE(b, EIG_T, (size_t)n);
    EIG_CARVE(phase, EIG_T, (size_t)n);
    EIG_CARVE(tau, EIG_R, (size_t)n);
    EIG_CARVE(d, EIG_R, (size_t)n);
    EIG_CARVE(e, EIG_R, (size_t)n);
    EIG_CARVE(order, int, (size_t)n);
    if (vectors) {
        EIG_CARVE(qr, EIG_R, nn);
        EIG_CARVE(qi, EIG_R, nn);
        EIG_CARVE(vr, EIG_R, (size_t)n * EIG_CPU_Q_BLOCK);
        EIG_CARVE(vi, EIG_R, (size_t)n * EIG_CPU_Q_BLOCK);
        EIG_CARVE(qtau, EIG_R, (size_t)EIG_CPU_Q_BLOCK);
        EIG_CARVE(gram_r, EIG_R, (size_t)EIG_CPU_Q_BLOCK * EIG_CPU_Q_BLOCK);
        EIG_CARVE(gram_i, EIG_R, (size_t)EIG_CPU_Q_BLOCK * EIG_CPU_Q_BLOCK);
        EIG_CARVE(zr, EIG_R, nn);
        EIG_CARVE(rot_c, EIG_R, rotation_capacity);
        EIG_CARVE(rot_s, EIG_R, rotation_capacity);
        EIG_CARVE(rot_k, int, rotation_capacity);
        EIG_CARVE(rot_rows, int, rotation_capacity);
        EIG_CARVE(zr_rows, int, (size_t)n);
    } else if (base != NULL) {
        w->qr = w->qi = w->vr = w->vi = w->qtau = w->gram_r = w->gram_i = NULL;
        w->zr = w->rot_c = w->rot_s = NULL;
        w->rot_k = w->rot_rows = w->zr_rows = NULL;
    }
#undef EIG_CARVE
    return off;
}

/* Step 1. Unpacks into split real/imaginary storage and scales A by a power
 * of two so that its largest component lies in [1, 2): returns the factor
 * applied. A power of two is exact, so the scaling costs no accuracy in
 * either direction, and with max|a_ij| near 1 every square and product the
 * QR sweep forms stays far from overflow, while anything that would
 * underflow is below ulp relative to |A| - which is what makes the subnormal
 * flush of eig_cpu_solve_one harmless. (zheev's scaling into [rmin, rmax]
 * is not enough here: a matrix left near rmin ~ 1e-146 has squares near
 * 1e-292, and products of its small entries are subnormal, so flushing them
 * cost LAPACK's underflow test types up to 1e4 ulp.) The largest component
 * stands in for max|a_ij| (within sqrt 2). */
static EIG_R EIG_FN(eig_cpu_load)(int n, const eig_plan_params *p, const EIG_T *src, EIG_R *ar,
                                  EIG_R *ai)
{
    const EIG_R big = EIG_FN(eig_matrix_unpack_lower_split)(n, p->storage, p->uplo, src, ar, ai);
    if (!(big > 0))
        return 1; /* zero matrix (NaN/Inf were rejected before loading) */
    int e;
    (void)frexp((double)big, &e); /* big = m 2^e, m in [0.5, 1) */
    /* 2^(1-e) must itself be representable: for a subnormal-sized big in
     * float it is not, and the largest power of two in range is the best. */
    const int emax = (int)sizeof(EIG_R) == 4 ? 126 : 1022;
    int shift = 1 - e;
    if (shift > emax)
        shift = emax;
    if (shift < -emax)
        shift = -emax;
    const EIG_R scale = (EIG_R)ldexp(1.0, shift);
    if (scale != 1)
        for (int j = 0; j < n; j++) {
            EIG_R *cr = ar + (size_t)j * n, *ci = ai + (size_t)j * n;
            for (int i = j; i < n; i++) {
                cr[i] *= scale;
                ci[i] *= scale;
            }
        }
    return scale;
}

/* p = sigma A22 u for the Hermitian A22 (m x m, lower triangle, split,
 * leading dimension n): one pass per column serves both halves, the column
 * (axpy into p below the diagonal) and its conjugate row (a dot product). */
EIG_CPU_CLONES
static void EIG_FN(eig_cpu_hemv)(int n, int m, EIG_R sigma, const EIG_R *ar, const EIG_R *ai,
                                 const EIG_R *ur, const EIG_R *ui, EIG_R *pr, EIG_R *pi)
{
    for (int i = 0; i < m; i++)
        pr[i] = pi[i] = 0;
    for (int j = 0; j < m; j++) {
        const EIG_R *cr = ar + (size_t)j * n, *ci = ai + (size_t)j * n;
        const EIG_R ujr = ur[j], uji = ui[j];
        EIG_R accr = cr[j] * ujr, acci = cr[j] * uji; /* the diagonal is real */
#pragma omp simd reduction(+ : accr, acci)
        for (int i = j + 1; i < m; i++) {
            pr[i] += cr[i] * ujr - ci[i] * uji;
            pi[i] += cr[i] * uji + ci[i] * ujr;
            accr += cr[i] * ur[i] + ci[i] * ui[i];
            acci += cr[i] * ui[i] - ci[i] * ur[i];
        }
        pr[j] += accr;
        pi[j] += acci;
    }
    for (int i = 0; i < m; i++) {
        pr[i] *= sigma;
        pi[i] *= sigma;
    }
}

/* A22 <- A22 - u q^H - q u^H on the lower triangle (split, ld n), columns
 * j0..j1-1 only. */
EIG_CPU_CLONES
static void EIG_FN(eig_cpu_her2)(int n, int m, int j0, int j1, const EIG_R *ur, const EIG_R *ui,
                                 const EIG_R *qr, const EIG_R *qi, EIG_R *ar, EIG_R *ai)
{
    for (int j = j0; j < j1; j++) {
        EIG_R *cr = ar + (size_t)j * n, *ci = ai + (size_t)j * n;
        const EIG_R qjr = qr[j], qji = qi[j], ujr = ur[j], uji = ui[j];
#pragma omp simd
        for (int i = j; i < m; i++) {
            /* u_i conj(q_j) + q_i conj(u_j) */
            cr[i] -= ur[i] * qjr + ui[i] * qji + qr[i] * ujr + qi[i] * uji;
            ci[i] -= ui[i] * qjr - ur[i] * qji + qi[i] * ujr - qr[i] * uji;
        }
    }
}

/* The dsytd2-style fusion of two steps: columns 1..m-1 of A22 get this step's
 * rank-2 update (as eig_cpu_her2), and each updated column at once adds its
 * share of the next step's product p = A33 v, A33 = A22(1:m-1, 1:m-1), v the
 * next reflector (m-1, already formed from the updated column 0). Why: the
 * update and the product each stream the whole trailing triangle from L2;
 * fused, every element is loaded once, updated, and used while in registers.
 * p (m-1, split) is left unscaled; the diagonal is taken as real. */
EIG_CPU_CLONES
static void EIG_FN(eig_cpu_her2_hemv)(int n, int m, const EIG_R *ur, const EIG_R *ui,
                                      const EIG_R *qr, const EIG_R *qi, const EIG_R *vr,
                                      const EIG_R *vi, EIG_R *ar, EIG_R *ai, EIG_R *pr,
                                      EIG_R *pi)
{
    for (int i = 0; i + 1 < m; i++)
        pr[i] = pi[i] = 0;
    /* rows i of A22 are rows i-1 of A33: p and v are indexed i-1 */
    EIG_R *p1r = pr - 1, *p1i = pi - 1;
    const EIG_R *v1r = vr - 1, *v1i = vi - 1;
    int j = 1;
    /* two columns per pass where both have rows below the pair: u, q, v and p
     * are loaded once for both */
    for (; j + 2 < m; j += 2) {
        EIG_R *cr = ar + (size_t)j * n, *ci = ai + (size_t)j * n;
        EIG_R *dr = cr + n, *di = ci + n;
        const EIG_R qjr = qr[j], qji = qi[j], ujr = ur[j], uji = ui[j];
        const EIG_R qkr = qr[j + 1], qki = qi[j + 1], ukr = ur[j + 1], uki = ui[j + 1];
        const EIG_R vjr = v1r[j], vji = v1i[j], vkr = v1r[j + 1], vki = v1i[j + 1];
        /* the 2 x 2 diagonal block: (j, j), (j+1, j), (j+1, j+1) */
        const EIG_R x00 = cr[j] - (ur[j] * qjr + ui[j] * qji + qr[j] * ujr + qi[j] * uji);
        cr[j] = x00;
        ci[j] -= ui[j] * qjr - ur[j] * qji + qi[j] * ujr - qr[j] * uji;
        const int k = j + 1;
        const EIG_R x10r = cr[k] - (ur[k] * qjr + ui[k] * qji + qr[k] * ujr + qi[k] * uji);
        const EIG_R x10i = ci[k] - (ui[k] * qjr - ur[k] * qji + qi[k] * ujr - qr[k] * uji);
        cr[k] = x10r;
        ci[k] = x10i;
        const EIG_R x11 = dr[k] - (ur[k] * qkr + ui[k] * qki + qr[k] * ukr + qi[k] * uki);
        dr[k] = x11;
        di[k] -= ui[k] * qkr - ur[k] * qki + qi[k] * ukr - qr[k] * uki;
        EIG_R accjr = x00 * vjr + x10r * vkr + x10i * vki;
        EIG_R accji = x00 * vji + x10r * vki - x10i * vkr;
        EIG_R acckr = x11 * vkr + x10r * vjr - x10i * vji;
        EIG_R accki = x11 * vki + x10r * vji + x10i * vjr;
        /* simdlen(8): these columns shorten down the triangle and the rows
         * past the last full vector run scalar; with 16 floats per vector
         * that remainder outweighed the vector part (8 lanes: zmm in double,
         * ymm in float, which measured 17% faster there) */
#pragma omp simd simdlen(8) reduction(+ : accjr, accji, acckr, accki)
        for (int i = j + 2; i < m; i++) {
            const EIG_R wr = ur[i], wi = ui[i], yr = qr[i], yi = qi[i];
            const EIG_R xr = cr[i] - (wr * qjr + wi * qji + yr * ujr + yi * uji);
            const EIG_R xi = ci[i] - (wi * qjr - wr * qji + yi * ujr - yr * uji);
            const EIG_R zr = dr[i] - (wr * qkr + wi * qki + yr * ukr + yi * uki);
            const EIG_R zi = di[i] - (wi * qkr - wr * qki + yi * ukr - yr * uki);
            cr[i] = xr;
            ci[i] = xi;
            dr[i] = zr;
            di[i] = zi;
            const EIG_R sr = v1r[i], si = v1i[i];
            p1r[i] += xr * vjr - xi * vji + zr * vkr - zi * vki;
            p1i[i] += xr * vji + xi * vjr + zr * vki + zi * vkr;
            accjr += xr * sr + xi * si;
            accji += xr * si - xi * sr;
            acckr += zr * sr + zi * si;
            accki += zr * si - zi * sr;
        }
        p1r[j] += accjr;
        p1i[j] += accji;
        p1r[k] += acckr;
        p1i[k] += accki;
    }
    for (; j < m; j++) {
        EIG_R *cr = ar + (size_t)j * n, *ci = ai + (size_t)j * n;
        const EIG_R qjr = qr[j], qji = qi[j], ujr = ur[j], uji = ui[j];
        const EIG_R vjr = v1r[j], vji = v1i[j];
        const EIG_R djr = cr[j] - (ur[j] * qjr + ui[j] * qji + qr[j] * ujr + qi[j] * uji);
        cr[j] = djr;
        ci[j] -= ui[j] * qjr - ur[j] * qji + qi[j] * ujr - qr[j] * uji;
        EIG_R accr = djr * vjr, acci = djr * vji;
#pragma omp simd simdlen(8) reduction(+ : accr, acci) /* simdlen: as above */
        for (int i = j + 1; i < m; i++) {
            const EIG_R xr = cr[i] - (ur[i] * qjr + ui[i] * qji + qr[i] * ujr + qi[i] * uji);
            const EIG_R xi = ci[i] - (ui[i] * qjr - ur[i] * qji + qi[i] * ujr - qr[i] * uji);
            cr[i] = xr;
            ci[i] = xi;
            p1r[i] += xr * vjr - xi * vji;
            p1i[i] += xr * vji + xi * vjr;
            accr += xr * v1r[i] + xi * v1i[i];
            acci += xr * v1i[i] - xi * v1r[i];
        }
        p1r[j] += accr;
        p1i[j] += acci;
    }
}

/* Forms reflector k of step 2 from x = A(k+1:n-1, k) in place (u over x),
 * sets d_k, b_k, tau_k; returns sigma, or 0 when x needs no reflection. */
static EIG_R EIG_FN(eig_cpu_reflector)(int n, int k, EIG_FN(eig_cpu_work) *w)
{
    EIG_R *ar = w->ar, *ai = w->ai;
    const int m = n - k - 1;
    const size_t off = (size_t)k * n + k + 1; /* x = A(k+1:n-1, k) */
    EIG_R *xr = ar + off, *xi = ai + off;
    EIG_R tail2 = 0;
    for (int i = 1; i < m; i++)
        tail2 += xr[i] * xr[i] + xi[i] * xi[i];
    EIG_R ax0 = EIG_SQRT(xr[0] * xr[0] + xi[0] * xi[0]);
    w->d[k] = ar[(size_t)k * n + k];
    if (tail2 == 0) {
        /* nothing to annihilate: H = I, the phase step takes x_1 as is */
        w->tau[k] = 0;
        w->b[k] = xr[0] + I * xi[0];
        return 0;
    }
    EIG_R norm = EIG_SQRT(ax0 * ax0 + tail2);
    EIG_R phr = ax0 > 0 ? xr[0] / ax0 : 1, phi = ax0 > 0 ? xi[0] / ax0 : 0;
    EIG_R sigma = 1 / (norm * (norm + ax0));
    xr[0] += phr * norm;
    xi[0] += phi * norm;
    w->tau[k] = sigma;
    w->b[k] = -(phr + I * phi) * norm;
    return sigma;
}

/* Step 2. Reduces the lower triangle of A (split) to Hermitian tridiagonal
 * form T = Q^H A Q, Q = H_0 ... H_{n-3}, H_k = I - tau_k u_k u_k^H acting on
 * rows k+1..n-1. The reduced form of Cosnuau 2014 (section 2.2), real sigma:
 *     u = x + e^{i theta} |x| e_1,  sigma = 1 / (|x| (|x| + |x_1|)),
 *     p = sigma A u,  w = p - (sigma/2) (u^H p) u,  A <- A - u w^H - w u^H,
 * (the paper writes v = -sigma A u and adds; the same update). u_k overwrites
 * column k below the diagonal, the diagonal goes to d, the complex
 * subdiagonal b_k = -e^{i theta} |x| to b. Sums of squares are safe because
 * step 1 scaled A into [rmin, rmax]. Consecutive steps are fused: step k
 * updates column 0 of its A22, forms reflector k+1 from it, then passes over
 * the rest once for its update and step k+1's product (eig_cpu_her2_hemv). */
static void EIG_FN(eig_cpu_tridiagonalize)(int n, EIG_FN(eig_cpu_work) *w)
{
    EIG_R *ar = w->ar, *ai = w->ai;
    EIG_R *pr = w->pr, *pi = w->pi, *pnr = w->pnr, *pni = w->pni;
    EIG_R sigma = 0;
    int formed = 0;  /* the reflector of step k was formed by step k-1 */
    int have_p = 0;  /* ... and its product p = A22 u left, unscaled, in pr/pi */
    for (int k = 0; k + 2 < n; k++) {
        if (!formed)
            sigma = EIG_FN(eig_cpu_reflector)(n, k, w);
        formed = 0;
        if (sigma == 0)
            continue;
        const int m = n - k - 1;
        const size_t off = (size_t)k * n + k + 1, off22 = (size_t)(k + 1) * n + k + 1;
        const EIG_R *xr = ar + off, *xi = ai + off;
        if (have_p) {
            for (int i = 0; i < m; i++) {
                pr[i] *= sigma;
                pi[i] *= sigma;
            }
        } else {
            EIG_FN(eig_cpu_hemv)(n, m, sigma, ar + off22, ai + off22, xr, xi, pr, pi);
        }
        have_p = 0;
        EIG_R dot = 0; /* Re(u^H p); the imaginary part is 0 for Hermitian A */
        for (int i = 0; i < m; i++)
            dot += xr[i] * pr[i] + xi[i] * pi[i];
        EIG_R half = (EIG_R)0.5 * sigma * dot;
        for (int i = 0; i < m; i++) {
            pr[i] -= half * xr[i];
            pi[i] -= half * xi[i];
        }
        /* column 0 of A22 first: the next reflector is formed from it, and
         * the rest of the update then carries the next product along */
        EIG_FN(eig_cpu_her2)(n, m, 0, 1, xr, xi, pr, pi, ar + off22, ai + off22);
        if (k + 3 < n) {
            sigma = EIG_FN(eig_cpu_reflector)(n, k + 1, w);
            formed = 1;
        }
        if (formed && sigma != 0) {
            const size_t offv = (size_t)(k + 1) * n + k + 2;
            EIG_FN(eig_cpu_her2_hemv)(n, m, xr, xi, pr, pi, ar + offv, ai + offv, ar + off22,
                                      ai + off22, pnr, pni);
            EIG_R *t = pr;
            pr = pnr;
            pnr = t;
            t = pi;
            pi = pni;
            pni = t;
            have_p = 1;
        } else {
            EIG_FN(eig_cpu_her2)(n, m, 1, m, xr, xi, pr, pi, ar + off22, ai + off22);
        }
    }
    if (n >= 2) {
        size_t last = (size_t)(n - 2) * n + n - 1;
        w->d[n - 2] = ar[(size_t)(n - 2) * n + n - 2];
        w->b[n - 2] = ar[last] + I * ai[last];
        w->tau[n - 2] = 0;
    }
    w->d[n - 1] = ar[(size_t)(n - 1) * n + n - 1];
}

/* Step 3. S = diag(s_0..s_{n-1}), s_0 = 1, s_{k+1} = s_k b_k / |b_k|, makes
 * S^H T S real with off-diagonal |b_k|. A zero b_k keeps the phase (no
 * division by zero); each s is renormalized so |s| = 1 does not drift. */
static void EIG_FN(eig_cpu_phases)(int n, EIG_FN(eig_cpu_work) *w)
{
    EIG_T s = 1;
    w->phase[0] = 1;
    for (int k = 0; k + 1 < n; k++) {
        EIG_R mag = EIG_HYPOT(EIG_CREAL(w->b[k]), EIG_CIMAG(w->b[k]));
        w->e[k] = mag;
        if (mag > 0) {
            s = s * (w->b[k] / mag);
            s = s / EIG_HYPOT(EIG_CREAL(s), EIG_CIMAG(s));
        }
        w->phase[k + 1] = s;
    }
}

/* Applies rotations [0, count) of the record to Zr's columns (k, k+1):
 * col_k <- c col_k + s col_{k+1}, col_{k+1} <- c col_{k+1} - s col_k.
 * Row blocks of EIG_CPU_ROW_BLOCK rows stay in L1 while every rotation
 * passes over them; within a block each column piece is contiguous. A run of
 * rotations on consecutive pairs (one QR sweep) carries the shared column in
 * registers, so each rotation loads and stores one column piece, not two.
 * Zr fills in from I one subdiagonal per sweep: a block skips the rotations
 * whose rows_end (eig_cpu_record_push) says they only mix zeros there
 * (about a tenth of this pass's time at n = 128; exact, since a rotation of
 * two zeros is zero). */
EIG_CPU_CLONES
static void EIG_FN(eig_cpu_rotations_apply)(int n, const EIG_FN(eig_cpu_work) *w, int count,
                                            EIG_R *zr)
{
    enum { RB = EIG_CPU_ROW_BLOCK };
    const int *rk = w->rot_k, *rows_end = w->rot_rows;
    const EIG_R *rc = w->rot_c, *rs = w->rot_s;
    for (int i0 = 0; i0 < n; i0 += RB) {
        if (n - i0 < RB) {
            int rows = n - i0;
            for (int r = 0; r < count; r++) {
                if (rows_end[r] <= i0)
                    continue;
                EIG_R *x = zr + (size_t)rk[r] * n + i0, *y = x + n;
                const EIG_R c = rc[r], s = rs[r];
                for (int i = 0; i < rows; i++) {
                    EIG_R t = y[i];
                    y[i] = c * t - s * x[i];
                    x[i] = c * x[i] + s * t;
                }
            }
            continue;
        }
        int r = 0;
        while (r < count) {
            int k = rk[r], run = 1;
            while (r + run < count && rk[r + run] == k + run)
                run++;
            /* rows_end never decreases along a run (each rotation leaves its
             * extent on the column the next one shares): skip the prefix
             * that only mixes zeros in this block */
            int skip = 0;
            while (skip < run && rows_end[r + skip] <= i0)
                skip++;
            if (skip == run) {
                r += run;
                continue;
            }
            k += skip;
            r += skip;
            run -= skip;
            EIG_R carry[RB];
            EIG_R *col = zr + (size_t)k * n + i0;
            for (int i = 0; i < RB; i++)
                carry[i] = col[i];
            for (int q = 0; q < run; q++) {
                EIG_R *y = col + n;
                const EIG_R c = rc[r + q], s = rs[r + q];
#pragma omp simd
                for (int i = 0; i < RB; i++) {
                    EIG_R t = y[i];
                    col[i] = c * carry[i] + s * t;
                    carry[i] = c * t - s * carry[i];
                }
                col = y;
            }
            for (int i = 0; i < RB; i++)
                col[i] = carry[i];
            r += run;
        }
    }
}

/* The rotation record of one QR run: flushed into Zr when full. */
typedef struct EIG_FN(eig_cpu_record) {
    EIG_FN(eig_cpu_work) *w;
    int n, count, capacity; /* capacity 0: values only, nothing recorded */
} EIG_FN(eig_cpu_record);

static void EIG_FN(eig_cpu_record_push)(EIG_FN(eig_cpu_record) *rec, int k, EIG_R c, EIG_R s)
{
    if (rec->capacity == 0)
        return;
    if (rec->count == rec->capacity) {
        EIG_FN(eig_cpu_rotations_apply)(rec->n, rec->w, rec->count, rec->w->zr);
        rec->count = 0;
    }
    /* Zr starts as I: (k, k+1) mixes two columns into rows below which both
     * are still zero, and leaves both nonzero down to there */
    int *rows = rec->w->zr_rows;
    const int end = rows[k] > rows[k + 1] ? rows[k] : rows[k + 1];
    rows[k] = rows[k + 1] = end;
    rec->w->rot_rows[rec->count] = end;
    rec->w->rot_k[rec->count] = k;
    rec->w->rot_c[rec->count] = c;
    rec->w->rot_s[rec->count] = s;
    rec->count++;
}

/* e_k is negligible next to its diagonal neighbours (dsteqr's test). */
static int EIG_FN(eig_cpu_negligible)(const EIG_R *d, const EIG_R *e, int k)
{
    EIG_R ek = EIG_FABS(e[k]);
    return ek <= EIG_EPS * EIG_SQRT(EIG_FABS(d[k])) * EIG_SQRT(EIG_FABS(d[k + 1])) + EIG_SAFMIN;
}

/* Step 4. Implicit QR with the Wilkinson shift on the real symmetric
 * tridiagonal (d, e), deflating from the bottom. Rotations go to rec.
 * Allowed EIG_CPU_QR_SWEEPS (EIG_QR_MAX_SWEEPS; eig_cpu.c) * n sweeps in
 * all (LAPACK's MAXIT*N); returns 0,
 * or the number of off-diagonals left unconverged. */
static int EIG_FN(eig_cpu_tridiagonal_qr)(int n, EIG_R *d, EIG_R *e, EIG_FN(eig_cpu_record) *rec)
{
    long sweeps_left = (long)EIG_CPU_QR_SWEEPS * n;
    int end = n - 1;
    while (end > 0) {
        if (EIG_FN(eig_cpu_negligible)(d, e, end - 1)) {
            e[end - 1] = 0;
            end--;
            continue;
        }
        int start = end - 1;
        while (start > 0 && !EIG_FN(eig_cpu_negligible)(d, e, start - 1))
            start--;
        if (start > 0)
            e[start - 1] = 0;

        if (end - start == 1) {
            /* 2x2 block: one Jacobi rotation diagonalizes it exactly */
            EIG_R a = d[start], b = e[start], cc = d[end];
            EIG_R tau = (cc - a) / (2 * b);
            EIG_R t = (tau >= 0 ? 1 : -1) / (EIG_FABS(tau) + EIG_HYPOT(1, tau));
            EIG_R c = 1 / EIG_HYPOT(1, t), s = t * c;
            d[start] = a - t * b;
            d[end] = cc + t * b;
            e[start] = 0;
            EIG_FN(eig_cpu_record_push)(rec, start, c, -s);
            end -= 2;
            continue;
        }
        if (sweeps_left-- == 0) {
            int unconverged = 0;
            for (int k = 0; k < end; k++)
                unconverged += e[k] != 0;
            return unconverged;
        }

        /* Wilkinson shift: the eigenvalue of the trailing 2x2 nearer d[end],
         * written with t = delta/b so that nothing is squared */
        EIG_R b = e[end - 1];
        EIG_R t = (d[end - 1] - d[end]) / (2 * b);
        EIG_R r = EIG_HYPOT(t, 1);
        EIG_R mu = d[end] - b / (t + (t >= 0 ? r : -r));

        EIG_R x = d[start] - mu, z = e[start];
        for (int k = start; k < end; k++) {
            /* no hypot: A was scaled to max|a_ij| in [1, 2), so squares are safe */
            const EIG_R q = x * x + z * z;
            EIG_R c, s, rr;
            if (q == 0) {
                c = 1;
                s = 0;
                rr = 0;
            } else {
                /* 1/rr as sqrt(q) * (1/q): the sweep is a serial chain
                 * through c and s, and this way the square root and the
                 * division run side by side instead of one after the other
                 * (c, s move by an ulp or two; 1/q cannot overflow, q is
                 * normal under the flush of eig_cpu_solve_one) */
                rr = EIG_SQRT(q);
                const EIG_R inv = rr * (1 / q);
                c = x * inv;
                s = z * inv;
            }
            if (k > start)
                e[k - 1] = rr;
            EIG_R a0 = d[k], b0 = e[k], c0 = d[k + 1];
            EIG_R cs = c * s, c2 = c * c, s2 = s * s;
            d[k] = c2 * a0 + 2 * cs * b0 + s2 * c0;
            d[k + 1] = s2 * a0 - 2 * cs * b0 + c2 * c0;
            e[k] = cs * (c0 - a0) + (c2 - s2) * b0;
            if (k + 1 < end) {
                x = e[k];
                z = s * e[k + 1]; /* the bulge at (k+2, k) */
                e[k + 1] *= c;
            }
            EIG_FN(eig_cpu_record_push)(rec, k, c, s);
        }
    }
    return 0;
}

/* Step 5 helpers: insertion sort of the eigenvalue order (n is small and the
 * QR output is nearly sorted in blocks). */
static void EIG_FN(eig_cpu_sort_order)(int n, const EIG_R *d, int *order)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i - 1;
        while (j >= 0 && d[order[j]] > d[v]) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = v;
    }
}

/* Applies the block H_{k0} ... H_{k0+3} from the left to m rows of `cols`
 * columns of Q (split storage, ld n): Q22 <- H Q22, where the m rows may
 * start above Q22 in rows where both Q22's columns and v are zero.
 * v (m x 4, split, ld m) holds the block's reflectors, each zero above its
 * first row (a short last block is padded with zero reflectors), g (split,
 * 4 x 4, row r column s) their Gram matrix g_rs = u_r^H u_s (r < s used).
 * Why a block: one reflector at a time reads and writes all of Q22 twice per
 * reflector and pays a horizontal sum per column each time; the block reads
 * each column once for four dot products and writes it once for four
 * updates, and the triangular recurrence
 *     y_r = u_r^H q - sum_{s>r} tau_s g_rs y_s
 * turns the dot products with the original column into those the
 * sequential product H_{k0} (... (H_{k0+3} q)) would have taken. */
/* The triangular recurrence of eig_cpu_reflect_block_q for one column: d
 * (the four dot products u_r^H q) in, tau_r y_r out, from the last reflector
 * (applied first) back, so that d of t > r already holds tau_t y_t. */
static inline void EIG_FN(eig_cpu_block_y)(const EIG_R *tau, const EIG_R *gr, const EIG_R *gi,
                                           EIG_R *dr, EIG_R *di)
{
    enum { NB = EIG_CPU_Q_BLOCK };
    for (int r = NB - 1; r >= 0; r--) {
        EIG_R yr = dr[r], yi = di[r];
        for (int t = r + 1; t < NB; t++) {
            const EIG_R g_r = gr[r * NB + t], g_i = gi[r * NB + t];
            yr -= g_r * dr[t] - g_i * di[t];
            yi -= g_r * di[t] + g_i * dr[t];
        }
        dr[r] = tau[r] * yr;
        di[r] = tau[r] * yi;
    }
}

/* d_r = u_r^H q over rows [0, m) for the four reflectors (v split, ld m). */
static inline void EIG_FN(eig_cpu_block_dot)(int m, const EIG_R *vr, const EIG_R *vi,
                                             const EIG_R *cr, const EIG_R *ci, EIG_R *dr,
                                             EIG_R *di)
{
    const EIG_R *u0r = vr, *u1r = vr + m, *u2r = vr + 2 * (size_t)m, *u3r = vr + 3 * (size_t)m;
    const EIG_R *u0i = vi, *u1i = vi + m, *u2i = vi + 2 * (size_t)m, *u3i = vi + 3 * (size_t)m;
    EIG_R d0r = 0, d0i = 0, d1r = 0, d1i = 0, d2r = 0, d2i = 0, d3r = 0, d3i = 0;
#pragma omp simd reduction(+ : d0r, d0i, d1r, d1i, d2r, d2i, d3r, d3i)
    for (int i = 0; i < m; i++) {
        const EIG_R xr = cr[i], xi = ci[i];
        d0r += xr * u0r[i] + xi * u0i[i];
        d0i += xi * u0r[i] - xr * u0i[i];
        d1r += xr * u1r[i] + xi * u1i[i];
        d1i += xi * u1r[i] - xr * u1i[i];
        d2r += xr * u2r[i] + xi * u2i[i];
        d2i += xi * u2r[i] - xr * u2i[i];
        d3r += xr * u3r[i] + xi * u3i[i];
        d3i += xi * u3r[i] - xr * u3i[i];
    }
    dr[0] = d0r, dr[1] = d1r, dr[2] = d2r, dr[3] = d3r;
    di[0] = d0i, di[1] = d1i, di[2] = d2i, di[3] = d3i;
}

EIG_CPU_CLONES
static void EIG_FN(eig_cpu_reflect_block_q)(int n, int m, int cols, const EIG_R *tau, const EIG_R *vr,
                                            const EIG_R *vi, const EIG_R *gr, const EIG_R *gi,
                                            EIG_R *qr, EIG_R *qi)
{
    enum { NB = EIG_CPU_Q_BLOCK };
    const EIG_R *u0r = vr, *u1r = vr + m, *u2r = vr + 2 * (size_t)m, *u3r = vr + 3 * (size_t)m;
    const EIG_R *u0i = vi, *u1i = vi + m, *u2i = vi + 2 * (size_t)m, *u3i = vi + 3 * (size_t)m;
    int j = 0;
    /* two columns per pass: each u element loaded serves both columns (the
     * same dot products and updates as the one-column tail below) */
    for (; j + 2 <= cols; j += 2) {
        EIG_R *ar_ = qr + (size_t)j * n, *ai_ = qi + (size_t)j * n;
        EIG_R *br = ar_ + n, *bi = ai_ + n;
        EIG_R a0r = 0, a0i = 0, a1r = 0, a1i = 0, a2r = 0, a2i = 0, a3r = 0, a3i = 0;
        EIG_R b0r = 0, b0i = 0, b1r = 0, b1i = 0, b2r = 0, b2i = 0, b3r = 0, b3i = 0;
#pragma omp simd reduction(+ : a0r, a0i, a1r, a1i, a2r, a2i, a3r, a3i, b0r, b0i, b1r, b1i, b2r, b2i, b3r, b3i)
        for (int i = 0; i < m; i++) {
            const EIG_R w0r = u0r[i], w0i = u0i[i], w1r = u1r[i], w1i = u1i[i];
            const EIG_R w2r = u2r[i], w2i = u2i[i], w3r = u3r[i], w3i = u3i[i];
            const EIG_R xr = ar_[i], xi = ai_[i], yr = br[i], yi = bi[i];
            a0r += xr * w0r + xi * w0i;
            a0i += xi * w0r - xr * w0i;
            a1r += xr * w1r + xi * w1i;
            a1i += xi * w1r - xr * w1i;
            a2r += xr * w2r + xi * w2i;
            a2i += xi * w2r - xr * w2i;
            a3r += xr * w3r + xi * w3i;
            a3i += xi * w3r - xr * w3i;
            b0r += yr * w0r + yi * w0i;
            b0i += yi * w0r - yr * w0i;
            b1r += yr * w1r + yi * w1i;
            b1i += yi * w1r - yr * w1i;
            b2r += yr * w2r + yi * w2i;
            b2i += yi * w2r - yr * w2i;
            b3r += yr * w3r + yi * w3i;
            b3i += yi * w3r - yr * w3i;
        }
        EIG_R dar[NB] = {a0r, a1r, a2r, a3r}, dai[NB] = {a0i, a1i, a2i, a3i};
        EIG_R dbr[NB] = {b0r, b1r, b2r, b3r}, dbi[NB] = {b0i, b1i, b2i, b3i};
        EIG_FN(eig_cpu_block_y)(tau, gr, gi, dar, dai);
        EIG_FN(eig_cpu_block_y)(tau, gr, gi, dbr, dbi);
#pragma omp simd
        for (int i = 0; i < m; i++) {
            const EIG_R w0r = u0r[i], w0i = u0i[i], w1r = u1r[i], w1i = u1i[i];
            const EIG_R w2r = u2r[i], w2i = u2i[i], w3r = u3r[i], w3i = u3i[i];
            ar_[i] -= w0r * dar[0] - w0i * dai[0] + w1r * dar[1] - w1i * dai[1] +
                      w2r * dar[2] - w2i * dai[2] + w3r * dar[3] - w3i * dai[3];
            ai_[i] -= w0r * dai[0] + w0i * dar[0] + w1r * dai[1] + w1i * dar[1] +
                      w2r * dai[2] + w2i * dar[2] + w3r * dai[3] + w3i * dar[3];
            br[i] -= w0r * dbr[0] - w0i * dbi[0] + w1r * dbr[1] - w1i * dbi[1] +
                     w2r * dbr[2] - w2i * dbi[2] + w3r * dbr[3] - w3i * dbi[3];
            bi[i] -= w0r * dbi[0] + w0i * dbr[0] + w1r * dbi[1] + w1i * dbr[1] +
                     w2r * dbi[2] + w2i * dbr[2] + w3r * dbi[3] + w3i * dbr[3];
        }
    }
    for (; j < cols; j++) {
        EIG_R *cr = qr + (size_t)j * n, *ci = qi + (size_t)j * n;
        EIG_R dr[NB], di[NB];
        EIG_FN(eig_cpu_block_dot)(m, vr, vi, cr, ci, dr, di);
        EIG_FN(eig_cpu_block_y)(tau, gr, gi, dr, di);
#pragma omp simd
        for (int i = 0; i < m; i++) {
            cr[i] -= u0r[i] * dr[0] - u0i[i] * di[0] + u1r[i] * dr[1] - u1i[i] * di[1] +
                     u2r[i] * dr[2] - u2i[i] * di[2] + u3r[i] * dr[3] - u3i[i] * di[3];
            ci[i] -= u0r[i] * di[0] + u0i[i] * dr[0] + u1r[i] * di[1] + u1i[i] * dr[1] +
                     u2r[i] * di[2] + u2i[i] * dr[2] + u3r[i] * di[3] + u3i[i] * dr[3];
        }
    }
}

/* Forms Q S explicitly in (qr, qi): Q = H_0 ... H_{n-3} accumulated
 * backwards in blocks of EIG_CPU_Q_BLOCK reflectors (each block only touches
 * the trailing rows and columns that later ones left as I), then column j
 * scaled by s_j. */
static void EIG_FN(eig_cpu_form_q)(int n, EIG_FN(eig_cpu_work) *w)
{
    enum { NB = EIG_CPU_Q_BLOCK };
    size_t nn = (size_t)n * (size_t)n;
    memset(w->qr, 0, nn * sizeof(EIG_R));
    memset(w->qi, 0, nn * sizeof(EIG_R));
    for (int i = 0; i < n; i++)
        w->qr[(size_t)i * n + i] = 1;
    for (int kend = n - 3; kend >= 0; kend -= NB) {
        const int k0 = kend - NB + 1 > 0 ? kend - NB + 1 : 0, nb = kend - k0 + 1;
        const int m = n - k0 - 1; /* rows and columns k0+1..n-1 */
        /* the kernel's loops run over rows, and a row count that is not a
         * multiple of the vector length leaves a scalar remainder on every
         * column; rows 0..k0 of these columns of Q are exactly zero (Q =
         * diag(I, Q22) so far), so start up to 15 rows higher with v zero
         * there: the remainder disappears, the padded rows add exact zeros
         * (the vector sums only group their terms differently) */
        const int pad = (16 - m % 16) % 16 < k0 + 1 ? (16 - m % 16) % 16 : k0 + 1;
        const int rows = m + pad;
        EIG_R *vr = w->vr, *vi = w->vi;
        for (int r = nb; r < NB; r++) {
            /* padding: zero reflectors after the block's last */
            memset(vr + (size_t)r * rows, 0, (size_t)rows * sizeof(EIG_R));
            memset(vi + (size_t)r * rows, 0, (size_t)rows * sizeof(EIG_R));
            w->qtau[r] = 0;
        }
        for (int r = 0; r < nb; r++) {
            /* u_{k0+r} lives in column k0+r of the reduced A from row k0+r+1;
             * an identity reflector (tau 0) enters as a zero column */
            const int k = k0 + r, first = pad + r;
            const EIG_R *ur = w->ar + (size_t)k * n + k + 1, *ui = w->ai + (size_t)k * n + k + 1;
            EIG_R *cr = vr + (size_t)r * rows, *ci = vi + (size_t)r * rows;
            const int identity = w->tau[k] == 0;
            for (int i = 0; i < first; i++)
                cr[i] = ci[i] = 0;
            for (int i = first; i < rows; i++) {
                cr[i] = identity ? 0 : ur[i - first];
                ci[i] = identity ? 0 : ui[i - first];
            }
            w->qtau[r] = w->tau[k];
        }
        for (int r = 0; r < NB; r++)
            for (int t = r + 1; t < NB; t++) {
                const EIG_R *xr = vr + (size_t)r * rows, *xi = vi + (size_t)r * rows;
                const EIG_R *yr = vr + (size_t)t * rows, *yi = vi + (size_t)t * rows;
                EIG_R sr = 0, si = 0;
                for (int i = pad + t; i < rows; i++) {
                    sr += xr[i] * yr[i] + xi[i] * yi[i];
                    si += xr[i] * yi[i] - xi[i] * yr[i];
                }
                w->gram_r[r * NB + t] = sr;
                w->gram_i[r * NB + t] = si;
            }
        size_t off = (size_t)(k0 + 1) * n + (size_t)(k0 + 1 - pad);
        EIG_FN(eig_cpu_reflect_block_q)(n, rows, m, w->qtau, vr, vi, w->gram_r, w->gram_i,
                                        w->qr + off, w->qi + off);
    }
    for (int j = 1; j < n; j++) {
        EIG_R sr = EIG_CREAL(w->phase[j]), si = EIG_CIMAG(w->phase[j]);
        EIG_R *cr = w->qr + (size_t)j * n, *ci = w->qi + (size_t)j * n;
        for (int i = 0; i < n; i++) {
            EIG_R r = cr[i] * sr - ci[i] * si;
            ci[i] = cr[i] * si + ci[i] * sr;
            cr[i] = r;
        }
    }
}

/* Z(i, j) = sum_k (Q S)(i, k) Zs(k, j) one element at a time, for rows
 * [i0, i1) and columns [j0, j1): the edges the vector kernel leaves. */
static void EIG_FN(eig_cpu_back_transform_edge)(int n, int i0, int i1, int j0, int j1,
                                                const EIG_R *qr, const EIG_R *qi,
                                                const EIG_R *zr, const int *order, EIG_R *zo)
{
    for (int j = j0; j < j1; j++) {
        const EIG_R *b = zr + (size_t)order[j] * n;
        for (int i = i0; i < i1; i++) {
            EIG_R sr = 0, si = 0;
            for (int k = 0; k < n; k++) {
                sr += qr[(size_t)k * n + i] * b[k];
                si += qi[(size_t)k * n + i] * b[k];
            }
            zo[2 * ((size_t)j * n + i)] = sr;
            zo[2 * ((size_t)j * n + i) + 1] = si;
        }
    }
}

/* Z = (Q S) Zs for real Zs, written straight into the interleaved complex
 * output (n x n each; qr, qi, zr with ld n; zo 2n x n reals). Column j of Zs
 * is column order[j] of Zr (the ascending sort, read in place). Why not two
 * BLAS GEMMs: the OpenBLAS of our hosts may not know the CPU and fall back
 * to SSE kernels, and the second pass that interleaved the two products
 * costs a full sweep over Z.
 * The kernel keeps a block of 2 vectors of rows x 4 columns of both parts of
 * Z in sixteen vector accumulators while k runs over the panel of Q S (which
 * stays in L1 across the column blocks); FMAs come from -ffp-contract=fast.
 * It is defined for two vector widths because GCC's generic vectors only map
 * well onto registers of their own size: 64 bytes fill AVX-512's 32 zmm
 * registers, while on AVX2 a 64-byte vector is split and spilled (twice
 * slower than BLAS), so AVX2 and older take the 32-byte build. */
#define EIG_CPU_BACK_TRANSFORM_DEFINE(name, bytes, attributes)                               \
    attributes static void name(int n, const EIG_R *qr, const EIG_R *qi, const EIG_R *zr,    \
                                const int *order, EIG_R *zo)                                 \
    {                                                                                        \
        typedef EIG_R vec __attribute__((vector_size(bytes)));                               \
        enum { L = (int)((bytes) / sizeof(EIG_R)), RB = 2 * L, CB = 4 };                     \
        const int i_end = n - n % RB, j_end = n - n % CB;                                    \
        for (int i0 = 0; i0 < i_end; i0 += RB)                                               \
            for (int j0 = 0; j0 < j_end; j0 += CB) {                                         \
                const EIG_R *b[CB];                                                          \
                for (int c = 0; c < CB; c++)                                                 \
                    b[c] = zr + (size_t)order[j0 + c] * n;                                   \
                /* acc[c][0], [1]: real part, rows i0.., i0+L..; [2], [3]: imaginary */      \
                vec acc[CB][4];                                                              \
                for (int c = 0; c < CB; c++)                                                 \
                    for (int h = 0; h < 4; h++)                                              \
                        acc[c][h] = (vec){0};                                                \
                for (int k = 0; k < n; k++) {                                                \
                    vec x[4];                                                                \
                    memcpy(&x[0], qr + (size_t)k * n + i0, sizeof(vec));                     \
                    memcpy(&x[1], qr + (size_t)k * n + i0 + L, sizeof(vec));                 \
                    memcpy(&x[2], qi + (size_t)k * n + i0, sizeof(vec));                     \
                    memcpy(&x[3], qi + (size_t)k * n + i0 + L, sizeof(vec));                 \
                    for (int c = 0; c < CB; c++) {                                           \
                        const EIG_R bk = b[c][k];                                            \
                        for (int h = 0; h < 4; h++)                                          \
                            acc[c][h] += x[h] * bk;                                          \
                    }                                                                        \
                }                                                                            \
                for (int c = 0; c < CB; c++) {                                               \
                    EIG_R re[RB], im[RB];                                                    \
                    memcpy(re, &acc[c][0], sizeof(vec));                                     \
                    memcpy(re + L, &acc[c][1], sizeof(vec));                                 \
                    memcpy(im, &acc[c][2], sizeof(vec));                                     \
                    memcpy(im + L, &acc[c][3], sizeof(vec));                                 \
                    EIG_R *out = zo + 2 * ((size_t)(j0 + c) * n + i0);                       \
                    for (int i = 0; i < RB; i++) {                                           \
                        out[2 * i] = re[i];                                                  \
                        out[2 * i + 1] = im[i];                                              \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        EIG_FN(eig_cpu_back_transform_edge)(n, 0, i_end, j_end, n, qr, qi, zr, order, zo);   \
        EIG_FN(eig_cpu_back_transform_edge)(n, i_end, n, 0, n, qr, qi, zr, order, zo);       \
    }

EIG_CPU_BACK_TRANSFORM_DEFINE(EIG_FN(eig_cpu_back_transform_32), 32, EIG_CPU_CLONES_AVX2)
#ifdef EIG_CPU_TARGET_AVX512
EIG_CPU_BACK_TRANSFORM_DEFINE(EIG_FN(eig_cpu_back_transform_64), 64, EIG_CPU_TARGET_AVX512)
#endif

static void EIG_FN(eig_cpu_back_transform)(int n, const EIG_R *qr, const EIG_R *qi,
                                           const EIG_R *zr, const int *order, EIG_R *zo)
{
#ifdef EIG_CPU_TARGET_AVX512
    if (eig_cpu_has_avx512())
        EIG_FN(eig_cpu_back_transform_64)(n, qr, qi, zr, order, zo);
    else
#endif
        EIG_FN(eig_cpu_back_transform_32)(n, qr, qi, zr, order, zo);
}

/* Steps 2-5 on the loaded, scaled matrix: leaves the eigenvalues (scaled)
 * in d with their ascending order in order, and Z in zout when not NULL;
 * returns the QR info. */
static int EIG_FN(eig_cpu_solve_scaled)(const eig_cpu_plan *plan, EIG_FN(eig_cpu_work) *w,
                                        EIG_T *zout)
{
    const int n = plan->params.n;
    EIG_FN(eig_cpu_tridiagonalize)(n, w);
    EIG_FN(eig_cpu_phases)(n, w);

    EIG_FN(eig_cpu_record) rec = {w, n, 0, 0};
    if (zout != NULL) {
        rec.capacity = (int)plan->rotation_capacity;
        memset(w->zr, 0, (size_t)n * n * sizeof(EIG_R));
        for (int i = 0; i < n; i++) {
            w->zr[(size_t)i * n + i] = 1;
            w->zr_rows[i] = i + 1;
        }
    }
    int info = EIG_FN(eig_cpu_tridiagonal_qr)(n, w->d, w->e, &rec);
    if (info != 0)
        return info;
    EIG_FN(eig_cpu_sort_order)(n, w->d, w->order);
    if (zout == NULL)
        return 0;

    EIG_FN(eig_cpu_rotations_apply)(n, w, rec.count, w->zr);
    EIG_FN(eig_cpu_form_q)(n, w);
    EIG_FN(eig_cpu_back_transform)(n, w->qr, w->qi, w->zr, w->order, (EIG_R *)zout);
    return 0;
}

/* Solves one matrix; returns its info (results left for the caller to NaN).
 * Steps 2-5 run with subnormals flushed (eig_cpu_fp_flush_enter): after the
 * scaling of step 1 (max|a_ij| in [1, 2)) a subnormal is below safmin relative to max|a_ij|
 * (1e-38 in float, far under ulp), but in float the eigenvector entries
 * that decay through the rotations reach the subnormal range routinely, and
 * every operation on one then costs a microcode assist (the float rotation
 * pass ran slower than the double one). The unscaling of the eigenvalues,
 * which may legitimately produce subnormals, runs after the flush is lifted. */
static int EIG_FN(eig_cpu_solve_one)(const eig_cpu_plan *plan, EIG_FN(eig_cpu_work) *w,
                                     const EIG_T *src, EIG_R *wout, EIG_T *zout)
{
    const eig_plan_params *p = &plan->params;
    const int n = p->n;
    int bad = EIG_FN(eig_matrix_check)(n, p->storage, p->uplo, src);
    if (bad != 0)
        return bad;
    EIG_R scale = EIG_FN(eig_cpu_load)(n, p, src, w->ar, w->ai);
    const unsigned fp = eig_cpu_fp_flush_enter();
    int info = EIG_FN(eig_cpu_solve_scaled)(plan, w, zout);
    eig_cpu_fp_flush_leave(fp);
    if (info != 0)
        return info;
    for (int k = 0; k < n; k++)
        wout[k] = w->d[w->order[k]] / scale;
    return 0;
}

static eig_error EIG_FN(eig_cpu_execute)(eig_cpu_plan *plan, const void *a_all, void *w_all,
                                         void *z_all, int *info)
{
    const eig_plan_params *p = &plan->params;
    const int n = p->n;
    const size_t a_stride = eig_matrix_elements(n, p->storage);
    const size_t z_stride = (size_t)n * (size_t)n;
    const int team = eig_threads_team(plan->threads, p->batch);
    int any_bad = 0;

#pragma omp parallel for schedule(dynamic, 1) num_threads(team) reduction(| : any_bad)
    for (int b = 0; b < p->batch; b++) {
        EIG_FN(eig_cpu_work) w;
        EIG_FN(eig_cpu_work_carve)(n, z_all != NULL, plan->rotation_capacity,
                                   plan->workspace[omp_get_thread_num()], &w);
        const EIG_T *a = (const EIG_T *)a_all + (size_t)b * a_stride;
        EIG_R *wout = (EIG_R *)w_all + (size_t)b * (size_t)n;
        EIG_T *zout = z_all != NULL ? (EIG_T *)z_all + (size_t)b * z_stride : NULL;
        int r = EIG_FN(eig_cpu_solve_one)(plan, &w, a, wout, zout);
        info[b] = r;
        if (r != 0) {
            any_bad = 1;
            for (int k = 0; k < n; k++)
                wout[k] = NAN;
            if (zout != NULL)
                for (size_t k = 0; k < 2 * z_stride; k++)
                    ((EIG_R *)zout)[k] = NAN; /* both parts of every element */
        }
    }
    return any_bad ? EIG_EMATRIX : EIG_OK;
}
