/*
 * bench_main.c - eigstream-bench: picks the mode (see bench.h) and runs it.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

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

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "pipeline") == 0 || strcmp(argv[1], "--pipeline") == 0)) {
#if defined(EIGSTREAM_BENCH_PIPELINE)
        return bench_pipeline_main(argc, argv);
#else
        fprintf(stderr, "eigstream-bench: built without pipeline mode\n");
        return 1;
#endif
    }
    if (wants_cuda(argc, argv)) {
#if defined(EIGSTREAM_BENCH_CUDA)
        return bench_cuda_main(argc, argv);
#else
        fprintf(stderr, "eigstream-bench: built without CUDA\n");
        return 1;
#endif
    }
    return bench_cpu_main(argc, argv);
}
