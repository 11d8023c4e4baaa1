/*
 * pipeline_limits.c - threads checked against the limits at start, memory
 * limits named on a failed allocation (pipeline_limits.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "error_text.h"
#include "pipeline_limits.h"

long pipeline_threads_need(const eigstream_config *cfg)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long workers = config_solver_worker_count(cfg);
    long team = (cfg->solver.cpu_threads > 0 ? cfg->solver.cpu_threads : cores) - 1;
    /* stage_receive.c: input.copy_threads 0 is a quarter of the cores, at most 8 */
    long copy = cfg->input.copy_threads > 0 ? cfg->input.copy_threads : cores >= 32 ? 8 : cores >= 4 ? cores / 4 : 1;
    long stages = 2 + 2 * workers + (workers > 1);
    long service = 4; /* metrics, signal, notify, a reload */
    long zmq = 1 + cfg->input.io_threads + 1; /* pipeline_sockets.c: PIPELINE_ZMQ_IO_THREADS */
    long security = cfg->security.curve_secret_key[0] != '\0';
    long http = cfg->metrics.http[0] != '\0' ? 2 : 0;
    return stages + service + zmq + security + http + (copy - 1) + workers * (team > 0 ? team : 0);
}

/* "unlimited" or the soft limit of resource in units of unit bytes. */
static void limit_text(int resource, double unit, const char *suffix, char *out, size_t bytes)
{
    struct rlimit l;
    if (getrlimit(resource, &l) != 0 || l.rlim_cur == RLIM_INFINITY)
        snprintf(out, bytes, "unlimited");
    else
        snprintf(out, bytes, "%.0f%s", (double)l.rlim_cur / unit, suffix);
}

typedef struct probe {
    pthread_mutex_t lock;
    pthread_cond_t go;
    int released;
} probe;

static void *probe_main(void *arg)
{
    probe *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->released)
        pthread_cond_wait(&p->go, &p->lock);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Starts up to need threads at once; the number that started, *error the
 * failure's (0 when all did). */
static long probe_threads(long need, int *error)
{
    enum { PROBE_MAX = 4096 };
    static pthread_t threads[PROBE_MAX];
    probe p = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    long started = 0;
    *error = 0;
    while (started < need && started < PROBE_MAX &&
           (*error = pthread_create(&threads[started], NULL, probe_main, &p)) == 0)
        started++;
    pthread_mutex_lock(&p.lock);
    p.released = 1;
    pthread_cond_broadcast(&p.go);
    pthread_mutex_unlock(&p.lock);
    for (long i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    return started;
}

void pipeline_limits_threads_text(char *out, size_t bytes)
{
    char nproc[32], as[32];
    limit_text(RLIMIT_NPROC, 1, "", nproc, sizeof nproc);
    limit_text(RLIMIT_AS, 1048576.0, " MiB", as, sizeof as);
    snprintf(out, bytes, "RLIMIT_NPROC (ulimit -u, this user's processes and threads) is %s, RLIMIT_AS (ulimit -v, "
                         "each thread's stack is address space) %s", nproc, as);
}

pipeline_error pipeline_check_thread_limit(const eigstream_config *cfg, char *err, size_t err_bytes)
{
    long need = pipeline_threads_need(cfg);
    int error;
    long started = probe_threads(need, &error);
    if (error == 0)
        return PIPELINE_OK;
    char limits[256];
    pipeline_limits_threads_text(limits, sizeof limits);
    return ERROR_TEXT_FAIL(PIPELINE_ELIMIT, err, err_bytes,
                           "threads: these settings start %ld threads, only %ld could (%s): %s; raise them "
                           "(LimitNPROC=, LimitAS= under systemd) or lower solver.cpu_threads (%d), solver.workers, "
                           "input.io_threads (%d), input.copy_threads (%d) (docs/operations.md, Limits)",
                           need, started, strerror(error), limits, cfg->solver.cpu_threads, cfg->input.io_threads,
                           cfg->input.copy_threads);
}

void pipeline_limits_explain_memory(const eigstream_config *cfg, char *err, size_t err_bytes)
{
    char as[32], data[32], lock[32];
    limit_text(RLIMIT_AS, 1048576.0, " MiB", as, sizeof as);
    limit_text(RLIMIT_DATA, 1048576.0, " MiB", data, sizeof data);
    limit_text(RLIMIT_MEMLOCK, 1048576.0, " MiB", lock, sizeof lock);
    size_t used = strlen(err);
    if (used + 1 >= err_bytes)
        return;
    snprintf(err + used, err_bytes - used,
             ": the memory limits are RLIMIT_AS (ulimit -v) %s, RLIMIT_DATA (ulimit -d) %s%s%s; the daemon's memory "
             "grows with solver.n^2 x solver.matrices x (frame.queue_depth, output.hwm, input.hwm): raise the "
             "limit (LimitAS=, LimitDATA= under systemd) or lower those (docs/operations.md, Worst-case memory)",
             as, data, cfg->realtime.mlockall ? ", RLIMIT_MEMLOCK (ulimit -l, realtime.mlockall) " : "",
             cfg->realtime.mlockall ? lock : "");
}
