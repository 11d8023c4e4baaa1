/*
 * config_scan.c - see config_scan.h. A tokenizer that knows just enough of
 * libconfig's lexical grammar to find integer literals and @include.
 */
#include <stdint.h>
#include <string.h>

#include "config_scan.h"

typedef enum scan_token_kind {
    SCAN_END,
    SCAN_INTEGER, /* decimal or hex integer literal, with or without L */
    SCAN_INCLUDE, /* '@' (only @include is valid in libconfig) */
    SCAN_OTHER    /* identifier, float, string, punctuation */
} scan_token_kind;

typedef struct scan_token {
    scan_token_kind kind;
    unsigned line;     /* line of the token's first character, from 1 */
    const char *start; /* the token's text */
    size_t length;
    int fits;          /* SCAN_INTEGER: libconfig holds the value exactly */
} scan_token;

typedef struct scanner {
    const char *p;
    unsigned line;
} scanner;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_hex_digit(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_identifier_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '*';
}

static int is_identifier_char(char c)
{
    return is_identifier_start(c) || is_digit(c) || c == '-' || c == '_';
}

static int hex_value(char c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

/* Skips whitespace and comments, counting lines. */
static void scan_skip_blank(scanner *s)
{
    for (;;) {
        char c = *s->p;
        if (c == '\n') {
            ++s->line;
            ++s->p;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++s->p;
        } else if (c == '#' || (c == '/' && s->p[1] == '/')) {
            while (*s->p != '\0' && *s->p != '\n')
                ++s->p;
        } else if (c == '/' && s->p[1] == '*') {
            s->p += 2;
            while (*s->p != '\0' && !(s->p[0] == '*' && s->p[1] == '/')) {
                if (*s->p == '\n')
                    ++s->line;
                ++s->p;
            }
            if (*s->p != '\0')
                s->p += 2;
        } else {
            return;
        }
    }
}

/* Scans a number starting at s->p (a digit, a sign before a digit or '.', or
 * '.' before a digit) into t: SCAN_INTEGER with fits, or SCAN_OTHER for a
 * float. Magnitudes saturate, so any length of digits is judged correctly. */
static void scan_number(scanner *s, scan_token *t)
{
    const char *p = s->p;
    int negative = 0;
    if (*p == '+' || *p == '-')
        negative = *p++ == '-';

    int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && is_hex_digit(p[2]);
    uint64_t magnitude = 0;
    int saturated = 0;
    if (hex) {
        for (p += 2; is_hex_digit(*p); ++p) {
            if (magnitude > (UINT64_MAX >> 4))
                saturated = 1;
            magnitude = (magnitude << 4) | (uint64_t)hex_value(*p);
        }
    } else {
        for (; is_digit(*p); ++p) {
            uint64_t digit = (uint64_t)(*p - '0');
            if (magnitude > (UINT64_MAX - digit) / 10)
                saturated = 1;
            magnitude = magnitude * 10 + digit;
        }
        if (*p == '.' || *p == 'e' || *p == 'E') {
            /* A float: libconfig reads it as a double, nothing wraps. */
            if (*p == '.') {
                ++p;
                while (is_digit(*p))
                    ++p;
            }
            if ((*p == 'e' || *p == 'E') &&
                (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
                p += 2;
                while (is_digit(*p))
                    ++p;
            }
            t->kind = SCAN_OTHER;
            t->length = (size_t)(p - s->p);
            s->p = p;
            return;
        }
    }

    int suffix_l = 0;
    if (*p == 'L') {
        suffix_l = 1;
        ++p;
        if (*p == 'L')
            ++p;
    }

    /* Largest magnitude libconfig keeps: int for plain literals, int64 with
     * L; hex literals are read unsigned and then cast, so their sign bit
     * must stay clear. */
    uint64_t limit = suffix_l ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX;
    if (negative && !hex)
        limit += 1;
    t->kind = SCAN_INTEGER;
    t->fits = !saturated && magnitude <= limit;
    t->length = (size_t)(p - s->p);
    s->p = p;
}

/* The next token, SCAN_END at the end of the text. */
static void scan_next(scanner *s, scan_token *t)
{
    scan_skip_blank(s);
    t->line = s->line;
    t->start = s->p;
    t->length = 0;
    t->fits = 1;

    const char *p = s->p;
    char c = *p;
    if (c == '\0') {
        t->kind = SCAN_END;
    } else if (c == '"') {
        for (++p; *p != '\0' && *p != '"'; ++p) {
            if (*p == '\\' && p[1] != '\0')
                ++p;
            if (*p == '\n')
                ++s->line;
        }
        if (*p == '"')
            ++p;
        t->kind = SCAN_OTHER;
        t->length = (size_t)(p - s->p);
        s->p = p;
    } else if (is_identifier_start(c)) {
        while (is_identifier_char(*p))
            ++p;
        t->kind = SCAN_OTHER;
        t->length = (size_t)(p - s->p);
        s->p = p;
    } else if (is_digit(c) || (c == '.' && is_digit(p[1])) ||
               ((c == '+' || c == '-') && (is_digit(p[1]) || (p[1] == '.' && is_digit(p[2]))))) {
        scan_number(s, t);
    } else {
        t->kind = c == '@' ? SCAN_INCLUDE : SCAN_OTHER;
        t->length = 1;
        s->p = p + 1;
    }
}

/* 1 when the identifier just scanned is followed by '=' or ':', that is,
 * names a setting. */
static int scan_names_setting(const scanner *s)
{
    scanner ahead = *s;
    scan_skip_blank(&ahead);
    return *ahead.p == '=' || *ahead.p == ':';
}

int config_scan_integer_overflow(const char *text, unsigned line, const char *name,
                                 char *literal, size_t literal_bytes)
{
    scanner s = {text, 1};
    scan_token t;
    const char *setting = "";  /* the setting the next value belongs to */
    size_t setting_length = 0;
    for (scan_next(&s, &t); t.kind != SCAN_END && t.line <= line; scan_next(&s, &t)) {
        if (t.kind == SCAN_OTHER && is_identifier_start(*t.start) && scan_names_setting(&s)) {
            setting = t.start;
            setting_length = t.length;
        }
        if (t.kind != SCAN_INTEGER || t.fits || t.line != line)
            continue;
        if (setting_length != strlen(name) || strncmp(setting, name, setting_length) != 0)
            continue;
        if (literal != NULL && literal_bytes > 0) {
            size_t n = t.length < literal_bytes - 1 ? t.length : literal_bytes - 1;
            memcpy(literal, t.start, n);
            literal[n] = '\0';
        }
        return 1;
    }
    return 0;
}

unsigned config_scan_include_line(const char *text)
{
    scanner s = {text, 1};
    scan_token t;
    for (scan_next(&s, &t); t.kind != SCAN_END; scan_next(&s, &t))
        if (t.kind == SCAN_INCLUDE)
            return t.line;
    return 0;
}
