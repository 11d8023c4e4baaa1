#!/usr/bin/python3
"""eigstream-top against a running daemon (label integration).

  test_top.py EIGSTREAM EIGSTREAM_TOP TOOLS_PYTHON_DIR

1. --once --json prints the summary of the next metrics document: the
   daemon's configuration, and the frames the test sent (in == out == 4).
2. The live view in a pseudo-terminal draws its screen, pauses on p and
   exits 0 on q.
3. Errors: no document within --timeout exits 1 with one line; a bad
   endpoint and --once without --json exit 2.
"""
import json
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import zmq
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

DAEMON, TOP = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import eigstream_client as ec  # noqa: E402
from eigstream_check import check, report  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tools_daemon import start_daemon, stop_daemon  # noqa: E402

N, MATRICES, FRAMES = 8, 2, 4


def send_frames(base):
    """Sends FRAMES covariance frames and reads their eigenspaces back."""
    ctx = zmq.Context()
    push, pull = ctx.socket(zmq.PUSH), ctx.socket(zmq.PULL)
    push.connect(base + "-in")
    pull.connect(base + "-out")
    pull.RCVTIMEO = 20000
    rng = np.random.default_rng(3)
    got = 0
    try:
        for seq in range(FRAMES):
            x = rng.standard_normal((MATRICES, N, N)) + 1j * rng.standard_normal((MATRICES, N, N))
            push.send_multipart(ec.encode_covariance(seq, time.time_ns(), (x + x.conj().transpose(0, 2, 1)) / 2))
            pull.recv_multipart()
            got += 1
    except zmq.Again:
        pass
    check(got == FRAMES, f"daemon published {got} of {FRAMES} frames")
    ctx.destroy(linger=0)


def test_once_json(metrics):
    # Documents come every 100 ms; the counts settle after the frames are
    # out: asked again until a document shows them (a deadline, not a sleep).
    deadline = time.time() + 30
    while True:
        r = subprocess.run([TOP, "--endpoint", metrics, "--once", "--json", "--timeout", "10", "--deadline-ms",
                            "500"], capture_output=True, text=True, timeout=30)
        try:
            s = json.loads(r.stdout) if r.returncode == 0 else {}
        except ValueError:
            s = None
        if s is None or s.get("frames_out") == FRAMES or time.time() > deadline:
            break
    check(r.returncode == 0, f"--once --json: exit {r.returncode} {r.stderr!r}")
    if s is None:
        check(False, f"--once --json output is not JSON: {r.stdout!r}")
        return
    check(s.get("backend") == "lapack" and s.get("n") == N and s.get("matrices") == MATRICES,
          f"identity: {s.get('backend')} n={s.get('n')} matrices={s.get('matrices')}")
    check(s.get("frames_in") == FRAMES and s.get("frames_out") == FRAMES, f"frames {s.get('frames_in')}/"
          f"{s.get('frames_out')}")
    check(s.get("end_to_end_count") == FRAMES and 0 < s.get("end_to_end_p99_us", 0) <= s.get("end_to_end_max_us", 0),
          f"end to end: {s.get('end_to_end_count')} p99 {s.get('end_to_end_p99_us')} max {s.get('end_to_end_max_us')}")
    check(s.get("deadline_ms") == 500.0 and s.get("over_deadline") is False, f"deadline: {s.get('deadline_ms')}")
    for key in ("stage_receive_p99_us", "stage_solve_mean_us", "dropped_overflow", "rejected_crc_mismatch",
                "queue_capacity", "frames_free", "outputs_free", "in_per_s", "uptime_s", "mode", "precision"):
        check(key in s, f"summary lacks {key}")


def read_pty_until(fd, done, seconds=30):
    """What the pseudo-terminal printed, read until done(bytes so far) holds
    (or the generous deadline passes, or the terminal closes)."""
    out = b""
    end = time.time() + seconds
    while time.time() < end and not done(out):
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out


def test_live_view(metrics):
    pid, fd = pty.fork()
    if pid == 0:
        # 80 columns: the ends of the longest rows must be on the screen,
        # not cut off at the width
        os.environ.update(TERM="xterm", LC_ALL="C.UTF-8", COLUMNS="80", LINES="30")
        os.execv(TOP, [TOP, "--endpoint", metrics])
    drawn = (b"eigstream-top", b"end to end", b"lapack", b"matrices failed", b"last interval p99",
             b"subscriber_slow", b"outputs free")
    screen = read_pty_until(fd, lambda out: all(w in out for w in drawn))
    check(all(w in screen for w in drawn), f"live view screen: {screen[-400:]!r}")
    os.write(fd, b"p")
    check(b"PAUSED" in read_pty_until(fd, lambda out: b"PAUSED" in out), "p did not show PAUSED")
    os.write(fd, b"q")
    status, end = None, time.time() + 30
    while time.time() < end:
        read_pty_until(fd, lambda out: False, 0.1)  # keep the terminal drained while top exits
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        status = None
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    check(status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
          f"q: wait status {status}")
    os.close(fd)


def test_errors(tmp):
    r = subprocess.run([TOP, "--endpoint", f"ipc://{tmp}/nobody", "--once", "--json", "--timeout", "0.3"],
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 1 and "no metrics document" in r.stderr and r.stderr.count("\n") == 1,
          f"timeout: exit {r.returncode} {r.stderr!r}")
    r = subprocess.run([TOP, "--endpoint", "bogus", "--once", "--json"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 2 and "bad endpoint bogus" in r.stderr, f"bad endpoint: exit {r.returncode} {r.stderr!r}")
    r = subprocess.run([TOP, "--once"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 2, f"--once without --json: exit {r.returncode}")
    r = subprocess.run([TOP, "--help"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 0 and "Exit status" in r.stdout and "--once" in r.stdout, "--help")


with tempfile.TemporaryDirectory() as tmp:
    base = f"ipc://{tmp}/top"
    daemon = start_daemon(DAEMON, tmp, "top", N, MATRICES, "push", base + "-metrics")
    try:
        send_frames(base)
        test_once_json(base + "-metrics")
        test_live_view(base + "-metrics")
    finally:
        stop_daemon(daemon)
    test_errors(tmp)

report("test_top")
