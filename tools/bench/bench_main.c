/*
 * bench_main.c - eigstream-bench: picks the mode (see bench.h) and runs it.
 */
#include <string.h>

#include "bench.h"
#include "cli_options.h"

/* 1 when the command line asks for --backend cuda (either spelling). */
static int wants_cuda(int argc, char **argv)
{
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--backend=cuda") == 0)
            return 1;
        if (strcmp(argv[k], "--backend") == 0 && k + 1 < argc && strcmp(argv[k + 1], "cuda") == 0)
            return 1;
    }
    return 0;
}

/* The modes this build has; NULL for one left out (see CMakeLists.txt). */
#if defined(EIGSTREAM_BENCH_PIPELINE)
static int (*const bench_pipeline_mode)(int, char **) = bench_pipeline_main;
#else
static int (*const bench_pipeline_mode)(int, char **) = NULL;
#endif
#if defined(EIGSTREAM_BENCH_RECORD)
static int (*const bench_record_mode)(int, char **) = bench_record_main;
#else
static int (*const bench_record_mode)(int, char **) = NULL;
#endif
#if defined(EIGSTREAM_BENCH_IQ)
static int (*const bench_iq_mode)(int, char **) = bench_iq_main;
#else
static int (*const bench_iq_mode)(int, char **) = NULL;
#endif
#if defined(EIGSTREAM_BENCH_CUDA)
static int (*const bench_cuda_mode)(int, char **) = bench_cuda_main;
#else
static int (*const bench_cuda_mode)(int, char **) = NULL;
#endif

/* Runs a mode with argv unchanged; 1, with the reason, when it is not built. */
static int bench_mode_run(int (*mode)(int, char **), const char *missing, int argc, char **argv)
{
    if (mode == NULL)
        return cli_fatal("eigstream-bench", "built without %s", missing);
    return mode(argc, argv);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "pipeline") == 0 || strcmp(argv[1], "--pipeline") == 0))
        return bench_mode_run(bench_pipeline_mode, "pipeline mode", argc, argv);
    if (argc > 1 && strcmp(argv[1], "record") == 0)
        return bench_mode_run(bench_record_mode, "record mode (the recording library)", argc, argv);
    if (argc > 1 && strcmp(argv[1], "iq") == 0)
        return bench_mode_run(bench_iq_mode, "iq mode (the pipeline library)", argc, argv);
    if (wants_cuda(argc, argv))
        return bench_mode_run(bench_cuda_mode, "CUDA", argc, argv);
    return bench_cpu_main(argc, argv);
}
