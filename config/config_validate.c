/*
 * config_validate.c - the one validator of a configuration: every setting
 * against its row of the table (range, choices, endpoint form), then every
 * rule between settings. config_load runs it on each file (and the value
 * checks on each literal before it is stored), app/main.c after the
 * command-line overrides, pipeline_create before it builds anything; each
 * rule is written here once and answers the same everywhere.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_table.h"
#include "protocol.h" /* IQ sample bytes */

/* Fills *v: code, the settings involved (the first is named, NULL ends the
 * list early) and the reason; returns code. */
static config_error violation(config_violation *v, config_error code, const config_spec *named,
                              const config_spec *second, const config_spec *third,
                              const char *format, ...) __attribute__((format(printf, 6, 7)));

static config_error violation(config_violation *v, config_error code, const config_spec *named,
                              const config_spec *second, const config_spec *third,
                              const char *format, ...)
{
    v->code = code;
    v->settings[0] = named;
    v->settings[1] = second;
    v->settings[2] = third;
    va_list args;
    va_start(args, format);
    vsnprintf(v->reason, sizeof v->reason, format, args);
    va_end(args);
    return code;
}

/* ---- one value against its row ------------------------------------------------ */

config_error config_check_integer(const config_spec *spec, int64_t value, config_violation *v)
{
    if (spec->kind == CONFIG_KIND_BOOL) {
        if (value == 0 || value == 1)
            return CONFIG_OK;
        return violation(v, CONFIG_ERANGE, spec, NULL, NULL,
                         "%" PRId64 " is neither true (1) nor false (0)", value);
    }
    if (value >= spec->min && value <= spec->max)
        return CONFIG_OK;
    return violation(v, CONFIG_ERANGE, spec, NULL, NULL,
                     "%" PRId64 " is out of range %" PRId64 "..%" PRId64, value, spec->min,
                     spec->max);
}

config_error config_check_real(const config_spec *spec, double value, config_violation *v)
{
    /* Written so that NaN fails too. */
    if (value >= spec->min_real && value <= spec->max_real)
        return CONFIG_OK;
    return violation(v, CONFIG_ERANGE, spec, NULL, NULL, "%g is out of range %g..%g", value,
                     spec->min_real, spec->max_real);
}

static const char *const endpoint_transports[] = {"tcp://", "ipc://", "inproc://", "pgm://",
                                                  "epgm://"};

/* Length of the transport prefix of endpoint, 0 when it has none we know. */
static size_t endpoint_transport_length(const char *endpoint, size_t length)
{
    for (size_t i = 0; i < sizeof endpoint_transports / sizeof endpoint_transports[0]; ++i) {
        size_t prefix = strlen(endpoint_transports[i]);
        if (length >= prefix && strncmp(endpoint, endpoint_transports[i], prefix) == 0)
            return prefix;
    }
    return 0;
}

/* An endpoint's form (not empty, shorter than the field). */
static config_error check_endpoint(const config_spec *spec, const char *text, size_t length,
                                   config_violation *v)
{
    const char *comma = memchr(text, ',', length);
    if ((spec->flags & CONFIG_FLAG_LIST_OK) && comma != NULL) {
        /* A list: every entry a ZeroMQ endpoint (a recording is read alone). */
        for (size_t at = 0; at <= length;) {
            const char *next = memchr(text + at, ',', length - at);
            size_t entry = next != NULL ? (size_t)(next - text) - at : length - at;
            size_t transport = endpoint_transport_length(text + at, entry);
            if (transport == 0 || entry == transport)
                return violation(v, CONFIG_EINVAL, spec, NULL, NULL,
                                 "entry %d of the list: expected tcp://, ipc://, inproc://, pgm:// or epgm:// "
                                 "and an address, not \"%.*s\"",
                                 config_endpoint_count(text, at), (int)entry, text + at);
            at += entry + 1;
        }
        return CONFIG_OK;
    }
    if ((spec->flags & CONFIG_FLAG_FILE_OK) && length >= 5 && strncmp(text, "file:", 5) == 0)
        return length > 5 ? CONFIG_OK
                          : violation(v, CONFIG_EINVAL, spec, NULL, NULL, "file: needs a recording's name");
    size_t transport = endpoint_transport_length(text, length);
    if (transport == 0 || length == transport)
        return violation(v, CONFIG_EINVAL, spec, NULL, NULL,
                         "expected tcp://, ipc://, inproc://, pgm:// or epgm:// and an "
                         "address%s, not \"%.*s\"",
                         (spec->flags & CONFIG_FLAG_FILE_OK) ? ", or file:RECORDING" : "", (int)length, text);
    return CONFIG_OK;
}

