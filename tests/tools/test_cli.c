/*
 * test_cli.c - the table-driven option parser of the tools (cli_options.h):
 * every kind of option parses into its field, a bad value or an unknown
 * option gives an error that names the option and what is wrong, `--` and
 * positional words work, and --help lists every option with its default;
 * an --endpoint list splits into its entries, and a bad one names the entry
 * (cli_endpoints.h).
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_endpoints.h"
#include "cli_options.h"
#include "test_check.h"

typedef struct demo_options {
    int frames, quiet, pattern, storage, odd;
    long batch;
    uint32_t n;
    uint64_t seed;
    double rate;
    const char *endpoint, *json;
} demo_options;

static const char *const demo_patterns[] = {"push", "pub", NULL};
static const char *const demo_storages[] = {"full", "packed_lower", "packed_upper", NULL};
static const int demo_storage_values[] = {10, 20, 30};

/* cli_parse_fn accepting odd numbers only. */
static int parse_odd(const char *text, void *dest)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value % 2 == 0)
        return -1;
    *(int *)dest = (int)value;
    return 0;
}

/* The demo tool: every kind of option, defaults set in *o. */
typedef struct demo {
    demo_options o;
    cli_option table[13];
    cli_spec spec;
} demo;

static void demo_init(demo *d, int positional_max)
{
    d->o = (demo_options){.frames = 10, .pattern = 0, .storage = 10, .odd = 1, .batch = 180, .n = 128,
                          .seed = 1, .rate = 2.5, .endpoint = "tcp://127.0.0.1:5550"};
    demo_options *o = &d->o;
    const cli_option table[] = {
        CLI_INT("frames", 'f', &o->frames, 1, 1000000, "N", "frames to send"),
        CLI_INT("batch", 0, &o->batch, 1, LONG_MAX, "B", "matrices"),
        CLI_INT("n", 0, &o->n, 1, 4096, "N", "matrix order"),
        CLI_INT("seed", 0, &o->seed, 0, UINT64_MAX, "S", "seed"),
        CLI_DOUBLE("rate", 0, &o->rate, 0.0, 1e6, "R", "frames/s"),
        CLI_FLAG("quiet", 'q', &o->quiet, "only the summary"),
        CLI_STRING("endpoint", 0, &o->endpoint, "E", "ZeroMQ endpoint"),
        CLI_STRING("json", 0, &o->json, "FILE", "write JSON"),
        CLI_CHOICE("pattern", 0, &o->pattern, demo_patterns, NULL, "socket type"),
        CLI_CHOICE("storage", 0, &o->storage, demo_storages, demo_storage_values, "storage"),
        CLI_CUSTOM("odd", 0, &o->odd, parse_odd, "an odd integer", "K", "an odd number"),
        CLI_END};
    memcpy(d->table, table, sizeof table);
    d->spec = (cli_spec){.prog = "demo", .synopsis = "[options] IN [OUT]", .options = d->table,
                         .positional_max = positional_max};
}

/* Parses a NULL-terminated word list (the program name is added). */
static cli_status demo_parse(demo *d, cli_args *args, const char *const *words)
{
    char *argv[32] = {"demo"};
    int argc = 1;
    while (words[argc - 1] != NULL && argc < 31) {
        argv[argc] = (char *)words[argc - 1];
        argc++;
    }
    return cli_parse(&d->spec, argc, argv, 1, args);
}

static void test_every_kind_parses(void)
{
    demo d;
    cli_args args;
    demo_init(&d, 2);
    const char *const words[] = {"--frames", "25", "--batch=7", "--n", "0x20", "--seed", "18446744073709551615",
                                 "--rate", "0.5", "-q", "--endpoint", "ipc:///tmp/x", "--json=out.json",
                                 "--pattern", "pub", "--storage", "packed_upper", "--odd", "7", NULL};
    cli_status status = demo_parse(&d, &args, words);
    CHECK(status == CLI_OK, "status %s: %s", cli_status_name(status), args.message);
    CHECK(d.o.frames == 25, "frames %d", d.o.frames);
    CHECK(d.o.batch == 7, "batch %ld (--name=value)", d.o.batch);
    CHECK(d.o.n == 32, "n %u (hexadecimal)", (unsigned)d.o.n);
    CHECK(d.o.seed == UINT64_MAX, "seed %llu", (unsigned long long)d.o.seed);
    CHECK(d.o.rate == 0.5, "rate %g", d.o.rate);
    CHECK(d.o.quiet == 1, "quiet %d (short flag)", d.o.quiet);
    CHECK(strcmp(d.o.endpoint, "ipc:///tmp/x") == 0, "endpoint %s", d.o.endpoint);
    CHECK(d.o.json != NULL && strcmp(d.o.json, "out.json") == 0, "json %s", d.o.json ? d.o.json : "NULL");
    CHECK(d.o.pattern == 1, "pattern %d (the index of pub)", d.o.pattern);
    CHECK(d.o.storage == 30, "storage %d (values[2])", d.o.storage);
    CHECK(d.o.odd == 7, "odd %d", d.o.odd);
    CHECK(args.positional_count == 0, "%d positionals", args.positional_count);

    demo_init(&d, 0);
    const char *const short_value[] = {"-f", "3", NULL};
    status = demo_parse(&d, &args, short_value);
    CHECK(status == CLI_OK && d.o.frames == 3, "-f 3: %s, frames %d", cli_status_name(status), d.o.frames);
}

