/*
 * config_write.c - the table as text: `eigstream --help-config`
 * (config_print_help) and configuration files (config_write_default writes
 * what config/eigstream.cfg holds; config_write_settings any configuration).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_table.h"

#define WRAP_COLUMNS 79
#define VALUE_MAX (2 * CONFIG_STRING_MAX + 8)

static const void *field_of(const eigstream_config *cfg, const config_spec *spec)
{
    return (const char *)cfg + spec->offset;
}

/* Writes text word by word, each line starting with prefix and none longer
 * than WRAP_COLUMNS unless a single word is. */
static void write_wrapped(FILE *out, const char *prefix, const char *text)
{
    size_t prefix_length = strlen(prefix);
    size_t column = 0;
    const char *p = text;
    while (*p != '\0') {
        while (*p == ' ')
            ++p;
        size_t word = strcspn(p, " ");
        if (word == 0)
            break;
        if (column > 0 && column + 1 + word > WRAP_COLUMNS) {
            fputc('\n', out);
            column = 0;
        }
        if (column == 0) {
            fputs(prefix, out);
            column = prefix_length;
        } else {
            fputc(' ', out);
            ++column;
        }
        fwrite(p, 1, word, out);
        column += word;
        p += word;
    }
    if (column > 0)
        fputc('\n', out);
}

/* A double as a libconfig float literal: shortest round-trip digits, always
 * with a '.' or an exponent so that libconfig reads it as a float. */
static void format_real(double value, char *out, size_t out_bytes)
{
    snprintf(out, out_bytes, "%.15g", value);
    if (strtod(out, NULL) != value)
        snprintf(out, out_bytes, "%.17g", value);
    if (strpbrk(out, ".eEni") == NULL)
        strncat(out, ".0", out_bytes - strlen(out) - 1);
}

/* A string as a libconfig string literal. */
static void format_string(const char *text, char *out, size_t out_bytes)
{
    size_t used = 0;
    out[used++] = '"';
    for (const char *p = text; *p != '\0' && used + 3 < out_bytes; ++p) {
        if (*p == '"' || *p == '\\')
            out[used++] = '\\';
        out[used++] = *p;
    }
    out[used++] = '"';
    out[used] = '\0';
}

/* The value of spec's field in cfg, as written in a file. */
static void format_value(const config_spec *spec, const eigstream_config *cfg, char *out,
                         size_t out_bytes)
{
    const void *field = field_of(cfg, spec);
    switch (spec->kind) {
    case CONFIG_KIND_BOOL:
        snprintf(out, out_bytes, "%s", *(const int *)field ? "true" : "false");
        return;
    case CONFIG_KIND_INT:
        snprintf(out, out_bytes, "%d", *(const int *)field);
        return;
    case CONFIG_KIND_INT64: {
        int64_t value = *(const int64_t *)field;
        /* libconfig reads a literal outside the int range correctly only with L. */
        snprintf(out, out_bytes, "%" PRId64 "%s", value,
                 value > INT32_MAX || value < INT32_MIN ? "L" : "");
        return;
    }
    case CONFIG_KIND_REAL:
        format_real(*(const double *)field, out, out_bytes);
        return;
    case CONFIG_KIND_CHOICE: {
        int value = *(const int *)field;
        int valid = value >= spec->choice->min && value <= spec->choice->max && spec->choice->name(value) != NULL;
        format_string(valid ? spec->choice->name(value) : "?", out, out_bytes);
        return;
    }
    case CONFIG_KIND_ENDPOINT:
    case CONFIG_KIND_HOST_PORT:
    case CONFIG_KIND_PATH:
    case CONFIG_KIND_CPU_LIST:
    case CONFIG_KIND_ADDRESS_LIST:
        format_string((const char *)field, out, out_bytes);
        return;
    case CONFIG_KIND_INT_LIST: {
        const config_int_list *list = field;
        size_t used = (size_t)snprintf(out, out_bytes, "[");
        for (int i = 0; i < list->count && used < out_bytes; ++i)
            used += (size_t)snprintf(out + used, out_bytes - used, "%s%d", i > 0 ? ", " : "", list->values[i]);
        if (used < out_bytes)
            snprintf(out + used, out_bytes - used, "]");
        return;
    }
    }
    snprintf(out, out_bytes, "?");
}

/* "integer 1..4096", "one of full|values|signal|noise", ... */
static void format_kind(const config_spec *spec, char *out, size_t out_bytes)
{
    const char *or_empty = spec->flags & CONFIG_FLAG_EMPTY_OK ? ", or \"\"" : "";
    switch (spec->kind) {
    case CONFIG_KIND_BOOL:
        snprintf(out, out_bytes, "true or false");
        return;
    case CONFIG_KIND_INT:
    case CONFIG_KIND_INT64:
        snprintf(out, out_bytes, "integer %" PRId64 "..%" PRId64, spec->min, spec->max);
        return;
    case CONFIG_KIND_REAL:
        snprintf(out, out_bytes, "number %g..%g", spec->min_real, spec->max_real);
        return;
    case CONFIG_KIND_CHOICE: {
        size_t used = (size_t)snprintf(out, out_bytes, "one of ");
        if (used < out_bytes)
            config_choice_join(spec->choice, out + used, out_bytes - used);
        return;
    }
    case CONFIG_KIND_ENDPOINT:
        snprintf(out, out_bytes, "endpoint tcp://, ipc://, inproc://, pgm:// or epgm://%s",
                 or_empty);
        return;
    case CONFIG_KIND_HOST_PORT:
        snprintf(out, out_bytes, "HOST:PORT%s", or_empty);
        return;
    case CONFIG_KIND_CPU_LIST:
        snprintf(out, out_bytes, "CPU list%s", or_empty);
        return;
    case CONFIG_KIND_ADDRESS_LIST:
        snprintf(out, out_bytes, "numeric addresses \"a,b\"%s", or_empty);
        return;
    case CONFIG_KIND_PATH:
        snprintf(out, out_bytes, "file name%s", or_empty);
        return;
    case CONFIG_KIND_INT_LIST:
        snprintf(out, out_bytes, "list of up to %d integers %" PRId64 "..%" PRId64 " ([0, 1]), or []",
                 CONFIG_LIST_MAX, spec->min, spec->max);
        return;
    }
    snprintf(out, out_bytes, "?");
}

