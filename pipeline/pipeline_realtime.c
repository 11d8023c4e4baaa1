/*
 * pipeline_realtime.c - realtime.* (config_table.c): the GPU's NUMA node,
 * mlockall, the SCHED_FIFO priority, CPU affinity and name of the receive,
 * form, solve and publish threads, and the CPU affinity of ZeroMQ's
 * background threads (given to its context, which pins them itself).
 *
 * What the system does not permit is found out in pipeline_create, before
 * READY: mlockall is done there for real, and the priority and each CPU set
 * are tried on the creating thread and undone (a thread's permission to use
 * SCHED_FIFO or a CPU set is the process's: credentials, RLIMIT_RTPRIO, the
 * cgroup's cpuset). Each refusal is reported with the setting's name and the
 * cause, as a warning (the setting is then left out) or, with
 * realtime.on_failure = error, as the error that stops the start. The
 * threads then get what passed (pipeline_realtime_thread).
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, pthread_setname_np, CPU_SET */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zmq.h>

#include "engine.h"

#ifdef EIGSTREAM_PIPELINE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MPOL_PREFERRED_MODE 1 /* linux/mempolicy.h MPOL_PREFERRED */

/* The stages' thread names (pipeline_realtime_thread); ZeroMQ names its own
 * (ZMQbg/IO/K, ZMQbg/Reaper). */
static const char *const thread_names[CONFIG_THREAD_IO] = {"eigs-receive", "eigs-form", "eigs-solve",
                                                          "eigs-publish"};
static const char *const affinity_settings[CONFIG_THREAD_COUNT_] = {
    "realtime.cpu_affinity_receive", "realtime.cpu_affinity_form", "realtime.cpu_affinity_solve",
    "realtime.cpu_affinity_publish", "realtime.cpu_affinity_io"};
/* What a refusal calls each set's threads. */
static const char *const affinity_threads[CONFIG_THREAD_COUNT_] = {
    "the receive thread", "the form thread", "the solve thread", "the publish thread",
    "ZeroMQ's background threads"};

/* A setting the system refused: a warning (PIPELINE_OK, the caller leaves
 * the setting out) or, with on_failure error, the start's error. */
