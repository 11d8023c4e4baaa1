/*
 * config_table.h - the settings table (internal to config/).
 *
 * One row per setting: where it lives in the file (group.name), its kind,
 * where it lives in eigstream_config, its range or choices, its default and
 * its help. Loading (config_load.c), the default file and --help-config
 * (config_write.c) all read this table and nothing else.
 */
#ifndef EIGSTREAM_CONFIG_TABLE_H
#define EIGSTREAM_CONFIG_TABLE_H

#include "config.h"

typedef enum config_kind {
    CONFIG_KIND_BOOL,     /* int 0/1; file: true | false */
    CONFIG_KIND_INT,      /* int in [min, max]; file: 32-bit integer */
    CONFIG_KIND_INT64,    /* int64_t in [min, max]; file: integer, L suffix above 2^31-1 */
    CONFIG_KIND_REAL,     /* double in [min_real, max_real]; file: number */
    CONFIG_KIND_CHOICE,   /* enum (int-sized); file: one of the names in choices */
    CONFIG_KIND_ENDPOINT  /* char[CONFIG_STRING_MAX]; file: ZeroMQ endpoint string */
} config_kind;

enum {
    CONFIG_FLAG_EMPTY_OK = 1u << 0 /* ENDPOINT: "" is allowed and means off */
};

typedef struct config_spec {
    const char *group;            /* "output" */
    const char *name;             /* "mode" */
    config_kind kind;
    size_t offset;                /* of the field in eigstream_config */
    int64_t min, max;             /* INT, INT64 */
    double min_real, max_real;    /* REAL */
    const char *const *choices;   /* CHOICE: names indexed by enum value, NULL-terminated */
    unsigned flags;
    int64_t default_int;          /* BOOL (0/1), INT, INT64, CHOICE (the enum value) */
    double default_real;          /* REAL */
    const char *default_string;   /* ENDPOINT */
    const char *help;             /* prose; config_write.c wraps it */
} config_spec;

typedef struct config_group_spec {
    const char *name;
    const char *help;
} config_group_spec;

#define CONFIG_SPEC_COUNT 28
#define CONFIG_GROUP_COUNT 7

/* Settings in file order; the settings of one group are contiguous and the
 * groups appear in config_groups order. */
extern const config_spec config_specs[CONFIG_SPEC_COUNT];
extern const config_group_spec config_groups[CONFIG_GROUP_COUNT];

/* The row for group.name, or NULL. */
const config_spec *config_spec_find(const char *group, const char *name);
/* The group row, or NULL. */
const config_group_spec *config_group_find(const char *name);

#endif
