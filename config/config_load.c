/*
 * config_load.c - defaults and loading: the file is read whole, checked by
 * config_scan for what libconfig would accept silently, parsed by libconfig,
 * then every setting is looked up in the table, type- and range-checked and
 * stored (the value checks are config_validate.c's); last comes
 * config_validate's whole check, rules between settings included. The first
 * error wins and is reported as "FILE:LINE: group.name: reason".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
    size_t settings;                  /* settings the file set */
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
        case CONFIG_KIND_HOST_PORT:
        case CONFIG_KIND_PATH:
        case CONFIG_KIND_CPU_LIST:
        case CONFIG_KIND_ADDRESS_LIST:
            snprintf((char *)field, CONFIG_STRING_MAX, "%s", spec->default_string);
            break;
        case CONFIG_KIND_INT_LIST:
            ((config_int_list *)field)->count = 0; /* every list defaults to [] */
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

/* Opens path for reading without ever blocking: O_NONBLOCK, so that a FIFO
 * put where the file was (or a device) cannot hang the caller in open() or
 * read() (a SIGHUP reload runs this while the daemon must stay stoppable),
 * and only a regular file is read. The FILE * or NULL with ctx->err set. */
static FILE *load_open(load_context *ctx)
{
    int fd = open(ctx->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "cannot read: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    int error = fstat(fd, &st) != 0 ? errno : 0;
    FILE *file = NULL;
    if (error != 0)
        load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "cannot read: %s", strerror(error));
    else if (S_ISDIR(st.st_mode))
        load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "cannot read: %s", strerror(EISDIR));
    else if (!S_ISREG(st.st_mode))
        load_fail(ctx, CONFIG_EIO, 0, NULL, NULL,
                  "not a regular file (a FIFO, socket or device could block the reader): refused");
    else if ((file = fdopen(fd, "rb")) == NULL)
        load_fail(ctx, CONFIG_EIO, 0, NULL, NULL, "cannot read: %s", strerror(errno));
    if (file == NULL)
        close(fd);
    return file;
}

/* Reads the whole file into *text (malloc'd, NUL-terminated), its length
 * into *length. */
static config_error load_read_file(load_context *ctx, char **text, size_t *length)
{
    *text = NULL;
    FILE *file = load_open(ctx);
    if (file == NULL)
        return CONFIG_EIO;
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
    *length = bytes;
    return CONFIG_OK;
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

/* A violation found in one value from the file, reported at its line. */
static config_error load_fail_value(load_context *ctx, unsigned line, const config_violation *v)
{
    const config_spec *spec = v->settings[0];
    return load_fail(ctx, v->code, line, spec->group, spec->name, "%s", v->reason);
}

/* The choice value whose owner's name is text; CONFIG_ERANGE when none is. */
static config_error load_choice(const config_choice *choice, const char *text, int *value)
{
    for (int candidate = choice->min; candidate <= choice->max; ++candidate) {
        const char *name = choice->name(candidate);
        if (name != NULL && strcmp(text, name) == 0) {
            *value = candidate;
            return CONFIG_OK;
        }
    }
    return CONFIG_ERANGE;
}

/* A list setting: [a, b] (or (a, b)) of integers, each checked against the
 * row before it is narrowed; the message names the entry. */
static config_error load_int_list(load_context *ctx, const config_spec *spec, const config_setting_t *setting,
                                  config_int_list *list)
{
    unsigned line = config_setting_source_line(setting);
    int type = config_setting_type(setting);
    if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST)
        return load_fail(ctx, CONFIG_ETYPE, line, spec->group, spec->name, "expected a list of integers: [0, 1]");
    int count = config_setting_length(setting);
    if (count > CONFIG_LIST_MAX)
        return load_fail(ctx, CONFIG_ERANGE, line, spec->group, spec->name, "%d entries: at most %d", count,
                         CONFIG_LIST_MAX);
    config_int_list loaded = {.count = count};
    for (int i = 0; i < count; ++i) {
        const config_setting_t *entry = config_setting_get_elem(setting, (unsigned)i);
        int entry_type = config_setting_type(entry);
        unsigned entry_line = config_setting_source_line(entry) != 0 ? config_setting_source_line(entry) : line;
        if (entry_type != CONFIG_TYPE_INT && entry_type != CONFIG_TYPE_INT64)
            return load_fail(ctx, CONFIG_ETYPE, entry_line, spec->group, spec->name, "entry %d: expected an integer",
                             i);
        char literal[48];
        /* libconfig wraps 4294967296 to 0: the scanner sees the literal. */
        if (config_scan_integer_overflow(ctx->text, entry_line, spec->name, literal, sizeof literal))
            return load_fail(ctx, CONFIG_ERANGE, entry_line, spec->group, spec->name,
                             "%s is out of range %" PRId64 "..%" PRId64, literal, spec->min, spec->max);
        int64_t value = config_setting_get_int64(entry);
        if (value < spec->min || value > spec->max)
            return load_fail(ctx, CONFIG_ERANGE, entry_line, spec->group, spec->name,
                             "entry %d: %" PRId64 " is out of range %" PRId64 "..%" PRId64, i, value, spec->min,
                             spec->max);
        loaded.values[i] = (int)value;
    }
    *list = loaded;
    return CONFIG_OK;
}

