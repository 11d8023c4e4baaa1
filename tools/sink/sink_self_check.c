/*
 * sink_self_check.c - eigstream-sink --check (sink_self_check.h).
 */
#include "sink_self_check.h"

#include <stdlib.h>
#include <string.h>

#include "eig.h"
#include "sim_frame.h"

struct sink_self_checker {
    sink_self_check_params p;
    sim_frame_generator *gen[2]; /* per precision (eig_precision - 1), made on first use */
    uint8_t *frames[2];          /* pool frames of that precision, back to back */
    size_t frame_bytes[2];
};

scene_error sink_self_checker_create(sink_self_checker **out, const sink_self_check_params *p)
{
    *out = NULL;
    if (p->scene == NULL || p->pool == 0 || p->snapshots == 0 || p->storage > PROTOCOL_STORAGE_PACKED_UPPER)
        return SCENE_EINVAL;
    sink_self_checker *c = calloc(1, sizeof *c);
    if (c == NULL)
        return SCENE_ENOMEM;
    c->p = *p;
    *out = c;
    return SCENE_OK;
}

void sink_self_checker_destroy(sink_self_checker **cp)
{
    sink_self_checker *c = cp != NULL ? *cp : NULL;
    if (c == NULL)
        return;
    for (int i = 0; i < 2; i++) {
        sim_frame_generator_destroy(&c->gen[i]);
        free(c->frames[i]);
    }
    free(c);
    *cp = NULL;
}

/* The sim's pool of `cells`-matrix frames in precision e, made once. */
static scene_error pool_frames(sink_self_checker *c, uint8_t e, uint32_t cells)
{
    int i = e == EIG_COMPLEX_DOUBLE;
    if (c->frames[i] != NULL)
        return SCENE_OK;
    sim_frame_params fp = {.scene = c->p.scene, .cells = cells, .snapshots = c->p.snapshots, .element = e,
                           .storage = c->p.storage, .seed = c->p.seed};
    scene_error se = sim_frame_generator_create(&c->gen[i], &fp);
    if (se != SCENE_OK)
        return se;
    c->frame_bytes[i] = protocol_matrix_bytes(c->p.scene->n, e, c->p.storage) * cells;
    if ((c->frames[i] = malloc(c->frame_bytes[i] * c->p.pool)) == NULL)
        return SCENE_ENOMEM;
    for (uint32_t k = 0; k < c->p.pool; k++)
        if ((se = sim_frame_generate(c->gen[i], k, c->frames[i] + k * c->frame_bytes[i])) != SCENE_OK)
            return se;
    return SCENE_OK;
}

static double nan_max(double m, double x)
{
    return !(x <= m) ? x : m;
}

scene_error sink_self_check_frame(sink_self_checker *c, const protocol_header *h, const protocol_matrix_meta *m,
                                  const uint8_t *data, sink_self_check_result *r)
{
    uint32_t n = c->p.scene->n;
    if (h->n != n || eig_element_bytes(h->element) == 0)
        return SCENE_EINVAL;
    int i = h->element == EIG_COMPLEX_DOUBLE;
    if (c->frames[i] != NULL && c->frame_bytes[i] != protocol_matrix_bytes(n, h->element, c->p.storage) * h->count)
        return SCENE_EINVAL; /* another frame size than the first: not the sim's */
    scene_error se = pool_frames(c, h->element, h->count);
    if (se != SCENE_OK)
        return se;
    r->flagged += (h->flags & PROTOCOL_FLAG_CHECK_FAILED) != 0;
    eig_storage storage;
    eig_uplo uplo;
    (void)protocol_storage_layout(c->p.storage, &storage, &uplo);
    size_t element = eig_element_bytes(h->element), matrix_bytes = protocol_matrix_bytes(n, h->element, c->p.storage);
    const uint8_t *frame = c->frames[i] + (h->seq % c->p.pool) * c->frame_bytes[i];
    /* A matrix's values and vectors sit at any byte offset of the data part:
     * copied to memory aligned for the element before they are read. */
    uint8_t *aligned = malloc((size_t)n * element / 2 + (size_t)n * n * element);
    if (aligned == NULL)
        return SCENE_ENOMEM;
    const uint8_t *at = data;
    scene_error result = SCENE_OK;
    for (uint32_t b = 0; b < h->count && result == SCENE_OK; b++) {
        size_t bytes = (size_t)n * element / 2 + (size_t)m[b].k_sent * n * element;
        memcpy(aligned, at, bytes);
        at += bytes;
        if (m[b].status != 0)
            continue;
        const uint8_t *w = aligned, *v = aligned + (size_t)n * element / 2;
        eig_check_ratios q;
        int values_only = h->mode == PROTOCOL_MODE_VALUES;
        int k = values_only ? (int)n : (int)m[b].k_sent;
        const uint8_t *wk = values_only ? w : w + (size_t)m[b].first_index * element / 2;
        if (eig_check_pairs((eig_precision)h->element, storage, uplo, (int)n, frame + b * matrix_bytes, k, wk,
                            values_only ? NULL : v, &q) != EIG_OK) {
            result = SCENE_EINVAL;
            break;
        }
        r->checked++;
        r->failed += !(q.residual <= EIG_CHECK_THRESHOLD) || !(q.orthogonality <= EIG_CHECK_THRESHOLD);
        r->residual_max = nan_max(r->residual_max, q.residual);
        r->orthogonality_max = nan_max(r->orthogonality_max, q.orthogonality);
    }
    free(aligned);
    return result;
}
