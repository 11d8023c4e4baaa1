"""What the tests/service scripts share: the list of failures, the daemon as
a subprocess with its log read as it comes, /metrics scraping, and random
Hermitian frames whose eigenspaces are checked against numpy.linalg.eigvalsh.
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

# The gpu variants of the service tests (EIGSTREAM_TEST_BACKEND=cuda) also run
# on GPU hosts whose Python may lack NumPy or pyzmq: there they skip (77),
# naming what is missing; everywhere else a missing module is a failure.
try:
    import numpy as np
    import zmq  # noqa: F401
except ImportError as missing:
    if os.environ.get("EIGSTREAM_TEST_BACKEND") == "cuda":
        print(f"skipped: {missing}")
        sys.exit(77)
    raise

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import eigstream_client as ec  # noqa: E402

failures = []


def check(cond, message):
    """Records (and prints) a failure; returns cond."""
    if not cond:
        failures.append(message)
        print("FAIL", message, file=sys.stderr)
    return cond


class Daemon:
    """eigstream (or any command) with its stderr collected line by line."""

    def __init__(self, argv, env=None, preexec_fn=None):
        self.p = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=preexec_fn)
        self.lines = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stderr:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def text(self):
        with self.cond:
            return "".join(self.lines)

    def wait_for(self, pattern, start=0, timeout=60):
        """The first log line at index >= start that matches pattern, or None
        (after timeout, or once the daemon has exited without one)."""
        end = time.time() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    if re.search(pattern, line):
                        return line
                left = end - time.time()
                if left <= 0 or (self.p.poll() is not None and not self.reader.is_alive()):
                    return None
                self.cond.wait(min(left, 0.1))

    def http_port(self, timeout=60):
        """The port of the metrics HTTP server the log names, or None."""
        line = self.wait_for(r"dashboard: http://127\.0\.0\.1:(\d+)/", timeout=timeout)
        return int(re.search(r":(\d+)/", line).group(1)) if line else None

    def exit_status(self, timeout=60):
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            check(False, f"{self.p.args[0]} did not exit within {timeout} s")
            self.p.kill()
            self.p.wait()
        self.reader.join(10)
        return self.p.returncode

    def stop(self):
        """SIGTERM (the drain), then the exit status."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        return self.exit_status()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def finish(name, daemon=None):
    """Exits 1 after printing the log's tail when anything failed."""
    if failures:
        if daemon is not None:
            print("".join(daemon.lines[-40:]), file=sys.stderr)
        sys.exit(1)
    if daemon is not None and os.environ.get("EIGSTREAM_TEST_VERBOSE"):
        print(daemon.text(), file=sys.stderr)
    print(f"{name}: ok")


def daemon_session(name, daemon_path, tmp, text_of, body, clean_exit=True):
    """One daemon on a configuration written into tmp: text_of(tag) is the
    file's text (tag: unique to this process and name, for its ipc
    endpoints), then body(daemon, cfg, tag). With clean_exit, SIGTERM must
    then end it with status 0. The daemon is killed whatever happened, and
    finish(name, daemon) reports."""
    tag = f"{name.split()[-1]}{os.getpid()}"
    cfg = os.path.join(tmp, f"{tag}.cfg")
    with open(cfg, "w") as f:
        f.write(text_of(tag))
    daemon = Daemon([daemon_path, "-c", cfg])
    try:
        body(daemon, cfg, tag)
        if clean_exit:
            check(daemon.stop() == 0, f"exit status {daemon.p.returncode} after SIGTERM")
    finally:
        daemon.kill()
    finish(name, daemon)


def sighup(daemon):
    """SIGHUP to the daemon; the index of its log from which to look for the answer."""
    start = len(daemon.lines)
    daemon.p.send_signal(signal.SIGHUP)
    return start


def started_with(daemon, metric, value):
    """The daemon's HTTP port once its /metrics says metric == value (the
    configuration it started with is in force); None, failed, when it never
    printed its dashboard line."""
    port = daemon.http_port()
    if not check(port is not None, "no dashboard line: the daemon did not start"):
        return None
    check(wait_metric(port, metric, lambda v: v == value) == value, f"{metric} is not {value} at the start")
    return port


def ipc_clients(tag):
    """A context with a PUSH to the daemon's ipc:///tmp/eigstream-TAG-in and a
    PULL from its -out (linger 0): (ctx, push, pull)."""
    ctx = zmq.Context()
    push, pull = ctx.socket(zmq.PUSH), ctx.socket(zmq.PULL)
    for s in (push, pull):
        s.setsockopt(zmq.LINGER, 0)
    push.connect(f"ipc:///tmp/eigstream-{tag}-in")
    pull.connect(f"ipc:///tmp/eigstream-{tag}-out")
    return ctx, push, pull


def scrape(port):
    """The eigstream_* samples of /metrics by name with labels; {} before the
    first document (the server answers 503 until the metrics thread has
    published one)."""
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    except urllib.error.HTTPError as e:
        if e.code == 503:
            return {}
        raise
    return {m.group(1) + (m.group(2) or ""): float(m.group(3))
            for m in re.finditer(r"^(eigstream_\w+)(\{[^}]*\})? (\S+)$", text, re.M)}


def wait_metric(port, name, predicate, timeout=60):
    """Polls /metrics until name satisfies predicate; its last value (or None)."""
    end = time.time() + timeout
    value = None
    while time.time() < end:
        value = scrape(port).get(name)
        if value is not None and predicate(value):
            return value
        time.sleep(0.05)
    return value


def proc_memory(pid, field="VmHWM"):
    """Bytes of a memory line of /proc/PID/status: VmHWM (peak resident), VmRSS (resident now)."""
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(rf"{field}:\s+(\d+) kB", f.read()).group(1)) * 1024


def hermitian(rng, matrices, n):
    x = rng.standard_normal((matrices, n, n)) + 1j * rng.standard_normal((matrices, n, n))
    return (x + x.conj().transpose(0, 2, 1)) / 2


def covariance(seq, a):
    return ec.encode_covariance(seq, time.time_ns(), a, crc=True)


def check_eigenspace(parts, sent):
    """Decodes an eigenspace and checks its values against numpy.linalg.eigvalsh
    of the frame sent with its seq (sent: {seq: matrices}); returns the seq."""
    h, _, results = ec.decode_eigenspace(parts)
    if not check(h["seq"] in sent, f"eigenspace of a frame never sent: seq {h['seq']}"):
        return h["seq"]
    for b, r in enumerate(results):
        want = np.linalg.eigvalsh(sent[h["seq"]][b])
        err = np.max(np.abs(np.asarray(r.values) - want)) / np.max(np.abs(want))
        check(err < 1e-12, f"seq {h['seq']} matrix {b}: eigenvalue error {err:.3g} against numpy.linalg.eigvalsh")
    return h["seq"]
