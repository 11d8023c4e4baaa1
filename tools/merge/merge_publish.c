/*
 * merge_publish.c - a frame's last steps in eigstream-merge (merge.h): out on
 * the output socket, in the order the sequence released it, or back on the
 * free stack. Below both the loop (merge_main.c) and the sequence
 * (merge_sequence.c), which hand frames here.
 */
#include <errno.h>
#include <stdio.h>
#include <zmq.h>

#include "cli_common.h"
#include "merge.h"

uint64_t merge_now_ns(void)
{
    return (uint64_t)(cli_monotonic_s() * 1e9);
}

void merge_recycle(merger *x, merge_frame *f)
{
    cli_message_release(&f->m);
    x->free[x->free_count++] = f;
}

void merge_publish(merger *x, merge_frame *f)
{
    int sent = 1;
    for (size_t i = 0; i < f->m.count && sent; i++) {
        int flags = i + 1 < f->m.count ? ZMQ_SNDMORE : 0;
        int rc;
        while ((rc = zmq_msg_send(&f->m.part[i], x->out, flags)) < 0 && errno == EINTR && !cli_stop_requested)
            ;
        sent = rc >= 0;
    }
    if (sent) {
        x->s.frames_out++;
        merge_stats_latency(&x->s, (double)(merge_now_ns() - f->arrival_ns) / 1e6);
    } else {
        merge_stats_drop(&x->s, MERGE_DROP_SEND_TIMEOUT);
        fprintf(stderr, "eigstream-merge: send_timeout: seq %llu dropped (the output refused it)\n",
                (unsigned long long)f->seq);
    }
    merge_recycle(x, f);
}
