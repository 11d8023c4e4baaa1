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

#include "eig.h"      /* eig_backend, eig_precision: the solver owns them */
#include "form_iq.h"  /* form_window: the IQ forming owns it (header only) */
#include "log.h"      /* log_level: log.level's values */
#include "protocol.h" /* protocol_mode: the wire format owns output.mode's values */

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a string setting with its NUL: room for input.endpoint's list of
 * CONFIG_INPUT_IO_THREADS_MAX endpoints of ~120 bytes each (long ipc:// paths);
 * 256 held only about 30 bytes each. */
#define CONFIG_STRING_MAX 1024
/* Most entries of a list setting (solver.gpu_devices). */
#define CONFIG_LIST_MAX 16
#define CONFIG_ADDRESSES_MAX 16 /* entries of an address list (metrics.http_scrapers) */

/* A list of integers in a file: name = [0, 1, 2]; ([] = empty). */
typedef struct config_int_list {
    int count;                    /* 0..CONFIG_LIST_MAX */
    int values[CONFIG_LIST_MAX];
} config_int_list;
#define CONFIG_ERROR_MAX 512

/* An output mode's name (full, values, signal, noise; not none): 0 and *out
 * set, or -1 and *out untouched. */
int config_output_mode_parse(const char *name, protocol_mode *out);

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
/* realtime.on_failure: a real-time setting the system does not permit. */
typedef enum config_realtime_failure { CONFIG_REALTIME_WARN = 0, CONFIG_REALTIME_ERROR } config_realtime_failure;
/* The threads realtime.cpu_affinity_* pins, in this order. CONFIG_THREAD_IO
 * stands for ZeroMQ's background threads (its I/O threads and its reaper),
 * which libzmq starts and pins itself. */
typedef enum config_realtime_thread {
    CONFIG_THREAD_RECEIVE = 0, CONFIG_THREAD_FORM, CONFIG_THREAD_SOLVE, CONFIG_THREAD_PUBLISH, CONFIG_THREAD_IO,
    CONFIG_THREAD_COUNT_
} config_realtime_thread;
/* form.input: what the input frames carry. */
typedef enum config_form_input {
    CONFIG_FORM_INPUT_COVARIANCE = 0, /* covariance frames (kind 1): the receiver formed the matrices */
    CONFIG_FORM_INPUT_IQ              /* IQ cube frames (kind 3): the daemon forms them (form_iq.h) */
} config_form_input;

#define CONFIG_COPY_THREADS_MAX 16 /* input.copy_threads */
#define CONFIG_INPUT_IO_THREADS_MAX 8 /* input.io_threads */

typedef struct eigstream_config {
    struct {
        char endpoint[CONFIG_STRING_MAX];  /* "tcp://127.0.0.1:5550" */
        config_input_pattern pattern;      /* pull */
        int bind;                          /* 1: bind, 0: connect (default 1) */
        int hwm;                           /* ZMQ_RCVHWM in messages, default 4 */
        int64_t max_message_bytes;         /* ZMQ_MAXMSGSIZE and payload limit, default 128 MiB */
        int copy_threads;                  /* threads copying a large frame's parts, 0 = auto (default) */
        int io_threads;                    /* ZeroMQ I/O threads (and, connecting, connections) reading the input, 1 */
        int reorder_ms;                    /* io_threads > 1: how long a missing seq is waited for, default 20 */
        int fragment_timeout_ms;           /* how long a fragmented frame waits for its next fragment, 1000 */
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
        protocol_mode mode;         /* PROTOCOL_MODE_FULL (NONE is not a choice) */
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
        /* IQ cube input (form.input = iq); unused with covariance input. */
        config_form_input input;           /* covariance */
        int iq_format;                     /* protocol_iq_format wire code the cubes carry, ci16_le */
        int iq_layout;                     /* protocol_iq_layout of the cubes, cpg */
        int pulses;                        /* P per cube, 180 */
        int range_gates;                   /* G per pulse, 256 */
        form_window window;                /* slow-time window, hann */
        double sidelobe_db;                /* chebyshev, taylor: sidelobe level in dB, 40 */
        int fft_size;                      /* Doppler FFT size F >= pulses; 0 = pulses */
        int doppler_first;                 /* first Doppler bin made into matrices, 0 */
        int doppler_bins;                  /* bins made into matrices; 0 = all F */
        int range_segments;                /* gates split into this many segments, 1 */
        int guard_gates;                   /* excluded on each side of a segment's centre gate, 0 */
        int fft_threads;                   /* CPU forming threads, 0 = all cores */
        char fft_wisdom_file[CONFIG_STRING_MAX]; /* FFTW wisdom file, "" = none */
    } form;
    struct {
        char endpoint[CONFIG_STRING_MAX];  /* metrics PUB, "tcp://127.0.0.1:5552"; "" = off */
        int interval_ms;                   /* 1000 */
        char http[CONFIG_STRING_MAX];      /* HTTP HOST:PORT, "127.0.0.1:9464"; "" = off */
        int http_deadline_s;               /* a request answered within this, 10 */
        char http_scrapers[CONFIG_STRING_MAX]; /* addresses with slots kept, "" = none */
    } metrics;
    struct {
        log_level level;            /* info */
    } log;
    struct {
        int stall_ms;                      /* a stage step longer than this stops WATCHDOG=1, 30000 */
    } service;
    struct {
        int mlockall;                      /* lock every page in memory, default 0 */
        int priority;                      /* SCHED_FIFO priority of the stage threads, 0 = off */
        char cpu_affinity[CONFIG_THREAD_COUNT_][CONFIG_STRING_MAX]; /* CPU lists, "" = any */
        int gpu_numa;                      /* threads and host memory on the GPU's NUMA node, 0 */
        config_realtime_failure on_failure; /* warn */
    } realtime;
    struct {
        char curve_secret_key[CONFIG_STRING_MAX]; /* the server's key_secret file; "" = CURVE off */
        char curve_allow[CONFIG_STRING_MAX];      /* client public keys: a file or a directory */
        char curve_dispatcher_key[CONFIG_STRING_MAX]; /* input.pattern dispatch: eigstream-dispatch's BASE.key */
    } security;
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
 * without the L suffix) are range errors; @include is refused. Only a
 * regular file is read, opened O_NONBLOCK (a FIFO, socket or device could
 * block the caller: refused, CONFIG_EIO). */
config_error config_load(eigstream_config *cfg, const char *path, char *err, size_t err_bytes);
/* As config_load, for a file that replaces a running configuration (SIGHUP):
 * also refuses a file that sets no setting at all (empty, or comments only)
 * and one whose last byte is not a newline (cut short while being written),
 * so that a reload never takes a half-written file for "every default".
 * Both are CONFIG_ESYNTAX with "FILE: reason" in err. */
config_error config_load_replacement(eigstream_config *cfg, const char *path, char *err, size_t err_bytes);

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

/* A setting whose value differs between two configurations (config_diff). */
typedef struct config_change {
    const char *group, *name; /* "frame", "deadline_ms" */
    int live;                 /* SIGHUP may apply it to the running daemon */
} config_change;

/* Compares before and after setting by setting, in table order; writes the
 * first max differences into changes and returns how many there are. */
size_t config_diff(const eigstream_config *before, const eigstream_config *after, config_change *changes,
                   size_t max);
/* The live settings' names, "log.level, frame.deadline_ms, ..." in table
 * order (for --help). */
void config_live_names(char *out, size_t out_bytes);
/* dst's live settings (CONFIG_FLAG_LIVE rows) <- src's; the rest of dst stays. */
void config_copy_live(eigstream_config *dst, const eigstream_config *src);
/* Solver workers the daemon runs: the entries of solver.gpu_devices when
 * it has any, else solver.workers (1..CONFIG_LIST_MAX). */
int config_solver_worker_count(const eigstream_config *cfg);
/* The CUDA device of worker w (0 <= w < config_solver_worker_count):
 * solver.gpu_devices[w], else solver.gpu_device. */
int config_solver_worker_device(const eigstream_config *cfg, int w);

/* Entries of an endpoint list (text of length bytes, entries separated by
 * commas): 1 for a single endpoint. */
int config_endpoint_count(const char *text, size_t length);
/* The endpoint input socket k (0 <= k < input.io_threads) attaches to: the
 * k-th entry of a list, else input.endpoint itself; NUL-terminated in out. */
void config_input_endpoint(const eigstream_config *cfg, int k, char *out, size_t out_bytes);

/* The recording input.endpoint names ("file:NAME" -> "NAME"), or NULL when
 * the input is a ZeroMQ endpoint. */
const char *config_input_file(const eigstream_config *cfg);

/* Names used in files and logs: "pull", "drop_oldest", ... An out-of-range
 * value gives "?". The names of solver.backend, solver.precision and
 * output.mode come from their owners: eig_backend_name, eig_precision_name
 * (eig.h) and protocol_mode_name (above). */
const char *config_input_pattern_name(config_input_pattern p);
const char *config_output_pattern_name(config_output_pattern p);
const char *config_late_policy_name(config_late_policy p);
const char *config_fallback_name(config_fallback f);
const char *config_replay_timing_name(config_replay_timing t);
const char *config_overflow_policy_name(config_overflow_policy p);
const char *config_realtime_failure_name(config_realtime_failure f);

/* A CPU list ("0-3,8,10-11": CPU numbers below CONFIG_CPU_MAX, ranges
 * ascending): 0 and the CPUs set in mask (bit c of mask[c / 64]), or -1
 * when text is not one. "" is the empty set. */
#define CONFIG_CPU_MAX 1024
int config_cpu_list_parse(const char *text, uint64_t mask[CONFIG_CPU_MAX / 64]);
const char *config_form_input_name(config_form_input i);

/* IQ input: the effective FFT size (form.fft_size, 0 = form.pulses), Doppler
 * bins (form.doppler_bins, 0 = all of them) and the snapshot count K of each
 * matrix (form_iq.h: the segment's gates less the cell under test and its
 * guards), from valid settings. form_iq_snapshots computes K from the forming
 * parameters path_params_from_config fills from these. */
uint32_t config_form_fft_size(const eigstream_config *cfg);
uint32_t config_form_doppler_bins(const eigstream_config *cfg);
uint32_t config_form_snapshots(const eigstream_config *cfg);

#ifdef __cplusplus
}
#endif

#endif
