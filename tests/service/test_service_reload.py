#!/usr/bin/python3
"""SIGHUP reload (label integration).

  test_service_reload.py PATH_TO_EIGSTREAM

1. The daemon runs a file with frame.deadline_ms = 1000 and log.level info.
   /metrics says eigstream_deadline_seconds 1 (the oracle: the file).
2. The file changes two live settings (deadline 2500, level debug) and two
   restart-only ones (solver.n, input.hwm); SIGHUP. The log names each
   restart-only setting as refused and lists the applied ones; /metrics
   then says 2.5; DEBUG lines appear; frames of the running n are still
   taken and solved (eigenvalues against numpy.linalg.eigvalsh), so solver.n
   was not applied.
3. A file with a syntax error, then one with a bad value: each is logged
   (FILE:LINE: setting: reason) and refused whole; the daemon keeps running
   with 2.5 s and still solves frames.
4. SIGTERM: exit 0.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import zmq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import eigstream_client as ec  # noqa: E402

DAEMON = sys.argv[1]
failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL", message, file=sys.stderr)
    return cond


def config(tag, deadline_ms, level, n=8, hwm=4):
    return f'''
input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; hwm = {hwm}; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "push"; }};
solver = {{ n = {n}; matrices = 2; backend = "lapack"; cpu_threads = 1; }};
frame = {{ deadline_ms = {deadline_ms}; }};
metrics = {{ endpoint = ""; http = "127.0.0.1:0"; interval_ms = 100; }};
log = {{ level = "{level}"; }};
'''


class Log:
    def __init__(self, stream):
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def wait_for(self, pattern, start=0, timeout=30):
        """The first line at index >= start matching pattern, or None."""
        end = time.time() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    if re.search(pattern, line):
                        return line
                left = end - time.time()
                if left <= 0:
                    return None
                self.cond.wait(left)


def deadline_seconds(port):
    """eigstream_deadline_seconds on /metrics; None before the first document
    (503 until the metrics thread has published one)."""
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    except urllib.error.HTTPError as e:
        if e.code == 503:
            return None
        raise
    m = re.search(r"^eigstream_deadline_seconds (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def wait_deadline(port, want, timeout=30):
    end = time.time() + timeout
    got = None
    while time.time() < end:
        got = deadline_seconds(port)
        if got == want:
            return got
        time.sleep(0.05)
    return got


def solve_one(push, pull, seq, rng):
    x = rng.standard_normal((2, 8, 8)) + 1j * rng.standard_normal((2, 8, 8))
    a = (x + x.conj().transpose(0, 2, 1)) / 2
    push.send_multipart(ec.encode_covariance(seq, time.time_ns(), a, crc=True))
    if not check(pull.poll(60000), f"frame {seq}: no eigenspace within 60 s"):
        return
    h, _, results = ec.decode_eigenspace(pull.recv_multipart())
    check(h["seq"] == seq, f"seq {h['seq']}, want {seq}")
    for b, r in enumerate(results):
        want = np.linalg.eigvalsh(a[b])
        err = np.max(np.abs(np.asarray(r.values) - want)) / np.max(np.abs(want))
        check(err < 1e-12, f"frame {seq} matrix {b}: eigenvalue error {err:.3g} against numpy")


def reload(daemon, log, cfg, text):
    with open(cfg, "w") as f:
        f.write(text)
    start = len(log.lines)
    daemon.send_signal(signal.SIGHUP)
    return start


def run(daemon, log, cfg, tag):
    line = log.wait_for(r"dashboard: http://127\.0\.0\.1:(\d+)/", timeout=60)
    if not check(line is not None, "no dashboard line: the daemon did not start"):
        return
    port = int(re.search(r":(\d+)/", line).group(1))
    check(wait_deadline(port, 1.0) == 1.0, "eigstream_deadline_seconds is not 1 before the reload")
    ctx = zmq.Context()
    push, pull = ctx.socket(zmq.PUSH), ctx.socket(zmq.PULL)
    push.setsockopt(zmq.LINGER, 0)
    pull.setsockopt(zmq.LINGER, 0)
    push.connect(f"ipc:///tmp/eigstream-{tag}-in")
    pull.connect(f"ipc:///tmp/eigstream-{tag}-out")
    rng = np.random.default_rng(5)
    solve_one(push, pull, 1, rng)

    # 2. Two live changes, two refused.
    start = reload(daemon, log, cfg, config(tag, 2500, "debug", n=16, hwm=8))
    applied = log.wait_for(r"reload: .*: applied frame\.deadline_ms, log\.level$", start)
    check(applied is not None, "no 'applied frame.deadline_ms, log.level' line")
    for setting in ("input.hwm", "solver.n"):
        check(log.wait_for(rf"WARN +reload: {re.escape(setting)} changed in .* but needs a restart", start)
              is not None, f"no refusal naming {setting}")
    check(wait_deadline(port, 2.5) == 2.5, "eigstream_deadline_seconds did not become 2.5")
    check(log.wait_for(r" DEBUG ", start) is not None, "no DEBUG line after log.level debug")
    solve_one(push, pull, 2, rng)

    # 3. Broken files: refused whole, the daemon keeps running.
    start = reload(daemon, log, cfg, "frame = { deadline_ms = 500 \n")
    check(log.wait_for(rf"ERROR +reload: {re.escape(cfg)}:\d+: .*the running configuration is kept", start)
          is not None, "syntax error: no refusal with FILE:LINE")
    start = reload(daemon, log, cfg, config(tag, 0, "info"))
    check(log.wait_for(rf"ERROR +reload: {re.escape(cfg)}:\d+: frame\.deadline_ms: 0 is out of range", start)
          is not None, "bad value: no refusal naming frame.deadline_ms")
    check(daemon.poll() is None, "the daemon exited after a bad reload")
    check(deadline_seconds(port) == 2.5, "a refused file changed the deadline")
    solve_one(push, pull, 3, rng)
    push.close()
    pull.close()
    ctx.destroy(linger=0)


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-reload-")
    tag = f"reload{os.getpid()}"
    cfg = os.path.join(tmp, "reload.cfg")
    with open(cfg, "w") as f:
        f.write(config(tag, 1000, "info"))
    daemon = subprocess.Popen([DAEMON, "-c", cfg], stderr=subprocess.PIPE, text=True)
    log = Log(daemon.stderr)
    try:
        run(daemon, log, cfg, tag)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
        check(daemon.returncode == 0, f"exit status {daemon.returncode} after SIGTERM")
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    if failures:
        print("".join(log.lines[-40:]), file=sys.stderr)
        sys.exit(1)
    print("service reload: ok")


if __name__ == "__main__":
    main()
