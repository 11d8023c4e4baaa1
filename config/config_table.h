/*
 * config_table.h - the settings table (internal to config/).
 *
 * One row per setting: where it lives in the file (group.name), its kind,
 * where it lives in eigstream_config, its range or choices, its default and
 * its help. Loading (config_load.c), validation (config_validate.c), the
 * default file and --help-config (config_write.c) all read this table and
 * nothing else.
 */
#ifndef EIGSTREAM_CONFIG_TABLE_H
#define EIGSTREAM_CONFIG_TABLE_H

#include "config.h"

typedef enum config_kind {
    CONFIG_KIND_BOOL,     /* int 0/1; file: true | false */
    CONFIG_KIND_INT,      /* int in [min, max]; file: 32-bit integer */
    CONFIG_KIND_INT64,    /* int64_t in [min, max]; file: integer, L suffix above 2^31-1 */
    CONFIG_KIND_REAL,     /* double in [min_real, max_real]; file: number */
    CONFIG_KIND_CHOICE,   /* enum (int-sized) in [choice->min, choice->max]; file: a name */
    CONFIG_KIND_ENDPOINT, /* char[CONFIG_STRING_MAX]; file: ZeroMQ endpoint string */
    CONFIG_KIND_HOST_PORT, /* char[CONFIG_STRING_MAX]; file: "HOST:PORT" (TCP listen address) */
    CONFIG_KIND_PATH,     /* char[CONFIG_STRING_MAX]; file: a file or directory name without
                             control characters, "" only with EMPTY_OK; whether it exists, and
                             its permissions, are checked where it is opened */
    CONFIG_KIND_CPU_LIST, /* char[CONFIG_STRING_MAX]; file: "0-3,8" (config_cpu_list_parse) */
    CONFIG_KIND_ADDRESS_LIST, /* char[CONFIG_STRING_MAX]; file: "127.0.0.1,::1": numeric IPv4
                                 or IPv6 addresses, comma-separated, at most CONFIG_ADDRESSES_MAX */
    CONFIG_KIND_INT_LIST  /* config_int_list, each entry in [min, max], at most CONFIG_LIST_MAX
                             entries; file: [0, 1] ([] = empty, the default) */
} config_kind;

enum {
    CONFIG_FLAG_EMPTY_OK = 1u << 0, /* ENDPOINT, HOST_PORT: "" is allowed and means off */
    CONFIG_FLAG_FILE_OK = 1u << 1,  /* ENDPOINT: "file:NAME" (a recording) is allowed */
    CONFIG_FLAG_LIVE = 1u << 2,     /* SIGHUP applies a new value to the running daemon
                                       (app/service_reload.c); any other setting needs a restart */
    CONFIG_FLAG_LIST_OK = 1u << 3   /* ENDPOINT: ZeroMQ endpoints separated by commas, each
                                       checked alone (input.endpoint with several connections) */
};

/* A choice setting's concept: its one name function (owned by eig/,
 * config/ or the wire protocol) and the values a setting may take. The
 * file's names are name(min), ..., name(max), in that order; a value whose
 * name is NULL is a gap (not a choice: wire codes need not be contiguous). */
typedef struct config_choice {
    const char *(*name)(int value); /* the owner's name for a value in [min, max] */
    int min, max;
} config_choice;

typedef struct config_spec {
    const char *group;            /* "output" */
    const char *name;             /* "mode" */
    config_kind kind;
    size_t offset;                /* of the field in eigstream_config */
    int64_t min, max;             /* INT, INT64 */
    double min_real, max_real;    /* REAL */
    const config_choice *choice;  /* CHOICE */
    unsigned flags;
    int64_t default_int;          /* BOOL (0/1), INT, INT64, CHOICE (the enum value) */
    double default_real;          /* REAL */
    const char *default_string;   /* ENDPOINT, HOST_PORT */
    const char *help;             /* prose; config_write.c wraps it */
} config_spec;

typedef struct config_group_spec {
    const char *name;
    const char *help;
} config_group_spec;

#define CONFIG_SPEC_COUNT 69
#define CONFIG_GROUP_COUNT 10

/* Settings in file order; the settings of one group are contiguous and the
 * groups appear in config_groups order. */
extern const config_spec config_specs[CONFIG_SPEC_COUNT];
extern const config_group_spec config_groups[CONFIG_GROUP_COUNT];

/* The row for group.name, or NULL. */
const config_spec *config_spec_find(const char *group, const char *name);
/* The group row, or NULL. */
const config_group_spec *config_group_find(const char *name);

/* Writes the choice's names joined by '|' ("full|values|signal|noise"). */
void config_choice_join(const config_choice *choice, char *out, size_t out_bytes);

/* ---- validation (config_validate.c) ------------------------------------------ */

/* The first rule a configuration breaks: the code, the settings involved
 * (the first is the one the message names; a file error points at the first
 * of them the file set) and the reason, without the setting's name. */
typedef struct config_violation {
    config_error code;
    const config_spec *settings[3]; /* NULL-padded */
    char reason[CONFIG_ERROR_MAX];
} config_violation;

/* One value against its row, as a file or a program gives it. Each returns
 * CONFIG_OK, or fills *v (settings[0] = spec) and returns its code. An
 * integer is checked before it is narrowed to its field; text may be any
 * length (the field holds CONFIG_STRING_MAX - 1 bytes). */
config_error config_check_integer(const config_spec *spec, int64_t value, config_violation *v);
config_error config_check_real(const config_spec *spec, double value, config_violation *v);
/* A string setting: shorter than the field, "" only where the row allows it,
 * then its kind's form: ENDPOINT a known transport and an address; HOST_PORT
 * "HOST:PORT", HOST a name or an IPv4 address, or an IPv6 address in
 * brackets ("[::1]:9464"), PORT 0..65535 (0: any free port). */
config_error config_check_string(const config_spec *spec, const char *text, size_t length,
                                 config_violation *v);

/* A list setting's entries against its row (count, then each entry). */
config_error config_check_int_list(const config_spec *spec, const config_int_list *list, config_violation *v);

/* Every setting of cfg against the table, then the rules between settings;
 * CONFIG_OK or the first violation (config_validate formats it). */
config_error config_find_violation(const eigstream_config *cfg, config_violation *v);

#endif
