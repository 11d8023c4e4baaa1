/*
 * sink_main.c - eigstream-sink: receives eigenspace frames, checks them
 * against the scene the simulator was given, reports throughput and latency,
 * and ends with a VERDICT line (exit 0 PASS, 1 FAIL, 2 usage).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "cli_choices.h"
#include "cli_common.h"
#include "cli_curve.h"
#include "cli_message.h"
#include "cli_options.h"
#include "protocol.h"
#include "scene.h"
#include "sink_check.h"
#include "sink_iq.h"
#include "sink_latency.h"
#include "sink_self_check.h"
#include "transport_memory.h"

#define PARTS_MAX 4 /* eigenspace frames have 3; one more detects extras */

typedef struct sink_options {
    const char *endpoint, *sources, *jammers, *json, *latency_csv;
    int pull, bind, quiet;
    uint64_t frames;
    double duration_s, max_angle_deg, doa_tol_deg;
    uint32_t doa_fft_size, doa_cells, n;
    cli_curve curve;
    /* --iq: eigenspaces formed from IQ cubes of this scene, this geometry */
    int iq;
    const char *targets;
    double clutter_db, clutter_slope, min_projection, max_far_projection;
    uint32_t clutter_patches;
    sink_iq_geometry geometry;
    /* --check: the daemon's self-check on every matrix received, the input
     * made again from the sim's seed, snapshots, pool and storage */
    int check;
    uint64_t seed;
    uint32_t snapshots, pool;
    int storage;
} sink_options;

/* Latencies in ms, growable. */
typedef struct series {
    double *x;
    size_t len, cap;
} series;

typedef struct sink_stats {
    uint64_t frames, bytes, gaps, late, matrices, restarts;
    uint64_t rejects[PROTOCOL_REJECT_COUNT_];
    uint64_t bad_status, not_ascending, dim_ok, subspace_checked, doa_checked;
    double subspace_max_deg, doa_max_error_deg;
    sink_iq_result iq; /* --iq */
    int have_seq;
    uint64_t next_seq;
    series publish_ms, sink_ms, solve_ms; /* all frames */
    series window_publish_ms, window_sink_ms; /* since the last report */
    uint64_t window_frames, window_bytes;
    FILE *latency_csv; /* --latency-csv, or NULL */
    sink_self_checker *self_checker; /* --check, else NULL */
    sink_self_check_result self;
} sink_stats;

/* What ended the receive loop early. */
typedef enum sink_failure { SINK_FAILED_MEMORY = -1, SINK_FAILED_CSV = -2 } sink_failure;

static const char *const sink_patterns[] = {"sub", "pull", NULL};

/* Sets the defaults, then parses argv into *o. Returns -1 to go on, else the
 * exit status: 0 after --help, 2 after a bad argument (named on stderr). */
