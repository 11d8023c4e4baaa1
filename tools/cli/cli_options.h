/*
 * cli_options.h - the one command-line option parser of the eigstream tools.
 *
 * A tool describes its options in a table; the same table fills the option
 * struct, names what is wrong with a bad argument, and prints --help:
 *
 *     typedef struct demo_options { int frames, quiet; double rate; const char *out; } demo_options;
 *     demo_options o = {.frames = 10, .rate = 2.0};          // defaults first
 *     const cli_option table[] = {
 *         CLI_INT("frames", 0, &o.frames, 1, 1000000, "N", "frames to send"),
 *         CLI_DOUBLE("rate", 0, &o.rate, 0.0, 1e6, "R", "frames/s, 0 = as fast as possible"),
 *         CLI_FLAG("quiet", 'q', &o.quiet, "only the summary line"),
 *         CLI_END};
 *     const cli_spec spec = {.prog = "demo", .synopsis = "[options] OUT", .options = table,
 *                            .positional_max = 1};
 *     cli_args args;
 *     int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
 *     if (status >= 0)
 *         return status;                                      // --help (0) or a bad argument (2)
 *
 * Accepted spellings: `--name VALUE`, `--name=VALUE`, `-s VALUE` for an option
 * with a short name, `--flag`, `-h`/`--help`; `--` ends the options; any other
 * word (a lone `-` included) is a positional argument, kept in order.
 *
 * Integers are decimal, or hexadecimal after 0x. A destination is written only
 * when its value is valid, so the defaults stay where the argument is bad.
 *
 * Library eigstream_cli. Never exits; prints only in cli_help_print,
 * cli_fatal and cli_parse_or_report, which are for mains.
 */
#ifndef EIGSTREAM_CLI_OPTIONS_H
#define EIGSTREAM_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_kind {
    CLI_KIND_END = 0, /* the entry that ends a table */
    CLI_KIND_FLAG,    /* no value: sets an int to 1 */
    CLI_KIND_INT,     /* integer in [min, max] into an int, long, uint32_t or uint64_t */
    CLI_KIND_DOUBLE,  /* finite number in [min, max] into a double */
    CLI_KIND_STRING,  /* any text: the const char * points into argv */
    CLI_KIND_CHOICE,  /* one of a NULL-terminated name list: its index, or values[index] */
    CLI_KIND_CUSTOM   /* the tool's own parse function */
} cli_kind;

/* The C type behind an integer destination (set by CLI_INT through _Generic). */
typedef enum cli_int_type { CLI_INT_INT, CLI_INT_LONG, CLI_INT_U32, CLI_INT_U64 } cli_int_type;

/* A tool's parser for one value: 0 when text is valid (and *dest set), else -1. */
typedef int (*cli_parse_fn)(const char *text, void *dest);

typedef struct cli_option {
    const char *name;      /* long name without the dashes: "frames" for --frames */
    char short_name;       /* 'q' for -q, or 0 */
    cli_kind kind;
    void *dest;            /* the field the value goes to (type by kind, above) */
    cli_int_type int_type; /* CLI_KIND_INT */
    long long min;         /* CLI_KIND_INT */
    unsigned long long max;
    double min_value, max_value;     /* CLI_KIND_DOUBLE */
    const char *const *choices;      /* CLI_KIND_CHOICE: NULL-terminated names */
    const int *values;               /* CLI_KIND_CHOICE: value of each name, or NULL for the index */
    cli_parse_fn parse;              /* CLI_KIND_CUSTOM */
    const char *expected;            /* CLI_KIND_CUSTOM: what a valid value is, for the error */
    const char *metavar;             /* the value's name in --help: "N" */
    const char *help;                /* one line */
    const char *default_text;        /* shown as the default instead of the destination's value */
} cli_option;

#define CLI_INT_TYPE_OF(dest)                                                                      \
    _Generic((dest), int *: CLI_INT_INT, long *: CLI_INT_LONG, uint32_t *: CLI_INT_U32,            \
             uint64_t *: CLI_INT_U64)

#define CLI_FLAG(name_, short_, dest_, help_)                                                      \
    {.name = (name_), .short_name = (short_), .kind = CLI_KIND_FLAG,                               \
     .dest = (int *){(dest_)}, .help = (help_)}
#define CLI_INT(name_, short_, dest_, min_, max_, metavar_, help_)                                 \
    {.name = (name_), .short_name = (short_), .kind = CLI_KIND_INT, .dest = (dest_),               \
     .int_type = CLI_INT_TYPE_OF(dest_), .min = (min_), .max = (max_), .metavar = (metavar_),      \
     .help = (help_)}
#define CLI_DOUBLE(name_, short_, dest_, min_, max_, metavar_, help_)                              \
    {.name = (name_), .short_name = (short_), .kind = CLI_KIND_DOUBLE,                             \
     .dest = (double *){(dest_)}, .min_value = (min_), .max_value = (max_),                        \
     .metavar = (metavar_), .help = (help_)}
