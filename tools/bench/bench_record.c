/*
 * bench_record.c - eigstream-bench record: the recording tools against
 * references measured the same way, in one run.
 *
 *   write   recording_writer_append of --frames frames of --cells x n x n complex
 *           double (180 x 128: 47 MB each) into a fresh recording in --dir, then
 *           close and fdatasync; against `dd if=/dev/zero bs=1M conv=fdatasync`
 *           of the same bytes into the same directory: MB/s and the ratio
 *   feed    frames/s into a PULL sink of ours from `eigstream-replay --max` (that
 *           recording, 2 x --frames frames) against `eigstream-sim --rate 0` of the
 *           same frame size and count, both timed from the first frame received
 *           to the last: the ratio
 *   pacing  `eigstream-replay` (original timing) of a small recording whose frames
 *           were received 1/--rate s apart (--pacing-frames of them): its pacing
 *           error p50/p99 (send time against the schedule)
 * The sim and replay executables are the ones beside this bench when there
 * are (an install: /usr/bin), else the ones built with it (--sim, --replay to
 * override). Exit status 0, or 1 on a failure (named).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "bench.h"
#include "cli_common.h"
#include "cli_message.h"
#include "cli_options.h"
#include "protocol.h"
#include "recording.h"

#define RECORD_PROG "eigstream-bench record"

extern char **environ;

typedef struct record_bench_options {
    uint32_t n, cells, frames, pacing_frames;
    double rate;
    const char *dir, *json, *sim, *replay;
} record_bench_options;

typedef struct record_bench_result {
    double write_mb_s, dd_mb_s, replay_fps, sim_fps, pacing_p50_ms, pacing_p99_ms;
    double frame_mb;
} record_bench_result;

/* Starts argv[0] (a path) with argv; with capture its stdout goes to a
 * pipe whose read end is *fd (else -1). Returns the pid, or -1 (named). */
