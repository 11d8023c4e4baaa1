/*
 * eig_lapack.proto.c - the lapack backend's per-precision execute, included
 * twice by eig_lapack.c with:
 *   EIG_T, EIG_R          complex element and real types
 *   EIG_FN(x)             x##_z or x##_c
 *   EIG_HEEVD, EIG_HPEVD  LAPACKE_zheevd_work / LAPACKE_zhpevd_work (or c)
 */

/* Solves matrix b of the batch on thread slot t's workspace; returns the
 * per-matrix info, or sets *backend_failed when LAPACK rejects an argument. */
static int EIG_FN(eig_lapack_solve_one)(eig_lapack_plan *plan, int t, const EIG_T *a,
                                        EIG_R *w, EIG_T *z, int *backend_failed)
{
    const eig_plan_params *p = &plan->params;
    const int n = p->n;
    const int vectors = p->job == EIG_JOB_VECTORS;
    int bad = EIG_FN(eig_matrix_check)(n, p->storage, p->uplo, a);
    if (bad != 0)
        return bad;

    char jobz = vectors ? 'V' : 'N';
    char uplo = p->uplo == EIG_LOWER ? 'L' : 'U';
    EIG_T *copy = (EIG_T *)plan->copy + (size_t)t * plan->copy_elements;
    EIG_T *work = (EIG_T *)plan->work + (size_t)t * (size_t)plan->lwork;
    EIG_R *rwork = (EIG_R *)plan->rwork + (size_t)t * (size_t)plan->lrwork;
    lapack_int *iwork = plan->iwork + (size_t)t * (size_t)plan->liwork;
    lapack_int lapack_info;

    if (p->storage == EIG_STORAGE_FULL) {
        /* zheevd overwrites its input with the eigenvectors: solve in z. */
        EIG_T *target = vectors ? z : copy;
        EIG_FN(eig_matrix_copy_triangle)(n, p->storage, p->uplo, a, target);
        lapack_info = EIG_HEEVD(LAPACK_COL_MAJOR, jobz, uplo, n, target, n, w, work,
                                plan->lwork, rwork, plan->lrwork, iwork, plan->liwork);
    } else {
        EIG_FN(eig_matrix_copy_triangle)(n, p->storage, p->uplo, a, copy);
        EIG_T dummy_z = 0;
        lapack_info = EIG_HPEVD(LAPACK_COL_MAJOR, jobz, uplo, n, copy, w,
                                vectors ? z : &dummy_z, vectors ? n : 1, work, plan->lwork,
                                rwork, plan->lrwork, iwork, plan->liwork);
    }
    if (lapack_info < 0) {
        *backend_failed = 1;
        return 0;
    }
    /* LAPACK's info > 0 counts off-diagonals that failed to converge. */
    return (int)lapack_info;
}

static eig_error EIG_FN(eig_lapack_execute)(eig_lapack_plan *plan, const void *a_all,
                                            void *w_all, void *z_all, int *info)
{
    const eig_plan_params *p = &plan->params;
    const int n = p->n;
    const size_t a_stride = eig_matrix_elements(n, p->storage);
    const size_t z_stride = (size_t)n * (size_t)n;
    const int vectors = p->job == EIG_JOB_VECTORS;
    int any_bad = 0, backend_failed = 0;
    const int team = eig_threads_team(plan->threads, p->batch);
    const int blas_before = eig_blas_threads_enter(team, plan->threads);

#pragma omp parallel for schedule(dynamic, 1) num_threads(team) \
    reduction(| : any_bad, backend_failed)
    for (int b = 0; b < p->batch; b++) {
        int t = omp_get_thread_num();
        const EIG_T *a = (const EIG_T *)a_all + (size_t)b * a_stride;
        EIG_R *w = (EIG_R *)w_all + (size_t)b * (size_t)n;
        EIG_T *z = vectors ? (EIG_T *)z_all + (size_t)b * z_stride : NULL;
        int failed = 0;
        int r = EIG_FN(eig_lapack_solve_one)(plan, t, a, w, z, &failed);
        info[b] = r;
        backend_failed |= failed;
        if (r != 0) {
            any_bad = 1;
            for (int k = 0; k < n; k++)
                w[k] = NAN;
            if (vectors)
                for (size_t k = 0; k < 2 * z_stride; k++)
                    ((EIG_R *)z)[k] = NAN; /* both parts of every element */
        }
    }
    eig_blas_threads_leave(blas_before);
    if (backend_failed)
        return EIG_EBACKEND;
    return any_bad ? EIG_EMATRIX : EIG_OK;
}

/* Asks LAPACK for its workspace sizes (the largest of full and packed needs
 * are not mixed: the storage is fixed by the plan). */
static int EIG_FN(eig_lapack_query)(const eig_plan_params *p, lapack_int *lwork,
                                    lapack_int *lrwork, lapack_int *liwork)
{
    char jobz = p->job == EIG_JOB_VECTORS ? 'V' : 'N';
    char uplo = p->uplo == EIG_LOWER ? 'L' : 'U';
    EIG_T dummy_a[1] = {0}, wq = 0;
    EIG_R dummy_w[1] = {0}, rq = 0;
    lapack_int iq = 0, r;
    if (p->storage == EIG_STORAGE_FULL)
        r = EIG_HEEVD(LAPACK_COL_MAJOR, jobz, uplo, p->n, dummy_a, p->n, dummy_w, &wq, -1, &rq,
                      -1, &iq, -1);
    else
        r = EIG_HPEVD(LAPACK_COL_MAJOR, jobz, uplo, p->n, dummy_a, dummy_w, dummy_a, p->n, &wq,
                      -1, &rq, -1, &iq, -1);
    if (r != 0)
        return -1;
    *lwork = (lapack_int)EIG_CREAL(wq);
    *lrwork = (lapack_int)rq;
    *liwork = iq;
    return 0;
}
