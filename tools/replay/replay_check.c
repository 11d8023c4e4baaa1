/*
 * replay_check.c - eigstream-replay --check INPUTS NAME: the daemon's
 * self-check (eigenspace_check.h) over every frame of the eigenspace
 * recording NAME, against the covariance frames they answer, read from the
 * recording INPUTS and matched by seq. The daemon must have solved the
 * matrices as received (covariance input, no forming), as for
 * eigstream-sink --check.
 */
#include <stdio.h>
#include <stdlib.h>

#include "eigenspace_check.h"
#include "replay.h"

/* Input frames by seq: the index of the frame with each seq (the last one
 * recorded, if a seq repeats). */
typedef struct seq_index {
    uint64_t seq, frame;
} seq_index;

static int seq_compare(const void *a, const void *b)
{
    uint64_t x = ((const seq_index *)a)->seq, y = ((const seq_index *)b)->seq;
    return x < y ? -1 : x > y;
}

/* The sorted seq index of r; NULL (named) when out of memory. */
static seq_index *index_by_seq(const recording_reader *r, uint64_t frames)
{
    seq_index *idx = malloc((frames ? frames : 1) * sizeof *idx);
    if (idx == NULL) {
        replay_fail("out of memory for the index of the inputs");
        return NULL;
    }
    for (uint64_t i = 0; i < frames; i++)
        idx[i] = (seq_index){recording_reader_frame(r, i)->seq, i};
    qsort(idx, frames, sizeof *idx, seq_compare);
    return idx;
}

/* Why the two recordings cannot be checked against each other, or NULL. */
static const char *formats_mismatch(const recording_format *e, const recording_format *c)
{
    if (e->kind != PROTOCOL_KIND_EIGENSPACE)
        return "NAME is not a recording of eigenspace frames";
    if (c->kind != PROTOCOL_KIND_COVARIANCE)
        return "INPUTS is not a recording of covariance frames";
    if (e->n != c->n || e->count != c->count || e->element != c->element)
        return "the two recordings' n, count or precision differ";
    return NULL;
}

typedef struct check_run {
    recording_reader *eig, *cov;
    uint8_t *ebuf, *cbuf;
    size_t ebytes, cbytes;
    protocol_matrix_meta *meta;
    eigenspace_check_result result;
    uint64_t frames, missing;
} check_run;

/* Checks eigenspace frame f against its input (c: the input's frame index,
 * or UINT64_MAX when INPUTS has none). 0, or -1 named on stderr. */
static int check_one(check_run *x, uint64_t f, uint64_t c)
{
    char err[RECORDING_ERROR_MAX];
    protocol_header h, ch;
    protocol_stage_times t;
    if (recording_reader_read(x->eig, f, x->ebuf, x->ebytes, err, sizeof err) != RECORDING_OK ||
        (c != UINT64_MAX && recording_reader_read(x->cov, c, x->cbuf, x->cbytes, err, sizeof err) != RECORDING_OK))
        return replay_fail("%s", err);
    if (protocol_header_decode(x->ebuf, PROTOCOL_HEADER_BYTES, &h) != PROTOCOL_OK ||
        protocol_meta_decode(x->ebuf + PROTOCOL_HEADER_BYTES, protocol_meta_bytes(h.count), h.count, &t, x->meta) !=
            PROTOCOL_OK)
        return replay_fail("eigenspace frame %llu: bad header or meta part", (unsigned long long)f);
    x->frames++;
    if (c == UINT64_MAX) {
        x->missing++;
        return 0;
    }
    if (protocol_header_decode(x->cbuf, PROTOCOL_HEADER_BYTES, &ch) != PROTOCOL_OK ||
        (ch.flags & PROTOCOL_FLAG_FRAGMENT))
        return replay_fail("input frame seq %llu: not a whole covariance frame", (unsigned long long)ch.seq);
    const uint8_t *data = x->ebuf + PROTOCOL_HEADER_BYTES + protocol_meta_bytes(h.count);
    eigenspace_check_error e =
        eigenspace_check_frame(&h, x->meta, data, x->cbuf + PROTOCOL_HEADER_BYTES, ch.storage, &x->result);
    return e == EIGENSPACE_CHECK_OK ? 0 : replay_fail("frame seq %llu: %s", (unsigned long long)h.seq,
                                                      e == EIGENSPACE_CHECK_ENOMEM ? "out of memory"
                                                                                   : "its storage cannot be checked");
}

/* Every frame of x->eig against its input; 0, or -1 named on stderr. */
static int check_all(check_run *x)
{
    uint64_t frames = recording_reader_frames(x->eig), inputs = recording_reader_frames(x->cov);
    seq_index *idx = index_by_seq(x->cov, inputs);
    x->meta = malloc(((size_t)recording_reader_format(x->eig)->count + 1) * sizeof *x->meta);
    x->ebuf = replay_buffer_alloc(x->eig, 0, frames, &x->ebytes);
    x->cbuf = replay_buffer_alloc(x->cov, 0, inputs, &x->cbytes);
    int rc = idx == NULL || x->meta == NULL || x->ebuf == NULL || x->cbuf == NULL ? -1 : 0;
    for (uint64_t f = 0; f < frames && rc == 0; f++) {
        seq_index key = {recording_reader_frame(x->eig, f)->seq, 0};
        const seq_index *hit = bsearch(&key, idx, inputs, sizeof *idx, seq_compare);
        rc = check_one(x, f, hit != NULL ? hit->frame : UINT64_MAX);
    }
    free(idx);
    free(x->meta);
    free(x->ebuf);
    free(x->cbuf);
    return rc;
}

int replay_check(const char *name, const char *inputs)
{
    check_run x = {0};
    int rc = 1;
    if (replay_open(name, &x.eig) != 0 || replay_open(inputs, &x.cov) != 0)
        goto done;
    const char *why = formats_mismatch(recording_reader_format(x.eig), recording_reader_format(x.cov));
    if (why != NULL) {
        replay_fail("--check %s %s: %s", inputs, name, why);
        goto done;
    }
    if (check_all(&x) != 0)
        goto done;
    const eigenspace_check_result *r = &x.result;
    printf(REPLAY_PROG ": --check: %llu frames, %llu matrices checked, %llu failed (a ratio above 60 or NaN), "
                       "%llu frames flagged CHECK_FAILED by the daemon; residual max %.3g, orthogonality max %.3g; "
                       "%llu frames without their input in %s\n",
           (unsigned long long)x.frames, (unsigned long long)r->checked, (unsigned long long)r->failed,
           (unsigned long long)r->flagged, r->residual_max, r->orthogonality_max, (unsigned long long)x.missing,
           inputs);
    rc = r->failed > 0 || r->flagged > 0 ? 3 : x.missing > 0 || r->checked == 0 ? 1 : 0;
done:
    recording_reader_close(&x.eig);
    recording_reader_close(&x.cov);
    return rc;
}
