/*
 * cli_options.c - the table-driven option parser, --help and error reports
 * of the eigstream tools (see cli_options.h).
 */
#include "cli_options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The largest value an integer destination of type t holds. */
static unsigned long long cli_int_type_max(cli_int_type t)
{
    switch (t) {
    case CLI_INT_INT: return INT_MAX;
    case CLI_INT_LONG: return LONG_MAX;
    case CLI_INT_U32: return UINT32_MAX;
    case CLI_INT_U64: return UINT64_MAX;
    }
    return 0;
}

/* The smallest value an integer destination of type t holds. */
static long long cli_int_type_min(cli_int_type t)
{
    return t == CLI_INT_INT ? INT_MIN : t == CLI_INT_LONG ? LONG_MIN : 0;
}

/* Parses text as a whole decimal (or 0x hexadecimal) integer, with an
 * optional leading minus. 0 and *negative / *magnitude set, or -1 when text
 * is not an integer or its magnitude overflows 64 bits. */
static int cli_integer_scan(const char *text, int *negative, unsigned long long *magnitude)
{
    const char *digits = text;
    *negative = *digits == '-';
    if (*digits == '-' || *digits == '+')
        digits++;
    int base = 10;
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        base = 16;
        digits += 2;
    }
    /* strtoull itself would accept spaces and a second sign: refuse them. */
    if (!(base == 16 ? isxdigit((unsigned char)*digits) : isdigit((unsigned char)*digits)))
        return -1;
    char *end;
    errno = 0;
    *magnitude = strtoull(digits, &end, base);
    return errno != 0 || *end != '\0' ? -1 : 0;
}

/* Stores an integer option's value; 0, or -1 when it is not an integer in
 * [o->min, o->max] (the destination type's range capping both). */
static int cli_store_int(const cli_option *o, const char *text)
{
    int negative;
    unsigned long long magnitude;
    if (cli_integer_scan(text, &negative, &magnitude) != 0)
        return -1;
    long long min = o->min > cli_int_type_min(o->int_type) ? o->min : cli_int_type_min(o->int_type);
    unsigned long long max = o->max < cli_int_type_max(o->int_type) ? o->max : cli_int_type_max(o->int_type);
    long long value_signed = 0;
    if (negative) {
        /* LLONG_MIN's magnitude is LLONG_MAX + 1. */
        if (magnitude > (unsigned long long)LLONG_MAX + 1ull)
            return -1;
        value_signed = magnitude == (unsigned long long)LLONG_MAX + 1ull ? LLONG_MIN : -(long long)magnitude;
        if (magnitude != 0 && value_signed < min)
            return -1;
    } else if (magnitude > max || (min > 0 && magnitude < (unsigned long long)min)) {
        return -1;
    }
    switch (o->int_type) {
    case CLI_INT_INT: *(int *)o->dest = negative ? (int)value_signed : (int)magnitude; break;
    case CLI_INT_LONG: *(long *)o->dest = negative ? (long)value_signed : (long)magnitude; break;
    case CLI_INT_U32: *(uint32_t *)o->dest = (uint32_t)magnitude; break;
    case CLI_INT_U64: *(uint64_t *)o->dest = (uint64_t)magnitude; break;
    }
    return 0;
}

/* Stores a number option's value; 0, or -1 when text is not a whole finite
 * number in [min_value, max_value]. */
static int cli_store_double(const cli_option *o, const char *text)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (*text == '\0' || *end != '\0' || errno != 0 || !isfinite(value)
        || !(value >= o->min_value && value <= o->max_value))
        return -1;
    *(double *)o->dest = value;
    return 0;
}

/* Stores a choice option's value (its index, or values[index]); 0, or -1
 * when text is none of the names. */
static int cli_store_choice(const cli_option *o, const char *text)
{
    for (int k = 0; o->choices[k] != NULL; k++) {
        if (strcmp(text, o->choices[k]) == 0) {
            *(int *)o->dest = o->values != NULL ? o->values[k] : k;
            return 0;
        }
    }
    return -1;
}

/* Writes a choice option's names into out (size > 0), separator between
 * them, cut short when out is full. */
static void cli_choices_join(const cli_option *o, const char *separator, char *out, size_t size)
{
    out[0] = '\0';
    size_t used = 0;
    for (int k = 0; o->choices[k] != NULL && used < size; k++) {
        int wrote = snprintf(out + used, size - used, "%s%s", k > 0 ? separator : "", o->choices[k]);
        used += wrote > 0 ? (size_t)wrote : 0;
    }
}

