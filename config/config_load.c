/*
 * config_load.c - defaults and loading: the file is read whole, checked by
 * config_scan for what libconfig would accept silently, parsed by libconfig,
 * then every setting is looked up in the table, type- and range-checked and
 * stored; last come the checks between settings. The first error wins and
 * is reported as "FILE:LINE: group.name: reason".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libconfig.h>

#include "config_scan.h"
#include "config_table.h"

/* A daemon configuration is a few kB; anything near this is a wrong file. */
#define CONFIG_FILE_MAX_BYTES (1024 * 1024)
/* libconfig keeps source lines in an unsigned short. */
#define CONFIG_FILE_MAX_LINES 65535u

typedef struct load_context {
    const char *path;                 /* as given, for messages */
    const char *text;                 /* the whole file, NUL-terminated */
    char *err;
    size_t err_bytes;
    unsigned line[CONFIG_SPEC_COUNT]; /* where each setting was set, 0 = not in the file */
} load_context;

static void *field_of(eigstream_config *cfg, const config_spec *spec)
{
    return (char *)cfg + spec->offset;
}

void config_defaults(eigstream_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < CONFIG_SPEC_COUNT; ++i) {
        const config_spec *spec = &config_specs[i];
        void *field = field_of(cfg, spec);
        switch (spec->kind) {
        case CONFIG_KIND_BOOL:
        case CONFIG_KIND_INT:
        case CONFIG_KIND_CHOICE:
            *(int *)field = (int)spec->default_int;
            break;
        case CONFIG_KIND_INT64:
            *(int64_t *)field = spec->default_int;
            break;
        case CONFIG_KIND_REAL:
            *(double *)field = spec->default_real;
            break;
        case CONFIG_KIND_ENDPOINT:
            snprintf((char *)field, CONFIG_STRING_MAX, "%s", spec->default_string);
            break;
        }
    }
}

/* Writes "PATH[:LINE]: [group[.name]: ]reason" into ctx->err; returns code. */
static config_error load_fail(load_context *ctx, config_error code, unsigned line,
                              const char *group, const char *name, const char *format, ...)
    __attribute__((format(printf, 6, 7)));

static config_error load_fail(load_context *ctx, config_error code, unsigned line,
                              const char *group, const char *name, const char *format, ...)
{
    if (ctx->err == NULL || ctx->err_bytes == 0)
        return code;
    char where[64] = "";
    if (line > 0)
        snprintf(where, sizeof where, ":%u", line);
    char setting[CONFIG_STRING_MAX] = "";
    if (group != NULL)
        snprintf(setting, sizeof setting, "%s%s%s: ", group, name != NULL ? "." : "",
                 name != NULL ? name : "");
    char reason[CONFIG_ERROR_MAX];
    va_list args;
    va_start(args, format);
    vsnprintf(reason, sizeof reason, format, args);
    va_end(args);
    snprintf(ctx->err, ctx->err_bytes, "%s%s: %s%s", ctx->path, where, setting, reason);
    return code;
}

/* Reads the whole file into *text (malloc'd, NUL-terminated). */
static config_error load_read_file(load_context *ctx, char **text)
{
    *text = NULL;
    FILE *file = fopen(ctx->path, "rb");
    if (file == NULL)
        return load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "cannot read: %s", strerror(errno));
    struct stat st;
    int error = 0;
    if (fstat(fileno(file), &st) != 0)
        error = errno;
    else if (S_ISDIR(st.st_mode))
        error = EISDIR; /* fopen succeeds on a directory; reading it would not */
    if (error != 0) {
        fclose(file);
        return load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "cannot read: %s", strerror(error));
    }
    char *buffer = malloc(CONFIG_FILE_MAX_BYTES + 1);
    if (buffer == NULL) {
        fclose(file);
        return load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "cannot read: out of memory");
    }
    size_t bytes = fread(buffer, 1, CONFIG_FILE_MAX_BYTES + 1, file);
    int read_error = ferror(file) ? errno : 0;
    fclose(file);
    if (read_error != 0) {
        free(buffer);
        return load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "cannot read: %s", strerror(read_error));
    }
    if (bytes > CONFIG_FILE_MAX_BYTES) {
        free(buffer);
        return load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "larger than %d bytes",
                         CONFIG_FILE_MAX_BYTES);
    }
    buffer[bytes] = '\0';

    /* libconfig stops at a NUL byte and keeps lines in 16 bits: refuse both
     * rather than check less than the whole file. */
    unsigned line = 1;
    for (size_t i = 0; i < bytes; ++i) {
        if (buffer[i] == '\0') {
            free(buffer);
            return load_fail(ctx, CONFIG_ESYNTAX, line, NULL, NULL, "NUL byte in the file");
        }
        if (buffer[i] == '\n' && ++line > CONFIG_FILE_MAX_LINES) {
            free(buffer);
            return load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "more than %u lines",
                             CONFIG_FILE_MAX_LINES);
        }
    }
    *text = buffer;
    return CONFIG_OK;
}

