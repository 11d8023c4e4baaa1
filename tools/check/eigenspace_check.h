/*
 * eigenspace_check.h - the daemon's self-check (docs/daemon.md, "Results
 * that check themselves") run by a tool on a received or recorded
 * eigenspace frame against the matrices that frame answers: per matrix
 * with status 0, the pairs sent (full: all n; signal, noise: the k_sent;
 * values: the trace identity) get eig_check_pairs' ratios (eig.h).
 * eigstream-sink --check makes the matrices again from the sim's scene;
 * eigstream-replay --check reads them from a recording of the input.
 */
#ifndef EIGSTREAM_EIGENSPACE_CHECK_H
#define EIGSTREAM_EIGENSPACE_CHECK_H

#include <stdint.h>

#include "protocol.h"

typedef enum eigenspace_check_error {
    EIGENSPACE_CHECK_OK = 0,
    EIGENSPACE_CHECK_EINVAL, /* a storage or precision eig_check_pairs refuses */
    EIGENSPACE_CHECK_ENOMEM
} eigenspace_check_error;

typedef struct eigenspace_check_result {
    uint64_t checked;        /* matrices checked */
    uint64_t failed;         /* ... with a ratio above EIG_CHECK_THRESHOLD (60) or NaN */
    uint64_t flagged;        /* frames the daemon flagged CHECK_FAILED */
    double residual_max, orthogonality_max; /* NaN-propagating */
} eigenspace_check_result;

/* Checks the decoded, size-checked eigenspace frame h (meta m, data its data
 * part) against matrices: h->count matrices of order h->n in h->element,
 * stored as storage (protocol_storage), back to back; adds to *r. */
eigenspace_check_error eigenspace_check_frame(const protocol_header *h, const protocol_matrix_meta *m,
                                              const uint8_t *data, const uint8_t *matrices, uint8_t storage,
                                              eigenspace_check_result *r);

#endif
