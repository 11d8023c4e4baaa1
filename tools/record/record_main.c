/*
 * record_main.c - eigstream-record: records any eigstream stream (covariance
 * frames or IQ cubes from a receiver or eigstream-sim, eigenspace frames
 * from the daemon)
 * into a SigMF recording (pipeline/recording/recording.h), or a ring of them.
 *
 * Every message is received whole; one whose header does not decode (or of
 * another kind than --kind) is counted and skipped with a one-line reason,
 * never recorded. Fragments of covariance frames are assembled into whole
 * frames (record_assemble.h, the daemon's rules); a fragment that joins no
 * frame or fails its checks is skipped the same way, and a frame given up
 * (interrupted, a failed fragment, --fragment-timeout-ms, the end) is counted
 * with a one-line reason too. The rest go to recording_writer_append with
 * their CLOCK_REALTIME receipt time (an assembled frame: its last
 * fragment's). SIGINT/SIGTERM end the recording cleanly (the meta is
 * written); SIGXFSZ is ignored, so a file-size limit is a write error
 * (RECORDING_EIO) like a full disk: the recorder stops, the recording stays
 * valid up to the last complete frame, and the exit status is 1.
 *
 * Exit status: 0 stopped as asked (--frames, --duration, a signal) or
 * repaired; 1 a socket, file or write error (named on stderr); 2 usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "cli_common.h"
#include "cli_curve.h"
#include "cli_message.h"
#include "cli_options.h"
#include "cli_peer.h"
#include "protocol.h"
#include "record_assemble.h"
#include "record_import.h"
#include "recording.h"
#include "transport_memory.h"


typedef enum record_kind { RECORD_KIND_ANY = 0, RECORD_KIND_COVARIANCE, RECORD_KIND_EIGENSPACE, RECORD_KIND_IQ } record_kind;

typedef struct record_options {
    const char *endpoint, *description, *repair, *name;
    int sub, bind, kind, quiet;
    uint64_t frames, max_bytes, max_files, max_frame_bytes;
    double duration_s;
    uint32_t hwm, fragment_timeout_ms;
    int connect_timeout_ms;
    cli_curve curve;
    record_import_options import; /* --import-iq SOURCE: another tool's IQ into cubes */
} record_options;

/* The recording (or ring of recordings) being written, and the counts. */
typedef struct recorder {
    const record_options *o;
    recording_writer *w;
    uint64_t number;                       /* ring: the current file's number; 0 = one recording */
    char name[RECORDING_PATH_MAX];         /* the current recording */
    uint64_t frames, bytes, rejected;      /* over all files; rejected: messages skipped */
    uint64_t given_up;                     /* fragmented frames given up (incomplete) */
    uint64_t files;                        /* recordings opened */
    int failed;                            /* a write error was reported: closing repeats it, quietly */
    const void **part;                     /* payload part pointers of one message */
    size_t *part_bytes;
    size_t part_cap;
    record_assembly assembly;              /* the fragmented frame being assembled */
    cli_peer *watch;                       /* whether the socket has a sender */
} recorder;

static const char *const record_patterns[] = {"pull", "sub", NULL};
static const char *const record_kinds[] = {"any", "covariance", "eigenspace", "iq", NULL};
/* The wire's kind of each record_kind but any. */
static const uint8_t record_kind_wire[] = {0, PROTOCOL_KIND_COVARIANCE, PROTOCOL_KIND_EIGENSPACE, PROTOCOL_KIND_IQ};