static pipeline_error realtime_refuse(const pipeline *p, const char *setting, char *err, size_t err_bytes,
                                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static pipeline_error realtime_refuse(const pipeline *p, const char *setting, char *err, size_t err_bytes,
                                      const char *fmt, ...)
{
    char reason[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    if (p->cfg.realtime.on_failure == CONFIG_REALTIME_ERROR) {
        error_text_set(err, err_bytes, "%s: %s (realtime.on_failure = error)", setting, reason);
        return PIPELINE_EINVAL;
    }
    LOG_WARN("realtime", "%s: %s; running without it (realtime.on_failure = warn)", setting, reason);
    return PIPELINE_OK;
}

static void mask_to_set(const uint64_t mask[CONFIG_CPU_MAX / 64], cpu_set_t *set)
{
    CPU_ZERO(set);
    for (int c = 0; c < CONFIG_CPU_MAX && c < CPU_SETSIZE; c++)
        if (mask[c / 64] >> (c % 64) & 1)
            CPU_SET(c, set);
}

/* "0-3,8" for a set (what this process may use, in messages). */
static void set_format(const cpu_set_t *set, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && len < cap; c++) {
        if (!CPU_ISSET(c, set) || (c > 0 && CPU_ISSET(c - 1, set)))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        int w = last > c ? snprintf(out + len, cap - len, "%s%d-%d", len ? "," : "", c, last)
                         : snprintf(out + len, cap - len, "%s%d", len ? "," : "", c);
        len += w > 0 ? (size_t)w : 0;
    }
}

/* ---- the GPU's NUMA node ------------------------------------------------------------ */

/* The NUMA node of the GPU the path runs on, -1 with why when there is none.
 * At pipeline_create, before any frame: worker 0's path is the one it was
 * created with (no fallback yet). */
static int gpu_numa_node(const pipeline *p, char *why, size_t why_bytes)
{
    eig_backend backend = p->workers[0].path->backend;
    if (backend != EIG_BACKEND_CUDA) {
        snprintf(why, why_bytes, "not applicable: the %s backend runs on the host, not on a GPU",
                 eig_backend_name(backend));
        return -1;
    }
#ifdef EIGSTREAM_PIPELINE_CUDA
    char bus[32], path[96];
    /* Worker 0's device: its path allocates every host buffer. */
    cudaError_t ce = cudaDeviceGetPCIBusId(bus, (int)sizeof bus, p->workers[0].device);
    if (ce != cudaSuccess) {
        snprintf(why, why_bytes, "cudaDeviceGetPCIBusId: %s", cudaGetErrorString(ce));
        return -1;
    }
    for (char *c = bus; *c; c++) /* sysfs spells the address in lower case */
        *c = (char)(*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", bus);
    FILE *f = fopen(path, "r");
    int node = -1;
    if (f == NULL || fscanf(f, "%d", &node) != 1)
        snprintf(why, why_bytes, "%s: %s", path, f == NULL ? strerror(errno) : "unreadable");
    else if (node < 0)
        snprintf(why, why_bytes, "not applicable: %s says %d (one NUMA node, or none reported)", path, node);
    if (f != NULL)
        fclose(f);
    return node;
#else
    snprintf(why, why_bytes, "not applicable: this build has no cuda path");
    return -1;
#endif
}

pipeline_error pipeline_realtime_numa(pipeline *p, char *err, size_t err_bytes)
{
    if (!p->cfg.realtime.gpu_numa)
        return PIPELINE_OK;
    char why[384], path[96], list[CONFIG_STRING_MAX] = "";
    int node = gpu_numa_node(p, why, sizeof why);
    if (node < 0)
        return realtime_refuse(p, "realtime.gpu_numa", err, err_bytes, "%s", why);
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
    FILE *f = fopen(path, "r");
    int ok = f != NULL && fgets(list, sizeof list, f) != NULL;
    if (f != NULL)
        fclose(f);
    list[strcspn(list, "\n")] = '\0';
    if (!ok || config_cpu_list_parse(list, p->realtime.numa_cpus) != 0)
        return realtime_refuse(p, "realtime.gpu_numa", err, err_bytes, "%s: cannot read node %d's CPUs", path,
                               node);
    unsigned long nodemask[4] = {0};
    nodemask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
    /* Preferred, not bound: a full node spills over instead of failing. */
    if (syscall(SYS_set_mempolicy, MPOL_PREFERRED_MODE, nodemask, 8 * sizeof nodemask) != 0)
        return realtime_refuse(p, "realtime.gpu_numa", err, err_bytes, "set_mempolicy(node %d): %s", node,
                               strerror(errno));
    p->realtime.numa_node = node;
    LOG_INFO("realtime", "GPU on NUMA node %d: host buffers there, threads on CPUs %s", node, list);
    return PIPELINE_OK;
}

/* ---- mlockall, priority and affinity ---------------------------------------------- */

/* 1 when this process holds CAP_IPC_LOCK (bit 14 of CapEff in
 * /proc/self/status): locked memory is then not held to RLIMIT_MEMLOCK. */
static int has_cap_ipc_lock(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long caps = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "CapEff: %llx", &caps) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return (caps >> 14) & 1;
}

/* mlockall(MCL_CURRENT | MCL_FUTURE) once every buffer is allocated. A finite
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK is refused even when the pages locked
 * now fit: with MCL_FUTURE every later allocation past it fails (ZeroMQ's
 * message buffers: libzmq aborts), so the lock is undone and refused. */
static pipeline_error realtime_mlockall(pipeline *p, char *err, size_t err_bytes)
{
    if (!p->cfg.realtime.mlockall)
        return PIPELINE_OK;
    if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
        struct rlimit held;
        if (getrlimit(RLIMIT_MEMLOCK, &held) != 0 || held.rlim_cur == RLIM_INFINITY || has_cap_ipc_lock())
            return PIPELINE_OK;
        munlockall();
        return realtime_refuse(p, "realtime.mlockall", err, err_bytes,
                               "RLIMIT_MEMLOCK (ulimit -l) is %llu bytes and the process lacks CAP_IPC_LOCK: every "
                               "allocation after the start past it would fail (ZeroMQ's messages among them); set it "
                               "unlimited (LimitMEMLOCK=infinity: the eigstream-realtime.conf drop-in)",
                               (unsigned long long)held.rlim_cur);
    }
    int error = errno;
    struct rlimit limit;
    getrlimit(RLIMIT_MEMLOCK, &limit);
    char now[32] = "unlimited";
    if (limit.rlim_cur != RLIM_INFINITY)
        snprintf(now, sizeof now, "%llu bytes", (unsigned long long)limit.rlim_cur);
    return realtime_refuse(p, "realtime.mlockall", err, err_bytes,
                           "mlockall: %s (needs CAP_IPC_LOCK, or RLIMIT_MEMLOCK above the daemon's memory: "
                           "now %s; under systemd the eigstream-realtime.conf drop-in)",
                           strerror(error), now);
}

/* SCHED_FIFO at the priority, tried on this thread and undone. */
static pipeline_error realtime_priority_probe(pipeline *p, char *err, size_t err_bytes)
{
    int priority = p->cfg.realtime.priority, policy;
    struct sched_param saved, fifo = {.sched_priority = priority};
    if (priority == 0)
        return PIPELINE_OK;
    pthread_getschedparam(pthread_self(), &policy, &saved);
    int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
    if (rc == 0) {
        pthread_setschedparam(pthread_self(), policy, &saved);
        p->realtime.priority = priority;
        return PIPELINE_OK;
    }
    struct rlimit limit;
    getrlimit(RLIMIT_RTPRIO, &limit);
    return realtime_refuse(p, "realtime.priority", err, err_bytes,
                           "SCHED_FIFO priority %d: %s (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= %d, now %lld; "
                           "under systemd the eigstream-realtime.conf drop-in)",
                           priority, strerror(rc), priority,
                           limit.rlim_cur == RLIM_INFINITY ? -1LL : (long long)limit.rlim_cur);
}