/* The kind (format_kind), and whether SIGHUP applies the setting live
 * (CONFIG_FLAG_LIVE) or it needs a restart. */
static void format_type(const config_spec *spec, char *out, size_t out_bytes)
{
    format_kind(spec, out, out_bytes);
    size_t used = strlen(out);
    if (used < out_bytes)
        snprintf(out + used, out_bytes - used, "; %s",
                 spec->flags & CONFIG_FLAG_LIVE ? "SIGHUP reloads it live" : "restart to change");
}

void config_print_help(FILE *out)
{
    eigstream_config defaults;
    config_defaults(&defaults);
    fputs("Configuration settings (libconfig syntax; load a file with -c FILE, check one\n"
          "with --check-config FILE). A setting left out of the file keeps its default;\n"
          "without -c FILE every default applies. In a file, a setting group.name is\n"
          "written name = value; inside group = { ... };\n",
          out);
    for (size_t g = 0; g < CONFIG_GROUP_COUNT; ++g) {
        fprintf(out, "\n%s: %s\n", config_groups[g].name, config_groups[g].help);
        for (size_t i = 0; i < CONFIG_SPEC_COUNT; ++i) {
            const config_spec *spec = &config_specs[i];
            if (strcmp(spec->group, config_groups[g].name) != 0)
                continue;
            char value[VALUE_MAX], type[CONFIG_STRING_MAX];
            format_value(spec, &defaults, value, sizeof value);
            format_type(spec, type, sizeof type);
            fprintf(out, "\n  %s.%s = %s\n", spec->group, spec->name, value);
            fprintf(out, "      %s\n", type);
            write_wrapped(out, "      ", spec->help);
        }
    }
}

/* Writes cfg as a file: header comment, then each group with every setting,
 * each under its help and a "type, default" comment line. */
static void write_file(FILE *out, const eigstream_config *cfg, const char *header)
{
    eigstream_config defaults;
    config_defaults(&defaults);
    fputs(header, out);
    for (size_t g = 0; g < CONFIG_GROUP_COUNT; ++g) {
        fputc('\n', out);
        write_wrapped(out, "# ", config_groups[g].help);
        fprintf(out, "%s = {\n", config_groups[g].name);
        int first = 1;
        for (size_t i = 0; i < CONFIG_SPEC_COUNT; ++i) {
            const config_spec *spec = &config_specs[i];
            if (strcmp(spec->group, config_groups[g].name) != 0)
                continue;
            char value[VALUE_MAX], default_value[VALUE_MAX], type[CONFIG_STRING_MAX];
            format_value(spec, cfg, value, sizeof value);
            format_value(spec, &defaults, default_value, sizeof default_value);
            format_type(spec, type, sizeof type);
            if (!first)
                fputc('\n', out);
            first = 0;
            char type_line[CONFIG_STRING_MAX + VALUE_MAX + 16];
            snprintf(type_line, sizeof type_line, "%s; default %s", type, default_value);
            write_wrapped(out, "  # ", spec->help);
            write_wrapped(out, "  # ", type_line);
            fprintf(out, "  %s = %s;\n", spec->name, value);
        }
        fputs("};\n", out);
    }
}

void config_write_default(FILE *out)
{
    eigstream_config defaults;
    config_defaults(&defaults);
    write_file(out, &defaults,
               "# eigstream.cfg - configuration of the eigstream daemon (libconfig syntax).\n"
               "#\n"
               "#   eigstream -c eigstream.cfg              run with this file\n"
               "#   eigstream --check-config eigstream.cfg  check a file and exit\n"
               "#   eigstream --help-config                 list every setting\n"
               "#\n"
               "# Every value below is the built-in default: without -c FILE the daemon\n"
               "# runs exactly these, and a setting left out of a file keeps its default.\n"
               "# Unknown settings, wrong types and out-of-range values are errors,\n"
               "# reported as FILE:LINE: group.name: reason.\n"
               "#\n"
               "# Generated by config_write_default() from the settings table in\n"
               "# config/config_table.c; the unit test tests/config checks that this file\n"
               "# and the table agree.\n");
}

void config_write_settings(FILE *out, const eigstream_config *cfg)
{
    write_file(out, cfg,
               "# eigstream configuration (libconfig syntax), every setting written out;\n"
               "# each comment gives the setting's built-in default.\n");
}
