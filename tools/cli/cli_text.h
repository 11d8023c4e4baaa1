/*
 * cli_text.h - text reports of the tools: appending formatted text to a
 * fixed buffer, and replacing a file whole (a JSON or Prometheus text file
 * that another program reads while the tool runs).
 *
 *     char buf[4096];
 *     cli_text t = {buf, sizeof buf, 0};
 *     cli_text_put(&t, "{\"frames\":%d}", 3);
 *     if (t.used < t.bytes) cli_file_replace("stats.json", buf, t.used);
 *
 * Library eigstream_cli. Never prints.
 */
#ifndef EIGSTREAM_CLI_TEXT_H
#define EIGSTREAM_CLI_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* A fixed buffer being filled; used counts what would have been written,
 * so used >= bytes says the text did not fit (it is then cut, and
 * NUL-terminated when bytes > 0). */
typedef struct cli_text {
    char *out;
    size_t bytes, used;
} cli_text;

/* Appends printf-style text. */
void cli_text_put(cli_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The "# HELP name help" and "# TYPE name type" lines that precede a
 * Prometheus metric's samples (text exposition format 0.0.4). */
void cli_text_prometheus_header(cli_text *t, const char *name, const char *type, const char *help);
/* One unlabelled metric: its header, then "name value". */
void cli_text_prometheus_one(cli_text *t, const char *name, const char *type, const char *help,
                             unsigned long long value);
/* count unlabelled metrics, each as cli_text_prometheus_one. */
typedef struct cli_prometheus_metric {
    const char *name, *type, *help;
    unsigned long long value;
} cli_prometheus_metric;
void cli_text_prometheus_many(cli_text *t, const cli_prometheus_metric *m, size_t count);

/* The JSON members "name(i)":counts[i] for i in [first, count), comma
 * separated (no braces), leaving out zero counts when skip_zero. */
void cli_text_json_counts(cli_text *t, const char *(*name)(int), const uint64_t *counts, int first, int count,
                          int skip_zero);

/* cli_file_replace of t's text; -1 with errno ENOSPC when it did not fit. */
int cli_text_write(const cli_text *t, const char *path);

/* Writes bytes of text to path.tmp, then renames it over path, so that a
 * reader sees the old file or the new one, never half of one. 0, or -1
 * with errno. */
int cli_file_replace(const char *path, const char *text, size_t bytes);

#endif
