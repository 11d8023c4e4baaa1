/*
 * input_fault.c - the failing input socket of input_fault.h.
 */
#define _GNU_SOURCE /* pthread_getname_np */
#include "input_fault.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <zmq.h>

int __real_zmq_msg_recv(zmq_msg_t *msg, void *socket, int flags);
int __wrap_zmq_msg_recv(zmq_msg_t *msg, void *socket, int flags);

static atomic_int armed, budget, passed;

void input_fault_arm(int after)
{
    atomic_store(&budget, after);
    atomic_store(&passed, 0);
    atomic_store(&armed, 1);
}

int input_fault_passed(void)
{
    return atomic_load(&passed);
}

/* "eigs-receive", or a reader of several input sockets, "eigs-receive-K". */
static int is_receive_thread(const char *name)
{
    const char *prefix = "eigs-receive";
    size_t len = strlen(prefix);
    return strncmp(name, prefix, len) == 0 &&
           (name[len] == '\0' || (name[len] == '-' && name[len + 1] >= '1' && name[len + 1] <= '9'));
}

int __wrap_zmq_msg_recv(zmq_msg_t *msg, void *socket, int flags)
{
    char name[32] = "";
    /* A message's first part is the only non-blocking receive of the
     * receive stage (receive_message); its later parts block. */
    if (atomic_load(&armed) && (flags & ZMQ_DONTWAIT) && pthread_getname_np(pthread_self(), name, sizeof name) == 0 &&
        is_receive_thread(name)) {
        if (atomic_fetch_sub(&budget, 1) <= 0) {
            errno = ENOTSOCK;
            return -1;
        }
        atomic_fetch_add(&passed, 1);
    }
    return __real_zmq_msg_recv(msg, socket, flags);
}