static pid_t run_start(char *const argv[], int capture, int *fd)
{
    int pipe_fd[2] = {-1, -1};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (capture && pipe(pipe_fd) == 0) {
        posix_spawn_file_actions_adddup2(&actions, pipe_fd[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, pipe_fd[0]);
    }
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (pipe_fd[1] >= 0)
        close(pipe_fd[1]);
    *fd = pipe_fd[0];
    if (e != 0) {
        fprintf(stderr, RECORD_PROG ": cannot run %s: %s\n", argv[0], strerror(e));
        if (*fd >= 0)
            close(*fd);
        return -1;
    }
    return pid;
}

/* Reads the child's captured stdout (fd, or -1) into out and waits for it.
 * Its exit status, or -1. */
static int run_finish(pid_t pid, int fd, char *out, size_t out_bytes)
{
    size_t len = 0;
    ssize_t got;
    while (fd >= 0 && len + 1 < out_bytes && (got = read(fd, out + len, out_bytes - 1 - len)) > 0)
        len += (size_t)got;
    if (out != NULL)
        out[len] = '\0';
    if (fd >= 0)
        close(fd);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Writes `frames` covariance frames of payload into recording path with
 * received_ns spaced by interval_ns; 0, or -1 (named). */
static int write_recording(const char *path, const uint8_t *payload, size_t payload_bytes, uint32_t n,
                           uint32_t cells, uint32_t frames, uint64_t interval_ns)
{
    char err[RECORDING_ERROR_MAX];
    recording_writer *w = NULL;
    recording_writer_params params = {.path = path, .recorder = "eigstream-bench record"};
    protocol_header h;
    protocol_header_init(&h, PROTOCOL_KIND_COVARIANCE);
    h.n = n;
    h.count = cells;
    h.element = EIG_COMPLEX_DOUBLE;
    h.payload_bytes = payload_bytes;
    h.flags = PROTOCOL_FLAG_CRC;
    h.crc32c = protocol_crc32c(0, payload, payload_bytes);
    recording_error e = recording_writer_open(&w, &params, err, sizeof err);
    uint64_t t0 = cli_realtime_ns();
    for (uint32_t i = 0; i < frames && e == RECORDING_OK; i++) {
        uint8_t header[PROTOCOL_HEADER_BYTES];
        h.seq = i;
        h.timestamp_ns = t0 + i * interval_ns;
        protocol_header_encode(&h, header);
        const void *part[1] = {payload};
        e = recording_writer_append(w, header, part, &payload_bytes, 1, t0 + i * interval_ns, err, sizeof err);
    }
    recording_error c = w != NULL ? recording_writer_close(&w, err, sizeof err) : RECORDING_OK;
    if (e != RECORDING_OK || c != RECORDING_OK) {
        fprintf(stderr, RECORD_PROG ": %s\n", err);
        return -1;
    }
    return 0;
}

/* fdatasync of a file by name; 0 or -1. */
static int sync_file(const char *path)
{
    int fd = open(path, O_WRONLY);
    int rc = fd >= 0 && fdatasync(fd) == 0 ? 0 : -1;
    if (fd >= 0)
        close(fd);
    return rc;
}

/* (a) the recording's write throughput against dd's, same bytes, same disk. */
static int bench_write(const record_bench_options *o, const char *dir, const uint8_t *payload, size_t bytes,
                       record_bench_result *res)
{
    char rec[RECORDING_PATH_MAX + 16], data[RECORDING_PATH_MAX + 32], of[RECORDING_PATH_MAX + 16], count[32];
    snprintf(rec, sizeof rec, "%s/big", dir);
    snprintf(data, sizeof data, "%s.sigmf-data", rec);
    double t = bench_now_ms();
    if (write_recording(rec, payload, bytes, o->n, o->cells, o->frames, 50000000ull) != 0 || sync_file(data) != 0)
        return -1;
    /* Every byte written: the samples (data file), and per frame the 64-byte
     * journal record and the frame's head, its header (docs/recording.md). */
    double total = (double)o->frames * (double)(bytes + 64 + PROTOCOL_HEADER_BYTES);
    res->write_mb_s = total / 1e6 / ((bench_now_ms() - t) / 1e3);
    unsigned long long mib = (unsigned long long)((total + (1 << 20) - 1) / (1 << 20));
    snprintf(of, sizeof of, "of=%s/dd.bin", dir);
    snprintf(count, sizeof count, "count=%llu", mib);
    char *argv[] = {"/bin/dd", "if=/dev/zero", of, "bs=1M", count, "conv=fdatasync", "status=none", NULL};
    t = bench_now_ms();
    int fd;
    pid_t pid = run_start(argv, 0, &fd);
    if (pid < 0)
        return -1;
    if (run_finish(pid, fd, NULL, 0) != 0) {
        fprintf(stderr, RECORD_PROG ": dd failed\n");
        return -1;
    }
    res->dd_mb_s = (double)mib * (1 << 20) / 1e6 / ((bench_now_ms() - t) / 1e3);
    snprintf(of, sizeof of, "%s/dd.bin", dir);
    unlink(of);
    return 0;
}

/* Starts argv (sending to our bound PULL sock), receives `frames` frames
 * and returns the frames/s from the first to the last received (0 when it
 * failed, named); *out gets the child's stdout. */
static double bench_feed(void *sock, char *const argv[], uint64_t frames, char *out, size_t out_bytes)
{
    int fd;
    pid_t pid = run_start(argv, 1, &fd);
    if (pid < 0)
        return 0.0;
    cli_message m = {0};
    double first = 0, last = 0;
    uint64_t got = 0;
    while (got < frames) {
        zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 30000) <= 0 || cli_message_receive(sock, &m, 1 + (size_t)RECORDING_PARTS_MAX) != 0)
            break;
        last = bench_now_ms();
        first = got++ == 0 ? last : first;
        cli_message_release(&m);
    }
    cli_message_free(&m);
    int status = run_finish(pid, fd, out, out_bytes);
    if (got < frames || status != 0) {
        fprintf(stderr, RECORD_PROG ": %s: %llu of %llu frames, exit %d\n", argv[0], (unsigned long long)got,
                (unsigned long long)frames, status);
        return 0.0;
    }
    return last > first ? (double)(frames - 1) / ((last - first) / 1e3) : 0.0;
}

