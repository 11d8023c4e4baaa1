/*
 * cli_text.c - formatted text into a fixed buffer; whole-file replacement
 * (cli_text.h).
 */
#include "cli_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void cli_text_put(cli_text *t, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    size_t room = t->used < t->bytes ? t->bytes - t->used : 0;
    int n = vsnprintf(room ? t->out + t->used : NULL, room, fmt, args);
    va_end(args);
    if (n > 0)
        t->used += (size_t)n;
}

void cli_text_prometheus_header(cli_text *t, const char *name, const char *type, const char *help)
{
    cli_text_put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void cli_text_prometheus_one(cli_text *t, const char *name, const char *type, const char *help,
                             unsigned long long value)
{
    cli_text_prometheus_header(t, name, type, help);
    cli_text_put(t, "%s %llu\n", name, value);
}

void cli_text_json_counts(cli_text *t, const char *(*name)(int), const uint64_t *counts, int first, int count,
                          int skip_zero)
{
    const char *sep = "";
    for (int i = first; i < count; i++)
        if (!skip_zero || counts[i] > 0) {
            cli_text_put(t, "%s\"%s\":%llu", sep, name(i), (unsigned long long)counts[i]);
            sep = ",";
        }
}

void cli_text_prometheus_many(cli_text *t, const cli_prometheus_metric *m, size_t count)
{
    for (size_t i = 0; i < count; i++)
        cli_text_prometheus_one(t, m[i].name, m[i].type, m[i].help, m[i].value);
}

int cli_text_write(const cli_text *t, const char *path)
{
    if (t->used >= t->bytes) {
        errno = ENOSPC;
        return -1;
    }
    return cli_file_replace(path, t->out, t->used);
}

int cli_file_replace(const char *path, const char *text, size_t bytes)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    int ok = fwrite(text, 1, bytes, f) == bytes;
    int saved = errno;
    ok &= fclose(f) == 0;
    if (!ok) {
        remove(tmp);
        errno = saved != 0 ? saved : EIO;
        return -1;
    }
    return rename(tmp, path);
}
