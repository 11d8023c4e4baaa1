/*
 * error_text.c - the err text every library fills (error_text.h).
 */
#include "error_text.h"

#include <stdio.h>

void error_text_vset(char *err, size_t err_bytes, const char *fmt, va_list args)
{
    if (err != NULL && err_bytes > 0)
        vsnprintf(err, err_bytes, fmt, args);
}

void error_text_set(char *err, size_t err_bytes, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    error_text_vset(err, err_bytes, fmt, args);
    va_end(args);
}