static int parse_options(int argc, char **argv, sink_options *o)
{
    *o = (sink_options){.endpoint = "tcp://127.0.0.1:5551", .sources = SCENE_DEFAULT_SOURCES,
                        .max_angle_deg = 5.0, .doa_tol_deg = 1.0, .targets = IQ_SCENE_DEFAULT_TARGETS,
                        .clutter_db = 30.0, .clutter_slope = 1.0, .min_projection = 0.9,
                        .max_far_projection = 0.5, .geometry = {.fft_size = 180, .segments = 1},
                        .seed = 1, .snapshots = 256, .pool = 4, .storage = PROTOCOL_STORAGE_FULL};
    const cli_choices storages = cli_choices_storage();
    uint32_t far_bins = 0;
    uint32_t fft_size = 4096;
    int doa = 0;
    const cli_option table[] = {
        CLI_SOCKET_OPTIONS(&o->endpoint, &o->pull, sink_patterns, "socket type (sub: prefix EIGS 1 2)", &o->bind),
        CLI_STRING("sources", 0, &o->sources, "LIST", "scene emitters angle_deg:power_db,..."),
        CLI_STRING("jammers", 0, &o->jammers, "LIST", "jammers, same syntax"),
        CLI_INT("n", 0, &o->n, 0, EIG_N_MAX, "N", "expected matrix order, 0 = any"),
        CLI_INT("frames", 0, &o->frames, 0, 1000000000000000ull, "N",
                "the frames expected: stop after N, fail when fewer came (--duration, a signal); 0 = no limit"),
        CLI_DOUBLE("duration", 0, &o->duration_s, 0.0, 1e9, "S", "stop after S seconds, 0 = no limit"),
        CLI_DOUBLE("max-angle-deg", 0, &o->max_angle_deg, 0.0, 90.0, "A", "subspace angle threshold"),
        CLI_FLAG("doa", 0, &doa, "check FFT-MUSIC directions of arrival"),
        CLI_INT("doa-fft-size", 0, &fft_size, 16, 1u << 22, "M", "zero-padded FFT length"),
        CLI_INT("doa-cells", 0, &o->doa_cells, 0, 1000000000, "C", "DOA on the first C matrices of a frame, 0 = all"),
        CLI_DOUBLE("doa-tol-deg", 0, &o->doa_tol_deg, 0.0, 180.0, "T", "DOA error threshold"),
        CLI_STRING("json", 0, &o->json, "FILE", "write the final statistics as JSON"),
        CLI_STRING("latency-csv", 0, &o->latency_csv, "FILE",
                   "write one line of stage times per frame (tools/latency/eigstream-latency-plot.py)"),
        CLI_FLAG("quiet", 0, &o->quiet, "no per-second lines"),
        CLI_CURVE_OPTIONS(&o->curve),
        CLI_FLAG("iq", 0, &o->iq, "per-Doppler-bin checks of eigenspaces formed from eigstream-sim --iq cubes"),
        CLI_STRING("targets", 0, &o->targets, "LIST", "--iq: angle_deg:doppler:power_db,... as given to the sim"),
        CLI_INT("clutter-patches", 0, &o->clutter_patches, 0, 100000, "K", "--iq: as given to the sim"),
        CLI_DOUBLE("clutter-db", 0, &o->clutter_db, -200.0, 200.0, "DB", "--iq: as given to the sim"),
        CLI_DOUBLE("clutter-slope", 0, &o->clutter_slope, -100.0, 100.0, "B", "--iq: as given to the sim"),
        CLI_INT("fft-size", 0, &o->geometry.fft_size, 1, 1048576, "F",
                "--iq: the daemon's Doppler FFT size (form.fft_size, or form.pulses when that is 0)"),
        CLI_INT("doppler-first", 0, &o->geometry.bin_first, 0, 1048575, "B", "--iq: the daemon's form.doppler_first"),
        CLI_INT("range-segments", 0, &o->geometry.segments, 1, 1048576, "S",
                "--iq: the daemon's form.range_segments"),
        CLI_INT("far-bins", 0, &far_bins, 0, 1048576, "D",
                "--iq: bins further than D from a target's are its far bins; 0 = max(3, F/8)"),
        CLI_DOUBLE("min-projection", 0, &o->min_projection, 0.0, 1.0, "P",
                   "--iq: least energy fraction of a target (own bin) or jammer (every bin) in the signal subspace"),
        CLI_DOUBLE("max-far-projection", 0, &o->max_far_projection, 0.0, 1.0, "P",
                   "--iq: largest energy fraction of a target in the signal subspace of its far bins"),
        CLI_FLAG("check", 0, &o->check,
                 "the daemon's self-check (LAPACK ratios <= 60) on every matrix received: needs --n and the sim's "
                 "--seed, --snapshots, --pool, --storage, and a daemon without forming"),
        CLI_INT("seed", 0, &o->seed, 0, UINT64_MAX, "S", "--check: the sim's --seed"),
        CLI_INT("snapshots", 0, &o->snapshots, 1, 1000000, "K", "--check: the sim's --snapshots"),
        CLI_INT("pool", 0, &o->pool, 1, 1024, "P", "--check: the sim's --pool"),
        CLI_CHOICE("storage", 0, &o->storage, storages.names, storages.values, "--check: the sim's --storage"),
        CLI_END};
    const cli_spec spec = {.prog = "eigstream-sink", .synopsis = "[options]",
                           .description = "Receives eigenspace frames, checks them against the scene, reports\n"
                                          "throughput and latency, and ends with a VERDICT line\n"
                                          "(exit 0 PASS, 1 FAIL, 2 usage).\n",
                           .options = table};
    cli_args args;
    int status = cli_parse_or_report(&spec, argc, argv, 1, &args, 2);
    o->doa_fft_size = doa ? fft_size : 0;
    o->geometry.far_bins = far_bins != 0 ? far_bins : (o->geometry.fft_size / 8 > 3 ? o->geometry.fft_size / 8 : 3);
    return status;
}

