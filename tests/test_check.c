/*
 * test_check.c - the failure count and reports behind CHECK (test_check.h).
 */
#include "test_check.h"

#include <stdarg.h>
#include <stdio.h>

int test_check_failures;

void test_check_fail(const char *file, int line, const char *condition, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    test_check_failures++;
    fprintf(stderr, "FAIL %s:%d: %s: ", file, line, condition);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

int test_check_report(const char *name)
{
    if (test_check_failures > 0) {
        fprintf(stderr, "%s: %d failure(s)\n", name, test_check_failures);
        return 1;
    }
    printf("%s: all passed\n", name);
    return 0;
}
