/*
 * input_fault.h - an input socket that fails, for the pipeline tests, without
 * a seam in library code: test_pipeline_stream links with
 * -Wl,--wrap=zmq_msg_recv, so that every zmq_msg_recv of the program calls
 * __wrap_zmq_msg_recv (input_fault.c). Unarmed, it is zmq_msg_recv. Armed,
 * the receive stage's threads (named "eigs-receive", or with several input
 * sockets their readers "eigs-receive-K") get their first `after` message
 * starts between them (non-blocking receives: each message's first part) as
 * usual, and every later one fails with ENOTSOCK, as a socket torn down
 * under the daemon would. Other threads (the test's own sockets) are never
 * touched; a receive team's helpers never receive.
 */
#ifndef EIGSTREAM_INPUT_FAULT_H
#define EIGSTREAM_INPUT_FAULT_H

/* Arms the fault (call before test_daemon_start). */
void input_fault_arm(int after);
/* Message starts the receive thread was given before the fault, so far. */
int input_fault_passed(void);

#endif