/* Appends v to s; 0, or -1 when out of memory. */
static int series_push(series *s, double v)
{
    double *x = cli_array_grow(s->x, s->len, &s->cap, sizeof *x, 256);
    if (x == NULL)
        return -1;
    s->x = x;
    s->x[s->len++] = v;
    return 0;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile q in [0, 100] (sorts s); NAN when empty. */
static double series_percentile(series *s, double q)
{
    if (s->len == 0)
        return NAN;
    qsort(s->x, s->len, sizeof *s->x, compare_double);
    size_t rank = (size_t)ceil(q / 100.0 * (double)s->len);
    return s->x[rank > 0 ? rank - 1 : 0];
}

static void count_reject(sink_stats *st, protocol_reject r, const sink_options *o)
{
    st->rejects[r]++;
    if (!o->quiet)
        fprintf(stderr, "eigstream-sink: rejected a message: %s\n", protocol_reject_name(r));
}

/* Decodes, size-checks and checks one received message. Returns 0, or a
 * sink_failure. */
/* The scene checks of one frame: covariance-scene checks, or --iq's per-bin ones. */
static scene_error check_frame(sink_stats *st, sink_checker *checker, const sink_options *o, const iq_scene *iq,
                               const protocol_header *h, const protocol_matrix_meta *meta, const uint8_t *data)
{
    if (o->iq) {
        sink_iq_result r;
        sink_iq_result_init(&r);
        scene_error e = sink_iq_check_frame(iq, &o->geometry, h, meta, data, &r);
        if (e == SCENE_OK)
            sink_iq_result_add(&st->iq, &r);
        return e;
    }
    sink_frame_result fr;
    scene_error e = sink_check_frame(checker, h, meta, data, &fr);
    if (e != SCENE_OK)
        return e;
    st->matrices += fr.matrices;
    st->bad_status += fr.bad_status;
    st->not_ascending += fr.not_ascending;
    st->dim_ok += fr.dim_ok;
    st->subspace_checked += fr.subspace_checked;
    st->doa_checked += fr.doa_checked;
    if (fr.subspace_checked && !(fr.subspace_max_deg <= st->subspace_max_deg))
        st->subspace_max_deg = fr.subspace_max_deg;
    if (fr.doa_checked && !(fr.doa_max_error_deg <= st->doa_max_error_deg))
        st->doa_max_error_deg = fr.doa_max_error_deg;
    return SCENE_OK;
}

static int handle_frame(sink_stats *st, sink_checker *checker, const sink_options *o, const iq_scene *iq,
                        zmq_msg_t *parts, size_t count, uint64_t received_ns)
{
    protocol_header h;
    protocol_reject r = protocol_header_decode(zmq_msg_data(&parts[0]), zmq_msg_size(&parts[0]), &h);
    if (r == PROTOCOL_OK && h.kind != PROTOCOL_KIND_EIGENSPACE)
        r = PROTOCOL_REJECT_KIND;
    if (r == PROTOCOL_OK && count != 3)
        r = PROTOCOL_REJECT_PARTS;
    if (r == PROTOCOL_OK && o->n != 0)
        r = protocol_check_config(&h, o->n, 0, 0);
    if (r != PROTOCOL_OK) {
        count_reject(st, r, o);
        return 0;
    }
    protocol_matrix_meta *meta = malloc(((size_t)h.count + 1) * sizeof *meta);
    if (meta == NULL)
        return SINK_FAILED_MEMORY;
    protocol_stage_times t;
    size_t sizes[2] = {zmq_msg_size(&parts[1]), zmq_msg_size(&parts[2])};
    const void *payload[2] = {zmq_msg_data(&parts[1]), zmq_msg_data(&parts[2])};
    r = protocol_meta_decode(payload[0], sizes[0], h.count, &t, meta);
    if (r == PROTOCOL_OK)
        r = protocol_eigenspace_check_sizes(&h, meta, sizes, 2, 0);
    if (r == PROTOCOL_OK)
        r = protocol_check_crc(&h, payload, sizes, 2);
    if (r != PROTOCOL_OK) {
        count_reject(st, r, o);
        free(meta);
        return 0;
    }

    if (st->have_seq && h.seq > st->next_seq) {
        st->gaps += h.seq - st->next_seq;
        if (!o->quiet)
            fprintf(stderr, "eigstream-sink: sequence gap: expected %llu, got %llu\n",
                    (unsigned long long)st->next_seq, (unsigned long long)h.seq);
    } else if (st->have_seq && h.seq < st->next_seq) {
        /* Behind: the source restarted (or a frame came twice); the frame
         * counts, and a frame the source sent but that never came shows as
         * fewer frames than --frames. */
        st->restarts++;
        if (!o->quiet)
            fprintf(stderr, "eigstream-sink: sequence went back: expected %llu, got %llu (restart)\n",
                    (unsigned long long)st->next_seq, (unsigned long long)h.seq);
    }
    st->have_seq = 1;
    st->next_seq = h.seq + 1;
    st->frames++;
    st->window_frames++;
    uint64_t bytes = PROTOCOL_HEADER_BYTES + sizes[0] + sizes[1];
    st->bytes += bytes;
    st->window_bytes += bytes;
    st->late += (h.flags & PROTOCOL_FLAG_LATE) != 0;

    if (st->latency_csv != NULL && sink_latency_write_frame(st->latency_csv, &h, &t, received_ns) != 0) {
        free(meta);
        return SINK_FAILED_CSV;
    }
    double publish = sink_latency_diff_ms(t.published_ns, h.timestamp_ns), sink = sink_latency_diff_ms(received_ns, h.timestamp_ns);
    int fail = series_push(&st->publish_ms, publish) | series_push(&st->sink_ms, sink) |
               series_push(&st->solve_ms, sink_latency_diff_ms(t.solve_end_ns, t.solve_start_ns)) |
               series_push(&st->window_publish_ms, publish) | series_push(&st->window_sink_ms, sink);

    scene_error e = check_frame(st, checker, o, iq, &h, meta, payload[1]);
    if (e == SCENE_OK && st->self_checker != NULL &&
        sink_self_check_frame(st->self_checker, &h, meta, payload[1], &st->self) != SCENE_OK) {
        fprintf(stderr, "eigstream-sink: --check: frame seq %llu is not the sim's (--n, --precision)\n",
                (unsigned long long)h.seq);
        st->self.failed += h.count; /* counted as failed: the line says why */
    }
    free(meta);
    if (e == SCENE_EINVAL && o->iq) {
        fprintf(stderr, "eigstream-sink: --iq: %u matrices do not fit --range-segments %u\n", h.count,
                o->geometry.segments);
        st->iq.bad_status += h.count; /* counted as failed: the verdict says why */
        return 0;
    }
    if (e != SCENE_OK || fail)
        return SINK_FAILED_MEMORY;
    return 0;
}

static void report_window(sink_stats *st, double seconds)
{
    double p50p = series_percentile(&st->window_publish_ms, 50), p99p = series_percentile(&st->window_publish_ms, 99),
           maxp = series_percentile(&st->window_publish_ms, 100);
    double p50s = series_percentile(&st->window_sink_ms, 50), p99s = series_percentile(&st->window_sink_ms, 99),
           maxs = series_percentile(&st->window_sink_ms, 100);
    fprintf(stderr,
            "eigstream-sink: %.2f frames/s %.1f MB/s | publish-source p50/p99/max %.1f/%.1f/%.1f ms | "
            "sink-source p50/p99/max %.1f/%.1f/%.1f ms | frames %llu\n",
            (double)st->window_frames / seconds, (double)st->window_bytes / 1e6 / seconds, p50p, p99p, maxp, p50s,
            p99s, maxs, (unsigned long long)st->frames);
    st->window_frames = st->window_bytes = 0;
    st->window_publish_ms.len = st->window_sink_ms.len = 0;
}

static void write_json(const char *path, sink_stats *st, const char *verdict, const char *reasons, double elapsed)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "eigstream-sink: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "{\n  \"verdict\": \"%s\",\n  \"reasons\": \"%s\",\n", verdict, reasons);
    fprintf(f, "  \"frames\": %llu,\n  \"gaps\": %llu,\n  \"restarts\": %llu,\n  \"late\": %llu,\n"
            "  \"matrices\": %llu,\n", (unsigned long long)st->frames, (unsigned long long)st->gaps,
            (unsigned long long)st->restarts, (unsigned long long)st->late, (unsigned long long)st->matrices);
    fprintf(f, "  \"bad_status\": %llu,\n  \"not_ascending\": %llu,\n  \"dim_ok\": %llu,\n",
            (unsigned long long)st->bad_status, (unsigned long long)st->not_ascending,
            (unsigned long long)st->dim_ok);
    fprintf(f, "  \"subspace_checked\": %llu,\n  \"subspace_max_angle_deg\": %.6g,\n",
            (unsigned long long)st->subspace_checked, isnan(st->subspace_max_deg) ? 90.0 : st->subspace_max_deg);
    fprintf(f, "  \"doa_checked\": %llu,\n  \"doa_max_error_deg\": %.6g,\n", (unsigned long long)st->doa_checked,
            isnan(st->doa_max_error_deg) ? 180.0 : st->doa_max_error_deg);
    fprintf(f, "  \"rejects\": {");
    for (int r = 1; r < PROTOCOL_REJECT_COUNT_; r++)
        fprintf(f, "%s\"%s\": %llu", r > 1 ? ", " : "", protocol_reject_name((protocol_reject)r),
                (unsigned long long)st->rejects[r]);
    fprintf(f, "},\n  \"elapsed_s\": %.3f,\n  \"frames_per_s\": %.3f,\n  \"mb_per_s\": %.3f,\n", elapsed,
            elapsed > 0 ? (double)st->frames / elapsed : 0.0, elapsed > 0 ? (double)st->bytes / 1e6 / elapsed : 0.0);
    series *s[3] = {&st->publish_ms, &st->sink_ms, &st->solve_ms};
    const char *names[3] = {"latency_publish_ms", "latency_sink_ms", "solve_ms"};
    for (int i = 0; i < 3; i++) {
        double p50 = series_percentile(s[i], 50), p99 = series_percentile(s[i], 99), mx = series_percentile(s[i], 100);
        fprintf(f, "  \"%s\": {\"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}%s\n", names[i], isnan(p50) ? 0.0 : p50,
                isnan(p99) ? 0.0 : p99, isnan(mx) ? 0.0 : mx, i < 2 ? "," : "");
    }
    fprintf(f, "}\n");
    if (fclose(f) != 0)
        fprintf(stderr, "eigstream-sink: error writing %s\n", path);
}