/* Length of the host part of "HOST:PORT" text (brackets included), 0 when
 * it is malformed: an IPv6 host needs brackets, a name is letters, digits,
 * '-' and '.'. */
static size_t host_length(const char *text, size_t length)
{
    if (text[0] == '[') {
        const char *close = memchr(text, ']', length);
        size_t inner = close != NULL ? (size_t)(close - text) - 1 : 0;
        if (inner == 0 || strspn(text + 1, "0123456789abcdefABCDEF:.") < inner)
            return 0;
        return inner + 2;
    }
    size_t host = strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.");
    return host < length && text[host] == ':' ? host : 0;
}

/* A list of numeric IPv4 or IPv6 addresses ("127.0.0.1, ::1"): each entry
 * as inet_pton reads it, at most CONFIG_ADDRESSES_MAX. */
static config_error check_address_list(const config_spec *spec, const char *text, size_t length,
                                       config_violation *v)
{
    int count = 0;
    for (size_t at = 0; at < length;) {
        while (at < length && (text[at] == ' ' || text[at] == ','))
            at++;
        size_t len = strcspn(text + at, ", ");
        if (len == 0)
            break;
        char one[64];
        unsigned char bytes[16];
        if (len >= sizeof one || ++count > CONFIG_ADDRESSES_MAX)
            return violation(v, CONFIG_EINVAL, spec, NULL, NULL, "at most %d numeric addresses",
                             CONFIG_ADDRESSES_MAX);
        memcpy(one, text + at, len);
        one[len] = '\0';
        if (inet_pton(AF_INET, one, bytes) != 1 && inet_pton(AF_INET6, one, bytes) != 1)
            return violation(v, CONFIG_EINVAL, spec, NULL, NULL,
                             "\"%s\" is not a numeric IPv4 or IPv6 address", one);
        at += len;
    }
    return CONFIG_OK;
}

/* HOST:PORT's form (not empty, shorter than the field). */
static config_error check_host_port(const config_spec *spec, const char *text, size_t length,
                                    config_violation *v)
{
    size_t host = host_length(text, length);
    const char *port = text + host + 1;
    size_t digits = host > 0 && text[host] == ':' ? strspn(port, "0123456789") : 0;
    long value = digits > 0 && digits <= 5 ? strtol(port, NULL, 10) : -1;
    if (host == 0 || digits == 0 || host + 1 + digits != length || value < 0 || value > 65535)
        return violation(v, CONFIG_EINVAL, spec, NULL, NULL,
                         "expected HOST:PORT (\"127.0.0.1:9464\", \"0.0.0.0:9464\", "
                         "\"[::1]:9464\"; port 0..65535), not \"%.*s\"", (int)length, text);
    return CONFIG_OK;
}

