/*
 * main.c - the eigstream daemon: parse the command line, load the
 * configuration, create the pipeline, run it until SIGINT/SIGTERM, drain,
 * exit 0. Only wiring lives here (config/ and pipeline/ do the work).
 *
 * Signals: SIGINT and SIGTERM are blocked before the pipeline starts (every
 * stage and ZeroMQ thread inherits the mask); their handler forwards them
 * through a pipe to a watcher thread. The first one calls pipeline_stop: the
 * receiver stops reading and
 * every frame already accepted is solved and published (or counted as
 * dropped); a second one exits at once with status 1. SIGHUP re-reads the
 * configuration file on a reload thread of its own (service_reload.h), so a
 * file that blocks its reader never delays a stop. Under systemd the daemon notifies
 * READY/STATUS/WATCHDOG/STOPPING (service_notify.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "eig.h"
#include "log.h"
#include "pipeline.h"
#include "protocol.h"
#include "service_notify.h"
#include "service_reload.h"
#include "transport_memory.h"

#ifndef EIGSTREAM_VERSION
#define EIGSTREAM_VERSION "unknown"
#endif

static void print_usage(FILE *out)
{
    char live[512];
    config_live_names(live, sizeof live);
    fprintf(out,
            "usage: eigstream [-c FILE] [overrides]     run the daemon (defaults without -c)\n"
            "       eigstream --check-config FILE      validate FILE, print errors as FILE:LINE: setting: reason\n"
            "       eigstream --help-config            every setting: type, range, default, help\n"
            "       eigstream --write-config           print the default configuration file\n"
            "       eigstream --help | --version\n"
            "\n"
            "overrides (applied after the file):\n"
            "  --backend auto|cpu|lapack|cuda       solver.backend\n"
            "  --log-level error|warn|info|debug    log.level\n"
            "  --input ENDPOINT                     input.endpoint  (default tcp://127.0.0.1:5550, PULL bind)\n"
            "  --output ENDPOINT                    output.endpoint (default tcp://127.0.0.1:5551, PUB bind)\n"
            "  --metrics ENDPOINT|off               metrics.endpoint (default tcp://127.0.0.1:5552)\n"
            "\n"
            "signals: SIGINT/SIGTERM stop accepting, drain and exit; SIGHUP re-reads -c FILE and\n"
            "applies the live settings, refusing (by name) changes to any other:\n"
            "  %s\n"
            "Under systemd (NOTIFY_SOCKET set): READY, STATUS, WATCHDOG and STOPPING notifications.\n"
            "\n"
            "exit status: 0 after a clean drain, 1 on a configuration or startup error\n"
            "(or a second SIGINT/SIGTERM during the drain), 2 on a usage error.\n",
            live);
}

static int parse_log_level(const char *name, log_level *out)
{
    for (int l = LOG_LEVEL_ERROR; l <= LOG_LEVEL_DEBUG; l++)
        if (strcmp(name, log_level_name((log_level)l)) == 0) {
            *out = (log_level)l;
            return 0;
        }
    return -1;
}

static int copy_endpoint(char *dst, const char *src, const char *option)
{
    if (strlen(src) >= CONFIG_STRING_MAX) {
        fprintf(stderr, "eigstream: %s: endpoint longer than %d bytes\n", option, CONFIG_STRING_MAX - 1);
        return -1;
    }
    strcpy(dst, src);
    return 0;
}

typedef struct options {
    const char *config_path;
    const char *backend, *log_level, *input, *output, *metrics;
} options;

/* Returns -1 to exit 0 (an informational option ran), 0 to run, > 0 to exit
 * with that status. */
static int parse_options(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **value = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_usage(stdout);
            return -1;
        } else if (strcmp(a, "--version") == 0) {
            printf("eigstream %s (cuda backend %s)\n", EIGSTREAM_VERSION, eig_cuda_built() ? "built" : "not built");
            return -1;
        } else if (strcmp(a, "--help-config") == 0) {
            config_print_help(stdout);
            return -1;
        } else if (strcmp(a, "--write-config") == 0) {
            config_write_default(stdout);
            return -1;
        } else if (strcmp(a, "--check-config") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "eigstream: --check-config needs a FILE\n");
                return 2;
            }
            eigstream_config cfg;
            char err[CONFIG_ERROR_MAX];
            config_defaults(&cfg);
            if (config_load(&cfg, argv[i + 1], err, sizeof err) != CONFIG_OK) {
                fprintf(stderr, "%s\n", err);
                return 1;
            }
            printf("%s: ok\n", argv[i + 1]);
            return -1;
        } else if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) {
            value = &o->config_path;
        } else if (strcmp(a, "--backend") == 0) {
            value = &o->backend;
        } else if (strcmp(a, "--log-level") == 0) {
            value = &o->log_level;
        } else if (strcmp(a, "--input") == 0) {
            value = &o->input;
        } else if (strcmp(a, "--output") == 0) {
            value = &o->output;
        } else if (strcmp(a, "--metrics") == 0) {
            value = &o->metrics;
        } else {
            fprintf(stderr, "eigstream: unknown option '%s' (try --help)\n", a);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "eigstream: %s needs a value\n", a);
            return 2;
        }
        *value = argv[++i];
    }
    return 0;
}