/* Prints the VERDICT line (and JSON); returns the exit code. */
static int verdict(sink_stats *st, const sink_options *o, const scene *sc, double elapsed)
{
    char reasons[512] = "";
    size_t len = 0;
#define ADD_REASON(...)                                                                         \
    do {                                                                                        \
        if (len < sizeof reasons)                                                               \
            len += (size_t)snprintf(reasons + len, sizeof reasons - len, "%s", len ? ", " : ""); \
        if (len < sizeof reasons)                                                               \
            len += (size_t)snprintf(reasons + len, sizeof reasons - len, __VA_ARGS__);          \
    } while (0)
    uint64_t rejected = 0;
    for (int r = 1; r < PROTOCOL_REJECT_COUNT_; r++)
        rejected += st->rejects[r];
    if (st->frames == 0)
        ADD_REASON("no frames");
    else if (o->frames > 0 && st->frames < o->frames)
        ADD_REASON("missing=%llu of %llu", (unsigned long long)(o->frames - st->frames), (unsigned long long)o->frames);
    if (st->gaps)
        ADD_REASON("gaps=%llu", (unsigned long long)st->gaps);
    for (int r = 1; r < PROTOCOL_REJECT_COUNT_; r++)
        if (st->rejects[r])
            ADD_REASON("rejected %s=%llu", protocol_reject_name((protocol_reject)r), (unsigned long long)st->rejects[r]);
    if (st->bad_status)
        ADD_REASON("bad_status=%llu", (unsigned long long)st->bad_status);
    if (st->not_ascending)
        ADD_REASON("not_ascending=%llu", (unsigned long long)st->not_ascending);
    if (o->iq) {
        const sink_iq_result *q = &st->iq;
        if (q->bad_status)
            ADD_REASON("bad_status=%llu", (unsigned long long)q->bad_status);
        if (q->no_vectors)
            ADD_REASON("no eigenvectors (output.mode values) in %llu matrices", (unsigned long long)q->no_vectors);
        if (q->target_checked == 0)
            ADD_REASON("no target in any bin of the frames");
        if (!(q->target_min >= o->min_projection))
            ADD_REASON("target own-bin projection %.3f < %.3f", q->target_min, o->min_projection);
        if (!(q->far_max <= o->max_far_projection))
            ADD_REASON("target far-bin projection %.3f > %.3f", q->far_max, o->max_far_projection);
        if (!(q->jammer_min >= o->min_projection))
            ADD_REASON("jammer projection %.3f < %.3f", q->jammer_min, o->min_projection);
    } else if (st->dim_ok != st->matrices - st->bad_status)
        ADD_REASON("dim_ok=%llu/%llu (scene d=%zu)", (unsigned long long)st->dim_ok,
                   (unsigned long long)(st->matrices - st->bad_status), scene_dimension(sc));
    if (st->subspace_checked && !(st->subspace_max_deg <= o->max_angle_deg))
        ADD_REASON("subspace_max_angle=%.2fdeg > %.2fdeg", st->subspace_max_deg, o->max_angle_deg);
    if (st->doa_checked && !(st->doa_max_error_deg <= o->doa_tol_deg))
        ADD_REASON("doa_max_error=%.3fdeg > %.3fdeg", st->doa_max_error_deg, o->doa_tol_deg);
    if (o->check && st->self.checked == 0)
        ADD_REASON("--check: no matrix checked");
    if (o->check && st->self.failed)
        ADD_REASON("self-check failed=%llu/%llu (residual_max=%.3g orthogonality_max=%.3g > 60)",
                   (unsigned long long)st->self.failed, (unsigned long long)st->self.checked, st->self.residual_max,
                   st->self.orthogonality_max);
    if (st->self.flagged)
        ADD_REASON("CHECK_FAILED flagged by the daemon=%llu", (unsigned long long)st->self.flagged);
#undef ADD_REASON
    (void)rejected;
    if (o->check)
        printf("self-check: %llu matrices checked, %llu failed, residual_max=%.3g orthogonality_max=%.3g, "
               "%llu frames flagged CHECK_FAILED\n", (unsigned long long)st->self.checked,
               (unsigned long long)st->self.failed, st->self.residual_max, st->self.orthogonality_max,
               (unsigned long long)st->self.flagged);
    int pass = len == 0;
    double p99 = series_percentile(&st->sink_ms, 99), p99_publish = series_percentile(&st->publish_ms, 99);
    char doa[256] = "";
    if (st->doa_checked)
        snprintf(doa, sizeof doa, " doa_max_error=%.3fdeg", st->doa_max_error_deg);
    if (o->iq)
        snprintf(doa, sizeof doa, " iq: target_own_bin_min_projection=%.3f (%u) target_far_bin_max_projection=%.3f "
                 "(%u) jammer_min_projection=%.3f (%u)", st->iq.target_min, st->iq.target_checked, st->iq.far_max,
                 st->iq.far_checked, st->iq.jammer_min, st->iq.jammer_checked);
    if (o->iq)
        printf("VERDICT: %s%s%s%s frames=%llu gaps=%llu bad_status=%llu%s late=%llu p99_latency=%.1fms "
               "p99_publish_latency=%.1fms\n", pass ? "PASS" : "FAIL", pass ? "" : " (", reasons, pass ? "" : ")",
               (unsigned long long)st->frames, (unsigned long long)st->gaps, (unsigned long long)st->iq.bad_status,
               doa, (unsigned long long)st->late, isnan(p99) ? 0.0 : p99, isnan(p99_publish) ? 0.0 : p99_publish);
    else
        printf("VERDICT: %s%s%s%s frames=%llu gaps=%llu bad_status=%llu subspace_max_angle=%.2fdeg dim_ok=%llu/%llu%s "
               "late=%llu p99_latency=%.1fms p99_publish_latency=%.1fms\n",
               pass ? "PASS" : "FAIL", pass ? "" : " (", reasons, pass ? "" : ")", (unsigned long long)st->frames,
               (unsigned long long)st->gaps, (unsigned long long)st->bad_status, st->subspace_max_deg,
               (unsigned long long)st->dim_ok, (unsigned long long)(st->matrices - st->bad_status), doa,
               (unsigned long long)st->late, isnan(p99) ? 0.0 : p99, isnan(p99_publish) ? 0.0 : p99_publish);
    fflush(stdout);
    if (o->json)
        write_json(o->json, st, pass ? "PASS" : "FAIL", reasons, elapsed);
    return pass ? 0 : 1;
}

