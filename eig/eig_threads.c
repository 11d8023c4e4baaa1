/*
 * eig_threads.c - how many threads a batch uses, and keeping OpenBLAS from
 * multiplying them.
 *
 * The host backends parallelize over the matrices of a batch with OpenMP and
 * call BLAS/LAPACK on one small matrix per thread. The pthread build of
 * OpenBLAS would also split each of those small calls across its own thread
 * pool, and two OpenMP threads calling it at once then queue on that pool:
 * measured here, zheevd on 180 matrices of 128x128 with 2 OpenMP threads took
 * 1160 ms that way against 278 ms with OpenBLAS held to one thread. So while a
 * batch runs on more than one thread, OpenBLAS is held to one thread, and put
 * back as it was afterwards. A single-threaded batch (one matrix, or threads
 * = 1) lets OpenBLAS use the plan's thread count inside each call instead.
 */
#include <omp.h>

#include <cblas.h>

#include "eig_internal.h"

int eig_threads_resolve(int threads)
{
    if (threads > 0)
        return threads;
    int cores = omp_get_num_procs();
    return cores > 0 ? cores : 1;
}

int eig_threads_team(int threads, int batch)
{
    return batch < threads ? batch : threads;
}

int eig_blas_threads_enter(int team, int threads)
{
    int before = openblas_get_num_threads();
    int want = team > 1 ? 1 : threads;
    if (want != before)
        openblas_set_num_threads(want);
    return before;
}

void eig_blas_threads_leave(int before)
{
    if (openblas_get_num_threads() != before)
        openblas_set_num_threads(before);
}
