/*
 * config_scan.h - a lexical pass over a configuration file's text, for what
 * libconfig 1.5 accepts silently but must not be: integer literals it wraps
 * or saturates (4294967296 without the L suffix is read as 0) and @include
 * (an included file would escape these checks). Internal to config/.
 *
 * The pass follows libconfig's lexical rules (comments #, // and block
 * comments, strings with escapes, identifiers [A-Za-z*][-A-Za-z0-9_*]*,
 * decimal and 0x integers with an optional L or LL, floats). It is run only on
 * text that libconfig has parsed, so it need not diagnose syntax.
 */
#ifndef EIGSTREAM_CONFIG_SCAN_H
#define EIGSTREAM_CONFIG_SCAN_H

#include <stddef.h>

/* Returns 1 and copies the literal (truncated, NUL-terminated, into
 * literal_bytes) when the value of setting name on line (name = value or
 * name: value) holds an integer literal that libconfig cannot hold exactly:
 * without L outside -2147483648..2147483647 (0x literals: above 0x7fffffff),
 * with L outside the int64 range. Else returns 0. */
int config_scan_integer_overflow(const char *text, unsigned line, const char *name,
                                 char *literal, size_t literal_bytes);

/* The line of the first @include directive, 0 when there is none. */
unsigned config_scan_include_line(const char *text);

#endif
