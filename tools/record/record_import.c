/*
 * record_import.c - eigstream-record --import-iq SOURCE: IQ samples another
 * tool wrote (a SigMF recording of any recorder, or a raw file such as GNU
 * Radio's File Sink writes) into an eigstream recording of IQ cubes, which
 * eigstream-replay and the daemon's file input then take like any other
 * (docs/iq.md, "Other tools' IQ").
 *
 * The source is a stream of complex samples in time order with its channels
 * interleaved (SigMF's rule for core:num_channels; a GNU Radio vector stream
 * of the channels): sample t of channel c at t * C + c. Each run of
 * pulses x gates samples of every channel is one cube, in the wire's pgc
 * layout as it stands (pulse, then gate, then channel fastest): nothing is
 * reordered. cf32_le and ci16_le stay as they are; cf64_le, which the wire
 * has no IQ format for, is converted to cf32_le (the precision a cube
 * carries; the import says so). Samples after the last whole cube are
 * counted and named, not recorded.
 *
 * Timestamps: cube k starts at sample k P G; with a sample rate (SigMF
 * core:sample_rate or --sample-rate) its source timestamp is the first
 * capture's core:datetime (else the import's start) plus that many sample
 * periods, so eigstream-replay's original timing paces the cubes as they
 * were sampled. received_ns is 0 (not received by us).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_options.h"
#include "record_import.h"

/* A sample format of the source: its SigMF name, bytes a sample, the wire
 * format a cube of it is sent in, and whether its doubles are narrowed to
 * that wire format's floats (the wire has no complex double IQ). */
typedef struct import_format {
    const char *name;
    size_t bytes;
    uint8_t wire;
    int narrow;
} import_format;

static const import_format import_formats[] = {
    {"cf32_le", 8, PROTOCOL_IQ_CF32_LE, 0},
    {"ci16_le", 4, PROTOCOL_IQ_CI16_LE, 0},
    {"cf64_le", 16, PROTOCOL_IQ_CF32_LE, 1},
};

static const import_format *import_format_find(const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof import_formats / sizeof import_formats[0]; i++)
        if (strcmp(name, import_formats[i].name) == 0)
            return &import_formats[i];
    return NULL;
}

/* What the source says about itself (SigMF), or the options (raw). */
typedef struct import_source {
    char data[RECORDING_PATH_MAX + 16];
    const import_format *format;
    uint32_t channels;
    double sample_rate;  /* Hz, 0 = unknown */
    uint64_t start_ns;   /* the first sample's time, ns since 1970 */
} import_source;

/* Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian; the
 * standard era computation, valid for any year). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "2026-11-23T15:04:05.123456789Z" (SigMF core:datetime, UTC) into ns since
 * 1970; 0, or -1 for another text or a time before 1970. */
static int parse_datetime(const char *text, uint64_t *ns)
{
    int year, month, day, hour, minute, second;
    char frac[16] = "";
    if (text == NULL || sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d%15[.0-9]", &year, &month, &day, &hour, &minute,
                               &second, frac) < 6)
        return -1;
    int64_t s = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
    if (s < 0)
        return -1;
    uint64_t sub = 0, scale = 1000000000u;
    for (const char *p = frac[0] == '.' ? frac + 1 : frac; *p >= '0' && *p <= '9' && scale > 1; p++) {
        scale /= 10;
        sub += (uint64_t)(*p - '0') * scale;
    }
    *ns = (uint64_t)s * 1000000000u + sub;
    return 0;
}

/* NAME from NAME, NAME.sigmf-meta or NAME.sigmf-data into out; 1 when
 * NAME.sigmf-meta exists (a SigMF recording), else 0. */
static int sigmf_name(const char *source, char *out, size_t out_bytes)
{
    snprintf(out, out_bytes, "%s", source);
    size_t len = strlen(out), suffix = strlen(".sigmf-meta");
    if (len > suffix && (strcmp(out + len - suffix, ".sigmf-meta") == 0 || strcmp(out + len - suffix, ".sigmf-data") == 0))
        out[len - suffix] = '\0';
    char meta[RECORDING_PATH_MAX + 16];
    snprintf(meta, sizeof meta, "%s.sigmf-meta", out);
    FILE *f = fopen(meta, "r");
    if (f != NULL)
        fclose(f);
    return f != NULL;
}