#define CLI_STRING(name_, short_, dest_, metavar_, help_)                                          \
    {.name = (name_), .short_name = (short_), .kind = CLI_KIND_STRING,                             \
     .dest = (const char **){(dest_)}, .metavar = (metavar_), .help = (help_)}
#define CLI_CHOICE(name_, short_, dest_, choices_, values_, help_)                                 \
    {.name = (name_), .short_name = (short_), .kind = CLI_KIND_CHOICE, .dest = (int *){(dest_)},   \
     .choices = (choices_), .values = (values_), .help = (help_)}
#define CLI_CUSTOM(name_, short_, dest_, parse_, expected_, metavar_, help_)                        \
    {.name = (name_), .short_name = (short_), .kind = CLI_KIND_CUSTOM, .dest = (dest_),            \
     .parse = (parse_), .expected = (expected_), .metavar = (metavar_), .help = (help_)}
#define CLI_END {.name = NULL, .kind = CLI_KIND_END}
/* The ZeroMQ socket options of the stream tools, the three rows that open
 * their tables: --endpoint E into *endpoint_, --pattern (one of patterns_,
 * its index into *pattern_, described by pattern_help_) and --bind. */
#define CLI_SOCKET_OPTIONS(endpoint_, pattern_, patterns_, pattern_help_, bind_)                   \
    CLI_STRING("endpoint", 0, endpoint_, "E", "ZeroMQ endpoint"),                                  \
    CLI_CHOICE("pattern", 0, pattern_, patterns_, NULL, pattern_help_),                            \
    CLI_FLAG("bind", 0, bind_, "bind instead of connect")

/* A tool's (or a mode's) command line. */
typedef struct cli_spec {
    const char *prog;          /* "eigstream-sim", "eigstream-bench pipeline": prefixes every message */
    const char *synopsis;      /* after the program in the usage line: "[options] OUT.npy" */
    const char *description;   /* printed after the usage line, or NULL */
    const cli_option *options; /* ended by CLI_END */
    int positional_max;        /* 0: positional words are an error */
    const char *epilogue;      /* printed after the options, or NULL */
    void (*epilogue_print)(FILE *to); /* for text built at run time, or NULL */
} cli_spec;

typedef enum cli_status {
    CLI_OK = 0,
    CLI_HELP,        /* -h or --help came before any `--`: nothing was parsed or stored */
    CLI_EUNKNOWN,    /* an option the table does not have */
    CLI_EMISSING,    /* an option that takes a value came last */
    CLI_EVALUE,      /* a value out of range, not a number, not a choice; or a value given to a flag */
    CLI_EPOSITIONAL  /* more positional words than positional_max */
} cli_status;

#define CLI_POSITIONAL_MAX 8
#define CLI_MESSAGE_SIZE 256

/* What cli_parse leaves besides the destinations. */
typedef struct cli_args {
    const char *positional[CLI_POSITIONAL_MAX]; /* pointers into argv */
    int positional_count;
    char message[CLI_MESSAGE_SIZE]; /* why, when the status is an error: "--frames: expected ..." */
} cli_args;

/* Parses argv[first..argc-1] against spec->options (first >= 1: argv[0] is
 * the program, and a mode word may precede the options). Returns CLI_HELP,
 * storing nothing, when -h or --help comes before any `--`. Otherwise writes
 * each valid value to its destination as it goes and stops at the first error, whose
 * status it returns with args->message naming the option and the problem.
 * Never prints or exits. */
cli_status cli_parse(const cli_spec *spec, int argc, char **argv, int first, cli_args *args);

/* The name of a status: "ok", "help", "unknown option"... */
const char *cli_status_name(cli_status status);

/* Prints the usage line, the description, one line per option (metavar, help
 * and the destination's current value as the default, so call it before
 * parsing or after setting the defaults), then the epilogue. */
void cli_help_print(FILE *to, const cli_spec *spec);

/* Prints "<prog>: <message>\n" on stderr; returns 1, the status of a main's
 * fatal error, so that a main can `return cli_fatal(...)`. */
int cli_fatal(const char *prog, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Prints "<prog>: <message> (try --help)\n" on stderr (the message cut at
 * CLI_MESSAGE_SIZE bytes); returns 2, the status of a usage error, so that
 * an option check can `return cli_usage_error(...)`. */
int cli_usage_error(const char *prog, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* cli_parse for a main: -1 when the tool should go on; 0 after printing
 * --help on stdout; error_status after printing "<prog>: <message> (try
 * --help)" on stderr. */
int cli_parse_or_report(const cli_spec *spec, int argc, char **argv, int first, cli_args *args,
                        int error_status);

/* Defines a tool's main, int function(argc, argv): parse(argc, argv, &o)
 * sets the defaults of an options_type o and parses argv into it, returning
 * -1 to go on or the exit status (0 after --help, 2 after a bad argument,
 * as cli_parse_or_report); run(&o) then does the work and returns the exit
 * status. */
#define CLI_MAIN(function, options_type, parse, run)                                                 \
    int function(int argc, char **argv)                                                              \
    {                                                                                                \
        options_type options;                                                                        \
        int status = parse(argc, argv, &options);                                                    \
        return status >= 0 ? status : run(&options);                                                 \
    }

#endif