/* Writes into out what a valid value of o is: "an integer 1..4096". */
static void cli_expected_describe(const cli_option *o, char *out, size_t size)
{
    switch (o->kind) {
    case CLI_KIND_INT: {
        unsigned long long type_max = cli_int_type_max(o->int_type);
        if (o->max >= type_max)
            snprintf(out, size, "an integer >= %lld", o->min);
        else
            snprintf(out, size, "an integer %lld..%llu", o->min, o->max);
        break;
    }
    case CLI_KIND_DOUBLE:
        snprintf(out, size, "a number %g..%g", o->min_value, o->max_value);
        break;
    case CLI_KIND_CHOICE: {
        int used = snprintf(out, size, "one of ");
        cli_choices_join(o, ", ", out + used, size - (size_t)used);
        break;
    }
    case CLI_KIND_CUSTOM:
        snprintf(out, size, "%s", o->expected != NULL ? o->expected : "a valid value");
        break;
    default:
        snprintf(out, size, "a value");
        break;
    }
}

/* Stores text as o's value; 0, or -1 when it is not valid for o. */
static int cli_store(const cli_option *o, const char *text)
{
    switch (o->kind) {
    case CLI_KIND_INT: return cli_store_int(o, text);
    case CLI_KIND_DOUBLE: return cli_store_double(o, text);
    case CLI_KIND_CHOICE: return cli_store_choice(o, text);
    case CLI_KIND_CUSTOM: return o->parse(text, o->dest);
    case CLI_KIND_STRING: *(const char **)o->dest = text; return 0;
    default: return -1;
    }
}

/* The option of spec named by arg ("--name" up to length, or "-c"), or NULL. */
static const cli_option *cli_option_find(const cli_spec *spec, const char *arg, size_t length)
{
    for (const cli_option *o = spec->options; o->kind != CLI_KIND_END; o++) {
        if (arg[1] == '-' && strlen(o->name) == length - 2 && strncmp(arg + 2, o->name, length - 2) == 0)
            return o;
        if (arg[1] != '-' && length == 2 && o->short_name != 0 && arg[1] == o->short_name)
            return o;
    }
    return NULL;
}

/* Parses the option word argv[*k] (and its value, advancing *k past it). */
static cli_status cli_parse_option(const cli_spec *spec, int argc, char **argv, int *k, cli_args *args)
{
    const char *arg = argv[*k];
    size_t length = arg[1] == '-' ? strcspn(arg, "=") : strlen(arg);
    const char *inline_value = arg[length] == '=' ? arg + length + 1 : NULL;
    int shown = (int)length;
    const cli_option *o = cli_option_find(spec, arg, length);
    if (o == NULL) {
        snprintf(args->message, sizeof args->message, "unknown option '%s'", arg);
        return CLI_EUNKNOWN;
    }
    if (o->kind == CLI_KIND_FLAG) {
        if (inline_value != NULL) {
            snprintf(args->message, sizeof args->message, "%.*s: takes no value, got '%s'", shown, arg,
                     inline_value);
            return CLI_EVALUE;
        }
        *(int *)o->dest = 1;
        return CLI_OK;
    }
    const char *value = inline_value;
    if (value == NULL) {
        if (*k + 1 >= argc) {
            snprintf(args->message, sizeof args->message, "%.*s: needs a value", shown, arg);
            return CLI_EMISSING;
        }
        value = argv[++*k];
    }
    if (cli_store(o, value) != 0) {
        char expected[160];
        cli_expected_describe(o, expected, sizeof expected);
        snprintf(args->message, sizeof args->message, "%.*s: expected %s, got '%s'", shown, arg, expected,
                 value);
        return CLI_EVALUE;
    }
    return CLI_OK;
}

/* 1 when -h or --help comes before any `--` in argv[first..]. */
static int cli_help_requested(int argc, char **argv, int first)
{
    for (int k = first; k < argc && strcmp(argv[k], "--") != 0; k++)
        if (strcmp(argv[k], "-h") == 0 || strcmp(argv[k], "--help") == 0)
            return 1;
    return 0;
}

cli_status cli_parse(const cli_spec *spec, int argc, char **argv, int first, cli_args *args)
{
    memset(args, 0, sizeof *args);
    /* Help wins over any error and leaves the destinations alone, so that
     * --help shows the true defaults. */
    if (cli_help_requested(argc, argv, first))
        return CLI_HELP;
    int options_done = 0;
    for (int k = first; k < argc; k++) {
        const char *arg = argv[k];
        if (options_done || arg[0] != '-' || arg[1] == '\0') {
            if (args->positional_count >= spec->positional_max
                || args->positional_count >= CLI_POSITIONAL_MAX) {
                snprintf(args->message, sizeof args->message, "too many arguments at '%s' (at most %d)", arg,
                         spec->positional_max);
                return CLI_EPOSITIONAL;
            }
            args->positional[args->positional_count++] = arg;
        } else if (strcmp(arg, "--") == 0) {
            options_done = 1;
        } else {
            cli_status status = cli_parse_option(spec, argc, argv, &k, args);
            if (status != CLI_OK)
                return status;
        }
    }
    return CLI_OK;
}

