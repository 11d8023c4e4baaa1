/*
 * eigenspace_check.c - an eigenspace frame checked against its matrices
 * (eigenspace_check.h).
 */
#include "eigenspace_check.h"

#include <stdlib.h>
#include <string.h>

#include "eig.h"

static double nan_max(double m, double x)
{
    return !(x <= m) ? x : m;
}

eigenspace_check_error eigenspace_check_frame(const protocol_header *h, const protocol_matrix_meta *m,
                                              const uint8_t *data, const uint8_t *matrices, uint8_t storage,
                                              eigenspace_check_result *r)
{
    uint32_t n = h->n;
    eig_storage layout;
    eig_uplo uplo;
    if (eig_element_bytes(h->element) == 0 || protocol_storage_layout(storage, &layout, &uplo) != 0)
        return EIGENSPACE_CHECK_EINVAL;
    r->flagged += (h->flags & PROTOCOL_FLAG_CHECK_FAILED) != 0;
    size_t element = eig_element_bytes(h->element), matrix_bytes = protocol_matrix_bytes(n, h->element, storage);
    /* A matrix's values and vectors sit at any byte offset of the data part:
     * copied to memory aligned for the element before they are read. */
    uint8_t *aligned = malloc((size_t)n * element / 2 + (size_t)n * n * element);
    if (aligned == NULL)
        return EIGENSPACE_CHECK_ENOMEM;
    const uint8_t *at = data;
    eigenspace_check_error result = EIGENSPACE_CHECK_OK;
    for (uint32_t b = 0; b < h->count && result == EIGENSPACE_CHECK_OK; b++) {
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
        if (eig_check_pairs((eig_precision)h->element, layout, uplo, (int)n, matrices + b * matrix_bytes, k, wk,
                            values_only ? NULL : v, &q) != EIG_OK) {
            result = EIGENSPACE_CHECK_EINVAL;
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
