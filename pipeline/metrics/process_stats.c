/*
 * process_stats.c - /proc/self/stat, /proc/self/fd, /proc/stat (boot time),
 * /proc/self/task and RLIMIT_NOFILE (see process_stats.h; proc(5) names the
 * fields).
 */
#include "process_stats.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Boot time in seconds since the epoch ("btime" of /proc/stat), 0 when unknown. */
static uint64_t boot_time_s(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL)
        return 0;
    char line[256];
    unsigned long long btime = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "btime %llu", &btime) == 1)
            break;
    fclose(f);
    return btime;
}

/* CPU times, start time and memory from /proc/self/stat; 0 or -1. */
static int read_stat(process_stats *s)
{
    FILE *f = fopen("/proc/self/stat", "r");
    if (f == NULL)
        return -1;
    char text[1024];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    /* The command name (field 2) may hold spaces and parentheses: parse
     * after its last ')'. Fields 3.. then: state, ..., utime (14), stime
     * (15), ..., starttime (22, ticks after boot), vsize (23, bytes), rss
     * (24, pages). */
    const char *rest = strrchr(text, ')');
    unsigned long long utime, stime, start, vsize;
    long long rss;
    if (rest == NULL || sscanf(rest + 1,
                               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
                               "%*d %*d %llu %llu %lld", &utime, &stime, &start, &vsize, &rss) != 5) {
        errno = EPROTO;
        return -1;
    }
    double ticks = (double)sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    s->cpu_seconds = (double)(utime + stime) / ticks;
    s->virtual_bytes = vsize;
    s->resident_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page : 0;
    s->start_time_s = (double)boot_time_s() + (double)start / ticks;
    return 0;
}

/* Entries of /proc/self/fd (the directory's own descriptor included, as
 * every Prometheus client library counts it). */
static int count_open_fds(uint64_t *out)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    *out = n;
    return 0;
}

int process_stats_read(process_stats *s)
{
    memset(s, 0, sizeof *s);
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
        s->max_fds = limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)limit.rlim_cur;
    if (read_stat(s) != 0)
        return -1;
    return count_open_fds(&s->open_fds);
}

/* One task's comm and schedstat ("run_ns wait_ns timeslices"); 0 or -1. */
static int read_thread(int tid, process_thread *t)
{
    char path[64];
    unsigned long long run, wait;
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int fields = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    if (fields != 2)
        return -1;
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    if (fgets(t->name, sizeof t->name, f) == NULL)
        t->name[0] = '\0';
    fclose(f);
    t->name[strcspn(t->name, "\n")] = '\0';
    t->tid = tid;
    t->run_ns = run;
    t->wait_ns = wait;
    return 0;
}

int process_threads_read(process_thread *t, int max)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int n = 0, read_any = 0;
    struct dirent *e;
    while (n < max && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (read_thread(atoi(e->d_name), &t[n]) == 0) {
            n++;
            read_any = 1;
        }
    }
    closedir(d);
    if (!read_any) {
        errno = ENOENT; /* no schedstat: CONFIG_SCHED_INFO off */
        return -1;
    }
    return n;
}