static const char record_epilogue[] =
    "\nWith --max-bytes the recording is split into NAME-000001, NAME-000002, ...: a new\n"
    "one starts when the current data file would pass B bytes; with --max-files K only\n"
    "the last K are kept (a black-box ring).\n"
    "Fragments of covariance frames are assembled into whole frames as the daemon does\n"
    "(one frame at a time); a frame interrupted, with a fragment that fails its checks,\n"
    "waiting longer than --fragment-timeout-ms or left at the end is given up and counted.\n"
    "Exit status: 0 stopped as asked (--frames, --duration, SIGINT/SIGTERM) or repaired;\n"
    "1 a socket, file or write error, or no sender to connect to for --connect-timeout-ms\n"
    "(the recording stays valid up to its last complete frame); 2 usage.\n";

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: 0 after --help, 2 after a bad argument (named on stderr). */
static int parse_options(int argc, char **argv, record_options *o)
{
    *o = (record_options){.endpoint = "tcp://127.0.0.1:5550", .hwm = 1000, .fragment_timeout_ms = 1000,
                          .max_frame_bytes = 128u << 20, .connect_timeout_ms = 5000, .import = {.scale = 1.0}};
    const cli_option table[] = {
        CLI_SOCKET_OPTIONS(&o->endpoint, &o->sub, record_patterns, "socket type", &o->bind),
        CLI_CHOICE("kind", 0, &o->kind, record_kinds, NULL,
                   "frames to record (sub: the 6-byte prefix to subscribe to)"),
        CLI_INT("frames", 0, &o->frames, 0, UINT64_MAX, "N", "stop after N frames, 0 = no limit"),
        CLI_DOUBLE("duration", 0, &o->duration_s, 0.0, 1e9, "S", "stop after S seconds, 0 = no limit"),
        CLI_INT("max-bytes", 0, &o->max_bytes, 0, UINT64_MAX, "B", "split into files of at most B data bytes, 0 = one file"),
        CLI_INT("max-files", 0, &o->max_files, 0, UINT64_MAX, "K", "with --max-bytes: keep only the last K files, 0 = all"),
        CLI_STRING("description", 0, &o->description, "TEXT", "core:description of the recording"),
        CLI_INT("hwm", 0, &o->hwm, 1, 1000000, "H", "receive high-water mark in messages"),
        CLI_INT("connect-timeout-ms", 0, &o->connect_timeout_ms, 0, 3600000, "T",
                "connecting: give up (exit 1) with nothing to connect to for T ms, 0 = wait forever"),
        CLI_INT("fragment-timeout-ms", 0, &o->fragment_timeout_ms, 1, 3600000, "T",
                "a fragmented frame that gets no next fragment for T ms is given up (counted)"),
        CLI_INT("max-frame-bytes", 0, &o->max_frame_bytes, 1024, UINT64_MAX, "B",
                "largest fragmented frame assembled (payload bytes; a larger one's fragments are oversized)"),
        CLI_STRING("repair", 0, &o->repair, "NAME", "rebuild the meta of a recording whose recorder died, then exit"),
        CLI_STRING("import-iq", 0, &o->import.source, "SOURCE",
                   "import another tool's IQ (SigMF SOURCE, or a raw file) as IQ cubes into NAME, then exit"),
        CLI_INT("channels", 0, &o->import.channels, 0, 65535, "C",
                "--import-iq: channels, interleaved (raw files; SigMF: core:num_channels)"),
        CLI_INT("pulses", 0, &o->import.pulses, 0, 1000000, "P", "--import-iq: pulses a cube"),
        CLI_INT("gates", 0, &o->import.gates, 0, 100000000, "G", "--import-iq: range gates a pulse"),
        CLI_STRING("iq-format", 0, &o->import.format, "F",
                   "--import-iq, raw files: cf32_le, ci16_le or cf64_le (SigMF: core:datatype)"),
        CLI_DOUBLE("iq-scale", 0, &o->import.scale, 1e-30, 1e30, "S", "--import-iq: the cubes' scale (ci16_le)"),
        CLI_DOUBLE("sample-rate", 0, &o->import.sample_rate, 0.0, 1e15, "HZ",
                   "--import-iq: samples/s of each channel, 0 = SigMF's core:sample_rate, else none"),
        CLI_FLAG("quiet", 'q', &o->quiet, "no per-second lines, no skip or give-up lines"),
        CLI_CURVE_OPTIONS(&o->curve),
        CLI_END};
    const cli_spec spec = {.prog = RECORD_PROG, .synopsis = "[options] NAME | --repair NAME | --import-iq SOURCE NAME",
                           .description = "Records an eigstream stream into the SigMF recording NAME\n"
                                          "(NAME.sigmf-data, NAME.sigmf-meta, NAME.sigmf-index).\n",
                           .options = table, .positional_max = 1, .epilogue = record_epilogue};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
    if (status >= 0)
        return status;
    o->name = args.positional_count ? args.positional[0] : NULL;
    if ((o->name == NULL) == (o->repair == NULL))
        return cli_usage_error(RECORD_PROG, "give one recording NAME, or --repair NAME");
    if (o->import.source != NULL && (o->import.pulses == 0 || o->import.gates == 0))
        return cli_usage_error(RECORD_PROG, "--import-iq needs --pulses and --gates");
    o->import.description = o->description;
    if (o->max_files && !o->max_bytes)
        return cli_usage_error(RECORD_PROG, "--max-files needs --max-bytes");
    return -1;
}