/* The SigMF meta of NAME: datatype, channels, sample rate, first datetime.
 * 0, or 1 named on stderr. */
static int import_sigmf(const record_import_options *o, const char *name, import_source *s)
{
    char meta[RECORDING_PATH_MAX + 16];
    snprintf(meta, sizeof meta, "%s.sigmf-meta", name);
    snprintf(s->data, sizeof s->data, "%s.sigmf-data", name);
    json_error_t jerr;
    json_t *root = json_load_file(meta, 0, &jerr);
    json_t *g = json_object_get(root, "global");
    if (!json_is_object(g)) {
        json_decref(root);
        return cli_fatal(RECORD_PROG, "%s: not a SigMF meta (%s)", meta, root == NULL ? jerr.text : "no global");
    }
    const char *datatype = json_string_value(json_object_get(g, "core:datatype"));
    s->format = import_format_find(datatype);
    json_t *channels = json_object_get(g, "core:num_channels");
    s->channels = json_is_integer(channels) ? (uint32_t)json_integer_value(channels) : 1;
    s->sample_rate = json_number_value(json_object_get(g, "core:sample_rate"));
    json_t *first = json_array_get(json_object_get(root, "captures"), 0);
    parse_datetime(json_string_value(json_object_get(first, "core:datetime")), &s->start_ns);
    int rc = 0;
    if (s->format == NULL)
        rc = cli_fatal(RECORD_PROG, "%s: core:datatype %s: IQ imports take cf32_le, ci16_le or cf64_le", meta,
                       datatype ? datatype : "missing");
    else if (o->channels != 0 && o->channels != s->channels)
        rc = cli_fatal(RECORD_PROG, "%s: core:num_channels is %u, --channels %u", meta, s->channels, o->channels);
    json_decref(root);
    return rc;
}

/* The source's description from its files or the options; 0, or 1 named. */
static int import_describe(const record_import_options *o, import_source *s)
{
    char name[RECORDING_PATH_MAX];
    *s = (import_source){.start_ns = 0};
    if (sigmf_name(o->source, name, sizeof name)) {
        if (import_sigmf(o, name, s) != 0)
            return 1;
    } else {
        snprintf(s->data, sizeof s->data, "%s", o->source);
        s->format = import_format_find(o->format);
        s->channels = o->channels;
        if (s->format == NULL)
            return cli_fatal(RECORD_PROG, "%s is a raw file (no %s.sigmf-meta): give --iq-format cf32_le, ci16_le "
                             "or cf64_le", o->source, name);
        if (s->channels == 0)
            return cli_fatal(RECORD_PROG, "%s is a raw file: give --channels", o->source);
    }
    if (o->sample_rate > 0)
        s->sample_rate = o->sample_rate;
    if (s->start_ns == 0)
        s->start_ns = cli_realtime_ns();
    if (s->channels == 0 || o->pulses == 0 || o->gates == 0)
        return cli_fatal(RECORD_PROG, "an IQ import needs --pulses and --gates (and channels: %u)", s->channels);
    return 0;
}

/* One cube's samples in the wire's format (cf64_le narrowed to cf32_le). */
static void import_convert(const import_source *s, const uint8_t *in, uint8_t *out, size_t samples)
{
    if (s->format->narrow) {
        for (size_t i = 0; i < 2 * samples; i++) {
            double d;
            memcpy(&d, in + 8 * i, 8);
            float f = (float)d;
            memcpy(out + 4 * i, &f, 4);
        }
        return;
    }
    memcpy(out, in, samples * s->format->bytes);
}

