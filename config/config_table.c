/*
 * config_table.c - every setting of the daemon, once: name, kind, field,
 * range or choices, default and help. Changing a row here changes loading,
 * validation, --help-config and the generated default file together; the
 * unit test then asks for config/eigstream.cfg to be regenerated.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_table.h"
#include "protocol.h" /* the IQ sample formats and layouts: the wire owns their names */

/* names[value], "?" outside the table. */
static const char *choice_name(const char *const *names, size_t count, int value)
{
    if (value < 0 || (size_t)value >= count)
        return "?";
    return names[value];
}

/* A choice row's concept: an int adapter of the owner's name function and
 * the enum's first and last value a setting may take. */
#define CONFIG_CHOICE(concept, type, name_function, first, last)                                   \
    static const char *concept##_name_of(int value) { return name_function((type)value); }      \
    static const config_choice concept##_choice = {concept##_name_of, first, last}

/* A config-only concept, the owner of its names: the one name table
 * (indexed by enum value, from first to last), config_<concept>_name
 * (config.h; "?" outside the table) and its choice row, all from one line. */
#define CONFIG_NAMED_CHOICE(concept, type, first, last, ...)                                       \
    static const char *const concept##_names[] = {__VA_ARGS__};                                  \
    _Static_assert(sizeof(concept##_names) / sizeof(concept##_names[0]) == (last) - (first) + 1, \
                   #concept ": one name per value");                                               \
    const char *config_##concept##_name(type value)                                                \
    {                                                                                              \
        return choice_name(concept##_names, sizeof(concept##_names) / sizeof(concept##_names[0]),  \
                           (int)value);                                                            \
    }                                                                                              \
    CONFIG_CHOICE(concept, type, config_##concept##_name, first, last)

CONFIG_NAMED_CHOICE(input_pattern, config_input_pattern, CONFIG_INPUT_PULL, CONFIG_INPUT_DISPATCH, "pull", "sub",
                    "dispatch");
CONFIG_NAMED_CHOICE(output_pattern, config_output_pattern, CONFIG_OUTPUT_PUB, CONFIG_OUTPUT_PUSH, "pub", "push");
CONFIG_NAMED_CHOICE(late_policy, config_late_policy, CONFIG_LATE_PUBLISH, CONFIG_LATE_DROP, "publish", "drop");
CONFIG_NAMED_CHOICE(fallback, config_fallback, CONFIG_FALLBACK_NONE, CONFIG_FALLBACK_CPU, "none", "cpu");
CONFIG_NAMED_CHOICE(replay_timing, config_replay_timing, CONFIG_REPLAY_MAX, CONFIG_REPLAY_ORIGINAL, "max",
                    "original");
CONFIG_NAMED_CHOICE(overflow_policy, config_overflow_policy, CONFIG_OVERFLOW_DROP_OLDEST, CONFIG_OVERFLOW_BLOCK,
                    "drop_oldest", "block");
CONFIG_NAMED_CHOICE(realtime_failure, config_realtime_failure, CONFIG_REALTIME_WARN, CONFIG_REALTIME_ERROR, "warn",
                    "error");
CONFIG_NAMED_CHOICE(form_input, config_form_input, CONFIG_FORM_INPUT_COVARIANCE, CONFIG_FORM_INPUT_IQ,
                    "covariance", "iq");

/* Concepts whose names their owners keep (eig.h, protocol.h, log.h, form_iq.h). */
CONFIG_CHOICE(output_mode, int, protocol_mode_name, PROTOCOL_MODE_FULL, PROTOCOL_MODE_NOISE);
CONFIG_CHOICE(log_level, log_level, log_level_name, LOG_LEVEL_ERROR, LOG_LEVEL_DEBUG);
CONFIG_CHOICE(form_window, form_window, form_window_name, FORM_WINDOW_NONE, FORM_WINDOW_TAYLOR);
CONFIG_CHOICE(backend, eig_backend, eig_backend_name, EIG_BACKEND_AUTO, EIG_BACKEND_CUDA);
CONFIG_CHOICE(precision, eig_precision, eig_precision_name, EIG_COMPLEX_FLOAT, EIG_COMPLEX_DOUBLE);

/* The wire's IQ names (protocol.c), with NULL for the gaps between codes. */
static const char *iq_format_name_of(int value)
{
    return protocol_iq_sample_bytes((uint8_t)value) != 0 ? protocol_iq_format_name(value) : NULL;
}
static const config_choice iq_format_choice = {iq_format_name_of, PROTOCOL_IQ_CF32_LE, PROTOCOL_IQ_CI16_LE};
static const config_choice iq_layout_choice = {protocol_iq_layout_name, PROTOCOL_IQ_CPG, PROTOCOL_IQ_PGC};

/* Choice fields are stored through an int: the enums must be int-sized. */
_Static_assert(sizeof(protocol_mode) == sizeof(int), "enum settings are int-sized");
_Static_assert(sizeof(eig_backend) == sizeof(int), "enum settings are int-sized");
_Static_assert(sizeof(eig_precision) == sizeof(int), "enum settings are int-sized");
_Static_assert(sizeof(config_overflow_policy) == sizeof(int), "enum settings are int-sized");
_Static_assert(sizeof(config_fallback) == sizeof(int), "enum settings are int-sized");
_Static_assert(sizeof(config_form_input) == sizeof(int), "enum settings are int-sized");
_Static_assert(sizeof(form_window) == sizeof(int), "enum settings are int-sized");

#define FIELD(member) offsetof(eigstream_config, member)
#define KIB ((int64_t)1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

const config_group_spec config_groups[CONFIG_GROUP_COUNT] = {
    {"input", "Where covariance frames come from (ZeroMQ, or a recording)."},
    {"output", "Where eigenspaces go (ZeroMQ) and what they carry."},
    {"solver", "The batched Hermitian eigensolver."},
    {"frame", "Frame flow between the stages: deadline and queues."},
    {"form", "Conditioning applied to each covariance matrix before the solve, and the forming "
             "of the matrices from raw IQ cubes (form.input = iq; README, Forming from raw IQ)."},
    {"metrics", "Periodic metrics (counters, rates, latency histograms) on a ZeroMQ PUB socket "
                "and over HTTP (Prometheus /metrics, JSON /api/metrics, the dashboard at /)."},
    {"log", "Logging to stderr."},
    {"realtime", "Real-time scheduling of the daemon's threads (receive, form, solve, publish). "
                 "Under systemd they need the eigstream-realtime.conf drop-in (CAP_SYS_NICE, "
                 "CAP_IPC_LOCK). A setting the system does not permit is never ignored silently: "
                 "realtime.on_failure says whether it is a warning or stops the start."},
    {"service", "Running under systemd (Type=notify): the watchdog's notion of a healthy pipeline."},
    {"security", "ZeroMQ CURVE on every ZeroMQ socket of the daemon (input, output, metrics): "
                 "encryption, and only the listed client keys get through (behind "
                 "eigstream-dispatch the input is the dispatcher's CURVE client). The HTTP metrics "
                 "server is not ZeroMQ and is not covered: keep metrics.http on 127.0.0.1 or "
                 "\"\"."},
};

const config_spec config_specs[CONFIG_SPEC_COUNT] = {
    /* ---- input ---- */
    {.group = "input", .name = "endpoint", .kind = CONFIG_KIND_ENDPOINT,
     .offset = FIELD(input.endpoint), .default_string = "tcp://127.0.0.1:5550",
     .flags = CONFIG_FLAG_FILE_OK | CONFIG_FLAG_LIST_OK,
     .help = "ZeroMQ endpoint that covariance frames arrive on. With input.bind = true the "
             "daemon binds it (tcp://*:5550 listens on every interface); otherwise it "
             "connects to a source that binds. With input.io_threads = K connections, K "
             "endpoints separated by commas connect socket k to the k-th (a source of K PUSH "
             "sockets; docs/scaleout.md). \"file:NAME\" reads the recording NAME "
             "(eigstream-record; NAME, NAME.sigmf-meta or NAME.sigmf-data) instead, "
             "losslessly, and exits 0 after its last frame is published."},
    {.group = "input", .name = "pattern", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(input.pattern), .choice = &input_pattern_choice,
     .default_int = CONFIG_INPUT_PULL,
     .help = "Socket type: pull takes frames from PUSH sources, sub subscribes to the "
             "covariance frames of a PUB source. pgm:// and epgm:// need sub. dispatch "
             "connects a DEALER to eigstream-dispatch's back end (input.bind = false) and "
             "asks for frames with credit (docs/scaleout.md)."},
    {.group = "input", .name = "bind", .kind = CONFIG_KIND_BOOL,
     .offset = FIELD(input.bind), .default_int = 1,
     .help = "true: bind input.endpoint and let sources connect; false: connect to it."},
    {.group = "input", .name = "hwm", .kind = CONFIG_KIND_INT,
     .offset = FIELD(input.hwm), .min = 0, .max = 1000000, .default_int = 4,
     .help = "Receive high-water mark (ZMQ_RCVHWM): frames ZeroMQ queues before a PUSH "
             "source blocks or a PUB source drops. 0 = no limit."},
    {.group = "input", .name = "max_message_bytes", .kind = CONFIG_KIND_INT64,
     .offset = FIELD(input.max_message_bytes), .min = KIB, .max = 16 * GIB,
     .default_int = 128 * MIB,
     .help = "Largest accepted message in bytes: the sum of its payload parts, checked as "
             "they are read (past it the message is released and counted oversized; ZeroMQ's "
             "per-part limit is twice one frame, at most this): 1 KiB..16 GiB, default 128 MiB. It must hold one frame of "
             "solver.matrices matrices of order solver.n. Write values above 2147483647 "
             "with the L suffix (4294967296L)."},
    {.group = "input", .name = "copy_threads", .kind = CONFIG_KIND_INT,
     .offset = FIELD(input.copy_threads), .min = 0, .max = CONFIG_COPY_THREADS_MAX, .default_int = 0,
     .help = "Threads that copy a received frame of 4 MiB or more into its buffer, with the "
             "CRC and the NaN/Inf check: the receive thread and copy_threads - 1 helpers "
             "(with its realtime settings). 0 = a quarter of the online cores, at most 8; "
             "1 = the receive thread alone. With input.io_threads = K above 1, each input "
             "socket has a reader thread of its own, and each reader copies with "
             "copy_threads / K of them (at least itself)."},
    {.group = "input", .name = "io_threads", .kind = CONFIG_KIND_INT,
     .offset = FIELD(input.io_threads), .min = 1, .max = CONFIG_INPUT_IO_THREADS_MAX, .default_int = 1,
     .help = "Input sockets, each connected to the source's PUSH and read by its own "
             "ZeroMQ I/O thread: one connection carries ~3-8 GB/s, less than two GPUs "
             "solve. The PUSH deals frames over the connections in turn; the receiver "
             "passes them on in seq order (input.reorder_ms). With input.pattern = "
             "\"dispatch\" each socket is a DEALER of its own to eigstream-dispatch, a peer "
             "with its own share of the credit (frame.queue_depth of at least 2 per socket "
             "keeps each busy), and frames go on as they come: eigstream-merge orders them. "
             "Above 1 it needs input.pattern = \"pull\" or \"dispatch\" and input.bind = false."},
    {.group = "input", .name = "reorder_ms", .kind = CONFIG_KIND_INT,
     .offset = FIELD(input.reorder_ms), .min = 0, .max = 10000, .default_int = 20,
     .help = "input.io_threads above 1: how long a frame waits for a lower seq that may "
             "still come on another connection, before going on without it (a source that "
             "skips seqs adds up to this to the frame after each skip). A frame that comes "
             "after its seq was gone past goes on at once, out of order, counted in "
             "input_late; any other seq at or below one passed on is a source restart."},
    {.group = "input", .name = "fragment_timeout_ms", .kind = CONFIG_KIND_INT,
     .offset = FIELD(input.fragment_timeout_ms), .min = 10, .max = 60000, .default_int = 1000,
     .help = "A frame sent in fragments (docs/protocol.md) that gets no next fragment for "
             "this long is given up and counted as rejected, reason incomplete (its "
             "source stopped mid-frame). Fragments come back to back, so this only bounds "
             "how long a dead source's partial frame holds a buffer."},
    {.group = "input", .name = "replay_timing", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(input.replay_timing), .choice = &replay_timing_choice,
     .default_int = CONFIG_REPLAY_MAX,
     .help = "File input only: max = as fast as the pipeline takes frames; original = "
             "the recorded inter-frame times, divided by input.replay_speed."},
    {.group = "input", .name = "replay_speed", .kind = CONFIG_KIND_REAL,
     .offset = FIELD(input.replay_speed), .min_real = 0.01, .max_real = 100.0, .default_real = 1.0,
     .help = "File input with replay_timing original: 2 plays twice as fast, 0.5 at half "
             "speed."},
    {.group = "input", .name = "heartbeat_ms", .kind = CONFIG_KIND_INT,
     .offset = FIELD(input.heartbeat_ms), .min = 10, .max = 60000, .default_int = 1000,
     .help = "pattern dispatch only: the heartbeat interval (ms) between the daemon and "
             "eigstream-dispatch, both ways; the dispatcher adopts it for this daemon."},
    {.group = "input", .name = "heartbeat_liveness", .kind = CONFIG_KIND_INT,
     .offset = FIELD(input.heartbeat_liveness), .min = 1, .max = 100, .default_int = 3,
     .help = "pattern dispatch only: heartbeat intervals of silence after which the "
             "dispatcher counts as gone and the daemon offers READY again (the dispatcher "
             "applies its own --liveness to the daemon)."},

    /* ---- output ---- */
    {.group = "output", .name = "endpoint", .kind = CONFIG_KIND_ENDPOINT,
     .offset = FIELD(output.endpoint), .default_string = "tcp://127.0.0.1:5551",
     .help = "ZeroMQ endpoint that eigenspaces are sent on; must differ from "
             "input.endpoint."},
    {.group = "output", .name = "pattern", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(output.pattern), .choice = &output_pattern_choice,
     .default_int = CONFIG_OUTPUT_PUB,
     .help = "Socket type: pub sends every eigenspace to every subscriber (a slow one "
             "loses messages), push gives each eigenspace to one consumer. pgm:// and "
             "epgm:// need pub."},
    {.group = "output", .name = "bind", .kind = CONFIG_KIND_BOOL,
     .offset = FIELD(output.bind), .default_int = 1,
     .help = "true: bind output.endpoint and let consumers connect; false: connect to it."},
    {.group = "output", .name = "hwm", .kind = CONFIG_KIND_INT,
     .offset = FIELD(output.hwm), .min = 0, .max = 1000000, .default_int = 4,
     .help = "Send high-water mark (ZMQ_SNDHWM) in messages. 0 = no limit."},
    {.group = "output", .name = "mode", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(output.mode), .choice = &output_mode_choice,
     .default_int = PROTOCOL_MODE_FULL,
     .help = "What each eigenspace carries besides the n eigenvalues: full = all n "
             "eigenvectors; values = none; signal = the d eigenvectors of the largest "
             "eigenvalues; noise = the n - d eigenvectors of the smallest "
             "(d from output.signal_dimension)."},
    {.group = "output", .name = "signal_dimension", .kind = CONFIG_KIND_INT,
     .offset = FIELD(output.signal_dimension), .min = 0, .max = EIG_N_MAX, .default_int = 0,
     .help = "Signal subspace dimension d for modes signal and noise. 0 = estimated per "
             "matrix by MDL from its eigenvalues and the snapshot count; 1..solver.n = "
             "fixed (at most solver.n; mode noise needs d < solver.n)."},
    {.group = "output", .name = "snapshots", .kind = CONFIG_KIND_INT,
     .offset = FIELD(output.snapshots), .min = 0, .max = 1000000000, .default_int = 0,
     .help = "Snapshot count K that MDL uses when a frame says 0. 0 = frames must say. "
             "With form.input = iq every frame says: the forming's K."},

    /* ---- solver ---- */
    {.group = "solver", .name = "backend", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(solver.backend), .choice = &backend_choice,
     .default_int = EIG_BACKEND_AUTO,
     .help = "auto = cuda when a GPU is usable, else cpu; cpu = our batched Householder "
             "+ implicit QR on the CPU; lapack = LAPACK zheevd/cheevd per matrix; "
             "cuda = the batched GPU kernels (an error without a usable GPU)."},
    {.group = "solver", .name = "precision", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(solver.precision), .choice = &precision_choice,
     .default_int = EIG_COMPLEX_DOUBLE,
     .help = "Arithmetic of the solve: double (complex double) or float (complex float)."},
    {.group = "solver", .name = "n", .kind = CONFIG_KIND_INT,
     .offset = FIELD(solver.n), .min = 1, .max = EIG_N_MAX, .default_int = 128,
     .help = "Order of each Hermitian matrix; frames of another order are rejected. "
             "Backends cpu and lapack take n up to 4096, cuda up to 512; auto uses cpu "
             "above 512."},
    {.group = "solver", .name = "matrices", .kind = CONFIG_KIND_INT,
     .offset = FIELD(solver.matrices), .min = 1, .max = 100000, .default_int = 180,
     .help = "Matrices per frame; frames with another count are rejected."},
    {.group = "solver", .name = "gpu_device", .kind = CONFIG_KIND_INT,
     .offset = FIELD(solver.gpu_device), .min = 0, .max = 63, .default_int = 0,
     .help = "CUDA device index for backends auto and cuda (one worker; see gpu_devices for "
             "several)."},
    {.group = "solver", .name = "gpu_devices", .kind = CONFIG_KIND_INT_LIST,
     .offset = FIELD(solver.gpu_devices), .min = 0, .max = 63,
     .help = "Backends auto and cuda: one solver worker per entry, on that CUDA device "
             "([0, 1] = two GPUs; [0, 0] = two workers sharing GPU 0). Each worker has its own "
             "solver plan, streams, pinned buffers and device slots; frames go to the worker "
             "with the fewest frames in flight and are published in sequence order. [] = "
             "solver.workers workers on solver.gpu_device (leave gpu_device at 0 when this "
             "is set)."},
    {.group = "solver", .name = "workers", .kind = CONFIG_KIND_INT,
     .offset = FIELD(solver.workers), .min = 1, .max = CONFIG_LIST_MAX, .default_int = 1,
     .help = "Solver workers when solver.gpu_devices is []: on the host backends each is a "
             "plan with solver.cpu_threads threads (set cpu_threads to cores / workers); on "
             "cuda they share gpu_device. With gpu_devices set it must be 1 or the number of "
             "entries."},
    {.group = "solver", .name = "cpu_threads", .kind = CONFIG_KIND_INT,
     .offset = FIELD(solver.cpu_threads), .min = 0, .max = 1024, .default_int = 0,
     .help = "Threads for backends cpu and lapack. 0 = all cores."},
    {.group = "solver", .name = "fallback", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(solver.fallback), .choice = &fallback_choice,
     .default_int = CONFIG_FALLBACK_NONE,
     .help = "Backends cuda and auto: what a frame path error (a solve failing as a whole) "
             "leads to. none = the frame is dropped as solver_error and the path is kept; "
             "cpu = the daemon switches to the host path with the cpu backend for good "
             "(logged once, counted in solver_fallbacks); frames already formed on the "
             "failed path are dropped as solver_error."},

    /* ---- frame ---- */
    {.group = "frame", .name = "deadline_ms", .kind = CONFIG_KIND_INT,
     .offset = FIELD(frame.deadline_ms), .min = 1, .max = 3600000, .default_int = 1000,
     .flags = CONFIG_FLAG_LIVE,
     .help = "Time from receipt to publication that a frame is allowed, in milliseconds."},
    {.group = "frame", .name = "late_policy", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(frame.late_policy), .choice = &late_policy_choice,
     .default_int = CONFIG_LATE_PUBLISH,
     .flags = CONFIG_FLAG_LIVE,
     .help = "A frame past its deadline: publish = publish it flagged late; "
             "drop = drop it (counted in the metrics)."},
    {.group = "frame", .name = "queue_depth", .kind = CONFIG_KIND_INT,
     .offset = FIELD(frame.queue_depth), .min = 1, .max = 1024, .default_int = 4,
     .help = "Frames each queue between two stages holds; the frame buffers are "
             "allocated once from this."},
    {.group = "frame", .name = "overflow_policy", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(frame.overflow_policy), .choice = &overflow_policy_choice,
     .default_int = CONFIG_OVERFLOW_DROP_OLDEST,
     .flags = CONFIG_FLAG_LIVE,
     .help = "A full queue: drop_oldest = drop its oldest frame (counted) so that the "
             "newest data goes on; block = wait, which pushes back to the input hwm."},

    /* ---- form ---- */
    {.group = "form", .name = "diagonal_loading", .kind = CONFIG_KIND_BOOL,
     .offset = FIELD(form.diagonal_loading), .default_int = 0,
     .help = "Add a multiple of the identity to each matrix before the solve."},
    {.group = "form", .name = "diagonal_loading_db", .kind = CONFIG_KIND_REAL,
     .offset = FIELD(form.diagonal_loading_db), .min_real = -200.0, .max_real = 60.0,
     .default_real = -30.0,
     .help = "Diagonal load relative to the mean eigenvalue, in dB: the load is "
             "10^(dB/10) * trace/n."},
    {.group = "form", .name = "forward_backward", .kind = CONFIG_KIND_BOOL,
     .offset = FIELD(form.forward_backward), .default_int = 0,
     .help = "Forward-backward averaging: R = (R + J conj(R) J) / 2, J the exchange "
             "matrix (for uniform linear arrays)."},
    {.group = "form", .name = "input", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(form.input), .choice = &form_input_choice,
     .default_int = CONFIG_FORM_INPUT_COVARIANCE,
     .help = "What input frames carry: covariance = covariance frames (kind 1) of "
             "solver.matrices matrices; iq = raw IQ cubes (kind 3) of solver.n channels x "
             "form.pulses x form.range_gates, which the daemon turns into form.doppler_bins x "
             "form.range_segments matrices (this must equal solver.matrices). Frames of the "
             "other kind are rejected as bad_kind. The form.* settings below apply to iq only."},
    {.group = "form", .name = "iq_format", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(form.iq_format), .choice = &iq_format_choice,
     .default_int = PROTOCOL_IQ_CI16_LE,
     .help = "Sample format of the cubes (SigMF names): cf32_le = complex float32, "
             "ci16_le = complex int16; cubes in the other format are config_mismatch."},
    {.group = "form", .name = "iq_layout", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(form.iq_layout), .choice = &iq_layout_choice,
     .default_int = PROTOCOL_IQ_CPG,
     .help = "Sample order of the cubes, slowest index first (docs/protocol.md): cpg = "
             "channel, pulse, gate (gate fastest); pcg = pulse, channel, gate; pgc = pulse, "
             "gate, channel (channel fastest). Cubes in another layout are config_mismatch."},
    {.group = "form", .name = "pulses", .kind = CONFIG_KIND_INT,
     .offset = FIELD(form.pulses), .min = 1, .max = 65536, .default_int = 180,
     .help = "Pulses P per cube (the slow-time samples the Doppler FFT transforms)."},
    {.group = "form", .name = "range_gates", .kind = CONFIG_KIND_INT,
     .offset = FIELD(form.range_gates), .min = 1, .max = 1048576, .default_int = 256,
     .help = "Range gates per pulse in a cube; a multiple of form.range_segments."},
    {.group = "form", .name = "window", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(form.window), .choice = &form_window_choice,
     .default_int = FORM_WINDOW_HANN,
     .help = "Slow-time window applied before the Doppler FFT: none, hann, hamming, "
             "chebyshev (Dolph-Chebyshev) or taylor (nbar 4), the last two at "
             "form.sidelobe_db."},
    {.group = "form", .name = "sidelobe_db", .kind = CONFIG_KIND_REAL,
     .offset = FIELD(form.sidelobe_db), .min_real = 10.0, .max_real = 200.0, .default_real = 40.0,
     .help = "Windows chebyshev and taylor: peak sidelobe level below the main lobe, in dB."},
    {.group = "form", .name = "fft_size", .kind = CONFIG_KIND_INT,
     .offset = FIELD(form.fft_size), .min = 0, .max = 1048576, .default_int = 0,
     .help = "Doppler FFT size F (the pulses zero-padded to F): at least form.pulses; 0 = "
             "form.pulses (no padding)."},
    {.group = "form", .name = "doppler_first", .kind = CONFIG_KIND_INT,
     .offset = FIELD(form.doppler_first), .min = 0, .max = 1048575, .default_int = 0,
     .help = "First Doppler bin made into matrices (0..F-1; bin b is b/F cycles per pulse, "
             "bins past F/2 are negative Doppler)."},
    {.group = "form", .name = "doppler_bins", .kind = CONFIG_KIND_INT,
     .offset = FIELD(form.doppler_bins), .min = 0, .max = 1048576, .default_int = 0,
     .help = "Doppler bins made into matrices: doppler_first, doppler_first+1, ... modulo F; "
             "at most F; 0 = all F bins."},
    {.group = "form", .name = "range_segments", .kind = CONFIG_KIND_INT,
     .offset = FIELD(form.range_segments), .min = 1, .max = 1048576, .default_int = 1,
     .help = "The gates are split into this many equal segments, one matrix per Doppler bin "
             "and segment (bin major); doppler_bins x range_segments = solver.matrices."},
    {.group = "form", .name = "guard_gates", .kind = CONFIG_KIND_INT,
     .offset = FIELD(form.guard_gates), .min = 0, .max = 524288, .default_int = 0,
     .help = "Training excludes each segment's centre gate (the cell under test) and this "
             "many gates on either side of it; 0 = train on every gate of the segment. The "
             "snapshot count K (gates per segment less the excluded ones) must be at least "
             "1, and at least solver.n unless form.diagonal_loading is on (K < n makes each "
             "matrix singular)."},
    {.group = "form", .name = "fft_threads", .kind = CONFIG_KIND_INT,
     .offset = FIELD(form.fft_threads), .min = 0, .max = 1024, .default_int = 0,
     .help = "Threads of the CPU forming (FFTW and the covariance update). 0 = all cores."},
    {.group = "form", .name = "fft_wisdom_file", .kind = CONFIG_KIND_PATH,
     .offset = FIELD(form.fft_wisdom_file), .flags = CONFIG_FLAG_EMPTY_OK, .default_string = "",
     .help = "FFTW wisdom file: loaded at start-up and saved after planning, so that a "
             "restart plans in milliseconds. \"\" = none (plans are measured at every start)."},

    /* ---- metrics ---- */
    {.group = "metrics", .name = "endpoint", .kind = CONFIG_KIND_ENDPOINT,
     .offset = FIELD(metrics.endpoint), .flags = CONFIG_FLAG_EMPTY_OK,
     .default_string = "tcp://127.0.0.1:5552",
     .help = "ZeroMQ PUB endpoint (bound) that metrics are published on. \"\" = off."},
    {.group = "metrics", .name = "interval_ms", .kind = CONFIG_KIND_INT,
     .offset = FIELD(metrics.interval_ms), .min = 10, .max = 3600000, .default_int = 1000,
     .flags = CONFIG_FLAG_LIVE,
     .help = "Period of the metrics messages and of the rate computation, in milliseconds."},
    {.group = "metrics", .name = "http", .kind = CONFIG_KIND_HOST_PORT,
     .offset = FIELD(metrics.http), .flags = CONFIG_FLAG_EMPTY_OK,
     .default_string = "127.0.0.1:9464",
     .help = "HOST:PORT the read-only HTTP server listens on: the dashboard at /, Prometheus "
             "text at /metrics, JSON at /api/metrics. \"\" = off. It serves only the local "
             "machine unless HOST says otherwise (\"0.0.0.0:9464\": every interface). "
             "Port 0 takes any free port (the log names it)."},
    {.group = "metrics", .name = "http_deadline_s", .kind = CONFIG_KIND_INT,
     .offset = FIELD(metrics.http_deadline_s), .min = 1, .max = 3600, .default_int = 10,
     .help = "Seconds an HTTP request has to be answered, counted from the connection's start "
             "(or its previous answer) whatever bytes arrive: a client that drips its headers is "
             "cut then (eigstream_http_refused_total{reason=\"deadline\"})."},
    {.group = "metrics", .name = "http_scrapers", .kind = CONFIG_KIND_ADDRESS_LIST,
     .offset = FIELD(metrics.http_scrapers), .flags = CONFIG_FLAG_EMPTY_OK, .default_string = "",
     .help = "Numeric client addresses (\"10.0.0.5,::1\", Prometheus' own) that have 8 HTTP "
             "connections kept for them beyond the 64 every other address shares, so that a flood "
             "of connections from elsewhere never locks a scrape out. Every address, a scraper's "
             "too, may hold 4 connections at a time. \"\" = none kept."},

    /* ---- log ---- */
    {.group = "log", .name = "level", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(log.level), .choice = &log_level_choice,
     .default_int = LOG_LEVEL_INFO,
     .flags = CONFIG_FLAG_LIVE,
     .help = "Least severe level that is printed: error, warn, info or debug."},

    /* ---- realtime ---- */
    {.group = "realtime", .name = "mlockall", .kind = CONFIG_KIND_BOOL,
     .offset = FIELD(realtime.mlockall), .default_int = 0,
     .help = "Lock every page of the daemon in memory (mlockall MCL_CURRENT | MCL_FUTURE) "
             "once its buffers are allocated, so that no page fault stalls a frame. Needs "
             "CAP_IPC_LOCK or an RLIMIT_MEMLOCK above everything the daemon will use "
             "(LimitMEMLOCK=infinity in the drop-in): past the limit, later allocations fail."},
    {.group = "realtime", .name = "priority", .kind = CONFIG_KIND_INT,
     .offset = FIELD(realtime.priority), .min = 0, .max = 99, .default_int = 0,
     .help = "SCHED_FIFO priority 1..99 of the receive, form, solve and publish threads; 0 = "
             "off (the normal scheduler). Needs CAP_SYS_NICE or RLIMIT_RTPRIO at least this "
             "high."},
    {.group = "realtime", .name = "cpu_affinity_receive", .kind = CONFIG_KIND_CPU_LIST,
     .offset = FIELD(realtime.cpu_affinity[CONFIG_THREAD_RECEIVE]), .flags = CONFIG_FLAG_EMPTY_OK,
     .default_string = "",
     .help = "CPUs the receiver (socket reads, validation) may run on, as a list (\"2\", \"2-3,6\"); "
             "\"\" = any (or the GPU's NUMA node with realtime.gpu_numa)."},
    {.group = "realtime", .name = "cpu_affinity_form", .kind = CONFIG_KIND_CPU_LIST,
     .offset = FIELD(realtime.cpu_affinity[CONFIG_THREAD_FORM]), .flags = CONFIG_FLAG_EMPTY_OK,
     .default_string = "",
     .help = "CPUs the form stage may run on, as a list (\"2\", \"2-3,6\"); "
             "\"\" = any (or the GPU's NUMA node with realtime.gpu_numa)."},
    {.group = "realtime", .name = "cpu_affinity_solve", .kind = CONFIG_KIND_CPU_LIST,
     .offset = FIELD(realtime.cpu_affinity[CONFIG_THREAD_SOLVE]), .flags = CONFIG_FLAG_EMPTY_OK,
     .default_string = "",
     .help = "CPUs the solve stage may run on, as a list (\"2\", \"2-3,6\"); \"\" = any (or the "
             "GPU's NUMA node with realtime.gpu_numa). The solver's own worker threads "
             "(backends cpu and lapack) are not pinned."},
    {.group = "realtime", .name = "cpu_affinity_publish", .kind = CONFIG_KIND_CPU_LIST,
     .offset = FIELD(realtime.cpu_affinity[CONFIG_THREAD_PUBLISH]), .flags = CONFIG_FLAG_EMPTY_OK,
     .default_string = "",
     .help = "CPUs the publish stage may run on, as a list (\"2\", \"2-3,6\"); "
             "\"\" = any (or the GPU's NUMA node with realtime.gpu_numa)."},
    {.group = "realtime", .name = "cpu_affinity_io", .kind = CONFIG_KIND_CPU_LIST,
     .offset = FIELD(realtime.cpu_affinity[CONFIG_THREAD_IO]), .flags = CONFIG_FLAG_EMPTY_OK,
     .default_string = "",
     .help = "CPUs ZeroMQ's background threads may run on (its input.io_threads + 1 I/O "
             "threads, ZMQbg/IO/K, which read and write every socket, and its reaper), as a "
             "list (\"2\", \"2-3,6\"); \"\" = any (or the GPU's NUMA node with "
             "realtime.gpu_numa)."},
    {.group = "realtime", .name = "gpu_numa", .kind = CONFIG_KIND_BOOL,
     .offset = FIELD(realtime.gpu_numa), .default_int = 0,
     .help = "With the cuda path: allocate the host buffers on the GPU's NUMA node "
             "(/sys/bus/pci/devices/BUS/numa_node) and run the threads above on its CPUs, "
             "unless their own cpu_affinity says otherwise. Without a GPU path it does not "
             "apply, which realtime.on_failure reports."},
    {.group = "realtime", .name = "on_failure", .kind = CONFIG_KIND_CHOICE,
     .offset = FIELD(realtime.on_failure), .choice = &realtime_failure_choice,
     .default_int = CONFIG_REALTIME_WARN,
     .help = "A real-time setting the system does not permit (EPERM, a CPU that is not "
             "there, no GPU): warn = log a warning naming the setting and the cause and run "
             "without it; error = refuse to start."},

    /* ---- service ---- */
    {.group = "service", .name = "stall_ms", .kind = CONFIG_KIND_INT,
     .offset = FIELD(service.stall_ms), .min = 10, .max = 3600000, .default_int = 30000,
     .flags = CONFIG_FLAG_LIVE,
     .help = "A stage is stalled when one frame has been in its step (forming; the solve; "
             "the output wait and the send) for longer than this, in milliseconds. While a "
             "stage is stalled the daemon stops its WATCHDOG=1 pings to systemd (which "
             "then restarts it, with WatchdogSec set) and says so in STATUS and the log. "
             "A stage waiting for work, or for room in the next stage's queue, is not "
             "stalled. The publish stage's send waits at most max(frame.deadline_ms, 100 "
             "ms) for a consumer: keep stall_ms above that if a missing consumer should "
             "count as send_failed drops rather than as a stall."},

    /* ---- security ---- */
    {.group = "security", .name = "curve_secret_key", .kind = CONFIG_KIND_PATH,
     .offset = FIELD(security.curve_secret_key), .flags = CONFIG_FLAG_EMPTY_OK, .default_string = "",
     .help = "The daemon's CURVE key pair: a NAME.key_secret file from eigstream-keygen "
             "(owner-only permissions, else the daemon refuses to start). Set: the input, "
             "output and metrics sockets are CURVE servers and need security.curve_allow. "
             "\"\" = CURVE off (plain text, anyone who can reach a socket may use it)."},
    {.group = "security", .name = "curve_allow", .kind = CONFIG_KIND_PATH,
     .offset = FIELD(security.curve_allow), .flags = CONFIG_FLAG_EMPTY_OK, .default_string = "",
     .help = "The client public keys let in: a file with one key per line (Z85, 40 "
             "characters, or public-key = \"...\" lines), or a directory whose *.key files "
             "(eigstream-keygen's public files) each hold one. Any other client, and every "
             "plain-text client, gets nothing, and is counted in "
             "eigstream_auth_rejected_total and logged once."},
    {.group = "security", .name = "curve_dispatcher_key", .kind = CONFIG_KIND_PATH,
     .offset = FIELD(security.curve_dispatcher_key), .flags = CONFIG_FLAG_EMPTY_OK, .default_string = "",
     .help = "input.pattern dispatch with CURVE: eigstream-dispatch's public key file (the "
             "BASE.key of its --curve-secret-key pair). The input then connects to the "
             "dispatcher as a CURVE client with the daemon's own key pair "
             "(security.curve_secret_key; its BASE.key goes into the dispatcher's "
             "--back-curve-allow); the output and metrics sockets stay CURVE servers. "
             "Required with input.pattern dispatch and security.curve_secret_key; refused "
             "otherwise."},
};

const config_spec *config_spec_find(const char *group, const char *name)
{
    for (size_t i = 0; i < CONFIG_SPEC_COUNT; ++i)
        if (strcmp(config_specs[i].group, group) == 0 && strcmp(config_specs[i].name, name) == 0)
            return &config_specs[i];
    return NULL;
}

const config_group_spec *config_group_find(const char *name)
{
    for (size_t i = 0; i < CONFIG_GROUP_COUNT; ++i)
        if (strcmp(config_groups[i].name, name) == 0)
            return &config_groups[i];
    return NULL;
}

/* ---- choices ---------------------------------------------------------------- */

void config_choice_join(const config_choice *choice, char *out, size_t out_bytes)
{
    size_t used = 0;
    out[0] = '\0';
    for (int value = choice->min; value <= choice->max && used < out_bytes; ++value)
        if (choice->name(value) != NULL)
            used += (size_t)snprintf(out + used, out_bytes - used, "%s%s", used > 0 ? "|" : "",
                                     choice->name(value));
}

/* ---- IQ forming sizes ---------------------------------------------------------- */

uint32_t config_form_fft_size(const eigstream_config *cfg)
{
    return (uint32_t)(cfg->form.fft_size != 0 ? cfg->form.fft_size : cfg->form.pulses);
}

uint32_t config_form_doppler_bins(const eigstream_config *cfg)
{
    return cfg->form.doppler_bins != 0 ? (uint32_t)cfg->form.doppler_bins : config_form_fft_size(cfg);
}

uint32_t config_form_snapshots(const eigstream_config *cfg)
{
    uint32_t length = (uint32_t)(cfg->form.range_gates / cfg->form.range_segments);
    uint32_t excluded = cfg->form.guard_gates > 0 ? 2u * (uint32_t)cfg->form.guard_gates + 1u : 0u;
    return length > excluded ? length - excluded : 0;
}

const char *config_strerror(config_error e)
{
    switch (e) {
    case CONFIG_OK: return "ok";
    case CONFIG_EIO: return "configuration file unreadable";
    case CONFIG_ESYNTAX: return "configuration syntax error";
    case CONFIG_EUNKNOWN: return "unknown setting";
    case CONFIG_ETYPE: return "setting of the wrong type";
    case CONFIG_ERANGE: return "setting out of range";
    case CONFIG_EINVAL: return "settings inconsistent with each other";
    }
    return "unknown configuration error";
}

int config_output_mode_parse(const char *name, protocol_mode *out)
{
    for (int mode = PROTOCOL_MODE_FULL; name != NULL && mode <= PROTOCOL_MODE_NOISE; mode++) {
        if (strcmp(name, protocol_mode_name(mode)) == 0) {
            *out = (protocol_mode)mode;
            return 0;
        }
    }
    return -1;
}

int config_solver_worker_count(const eigstream_config *cfg)
{
    return cfg->solver.gpu_devices.count > 0 ? cfg->solver.gpu_devices.count : cfg->solver.workers;
}

int config_solver_worker_device(const eigstream_config *cfg, int w)
{
    return cfg->solver.gpu_devices.count > 0 ? cfg->solver.gpu_devices.values[w] : cfg->solver.gpu_device;
}

int config_endpoint_count(const char *text, size_t length)
{
    int count = 1;
    for (size_t i = 0; i < length; i++)
        count += text[i] == ',';
    return count;
}

void config_input_endpoint(const eigstream_config *cfg, int k, char *out, size_t out_bytes)
{
    const char *text = cfg->input.endpoint;
    int count = config_endpoint_count(text, strlen(text));
    for (int skip = count > 1 ? k % count : 0; skip > 0; skip--)
        text = strchr(text, ',') + 1;
    snprintf(out, out_bytes, "%.*s", (int)strcspn(text, ","), text);
}

const char *config_input_file(const eigstream_config *cfg)
{
    return strncmp(cfg->input.endpoint, "file:", 5) == 0 ? cfg->input.endpoint + 5 : NULL;
}

/* Bytes of a row's field in eigstream_config. */
static size_t field_bytes(const config_spec *spec)
{
    switch (spec->kind) {
    case CONFIG_KIND_INT64: return sizeof(int64_t);
    case CONFIG_KIND_REAL: return sizeof(double);
    case CONFIG_KIND_ENDPOINT:
    case CONFIG_KIND_HOST_PORT:
    case CONFIG_KIND_PATH:
    case CONFIG_KIND_CPU_LIST:
    case CONFIG_KIND_ADDRESS_LIST: return CONFIG_STRING_MAX;
    case CONFIG_KIND_INT_LIST: return sizeof(config_int_list);
    default: return sizeof(int); /* BOOL, INT, CHOICE */
    }
}

/* Whether a row's field holds different values in a and b: strings up to
 * their NUL and lists up to their count (what follows is not the value). */
static int field_differs(const config_spec *spec, const char *a, const char *b)
{
    if (spec->kind == CONFIG_KIND_INT_LIST) {
        const config_int_list *x = (const config_int_list *)(const void *)a;
        const config_int_list *y = (const config_int_list *)(const void *)b;
        return x->count != y->count || memcmp(x->values, y->values, (size_t)x->count * sizeof(int)) != 0;
    }
    size_t bytes = field_bytes(spec);
    return bytes == CONFIG_STRING_MAX ? strncmp(a, b, bytes) != 0 : memcmp(a, b, bytes) != 0;
}

size_t config_diff(const eigstream_config *before, const eigstream_config *after, config_change *changes,
                   size_t max)
{
    size_t count = 0;
    for (size_t i = 0; i < CONFIG_SPEC_COUNT; ++i) {
        const config_spec *spec = &config_specs[i];
        const char *a = (const char *)before + spec->offset, *b = (const char *)after + spec->offset;
        if (!field_differs(spec, a, b))
            continue;
        if (count < max)
            changes[count] = (config_change){spec->group, spec->name, (spec->flags & CONFIG_FLAG_LIVE) != 0};
        count++;
    }
    return count;
}

void config_copy_live(eigstream_config *dst, const eigstream_config *src)
{
    for (size_t i = 0; i < CONFIG_SPEC_COUNT; ++i)
        if (config_specs[i].flags & CONFIG_FLAG_LIVE)
            memcpy((char *)dst + config_specs[i].offset, (const char *)src + config_specs[i].offset,
                   field_bytes(&config_specs[i]));
}

void config_live_names(char *out, size_t out_bytes)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < CONFIG_SPEC_COUNT && used < out_bytes; ++i)
        if (config_specs[i].flags & CONFIG_FLAG_LIVE)
            used += (size_t)snprintf(out + used, out_bytes - used, "%s%s.%s", used ? ", " : "",
                                     config_specs[i].group, config_specs[i].name);
}