/* A command line that must fail, with its status and exact message. */
typedef struct bad_case {
    const char *words[3]; /* NULL-terminated */
    cli_status status;
    const char *message;
} bad_case;

static const bad_case bad_cases[] = {
    {{"--frames", "x"}, CLI_EVALUE, "--frames: expected an integer 1..1000000, got 'x'"},
    {{"--frames", "0"}, CLI_EVALUE, "--frames: expected an integer 1..1000000, got '0'"},
    {{"--frames=1000001"}, CLI_EVALUE, "--frames: expected an integer 1..1000000, got '1000001'"},
    {{"--frames", "12abc"}, CLI_EVALUE, "--frames: expected an integer 1..1000000, got '12abc'"},
    {{"--frames", " 5"}, CLI_EVALUE, "--frames: expected an integer 1..1000000, got ' 5'"},
    {{"--seed", "-1"}, CLI_EVALUE, "--seed: expected an integer >= 0, got '-1'"},
    {{"--seed", "18446744073709551616"}, CLI_EVALUE, "--seed: expected an integer >= 0, got '18446744073709551616'"},
    {{"--batch", "-3"}, CLI_EVALUE, "--batch: expected an integer >= 1, got '-3'"},
    {{"--rate", "-0.1"}, CLI_EVALUE, "--rate: expected a number 0..1e+06, got '-0.1'"},
    {{"--rate", "nan"}, CLI_EVALUE, "--rate: expected a number 0..1e+06, got 'nan'"},
    {{"--pattern", "pull"}, CLI_EVALUE, "--pattern: expected one of push, pub, got 'pull'"},
    {{"--odd", "4"}, CLI_EVALUE, "--odd: expected an odd integer, got '4'"},
    {{"--quiet=yes"}, CLI_EVALUE, "--quiet: takes no value, got 'yes'"},
    {{"--frobnicate"}, CLI_EUNKNOWN, "unknown option '--frobnicate'"},
    {{"-x"}, CLI_EUNKNOWN, "unknown option '-x'"},
    {{"--frame", "3"}, CLI_EUNKNOWN, "unknown option '--frame'"},
    {{"--frames"}, CLI_EMISSING, "--frames: needs a value"},
    {{"a", "b"}, CLI_EPOSITIONAL, "too many arguments at 'b' (at most 1)"},
};

static void test_bad_values_name_the_option(void)
{
    demo d;
    cli_args args;
    for (size_t k = 0; k < sizeof bad_cases / sizeof bad_cases[0]; k++) {
        const bad_case *c = &bad_cases[k];
        demo_init(&d, 1);
        cli_status status = demo_parse(&d, &args, c->words);
        CHECK(status == c->status, "%s ...: status %s, want %s", c->words[0], cli_status_name(status),
              cli_status_name(c->status));
        CHECK(strcmp(args.message, c->message) == 0, "%s ...: message '%s', want '%s'", c->words[0],
              args.message, c->message);
    }

    /* A bad value leaves the default in place. */
    demo_init(&d, 0);
    demo_parse(&d, &args, (const char *const[]){"--n", "5000", NULL});
    CHECK(d.o.n == 128, "n %u after a rejected value, want the default 128", (unsigned)d.o.n);
}

static void test_positionals_and_double_dash(void)
{
    demo d;
    cli_args args;
    demo_init(&d, 3);
    cli_status status = demo_parse(&d, &args, (const char *const[]){"in.npy", "--quiet", "-", "--", "--frames", NULL});
    CHECK(status == CLI_OK, "status %s: %s", cli_status_name(status), args.message);
    CHECK(args.positional_count == 3, "%d positionals, want 3", args.positional_count);
    CHECK(args.positional_count == 3 && strcmp(args.positional[0], "in.npy") == 0
              && strcmp(args.positional[1], "-") == 0 && strcmp(args.positional[2], "--frames") == 0,
          "positionals in order, '-' and words after '--' included");
    CHECK(d.o.quiet == 1 && d.o.frames == 10, "quiet %d, frames %d", d.o.quiet, d.o.frames);

    /* --help wins over errors and stores nothing; after `--` it is a word. */
    demo_init(&d, 1);
    status = demo_parse(&d, &args, (const char *const[]){"--frames", "99", "--bogus", "-h", NULL});
    CHECK(status == CLI_HELP && d.o.frames == 10, "status %s, frames %d", cli_status_name(status), d.o.frames);
    status = demo_parse(&d, &args, (const char *const[]){"--", "--help", NULL});
    CHECK(status == CLI_OK && args.positional_count == 1, "-- --help: status %s", cli_status_name(status));
}