/* Indexed by cli_status. */
static const char *const cli_status_names[] = {"ok", "help", "unknown option", "missing value", "bad value",
                                               "too many arguments"};

const char *cli_status_name(cli_status status)
{
    size_t count = sizeof cli_status_names / sizeof cli_status_names[0];
    return (size_t)status < count ? cli_status_names[status] : "unknown status";
}

/* Writes o's default, read from its destination, into out ("" for none). */
static void cli_default_describe(const cli_option *o, char *out, size_t size)
{
    out[0] = '\0';
    if (o->default_text != NULL) {
        snprintf(out, size, "%s", o->default_text);
        return;
    }
    switch (o->kind) {
    case CLI_KIND_INT:
        switch (o->int_type) {
        case CLI_INT_INT: snprintf(out, size, "%d", *(const int *)o->dest); break;
        case CLI_INT_LONG: snprintf(out, size, "%ld", *(const long *)o->dest); break;
        case CLI_INT_U32: snprintf(out, size, "%lu", (unsigned long)*(const uint32_t *)o->dest); break;
        case CLI_INT_U64: snprintf(out, size, "%llu", (unsigned long long)*(const uint64_t *)o->dest); break;
        }
        break;
    case CLI_KIND_DOUBLE: snprintf(out, size, "%g", *(const double *)o->dest); break;
    case CLI_KIND_STRING: {
        const char *s = *(const char *const *)o->dest;
        snprintf(out, size, "%s", s != NULL ? s : "none");
        break;
    }
    case CLI_KIND_CHOICE:
        for (int k = 0; o->choices[k] != NULL; k++)
            if ((o->values != NULL ? o->values[k] : k) == *(const int *)o->dest)
                snprintf(out, size, "%s", o->choices[k]);
        break;
    default: break;
    }
}

/* Writes o's value name for --help: its metavar, or its choices a|b|c. */
static void cli_metavar_describe(const cli_option *o, char *out, size_t size)
{
    out[0] = '\0';
    if (o->kind == CLI_KIND_CHOICE && o->metavar == NULL)
        cli_choices_join(o, "|", out, size);
    else if (o->kind != CLI_KIND_FLAG) {
        snprintf(out, size, "%s", o->metavar != NULL ? o->metavar : "VALUE");
    }
}

void cli_help_print(FILE *to, const cli_spec *spec)
{
    fprintf(to, "usage: %s %s\n", spec->prog, spec->synopsis != NULL ? spec->synopsis : "[options]");
    if (spec->description != NULL)
        fprintf(to, "\n%s\n", spec->description);
    fputs("Options:\n", to);
    for (const cli_option *o = spec->options; o->kind != CLI_KIND_END; o++) {
        char names[160], metavar[96], fallback[96];
        cli_metavar_describe(o, metavar, sizeof metavar);
        cli_default_describe(o, fallback, sizeof fallback);
        if (o->short_name != 0)
            snprintf(names, sizeof names, "-%c, --%s%s%s", o->short_name, o->name, *metavar ? " " : "", metavar);
        else
            snprintf(names, sizeof names, "--%s%s%s", o->name, *metavar ? " " : "", metavar);
        if (strlen(names) > 26) /* a long choice list gets a line of its own */
            fprintf(to, "  %s\n  %-26s %s", names, "", o->help != NULL ? o->help : "");
        else
            fprintf(to, "  %-26s %s", names, o->help != NULL ? o->help : "");
        if (*fallback)
            fprintf(to, " (default %s)", fallback);
        fputc('\n', to);
    }
    fprintf(to, "  %-26s %s\n", "-h, --help", "this text");
    if (spec->epilogue != NULL)
        fputs(spec->epilogue, to);
    if (spec->epilogue_print != NULL)
        spec->epilogue_print(to);
}

int cli_fatal(const char *prog, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    return 1;
}

int cli_usage_error(const char *prog, const char *format, ...)
{
    char message[CLI_MESSAGE_SIZE]; /* a usage message is one short line */
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    cli_fatal(prog, "%s (try --help)", message);
    return 2;
}

int cli_parse_or_report(const cli_spec *spec, int argc, char **argv, int first, cli_args *args,
                        int error_status)
{
    cli_status status = cli_parse(spec, argc, argv, first, args);
    if (status == CLI_OK)
        return -1;
    if (status == CLI_HELP) {
        cli_help_print(stdout, spec);
        return 0;
    }
    cli_fatal(spec->prog, "%s (try --help)", args->message);
    return error_status;
}