static const char *const endpoint_transports[] = {"tcp://", "ipc://", "inproc://", "pgm://",
                                                  "epgm://"};

/* Length of the transport prefix of endpoint, 0 when it has none we know. */
static size_t endpoint_transport_length(const char *endpoint)
{
    for (size_t i = 0; i < sizeof endpoint_transports / sizeof endpoint_transports[0]; ++i) {
        size_t length = strlen(endpoint_transports[i]);
        if (strncmp(endpoint, endpoint_transports[i], length) == 0)
            return length;
    }
    return 0;
}

static int endpoint_is_multicast(const char *endpoint)
{
    return strncmp(endpoint, "pgm://", 6) == 0 || strncmp(endpoint, "epgm://", 7) == 0;
}

/* An integer setting whose literal libconfig could not hold exactly. */
static config_error load_check_literal(load_context *ctx, const config_spec *spec, unsigned line)
{
    char literal[48];
    if (!config_scan_integer_overflow(ctx->text, line, spec->name, literal, sizeof literal))
        return CONFIG_OK;
    if (spec->kind == CONFIG_KIND_INT64 && strchr(literal, 'L') == NULL)
        return load_fail(ctx, CONFIG_ERANGE, line, spec->group, spec->name,
                         "%s does not fit in 32 bits: write %sL", literal, literal);
    if (spec->kind == CONFIG_KIND_REAL)
        return load_fail(ctx, CONFIG_ERANGE, line, spec->group, spec->name,
                         "%s is out of range %g..%g", literal, spec->min_real, spec->max_real);
    return load_fail(ctx, CONFIG_ERANGE, line, spec->group, spec->name,
                     "%s is out of range %" PRId64 "..%" PRId64, literal, spec->min, spec->max);
}

/* Writes "a|b|c" into out. */
static void choices_join(const char *const *choices, char *out, size_t out_bytes)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; choices[i] != NULL && used < out_bytes; ++i)
        used += (size_t)snprintf(out + used, out_bytes - used, "%s%s", i > 0 ? "|" : "",
                                 choices[i]);
}

/* Checks one setting from the file against its row and stores it in cfg. */
static config_error load_setting(load_context *ctx, const config_spec *spec,
                                 const config_setting_t *setting, eigstream_config *cfg)
{
    unsigned line = config_setting_source_line(setting);
    int type = config_setting_type(setting);
    int is_integer = type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64;
    void *field = field_of(cfg, spec);
    config_error rc;

    switch (spec->kind) {
    case CONFIG_KIND_BOOL:
        if (type != CONFIG_TYPE_BOOL)
            return load_fail(ctx, CONFIG_ETYPE, line, spec->group, spec->name,
                             "expected true or false");
        *(int *)field = config_setting_get_bool(setting) ? 1 : 0;
        return CONFIG_OK;

    case CONFIG_KIND_INT:
    case CONFIG_KIND_INT64: {
        if (!is_integer)
            return load_fail(ctx, CONFIG_ETYPE, line, spec->group, spec->name,
                             "expected an integer");
        if ((rc = load_check_literal(ctx, spec, line)) != CONFIG_OK)
            return rc;
        int64_t value = config_setting_get_int64(setting);
        if (value < spec->min || value > spec->max)
            return load_fail(ctx, CONFIG_ERANGE, line, spec->group, spec->name,
                             "%" PRId64 " is out of range %" PRId64 "..%" PRId64, value,
                             spec->min, spec->max);
        if (spec->kind == CONFIG_KIND_INT)
            *(int *)field = (int)value;
        else
            *(int64_t *)field = value;
        return CONFIG_OK;
    }

    case CONFIG_KIND_REAL: {
        if (!is_integer && type != CONFIG_TYPE_FLOAT)
            return load_fail(ctx, CONFIG_ETYPE, line, spec->group, spec->name,
                             "expected a number");
        if (is_integer && (rc = load_check_literal(ctx, spec, line)) != CONFIG_OK)
            return rc;
        double value = is_integer ? (double)config_setting_get_int64(setting)
                                  : config_setting_get_float(setting);
        if (!(value >= spec->min_real && value <= spec->max_real))
            return load_fail(ctx, CONFIG_ERANGE, line, spec->group, spec->name,
                             "%g is out of range %g..%g", value, spec->min_real, spec->max_real);
        *(double *)field = value;
        return CONFIG_OK;
    }

    case CONFIG_KIND_CHOICE: {
        char names[CONFIG_STRING_MAX];
        choices_join(spec->choices, names, sizeof names);
        const char *text = type == CONFIG_TYPE_STRING ? config_setting_get_string(setting) : NULL;
        for (int i = 0; text != NULL && spec->choices[i] != NULL; ++i) {
            if (strcmp(text, spec->choices[i]) == 0) {
                *(int *)field = i;
                return CONFIG_OK;
            }
        }
        return load_fail(ctx, text == NULL ? CONFIG_ETYPE : CONFIG_ERANGE, line, spec->group,
                         spec->name, "expected one of %s", names);
    }

    case CONFIG_KIND_ENDPOINT: {
        if (type != CONFIG_TYPE_STRING)
            return load_fail(ctx, CONFIG_ETYPE, line, spec->group, spec->name,
                             "expected a string");
        const char *text = config_setting_get_string(setting);
        size_t length = strlen(text);
        if (length >= CONFIG_STRING_MAX)
            return load_fail(ctx, CONFIG_ERANGE, line, spec->group, spec->name,
                             "longer than %d bytes", CONFIG_STRING_MAX - 1);
        if (length == 0 && !(spec->flags & CONFIG_FLAG_EMPTY_OK))
            return load_fail(ctx, CONFIG_EINVAL, line, spec->group, spec->name,
                             "must not be empty");
        size_t transport = endpoint_transport_length(text);
        if (length > 0 && (transport == 0 || length == transport))
            return load_fail(ctx, CONFIG_EINVAL, line, spec->group, spec->name,
                             "expected tcp://, ipc://, inproc://, pgm:// or epgm:// and an "
                             "address, not \"%s\"", text);
        memcpy(field, text, length + 1);
        return CONFIG_OK;
    }
    }
    return load_fail(ctx, CONFIG_EINVAL, line, spec->group, spec->name, "unknown kind");
}

