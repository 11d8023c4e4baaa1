#!/usr/bin/python3
"""The daemon under systemd's notify protocol, with this test as the service
manager (label integration).

  test_service_notify.py PATH_TO_EIGSTREAM

The test binds an AF_UNIX datagram socket, as systemd does, and runs the
daemon with NOTIFY_SOCKET naming it and WATCHDOG_USEC=200000 (sd_notify(3),
sd_watchdog_enabled(3): pings due every 100 ms). It checks, in order:

1. READY=1 arrives, and when it does the input and output ipc endpoints
   exist (bound before READY), and a frame sent right after READY is
   accepted (it shows in STATUS).
2. STATUS= lines with rates ("in R/s out R/s") and counts; WATCHDOG=1 pings
   while the pipeline idles (an idle stage is healthy).
3. A stuck stage stops the pings: the output is PUSH with no consumer and
   frame.deadline_ms is an hour, so the publish stage's send waits (at most
   an hour) with the frame in its step; service.stall_ms = 300 makes that a
   stall. After the STATUS that says STALLED, no WATCHDOG=1 may come (the
   test listens for 1.5 s: a slow machine only sends fewer datagrams).
   Eleven more frames back up behind it (overflow block: none is dropped);
   with 3 output buffers (output.hwm = 1) the solve step waits for one,
   stalled too, but only because of publish: STATUS keeps naming the
   publish stage, the one furthest downstream.
   Nothing here depends on speed: without a consumer the send cannot end.
4. A consumer connects: the twelve frames are delivered in order (their
   eigenvalues checked against numpy.linalg.eigvalsh) and the pings resume.
5. SIGTERM: STOPPING=1, exit status 0.
EIGSTREAM_TEST_WORKERS=2 (test service_notify_workers) runs the same with
two solver workers: READY=1 after the warm-up on both workers' paths, the
stalled publish stage still named first (every worker's solve stage may
wait behind it), the twelve frames published in order by the reorder window.
"""
import os
import re
import signal
import socket
import sys
import tempfile
import time

from service_util import Daemon, check, check_eigenspace, covariance, failures, finish, hermitian

import numpy as np  # noqa: E402 (after service_util: it skips the gpu variants without NumPy)
import zmq  # noqa: E402

DAEMON = sys.argv[1]
# gpu label: EIGSTREAM_TEST_BACKEND=cuda runs the same on the GPU path (the
# warm-up solve on the device before READY); exit 77 without a usable GPU.
BACKEND = os.environ.get("EIGSTREAM_TEST_BACKEND", "lapack")
WORKERS = int(os.environ.get("EIGSTREAM_TEST_WORKERS", "1"))


