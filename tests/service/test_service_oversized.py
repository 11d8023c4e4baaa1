#!/usr/bin/python3
"""Bounded messages (label integration; issue 26).

  test_service_oversized.py PATH_TO_EIGSTREAM

Two daemons run n = 32, 16 matrices, complex double: one frame's payload is
16 x 32 x 32 x 16 = 262,144 bytes, so ZeroMQ's per-part limit (ZMQ_MAXMSGSIZE)
is 2 x 262,144 + 64 = 524,352 bytes whatever input.max_message_bytes (the
sum of a message's payload parts) says above it.

1. A good frame (warm-up), then the peak RSS (VmHWM) of the daemon.
2. Daemon A, input.max_message_bytes at its default 128 MiB (above 95 MB:
   the issue's case), gets 15 parts x 95 MB after a valid header (1.43 GB): ZeroMQ drops the
   connection when the first part's length arrives (the sender's monitor
   sees DISCONNECTED: the handshake the test waits for); a good frame from a
   new connection is then solved, and the daemon's peak RSS has grown by
   less than 2 x one frame (524,288 bytes).
3. Daemon B, input.max_message_bytes = 1 MiB, gets 5 parts x 262,144 bytes
   of payload (1.31 MB > 1 MiB): counted once as
   rejected `oversized` (exactly 1), nothing else rejected; a good frame
   follows and is solved.
4. SIGTERM: exit 0.
"""
import os
import re
import sys
import tempfile

import numpy as np
import zmq
import zmq.utils.monitor

from service_util import Daemon, check, failures, check_eigenspace, covariance, finish, hermitian, scrape, wait_metric

DAEMON = sys.argv[1]
N, MATRICES = 32, 16
FRAME = MATRICES * N * N * 16
OVERSIZED = 'eigstream_frames_rejected_total{reason="oversized"}'


def config(tag, max_message_bytes):
    return f'''input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; max_message_bytes = {max_message_bytes}; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "push"; }};
solver = {{ n = {N}; matrices = {MATRICES}; backend = "lapack"; cpu_threads = 1; }};
metrics = {{ endpoint = ""; http = "127.0.0.1:0"; interval_ms = 50; }};
'''


def peak_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) * 1024


def solve(ctx, tag, pull, seq, rng):
    push = ctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 1000)
    push.connect(f"ipc:///tmp/eigstream-{tag}-in")
    a = hermitian(rng, MATRICES, N)
    push.send_multipart(covariance(seq, a))
    if check(pull.poll(60000), f"frame {seq}: no eigenspace within 60 s"):
        check(check_eigenspace(pull.recv_multipart(), {seq: a}) == seq, f"frame {seq}: another seq came back")
    push.close()


def start(daemon, tag):
    """The dashboard port, a context, the output's PULL, a warm-up frame solved."""
    port = daemon.http_port()
    check(port is not None, "no dashboard line: the daemon did not start")
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.setsockopt(zmq.LINGER, 0)
    pull.connect(f"ipc:///tmp/eigstream-{tag}-out")
    rng = np.random.default_rng(2026)
    solve(ctx, tag, pull, 1, rng)
    return port, ctx, pull, rng


def attack_huge_parts(daemon, tag):
    port, ctx, pull, rng = start(daemon, tag)
    before = peak_rss(daemon.p.pid)
    # 2. 15 x 95 MB: refused by ZeroMQ at the first part's length.
    attacker = ctx.socket(zmq.PUSH)
    attacker.setsockopt(zmq.LINGER, 0)
    monitor = attacker.get_monitor_socket(zmq.EVENT_DISCONNECTED)
    attacker.connect(f"ipc:///tmp/eigstream-{tag}-in")
    header = covariance(2, hermitian(rng, MATRICES, N))[0]
    big = memoryview(bytearray(95 * 1000 * 1000))
    attacker.send(header, zmq.SNDMORE)
    for i in range(15):
        attacker.send(big, zmq.SNDMORE if i < 14 else 0, copy=False)
    disconnected = monitor.poll(60000) and zmq.utils.monitor.recv_monitor_message(monitor)
    check(bool(disconnected), "15 x 95 MB: the daemon did not drop the connection within 60 s")
    attacker.disable_monitor()
    monitor.close()
    attacker.close()
    del big
    solve(ctx, tag, pull, 3, rng)
    grown = peak_rss(daemon.p.pid) - before
    print(f"15 x 95 MB: peak RSS grew by {grown} bytes (bound 2 x {FRAME})")
    check(grown < 2 * FRAME, f"15 x 95 MB: peak RSS grew by {grown} bytes, bound {2 * FRAME}")
    check(not scrape(port).get(OVERSIZED), "15 x 95 MB reached the receive loop")
    pull.close()
    ctx.destroy(linger=0)


def attack_many_parts(daemon, tag):
    port, ctx, pull, rng = start(daemon, tag)
    before = peak_rss(daemon.p.pid)
    # 3. Parts each within the per-part limit, their sum above 1 MiB: oversized, once.
    parts = covariance(4, hermitian(rng, MATRICES, N))
    push = ctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 1000)
    push.connect(f"ipc:///tmp/eigstream-{tag}-in")
    push.send_multipart([parts[0]] + [parts[1]] * 5)
    push.close()
    check(wait_metric(port, OVERSIZED, lambda v: v >= 1) == 1, f"{OVERSIZED} is not 1 after 5 x {FRAME} bytes")
    solve(ctx, tag, pull, 5, rng)
    rejected = {k: v for k, v in scrape(port).items() if k.startswith("eigstream_frames_rejected_total") and v}
    check(rejected == {OVERSIZED: 1.0}, f"rejected {rejected}, want oversized 1 and nothing else")
    print(f"5 x {FRAME} bytes: peak RSS grew by {peak_rss(daemon.p.pid) - before} bytes in all")
    pull.close()
    ctx.destroy(linger=0)


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-oversized-")
    daemon = None
    for name, limit, attack in (("a", 128 * 1024 * 1024, attack_huge_parts), ("b", 1024 * 1024, attack_many_parts)):
        tag = f"oversized{os.getpid()}{name}"
        cfg = os.path.join(tmp, f"{name}.cfg")
        with open(cfg, "w") as f:
            f.write(config(tag, limit))
        daemon = Daemon([DAEMON, "-c", cfg])
        try:
            attack(daemon, tag)
            check(daemon.stop() == 0, f"exit status {daemon.p.returncode} after SIGTERM")
        finally:
            daemon.kill()
            os.unlink(cfg)
        if failures:
            break
    os.rmdir(tmp)
    finish("service oversized", daemon)


if __name__ == "__main__":
    main()
