/*
 * sink_self_check.c - eigstream-sink --check (sink_self_check.h).
 */
#include "sink_self_check.h"

#include <stdlib.h>
#include <string.h>

#include "eig.h"
#include "eigenspace_check.h"
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
    const uint8_t *frame = c->frames[i] + (h->seq % c->p.pool) * c->frame_bytes[i];
    eigenspace_check_error e = eigenspace_check_frame(h, m, data, frame, c->p.storage, r);
    return e == EIGENSPACE_CHECK_OK ? SCENE_OK : e == EIGENSPACE_CHECK_ENOMEM ? SCENE_ENOMEM : SCENE_EINVAL;
}