/* Checks one setting from the file against its row (the value checks of
 * config_validate.c, on the value before it is narrowed) and stores it. */
static config_error load_setting(load_context *ctx, const config_spec *spec,
                                 const config_setting_t *setting, eigstream_config *cfg)
{
    unsigned line = config_setting_source_line(setting);
    int type = config_setting_type(setting);
    int is_integer = type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64;
    void *field = field_of(cfg, spec);
    config_violation v;
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
        if (config_check_integer(spec, value, &v) != CONFIG_OK)
            return load_fail_value(ctx, line, &v);
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
        if (config_check_real(spec, value, &v) != CONFIG_OK)
            return load_fail_value(ctx, line, &v);
        *(double *)field = value;
        return CONFIG_OK;
    }

    case CONFIG_KIND_CHOICE: {
        const char *text = type == CONFIG_TYPE_STRING ? config_setting_get_string(setting) : NULL;
        if (text != NULL && load_choice(spec->choice, text, (int *)field) == CONFIG_OK)
            return CONFIG_OK;
        char names[CONFIG_STRING_MAX];
        config_choice_join(spec->choice, names, sizeof names);
        return load_fail(ctx, text == NULL ? CONFIG_ETYPE : CONFIG_ERANGE, line, spec->group,
                         spec->name, "expected one of %s", names);
    }

    case CONFIG_KIND_ENDPOINT:
    case CONFIG_KIND_HOST_PORT:
    case CONFIG_KIND_PATH:
    case CONFIG_KIND_CPU_LIST:
    case CONFIG_KIND_ADDRESS_LIST: {
        if (type != CONFIG_TYPE_STRING)
            return load_fail(ctx, CONFIG_ETYPE, line, spec->group, spec->name,
                             "expected a string");
        const char *text = config_setting_get_string(setting);
        size_t length = strlen(text);
        if (config_check_string(spec, text, length, &v) != CONFIG_OK)
            return load_fail_value(ctx, line, &v);
        memcpy(field, text, length + 1);
        return CONFIG_OK;
    }

    case CONFIG_KIND_INT_LIST:
        return load_int_list(ctx, spec, setting, field);
    }
    return load_fail(ctx, CONFIG_EINVAL, line, spec->group, spec->name, "unknown kind");
}

/* config_validate's rules on the loaded settings. The message points at the
 * first of the settings involved that the file set (the named one first),
 * so a rule broken by a default points where the file changed something. */
static config_error load_validate(load_context *ctx, const eigstream_config *cfg)
{
    config_violation v;
    if (config_find_violation(cfg, &v) == CONFIG_OK)
        return CONFIG_OK;
    unsigned line = 0;
    for (size_t i = 0; i < 3 && line == 0 && v.settings[i] != NULL; ++i)
        line = ctx->line[v.settings[i] - config_specs];
    return load_fail_value(ctx, line, &v);
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
            ctx->settings++;
        }
    }
    return load_validate(ctx, cfg);
}

/* config_load and config_load_replacement: `replacement` adds the checks of
 * a file that replaces a running configuration. */
static config_error load_file(eigstream_config *cfg, const char *path, int replacement, char *err,
                              size_t err_bytes)
{
    load_context ctx = {.path = path != NULL ? path : "(null)", .err = err,
                        .err_bytes = err_bytes};
    if (err != NULL && err_bytes > 0)
        err[0] = '\0';
    if (path == NULL)
        return load_fail(&ctx, CONFIG_EIO, 0, NULL, NULL, "no file name");

    char *text = NULL;
    size_t length = 0;
    config_error rc = load_read_file(&ctx, &text, &length);
    if (rc != CONFIG_OK)
        return rc;
    ctx.text = text;
    /* A file cut short while an editor or a deployment wrote it usually
     * stops mid-line; one that ends between two lines cannot be told from
     * a shorter file (write the file elsewhere and rename it over). */
    if (replacement && length > 0 && text[length - 1] != '\n') {
        free(text);
        return load_fail(&ctx, CONFIG_ESYNTAX, 0, NULL, NULL,
                         "does not end with a newline: looks cut short (truncated); refused");
    }

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
        if (rc == CONFIG_OK && replacement && ctx.settings == 0)
            rc = load_fail(&ctx, CONFIG_ESYNTAX, 0, NULL, NULL,
                           "sets no setting (empty or comments only): refused rather than taken as "
                           "every default");
        if (rc == CONFIG_OK)
            *cfg = loaded;
    }
    config_destroy(&parsed);
    free(text);
    return rc;
}

config_error config_load(eigstream_config *cfg, const char *path, char *err, size_t err_bytes)
{
    return load_file(cfg, path, 0, err, err_bytes);
}

config_error config_load_replacement(eigstream_config *cfg, const char *path, char *err, size_t err_bytes)
{
    return load_file(cfg, path, 1, err, err_bytes);
}