/* Receives one multipart message (at most PARTS_MAX parts kept, the rest
 * drained and counted: cli_message_receive) and checks it as a frame;
 * *first_frame: the time of the first one. 0 (also when a signal came
 * before the message), or -1 after saying why on stderr. */
static int receive_frame(void *sock, sink_stats *st, sink_checker *checker, const sink_options *o,
                         const iq_scene *iq, double *first_frame)
{
    cli_message m = {0};
    if (cli_message_receive(sock, &m, PARTS_MAX) != 0) {
        int err = errno;
        cli_message_free(&m);
        if (err == EINTR)
            return 0;
        fprintf(stderr, "eigstream-sink: receive: %s\n", zmq_strerror(err));
        return -1;
    }
    uint64_t received_ns = cli_realtime_ns();
    if (st->frames == 0)
        *first_frame = cli_monotonic_s();
    int err = handle_frame(st, checker, o, iq, m.part, m.count + m.extra, received_ns);
    int handle_errno = errno;
    cli_message_free(&m);
    if (err != 0) {
        if (err == SINK_FAILED_CSV)
            fprintf(stderr, "eigstream-sink: error writing %s: %s\n", o->latency_csv, strerror(handle_errno));
        else
            fprintf(stderr, "eigstream-sink: out of memory\n");
        return -1;
    }
    return 0;
}