class Manager:
    """The notify socket: every datagram in arrival order."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.messages = []

    def wait_for(self, predicate, timeout):
        """Reads datagrams until one satisfies predicate; returns it or None."""
        end = time.time() + timeout
        while time.time() < end:
            self.sock.settimeout(max(0.01, end - time.time()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                break
            self.messages.append(data)
            if predicate(data):
                return data
        return None

    def collect(self, seconds):
        """Every datagram arriving within seconds."""
        got = []
        end = time.time() + seconds
        while True:
            left = end - time.time()
            if left <= 0:
                return got
            self.sock.settimeout(left)
            try:
                got.append(self.sock.recv(4096).decode())
            except socket.timeout:
                return got


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-notify-")
    tag = f"notify{os.getpid()}"
    inp, out = f"/tmp/eigstream-{tag}-in", f"/tmp/eigstream-{tag}-out"
    for path in (inp, out):
        if os.path.exists(path):
            os.unlink(path)
    cfg = os.path.join(tmp, "notify.cfg")
    with open(cfg, "w") as f:
        f.write(f'''
input = {{ endpoint = "ipc://{inp}"; }};
output = {{ endpoint = "ipc://{out}"; pattern = "push"; hwm = 1; }};
solver = {{ n = 8; matrices = 2; backend = "{BACKEND}"; cpu_threads = 1; workers = {WORKERS}; }};
frame = {{ deadline_ms = 3600000; overflow_policy = "block"; }};
metrics = {{ endpoint = ""; http = ""; interval_ms = 100; }};
service = {{ stall_ms = 300; }};
''')
    manager = Manager(os.path.join(tmp, "notify"))
    env = dict(os.environ, NOTIFY_SOCKET=os.path.join(tmp, "notify"), WATCHDOG_USEC="200000")
    daemon = Daemon([DAEMON, "-c", cfg], env=env)
    ctx = zmq.Context()
    try:
        run(manager, daemon, ctx, inp, out)
    finally:
        daemon.kill()
        ctx.destroy(linger=0)
    if BACKEND == "cuda" and "0 usable GPU" in daemon.text():
        print("skipped: no usable GPU for the cuda backend")
        sys.exit(77)
    if failures:
        print("datagrams:", manager.messages[-20:], file=sys.stderr)
    finish("service notify", daemon)


def run(manager, daemon, ctx, inp, out):
    # 1. READY after the binds.
    ready = None
    for _ in range(120):  # 60 s, ending early when the daemon has exited (no GPU)
        ready = manager.wait_for(lambda m: "READY=1" in m, 0.5)
        if ready is not None or daemon.p.poll() is not None:
            break
    if BACKEND == "cuda" and ready is None and "0 usable GPU" in daemon.text():
        return
    if not check(ready is not None, "no READY=1 within 60 s"):
        return
    check(os.path.exists(inp) and os.path.exists(out), "READY=1 before the ipc endpoints were bound")
    early = [m for m in manager.messages[:-1] if "WATCHDOG=1" in m]
    check(not early, f"WATCHDOG=1 before READY=1: {early}")

    # 2. STATUS and pings while idle (event-driven: waits for them, however slow the machine).
    start = len(manager.messages)
    pings = lambda: sum("WATCHDOG=1" in m for m in manager.messages[start:])  # noqa: E731
    check(manager.wait_for(lambda m: pings() >= 2, 30) is not None, "fewer than 2 WATCHDOG=1 while idle")
    status = manager.wait_for(lambda m: m.startswith("STATUS="), 30)
    check(status is not None and re.match(r"STATUS=in \d+\.\d/s out \d+\.\d/s; frames in 0 out 0 dropped 0 "
                                          r"rejected 0 in flight 0$", status), f"STATUS format: {status!r}")

    # 3. One frame, no consumer: the publish stage's send cannot finish.
    # Twelve frames: the first holds the publish stage; the others back up
    # behind it (overflow block: nothing dropped). With output.hwm = 1 the
    # pool has 3 output buffers: publish holds one, two wait in the publish
    # queue, so the solve step blocks for a buffer: in its step, waiting for
    # the stuck stage. STATUS must keep naming publish.
    rng = np.random.default_rng(3)
    sent = {seq: hermitian(rng, 2, 8) for seq in range(41, 53)}
    push = ctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 0)
    push.connect(f"ipc://{inp}")
    for seq, a in sent.items():
        push.send_multipart(covariance(seq, a))
    stalled = manager.wait_for(lambda m: "STALLED: publish stage on frame seq 41" in m, 60)
    if not check(stalled is not None, "no STATUS with STALLED: publish within 60 s of the frame"):
        return
    check(re.search(r"frames in \d+ out 0", stalled) is not None, f"stalled STATUS counts: {stalled}")
    after = manager.collect(1.5)
    check(not any("WATCHDOG=1" in m for m in after), f"WATCHDOG=1 while the publish stage is stalled: {after}")
    statuses = [m for m in after if m.startswith("STATUS=")]
    check(all("STALLED: publish stage on frame seq 41" in m for m in statuses),
          f"STATUS stopped naming the stalled publish stage: {statuses}")

    # 4. A consumer: the frame leaves, the pings resume.
    pull = ctx.socket(zmq.PULL)
    pull.setsockopt(zmq.LINGER, 0)
    pull.connect(f"ipc://{out}")
    got = []
    while len(got) < len(sent) and pull.poll(60000):
        got.append(check_eigenspace(pull.recv_multipart(), sent))
    check(got == sorted(sent), f"eigenspaces {got}, want seq 41..52 in order")
    check(manager.wait_for(lambda m: "WATCHDOG=1" in m, 30) is not None, "WATCHDOG=1 did not resume")

    # 5. SIGTERM: STOPPING=1 and a clean exit.
    daemon.p.send_signal(signal.SIGTERM)
    check(manager.wait_for(lambda m: "STOPPING=1" in m, 30) is not None, "no STOPPING=1 after SIGTERM")
    check(daemon.exit_status() == 0, f"exit status {daemon.p.returncode} after SIGTERM")
    push.close()
    pull.close()


if __name__ == "__main__":
    main()
