/*
 * receive_team.h - the receive stage's copy of a large frame on several
 * threads: the payload parts, back to back into the frame buffer, with the
 * CRC32C and the NaN/Inf check of what was copied.
 *
 * ZeroMQ hands over a multipart message only once all of it has arrived,
 * so the copy cannot overlap the transfer: at 180 x 128 complex double
 * (47 MB) one thread spent 7-12 ms of each frame's life on it on an H100
 * host, a time no part of the daemon measured alone accounts for. The
 * caller's thread takes one share, each helper another; the shares' CRCs
 * are joined in order (protocol_crc32c_combine), so the result is exactly
 * the one-thread pass's.
 */
#ifndef EIGSTREAM_RECEIVE_TEAM_H
#define EIGSTREAM_RECEIVE_TEAM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

#define RECEIVE_TEAM_MAX 16          /* threads, the caller's included */
#define RECEIVE_TEAM_MIN_BYTES (4u << 20) /* smaller payloads: the caller alone (a wake-up costs more) */

typedef struct receive_part {
    const uint8_t *data;
    size_t bytes;
} receive_part;

/* One payload: parts[0..count) copied to dst[0..total), total = the sum of
 * their sizes. crc: compute the CRC32C. finite_as: the eig_precision the
 * finite check reads the bytes as (0 = none), over whole elements of
 * element bytes. */
typedef struct receive_job {
    uint8_t *dst;
    const receive_part *parts;
    size_t count, total;
    int crc;
    uint8_t finite_as;
    size_t element;
} receive_job;

/* What the pass found: crc (when asked) and the finite verdict. */
typedef struct receive_verdict {
    uint32_t crc;
    protocol_reject finite;
} receive_verdict;

typedef struct receive_team receive_team;

/* A team of threads (the caller's included, 2..RECEIVE_TEAM_MAX): threads - 1
 * helpers, started now and waiting. NULL when they cannot be started. */
receive_team *receive_team_create(int threads);
/* Stops and joins the helpers; NULL is a no-op; sets *t to NULL. */
void receive_team_destroy(receive_team **t);
int receive_team_threads(const receive_team *t);
/* Helper i (0..threads-2), for its name, priority and CPU set. */
pthread_t receive_team_helper(const receive_team *t, int i);

/* Runs job: the caller's thread takes a share and returns once every share
 * is done. t NULL, or a job below RECEIVE_TEAM_MIN_BYTES: the caller alone.
 * One job at a time (the receive thread's). */
receive_verdict receive_team_run(receive_team *t, const receive_job *job);

#endif
