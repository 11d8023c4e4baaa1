/*
 * config.h - the daemon's configuration: one table of settings drives
 * loading (libconfig), validation, `eigstream --help-config` and the shipped
 * config/eigstream.cfg (a test checks that file against the table).
 *
 * Every setting has a default; with no file the defaults run. Errors name the
 * file, the line and the setting:
 *   eigstream.cfg:14: output.mode: expected one of full|values|signal|noise
 * Unknown settings and out-of-range values are errors. config_validate
 * checks a configuration built in code by the same table and rules.
 */
#ifndef EIGSTREAM_CONFIG_H
#define EIGSTREAM_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eig.h" /* eig_backend, eig_precision: the solver owns them */

#ifdef __cplusplus
extern "C" {
#endif

#define CONFIG_STRING_MAX 256
/* Most entries of a list setting (solver.gpu_devices). */
#define CONFIG_LIST_MAX 16

/* A list of integers in a file: name = [0, 1, 2]; ([] = empty). */
typedef struct config_int_list {
    int count;                    /* 0..CONFIG_LIST_MAX */
    int values[CONFIG_LIST_MAX];
} config_int_list;
#define CONFIG_ERROR_MAX 512

/* What an eigenspace frame carries per matrix (output.mode). The one enum of
 * the concept: the wire's mode byte holds these values (docs/protocol.md;
 * covariance frames carry CONFIG_MODE_NONE), and protocol.h, the pipeline and
 * the tools use it. config/ owns it because config/ sits below pipeline/:
 * the settings table and the wire codec both read it downwards. */
typedef enum config_output_mode {
    CONFIG_MODE_NONE = 0,   /* covariance frames on the wire; not a setting */
    CONFIG_MODE_FULL = 1,   /* all n eigenvectors */
    CONFIG_MODE_VALUES = 2, /* eigenvalues only */
    CONFIG_MODE_SIGNAL = 3, /* the d eigenvectors of the largest eigenvalues */
    CONFIG_MODE_NOISE = 4   /* the n - d eigenvectors of the smallest */
} config_output_mode;

/* "none", "full", "values", "signal", "noise"; "unknown" for a bad value (an
 * unchecked wire byte may be passed). Inline: the wire codec links no
 * config library. */
static inline const char *config_output_mode_name(int mode)
{
    switch (mode) {
    case CONFIG_MODE_NONE: return "none";
    case CONFIG_MODE_FULL: return "full";
    case CONFIG_MODE_VALUES: return "values";
    case CONFIG_MODE_SIGNAL: return "signal";
    case CONFIG_MODE_NOISE: return "noise";
    default: return "unknown";
    }
}

/* An output mode's name (full, values, signal, noise; not none): 0 and *out
 * set, or -1 and *out untouched. */
int config_output_mode_parse(const char *name, config_output_mode *out);

/* dispatch: a DEALER asking eigstream-dispatch for frames with credit (docs/scaleout.md). */
typedef enum config_input_pattern { CONFIG_INPUT_PULL = 0, CONFIG_INPUT_SUB, CONFIG_INPUT_DISPATCH } config_input_pattern;
typedef enum config_output_pattern { CONFIG_OUTPUT_PUB = 0, CONFIG_OUTPUT_PUSH } config_output_pattern;
/* Pacing of a recording read by the daemon (input.endpoint = "file:NAME"). */
typedef enum config_replay_timing {
    CONFIG_REPLAY_MAX = 0,  /* as fast as the pipeline takes frames (lossless) */
    CONFIG_REPLAY_ORIGINAL  /* the recorded inter-frame times, scaled by 1/input.replay_speed */
} config_replay_timing;
typedef enum config_late_policy { CONFIG_LATE_PUBLISH = 0, CONFIG_LATE_DROP } config_late_policy;
/* solver.fallback: what a frame path error leads to (backends cuda, auto). */
typedef enum config_fallback { CONFIG_FALLBACK_NONE = 0, CONFIG_FALLBACK_CPU } config_fallback;
typedef enum config_overflow_policy { CONFIG_OVERFLOW_DROP_OLDEST = 0, CONFIG_OVERFLOW_BLOCK } config_overflow_policy;
typedef enum config_log_level {
    CONFIG_LOG_ERROR = 0, CONFIG_LOG_WARN, CONFIG_LOG_INFO, CONFIG_LOG_DEBUG
} config_log_level;

typedef struct eigstream_config {
    struct {
        char endpoint[CONFIG_STRING_MAX];  /* "tcp://127.0.0.1:5550" */
        config_input_pattern pattern;      /* pull */
        int bind;                          /* 1: bind, 0: connect (default 1) */
        int hwm;                           /* ZMQ_RCVHWM in messages, default 4 */
        int64_t max_message_bytes;         /* ZMQ_MAXMSGSIZE and payload limit, default 128 MiB */
        config_replay_timing replay_timing; /* file input: max (default) or original */
        double replay_speed;               /* file input, original timing: speed factor, default 1 */
        int heartbeat_ms;                  /* pattern dispatch: heartbeat interval, default 1000 */
        int heartbeat_liveness;            /* pattern dispatch: silent intervals before the dispatcher counts as gone, 3 */
    } input;
    struct {
        char endpoint[CONFIG_STRING_MAX];  /* "tcp://127.0.0.1:5551" */
        config_output_pattern pattern;     /* pub */
        int bind;                          /* default 1 */
        int hwm;                           /* ZMQ_SNDHWM, default 4 */
        config_output_mode mode;         /* CONFIG_MODE_FULL (NONE is not a choice) */
        int signal_dimension;              /* 0: MDL estimate per matrix; 1..n: fixed d */
        int snapshots;                     /* K for MDL when a frame says 0; 0 = frame must say */
    } output;
    struct {
        eig_backend backend;               /* EIG_BACKEND_AUTO */
        eig_precision precision;           /* EIG_COMPLEX_DOUBLE */
        int n;                             /* 128; 1..EIG_N_MAX, cuda up to EIG_CUDA_N_MAX */
        int matrices;                      /* matrices per frame, 180 */
        int gpu_device;                    /* 0 */
        config_int_list gpu_devices;       /* [] = one worker per solver.workers on gpu_device */
        int workers;                       /* solver workers (host backends, or per gpu_device), 1 */
        int cpu_threads;                   /* 0 = all cores */
        config_fallback fallback;          /* none */
    } solver;
    struct {
        int deadline_ms;                   /* receipt to publish, 1000 */
        config_late_policy late_policy;    /* publish (flagged) */
        int queue_depth;                   /* frames per inter-stage queue, 4 */
        config_overflow_policy overflow_policy; /* drop_oldest */
    } frame;
    struct {
        int diagonal_loading;              /* 0 = off (default) */
        double diagonal_loading_db;        /* loading = 10^(dB/10) * trace/n, default -30 */
        int forward_backward;              /* forward-backward averaging, default 0 */
    } form;
    struct {
        char endpoint[CONFIG_STRING_MAX];  /* metrics PUB, "tcp://127.0.0.1:5552"; "" = off */
        int interval_ms;                   /* 1000 */
        char http[CONFIG_STRING_MAX];      /* HTTP HOST:PORT, "127.0.0.1:9464"; "" = off */
    } metrics;
    struct {
        config_log_level level;            /* info */
    } log;
} eigstream_config;

typedef enum config_error {
    CONFIG_OK = 0,
    CONFIG_EIO,      /* file unreadable */
    CONFIG_ESYNTAX,  /* libconfig parse error */
    CONFIG_EUNKNOWN, /* unknown setting */
    CONFIG_ETYPE,    /* wrong type */
    CONFIG_ERANGE,   /* out of range / not one of the allowed names */
    CONFIG_EINVAL    /* settings inconsistent with each other */
} config_error;

/* Fills cfg with the built-in defaults. */
void config_defaults(eigstream_config *cfg);

/* Loads path over the defaults. On error returns the code and writes a
 * one-line message "FILE:LINE: setting: reason" (LINE omitted when unknown)
 * into err (CONFIG_ERROR_MAX bytes); cfg is then unspecified (this
 * implementation leaves it untouched). FILE is path as given. err may be
 * NULL. Integer literals that libconfig would silently wrap (4294967296
 * without the L suffix) are range errors; @include is refused. */
config_error config_load(eigstream_config *cfg, const char *path, char *err, size_t err_bytes);

/* Checks every setting of cfg against the settings table (range, choices,
 * endpoint form) and every rule between settings (signal_dimension <= n,
 * the backend's n limit, max_message_bytes holds one frame, distinct
 * endpoints, multicast needs pub/sub). config_load runs it on every file;
 * run it on any configuration built or changed in code (command-line
 * overrides, tests) before using it. Returns CONFIG_OK, or CONFIG_ERANGE /
 * CONFIG_EINVAL for the first rule broken, with "group.name: reason" in err
 * (CONFIG_ERROR_MAX bytes; err may be NULL). */
config_error config_validate(const eigstream_config *cfg, char *err, size_t err_bytes);

/* Prints every setting: name, type, range or choices, default, help. */
void config_print_help(FILE *out);

/* Writes the default configuration file (what config/eigstream.cfg holds). */
void config_write_default(FILE *out);

/* Writes cfg as a complete configuration file in the same layout (every
 * setting, with the documentation comments); config_load reads it back to
 * the same values. For logging the effective configuration. */
void config_write_settings(FILE *out, const eigstream_config *cfg);

const char *config_strerror(config_error e);

/* Solver workers the daemon runs: the entries of solver.gpu_devices when
 * it has any, else solver.workers (1..CONFIG_LIST_MAX). */
int config_solver_worker_count(const eigstream_config *cfg);
/* The CUDA device of worker w (0 <= w < config_solver_worker_count):
 * solver.gpu_devices[w], else solver.gpu_device. */
int config_solver_worker_device(const eigstream_config *cfg, int w);

/* The recording input.endpoint names ("file:NAME" -> "NAME"), or NULL when
 * the input is a ZeroMQ endpoint. */
const char *config_input_file(const eigstream_config *cfg);

/* Names used in files and logs: "pull", "drop_oldest", ... An out-of-range
 * value gives "?". The names of solver.backend, solver.precision and
 * output.mode come from their owners: eig_backend_name, eig_precision_name
 * (eig.h) and config_output_mode_name (above). */
const char *config_log_level_name(config_log_level l);
const char *config_input_pattern_name(config_input_pattern p);
const char *config_output_pattern_name(config_output_pattern p);
const char *config_late_policy_name(config_late_policy p);
const char *config_fallback_name(config_fallback f);
const char *config_replay_timing_name(config_replay_timing t);
const char *config_overflow_policy_name(config_overflow_policy p);

#ifdef __cplusplus
}
#endif

#endif