/* Receives and checks frames until o->frames, o->duration_s or a signal;
 * *elapsed: seconds from the first frame on (0 without one). Returns 0, or
 * -1 after saying why on stderr (a socket error, out of memory, the
 * latency CSV failing). */
static int receive_frames(void *sock, sink_stats *st, sink_checker *checker, const sink_options *o, const iq_scene *iq,
                          double *elapsed)
{
    double start = cli_monotonic_s(), last_report = start, first_frame = 0.0;
    while (!cli_stop_requested && (o->frames == 0 || st->frames < o->frames)) {
        double t = cli_monotonic_s();
        if (o->duration_s > 0 && t - start >= o->duration_s)
            break;
        if (!o->quiet && t - last_report >= 1.0) {
            if (st->window_frames)
                report_window(st, t - last_report);
            last_report = t;
        }
        zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
        int ready = zmq_poll(&item, 1, 200);
        if (ready < 0) {
            if (zmq_errno() == EINTR)
                continue;
            fprintf(stderr, "eigstream-sink: poll: %s\n", zmq_strerror(zmq_errno()));
            return -1;
        }
        if (ready == 0)
            continue;
        if (receive_frame(sock, st, checker, o, iq, &first_frame) != 0)
            return -1;
    }
    *elapsed = st->frames ? cli_monotonic_s() - first_frame : 0.0;
    return 0;
}