static int apply_overrides(const options *o, eigstream_config *cfg)
{
    if (o->backend != NULL && eig_backend_parse(o->backend, &cfg->solver.backend) != EIG_OK) {
        fprintf(stderr, "eigstream: --backend %s: expected one of auto|cpu|lapack|cuda\n", o->backend);
        return -1;
    }
    if (o->log_level != NULL && parse_log_level(o->log_level, &cfg->log.level) != 0) {
        fprintf(stderr, "eigstream: --log-level %s: expected one of error|warn|info|debug\n", o->log_level);
        return -1;
    }
    if (o->input != NULL && copy_endpoint(cfg->input.endpoint, o->input, "--input") != 0)
        return -1;
    if (o->output != NULL && copy_endpoint(cfg->output.endpoint, o->output, "--output") != 0)
        return -1;
    if (o->metrics != NULL) {
        if (strcmp(o->metrics, "off") == 0)
            cfg->metrics.endpoint[0] = '\0';
        else if (copy_endpoint(cfg->metrics.endpoint, o->metrics, "--metrics") != 0)
            return -1;
    }
    return 0;
}

/* The handler only writes the signal number to a pipe (async-signal-safe);
 * the watcher thread reads it. A handler rather than sigwait alone because
 * libraries start threads before main can block anything (OpenBLAS's pool):
 * a signal delivered to one of those must still reach the watcher. */
static int signal_pipe[2] = {-1, -1};

/* SIGINT, SIGTERM and SIGHUP: blocked in every thread main starts, taken by
 * the watcher (signal_main) and any thread a library started before main. */
static void stop_signal_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

static void signal_forward(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(signal_pipe[1], &b, 1) < 0) {
        /* Nothing safe to do in a handler; the pipe only fills after 64 Ki signals. */
    }
    errno = saved;
}

/* What the signal thread acts on. */
typedef struct signal_context {
    pipeline *p;
    service_notify *notify;
    service_reload reload;
} signal_context;

static void *signal_main(void *arg)
{
    signal_context *ctx = arg;
    pipeline *p = ctx->p;
    int stops = 0;
    /* Inherited blocked from main: unblocked here, so that the handler always
     * has a thread to run on. Without this, a process in which no library
     * started a thread before main (OpenBLAS held to one thread by
     * OPENBLAS_NUM_THREADS=1, or on one core) left every signal pending for
     * ever: SIGTERM did nothing. One that came before this thread started
     * is delivered now. */
    sigset_t stop_signals;
    stop_signal_set(&stop_signals);
    pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
    for (;;) {
        unsigned char b;
        ssize_t got = read(signal_pipe[0], &b, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || b == 0)
            return NULL; /* main: the pipeline has finished */
        if (b == SIGHUP) {
            service_reload_request(&ctx->reload); /* reads on its own thread: never blocks this one */
        } else if (++stops == 1) {
            LOG_INFO("main", "%s: stop accepting, draining the frames in flight", strsignal(b));
            service_notify_stopping(ctx->notify);
            pipeline_stop(p);
        } else {
            LOG_ERROR("main", "%s again: exiting without finishing the drain", strsignal(b));
            _exit(1);
        }
    }
}

static int apply_overrides_again(const void *o, eigstream_config *cfg)
{
    return apply_overrides(o, cfg);
}

/* The warm-up solve, then the notifier and READY=1 (the sockets are bound
 * by pipeline_create); 0 or -1, logged. */
static int service_start(signal_context *ctx, const eigstream_config *cfg)
{
    char err[CONFIG_ERROR_MAX];
    if (pipeline_warm_up(ctx->p, err, sizeof err) != PIPELINE_OK) {
        LOG_ERROR("main", "cannot start: %s", err);
        return -1;
    }
    if (service_notify_start(&ctx->notify, ctx->p, cfg, err, sizeof err) != 0 ||
        service_notify_ready(ctx->notify, err, sizeof err) != 0) {
        LOG_ERROR("main", "cannot start: %s", err);
        service_notify_stop(&ctx->notify);
        return -1;
    }
    return 0;
}