/* --repair NAME: rebuilds the meta and says what was recovered. Exit status. */
static int repair_main(const char *name)
{
    char err[RECORDING_ERROR_MAX];
    uint64_t frames = 0, cut = 0;
    recording_error e = recording_repair(name, &frames, &cut, err, sizeof err);
    if (e != RECORDING_OK)
        return cli_fatal(RECORD_PROG, "repair %s: %s", name, err);
    printf(RECORD_PROG ": repaired %s: %llu frames recovered, %llu bytes cut after the last complete frame\n",
           name, (unsigned long long)frames, (unsigned long long)cut);
    return 0;
}

/* Opens the next recording: NAME, or the ring's next NAME-%06u, deleting the
 * one that falls out of the last max_files. Names the failure on stderr. */
static recording_error recorder_open_next(recorder *r)
{
    char err[RECORDING_ERROR_MAX];
    const record_options *o = r->o;
    if (o->max_bytes == 0) {
        snprintf(r->name, sizeof r->name, "%s", o->name);
    } else {
        r->number++;
        recording_ring_name(o->name, r->number, r->name, sizeof r->name);
    }
    recording_writer_params params = {.path = r->name, .description = o->description,
                                      .recorder = RECORD_PROG " " EIGSTREAM_VERSION};
    recording_error e = recording_writer_open(&r->w, &params, err, sizeof err);
    if (e != RECORDING_OK) {
        fprintf(stderr, RECORD_PROG ": %s\n", err);
        return e;
    }
    r->files++;
    if (o->max_files && r->number > o->max_files) {
        char old[RECORDING_PATH_MAX];
        recording_ring_name(o->name, r->number - o->max_files, old, sizeof old);
        if ((e = recording_remove(old, err, sizeof err)) != RECORDING_OK)
            fprintf(stderr, RECORD_PROG ": %s\n", err);
    }
    return e;
}

/* Closes the current recording (meta written). Names a failure on stderr
 * unless it is the write error already reported. */
static recording_error recorder_close(recorder *r)
{
    char err[RECORDING_ERROR_MAX];
    if (r->w == NULL)
        return RECORDING_OK;
    recording_error e = recording_writer_close(&r->w, err, sizeof err);
    if (e != RECORDING_OK && !r->failed)
        fprintf(stderr, RECORD_PROG ": closing %s: %s\n", r->name, err);
    return e;
}

/* Counts a message that is not recorded and says why (unless quiet). */
static void recorder_reject(recorder *r, const char *why)
{
    r->rejected++;
    if (!r->o->quiet)
        fprintf(stderr, RECORD_PROG ": skipped a message: %s\n", why);
}

/* Counts a fragmented frame given up and says which and why (unless quiet). */
static void recorder_gave_up(recorder *r, const char *line)
{
    r->given_up++;
    if (!r->o->quiet)
        fprintf(stderr, RECORD_PROG ": gave up a fragmented frame: %s\n", line);
}

/* Gives up the frame being assembled, if any, for the reason why. */
static void recorder_give_up(recorder *r, const char *why)
{
    char line[RECORD_WHY_MAX];
    if (record_assembly_give_up(&r->assembly, why, line, sizeof line))
        recorder_gave_up(r, line);
}

/* Gives up the frame being assembled when its last fragment came more than
 * --fragment-timeout-ms before now_s (monotonic). */
static void recorder_expire(recorder *r, double now_s)
{
    if (record_assembly_stale(&r->assembly, now_s, r->o->fragment_timeout_ms / 1e3))
        recorder_give_up(r, "no next fragment within --fragment-timeout-ms");
}

/* Why a received message is not to be recorded, judged by its header (*h
 * decoded when NULL is returned: a fragment goes to the assembly, anything
 * else still has its parts checked by message_parts_reject_reason). */