/* --help of the demo tool as text (NULL when no temporary file); free it. */
static char *demo_help_text(const demo *d)
{
    FILE *f = tmpfile();
    if (f == NULL)
        return NULL;
    cli_help_print(f, &d->spec);
    long length = ftell(f);
    char *text = length >= 0 ? calloc((size_t)length + 1, 1) : NULL;
    rewind(f);
    if (text != NULL && fread(text, 1, (size_t)length, f) != (size_t)length) {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

static void test_help_lists_every_option(void)
{
    demo d;
    demo_init(&d, 2);
    char *text = demo_help_text(&d);
    CHECK(text != NULL, "cannot capture --help in a temporary file");
    if (text == NULL)
        return;
    CHECK(strstr(text, "usage: demo [options] IN [OUT]\n") == text, "usage line: %s", text);
    const char *const expected[] = {"-f, --frames N", "(default 10)", "--batch B", "(default 180)",
                                    "--n N", "(default 128)", "--seed S", "--rate R", "(default 2.5)",
                                    "-q, --quiet", "--endpoint E", "(default tcp://127.0.0.1:5550)",
                                    "--json FILE", "(default none)", "--pattern push|pub", "(default push)",
                                    "--storage full|packed_lower|packed_upper", "(default full)", "--odd K",
                                    "-h, --help", NULL};
    for (int k = 0; expected[k] != NULL; k++)
        CHECK(strstr(text, expected[k]) != NULL, "--help lacks '%s':\n%s", expected[k], text);
    for (const cli_option *o = d.table; o->kind != CLI_KIND_END; o++) {
        char name[64];
        snprintf(name, sizeof name, "--%s", o->name);
        CHECK(strstr(text, name) != NULL && strstr(text, o->help) != NULL, "--help lacks %s", name);
    }
    free(text);
}

/* Lists split at their commas; empty entries, too many entries, entries
 * without a ZeroMQ transport and repeated entries are refused, the entry
 * named. */
static void test_endpoint_lists(void)
{
    cli_endpoints list;
    char why[CLI_ENDPOINTS_WHY_BYTES];
    int rc = cli_endpoints_parse("tcp://127.0.0.1:5550,ipc:///tmp/b,inproc://c", &list, why, sizeof why);
    CHECK(rc == 0 && list.count == 3, "three entries: rc %d, count %d: %s", rc, list.count, rc ? why : "");
    if (rc == 0 && list.count == 3)
        CHECK(strcmp(list.entry[0], "tcp://127.0.0.1:5550") == 0 && strcmp(list.entry[1], "ipc:///tmp/b") == 0 &&
              strcmp(list.entry[2], "inproc://c") == 0, "entries %s | %s | %s", list.entry[0], list.entry[1],
              list.entry[2]);
    char eight[8 * 24] = "", nine[9 * 24] = "";
    for (int k = 0; k < 9; k++) {
        char entry[24];
        snprintf(entry, sizeof entry, "%stcp://127.0.0.1:%d", k > 0 ? "," : "", 6000 + k);
        if (k < 8)
            strcat(eight, entry);
        strcat(nine, entry);
    }
    rc = cli_endpoints_parse(eight, &list, why, sizeof why);
    CHECK(rc == 0 && list.count == 8, "eight entries: rc %d, count %d", rc, list.count);
    const struct {
        const char *text, *why;
    } bad[] = {{"tcp://127.0.0.1:1,,", "entry 2 of the list is empty"},
               {",tcp://127.0.0.1:1", "entry 1 of the list is empty"},
               {"tcp://127.0.0.1:1,", "entry 2 of the list is empty"},
               {"tcp://127.0.0.1:1,127.0.0.1:2", "entry 2 of the list: expected tcp://"},
               {"tcp://127.0.0.1:1,tcp://", "entry 2 of the list: expected tcp://"},
               {"tcp://127.0.0.1:1,tcp://a b", "entry 2 of the list: expected tcp://"},
               {"tcp://127.0.0.1:1,ipc:///tmp/b,tcp://127.0.0.1:1", "entry 3 of the list repeats entry 1"},
               {nine, "more than 8 endpoints"},
               {"tcp://127.0.0.1:1", "not a list"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        rc = cli_endpoints_parse(bad[i].text, &list, why, sizeof why);
        CHECK(rc == -1 && strstr(why, bad[i].why) != NULL, "\"%.60s\": rc %d, why \"%s\", want \"%s\"",
              bad[i].text, rc, why, bad[i].why);
    }
}

int main(void)
{
    test_every_kind_parses();
    test_bad_values_name_the_option();
    test_positionals_and_double_dash();
    test_help_lists_every_option();
    test_endpoint_lists();
    return test_check_report("test_cli");
}
