/*
 * log.h - the daemon's log: one line per event on stderr,
 *
 *   2026-11-21T11:34:07.123Z WARN  receive: rejected frame: crc_mismatch (3 suppressed)
 *
 * (UTC timestamp with milliseconds, level, component, message). The level
 * test happens in the macro, so a disabled LOG_DEBUG costs one relaxed load
 * and never formats its arguments. Thread-safe: each line is one fprintf on
 * an unbuffered-per-line stream, so lines from different threads never mix.
 *
 * log_limiter: at most one line per second per limiter (one per reject
 * reason, for instance); lines inside the second are counted and the count
 * is appended to the next line that is written.
 */
#ifndef EIGSTREAM_LOG_H
#define EIGSTREAM_LOG_H

#include <stdatomic.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The levels, most severe first; log.level (config/) holds one. */
typedef enum log_level { LOG_LEVEL_ERROR = 0, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG } log_level;

/* "error", "warn", "info", "debug"; "?" for a bad value. */
const char *log_level_name(log_level level);

extern atomic_int log_level_current;

void log_set_level(log_level level);
log_level log_get_level(void);

/* Writes one line (no level check: use the macros). */
void log_write(log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define LOG_AT(level, component, ...)                                                       \
    do {                                                                                    \
        if ((int)(level) <= atomic_load_explicit(&log_level_current, memory_order_relaxed)) \
            log_write((level), (component), __VA_ARGS__);                                   \
    } while (0)

#define LOG_ERROR(component, ...) LOG_AT(LOG_LEVEL_ERROR, component, __VA_ARGS__)
#define LOG_WARN(component, ...) LOG_AT(LOG_LEVEL_WARN, component, __VA_ARGS__)
#define LOG_INFO(component, ...) LOG_AT(LOG_LEVEL_INFO, component, __VA_ARGS__)
#define LOG_DEBUG(component, ...) LOG_AT(LOG_LEVEL_DEBUG, component, __VA_ARGS__)

typedef struct log_limiter {
    _Atomic uint64_t last_second; /* CLOCK_MONOTONIC second of the last line written */
    _Atomic uint64_t suppressed;  /* lines skipped since */
} log_limiter;

/* Returns 1 when a line may be written now (and stores in *suppressed how many
 * were skipped before it), 0 when this one is to be suppressed (counted). */
int log_limiter_allow(log_limiter *l, uint64_t *suppressed);

#ifdef __cplusplus
}
#endif

#endif