static const char *message_header_reject_reason(const record_options *o, const cli_message *m, protocol_header *h)
{
    protocol_reject reason = protocol_header_decode(zmq_msg_data(&m->part[0]), zmq_msg_size(&m->part[0]), h);
    if (reason != PROTOCOL_OK)
        return protocol_reject_name(reason);
    if (o->kind != RECORD_KIND_ANY && h->kind != record_kind_wire[o->kind])
        return "not of the --kind recorded";
    return NULL;
}

/* Why a whole frame's parts cannot be recorded (NULL: record it). */
static const char *message_parts_reject_reason(const cli_message *m)
{
    if (m->extra > 0)
        return "more parts than a recording takes";
    if (m->count < 2)
        return protocol_reject_name(PROTOCOL_REJECT_PARTS);
    return NULL;
}

/* Points r->part/part_bytes at the payload parts of m; -1 when out of memory. */
static int recorder_gather(recorder *r, const cli_message *m)
{
    size_t parts = m->count - 1;
    if (parts > r->part_cap) {
        const void **part = realloc(r->part, parts * sizeof *part);
        if (part != NULL)
            r->part = part;
        size_t *bytes = realloc(r->part_bytes, parts * sizeof *bytes);
        if (bytes != NULL)
            r->part_bytes = bytes;
        if (part == NULL || bytes == NULL)
            return -1;
        r->part_cap = parts;
    }
    for (size_t i = 0; i < parts; i++) {
        r->part[i] = zmq_msg_data(&m->part[i + 1]);
        r->part_bytes[i] = zmq_msg_size(&m->part[i + 1]);
    }
    return 0;
}

/* Appends one whole frame (header, then parts payload parts; bytes in all)
 * to the recording, starting the ring's next file first when it would pass
 * --max-bytes. Returns RECORDING_OK also for a frame this recording cannot
 * hold (counted and skipped); any other value is fatal and named on stderr. */
static recording_error recorder_append(recorder *r, const uint8_t *header, const void *const *part,
                                       const size_t *part_bytes, size_t parts, size_t bytes, uint64_t received_ns)
{
    recording_error e;
    if (r->o->max_bytes && recording_writer_frames(r->w) > 0 &&
        recording_writer_bytes(r->w) + bytes > r->o->max_bytes) {
        if ((e = recorder_close(r)) != RECORDING_OK || (e = recorder_open_next(r)) != RECORDING_OK)
            return e;
    }
    char err[RECORDING_ERROR_MAX];
    e = recording_writer_append(r->w, header, part, part_bytes, parts, received_ns, err, sizeof err);
    if (e == RECORDING_EMISMATCH || e == RECORDING_EINVAL) {
        recorder_reject(r, err); /* a frame this recording cannot hold: skip it, go on */
        return RECORDING_OK;
    }
    if (e != RECORDING_OK) {
        fprintf(stderr, RECORD_PROG ": write error, recording stopped (%s stays valid up to its last complete "
                        "frame): %s\n", r->name, err);
        r->failed = 1;
        return e;
    }
    r->frames++;
    r->bytes += bytes;
    return RECORDING_OK;
}

/* Takes one fragment (header h) into the assembly; a frame it completes is
 * recorded with one payload part and its last fragment's receipt time.
 * Return value as recorder_append's. */
static recording_error recorder_take_fragment(recorder *r, const cli_message *m, const protocol_header *h,
                                              uint64_t received_ns)
{
    if (recorder_gather(r, m) != 0) {
        fprintf(stderr, RECORD_PROG ": out of memory\n");
        return RECORDING_ENOMEM;
    }
    /* Parts beyond the kept ones: none listed, so the checks say `parts`. */
    size_t parts = m->extra > 0 ? 0 : m->count - 1;
    record_fragment_outcome out;
    record_fragment_result res = record_assembly_take(&r->assembly, h, r->part, r->part_bytes, parts, received_ns,
                                                      cli_monotonic_s(), &out);
    if (res == RECORD_FRAGMENT_SKIPPED)
        recorder_reject(r, out.skipped);
    for (int i = 0; i < out.gave_up_count; i++)
        recorder_gave_up(r, out.gave_up[i]);
    if (res == RECORD_FRAGMENT_ENOMEM) {
        fprintf(stderr, RECORD_PROG ": out of memory for a frame of %u matrices\n", h->count);
        return RECORDING_ENOMEM;
    }
    if (res != RECORD_FRAGMENT_COMPLETE)
        return RECORDING_OK;
    const record_assembly *a = &r->assembly;
    uint8_t header[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&a->f.frame, header);
    const void *payload = a->payload;
    size_t payload_bytes = (size_t)a->f.frame.payload_bytes;
    return recorder_append(r, header, &payload, &payload_bytes, 1, PROTOCOL_HEADER_BYTES + payload_bytes,
                           a->received_ns);
}