/* (b) and (c): the feed rates and the pacing error, through one PULL. */
static int bench_feeds(const record_bench_options *o, const char *dir, record_bench_result *res)
{
    char endpoint[RECORDING_PATH_MAX + 16], rec[RECORDING_PATH_MAX + 16], small[RECORDING_PATH_MAX + 16], out[4096];
    char n[16], cells[16], frames2[16], pacing[16], frames[16];
    snprintf(endpoint, sizeof endpoint, "ipc://%s/feed", dir);
    snprintf(rec, sizeof rec, "%s/big", dir);
    snprintf(small, sizeof small, "%s/paced", dir);
    snprintf(n, sizeof n, "%u", o->n);
    snprintf(cells, sizeof cells, "%u", o->cells);
    snprintf(frames, sizeof frames, "%u", o->frames);
    snprintf(frames2, sizeof frames2, "%u", 2 * o->frames);
    snprintf(pacing, sizeof pacing, "%u", o->pacing_frames);
    void *ctx = NULL, *sock = NULL;
    int rc = -1;
    if (cli_socket_create(&ctx, &sock, ZMQ_PULL) != 0 || cli_socket_attach(sock, endpoint, 1) != 0) {
        fprintf(stderr, RECORD_PROG ": %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
        goto done;
    }
    char *replay_argv[] = {(char *)o->replay, "--endpoint", endpoint, "--max", "--loop", "2", "--quiet", rec, NULL};
    char *sim_argv[] = {(char *)o->sim, "--endpoint", endpoint, "--n", n, "--cells", cells, "--frames", frames2,
                        "--rate", "0", "--pool", "1", "--quiet", NULL};
    res->replay_fps = bench_feed(sock, replay_argv, 2ull * o->frames, out, sizeof out);
    res->sim_fps = bench_feed(sock, sim_argv, 2ull * o->frames, out, sizeof out);
    size_t small_bytes = protocol_matrix_bytes(16, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL) * 8;
    uint8_t *payload = calloc(1, small_bytes);
    if (payload == NULL || res->replay_fps <= 0 || res->sim_fps <= 0 ||
        write_recording(small, payload, small_bytes, 16, 8, o->pacing_frames, (uint64_t)(1e9 / o->rate)) != 0) {
        free(payload);
        goto done;
    }
    free(payload);
    char *paced_argv[] = {(char *)o->replay, "--endpoint", endpoint, "--quiet", small, NULL};
    if (bench_feed(sock, paced_argv, o->pacing_frames, out, sizeof out) > 0 &&
        sscanf(strstr(out, "pacing error") ? strstr(out, "pacing error") : "", "pacing error p50 %lf ms p99 %lf ms",
               &res->pacing_p50_ms, &res->pacing_p99_ms) == 2)
        rc = 0;
    else
        fprintf(stderr, RECORD_PROG ": no pacing line from %s: %s\n", o->replay, out);
done:
    cli_socket_close(&ctx, &sock);
    return rc;
}

/* The default of --sim or --replay: the executable name in this program's
 * own folder when it is there (an installed bench, whose build tree may be
 * gone), written into buf; else build_path, where the build put it. */
static const char *sibling_tool(const char *name, const char *build_path, char *buf, size_t size)
{
    ssize_t len = readlink("/proc/self/exe", buf, size - 1);
    if (len <= 0)
        return build_path;
    buf[len] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash == NULL || (size_t)(slash + 1 - buf) + strlen(name) >= size)
        return build_path;
    strcpy(slash + 1, name);
    return access(buf, X_OK) == 0 ? buf : build_path;
}

