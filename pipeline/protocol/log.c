/*
 * log.c - timestamped, level-checked lines on stderr (see log.h).
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

atomic_int log_level_current = LOG_LEVEL_INFO;

void log_set_level(log_level level)
{
    atomic_store_explicit(&log_level_current, (int)level, memory_order_relaxed);
}

log_level log_get_level(void)
{
    return (log_level)atomic_load_explicit(&log_level_current, memory_order_relaxed);
}

const char *log_level_name(log_level level)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if ((int)level < 0 || (size_t)level >= sizeof names / sizeof names[0])
        return "?";
    return names[level];
}

static const char *level_label(log_level level)
{
    switch (level) {
    case LOG_LEVEL_ERROR: return "ERROR";
    case LOG_LEVEL_WARN: return "WARN ";
    case LOG_LEVEL_INFO: return "INFO ";
    case LOG_LEVEL_DEBUG: return "DEBUG";
    }
    return "?    ";
}

void log_write(log_level level, const char *component, const char *fmt, ...)
{
    struct timespec ts;
    struct tm utc;
    char stamp[32] = "?";
    char message[1024];
    va_list ap;

    clock_gettime(CLOCK_REALTIME, &ts);
    if (gmtime_r(&ts.tv_sec, &utc) != NULL)
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    /* One fprintf per line: stdio locks the stream for the call, so lines
     * written by different stage threads never interleave. */
    fprintf(stderr, "%s.%03ldZ %s %s: %s\n", stamp, ts.tv_nsec / 1000000L, level_label(level),
            component, message);
}

int log_limiter_allow(log_limiter *l, uint64_t *suppressed)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    /* +1 so that the zero-initialized limiter allows the very first line. */
    uint64_t now = (uint64_t)ts.tv_sec + 1;
    uint64_t last = atomic_load_explicit(&l->last_second, memory_order_relaxed);
    if (now != last &&
        atomic_compare_exchange_strong_explicit(&l->last_second, &last, now, memory_order_relaxed,
                                                memory_order_relaxed)) {
        *suppressed = atomic_exchange_explicit(&l->suppressed, 0, memory_order_relaxed);
        return 1;
    }
    atomic_fetch_add_explicit(&l->suppressed, 1, memory_order_relaxed);
    return 0;
}
