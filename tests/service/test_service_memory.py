#!/usr/bin/python3
"""The worst-case memory of docs/operations.md (Limits) holds (label
integration; issue 26).

  test_service_memory.py PATH_TO_EIGSTREAM

The daemon runs small settings at their limits: n = 128, 16 matrices,
complex double (frame_bytes = 16 x 128 x 128 x 16 = 4 MiB, the largest valid
frame: full storage, one part), frame.queue_depth = 2, input.hwm = 2,
output.hwm = 2, full mode, one worker, the lapack backend on one thread.

0. The base, "the code and libraries": the resident memory (VmRSS) of the
   same daemon with frames of nothing (n = 8, one matrix), idle, started
   the same way (the same sockets, HTTP, backend, threads).
1. Warm-up: one frame solved and received by a subscriber that reads it
   (output_bytes: the payload of that eigenspace, measured, not computed),
   which then leaves.
2. A subscriber that never reads (RCVHWM 1) connects, then 40 frames are
   pushed as fast as ZeroMQ takes them: the solve (16 zheevd of order 128)
   is far slower than a 4 MiB transfer, so the queues fill and the oldest
   frames are dropped (overflow > 0 is checked: the limits were reached);
   the publish stage waits for the slow subscriber up to frame.deadline_ms
   (1 s) a frame, then drops it for it (subscriber_slow > 0 is checked).
3. Every frame accounted for (all received, nothing in flight), then the
   peak resident memory (VmHWM) must stay under the formula's value:
       F x frame_bytes + O x output_bytes
       + io_threads x (input.hwm + 1) x frame_bytes
       + subscribers x output.hwm x output_bytes
       + 160 KiB x 2 + 72 x 32 KiB
       + frame_bytes + threads x 4 n^2 x 16   (the solver's workspace)
       + base
   F = 3 x 2 + 4 = 10, O = 2 + 2 = 4, io_threads = 1, subscribers = 1,
   threads = 1.
Nothing here depends on the machine's speed but the solve being slower
than a loopback copy of its frame (by about 40x on any CPU).
"""
import os
import sys
import tempfile

import numpy as np
import zmq

from service_util import Daemon, check, covariance, daemon_session, hermitian, proc_memory, scrape, wait_metric

DAEMON = sys.argv[1]
N, MATRICES, QUEUE_DEPTH, INPUT_HWM, OUTPUT_HWM, FLOOD = 128, 16, 2, 2, 2, 40
FRAME = MATRICES * N * N * 16


def config(tag, n=N, matrices=MATRICES):
    return f'''input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; hwm = {INPUT_HWM}; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "pub"; hwm = {OUTPUT_HWM}; mode = "full"; }};
solver = {{ n = {n}; matrices = {matrices}; backend = "lapack"; cpu_threads = 1; }};
frame = {{ queue_depth = {QUEUE_DEPTH}; deadline_ms = 1000; late_policy = "publish"; overflow_policy = "drop_oldest"; }};
metrics = {{ endpoint = ""; http = "127.0.0.1:0"; interval_ms = 50; }};
'''


def bound(base, output_bytes):
    """The formula of docs/operations.md, Worst-case memory, at this config."""
    frames, outputs, io_threads, subscribers, threads = 3 * QUEUE_DEPTH + 4, OUTPUT_HWM + 2, 1, 1, 1
    return (frames * FRAME + outputs * output_bytes + io_threads * (INPUT_HWM + 1) * FRAME +
            subscribers * OUTPUT_HWM * output_bytes + 160 * 1024 * 2 + 72 * 32 * 1024 +
            FRAME + threads * 4 * N * N * 16 + base)


def code_and_libraries(tmp, tag):
    """VmRSS of the daemon idle with frames of nothing (n = 8, one matrix)."""
    cfg = os.path.join(tmp, "tiny.cfg")
    with open(cfg, "w") as f:
        f.write(config(tag + "-tiny", 8, 1))
    tiny = Daemon([DAEMON, "-c", cfg])
    try:
        port = tiny.http_port()
        check(port is not None and wait_metric(port, "eigstream_frames_in_flight", lambda v: v == 0) == 0,
              "the tiny daemon did not start")
        return proc_memory(tiny.p.pid, "VmRSS")
    finally:
        check(tiny.stop() == 0, f"the tiny daemon: exit {tiny.p.returncode}")


def warm_up(ctx, tag, push, a):
    """Frame 0 solved and read by a subscriber that then leaves: its payload bytes."""
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(f"ipc:///tmp/eigstream-{tag}-out")
    parts, seq = None, 0
    while parts is None and seq < 50:  # PUB: until the subscription has arrived
        push.send_multipart(covariance(seq, a))
        seq += 1
        if sub.poll(30000):
            parts = sub.recv_multipart()
    sub.close()
    check(parts is not None, "no eigenspace reached the warm-up subscriber")
    return (sum(len(p) for p in parts[1:]) if parts else 0), seq


def run(daemon, cfg, tag):
    base = code_and_libraries(os.path.dirname(cfg), tag)
    port = daemon.http_port()
    if not check(port is not None, "the daemon did not start"):
        return
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 0)
    push.connect(f"ipc:///tmp/eigstream-{tag}-in")
    a = hermitian(np.random.default_rng(26), MATRICES, N)
    output_bytes, sent = warm_up(ctx, tag, push, a)
    wait_metric(port, "eigstream_frames_in_flight", lambda v: v == 0)

    slow = ctx.socket(zmq.SUB)
    slow.setsockopt(zmq.LINGER, 0)
    slow.setsockopt(zmq.RCVHWM, 1)
    slow.setsockopt(zmq.SUBSCRIBE, b"")
    slow.connect(f"ipc:///tmp/eigstream-{tag}-out")
    frames = [covariance(sent + i, a) for i in range(FLOOD)]
    for message in frames:
        push.send_multipart(message)
    total = sent + FLOOD
    received = wait_metric(port, "eigstream_frames_received_total", lambda v: v >= total, timeout=240)
    check(received == total, f"received {received} frames of {total}")
    wait_metric(port, "eigstream_frames_in_flight", lambda v: v == 0, timeout=240)
    m = scrape(port)
    overflow = m.get('eigstream_frames_dropped_total{reason="overflow"}', 0)
    slow_drops = m.get('eigstream_frames_dropped_total{reason="subscriber_slow"}', 0)
    check(overflow > 0, "no frame dropped for overflow: the queues never filled, the test reached no limit")
    check(slow_drops > 0, "no frame dropped for the slow subscriber: its queue never filled")
    peak, limit = proc_memory(daemon.p.pid, "VmHWM"), bound(base, output_bytes)
    print(f"frame {FRAME} B, output {output_bytes} B; base {base / 2**20:.1f} MiB; peak {peak / 2**20:.1f} MiB; "
          f"formula {limit / 2**20:.1f} MiB; published {m.get('eigstream_frames_published_total')}, "
          f"dropped for overflow {overflow:.0f}, for the slow subscriber {slow_drops:.0f}")
    check(peak <= limit, f"peak resident {peak} B above the worst-case formula's {limit} B (base {base} B)")
    slow.close()
    push.close()
    ctx.destroy(linger=0)


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-memory-")
    daemon_session("service memory", DAEMON, tmp, config, run)


if __name__ == "__main__":
    main()
