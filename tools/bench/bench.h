/*
 * bench.h - eigstream-bench: the modes and the little they share.
 *
 *   eigstream-bench [--backend cpu] [options]    CPU mode (bench_cpu.c): our cpu
 *                                                backend against LAPACK zheev/zheevd
 *   eigstream-bench --backend cuda [options]     CUDA mode (bench_cuda.cu)
 *   eigstream-bench pipeline|--pipeline [opts]   pipeline mode (bench_pipeline.c)
 *   eigstream-bench record [opts]                record mode (bench_record.c): the
 *                                                recording tools against dd and the sim
 *   eigstream-bench iq [opts]                    IQ mode (bench_iq.c, bench_iq_cuda.cu): IQ
 *                                                cube forming on the CPU against NumPy, on
 *                                                the GPU against our GPU solve
 *
 * bench_main.c picks the mode from the whole command line and calls its
 * *_main with argc/argv unchanged: argv[0] is the program, and every mode
 * must accept (and skip) the words that selected it - "--backend cuda" or
 * "--backend=cuda" for CUDA, argv[1] == "pipeline" or "--pipeline" for the
 * pipeline, "--backend cpu" for CPU. Each returns the process exit status:
 * 0 success, 1 bad usage or a failure to set up, 2 a solver failed.
 *
 * Helpers are static inline so that each mode, C or CUDA C++, compiles them in.
 */
#ifndef EIGSTREAM_BENCH_H
#define EIGSTREAM_BENCH_H

#include <stdlib.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

int bench_cpu_main(int argc, char **argv);
int bench_cuda_main(int argc, char **argv);
int bench_pipeline_main(int argc, char **argv);
int bench_record_main(int argc, char **argv);
int bench_iq_main(int argc, char **argv);

/* IQ mode's GPU part (bench_iq_cuda.cu, built with CUDA): the copy of cube
 * (cube_bytes, wire format) to the device plus forming, against our cuda
 * solve of the formed matrices; prints its lines. 0, or 1 on a failure
 * (named); 0 with a note when there is no GPU. */
struct form_iq_params;
int bench_iq_gpu(const struct form_iq_params *q, const void *cube, size_t cube_bytes, float scale, int runs);

#ifdef __cplusplus
}
#endif

/* Milliseconds on the monotonic clock (an arbitrary origin: use differences). */
static inline double bench_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static inline int bench_compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median of count values (count >= 1); sorts values in place. The mean of the
 * two middle values for an even count. */
static inline double bench_median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, bench_compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

/* Smallest of count values (count >= 1). */
static inline double bench_min(const double *values, int count)
{
    double smallest = values[0];
    for (int k = 1; k < count; k++)
        if (values[k] < smallest)
            smallest = values[k];
    return smallest;
}

#endif
