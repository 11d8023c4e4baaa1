/*
 * pipeline_test_util.h - helpers for the pipeline integration tests: run a
 * pipeline in a thread, encode covariance frames, receive and check
 * eigenspace frames against LAPACK (LAPACKE_zheevd / cheevd).
 */
#ifndef EIGSTREAM_PIPELINE_TEST_UTIL_H
#define EIGSTREAM_PIPELINE_TEST_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "pipeline.h"
#include "protocol.h"
#include "test_check.h" /* CHECK; the failure count is test_check_failures */

typedef struct test_daemon {
    pipeline *p;
    pthread_t thread;
    pipeline_error run_result;
    _Atomic int finished; /* pipeline_run has returned (by itself or after test_daemon_stop) */
    void *zmq;
    void *push; /* test -> daemon input */
    void *pull; /* daemon output -> test (PULL or SUB) */
    void *push_monitor; /* handshakes on push, when the daemon opens several input connections */
    void *pushes[CONFIG_INPUT_IO_THREADS_MAX]; /* test_daemon_start_endpoints: push is pushes[0] */
    int push_count;                            /* sockets in pushes (0 otherwise) */
} test_daemon;

/* Small-frame defaults for the tests: n, matrices, lapack backend (the
 * reference-independent cpu backend is covered by tests/eig), metrics off,
 * warn-level logging, overflow policy block, a 60 s deadline. */
void test_config(eigstream_config *cfg, int n, int matrices);

/* Test binds its sockets on tcp://127.0.0.1:* (or the given ipc paths when
 * ipc_tag is not NULL: the daemon binds then), points cfg at them, creates
 * and starts the pipeline in a thread. Output is PUSH->PULL unless
 * cfg->output.pattern is PUB: then a SUB, which test_pub_join joins. */
int test_daemon_start(test_daemon *d, eigstream_config *cfg, const char *ipc_tag);
/* The same with the test's output socket's receive HWM pull_hwm (1000 above):
 * a small one lets a test that does not read stall the daemon's output. */
int test_daemon_start_hwm(test_daemon *d, eigstream_config *cfg, const char *ipc_tag, int pull_hwm);
/* PUB output bound by the daemon (ipc_tag): a new SUB on d's context,
 * receive HWM rcvhwm, subscribed to eigenspace frames and connected to the
 * daemon's output endpoint; not joined yet (test_pub_join). NULL on failure. */
void *test_subscribe(test_daemon *d, const char *endpoint, int rcvhwm);

/* input.endpoint as a list: the test binds cfg->input.io_threads PUSH
 * sockets (pushes[k], each on its own tcp://127.0.0.1 port), the daemon's
 * input socket k connects to the k-th; then as test_daemon_start. A send on
 * one of them blocks until its one connection is up. */
int test_daemon_start_endpoints(test_daemon *d, eigstream_config *cfg);

/* Waits until `count` connections to the test's input PUSH have completed
 * their ZeroMQ handshake (a daemon started with input.io_threads > 1 on
 * tcp: the start monitors the PUSH from before its bind). 0, or -1 after
 * timeout_ms (a deadline for a stuck run only). */
int test_wait_input_connections(test_daemon *d, int count, int timeout_ms);

/* pipeline_stop, join, then destroy everything. Returns pipeline_run's result. */
pipeline_error test_daemon_stop(test_daemon *d, pipeline_counters *final_counters);

/* Waits until out + dropped reaches target (or in_flight == 0 and in >= target); 0 ok, -1 timeout. */
int test_wait_done(test_daemon *d, uint64_t target, int timeout_ms);

typedef struct test_frame_spec {
    uint64_t seq;
    uint8_t storage;      /* protocol_storage */
    int per_matrix_parts; /* 1: one part per matrix */
    int crc;
    uint32_t snapshots;
} test_frame_spec;

/* Sends a covariance frame of `matrices` full Hermitian matrices (both
 * triangles, complex double or float by element) as spec says. */
int test_send_frame(void *push, const void *a, uint32_t n, uint32_t matrices, uint8_t element,
                    const test_frame_spec *spec);

/* The most primers test_pub_join sends: a frame set used with it holds
 * TEST_JOIN_PRIMERS frames more than its test sends, per join. */
#define TEST_JOIN_PRIMERS 32
/* Readiness of a PUB subscriber by handshake, not by a sleep: a frame
 * published before the subscription reaches the daemon goes to nobody, and
 * nothing else says when it has. Sends primers, frame s of `set` (matrices
 * n x n of element, consecutive frames) as seq s from `first` on (spec's other
 * fields as given, e.g. snapshots), one at a time until `sub` receives one,
 * then receives every primer sent after it, so that none is left in flight:
 * every later frame published reaches `sub` (or is counted dropped). Each
 * primer received is checked against LAPACK. Returns the next seq to send
 * (first + primers sent; the daemon publishes each of them, to nobody or to
 * sub), or -1 (a failed CHECK) when no primer arrived. */
long test_pub_join(test_daemon *d, void *sub, const void *set, uint32_t n, uint32_t matrices, uint8_t element,
                   const test_frame_spec *spec, uint64_t first);

/* Sends raw parts (for malformed messages). */
int test_send_parts(void *push, const void *const *part, const size_t *bytes, size_t parts);
/* Encodes a covariance header for a full-storage frame. */
void test_covariance_header(protocol_header *h, uint64_t seq, uint32_t n, uint32_t matrices, uint8_t element);

typedef struct test_output {
    protocol_header header;
    protocol_stage_times times;
    protocol_matrix_meta *meta; /* count */
    uint8_t *data;
    size_t data_bytes;
} test_output;

/* Receives one eigenspace frame (timeout_ms); checks it decodes and its sizes
 * and per-matrix meta agree. 0 ok, -1 timeout or malformed. */
int test_receive_output(void *pull, test_output *o, int timeout_ms);
void test_output_free(test_output *o);

/* Checks every matrix of an output against LAPACK on the matrices it came
 * from (full, both triangles): eigenvalues (ratio <= 60), each sent vector's
 * residual and orthonormality (<= 60), and the sent subspace against
 * LAPACK's. Returns the number of failures (each printed with seq, matrix,
 * n and ratio). a == NULL (the output's seq is no frame the test sent) is
 * one failure, not a crash. */
int test_check_output(const test_output *o, const void *a, uint32_t n, uint32_t matrices, uint8_t element,
                      const char *label);

void test_sleep_ms(int ms);

/* Independent MDL (direct from the definition) on ascending values. */
int test_mdl_reference(const double *w, int n, double snapshots);

#endif
