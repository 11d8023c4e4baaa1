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

/* The CUDA mode exists with CUDA only (see CMakeLists.txt); every other
 * mode is always built. */
#if defined(EIGSTREAM_BENCH_CUDA)
static int bench_cuda_run(int argc, char **argv)
{
    return bench_cuda_main(argc, argv);
}
#else
static int bench_cuda_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fatal("eigstream-bench", "built without CUDA: --backend cuda needs a CUDA build");
}
#endif

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "pipeline") == 0 || strcmp(argv[1], "--pipeline") == 0))
        return bench_pipeline_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "record") == 0)
        return bench_record_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "iq") == 0)
        return bench_iq_main(argc, argv);
    if (wants_cuda(argc, argv))
        return bench_cuda_run(argc, argv);
    return bench_cpu_main(argc, argv);
}