/* Sets the defaults, then parses argv[2..] into *o. -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, record_bench_options *o)
{
    static char sim_path[4096], replay_path[4096];
    *o = (record_bench_options){
        .n = 128, .cells = 180, .frames = 4, .pacing_frames = 40, .rate = 20.0, .dir = ".",
        .sim = sibling_tool("eigstream-sim", EIGSTREAM_BENCH_SIM, sim_path, sizeof sim_path),
        .replay = sibling_tool("eigstream-replay", EIGSTREAM_BENCH_REPLAY, replay_path, sizeof replay_path)};
    const cli_option table[] = {
        CLI_INT("frames", 0, &o->frames, 2, 100000, "F", "frames written, and 2F fed by each sender"),
        CLI_INT("n", 0, &o->n, 1, EIG_N_MAX, "N", "matrix order of the write and feed frames"),
        CLI_INT("cells", 0, &o->cells, 1, 100000, "C", "matrices per frame"),
        CLI_INT("pacing-frames", 0, &o->pacing_frames, 2, 1000000, "P", "frames of the pacing replay"),
        CLI_DOUBLE("rate", 0, &o->rate, 0.1, 1e5, "R", "frames/s of the pacing replay"),
        CLI_STRING("dir", 0, &o->dir, "DIR", "where the recording and dd's file go (the disk measured)"),
        CLI_STRING("sim", 0, &o->sim, "PATH", "eigstream-sim executable"),
        CLI_STRING("replay", 0, &o->replay, "PATH", "eigstream-replay executable"),
        CLI_STRING("json", 0, &o->json, "FILE", "also write the results as JSON"),
        CLI_END};
    const cli_spec spec = {.prog = RECORD_PROG, .synopsis = "[options]",
                           .description = "Recording write throughput against dd, replay --max feed rate against\n"
                                          "eigstream-sim, and replay pacing error, measured in one run.\n",
                           .options = table};
    cli_args args;
    return cli_parse_or_report(&spec, argc, argv, 2, &args, 1);
}

/* The table on stdout, and the JSON file when asked. 0, or 1 when the JSON fails. */
static int bench_record_report(const record_bench_options *o, const record_bench_result *r)
{
    printf("eigstream-bench record: frames of %u x %ux%u complex double (%.1f MB), in %s\n", o->cells, o->n, o->n,
           r->frame_mb, o->dir);
    printf("%-34s %14s\n", "measure", "value");
    printf("%-34s %10.1f MB/s\n", "write: recording (fdatasync)", r->write_mb_s);
    printf("%-34s %10.1f MB/s\n", "write: dd bs=1M conv=fdatasync", r->dd_mb_s);
    printf("%-34s %10.3f\n", "  ratio recording / dd", r->write_mb_s / r->dd_mb_s);
    printf("%-34s %10.2f frames/s\n", "feed: replay --max", r->replay_fps);
    printf("%-34s %10.2f frames/s\n", "feed: eigstream-sim --rate 0", r->sim_fps);
    printf("%-34s %10.3f\n", "  ratio replay / sim", r->replay_fps / r->sim_fps);
    printf("pacing: %u frames at %.1f frames/s   p50 %.3f ms  p99 %.3f ms\n", o->pacing_frames, o->rate,
           r->pacing_p50_ms, r->pacing_p99_ms);
    if (o->json == NULL)
        return 0;
    FILE *f = fopen(o->json, "w");
    if (f == NULL)
        return cli_fatal(RECORD_PROG, "cannot write %s: %s", o->json, strerror(errno));
    fprintf(f, "{\"frame_mb\": %.3f, \"write_recording_mb_s\": %.3f, \"write_dd_mb_s\": %.3f, \"write_ratio\": %.4f,\n"
               " \"feed_replay_fps\": %.3f, \"feed_sim_fps\": %.3f, \"feed_ratio\": %.4f,\n"
               " \"pacing_rate\": %.3f, \"pacing_frames\": %u, \"pacing_p50_ms\": %.4f, \"pacing_p99_ms\": %.4f}\n",
            r->frame_mb, r->write_mb_s, r->dd_mb_s, r->write_mb_s / r->dd_mb_s, r->replay_fps, r->sim_fps,
            r->replay_fps / r->sim_fps, o->rate, o->pacing_frames, r->pacing_p50_ms, r->pacing_p99_ms);
    return fclose(f) == 0 ? 0 : cli_fatal(RECORD_PROG, "error writing %s", o->json);
}

/* Removes what the run left in its directory, then the directory. */
static void bench_record_clean(const char *dir)
{
    char path[RECORDING_PATH_MAX + 16], err[RECORDING_ERROR_MAX];
    snprintf(path, sizeof path, "%s/big", dir);
    recording_remove(path, err, sizeof err);
    snprintf(path, sizeof path, "%s/paced", dir);
    recording_remove(path, err, sizeof err);
    snprintf(path, sizeof path, "%s/feed", dir);
    unlink(path);
    rmdir(dir);
}

int bench_record_main(int argc, char **argv)
{
    record_bench_options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    char dir[RECORDING_PATH_MAX];
    snprintf(dir, sizeof dir, "%s/eigstream-bench-record-XXXXXX", o.dir);
    if (mkdtemp(dir) == NULL)
        return cli_fatal(RECORD_PROG, "cannot create a directory in %s: %s", o.dir, strerror(errno));
    size_t bytes = protocol_matrix_bytes(o.n, EIG_COMPLEX_DOUBLE, PROTOCOL_STORAGE_FULL) * o.cells;
    uint8_t *payload = malloc(bytes);
    record_bench_result res = {.frame_mb = (double)bytes / 1e6};
    int rc = 1;
    if (payload == NULL) {
        cli_fatal(RECORD_PROG, "cannot allocate a frame of %zu bytes", bytes);
        goto done;
    }
    for (size_t i = 0; i < bytes; i++)
        payload[i] = (uint8_t)(i * 2654435761u >> 13); /* not zeros: no file system shortcut */
    if (bench_write(&o, dir, payload, bytes, &res) == 0 && bench_feeds(&o, dir, &res) == 0)
        rc = bench_record_report(&o, &res);
done:
    free(payload);
    bench_record_clean(dir);
    return rc;
}