/* Appends cube k (payload of the wire's format) to the recording. 0, or 1 named. */
static int import_append(recording_writer *w, const record_import_options *o, const import_source *s, uint64_t k,
                         const uint8_t *payload, size_t bytes)
{
    protocol_header h;
    protocol_header_init(&h, PROTOCOL_KIND_IQ);
    h.seq = k;
    double period_ns = s->sample_rate > 0 ? 1e9 / s->sample_rate : 0.0;
    h.timestamp_ns = s->start_ns + (uint64_t)((double)k * o->pulses * o->gates * period_ns);
    h.n = s->channels;
    h.count = o->pulses;
    h.gates = o->gates;
    h.element = s->format->wire;
    h.storage = PROTOCOL_IQ_PGC;
    h.scale = (float)o->scale;
    h.payload_bytes = bytes;
    h.flags = PROTOCOL_FLAG_CRC;
    h.crc32c = protocol_crc32c(0, payload, bytes);
    uint8_t header[PROTOCOL_HEADER_BYTES];
    protocol_header_encode(&h, header);
    const void *part[1] = {payload};
    char err[RECORDING_ERROR_MAX];
    if (recording_writer_append(w, header, part, &bytes, 1, 0, err, sizeof err) != RECORDING_OK)
        return cli_fatal(RECORD_PROG, "%s", err);
    return 0;
}

/* Reads whole cubes of the source into the recording; 0, or 1 named. */
static int import_cubes(recording_writer *w, const record_import_options *o, const import_source *s,
                        uint64_t *cubes, uint64_t *left)
{
    size_t samples = (size_t)s->channels * o->pulses * o->gates;
    size_t in_bytes = samples * s->format->bytes, out_bytes = samples * protocol_iq_sample_bytes(s->format->wire);
    uint8_t *in = malloc(in_bytes), *out = malloc(out_bytes);
    FILE *f = fopen(s->data, "rb");
    int rc = 0;
    if (in == NULL || out == NULL || f == NULL)
        rc = cli_fatal(RECORD_PROG, "%s: %s", s->data, f == NULL ? strerror(errno) : "out of memory");
    size_t got = 0;
    while (rc == 0 && (got = fread(in, 1, in_bytes, f)) == in_bytes && !cli_stop_requested) {
        import_convert(s, in, out, samples);
        rc = import_append(w, o, s, *cubes, out, out_bytes);
        *cubes += rc == 0;
    }
    if (rc == 0 && f != NULL && ferror(f))
        rc = cli_fatal(RECORD_PROG, "%s: %s", s->data, strerror(errno));
    *left = got / s->format->bytes;
    if (f != NULL)
        fclose(f);
    free(in);
    free(out);
    return rc;
}

int record_import(const record_import_options *o, const char *name)
{
    import_source s;
    if (import_describe(o, &s) != 0)
        return 1;
    char err[RECORDING_ERROR_MAX];
    recording_writer *w = NULL;
    recording_writer_params params = {.path = name, .description = o->description,
                                      .recorder = RECORD_PROG " --import-iq"};
    if (recording_writer_open(&w, &params, err, sizeof err) != RECORDING_OK)
        return cli_fatal(RECORD_PROG, "%s", err);
    uint64_t cubes = 0, left = 0;
    int rc = import_cubes(w, o, &s, &cubes, &left);
    if (recording_writer_close(&w, err, sizeof err) != RECORDING_OK && rc == 0)
        rc = cli_fatal(RECORD_PROG, "%s", err);
    if (rc != 0)
        return 1;
    printf(RECORD_PROG ": imported %llu cubes of %u channels x %u pulses x %u gates (%s%s, layout pgc) from %s "
           "into %s; %llu samples after the last whole cube not imported\n", (unsigned long long)cubes, s.channels,
           o->pulses, o->gates, protocol_iq_format_name(s.format->wire),
           strcmp(s.format->name, "cf64_le") == 0 ? ", narrowed from cf64_le" : "", s.data, name,
           (unsigned long long)left);
    return cubes > 0 ? 0 : cli_fatal(RECORD_PROG, "%s holds no whole cube", s.data);
}
