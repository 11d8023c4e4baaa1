/*
 * eig_threads.h - how the CPU solver sizes its thread team, for the batched
 * CPU work that runs beside it (IQ forming, pipeline/form/form_iq.c): one
 * policy for OpenMP teams and OpenBLAS threads, so that forming and solving
 * never oversubscribe the cores between them. Not part of the installed
 * API (libeigstream-eig exports eig.h only).
 */
#ifndef EIGSTREAM_EIG_THREADS_H
#define EIGSTREAM_EIG_THREADS_H

/* Resolves params->threads: 0 means all online cores; never returns < 1. */
int eig_threads_resolve(int threads);

/* OpenMP team size for a batch: min(threads, batch). */
int eig_threads_team(int threads, int batch);

/* Holds OpenBLAS to one thread while a team of more than one runs (to
 * `threads` otherwise); returns the setting to hand to _leave afterwards. */
int eig_blas_threads_enter(int team, int threads);
void eig_blas_threads_leave(int before);

#endif