/* Where the file set group.name, 0 when it did not. */
static unsigned load_line_of(const load_context *ctx, const char *group, const char *name)
{
    const config_spec *spec = config_spec_find(group, name);
    return spec != NULL ? ctx->line[spec - config_specs] : 0;
}

/* The first nonzero line, so that a message points at whichever of the
 * settings involved the file actually set. */
static unsigned first_line(unsigned a, unsigned b, unsigned c)
{
    return a != 0 ? a : b != 0 ? b : c;
}

/* Checks between settings; each error names the first setting involved. */
static config_error load_check_consistency(load_context *ctx, const eigstream_config *cfg)
{
    unsigned line_d = load_line_of(ctx, "output", "signal_dimension");
    unsigned line_n = load_line_of(ctx, "solver", "n");
    unsigned line_mode = load_line_of(ctx, "output", "mode");
    if (cfg->output.signal_dimension > cfg->solver.n)
        return load_fail(ctx, CONFIG_EINVAL, first_line(line_d, line_n, 0), "output",
                         "signal_dimension", "%d exceeds solver.n = %d",
                         cfg->output.signal_dimension, cfg->solver.n);
    if (cfg->output.mode == CONFIG_MODE_NOISE && cfg->output.signal_dimension == cfg->solver.n)
        return load_fail(ctx, CONFIG_EINVAL, first_line(line_d, line_mode, line_n), "output",
                         "signal_dimension", "%d = solver.n leaves mode noise no eigenvectors",
                         cfg->output.signal_dimension);

    unsigned line_in = load_line_of(ctx, "input", "endpoint");
    unsigned line_out = load_line_of(ctx, "output", "endpoint");
    unsigned line_metrics = load_line_of(ctx, "metrics", "endpoint");
    if (strcmp(cfg->output.endpoint, cfg->input.endpoint) == 0)
        return load_fail(ctx, CONFIG_EINVAL, first_line(line_out, line_in, 0), "output",
                         "endpoint", "same as input.endpoint");
    if (strcmp(cfg->metrics.endpoint, cfg->input.endpoint) == 0)
        return load_fail(ctx, CONFIG_EINVAL, first_line(line_metrics, line_in, 0), "metrics",
                         "endpoint", "same as input.endpoint");
    if (strcmp(cfg->metrics.endpoint, cfg->output.endpoint) == 0)
        return load_fail(ctx, CONFIG_EINVAL, first_line(line_metrics, line_out, 0), "metrics",
                         "endpoint", "same as output.endpoint");

    /* PGM is multicast: only the publish/subscribe sockets can use it. */
    if (endpoint_is_multicast(cfg->input.endpoint) && cfg->input.pattern != CONFIG_INPUT_SUB)
        return load_fail(ctx, CONFIG_EINVAL,
                         first_line(line_in, load_line_of(ctx, "input", "pattern"), 0), "input",
                         "endpoint", "pgm:// and epgm:// need input.pattern = \"sub\"");
    if (endpoint_is_multicast(cfg->output.endpoint) && cfg->output.pattern != CONFIG_OUTPUT_PUB)
        return load_fail(ctx, CONFIG_EINVAL,
                         first_line(line_out, load_line_of(ctx, "output", "pattern"), 0),
                         "output", "endpoint", "pgm:// and epgm:// need output.pattern = \"pub\"");

    /* The smallest frame a source can send: packed triangles of complex float
     * (8 bytes per element). If even that exceeds the limit, every frame of
     * the configured shape would be refused. */
    uint64_t n = (uint64_t)cfg->solver.n;
    uint64_t smallest_payload = (uint64_t)cfg->solver.matrices * (n * (n + 1) / 2) * 8;
    if ((uint64_t)cfg->input.max_message_bytes < smallest_payload)
        return load_fail(ctx, CONFIG_EINVAL,
                         first_line(load_line_of(ctx, "input", "max_message_bytes"),
                                    load_line_of(ctx, "solver", "matrices"), line_n),
                         "input", "max_message_bytes",
                         "%" PRId64 " cannot hold one frame: %d matrices of order %d need at "
                         "least %" PRIu64 " bytes (packed complex float)",
                         cfg->input.max_message_bytes, cfg->solver.matrices, cfg->solver.n,
                         smallest_payload);
    return CONFIG_OK;
}

