/*
 * test_check.h - the CHECK macro and the failure count of every C test.
 *
 *     #include "test_check.h"
 *     static void test_sizes(void) { CHECK(size == 4, "size %zu, want 4", size); }
 *     int main(void) { test_sizes(); return test_check_report("test_sizes"); }
 *
 * A failed CHECK prints "FAIL file:line: condition: message" on stderr, counts
 * the failure and goes on, so one run names every failing case; the test's
 * exit status comes from test_check_report at the end of main. Library
 * eigstream_test_check (tests/CMakeLists.txt), linked into every C test.
 */
#ifndef EIGSTREAM_TEST_CHECK_H
#define EIGSTREAM_TEST_CHECK_H

/* Failed checks so far, over every file of the test program. A test may add
 * failures it counted itself (a batch of ratios checked in a loop). */
extern int test_check_failures;

/* Counts a failure and prints it; called by CHECK. */
void test_check_fail(const char *file, int line, const char *condition, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

/* Checks cond; when false, counts and prints a failure with the printf-style
 * message that follows (a format is required). Evaluates cond once. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            test_check_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                               \
    } while (0)

/* Counts and prints a failure found by the test's own logic (a ratio over
 * its bound inside a loop): FAIL("n=%d type %d ratio %g", n, t, r). */
#define FAIL(...) test_check_fail(__FILE__, __LINE__, "failed", __VA_ARGS__)

/* Ends a test: prints "<name>: N failure(s)" on stderr and returns 1 when any
 * check failed, else prints "<name>: all passed" on stdout and returns 0.
 * main returns its value. */
int test_check_report(const char *name);

#endif