/* Creates the --latency-csv file with its header line. Returns 0, or -1
 * after saying why on stderr. */
static int latency_csv_open(const char *path, FILE **csv)
{
    *csv = fopen(path, "w");
    if (*csv != NULL && sink_latency_write_header(*csv) == 0)
        return 0;
    fprintf(stderr, "eigstream-sink: cannot write %s: %s\n", path, strerror(errno));
    return -1;
}

/* Closes *csv (NULL afterwards; nothing to do when NULL). Returns 0, or -1
 * after saying on stderr that the report is incomplete. */
static int latency_csv_close(const char *path, FILE **csv)
{
    int failed = *csv != NULL && fclose(*csv) != 0;
    *csv = NULL;
    if (failed)
        fprintf(stderr, "eigstream-sink: error writing %s: %s\n", path, strerror(errno));
    return failed ? -1 : 0;
}

/* The tool once its options are parsed (CLI_MAIN below); the exit status. */
static int tool_main(sink_options *o)
{
    (void)transport_tune_allocator(); /* frames of tens of MB; best effort (transport_memory.h) */
    scene *sc = NULL;
    iq_scene iq;
    /* --iq: the IQ scene (its jammers from --jammers); the covariance scene
     * then holds no emitters (its checks do not run). */
    scene_error se = scene_create(&sc, o->n ? o->n : 4096, o->iq ? NULL : o->sources, o->iq ? NULL : o->jammers);
    if (se == SCENE_OK && o->iq)
        se = iq_scene_init(&iq, o->n ? o->n : 1, 1, 1, o->targets, o->jammers, o->clutter_db, o->clutter_slope,
                           o->clutter_patches);
    if (se != SCENE_OK) {
        fprintf(stderr, "eigstream-sink: scene: %s\n", scene_strerror(se));
        scene_destroy(&sc);
        return 2;
    }
    int rc = 2;
    void *ctx = NULL, *sock = NULL;
    sink_checker *checker = NULL;
    sink_stats st;
    memset(&st, 0, sizeof st);
    sink_iq_result_init(&st.iq);
    if ((se = sink_checker_create(&checker, sc, o->doa_fft_size, o->doa_cells)) != SCENE_OK) {
        fprintf(stderr, "eigstream-sink: %s\n", scene_strerror(se));
        goto done;
    }
    if (o->check) {
        sink_self_check_params sp = {.scene = sc, .seed = o->seed, .snapshots = o->snapshots, .pool = o->pool,
                                     .storage = (uint8_t)o->storage};
        if (o->n == 0 || o->iq) {
            fprintf(stderr, "eigstream-sink: --check needs --n (the sim's) and no --iq\n");
            goto done;
        }
        if ((se = sink_self_checker_create(&st.self_checker, &sp)) != SCENE_OK) {
            fprintf(stderr, "eigstream-sink: --check: %s\n", scene_strerror(se));
            goto done;
        }
    }
    if (o->latency_csv != NULL && latency_csv_open(o->latency_csv, &st.latency_csv) != 0)
        goto done;
    if (cli_socket_create(&ctx, &sock, o->pull ? ZMQ_PULL : ZMQ_SUB) != 0) {
        fprintf(stderr, "eigstream-sink: zmq: %s\n", zmq_strerror(zmq_errno()));
        goto done;
    }
    if (!o->pull) {
        const uint8_t prefix[PROTOCOL_PREFIX_BYTES] = {'E', 'I', 'G', 'S', PROTOCOL_VERSION, PROTOCOL_KIND_EIGENSPACE};
        zmq_setsockopt(sock, ZMQ_SUBSCRIBE, prefix, sizeof prefix);
    }
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    char curve_err[640];
    if (cli_curve_apply(&o->curve, sock, curve_err, sizeof curve_err) != 0) {
        fprintf(stderr, "eigstream-sink: %s\n", curve_err);
        goto done;
    }
    if (cli_socket_attach(sock, o->endpoint, o->bind) != 0) {
        fprintf(stderr, "eigstream-sink: %s %s: %s\n", o->bind ? "bind" : "connect", o->endpoint,
                zmq_strerror(zmq_errno()));
        goto done;
    }
    cli_stop_on_signals();

    double elapsed;
    if (receive_frames(sock, &st, checker, o, o->iq ? &iq : NULL, &elapsed) != 0)
        goto done;
    rc = verdict(&st, o, sc, elapsed);
    if (latency_csv_close(o->latency_csv, &st.latency_csv) != 0)
        rc = 2;
done:
    latency_csv_close(o->latency_csv, &st.latency_csv);
    cli_socket_close(&ctx, &sock);
    free(st.publish_ms.x);
    free(st.sink_ms.x);
    free(st.solve_ms.x);
    free(st.window_publish_ms.x);
    free(st.window_sink_ms.x);
    sink_checker_destroy(&checker);
    sink_self_checker_destroy(&st.self_checker);
    scene_destroy(&sc);
    return rc;
}

CLI_MAIN(main, sink_options, parse_options, tool_main)