/* Walks the parsed file: groups at the top level, settings inside them. */
static config_error load_settings(load_context *ctx, config_t *parsed, eigstream_config *cfg)
{
    config_setting_t *root = config_root_setting(parsed);
    for (int i = 0; i < config_setting_length(root); ++i) {
        config_setting_t *group = config_setting_get_elem(root, i);
        const char *group_name = config_setting_name(group);
        unsigned line = config_setting_source_line(group);
        if (config_group_find(group_name) == NULL)
            return load_fail(ctx, CONFIG_EUNKNOWN, line, group_name, NULL,
                             config_setting_is_group(group) ? "unknown group" : "unknown setting");
        if (!config_setting_is_group(group))
            return load_fail(ctx, CONFIG_ETYPE, line, group_name, NULL,
                             "expected a group: %s = { ... };", group_name);
        for (int j = 0; j < config_setting_length(group); ++j) {
            config_setting_t *setting = config_setting_get_elem(group, j);
            const char *name = config_setting_name(setting);
            const config_spec *spec = config_spec_find(group_name, name);
            if (spec == NULL)
                return load_fail(ctx, CONFIG_EUNKNOWN, config_setting_source_line(setting),
                                 group_name, name, "unknown setting");
            config_error rc = load_setting(ctx, spec, setting, cfg);
            if (rc != CONFIG_OK)
                return rc;
            ctx->line[spec - config_specs] = config_setting_source_line(setting);
        }
    }
    return load_check_consistency(ctx, cfg);
}

config_error config_load(eigstream_config *cfg, const char *path, char *err, size_t err_bytes)
{
    load_context ctx = {.path = path != NULL ? path : "(null)", .err = err,
                        .err_bytes = err_bytes};
    if (err != NULL && err_bytes > 0)
        err[0] = '\0';
    if (path == NULL)
        return load_fail(&ctx, CONFIG_EIO, 0, NULL, NULL, "no file name");

    char *text = NULL;
    config_error rc = load_read_file(&ctx, &text);
    if (rc != CONFIG_OK)
        return rc;
    ctx.text = text;

    unsigned include_line = config_scan_include_line(text);
    if (include_line != 0) {
        free(text);
        return load_fail(&ctx, CONFIG_ESYNTAX, include_line, NULL, NULL,
                         "@include is not supported");
    }

    /* libconfig 1.5 (Debian 12) leaks a string token's buffer when a syntax
     * error falls on a string (a = ."x";), fixed upstream in 1.7
     * (hyperrealm/libconfig#142): tens of bytes once per failed load, before
     * the daemon exits; LeakSanitizer reports it. */
    config_t parsed;
    config_init(&parsed);
    if (!config_read_string(&parsed, text)) {
        rc = load_fail(&ctx, CONFIG_ESYNTAX, (unsigned)config_error_line(&parsed), NULL, NULL,
                       "%s", config_error_text(&parsed));
    } else {
        eigstream_config loaded;
        config_defaults(&loaded);
        rc = load_settings(&ctx, &parsed, &loaded);
        if (rc == CONFIG_OK)
            *cfg = loaded;
    }
    config_destroy(&parsed);
    free(text);
    return rc;
}
