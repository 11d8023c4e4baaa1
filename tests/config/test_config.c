/*
 * test_config.c - unit tests of config/: the shipped config/eigstream.cfg
 * against the table, every default, every error class with its exact
 * message and line, a full non-default file, a write/load round trip and the
 * --help-config text; config_validate on configurations built in code (every
 * rule between settings, the backends' n limits) and the shared choice
 * names.
 *
 * The expected values are written out here by hand from config.h, never
 * taken from the table under test.
 *
 *   test_config SHIPPED_CFG        run the tests
 *   test_config --write-default    print the default file (to regenerate
 *                                  config/eigstream.cfg)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "protocol.h"
#include "test_check.h"

static char temp_dir[256];
static char temp_files[128][64]; /* names written into temp_dir, removed at the end */
static size_t temp_file_count;

/* ---- helpers ------------------------------------------------------------------ */

/* Writes text to temp_dir/name; returns the path, valid until the next call. */
static const char *write_temp(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", temp_dir, name);
    size_t i = 0;
    while (i < temp_file_count && strcmp(temp_files[i], name) != 0)
        ++i;
    if (i == temp_file_count && temp_file_count < sizeof temp_files / sizeof temp_files[0])
        snprintf(temp_files[temp_file_count++], sizeof temp_files[0], "%s", name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        printf("FAIL cannot create %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

/* Reads a whole file; NULL when it cannot. Caller frees. */
static char *read_all(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t capacity = 1 << 16, used = 0;
    char *buffer = malloc(capacity + 1);
    while (buffer != NULL) {
        size_t got = fread(buffer + used, 1, capacity - used, f);
        used += got;
        if (used < capacity)
            break;
        char *bigger = realloc(buffer, 2 * capacity + 1);
        if (bigger == NULL) {
            free(buffer);
            buffer = NULL;
            break;
        }
        buffer = bigger;
        capacity *= 2;
    }
    fclose(f);
    if (buffer != NULL) {
        buffer[used] = '\0';
        *bytes = used;
    }
    return buffer;
}

/* Captures what write(FILE *) prints; caller frees. */
static char *capture(void (*write)(FILE *), size_t *bytes)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, bytes);
    if (f == NULL)
        return NULL;
    write(f);
    fclose(f);
    return text;
}

/* The two configurations the tests compare against, written out by hand:
 * the defaults as config.h documents them, and the values of full_file
 * below (every setting away from its default). */
typedef enum expected_kind { EXPECT_DEFAULTS, EXPECT_FULL } expected_kind;

static void expected_config(eigstream_config *c, expected_kind kind)
{
    int full = kind == EXPECT_FULL;
#define PICK(default_value, full_value) (full ? (full_value) : (default_value))
    memset(c, 0, sizeof *c);
    strcpy(c->input.endpoint, PICK("tcp://127.0.0.1:5550", "tcp://*:6000"));
    c->input.pattern = PICK(CONFIG_INPUT_PULL, CONFIG_INPUT_SUB);
    c->input.bind = PICK(1, 0);
    c->input.hwm = PICK(4, 16);
    c->input.max_message_bytes = PICK(128 * 1024 * 1024, 8589934592LL);
    c->input.replay_timing = PICK(CONFIG_REPLAY_MAX, CONFIG_REPLAY_ORIGINAL);
    c->input.replay_speed = PICK(1.0, 2.5);
    c->input.heartbeat_ms = PICK(1000, 250);
    c->input.heartbeat_liveness = PICK(3, 5);
    c->input.copy_threads = PICK(0, 6);
    c->input.io_threads = 1; /* above 1 needs pattern pull, and the full file subscribes */
    c->input.reorder_ms = PICK(20, 75);
    c->input.fragment_timeout_ms = PICK(1000, 250);
    strcpy(c->output.endpoint, PICK("tcp://127.0.0.1:5551", "inproc://eigenspaces"));
    c->output.pattern = PICK(CONFIG_OUTPUT_PUB, CONFIG_OUTPUT_PUSH);
    c->output.bind = PICK(1, 0);
    c->output.hwm = PICK(4, 0);
    c->output.mode = PICK(PROTOCOL_MODE_FULL, PROTOCOL_MODE_SIGNAL);
    c->output.signal_dimension = PICK(0, 3);
    c->output.snapshots = PICK(0, 1000);
    c->solver.backend = PICK(EIG_BACKEND_AUTO, EIG_BACKEND_LAPACK);
    c->solver.precision = PICK(EIG_COMPLEX_DOUBLE, EIG_COMPLEX_FLOAT);
    c->solver.n = PICK(128, 64);
    c->solver.matrices = PICK(180, 360);
    c->solver.gpu_device = PICK(0, 1);
    c->solver.cpu_threads = PICK(0, 2);
    c->solver.workers = PICK(1, 3);
    c->frame.deadline_ms = PICK(1000, 250);
    c->frame.late_policy = PICK(CONFIG_LATE_PUBLISH, CONFIG_LATE_DROP);
    c->frame.queue_depth = PICK(4, 8);
    c->frame.overflow_policy = PICK(CONFIG_OVERFLOW_DROP_OLDEST, CONFIG_OVERFLOW_BLOCK);
    c->form.diagonal_loading = PICK(0, 1);
    c->form.diagonal_loading_db = PICK(-30.0, -40.0);
    c->form.forward_backward = PICK(0, 1);
    c->form.input = PICK(CONFIG_FORM_INPUT_COVARIANCE, CONFIG_FORM_INPUT_IQ);
    c->form.iq_format = PICK(PROTOCOL_IQ_CI16_LE, PROTOCOL_IQ_CF32_LE);
    c->form.iq_layout = PICK(PROTOCOL_IQ_CPG, PROTOCOL_IQ_PGC);
    c->form.pulses = PICK(180, 64);
    c->form.range_gates = PICK(256, 512);
    c->form.window = PICK(FORM_WINDOW_HANN, FORM_WINDOW_TAYLOR);
    c->form.sidelobe_db = PICK(40.0, 35.0);
    c->form.fft_size = PICK(0, 128);
    c->form.doppler_first = PICK(0, 100);
    c->form.doppler_bins = PICK(0, 90);
    c->form.range_segments = PICK(1, 4);
    c->form.guard_gates = PICK(0, 2);
    c->form.fft_threads = PICK(0, 2);
    strcpy(c->form.fft_wisdom_file, PICK("", "/var/lib/eigstream/fftw.wisdom"));
    strcpy(c->metrics.endpoint, PICK("tcp://127.0.0.1:5552", "ipc:///tmp/eigstream-metrics"));
    c->metrics.interval_ms = PICK(1000, 250);
    strcpy(c->metrics.http, PICK("127.0.0.1:9464", "0.0.0.0:9000"));
    c->metrics.http_deadline_s = PICK(10, 30);
    strcpy(c->metrics.http_scrapers, PICK("", "10.0.0.5,::1"));
    c->log.level = PICK(LOG_LEVEL_INFO, LOG_LEVEL_DEBUG);
    c->service.stall_ms = PICK(30000, 500);
    c->realtime.mlockall = PICK(0, 1);
    c->realtime.priority = PICK(0, 40);
    strcpy(c->realtime.cpu_affinity[CONFIG_THREAD_RECEIVE], PICK("", "0"));
    strcpy(c->realtime.cpu_affinity[CONFIG_THREAD_FORM], PICK("", "1-2"));
    strcpy(c->realtime.cpu_affinity[CONFIG_THREAD_SOLVE], PICK("", "2-5,8"));
    strcpy(c->realtime.cpu_affinity[CONFIG_THREAD_PUBLISH], PICK("", "1023"));
    strcpy(c->realtime.cpu_affinity[CONFIG_THREAD_IO], PICK("", "3,7"));
    c->realtime.gpu_numa = PICK(0, 1);
    c->realtime.on_failure = PICK(CONFIG_REALTIME_WARN, CONFIG_REALTIME_ERROR);
    strcpy(c->security.curve_secret_key, PICK("", "/etc/eigstream/server.key_secret"));
    strcpy(c->security.curve_allow, PICK("", "/etc/eigstream/clients"));
    /* The full file's input is sub: a dispatcher key there is refused (test_bad_choice). */
    strcpy(c->security.curve_dispatcher_key, "");
#undef PICK
}

static void expected_defaults(eigstream_config *c)
{
    expected_config(c, EXPECT_DEFAULTS);
}

static void expected_full(eigstream_config *c)
{
    expected_config(c, EXPECT_FULL);
}

/* Compares every field; reports each difference under what. */
static void check_equal(const char *what, const eigstream_config *got, const eigstream_config *want)
{
#define SAME_STRING(f) CHECK(strcmp(got->f, want->f) == 0, "%s: " #f " = \"%s\", want \"%s\"", what, got->f, want->f)
#define SAME_INT(f) CHECK((long long)got->f == (long long)want->f, "%s: " #f " = %lld, want %lld", what, (long long)got->f, (long long)want->f)
#define SAME_REAL(f) CHECK(got->f == want->f, "%s: " #f " = %.17g, want %.17g", what, got->f, want->f)
    SAME_STRING(input.endpoint);
    SAME_INT(input.pattern);
    SAME_INT(input.bind);
    SAME_INT(input.hwm);
    SAME_INT(input.max_message_bytes);
    SAME_INT(input.replay_timing);
    SAME_REAL(input.replay_speed);
    SAME_INT(input.heartbeat_ms);
    SAME_INT(input.heartbeat_liveness);
    SAME_INT(input.copy_threads);
    SAME_INT(input.io_threads);
    SAME_INT(input.reorder_ms);
    SAME_INT(input.fragment_timeout_ms);
    SAME_STRING(output.endpoint);
    SAME_INT(output.pattern);
    SAME_INT(output.bind);
    SAME_INT(output.hwm);
    SAME_INT(output.mode);
    SAME_INT(output.signal_dimension);
    SAME_INT(output.snapshots);
    SAME_INT(solver.backend);
    SAME_INT(solver.precision);
    SAME_INT(solver.n);
    SAME_INT(solver.matrices);
    SAME_INT(solver.gpu_device);
    SAME_INT(solver.cpu_threads);
    SAME_INT(solver.workers);
    SAME_INT(solver.gpu_devices.count);
    for (int i = 0; i < got->solver.gpu_devices.count && i < CONFIG_LIST_MAX; i++)
        SAME_INT(solver.gpu_devices.values[i]);
    SAME_INT(frame.deadline_ms);
    SAME_INT(frame.late_policy);
    SAME_INT(frame.queue_depth);
    SAME_INT(frame.overflow_policy);
    SAME_INT(form.diagonal_loading);
    SAME_REAL(form.diagonal_loading_db);
    SAME_INT(form.forward_backward);
    SAME_INT(form.input);
    SAME_INT(form.iq_format);
    SAME_INT(form.iq_layout);
    SAME_INT(form.pulses);
    SAME_INT(form.range_gates);
    SAME_INT(form.window);
    SAME_REAL(form.sidelobe_db);
    SAME_INT(form.fft_size);
    SAME_INT(form.doppler_first);
    SAME_INT(form.doppler_bins);
    SAME_INT(form.range_segments);
    SAME_INT(form.guard_gates);
    SAME_INT(form.fft_threads);
    SAME_STRING(form.fft_wisdom_file);
    SAME_STRING(metrics.endpoint);
    SAME_INT(metrics.interval_ms);
    SAME_STRING(metrics.http);
    SAME_INT(metrics.http_deadline_s);
    SAME_STRING(metrics.http_scrapers);
    SAME_INT(log.level);
    SAME_INT(service.stall_ms);
    SAME_INT(realtime.mlockall);
    SAME_INT(realtime.priority);
    for (int t = 0; t < CONFIG_THREAD_COUNT_; t++)
        SAME_STRING(realtime.cpu_affinity[t]);
    SAME_INT(realtime.gpu_numa);
    SAME_INT(realtime.on_failure);
    SAME_STRING(security.curve_secret_key);
    SAME_STRING(security.curve_allow);
    SAME_STRING(security.curve_dispatcher_key);
#undef SAME_STRING
#undef SAME_INT
#undef SAME_REAL
}

/* Every setting, by hand: what --help-config and the file must name. */
static const char *const all_settings[] = {
    "input.endpoint", "input.pattern", "input.bind", "input.hwm", "input.max_message_bytes",
    "input.heartbeat_ms", "input.heartbeat_liveness", "input.copy_threads", "input.io_threads",
    "input.reorder_ms", "input.fragment_timeout_ms",
    "output.endpoint", "output.pattern", "output.bind", "output.hwm", "output.mode",
    "output.signal_dimension", "output.snapshots",
    "solver.backend", "solver.precision", "solver.n", "solver.matrices", "solver.gpu_device",
    "solver.cpu_threads",
    "frame.deadline_ms", "frame.late_policy", "frame.queue_depth", "frame.overflow_policy",
    "form.diagonal_loading", "form.diagonal_loading_db", "form.forward_backward",
    "form.input", "form.iq_format", "form.iq_layout", "form.pulses", "form.range_gates", "form.window",
    "form.sidelobe_db", "form.fft_size", "form.doppler_first", "form.doppler_bins", "form.range_segments",
    "form.guard_gates", "form.fft_threads", "form.fft_wisdom_file",
    "metrics.endpoint", "metrics.interval_ms", "metrics.http", "metrics.http_deadline_s",
    "metrics.http_scrapers",
    "log.level",
    "service.stall_ms", "security.curve_secret_key", "security.curve_allow",
    "security.curve_dispatcher_key",
    "realtime.mlockall", "realtime.priority", "realtime.cpu_affinity_receive", "realtime.cpu_affinity_form",
    "realtime.cpu_affinity_solve", "realtime.cpu_affinity_publish", "realtime.cpu_affinity_io", "realtime.gpu_numa",
    "realtime.on_failure",
};
#define SETTING_COUNT (sizeof all_settings / sizeof all_settings[0])

/* Loads text from a temp file named name and expects code with the message
 * "<path><suffix>"; the configuration passed in must stay untouched. */
static void expect_error(const char *name, const char *text, config_error code, const char *suffix)
{
    char path[512];
    snprintf(path, sizeof path, "%s", write_temp(name, text));
    eigstream_config cfg, before;
    memset(&cfg, 0x5a, sizeof cfg);
    before = cfg;
    char err[CONFIG_ERROR_MAX];
    config_error rc = config_load(&cfg, path, err, sizeof err);
    char want[1024];
    snprintf(want, sizeof want, "%s%s", path, suffix);
    CHECK(rc == code, "%s: code %d (%s), want %d (%s); message \"%s\"", name, rc,
          config_strerror(rc), code, config_strerror(code), err);
    CHECK(strcmp(err, want) == 0, "%s: message\n      \"%s\"\n want \"%s\"", name, err, want);
    CHECK(memcmp(&cfg, &before, sizeof cfg) == 0, "%s: failed load changed the configuration", name);
}

/* Loads text and expects success; returns the configuration in *cfg. */
static void expect_ok(const char *name, const char *text, eigstream_config *cfg)
{
    const char *path = write_temp(name, text);
    char err[CONFIG_ERROR_MAX];
    config_error rc = config_load(cfg, path, err, sizeof err);
    CHECK(rc == CONFIG_OK, "%s: code %d, message \"%s\"", name, rc, err);
}

/* ---- tests -------------------------------------------------------------------- */

/* One file that must fail to load: its name, text, the code and the end of
 * the message (after the path). */
typedef struct bad_file {
    const char *name, *text;
    config_error code;
    const char *suffix;
} bad_file;

static void expect_errors(const bad_file *cases, size_t count)
{
    for (size_t i = 0; i < count; i++)
        expect_error(cases[i].name, cases[i].text, cases[i].code, cases[i].suffix);
}

static void test_defaults(void)
{
    eigstream_config got, want;
    memset(&got, 0x5a, sizeof got);
    config_defaults(&got);
    expected_defaults(&want);
    check_equal("config_defaults", &got, &want);
}

static void test_shipped_file_matches_table(const char *shipped)
{
    size_t shipped_bytes = 0, generated_bytes = 0;
    char *text = read_all(shipped, &shipped_bytes);
    char *generated = capture(config_write_default, &generated_bytes);
    CHECK(text != NULL, "cannot read %s", shipped);
    CHECK(generated != NULL, "cannot capture config_write_default");
    if (text == NULL || generated == NULL) {
        free(text);
        free(generated);
        return;
    }
    if (shipped_bytes != generated_bytes || memcmp(text, generated, shipped_bytes) != 0) {
        size_t line = 1, i = 0;
        while (i < shipped_bytes && i < generated_bytes && text[i] == generated[i])
            line += text[i++] == '\n';
        CHECK(0, "%s differs from config_write_default() from line %zu; regenerate it with\n"
                 "      tests/config/test_config --write-default > config/eigstream.cfg",
              shipped, line);
    }
    free(text);
    free(generated);

    eigstream_config loaded, want;
    char err[CONFIG_ERROR_MAX];
    config_error rc = config_load(&loaded, shipped, err, sizeof err);
    CHECK(rc == CONFIG_OK, "shipped file: code %d, message \"%s\"", rc, err);
    expected_defaults(&want);
    if (rc == CONFIG_OK)
        check_equal("shipped file", &loaded, &want);
}

static void test_help_and_file_name_every_setting(const char *shipped)
{
    size_t bytes = 0;
    char *help = capture(config_print_help, &bytes);
    size_t file_bytes = 0;
    char *file = read_all(shipped, &file_bytes);
    CHECK(help != NULL && file != NULL, "cannot capture help or read %s", shipped);
    if (help == NULL || file == NULL) {
        free(help);
        free(file);
        return;
    }
    for (size_t i = 0; i < SETTING_COUNT; ++i) {
        CHECK(strstr(help, all_settings[i]) != NULL, "--help-config does not name %s",
              all_settings[i]);
        /* In the file: "group = {" then "  name = " */
        char group[64], line[96];
        const char *dot = strchr(all_settings[i], '.');
        snprintf(group, sizeof group, "\n%.*s = {\n", (int)(dot - all_settings[i]),
                 all_settings[i]);
        snprintf(line, sizeof line, "\n  %s = ", dot + 1);
        const char *group_at = strstr(file, group);
        CHECK(group_at != NULL && strstr(group_at, line) != NULL, "%s does not set %s",
              shipped, all_settings[i]);
    }
    /* Choices and ranges appear in the help, e.g. */
    CHECK(strstr(help, "one of full|values|signal|noise") != NULL, "help lacks output.mode choices");
    CHECK(strstr(help, "integer 1..4096") != NULL, "help lacks solver.n range");
    CHECK(strstr(help, "one of auto|cpu|lapack|cuda") != NULL, "help lacks solver.backend choices");
    CHECK(strstr(help, "one of float|double") != NULL, "help lacks solver.precision choices");
    free(help);
    free(file);
}

static void test_unknown(void)
{
    static const bad_file cases[] = {
        {"unknown_setting.cfg", "input = {\n  endpoint = \"tcp://127.0.0.1:6000\";\n  colour = 3;\n};\n",
         CONFIG_EUNKNOWN, ":3: input.colour: unknown setting"},
        {"unknown_group.cfg", "# radar\n\nradar = {\n  n = 1;\n};\n",
         CONFIG_EUNKNOWN, ":3: radar: unknown group"},
        {"unknown_top.cfg", "log = { level = \"warn\"; };\nverbose = true;\n",
         CONFIG_EUNKNOWN, ":2: verbose: unknown setting"},
        /* A known name in the wrong group is unknown there. */
        {"wrong_group.cfg", "solver = {\n  hwm = 8;\n};\n",
         CONFIG_EUNKNOWN, ":2: solver.hwm: unknown setting"},
        /* Names are case-sensitive. */
        {"case.cfg", "Solver = { n = 8; };\n", CONFIG_EUNKNOWN, ":1: Solver: unknown group"},
    };
    expect_errors(cases, sizeof cases / sizeof cases[0]);
}

static void test_wrong_type(void)
{
    static const bad_file cases[] = {
        {"type_group.cfg", "\nsolver = 5;\n",
         CONFIG_ETYPE, ":2: solver: expected a group: solver = { ... };"},
        {"type_int.cfg", "solver = {\n  n = \"128\";\n};\n",
         CONFIG_ETYPE, ":2: solver.n: expected an integer"},
        {"type_int_float.cfg", "solver = {\n  n = 128.0;\n};\n",
         CONFIG_ETYPE, ":2: solver.n: expected an integer"},
        {"type_int_array.cfg", "solver = {\n\n  n = [1, 2];\n};\n",
         CONFIG_ETYPE, ":3: solver.n: expected an integer"},
        {"type_bool.cfg", "input = {\n  bind = 1;\n};\n",
         CONFIG_ETYPE, ":2: input.bind: expected true or false"},
        {"type_real.cfg", "form = {\n  diagonal_loading_db = \"-30\";\n};\n",
         CONFIG_ETYPE, ":2: form.diagonal_loading_db: expected a number"},
        {"type_choice.cfg", "output = {\n  mode = 2;\n};\n",
         CONFIG_ETYPE, ":2: output.mode: expected one of full|values|signal|noise"},
        {"type_endpoint.cfg", "metrics = {\n  endpoint = 5552;\n};\n",
         CONFIG_ETYPE, ":2: metrics.endpoint: expected a string"},
        {"type_int64.cfg", "input = {\n  max_message_bytes = 1e6;\n};\n",
         CONFIG_ETYPE, ":2: input.max_message_bytes: expected an integer"},
    };
    expect_errors(cases, sizeof cases / sizeof cases[0]);
}

static void test_long_endpoint(void)
{
    char long_endpoint[CONFIG_STRING_MAX + 64];
    snprintf(long_endpoint, sizeof long_endpoint, "input = {\n  endpoint = \"tcp://%0*d\";\n};\n",
             CONFIG_STRING_MAX, 0);
    expect_error("range_string.cfg", long_endpoint, CONFIG_ERANGE, ":2: input.endpoint: longer than 1023 bytes");
}

static void test_out_of_range(void)
{
    static const bad_file cases[] = {
        {"range_n.cfg", "solver = {\n  n = 4097;\n};\n",
         CONFIG_ERANGE, ":2: solver.n: 4097 is out of range 1..4096"},
        {"range_n0.cfg", "solver = { n = 0; };\n", CONFIG_ERANGE, ":1: solver.n: 0 is out of range 1..4096"},
        {"range_d.cfg", "output = {\n  signal_dimension = 4097;\n};\n",
         CONFIG_ERANGE, ":2: output.signal_dimension: 4097 is out of range 0..4096"},
        {"range_negative.cfg", "output = {\n  hwm = -1;\n};\n",
         CONFIG_ERANGE, ":2: output.hwm: -1 is out of range 0..1000000"},
        {"range_queue.cfg", "frame = {\n  queue_depth = 1025;\n};\n",
         CONFIG_ERANGE, ":2: frame.queue_depth: 1025 is out of range 1..1024"},
        {"range_deadline.cfg", "frame = {\n  deadline_ms = 0;\n};\n",
         CONFIG_ERANGE, ":2: frame.deadline_ms: 0 is out of range 1..3600000"},
        {"range_interval.cfg", "metrics = {\n  interval_ms = 9;\n};\n",
         CONFIG_ERANGE, ":2: metrics.interval_ms: 9 is out of range 10..3600000"},
        {"range_threads.cfg", "solver = {\n  cpu_threads = 1025;\n};\n",
         CONFIG_ERANGE, ":2: solver.cpu_threads: 1025 is out of range 0..1024"},
        {"range_db.cfg", "form = {\n  diagonal_loading_db = 60.5;\n};\n",
         CONFIG_ERANGE, ":2: form.diagonal_loading_db: 60.5 is out of range -200..60"},
        {"range_db_int.cfg", "form = {\n  diagonal_loading_db = -201;\n};\n",
         CONFIG_ERANGE, ":2: form.diagonal_loading_db: -201 is out of range -200..60"},
        {"range_bytes_low.cfg", "input = {\n  max_message_bytes = 1023;\n};\n",
         CONFIG_ERANGE, ":2: input.max_message_bytes: 1023 is out of range 1024..17179869184"},
        {"range_bytes_high.cfg", "input = {\n  max_message_bytes = 17179869185L;\n};\n",
         CONFIG_ERANGE, ":2: input.max_message_bytes: 17179869185 is out of range 1024..17179869184"},
    };
    expect_errors(cases, sizeof cases / sizeof cases[0]);
}

/* libconfig 1.5 reads 4294967297 (no L) as 1 without a word: these must be
 * errors, while the same digits in comments and strings are not. */
static void test_integer_literals(void)
{
    expect_error("wrap_hwm.cfg", "input = {\n  hwm = 4294967297;\n};\n", CONFIG_ERANGE,
                 ":2: input.hwm: 4294967297 is out of range 0..1000000");
    expect_error("wrap_bytes.cfg", "input = {\n  max_message_bytes = 4294967296;\n};\n",
                 CONFIG_ERANGE,
                 ":2: input.max_message_bytes: 4294967296 does not fit in 32 bits: write 4294967296L");
    expect_error("wrap_negative.cfg", "output = {\n  hwm = -2147483649;\n};\n", CONFIG_ERANGE,
                 ":2: output.hwm: -2147483649 is out of range 0..1000000");
    expect_error("wrap_hex.cfg", "solver = {\n  n = 0x100000080;\n};\n", CONFIG_ERANGE,
                 ":2: solver.n: 0x100000080 is out of range 1..4096");
    expect_error("wrap_real.cfg", "form = {\n  diagonal_loading_db = 4294967246;\n};\n",
                 CONFIG_ERANGE, ":2: form.diagonal_loading_db: 4294967246 is out of range -200..60");
    /* Two settings on one line: the one whose literal wraps is named. */
    expect_error("wrap_same_line.cfg", "input = { hwm = 5; max_message_bytes = 99999999999; };\n",
                 CONFIG_ERANGE,
                 ":1: input.max_message_bytes: 99999999999 does not fit in 32 bits: write 99999999999L");
    expect_error("wrap_long.cfg", "input = {\n  max_message_bytes = 99999999999999999999L;\n};\n",
                 CONFIG_ERANGE,
                 ":2: input.max_message_bytes: 99999999999999999999L is out of range 1024..17179869184");

    eigstream_config cfg;
    expect_ok("literal_ok.cfg",
              "# 4294967296 in a comment\n"
              "/* and 99999999999\n   in a block comment */\n"
              "input = {\n"
              "  endpoint = \"tcp://host-4294967296:7000\"; // 4294967296\n"
              "  hwm = 0x10;\n"
              "  max_message_bytes = 4294967296L;\n"
              "};\n"
              "form = { diagonal_loading_db = -2.5e1; };\n"
              "solver = { n = +64; matrices = 0x00000000000000b4; };\n",
              &cfg);
    CHECK(cfg.input.hwm == 16, "hex hwm = %d, want 16", cfg.input.hwm);
    CHECK(cfg.input.max_message_bytes == 4294967296LL, "max_message_bytes = %lld",
          (long long)cfg.input.max_message_bytes);
    CHECK(cfg.form.diagonal_loading_db == -25.0, "diagonal_loading_db = %g", cfg.form.diagonal_loading_db);
    CHECK(strcmp(cfg.input.endpoint, "tcp://host-4294967296:7000") == 0, "endpoint %s", cfg.input.endpoint);
    CHECK(cfg.solver.n == 64 && cfg.solver.matrices == 180, "n %d matrices %d", cfg.solver.n,
          cfg.solver.matrices);
}

static void test_bad_choice(void)
{
    static const bad_file cases[] = {
        /* The message format of config.h, on line 14 of a file named eigstream.cfg. */
        {"eigstream.cfg",
         "# line 1\n#\n#\n#\n#\n#\n#\n#\n#\n#\n"
         "output = {\n  pattern = \"pub\";\n  bind = true;\n  mode = \"everything\";\n};\n",
         CONFIG_ERANGE, ":14: output.mode: expected one of full|values|signal|noise"},
        {"choice_backend.cfg", "solver = {\n  backend = \"gpu\";\n};\n",
         CONFIG_ERANGE, ":2: solver.backend: expected one of auto|cpu|lapack|cuda"},
        {"curve_no_allow.cfg", "security = {\n  curve_secret_key = \"s.key_secret\";\n};\n",
         CONFIG_EINVAL, ":2: security.curve_allow: must name the allowed client keys when "
                        "security.curve_secret_key is set"},
        {"curve_no_secret.cfg", "security = {\n  curve_allow = \"clients\";\n};\n",
         CONFIG_EINVAL, ":2: security.curve_secret_key: must name the daemon's key pair when "
                        "security.curve_allow is set"},
        {"curve_dispatcher_pull.cfg",
         "security = {\n  curve_secret_key = \"s.key_secret\";\n  curve_allow = \"clients\";\n"
         "  curve_dispatcher_key = \"d.key\";\n};\n",
         CONFIG_EINVAL, ":4: security.curve_dispatcher_key: is eigstream-dispatch's public key: it needs "
                        "input.pattern = \"dispatch\""},
        {"curve_dispatcher_plain.cfg",
         "input = {\n  pattern = \"dispatch\";\n  bind = false;\n};\n"
         "security = {\n  curve_dispatcher_key = \"d.key\";\n};\n",
         CONFIG_EINVAL, ":6: security.curve_dispatcher_key: needs security.curve_secret_key: the daemon's key "
                        "pair is its CURVE client key towards the dispatcher"},
        {"curve_dispatch_no_key.cfg",
         "input = {\n  pattern = \"dispatch\";\n  bind = false;\n};\n"
         "security = {\n  curve_secret_key = \"s.key_secret\";\n  curve_allow = \"clients\";\n};\n",
         CONFIG_EINVAL, ":2: security.curve_dispatcher_key: must name eigstream-dispatch's public key (its "
                        "BASE.key) when input.pattern = \"dispatch\" and security.curve_secret_key is set: the "
                        "input connects to the dispatcher as a CURVE client, and a plain-text dispatcher is "
                        "refused"},
        {"cpu_list_range.cfg", "realtime = {\n  cpu_affinity_solve = \"3-1\";\n};\n",
         CONFIG_EINVAL, ":2: realtime.cpu_affinity_solve: expected a CPU list such as \"2\" or \"0-3,8\" "
                        "(CPUs 0..1023), not \"3-1\""},
        {"cpu_list_big.cfg", "realtime = {\n  cpu_affinity_form = \"1024\";\n};\n",
         CONFIG_EINVAL, ":2: realtime.cpu_affinity_form: expected a CPU list such as \"2\" or \"0-3,8\" "
                        "(CPUs 0..1023), not \"1024\""},
        {"cpu_list_comma.cfg", "realtime = {\n  cpu_affinity_form = \"1,\";\n};\n",
         CONFIG_EINVAL, ":2: realtime.cpu_affinity_form: expected a CPU list such as \"2\" or \"0-3,8\" "
                        "(CPUs 0..1023), not \"1,\""},
        {"rt_priority.cfg", "realtime = {\n  priority = 100;\n};\n",
         CONFIG_ERANGE, ":2: realtime.priority: 100 is out of range 0..99"},
        {"choice_case.cfg", "log = {\n  level = \"INFO\";\n};\n",
         CONFIG_ERANGE, ":2: log.level: expected one of error|warn|info|debug"},
        {"choice_overflow.cfg", "frame = {\n  overflow_policy = \"drop\";\n};\n",
         CONFIG_ERANGE, ":2: frame.overflow_policy: expected one of drop_oldest|block"},
        {"choice_input.cfg", "input = {\n  pattern = \"push\";\n};\n",
         CONFIG_ERANGE, ":2: input.pattern: expected one of pull|sub|dispatch"},
    };
    expect_errors(cases, sizeof cases / sizeof cases[0]);
}

static void test_syntax_and_io(void)
{
    expect_error("syntax.cfg", "solver = {\n  n = 128;\n  matrices = = 4;\n};\n", CONFIG_ESYNTAX,
                 ":3: syntax error");
    expect_error("syntax_eof.cfg", "solver = {\n  n = 128;\n", CONFIG_ESYNTAX,
                 ":3: syntax error");
    expect_error("duplicate.cfg", "solver = {\n  n = 64;\n  n = 32;\n};\n", CONFIG_ESYNTAX,
                 ":3: duplicate setting name");
    expect_error("include.cfg", "log = { level = \"warn\"; };\n@include \"other.cfg\"\n",
                 CONFIG_ESYNTAX, ":2: @include is not supported");

    char err[CONFIG_ERROR_MAX], path[600];
    eigstream_config cfg;
    snprintf(path, sizeof path, "%s/does-not-exist.cfg", temp_dir);
    config_error rc = config_load(&cfg, path, err, sizeof err);
    char want[700];
    snprintf(want, sizeof want, "%s: cannot read: No such file or directory", path);
    CHECK(rc == CONFIG_EIO && strcmp(err, want) == 0, "missing file: code %d \"%s\"", rc, err);
    rc = config_load(&cfg, temp_dir, err, sizeof err);
    snprintf(want, sizeof want, "%s: cannot read: Is a directory", temp_dir);
    CHECK(rc == CONFIG_EIO && strcmp(err, want) == 0, "directory: code %d \"%s\"", rc, err);
    /* err may be NULL; a short buffer is truncated, not overrun. */
    rc = config_load(&cfg, path, NULL, 0);
    CHECK(rc == CONFIG_EIO, "missing file without err: code %d", rc);
    char small[8];
    rc = config_load(&cfg, path, small, sizeof small);
    CHECK(rc == CONFIG_EIO && strlen(small) == sizeof small - 1, "short err: \"%s\"", small);
    rc = config_load(&cfg, NULL, err, sizeof err);
    CHECK(rc == CONFIG_EIO, "NULL path: code %d", rc);
}

static void test_cross_checks(void)
{
    expect_error("cross_d.cfg", "output = {\n  mode = \"signal\";\n  signal_dimension = 200;\n};\n",
                 CONFIG_EINVAL, ":3: output.signal_dimension: 200 exceeds solver.n = 128");
    expect_error("cross_n2.cfg", "output = {\n  signal_dimension = 16;\n};\nsolver = {\n  n = 8;\n};\n",
                 CONFIG_EINVAL, ":2: output.signal_dimension: 16 exceeds solver.n = 8");
    expect_error("cross_noise.cfg",
                 "solver = {\n  n = 16;\n};\noutput = {\n  mode = \"noise\";\n  signal_dimension = 16;\n};\n",
                 CONFIG_EINVAL, ":6: output.signal_dimension: 16 = solver.n leaves mode noise no eigenvectors");
    expect_error("cross_scheme.cfg", "input = {\n  endpoint = \"http://127.0.0.1:80\";\n};\n",
                 CONFIG_EINVAL,
                 ":2: input.endpoint: expected tcp://, ipc://, inproc://, pgm:// or epgm:// and an "
                 "address, or file:RECORDING, not \"http://127.0.0.1:80\"");
    expect_error("cross_no_address.cfg", "output = {\n  endpoint = \"tcp://\";\n};\n", CONFIG_EINVAL,
                 ":2: output.endpoint: expected tcp://, ipc://, inproc://, pgm:// or epgm:// and an "
                 "address, not \"tcp://\"");
    expect_error("cross_empty.cfg", "input = {\n  endpoint = \"\";\n};\n", CONFIG_EINVAL,
                 ":2: input.endpoint: must not be empty");
    expect_error("cross_same.cfg", "output = {\n  endpoint = \"tcp://127.0.0.1:5550\";\n};\n",
                 CONFIG_EINVAL, ":2: output.endpoint: same as input.endpoint");
    static const char *const bad_http[] = {"127.0.0.1", "localhost:65536", "http://127.0.0.1:9464/"};
    for (size_t i = 0; i < sizeof bad_http / sizeof bad_http[0]; i++) {
        char text[128], message[256];
        snprintf(text, sizeof text, "metrics = {\n  http = \"%s\";\n};\n", bad_http[i]);
        snprintf(message, sizeof message,
                 ":2: metrics.http: expected HOST:PORT (\"127.0.0.1:9464\", \"0.0.0.0:9464\", "
                 "\"[::1]:9464\"; port 0..65535), not \"%s\"", bad_http[i]);
        expect_error("http_bad.cfg", text, CONFIG_EINVAL, message);
    }
    expect_error("scrapers_bad.cfg", "metrics = {\n  http_scrapers = \"127.0.0.1, prometheus\";\n};\n",
                 CONFIG_EINVAL, ":2: metrics.http_scrapers: \"prometheus\" is not a numeric IPv4 or IPv6 address");
    expect_error("deadline_range.cfg", "metrics = {\n  http_deadline_s = 0;\n};\n", CONFIG_ERANGE,
                 ":2: metrics.http_deadline_s: 0 is out of range 1..3600");
    expect_error("http_type.cfg", "metrics = {\n  http = 9464;\n};\n", CONFIG_ETYPE,
                 ":2: metrics.http: expected a string");
    expect_error("cross_metrics.cfg", "metrics = {\n  endpoint = \"tcp://127.0.0.1:5551\";\n};\n",
                 CONFIG_EINVAL, ":2: metrics.endpoint: same as output.endpoint");
    expect_error("cross_pgm.cfg", "input = {\n  endpoint = \"epgm://eth0;239.192.1.1:5555\";\n};\n",
                 CONFIG_EINVAL, ":2: input.endpoint: pgm:// and epgm:// need input.pattern = \"sub\"");
    expect_error("cross_dispatch_bind.cfg", "input = {\n  pattern = \"dispatch\";\n  bind = true;\n};\n",
                 CONFIG_EINVAL, ":3: input.bind: input.pattern = \"dispatch\" connects to eigstream-dispatch's back "
                 "end: set input.bind = false");
    expect_error("cross_io_threads_bind.cfg", "input = {\n  io_threads = 2;\n};\n", CONFIG_EINVAL,
                 ":2: input.io_threads: more than one input socket connects to a PUSH source or to "
                 "eigstream-dispatch: it needs input.pattern \"pull\" or \"dispatch\" and input.bind = false on a "
                 "ZeroMQ endpoint (or input.io_threads = 1)");
    expect_error("cross_pgm_out.cfg",
                 "output = {\n  pattern = \"push\";\n  endpoint = \"pgm://eth0;239.192.1.1:5555\";\n};\n",
                 CONFIG_EINVAL, ":3: output.endpoint: pgm:// and epgm:// need output.pattern = \"pub\"");
    /* 1000 matrices of order 512 in the configured precision: 1000 * 131328
     * elements of 16 bytes (double, the default) or 8 (float) at the least. */
    expect_error("cross_bytes.cfg", "solver = {\n  n = 512;\n  matrices = 1000;\n};\n", CONFIG_EINVAL,
                 ":3: input.max_message_bytes: 134217728 cannot hold one frame: 1000 matrices of "
                 "order 512 need at least 2101248000 bytes (packed complex double)");
    expect_error("cross_bytes_float.cfg",
                 "solver = {\n  precision = \"float\";\n  n = 512;\n  matrices = 1000;\n};\n",
                 CONFIG_EINVAL,
                 ":4: input.max_message_bytes: 134217728 cannot hold one frame: 1000 matrices of "
                 "order 512 need at least 1050624000 bytes (packed complex float)");
    /* The backend's n limit, at the line of solver.n (or of the backend). */
    expect_error("cross_cuda_n.cfg",
                 "input = { max_message_bytes = 1073741824; };\n"
                 "solver = {\n  backend = \"cuda\";\n  n = 1000;\n  matrices = 4;\n};\n",
                 CONFIG_EINVAL,
                 ":4: solver.n: 1000 is too large: backend cuda takes n up to 512; backends cpu "
                 "and lapack up to 4096");

    eigstream_config cfg;
    expect_ok("cross_ok.cfg",
              "input = { endpoint = \"epgm://eth0;239.192.1.1:5555\"; pattern = \"sub\"; bind = false; };\n"
              "metrics = { endpoint = \"\"; http = \"\"; };\n"
              "solver = { n = 16; };\n"
              "output = { mode = \"noise\"; signal_dimension = 15; };\n",
              &cfg);
    CHECK(cfg.metrics.endpoint[0] == '\0', "metrics.endpoint \"%s\", want \"\"", cfg.metrics.endpoint);
    CHECK(cfg.metrics.http[0] == '\0', "metrics.http \"%s\", want \"\" (off)", cfg.metrics.http);
    CHECK(cfg.output.signal_dimension == 15, "signal_dimension %d", cfg.output.signal_dimension);
    expect_ok("http_ipv6.cfg", "metrics = { http = \"[::1]:0\"; };\n", &cfg);
    CHECK(strcmp(cfg.metrics.http, "[::1]:0") == 0, "metrics.http \"%s\"", cfg.metrics.http);
}

/* Every setting away from its default, in an order and layout unlike the
 * generated file (colons, comments, several settings per line). */
static const char full_file[] =
    "// a hand-written file\n"
    "log: { level = \"debug\"; };\n"
    "service = { stall_ms = 500; };\n"
    "realtime = { mlockall = true; priority = 40; cpu_affinity_receive = \"0\"; cpu_affinity_form = \"1-2\";\n"
    "  cpu_affinity_solve = \"2-5,8\"; cpu_affinity_publish = \"1023\"; cpu_affinity_io = \"3,7\";\n"
    "  gpu_numa = true; on_failure = \"error\"; };\n"
    "security = { curve_allow = \"/etc/eigstream/clients\"; curve_secret_key = \"/etc/eigstream/server.key_secret\"; };\n"
    "metrics = { interval_ms = 250; endpoint = \"ipc:///tmp/eigstream-metrics\"; http = \"0.0.0.0:9000\";\n"
    "  http_deadline_s = 30; http_scrapers = \"10.0.0.5,::1\"; };\n"
    "input = {\n"
    "  endpoint = \"tcp://*:6000\";\n"
    "  pattern = \"sub\";\n"
    "  bind = false;\n"
    "  hwm = 16;\n"
    "  max_message_bytes = 8589934592L;  # 8 GiB\n"
    "  replay_timing = \"original\"; replay_speed = 2.5;\n"
    "  heartbeat_ms = 250; heartbeat_liveness = 5;\n"
    "  copy_threads = 6; reorder_ms = 75; fragment_timeout_ms = 250;\n"
    "};\n"
    "output = {\n"
    "  endpoint = \"inproc://eigenspaces\";\n"
    "  pattern = \"push\"; bind = false; hwm = 0;\n"
    "  mode = \"signal\";\n"
    "  signal_dimension = 3;\n"
    "  snapshots = 1000;\n"
    "};\n"
    "solver = {\n"
    "  backend = \"lapack\"; precision = \"float\";\n"
    "  n = 64; matrices = 360; gpu_device = 1; cpu_threads = 2; workers = 3;\n"
    "};\n"
    "frame = { deadline_ms = 250; late_policy = \"drop\"; queue_depth = 8; overflow_policy = \"block\"; };\n"
    "form = { diagonal_loading = true; diagonal_loading_db = -40; forward_backward = true;\n"
    "  input = \"iq\"; iq_format = \"cf32_le\"; iq_layout = \"pgc\"; pulses = 64; range_gates = 512;\n"
    "  window = \"taylor\"; sidelobe_db = 35; fft_size = 128; doppler_first = 100; doppler_bins = 90;\n"
    "  range_segments = 4; guard_gates = 2; fft_threads = 2;\n"
    "  fft_wisdom_file = \"/var/lib/eigstream/fftw.wisdom\"; };\n";

static void test_full_file(void)
{
    eigstream_config got, want;
    expect_ok("full.cfg", full_file, &got);
    expected_full(&want);
    check_equal("full.cfg", &got, &want);

    /* A partial file keeps the defaults of what it leaves out. */
    expect_ok("partial.cfg", "solver = { n = 32; };\n", &got);
    expected_defaults(&want);
    want.solver.n = 32;
    check_equal("partial.cfg", &got, &want);

    /* An empty file is the defaults. */
    expect_ok("empty.cfg", "", &got);
    expected_defaults(&want);
    check_equal("empty.cfg", &got, &want);
}

/* config_write_settings of a non-default configuration loads back to it. */
static void expect_invalid(const char *what, const eigstream_config *cfg, config_error code, const char *want);

/* solver.gpu_devices (a list) and solver.workers: loading, the worker
 * count and devices they give, each error with its line, the rules between
 * them, writing and reading back. */
static void test_worker_lists(void)
{
    eigstream_config cfg;
    expect_ok("devices_shared.cfg", "solver = {\n  gpu_devices = [0, 0];\n};\n", &cfg);
    CHECK(cfg.solver.gpu_devices.count == 2 && cfg.solver.gpu_devices.values[0] == 0 &&
              cfg.solver.gpu_devices.values[1] == 0,
          "[0, 0]: count %d", cfg.solver.gpu_devices.count);
    CHECK(config_solver_worker_count(&cfg) == 2 && config_solver_worker_device(&cfg, 1) == 0,
          "[0, 0]: %d workers", config_solver_worker_count(&cfg));
    expect_ok("devices_three.cfg", "solver = { backend = \"cuda\"; gpu_devices = (1, 3, 2); workers = 3; };\n", &cfg);
    CHECK(config_solver_worker_count(&cfg) == 3 && config_solver_worker_device(&cfg, 0) == 1 &&
              config_solver_worker_device(&cfg, 1) == 3 && config_solver_worker_device(&cfg, 2) == 2,
          "(1, 3, 2): %d workers", config_solver_worker_count(&cfg));
    expect_ok("workers_cpu.cfg", "solver = { backend = \"cpu\"; gpu_devices = []; workers = 4; gpu_device = 2; };\n",
              &cfg);
    CHECK(config_solver_worker_count(&cfg) == 4 && config_solver_worker_device(&cfg, 3) == 2,
          "workers 4: %d workers, device %d", config_solver_worker_count(&cfg), config_solver_worker_device(&cfg, 3));
    expect_ok("workers_default.cfg", "", &cfg);
    CHECK(config_solver_worker_count(&cfg) == 1 && config_solver_worker_device(&cfg, 0) == 0,
          "defaults: one worker on device 0");

    static const bad_file cases[] = {
        {"devices_range.cfg", "solver = {\n  gpu_devices = [0,\n    64];\n};\n", CONFIG_ERANGE,
         ":3: solver.gpu_devices: entry 1: 64 is out of range 0..63"},
        {"devices_negative.cfg", "solver = {\n  gpu_devices = [-1];\n};\n", CONFIG_ERANGE,
         ":2: solver.gpu_devices: entry 0: -1 is out of range 0..63"},
        {"devices_scalar.cfg", "solver = {\n  gpu_devices = 0;\n};\n", CONFIG_ETYPE,
         ":2: solver.gpu_devices: expected a list of integers: [0, 1]"},
        {"devices_string.cfg", "solver = {\n  gpu_devices = (0, \"1\");\n};\n", CONFIG_ETYPE,
         ":2: solver.gpu_devices: entry 1: expected an integer"},
        {"devices_many.cfg", "solver = {\n  gpu_devices = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];\n};\n",
         CONFIG_ERANGE, ":2: solver.gpu_devices: 17 entries: at most 16"},
        {"devices_wrap.cfg", "solver = {\n  gpu_devices = [0, 4294967296];\n};\n", CONFIG_ERANGE,
         ":2: solver.gpu_devices: 4294967296 is out of range 0..63"},
        {"workers_range.cfg", "solver = {\n  workers = 0;\n};\n", CONFIG_ERANGE,
         ":2: solver.workers: 0 is out of range 1..16"},
        {"devices_cpu.cfg", "solver = {\n  backend = \"cpu\";\n  gpu_devices = [0, 1];\n};\n", CONFIG_EINVAL,
         ":3: solver.gpu_devices: needs backend cuda or auto, not cpu (host backends take solver.workers)"},
        {"devices_both.cfg", "solver = {\n  gpu_device = 1;\n  gpu_devices = [0, 1];\n};\n", CONFIG_EINVAL,
         ":3: solver.gpu_devices: set either solver.gpu_device (1) or solver.gpu_devices, not both"},
        {"workers_mismatch.cfg", "solver = {\n  workers = 3;\n  gpu_devices = [0, 1];\n};\n", CONFIG_EINVAL,
         ":2: solver.workers: 3 does not match the 2 entries of solver.gpu_devices (one worker per entry: "
         "leave workers at 1)"},
    };
    expect_errors(cases, sizeof cases / sizeof cases[0]);

    /* Programmatic: the same rows. */
    config_defaults(&cfg);
    cfg.solver.gpu_devices.count = CONFIG_LIST_MAX + 1;
    expect_invalid("17 devices", &cfg, CONFIG_ERANGE, "solver.gpu_devices: 17 entries: at most 16");
    cfg.solver.gpu_devices = (config_int_list){.count = 2, .values = {0, 64}};
    expect_invalid("device 64", &cfg, CONFIG_ERANGE, "solver.gpu_devices: entry 1: 64 is out of range 0..63");

    /* Written and read back. */
    eigstream_config want, got;
    config_defaults(&want);
    want.solver.gpu_devices = (config_int_list){.count = 3, .values = {2, 0, 5}};
    char *text = NULL;
    size_t bytes = 0;
    FILE *f = open_memstream(&text, &bytes);
    if (f == NULL)
        return;
    config_write_settings(f, &want);
    fclose(f);
    CHECK(strstr(text, "gpu_devices = [2, 0, 5];") != NULL, "written as a list:\n%s", text);
    expect_ok("devices_round_trip.cfg", text, &got);
    check_equal("gpu_devices round trip", &got, &want);
    free(text);
}

/* input.endpoint as a list (one entry per input socket): each entry checked
 * alone, the count against input.io_threads, every entry against the other
 * endpoints; a valid list gives socket k its k-th entry, a single endpoint
 * gives it to every socket. */
static void test_endpoint_lists(void)
{
    static const bad_file bad[] = {
        {"list_count.cfg",
         "input = {\n  endpoint = \"tcp://127.0.0.1:6001,tcp://127.0.0.1:6002\";\n  bind = false;\n"
         "  io_threads = 3;\n};\n",
         CONFIG_EINVAL, ":2: input.endpoint: 2 endpoints listed for 3 input sockets: list one, or one per socket "
                        "(input.io_threads)"},
        {"list_entry.cfg",
         "input = {\n  endpoint = \"tcp://127.0.0.1:6001,file:trial\";\n  bind = false;\n  io_threads = 2;\n};\n",
         CONFIG_EINVAL, ":2: input.endpoint: entry 2 of the list: expected tcp://, ipc://, inproc://, pgm:// or "
                        "epgm:// and an address, not \"file:trial\""},
        {"list_empty_entry.cfg",
         "input = {\n  endpoint = \"tcp://127.0.0.1:6001,\";\n  bind = false;\n  io_threads = 2;\n};\n",
         CONFIG_EINVAL, ":2: input.endpoint: entry 2 of the list: expected tcp://, ipc://, inproc://, pgm:// or "
                        "epgm:// and an address, not \"\""},
        {"list_bind.cfg",
         "input = {\n  endpoint = \"tcp://127.0.0.1:6001,tcp://127.0.0.1:6002\";\n  io_threads = 2;\n};\n",
         CONFIG_EINVAL, ":3: input.io_threads: more than one input socket connects to a PUSH source or to "
                        "eigstream-dispatch: it needs input.pattern \"pull\" or \"dispatch\" and input.bind = false "
                        "on a ZeroMQ endpoint (or input.io_threads = 1)"},
        {"list_sub.cfg",
         "input = {\n  pattern = \"sub\";\n  bind = false;\n  io_threads = 2;\n};\n",
         CONFIG_EINVAL, ":4: input.io_threads: more than one input socket connects to a PUSH source or to "
                        "eigstream-dispatch: it needs input.pattern \"pull\" or \"dispatch\" and input.bind = false "
                        "on a ZeroMQ endpoint (or input.io_threads = 1)"},
        {"list_same_output.cfg",
         "input = {\n  endpoint = \"tcp://127.0.0.1:6001,tcp://127.0.0.1:5551\";\n  bind = false;\n"
         "  io_threads = 2;\n};\n",
         CONFIG_EINVAL, ":2: output.endpoint: same as input.endpoint"},
    };
    expect_errors(bad, sizeof bad / sizeof bad[0]);

    eigstream_config cfg;
    char got[CONFIG_STRING_MAX];
    expect_ok("list_ok.cfg",
              "input = {\n  endpoint = \"ipc:///tmp/a-0,tcp://127.0.0.1:6002,ipc:///tmp/a-2\";\n  bind = false;\n"
              "  io_threads = 3;\n};\n",
              &cfg);
    static const char *const want[] = {"ipc:///tmp/a-0", "tcp://127.0.0.1:6002", "ipc:///tmp/a-2"};
    for (int k = 0; k < 3; k++) {
        config_input_endpoint(&cfg, k, got, sizeof got);
        CHECK(strcmp(got, want[k]) == 0, "list: socket %d gets \"%s\", want \"%s\"", k, got, want[k]);
    }
    /* eight long ipc paths (the most connections, each near the 107-byte
     * limit of a socket path): 8 x 99 bytes fit */
    char eight[CONFIG_STRING_MAX + 128], path[8][112];
    int len = snprintf(eight, sizeof eight, "input = {\n  endpoint = \"");
    for (int k = 0; k < 8; k++) {
        snprintf(path[k], sizeof path[k], "ipc:///var/run/eigstream/receiver-site-north/array-%d/%045d", k, 0);
        len += snprintf(eight + len, sizeof eight - (size_t)len, "%s%s", k ? "," : "", path[k]);
    }
    snprintf(eight + len, sizeof eight - (size_t)len, "\";\n  bind = false;\n  io_threads = 8;\n};\n");
    expect_ok("list_eight.cfg", eight, &cfg);
    for (int k = 0; k < 8; k++) {
        config_input_endpoint(&cfg, k, got, sizeof got);
        CHECK(strcmp(got, path[k]) == 0, "eight: socket %d gets \"%s\", want \"%s\"", k, got, path[k]);
    }
    expect_ok("list_one.cfg", "input = {\n  endpoint = \"tcp://127.0.0.1:6001\";\n  bind = false;\n"
                              "  io_threads = 3;\n};\n", &cfg);
    for (int k = 0; k < 3; k++) {
        config_input_endpoint(&cfg, k, got, sizeof got);
        CHECK(strcmp(got, "tcp://127.0.0.1:6001") == 0, "one endpoint: socket %d gets \"%s\"", k, got);
    }
    /* behind eigstream-dispatch: three DEALERs to its one back end */
    expect_ok("list_dispatch.cfg", "input = {\n  endpoint = \"tcp://127.0.0.1:5560\";\n  pattern = \"dispatch\";\n"
                                   "  bind = false;\n  io_threads = 3;\n};\n", &cfg);
    CHECK(cfg.input.io_threads == 3 && cfg.input.pattern == CONFIG_INPUT_DISPATCH, "dispatch: %d sockets",
          cfg.input.io_threads);
}

static void test_write_round_trip(void)
{
    eigstream_config want, got;
    expected_full(&want);
    want.form.diagonal_loading_db = -12.345678901234567;
    strcpy(want.output.endpoint, "ipc:///tmp/a \"quoted\" \\ path");
    char *text = NULL;
    size_t bytes = 0;
    FILE *f = open_memstream(&text, &bytes);
    CHECK(f != NULL, "open_memstream");
    if (f == NULL)
        return;
    config_write_settings(f, &want);
    fclose(f);
    expect_ok("round_trip.cfg", text, &got);
    check_equal("round trip", &got, &want);
    free(text);
}

/* The names of solver.backend, solver.precision and output.mode are their
 * owners' (eig.h, protocol.h); the config-only enums keep their own. */
static void test_names(void)
{
    static const char *const backends[] = {"auto", "cpu", "lapack", "cuda"};
    static const eig_backend backend_values[] = {EIG_BACKEND_AUTO, EIG_BACKEND_CPU,
                                                 EIG_BACKEND_LAPACK, EIG_BACKEND_CUDA};
    for (size_t i = 0; i < 4; ++i) {
        eig_backend parsed = EIG_BACKEND_AUTO;
        CHECK(strcmp(eig_backend_name(backend_values[i]), backends[i]) == 0, "backend %zu", i);
        CHECK(eig_backend_parse(backends[i], &parsed) == EIG_OK && parsed == backend_values[i],
              "backend %s does not round-trip", backends[i]);
    }
    static const char *const precisions[] = {"float", "double"};
    static const eig_precision precision_values[] = {EIG_COMPLEX_FLOAT, EIG_COMPLEX_DOUBLE};
    static const char *const modes[] = {"full", "values", "signal", "noise"};
    static const protocol_mode mode_values[] = {PROTOCOL_MODE_FULL, PROTOCOL_MODE_VALUES,
                                                       PROTOCOL_MODE_SIGNAL, PROTOCOL_MODE_NOISE};
    for (size_t i = 0; i < 2; ++i) {
        eig_precision parsed = EIG_COMPLEX_FLOAT;
        CHECK(strcmp(eig_precision_name(precision_values[i]), precisions[i]) == 0 &&
                  eig_precision_parse(precisions[i], &parsed) == EIG_OK &&
                  parsed == precision_values[i],
              "precision %s does not round-trip", precisions[i]);
    }
    for (size_t i = 0; i < 4; ++i) {
        protocol_mode parsed = PROTOCOL_MODE_NONE;
        CHECK(strcmp(protocol_mode_name((uint8_t)mode_values[i]), modes[i]) == 0 &&
                  config_output_mode_parse(modes[i], &parsed) == 0 && parsed == mode_values[i],
              "mode %s does not round-trip", modes[i]);
    }
    protocol_mode untouched = PROTOCOL_MODE_FULL;
    CHECK(config_output_mode_parse("none", &untouched) == -1 && untouched == PROTOCOL_MODE_FULL,
          "none is not an output mode");
    CHECK(strcmp(log_level_name(LOG_LEVEL_WARN), "warn") == 0, "log level name");
    CHECK(strcmp(config_input_pattern_name(CONFIG_INPUT_SUB), "sub") == 0, "input pattern name");
    CHECK(strcmp(config_output_pattern_name(CONFIG_OUTPUT_PUSH), "push") == 0, "output pattern name");
    CHECK(strcmp(config_late_policy_name(CONFIG_LATE_DROP), "drop") == 0, "late policy name");
    CHECK(strcmp(config_overflow_policy_name(CONFIG_OVERFLOW_DROP_OLDEST), "drop_oldest") == 0,
          "overflow policy name");
    CHECK(strcmp(log_level_name((log_level)7), "?") == 0, "bad log level name");
    CHECK(strcmp(config_strerror(CONFIG_ERANGE), "setting out of range") == 0, "strerror");
}

/* Every spelling of the shared choices loads to the owner's value. */
static void test_choice_spellings(void)
{
    static const struct {
        const char *text;
        eig_backend backend;
        eig_precision precision;
        protocol_mode mode;
    } files[] = {
        {"solver = { backend = \"auto\"; precision = \"double\"; };\noutput = { mode = \"full\"; };\n",
         EIG_BACKEND_AUTO, EIG_COMPLEX_DOUBLE, PROTOCOL_MODE_FULL},
        {"solver = { backend = \"cpu\"; precision = \"float\"; };\noutput = { mode = \"values\"; };\n",
         EIG_BACKEND_CPU, EIG_COMPLEX_FLOAT, PROTOCOL_MODE_VALUES},
        {"solver = { backend = \"lapack\"; };\noutput = { mode = \"signal\"; };\n",
         EIG_BACKEND_LAPACK, EIG_COMPLEX_DOUBLE, PROTOCOL_MODE_SIGNAL},
        {"solver = { backend = \"cuda\"; };\noutput = { mode = \"noise\"; };\n",
         EIG_BACKEND_CUDA, EIG_COMPLEX_DOUBLE, PROTOCOL_MODE_NOISE},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        eigstream_config cfg;
        char name[32];
        snprintf(name, sizeof name, "spelling%zu.cfg", i);
        expect_ok(name, files[i].text, &cfg);
        CHECK(cfg.solver.backend == files[i].backend && cfg.solver.precision == files[i].precision &&
                  cfg.output.mode == files[i].mode,
              "%s: backend %d precision %d mode %d", name, cfg.solver.backend, cfg.solver.precision,
              cfg.output.mode);
    }
}

/* config_validate on cfg: expects code and the message "want" exactly. */
static void expect_invalid(const char *what, const eigstream_config *cfg, config_error code,
                           const char *want)
{
    char err[CONFIG_ERROR_MAX];
    config_error rc = config_validate(cfg, err, sizeof err);
    CHECK(rc == code, "%s: code %d (%s), want %d; message \"%s\"", what, rc, config_strerror(rc),
          code, err);
    CHECK(strcmp(err, want) == 0, "%s: message\n      \"%s\"\n want \"%s\"", what, err, want);
}

/* form.input = iq: the forming's rules, each with the settings it names.
 * Oracle: the arithmetic of form_iq.h done by hand for each case. */
static void test_validate_iq(void)
{
    eigstream_config cfg;
    config_defaults(&cfg);
    cfg.form.input = CONFIG_FORM_INPUT_IQ;
    /* 180 pulses, F = 180, 180 bins x 1 segment = 180 matrices, K = 256 >= 128. */
    CHECK(config_validate(&cfg, NULL, 0) == CONFIG_OK, "iq defaults valid");
    CHECK(config_form_fft_size(&cfg) == 180 && config_form_doppler_bins(&cfg) == 180 &&
              config_form_snapshots(&cfg) == 256, "iq defaults: F %u bins %u K %u", config_form_fft_size(&cfg),
          config_form_doppler_bins(&cfg), config_form_snapshots(&cfg));
    cfg.form.range_segments = 2;
    expect_invalid("bins x segments", &cfg, CONFIG_EINVAL,
                   "form.doppler_bins: 180 bins x form.range_segments = 2 make 360 matrices per frame, but "
                   "solver.matrices = 180");
    cfg.form.doppler_bins = 90; /* 90 x 2 = 180; segments of 128 gates */
    CHECK(config_validate(&cfg, NULL, 0) == CONFIG_OK, "90 bins x 2 segments");
    cfg.form.guard_gates = 3; /* K = 128 - 7 = 121 < 128 */
    CHECK(config_form_snapshots(&cfg) == 121, "K with guards = %u", config_form_snapshots(&cfg));
    expect_invalid("K < n", &cfg, CONFIG_EINVAL,
                   "form.range_segments: 121 snapshots per matrix (form.range_gates / form.range_segments less "
                   "guards) are fewer than solver.n = 128: every matrix would be singular; use fewer segments "
                   "or guards, or set form.diagonal_loading");
    cfg.form.diagonal_loading = 1;
    CHECK(config_validate(&cfg, NULL, 0) == CONFIG_OK, "K < n with diagonal loading");
    cfg.form.guard_gates = 64; /* 129 excluded of 128 */
    expect_invalid("no training gate", &cfg, CONFIG_EINVAL,
                   "form.guard_gates: 64 guard gates on either side of the centre gate leave no training "
                   "gate in a segment of 128 gates");
    config_defaults(&cfg);
    cfg.form.input = CONFIG_FORM_INPUT_IQ;
    cfg.form.range_gates = 250;
    cfg.form.range_segments = 3;
    cfg.form.doppler_bins = 60;
    expect_invalid("gates % segments", &cfg, CONFIG_EINVAL,
                   "form.range_segments: 3 does not divide form.range_gates = 250");
    config_defaults(&cfg);
    cfg.form.input = CONFIG_FORM_INPUT_IQ;
    cfg.form.fft_size = 128;
    expect_invalid("fft < pulses", &cfg, CONFIG_EINVAL,
                   "form.fft_size: 128 is less than form.pulses = 180 (0 = form.pulses)");
    cfg.form.fft_size = 256;
    expect_invalid("bins of F", &cfg, CONFIG_EINVAL,
                   "form.doppler_bins: 256 bins x form.range_segments = 1 make 256 matrices per frame, but "
                   "solver.matrices = 180");
    cfg.form.doppler_bins = 180;
    cfg.form.doppler_first = 250; /* wraps past F: allowed */
    CHECK(config_validate(&cfg, NULL, 0) == CONFIG_OK, "wrapping bins");
    cfg.form.doppler_first = 256;
    expect_invalid("first bin", &cfg, CONFIG_EINVAL,
                   "form.doppler_first: 256 is not a bin of the 256-point Doppler FFT (0..255)");
    config_defaults(&cfg);
    cfg.form.input = CONFIG_FORM_INPUT_IQ;
    cfg.input.max_message_bytes = 1024 * 1024;
    expect_invalid("cube size", &cfg, CONFIG_EINVAL,
                   "input.max_message_bytes: 1048576 cannot hold one IQ cube: 128 channels x 180 pulses x 256 "
                   "gates of ci16_le need 23592960 bytes");
    /* Covariance input ignores the forming settings. */
    cfg.form.input = CONFIG_FORM_INPUT_COVARIANCE;
    cfg.input.max_message_bytes = 128 * 1024 * 1024;
    cfg.form.range_segments = 7;
    CHECK(config_validate(&cfg, NULL, 0) == CONFIG_OK, "covariance input ignores form.range_segments");
    config_defaults(&cfg);
    cfg.form.iq_format = 2; /* the gap between cf32_le (1) and ci16_le (3) */
    expect_invalid("iq_format gap", &cfg, CONFIG_ERANGE, "form.iq_format: 2 is not one of cf32_le|ci16_le");
    config_defaults(&cfg);
    strcpy(cfg.form.fft_wisdom_file, "a\nb");
    expect_invalid("wisdom newline", &cfg, CONFIG_EINVAL, "form.fft_wisdom_file: control character at byte 1");
    expect_error("iq_format_bad.cfg", "form = {\n  iq_format = \"ci8\";\n};\n", CONFIG_ERANGE,
                 ":2: form.iq_format: expected one of cf32_le|ci16_le");
    expect_error("iq_rule.cfg", "solver = { matrices = 90; };\nform = {\n  input = \"iq\";\n};\n", CONFIG_EINVAL,
                 ":1: form.doppler_bins: 180 bins x form.range_segments = 1 make 180 matrices per frame, "
                 "but solver.matrices = 90");
}

/* Programmatic configurations (no file) meet every rule of a file: each
 * setting against the table, and each rule between settings. */
static void test_validate_programmatic(void)
{
    eigstream_config cfg;
    char err[CONFIG_ERROR_MAX] = "x";
    config_defaults(&cfg);
    CHECK(config_validate(&cfg, err, sizeof err) == CONFIG_OK && err[0] == '\0',
          "defaults: \"%s\"", err);
    CHECK(config_validate(&cfg, NULL, 0) == CONFIG_OK, "defaults without err");

    /* One setting against the table. */
    cfg.metrics.interval_ms = 5;
    expect_invalid("interval", &cfg, CONFIG_ERANGE, "metrics.interval_ms: 5 is out of range 10..3600000");
    config_defaults(&cfg);
    cfg.solver.n = 0;
    expect_invalid("n 0", &cfg, CONFIG_ERANGE, "solver.n: 0 is out of range 1..4096");
    config_defaults(&cfg);
    cfg.input.hwm = -1;
    expect_invalid("hwm", &cfg, CONFIG_ERANGE, "input.hwm: -1 is out of range 0..1000000");
    config_defaults(&cfg);
    cfg.form.forward_backward = 2;
    expect_invalid("bool", &cfg, CONFIG_ERANGE,
                   "form.forward_backward: 2 is neither true (1) nor false (0)");
    config_defaults(&cfg);
    cfg.output.mode = PROTOCOL_MODE_NONE;
    expect_invalid("mode none", &cfg, CONFIG_ERANGE,
                   "output.mode: 0 is not one of full|values|signal|noise");
    config_defaults(&cfg);
    cfg.solver.precision = (eig_precision)0;
    expect_invalid("precision", &cfg, CONFIG_ERANGE, "solver.precision: 0 is not one of float|double");
    config_defaults(&cfg);
    cfg.form.diagonal_loading_db = NAN;
    expect_invalid("db nan", &cfg, CONFIG_ERANGE,
                   "form.diagonal_loading_db: nan is out of range -200..60");
    config_defaults(&cfg);
    cfg.output.endpoint[0] = '\0';
    expect_invalid("empty output", &cfg, CONFIG_EINVAL, "output.endpoint: must not be empty");
    config_defaults(&cfg);
    memset(cfg.input.endpoint, 'a', sizeof cfg.input.endpoint);
    expect_invalid("unterminated", &cfg, CONFIG_ERANGE, "input.endpoint: longer than 1023 bytes");
    config_defaults(&cfg);
    strcpy(cfg.metrics.endpoint, "udp://x");
    expect_invalid("scheme", &cfg, CONFIG_EINVAL,
                   "metrics.endpoint: expected tcp://, ipc://, inproc://, pgm:// or epgm:// and an "
                   "address, not \"udp://x\"");
    config_defaults(&cfg);
    strcpy(cfg.metrics.http, "[::1:80");
    expect_invalid("http bracket", &cfg, CONFIG_EINVAL,
                   "metrics.http: expected HOST:PORT (\"127.0.0.1:9464\", \"0.0.0.0:9464\", "
                   "\"[::1]:9464\"; port 0..65535), not \"[::1:80\"");
}

/* Each rule between settings, for a configuration built in code. */
static void test_validate_rules(void)
{
    eigstream_config cfg;
    config_defaults(&cfg);
    cfg.solver.n = 8;
    cfg.output.signal_dimension = 9;
    expect_invalid("d > n", &cfg, CONFIG_EINVAL, "output.signal_dimension: 9 exceeds solver.n = 8");
    cfg.output.signal_dimension = 8;
    cfg.output.mode = PROTOCOL_MODE_NOISE;
    expect_invalid("noise d = n", &cfg, CONFIG_EINVAL,
                   "output.signal_dimension: 8 = solver.n leaves mode noise no eigenvectors");
    config_defaults(&cfg);
    strcpy(cfg.output.endpoint, cfg.input.endpoint);
    expect_invalid("same in/out", &cfg, CONFIG_EINVAL, "output.endpoint: same as input.endpoint");
    config_defaults(&cfg);
    strcpy(cfg.metrics.endpoint, cfg.input.endpoint);
    expect_invalid("same metrics/in", &cfg, CONFIG_EINVAL, "metrics.endpoint: same as input.endpoint");
    config_defaults(&cfg);
    strcpy(cfg.metrics.endpoint, cfg.output.endpoint);
    expect_invalid("same metrics/out", &cfg, CONFIG_EINVAL, "metrics.endpoint: same as output.endpoint");
    config_defaults(&cfg);
    strcpy(cfg.input.endpoint, "pgm://eth0;239.192.1.1:5555");
    expect_invalid("pgm pull", &cfg, CONFIG_EINVAL,
                   "input.endpoint: pgm:// and epgm:// need input.pattern = \"sub\"");
    config_defaults(&cfg);
    strcpy(cfg.output.endpoint, "epgm://eth0;239.192.1.1:5555");
    cfg.output.pattern = CONFIG_OUTPUT_PUSH;
    expect_invalid("epgm push", &cfg, CONFIG_EINVAL,
                   "output.endpoint: pgm:// and epgm:// need output.pattern = \"pub\"");
    config_defaults(&cfg);
    cfg.input.max_message_bytes = 1024;
    expect_invalid("bytes", &cfg, CONFIG_EINVAL,
                   "input.max_message_bytes: 1024 cannot hold one frame: 180 matrices of order 128 "
                   "need at least 23777280 bytes (packed complex double)");
}

/* One n limit per backend: the table takes what some backend takes, the
 * validator what the chosen one does (auto picks cpu above the GPU's). */
static void test_validate_backend_n(void)
{
    eigstream_config cfg;
    config_defaults(&cfg);
    cfg.solver.matrices = 1;
    cfg.input.max_message_bytes = 1024 * 1024 * 1024; /* one matrix of order 4096 */
    cfg.solver.backend = EIG_BACKEND_CUDA;
    cfg.solver.n = 512;
    expect_invalid("cuda 512", &cfg, CONFIG_OK, "");
    cfg.solver.n = 513;
    expect_invalid("cuda 513", &cfg, CONFIG_EINVAL,
                   "solver.n: 513 is too large: backend cuda takes n up to 512; backends cpu and "
                   "lapack up to 4096");
    cfg.solver.backend = EIG_BACKEND_CPU;
    cfg.solver.n = 4096;
    expect_invalid("cpu 4096", &cfg, CONFIG_OK, "");
    cfg.solver.backend = EIG_BACKEND_LAPACK;
    expect_invalid("lapack 4096", &cfg, CONFIG_OK, "");
    cfg.solver.backend = EIG_BACKEND_AUTO;
    cfg.solver.n = 1000;
    expect_invalid("auto 1000", &cfg, CONFIG_OK, "");
    cfg.output.signal_dimension = 1000;
    expect_invalid("d 1000", &cfg, CONFIG_OK, "");
    cfg.solver.n = 4097;
    expect_invalid("auto 4097", &cfg, CONFIG_ERANGE, "solver.n: 4097 is out of range 1..4096");
}

static void remove_temp_dir(void)
{
    char path[512];
    for (size_t i = 0; i < temp_file_count; ++i) {
        snprintf(path, sizeof path, "%s/%.63s", temp_dir, temp_files[i]);
        unlink(path);
    }
    if (rmdir(temp_dir) != 0)
        printf("note: could not remove %s\n", temp_dir);
}

/* The live settings (CONFIG_FLAG_LIVE), what SIGHUP applies: exactly the
 * ones pipeline_apply_live (pipeline/pipeline_service.c) and
 * service_notify_apply (app/service_notify.c) implement. A row marked live
 * without code there would be "applied" and change nothing: this list is
 * the reminder. config_diff and config_copy_live against it. */
static void test_live_settings(void)
{
    char live[512];
    config_live_names(live, sizeof live);
    const char *want = "frame.deadline_ms, frame.late_policy, frame.overflow_policy, metrics.interval_ms, "
                       "log.level, service.stall_ms";
    CHECK(strcmp(live, want) == 0, "live settings \"%s\", want \"%s\"", live, want);

    eigstream_config a, b;
    config_defaults(&a);
    b = a;
    b.frame.deadline_ms = 7;
    b.solver.n = 64;
    strcpy(b.security.curve_allow, "x");
    config_change changes[8];
    size_t count = config_diff(&a, &b, changes, 8);
    CHECK(count == 3, "%zu changes, want 3", count);
    if (count == 3) {
        /* Table order: solver before frame before security. */
        CHECK(strcmp(changes[0].group, "solver") == 0 && strcmp(changes[0].name, "n") == 0 && !changes[0].live,
              "change 0: %s.%s live %d", changes[0].group, changes[0].name, changes[0].live);
        CHECK(strcmp(changes[1].name, "deadline_ms") == 0 && changes[1].live, "change 1: %s", changes[1].name);
        CHECK(strcmp(changes[2].name, "curve_allow") == 0 && !changes[2].live, "change 2: %s", changes[2].name);
    }
    eigstream_config c = a;
    config_copy_live(&c, &b);
    CHECK(c.frame.deadline_ms == 7 && c.solver.n == a.solver.n && c.security.curve_allow[0] == '\0',
          "config_copy_live copied deadline %d, n %d, curve_allow \"%s\"", c.frame.deadline_ms, c.solver.n,
          c.security.curve_allow);

    /* Lists (solver.gpu_devices) compare by their entries: what lies past
     * count is not part of the value; a changed entry is a restart-only
     * change, as are the IQ forming settings. */
    b = a;
    b.solver.gpu_devices.values[CONFIG_LIST_MAX - 1] = a.solver.gpu_devices.values[CONFIG_LIST_MAX - 1] + 1;
    count = config_diff(&a, &b, changes, 8);
    CHECK(count == 0, "%zu changes past a list's count, want 0", count);
    a.solver.gpu_devices.count = b.solver.gpu_devices.count = 2;
    a.solver.gpu_devices.values[0] = b.solver.gpu_devices.values[0] = 0;
    a.solver.gpu_devices.values[1] = 0;
    b.solver.gpu_devices.values[1] = 1;
    b.form.pulses = a.form.pulses + 1;
    count = config_diff(&a, &b, changes, 8);
    CHECK(count == 2, "%zu changes of gpu_devices [0, 0] -> [0, 1] and form.pulses, want 2", count);
    if (count == 2) {
        CHECK(strcmp(changes[0].name, "gpu_devices") == 0 && !changes[0].live, "change 0: %s live %d",
              changes[0].name, changes[0].live);
        CHECK(strcmp(changes[1].name, "pulses") == 0 && !changes[1].live, "change 1: %s live %d", changes[1].name,
              changes[1].live);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--write-default") == 0) {
        config_write_default(stdout);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s SHIPPED_CFG | --write-default\n", argv[0]);
        return 2;
    }
    snprintf(temp_dir, sizeof temp_dir, "/tmp/eigstream-config-XXXXXX");
    if (mkdtemp(temp_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }

    test_defaults();
    test_shipped_file_matches_table(argv[1]);
    test_help_and_file_name_every_setting(argv[1]);
    test_unknown();
    test_wrong_type();
    test_out_of_range();
    test_long_endpoint();
    test_integer_literals();
    test_bad_choice();
    test_syntax_and_io();
    test_cross_checks();
    test_full_file();
    test_write_round_trip();
    test_endpoint_lists();
    test_worker_lists();
    test_names();
    test_choice_spellings();
    test_validate_iq();
    test_validate_programmatic();
    test_validate_rules();
    test_validate_backend_n();
    test_live_settings();

    remove_temp_dir();
    return test_check_report("test_config");
}