/* Records one received message, assembles it (a fragment) or rejects it.
 * A whole covariance frame gives up a fragmented frame being assembled, as
 * in the daemon. Return value as recorder_append's. */
static recording_error recorder_write(recorder *r, const cli_message *m, uint64_t received_ns)
{
    protocol_header h;
    const char *why = message_header_reject_reason(r->o, m, &h);
    if (why == NULL && (h.flags & PROTOCOL_FLAG_FRAGMENT))
        return recorder_take_fragment(r, m, &h, received_ns);
    if (why == NULL && h.kind == PROTOCOL_KIND_COVARIANCE)
        recorder_give_up(r, "a whole frame came in between");
    if (why == NULL)
        why = message_parts_reject_reason(m);
    if (why != NULL) {
        recorder_reject(r, why);
        return RECORDING_OK;
    }
    if (recorder_gather(r, m) != 0) {
        fprintf(stderr, RECORD_PROG ": out of memory\n");
        return RECORDING_ENOMEM;
    }
    return recorder_append(r, zmq_msg_data(&m->part[0]), r->part, r->part_bytes, m->count - 1, m->bytes,
                           received_ns);
}

/* Creates the socket (SUB subscribed to everything or to --kind's prefix),
 * starts watching its peers (*watch) and attaches it. 0, or -1 named on
 * stderr. */