/* Thread set t's CPUs (its own list, else the GPU's node), tried on this
 * thread and undone; what passed goes to p->realtime.cpus[t]. */
static pipeline_error realtime_affinity_try(pipeline *p, config_realtime_thread t, char *err, size_t err_bytes)
{
    const char *list = p->cfg.realtime.cpu_affinity[t];
    uint64_t mask[CONFIG_CPU_MAX / 64];
    if (list[0] != '\0')
        config_cpu_list_parse(list, mask); /* validated with the configuration */
    else if (p->realtime.numa_node >= 0)
        memcpy(mask, p->realtime.numa_cpus, sizeof mask);
    else
        return PIPELINE_OK;
    cpu_set_t saved, set;
    pthread_getaffinity_np(pthread_self(), sizeof saved, &saved);
    mask_to_set(mask, &set);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    if (rc == 0) {
        memcpy(p->realtime.cpus[t], mask, sizeof mask);
        p->realtime.pinned[t] = 1;
        return PIPELINE_OK;
    }
    char allowed[256];
    set_format(&saved, allowed, sizeof allowed);
    return realtime_refuse(p, list[0] ? affinity_settings[t] : "realtime.gpu_numa", err, err_bytes,
                           "%s on CPUs \"%s\": %s (this process may use CPUs %s)", affinity_threads[t],
                           list[0] ? list : "of the GPU's node", strerror(rc), allowed);
}

/* The stages' CPU sets (ZeroMQ's went to its context with the sockets). */
static pipeline_error realtime_affinity_probe(pipeline *p, char *err, size_t err_bytes)
{
    for (int t = 0; t < CONFIG_THREAD_IO; t++) {
        pipeline_error e = realtime_affinity_try(p, t, err, err_bytes);
        if (e != PIPELINE_OK)
            return e;
    }
    return PIPELINE_OK;
}

pipeline_error pipeline_realtime_io(pipeline *p, void *zmq_context, char *err, size_t err_bytes)
{
    pipeline_error e = realtime_affinity_try(p, CONFIG_THREAD_IO, err, err_bytes);
    if (e != PIPELINE_OK || !p->realtime.pinned[CONFIG_THREAD_IO])
        return e;
    const uint64_t *mask = p->realtime.cpus[CONFIG_THREAD_IO];
    for (int c = 0; c < CONFIG_CPU_MAX; c++) {
        if (!(mask[c / 64] >> (c % 64) & 1) || zmq_ctx_set(zmq_context, ZMQ_THREAD_AFFINITY_CPU_ADD, c) == 0)
            continue;
        const int why = errno;
        for (int d = 0; d < c; d++) /* a partial set would pin to fewer CPUs than asked */
            if (mask[d / 64] >> (d % 64) & 1)
                zmq_ctx_set(zmq_context, ZMQ_THREAD_AFFINITY_CPU_REMOVE, d);
        p->realtime.pinned[CONFIG_THREAD_IO] = 0;
        return realtime_refuse(p, affinity_settings[CONFIG_THREAD_IO], err, err_bytes,
                               "this libzmq does not pin its threads (zmq_ctx_set "
                               "ZMQ_THREAD_AFFINITY_CPU_ADD %d: %s)", c, zmq_strerror(why));
    }
    return PIPELINE_OK;
}

pipeline_error pipeline_realtime_prepare(pipeline *p, char *err, size_t err_bytes)
{
    pipeline_error e = realtime_mlockall(p, err, err_bytes);
    if (e == PIPELINE_OK)
        e = realtime_priority_probe(p, err, err_bytes);
    if (e == PIPELINE_OK)
        e = realtime_affinity_probe(p, err, err_bytes);
    return e;
}

void pipeline_realtime_thread(pipeline *p, pthread_t thread, config_realtime_thread which, int worker)
{
    int rc;
    char name[16]; /* the kernel's limit: 15 characters and the NUL */
    if (worker > 0)
        snprintf(name, sizeof name, "%s-%d", thread_names[which], worker);
    else
        snprintf(name, sizeof name, "%s", worker < 0 && which == CONFIG_THREAD_FORM ? "eigs-deal"
                                                                                     : thread_names[which]);
    cpu_set_t set;
    mask_to_set(p->realtime.cpus[which], &set);
    if (p->realtime.pinned[which] && (rc = pthread_setaffinity_np(thread, sizeof set, &set)) != 0)
        LOG_ERROR("realtime", "the %s thread's CPU affinity: %s", name + 5, strerror(rc));
    struct sched_param fifo = {.sched_priority = p->realtime.priority};
    if (p->realtime.priority > 0 && (rc = pthread_setschedparam(thread, SCHED_FIFO, &fifo)) != 0)
        LOG_ERROR("realtime", "the %s thread's SCHED_FIFO priority %d: %s", name + 5,
                  p->realtime.priority, strerror(rc));
    /* Last: once the name shows (ps -L, top -H, /proc/PID/task/TID/comm),
     * the settings above are in force. */
    pthread_setname_np(thread, name);
}