int config_cpu_list_parse(const char *text, uint64_t mask[CONFIG_CPU_MAX / 64])
{
    memset(mask, 0, CONFIG_CPU_MAX / 8);
    const char *p = text;
    while (*p != '\0') {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        long first = strtol(p, &end, 10), last = first;
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9')
                return -1;
            last = strtol(end + 1, &end, 10);
        }
        if (first > last || last >= CONFIG_CPU_MAX || (*end != ',' && *end != '\0') || (*end == ',' && end[1] == '\0'))
            return -1;
        for (long c = first; c <= last; c++)
            mask[c / 64] |= (uint64_t)1 << (c % 64);
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

config_error config_check_string(const config_spec *spec, const char *text, size_t length,
                                 config_violation *v)
{
    if (length >= CONFIG_STRING_MAX)
        return violation(v, CONFIG_ERANGE, spec, NULL, NULL, "longer than %d bytes",
                         CONFIG_STRING_MAX - 1);
    if (length == 0)
        return (spec->flags & CONFIG_FLAG_EMPTY_OK)
                   ? CONFIG_OK
                   : violation(v, CONFIG_EINVAL, spec, NULL, NULL, "must not be empty");
    if (spec->kind == CONFIG_KIND_HOST_PORT)
        return check_host_port(spec, text, length, v);
    if (spec->kind == CONFIG_KIND_PATH) {
        /* Written back into files and logs verbatim: no control characters.
         * Whether it exists, and its permissions, are checked where it is opened. */
        for (size_t i = 0; i < length; i++)
            if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
                return violation(v, CONFIG_EINVAL, spec, NULL, NULL, "control character at byte %zu", i);
        return CONFIG_OK;
    }
    if (spec->kind == CONFIG_KIND_ADDRESS_LIST)
        return check_address_list(spec, text, length, v);
    if (spec->kind == CONFIG_KIND_CPU_LIST) {
        uint64_t mask[CONFIG_CPU_MAX / 64];
        if (config_cpu_list_parse(text, mask) == 0)
            return CONFIG_OK; /* whether the CPUs exist is the machine's answer, at start-up */
        return violation(v, CONFIG_EINVAL, spec, NULL, NULL,
                         "expected a CPU list such as \"2\" or \"0-3,8\" (CPUs 0..%d), not \"%.*s\"",
                         CONFIG_CPU_MAX - 1, (int)length, text);
    }
    return check_endpoint(spec, text, length, v);
}

config_error config_check_int_list(const config_spec *spec, const config_int_list *list, config_violation *v)
{
    if (list->count < 0 || list->count > CONFIG_LIST_MAX)
        return violation(v, CONFIG_ERANGE, spec, NULL, NULL, "%d entries: at most %d", list->count,
                         CONFIG_LIST_MAX);
    for (int i = 0; i < list->count; ++i)
        if (list->values[i] < spec->min || list->values[i] > spec->max)
            return violation(v, CONFIG_ERANGE, spec, NULL, NULL,
                             "entry %d: %d is out of range %" PRId64 "..%" PRId64, i, list->values[i], spec->min,
                             spec->max);
    return CONFIG_OK;
}

/* The stored field of spec in cfg against its row. */
static config_error check_setting(const eigstream_config *cfg, const config_spec *spec,
                                  config_violation *v)
{
    const void *field = (const char *)cfg + spec->offset;
    switch (spec->kind) {
    case CONFIG_KIND_BOOL:
    case CONFIG_KIND_INT:
        return config_check_integer(spec, *(const int *)field, v);
    case CONFIG_KIND_INT64:
        return config_check_integer(spec, *(const int64_t *)field, v);
    case CONFIG_KIND_REAL:
        return config_check_real(spec, *(const double *)field, v);
    case CONFIG_KIND_CHOICE: {
        int value = *(const int *)field;
        if (value >= spec->choice->min && value <= spec->choice->max && spec->choice->name(value) != NULL)
            return CONFIG_OK;
        char names[CONFIG_STRING_MAX];
        config_choice_join(spec->choice, names, sizeof names);
        return violation(v, CONFIG_ERANGE, spec, NULL, NULL, "%d is not one of %s", value, names);
    }
    case CONFIG_KIND_ENDPOINT:
    case CONFIG_KIND_HOST_PORT:
    case CONFIG_KIND_PATH:
    case CONFIG_KIND_CPU_LIST:
    case CONFIG_KIND_ADDRESS_LIST: {
        const char *text = field;
        return config_check_string(spec, text, strnlen(text, CONFIG_STRING_MAX), v);
    }
    case CONFIG_KIND_INT_LIST:
        return config_check_int_list(spec, field, v);
    }
    return violation(v, CONFIG_EINVAL, spec, NULL, NULL, "unknown kind");
}

/* ---- rules between settings ------------------------------------------------------ */

/* solver.fallback cpu replaces a GPU path: meaningful with backends cuda and
 * auto only (cpu and lapack already run on the host). */
static config_error check_fallback(const eigstream_config *cfg, config_violation *v)
{
    eig_backend b = cfg->solver.backend;
    if (cfg->solver.fallback == CONFIG_FALLBACK_NONE || b == EIG_BACKEND_CUDA || b == EIG_BACKEND_AUTO)
        return CONFIG_OK;
    return violation(v, CONFIG_EINVAL, config_spec_find("solver", "fallback"), config_spec_find("solver", "backend"),
                     NULL, "%s needs backend %s or %s, not %s", config_fallback_name(cfg->solver.fallback),
                     eig_backend_name(EIG_BACKEND_CUDA), eig_backend_name(EIG_BACKEND_AUTO), eig_backend_name(b));
}

/* The solver workers: solver.gpu_devices names GPUs (backends cuda and
 * auto), replaces gpu_device, and sets the worker count. */
static config_error check_workers(const eigstream_config *cfg, config_violation *v)
{
    const config_spec *devices = config_spec_find("solver", "gpu_devices");
    const config_spec *workers = config_spec_find("solver", "workers");
    int count = cfg->solver.gpu_devices.count;
    eig_backend b = cfg->solver.backend;
    if (count == 0)
        return CONFIG_OK;
    if (b != EIG_BACKEND_CUDA && b != EIG_BACKEND_AUTO)
        return violation(v, CONFIG_EINVAL, devices, config_spec_find("solver", "backend"), NULL,
                         "needs backend %s or %s, not %s (host backends take solver.workers)",
                         eig_backend_name(EIG_BACKEND_CUDA), eig_backend_name(EIG_BACKEND_AUTO), eig_backend_name(b));
    if (cfg->solver.gpu_device != 0)
        return violation(v, CONFIG_EINVAL, devices, config_spec_find("solver", "gpu_device"), NULL,
                         "set either solver.gpu_device (%d) or solver.gpu_devices, not both",
                         cfg->solver.gpu_device);
    if (cfg->solver.workers != 1 && cfg->solver.workers != count)
        return violation(v, CONFIG_EINVAL, workers, devices, NULL,
                         "%d does not match the %d entries of solver.gpu_devices (one worker per entry: "
                         "leave workers at 1)", cfg->solver.workers, count);
    return CONFIG_OK;
}

/* d against n and the mode; n against the backend's limit. */
static config_error check_dimensions(const eigstream_config *cfg, config_violation *v)
{
    const config_spec *d = config_spec_find("output", "signal_dimension");
    const config_spec *n = config_spec_find("solver", "n");
    if (cfg->output.signal_dimension > cfg->solver.n)
        return violation(v, CONFIG_EINVAL, d, n, NULL, "%d exceeds solver.n = %d",
                         cfg->output.signal_dimension, cfg->solver.n);
    if (cfg->output.mode == PROTOCOL_MODE_NOISE && cfg->output.signal_dimension == cfg->solver.n)
        return violation(v, CONFIG_EINVAL, d, config_spec_find("output", "mode"), n,
                         "%d = solver.n leaves mode noise no eigenvectors",
                         cfg->output.signal_dimension);
    /* The table allows what some backend takes; each backend says how much. */
    int n_max = eig_backend_n_max(cfg->solver.backend);
    if (cfg->solver.n > n_max)
        return violation(v, CONFIG_EINVAL, n, config_spec_find("solver", "backend"), NULL,
                         "%d is too large: backend %s takes n up to %d; backends %s and %s up "
                         "to %d", cfg->solver.n, eig_backend_name(cfg->solver.backend), n_max,
                         eig_backend_name(EIG_BACKEND_CPU), eig_backend_name(EIG_BACKEND_LAPACK),
                         eig_backend_n_max(EIG_BACKEND_CPU));
    return CONFIG_OK;
}

/* form.input = iq: the FFT size, the bins and the segments against the
 * cube and solver.matrices; the snapshot count K of each matrix against n
 * (K < n leaves R singular: refused unless diagonal loading makes it
 * regular). */
static config_error check_iq_forming(const eigstream_config *cfg, config_violation *v)
{
#define FORM(name) config_spec_find("form", name)
    if (cfg->form.input != CONFIG_FORM_INPUT_IQ)
        return CONFIG_OK;
    uint32_t fft = config_form_fft_size(cfg), bins = config_form_doppler_bins(cfg);
    if (cfg->form.fft_size != 0 && cfg->form.fft_size < cfg->form.pulses)
        return violation(v, CONFIG_EINVAL, FORM("fft_size"), FORM("pulses"), NULL,
                         "%d is less than form.pulses = %d (0 = form.pulses)", cfg->form.fft_size,
                         cfg->form.pulses);
    if ((uint32_t)cfg->form.doppler_first >= fft)
        return violation(v, CONFIG_EINVAL, FORM("doppler_first"), FORM("fft_size"), FORM("pulses"),
                         "%d is not a bin of the %" PRIu32 "-point Doppler FFT (0..%" PRIu32 ")",
                         cfg->form.doppler_first, fft, fft - 1);
    if (bins > fft)
        return violation(v, CONFIG_EINVAL, FORM("doppler_bins"), FORM("fft_size"), FORM("pulses"),
                         "%" PRIu32 " bins exceed the %" PRIu32 "-point Doppler FFT", bins, fft);
    if ((uint64_t)bins * (uint64_t)cfg->form.range_segments != (uint64_t)cfg->solver.matrices)
        return violation(v, CONFIG_EINVAL, FORM("doppler_bins"), FORM("range_segments"),
                         config_spec_find("solver", "matrices"),
                         "%" PRIu32 " bins x form.range_segments = %d make %" PRIu64 " matrices per frame, "
                         "but solver.matrices = %d", bins, cfg->form.range_segments,
                         (uint64_t)bins * (uint64_t)cfg->form.range_segments, cfg->solver.matrices);
    if (cfg->form.range_gates % cfg->form.range_segments != 0)
        return violation(v, CONFIG_EINVAL, FORM("range_segments"), FORM("range_gates"), NULL,
                         "%d does not divide form.range_gates = %d", cfg->form.range_segments,
                         cfg->form.range_gates);
    uint32_t k = config_form_snapshots(cfg);
    if (k == 0)
        return violation(v, CONFIG_EINVAL, FORM("guard_gates"), FORM("range_segments"), FORM("range_gates"),
                         "%d guard gates on either side of the centre gate leave no training gate in a "
                         "segment of %d gates", cfg->form.guard_gates, cfg->form.range_gates / cfg->form.range_segments);
    if (k < (uint32_t)cfg->solver.n && !cfg->form.diagonal_loading)
        return violation(v, CONFIG_EINVAL, FORM("range_segments"), FORM("guard_gates"), FORM("diagonal_loading"),
                         "%" PRIu32 " snapshots per matrix (form.range_gates / form.range_segments less guards) "
                         "are fewer than solver.n = %d: every matrix would be singular; use fewer segments or "
                         "guards, or set form.diagonal_loading", k, cfg->solver.n);
    return CONFIG_OK;
#undef FORM
}

static int endpoint_is_multicast(const char *endpoint)
{
    return strncmp(endpoint, "pgm://", 6) == 0 || strncmp(endpoint, "epgm://", 7) == 0;
}

/* Three distinct endpoints; multicast only on the publish/subscribe side. */
static config_error check_endpoints(const eigstream_config *cfg, config_violation *v)
{
    const config_spec *in = config_spec_find("input", "endpoint");
    const config_spec *out = config_spec_find("output", "endpoint");
    const config_spec *metrics = config_spec_find("metrics", "endpoint");
    for (int k = 0; k < cfg->input.io_threads; k++) {
        char input[CONFIG_STRING_MAX];
        config_input_endpoint(cfg, k, input, sizeof input);
        if (strcmp(cfg->output.endpoint, input) == 0)
            return violation(v, CONFIG_EINVAL, out, in, NULL, "same as input.endpoint");
        if (strcmp(cfg->metrics.endpoint, input) == 0)
            return violation(v, CONFIG_EINVAL, metrics, in, NULL, "same as input.endpoint");
        /* PGM is multicast: only the publish/subscribe sockets can use it. */
        if (endpoint_is_multicast(input) && cfg->input.pattern != CONFIG_INPUT_SUB)
            return violation(v, CONFIG_EINVAL, in, config_spec_find("input", "pattern"), NULL,
                             "pgm:// and epgm:// need input.pattern = \"sub\"");
    }
    if (strcmp(cfg->metrics.endpoint, cfg->output.endpoint) == 0)
        return violation(v, CONFIG_EINVAL, metrics, out, NULL, "same as output.endpoint");

    if (endpoint_is_multicast(cfg->output.endpoint) && cfg->output.pattern != CONFIG_OUTPUT_PUB)
        return violation(v, CONFIG_EINVAL, out, config_spec_find("output", "pattern"), NULL,
                         "pgm:// and epgm:// need output.pattern = \"pub\"");
    /* A list of endpoints: one per input socket, each connecting to a PUSH. */
    int listed = config_endpoint_count(cfg->input.endpoint, strlen(cfg->input.endpoint));
    if (listed > 1 && listed != cfg->input.io_threads)
        return violation(v, CONFIG_EINVAL, in, config_spec_find("input", "io_threads"), NULL,
                         "%d endpoints listed for %d input sockets: list one, or one per socket "
                         "(input.io_threads)", listed, cfg->input.io_threads);
    /* Several input sockets: each a connection to the source's PUSH, or a
     * DEALER of its own to eigstream-dispatch (a SUB each would get every
     * frame; a bound socket would take them all). */
    if (cfg->input.io_threads > 1 && (cfg->input.pattern == CONFIG_INPUT_SUB || cfg->input.bind ||
                                      strncmp(cfg->input.endpoint, "file:", 5) == 0))
        return violation(v, CONFIG_EINVAL, config_spec_find("input", "io_threads"),
                         config_spec_find("input", "pattern"), config_spec_find("input", "bind"),
                         "more than one input socket connects to a PUSH source or to eigstream-dispatch: it "
                         "needs input.pattern \"pull\" or \"dispatch\" and input.bind = false on a ZeroMQ "
                         "endpoint (or input.io_threads = 1)");
    /* The dispatcher's ROUTER binds; its daemons connect to it. */
    if (cfg->input.pattern == CONFIG_INPUT_DISPATCH && cfg->input.bind &&
        strncmp(cfg->input.endpoint, "file:", 5) != 0)
        return violation(v, CONFIG_EINVAL, config_spec_find("input", "bind"), config_spec_find("input", "pattern"),
                         NULL, "input.pattern = \"dispatch\" connects to eigstream-dispatch's back end: "
                         "set input.bind = false");
    return CONFIG_OK;
}

/* The smallest frame the receiver accepts: packed triangles in the
 * configured precision (frames of the other precision are rejected). If even
 * that exceeds the message limit, every frame would be refused. */
static config_error check_message_size(const eigstream_config *cfg, config_violation *v)
{
    if (cfg->form.input == CONFIG_FORM_INPUT_IQ) {
        uint64_t cube = (uint64_t)cfg->solver.n * (uint64_t)cfg->form.pulses * (uint64_t)cfg->form.range_gates *
                        protocol_iq_sample_bytes((uint8_t)cfg->form.iq_format);
        if ((uint64_t)cfg->input.max_message_bytes >= cube)
            return CONFIG_OK;
        return violation(v, CONFIG_EINVAL, config_spec_find("input", "max_message_bytes"),
                         config_spec_find("form", "range_gates"), config_spec_find("form", "pulses"),
                         "%" PRId64 " cannot hold one IQ cube: %d channels x %d pulses x %d gates of %s need "
                         "%" PRIu64 " bytes", cfg->input.max_message_bytes, cfg->solver.n, cfg->form.pulses,
                         cfg->form.range_gates, protocol_iq_format_name(cfg->form.iq_format), cube);
    }
    uint64_t n = (uint64_t)cfg->solver.n;
    uint64_t smallest_payload = (uint64_t)cfg->solver.matrices * (n * (n + 1) / 2) *
                                eig_element_bytes(cfg->solver.precision);
    if ((uint64_t)cfg->input.max_message_bytes >= smallest_payload)
        return CONFIG_OK;
    return violation(v, CONFIG_EINVAL, config_spec_find("input", "max_message_bytes"),
                     config_spec_find("solver", "matrices"), config_spec_find("solver", "n"),
                     "%" PRId64 " cannot hold one frame: %d matrices of order %d need at least "
                     "%" PRIu64 " bytes (packed complex %s)",
                     cfg->input.max_message_bytes, cfg->solver.matrices, cfg->solver.n,
                     smallest_payload, eig_precision_name(cfg->solver.precision));
}

/* CURVE needs both halves: the server's key pair and the clients it lets
 * in; behind eigstream-dispatch the input is a CURVE client instead, and
 * needs the dispatcher's public key (and nothing else does). */
static config_error check_security(const eigstream_config *cfg, config_violation *v)
{
    const config_spec *secret = config_spec_find("security", "curve_secret_key");
    const config_spec *allow = config_spec_find("security", "curve_allow");
    const config_spec *dispatcher = config_spec_find("security", "curve_dispatcher_key");
    const config_spec *pattern = config_spec_find("input", "pattern");
    int curve = cfg->security.curve_secret_key[0] != '\0', dispatch = cfg->input.pattern == CONFIG_INPUT_DISPATCH;
    int dispatcher_key = cfg->security.curve_dispatcher_key[0] != '\0';
    if (curve && cfg->security.curve_allow[0] == '\0')
        return violation(v, CONFIG_EINVAL, allow, secret, NULL,
                         "must name the allowed client keys when security.curve_secret_key is set");
    if (!curve && cfg->security.curve_allow[0] != '\0')
        return violation(v, CONFIG_EINVAL, secret, allow, NULL,
                         "must name the daemon's key pair when security.curve_allow is set");
    if (dispatcher_key && !dispatch)
        return violation(v, CONFIG_EINVAL, dispatcher, pattern, NULL,
                         "is eigstream-dispatch's public key: it needs input.pattern = \"dispatch\"");
    if (dispatcher_key && !curve)
        return violation(v, CONFIG_EINVAL, dispatcher, secret, NULL,
                         "needs security.curve_secret_key: the daemon's key pair is its CURVE client key "
                         "towards the dispatcher");
    if (dispatch && curve && !dispatcher_key)
        return violation(v, CONFIG_EINVAL, dispatcher, pattern, secret,
                         "must name eigstream-dispatch's public key (its BASE.key) when input.pattern = "
                         "\"dispatch\" and security.curve_secret_key is set: the input connects to the "
                         "dispatcher as a CURVE client, and a plain-text dispatcher is refused");
    return CONFIG_OK;
}

/* The rules between settings, in the order they are checked: the first
 * violation found is the one reported. */
static config_error (*const config_rules[])(const eigstream_config *, config_violation *) = {
    check_dimensions, check_endpoints, check_fallback, check_security, check_iq_forming, check_workers,
    check_message_size};

config_error config_find_violation(const eigstream_config *cfg, config_violation *v)
{
    memset(v, 0, sizeof *v);
    config_error rc;
    for (size_t i = 0; i < CONFIG_SPEC_COUNT; ++i)
        if ((rc = check_setting(cfg, &config_specs[i], v)) != CONFIG_OK)
            return rc;
    /* The settings are each valid: the rules may rely on their ranges. */
    for (size_t i = 0; i < sizeof config_rules / sizeof config_rules[0]; ++i)
        if ((rc = config_rules[i](cfg, v)) != CONFIG_OK)
            return rc;
    return CONFIG_OK;
}

config_error config_validate(const eigstream_config *cfg, char *err, size_t err_bytes)
{
    if (err != NULL && err_bytes > 0)
        err[0] = '\0';
    config_violation v;
    config_error rc = config_find_violation(cfg, &v);
    if (rc != CONFIG_OK && err != NULL && err_bytes > 0)
        snprintf(err, err_bytes, "%s.%s: %s", v.settings[0]->group, v.settings[0]->name,
                 v.reason);
    return rc;
}