static int record_socket_open(const record_options *o, void **ctx, void **sock, cli_peer **watch)
{
    if (cli_socket_create(ctx, sock, o->sub ? ZMQ_SUB : ZMQ_PULL) != 0) {
        fprintf(stderr, RECORD_PROG ": zmq: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    int hwm = (int)o->hwm, linger = 0;
    zmq_setsockopt(*sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    zmq_setsockopt(*sock, ZMQ_LINGER, &linger, sizeof linger);
    if (o->sub) {
        uint8_t prefix[PROTOCOL_PREFIX_BYTES] = {'E', 'I', 'G', 'S', PROTOCOL_VERSION, 0};
        prefix[5] = record_kind_wire[o->kind];
        zmq_setsockopt(*sock, ZMQ_SUBSCRIBE, prefix, o->kind == RECORD_KIND_ANY ? 0 : sizeof prefix);
    }
    char curve_err[640];
    if (cli_curve_apply(&o->curve, *sock, curve_err, sizeof curve_err) != 0) {
        fprintf(stderr, RECORD_PROG ": %s\n", curve_err);
        return -1;
    }
    if (cli_peer_create(*ctx, *sock, watch) != 0) {
        fprintf(stderr, RECORD_PROG ": socket monitor: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    if (cli_socket_attach(*sock, o->endpoint, o->bind) != 0) {
        fprintf(stderr, RECORD_PROG ": %s %s: %s\n", o->bind ? "bind" : "connect", o->endpoint,
                zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* The per-second line: frames, MB, MB/s over the last window, rejected,
 * fragmented frames given up. */
static void record_progress(const recorder *r, uint64_t window_bytes, double window_s)
{
    fprintf(stderr, RECORD_PROG ": %llu frames, %.1f MB, %.1f MB/s, %llu rejected, %llu given up, file %s\n",
            (unsigned long long)r->frames, (double)r->bytes / 1e6, (double)window_bytes / 1e6 / window_s,
            (unsigned long long)r->rejected, (unsigned long long)r->given_up, r->name);
}

/* Connecting: -1 (named on stderr) once the socket has had nothing to
 * connect to for --connect-timeout-ms, else 0. Binding, the recorder is the
 * server and waits for its senders as long as it runs. */
static int record_check_sender(const recorder *r)
{
    const record_options *o = r->o;
    if (o->bind || o->connect_timeout_ms == 0)
        return 0;
    double absent = cli_peer_absent_s(r->watch);
    if (absent * 1e3 < o->connect_timeout_ms)
        return 0;
    fprintf(stderr, RECORD_PROG ": nothing to connect to at %s for %.1f s (is the sender running there?): "
                    "giving up with %llu frames recorded\n", o->endpoint, absent, (unsigned long long)r->frames);
    return -1;
}

/* Receives and records until --frames, --duration, a signal, an error or
 * no sender (record_check_sender). Returns 0, or -1 after an error named
 * on stderr. */
static int record_loop(recorder *r, void *sock)
{
    const record_options *o = r->o;
    cli_message m = {0};
    int rc = 0;
    double start = cli_monotonic_s(), last_report = start;
    uint64_t bytes_at_report = 0;
    while (!cli_stop_requested && (o->frames == 0 || r->frames < o->frames)) {
        double t = cli_monotonic_s();
        if (o->duration_s > 0 && t - start >= o->duration_s)
            break;
        recorder_expire(r, t);
        if (!o->quiet && t - last_report >= 1.0) {
            record_progress(r, r->bytes - bytes_at_report, t - last_report);
            last_report = t;
            bytes_at_report = r->bytes;
        }
        zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
        int ready = zmq_poll(&item, 1, 200);
        if (ready == 0 && record_check_sender(r) != 0) {
            rc = -1;
            break;
        }
        if (ready == 0 || (ready < 0 && zmq_errno() == EINTR))
            continue;
        if (ready < 0 || cli_message_receive(sock, &m, 1 + (size_t)RECORDING_PARTS_MAX) != 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, RECORD_PROG ": receive: %s\n", zmq_strerror(errno));
            rc = -1;
            break;
        }
        uint64_t received_ns = cli_realtime_ns();
        recorder_expire(r, cli_monotonic_s()); /* a fragment that came too late joins nothing */
        recording_error e = recorder_write(r, &m, received_ns);
        cli_message_release(&m);
        if (e != RECORDING_OK) {
            rc = -1;
            break;
        }
    }
    cli_message_free(&m);
    return rc;
}

/* The tool once its options are parsed (CLI_MAIN below); the exit status. */
static int tool_main(record_options *o)
{
    (void)transport_tune_allocator(); /* frames of tens of MB; best effort (transport_memory.h) */
    if (o->repair != NULL)
        return repair_main(o->repair);
    if (o->import.source != NULL)
        return record_import(&o->import, o->name);

    struct sigaction ignore = {.sa_handler = SIG_IGN};
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGXFSZ, &ignore, NULL); /* past RLIMIT_FSIZE, write() fails with EFBIG instead */
    recorder r = {.o = o};
    record_assembly_init(&r.assembly, o->max_frame_bytes);
    void *ctx = NULL, *sock = NULL;
    int rc = 1;
    if (record_socket_open(o, &ctx, &sock, &r.watch) != 0 || recorder_open_next(&r) != RECORDING_OK)
        goto done;
    cli_stop_on_signals();
    double start = cli_monotonic_s();
    int loop = record_loop(&r, sock);
    double elapsed = cli_monotonic_s() - start;
    recorder_give_up(&r, "the recorder stopped");
    cli_peer_destroy(&r.watch);
    cli_socket_close(&ctx, &sock);
    int closed = recorder_close(&r) == RECORDING_OK;
    printf(RECORD_PROG ": recorded %llu frames (%.1f MB) in %.2f s, %.1f MB/s, %llu rejected, %llu fragmented "
           "frames given up, into %llu recording%s, the last %s%s\n",
           (unsigned long long)r.frames, (double)r.bytes / 1e6, elapsed,
           elapsed > 0 ? (double)r.bytes / 1e6 / elapsed : 0.0, (unsigned long long)r.rejected,
           (unsigned long long)r.given_up,
           (unsigned long long)r.files, r.files == 1 ? "" : "s", r.name,
           loop != 0 ? " (stopped by an error)" : cli_stop_requested ? " (interrupted)" : "");
    fflush(stdout);
    rc = loop == 0 && closed ? 0 : 1;
done:
    cli_peer_destroy(&r.watch);
    cli_socket_close(&ctx, &sock);
    recorder_close(&r);
    free(r.part);
    free(r.part_bytes);
    record_assembly_free(&r.assembly);
    return rc;
}

CLI_MAIN(main, record_options, parse_options, tool_main)
