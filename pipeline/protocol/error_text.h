/*
 * error_text.h - how every library of eigstream fills the `char *err,
 * size_t err_bytes` argument its functions take beside their error value:
 * one formatted line, truncated to err_bytes (NUL-terminated), nothing when
 * err is NULL or err_bytes is 0.
 *
 *   return ERROR_TEXT_FAIL(CURVE_KEY_EFORMAT, err, err_bytes, "%s: not a key file", path);
 *
 * sets the text and evaluates to the error value.
 */
#ifndef EIGSTREAM_ERROR_TEXT_H
#define EIGSTREAM_ERROR_TEXT_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void error_text_set(char *err, size_t err_bytes, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void error_text_vset(char *err, size_t err_bytes, const char *fmt, va_list args);

/* error_text_set(err, err_bytes, ...), then the value code. */
#define ERROR_TEXT_FAIL(code, err, err_bytes, ...) (error_text_set((err), (err_bytes), __VA_ARGS__), (code))

#ifdef __cplusplus
}
#endif

#endif