static void log_startup(const eigstream_config *cfg, pipeline *p)
{
    char input[CONFIG_STRING_MAX + 64];
    if (config_input_file(cfg) != NULL)
        snprintf(input, sizeof input, "recording %s (%s timing, lossless)", config_input_file(cfg),
                 config_replay_timing_name(cfg->input.replay_timing));
    else
        snprintf(input, sizeof input, "%s %s %s", config_input_pattern_name(cfg->input.pattern),
                 cfg->input.bind ? "bind" : "connect", cfg->input.endpoint);
    LOG_INFO("main",
             "eigstream %s: backend %s (solver.backend %s), complex %s, n=%d, matrices=%d, mode %s; input %s; "
             "output %s %s %s; metrics %s every %d ms; deadline %d ms (late %s), queue_depth %d (overflow %s)",
             EIGSTREAM_VERSION, pipeline_backend_name(p), eig_backend_name(cfg->solver.backend),
             eig_precision_name(cfg->solver.precision), cfg->solver.n, cfg->solver.matrices,
             protocol_mode_name((uint8_t)cfg->output.mode), input,
             config_output_pattern_name(cfg->output.pattern), cfg->output.bind ? "bind" : "connect",
             cfg->output.endpoint, cfg->metrics.endpoint[0] ? cfg->metrics.endpoint : "off",
             cfg->metrics.interval_ms, cfg->frame.deadline_ms, config_late_policy_name(cfg->frame.late_policy),
             cfg->frame.queue_depth, config_overflow_policy_name(cfg->frame.overflow_policy));
    if (cfg->form.input == CONFIG_FORM_INPUT_IQ) {
        uint32_t fft = config_form_fft_size(cfg), bins = config_form_doppler_bins(cfg);
        LOG_INFO("main",
                 "IQ input: %d channels x %d pulses x %d gates, %s %s; %s window, %u-point Doppler FFT, bins "
                 "%d..%u mod %u x %d range segments (guard %d): K = %u snapshots per matrix",
                 cfg->solver.n, cfg->form.pulses, cfg->form.range_gates, protocol_iq_format_name(cfg->form.iq_format),
                 protocol_iq_layout_name(cfg->form.iq_layout), form_window_name(cfg->form.window), fft,
                 cfg->form.doppler_first, (uint32_t)cfg->form.doppler_first + bins - 1, fft, cfg->form.range_segments,
                 cfg->form.guard_gates, config_form_snapshots(cfg));
    }
}

int main(int argc, char **argv)
{
    /* Before any thread allocates (transport_memory.h); pipeline_create
     * calls it again and logs if the allocator cannot be tuned. */
    (void)transport_tune_allocator();
    static options o; /* static: a reload thread reads the overrides (see ctx below) */
    eigstream_config cfg;
    char err[CONFIG_ERROR_MAX];

    int status = parse_options(argc, argv, &o);
    if (status != 0)
        return status < 0 ? 0 : status;
    config_defaults(&cfg);
    if (o.config_path != NULL && config_load(&cfg, o.config_path, err, sizeof err) != CONFIG_OK) {
        fprintf(stderr, "eigstream: %s\n", err);
        return 1;
    }
    if (apply_overrides(&o, &cfg) != 0)
        return 2;
    /* The overrides go through the same validator as a file (a cuda backend
     * with a large n, an endpoint equal to another, ...). */
    if (config_validate(&cfg, err, sizeof err) != CONFIG_OK) {
        fprintf(stderr, "eigstream: with the command-line overrides: %s\n", err);
        return 1;
    }
    log_set_level(cfg.log.level);

    /* Our threads (stages, ZeroMQ's) never take the signals: blocked before
     * they start and inherited; the watcher unblocks them for itself, and the
     * handler forwards them to it. */
    if (pipe(signal_pipe) != 0) {
        fprintf(stderr, "eigstream: pipe: %s\n", strerror(errno));
        return 1;
    }
    sigset_t stop_signals;
    stop_signal_set(&stop_signals);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = signal_forward;
    sigfillset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
    signal(SIGPIPE, SIG_IGN);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

    pipeline *p = NULL;
    pipeline_error e = pipeline_create(&p, &cfg, err, sizeof err);
    if (e != PIPELINE_OK) {
        LOG_ERROR("main", "cannot start: %s", err[0] ? err : pipeline_strerror(e));
        return 1;
    }
    log_startup(&cfg, p);
    /* static: a detached reload thread may still be reading a file while
     * main returns (service_reload_close has cut it off the pipeline). */
    static signal_context ctx;
    ctx.p = p;
    service_reload_init(&ctx.reload, o.config_path, apply_overrides_again, &o, &cfg, p, &ctx.notify);
    if (service_start(&ctx, &cfg) != 0) {
        pipeline_destroy(&p);
        return 1;
    }

    pthread_t watcher;
    int rc = pthread_create(&watcher, NULL, signal_main, &ctx);
    if (rc != 0) {
        LOG_ERROR("main", "cannot start the signal thread: %s", strerror(rc));
        service_notify_stop(&ctx.notify);
        pipeline_destroy(&p);
        return 1;
    }
    e = pipeline_run(p);
    service_notify_stopping(ctx.notify);
    unsigned char done = 0;
    if (write(signal_pipe[1], &done, 1) == 1)
        pthread_join(watcher, NULL);
    service_reload_close(&ctx.reload);
    service_notify_stop(&ctx.notify);
    pipeline_destroy(&p);
    if (e != PIPELINE_OK) {
        LOG_ERROR("main", "pipeline: %s", pipeline_strerror(e));
        return 1;
    }
    LOG_INFO("main", "stopped cleanly");
    return 0;
}
