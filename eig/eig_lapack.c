/*
 * eig_lapack.c - the lapack backend: LAPACKE zheevd/cheevd on full storage,
 * zhpevd/chpevd on packed, one matrix per OpenMP thread with per-thread
 * workspace sized by LAPACK's own query at plan creation.
 *
 * We check each matrix before LAPACK sees it (LAPACK would happily iterate on
 * NaN), and solve on a copy because LAPACK overwrites its input.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include <lapacke.h>

#include "eig_internal.h"

struct eig_lapack_plan {
    eig_plan_params params;
    int threads;
    size_t copy_elements;           /* per thread: one matrix in its storage */
    lapack_int lwork, lrwork, liwork; /* per thread */
    void *copy, *work, *rwork;
    lapack_int *iwork;
};

#define EIG_T double complex
#define EIG_R double
#define EIG_FN(x) x##_z
#define EIG_CREAL creal
#define EIG_HEEVD LAPACKE_zheevd_work
#define EIG_HPEVD LAPACKE_zhpevd_work
#include "eig_lapack.proto.c"
#undef EIG_T
#undef EIG_R
#undef EIG_FN
#undef EIG_CREAL
#undef EIG_HEEVD
#undef EIG_HPEVD

#define EIG_T float complex
#define EIG_R float
#define EIG_FN(x) x##_c
#define EIG_CREAL crealf
#define EIG_HEEVD LAPACKE_cheevd_work
#define EIG_HPEVD LAPACKE_chpevd_work
#include "eig_lapack.proto.c"

void eig_lapack_plan_destroy(eig_lapack_plan *plan)
{
    if (plan == NULL)
        return;
    free(plan->copy);
    free(plan->work);
    free(plan->rwork);
    free(plan->iwork);
    free(plan);
}

eig_error eig_lapack_plan_create(eig_lapack_plan **out, const eig_plan_params *params,
                                 int threads)
{
    *out = NULL;
    eig_lapack_plan *plan = calloc(1, sizeof(*plan));
    if (plan == NULL)
        return EIG_ENOMEM;
    plan->params = *params;
    plan->threads = threads;
    plan->copy_elements = eig_matrix_elements(params->n, params->storage);

    const int dbl = params->precision == EIG_COMPLEX_DOUBLE;
    int q = dbl ? eig_lapack_query_z(params, &plan->lwork, &plan->lrwork, &plan->liwork)
                : eig_lapack_query_c(params, &plan->lwork, &plan->lrwork, &plan->liwork);
    if (q != 0) {
        eig_lapack_plan_destroy(plan);
        return EIG_EBACKEND;
    }
    if (plan->lwork < 1)
        plan->lwork = 1;
    if (plan->lrwork < 1)
        plan->lrwork = 1;
    if (plan->liwork < 1)
        plan->liwork = 1;

    size_t complex_size = dbl ? sizeof(double complex) : sizeof(float complex);
    size_t real_size = dbl ? sizeof(double) : sizeof(float);
    size_t t = (size_t)eig_threads_team(threads, params->batch); /* slots in use */
    plan->copy = malloc(t * plan->copy_elements * complex_size);
    plan->work = malloc(t * (size_t)plan->lwork * complex_size);
    plan->rwork = malloc(t * (size_t)plan->lrwork * real_size);
    plan->iwork = malloc(t * (size_t)plan->liwork * sizeof(lapack_int));
    if (plan->copy == NULL || plan->work == NULL || plan->rwork == NULL || plan->iwork == NULL) {
        eig_lapack_plan_destroy(plan);
        return EIG_ENOMEM;
    }
    *out = plan;
    return EIG_OK;
}

eig_error eig_lapack_plan_execute(eig_lapack_plan *plan, const void *a, void *w, void *z,
                                  int *info)
{
    if (plan->params.precision == EIG_COMPLEX_DOUBLE)
        return eig_lapack_execute_z(plan, a, w, z, info);
    return eig_lapack_execute_c(plan, a, w, z, info);
}
