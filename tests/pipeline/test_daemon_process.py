#!/usr/bin/python3
"""The eigstream daemon as a subprocess (label integration).

  test_daemon_process.py PATH_TO_EIGSTREAM

1. --check-config on a bad file prints FILE:LINE: setting: reason, exits 1;
   the shipped config checks ok.
2. Startup failures are loud: a busy endpoint names the endpoint and the
   errno string; --backend cuda without a GPU exits 1 saying so (with a GPU
   it runs on cuda and drains on SIGTERM).
   Command-line overrides are validated like a file (exit 1, the setting named).
3. SIGTERM while frames are in flight: the test stalls the daemon's output
   until the daemon is full (a capacity argument, so the result does not
   depend on the machine's speed), then signals it; the daemon stops
   accepting, publishes every accepted frame, logs in == out + dropped with
   in_flight 0 and exits 0; every frame received is checked against
   numpy.linalg.eigh.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import zmq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import eigstream_client as ec  # noqa: E402

DAEMON = sys.argv[1]
import eigstream_check  # noqa: E402  (tools/python: check() counts, outcome() ends main)
from eigstream_check import check  # noqa: E402


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def test_check_config(tmp):
    bad = os.path.join(tmp, "bad.cfg")
    write(bad, 'solver = {\n  n = 16;\n};\nframe = {\n  queue_depth = -3;\n};\n')
    r = subprocess.run([DAEMON, "--check-config", bad], capture_output=True, text=True, timeout=10)
    check(r.returncode == 1, f"--check-config bad file: exit {r.returncode}")
    check(re.search(re.escape(bad) + r":5: frame\.queue_depth: ", r.stderr) is not None,
          f"--check-config message: {r.stderr!r}")
    shipped = os.path.join(HERE, "..", "..", "config", "eigstream.cfg")
    if os.path.exists(shipped):
        r = subprocess.run([DAEMON, "--check-config", shipped], capture_output=True, text=True, timeout=10)
        check(r.returncode == 0, f"shipped config: exit {r.returncode} {r.stderr!r}")
    r = subprocess.run([DAEMON, "--bogus"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 2, f"unknown option: exit {r.returncode}")


def config_text(tag, n, matrices):
    return f'''
input = {{ endpoint = "ipc:///tmp/eigstream-proc-{tag}-in"; }};
output = {{ endpoint = "ipc:///tmp/eigstream-proc-{tag}-out"; pattern = "push"; }};
solver = {{ n = {n}; matrices = {matrices}; backend = "lapack"; cpu_threads = 1; }};
frame = {{ overflow_policy = "block"; deadline_ms = 60000; queue_depth = 2; }};
metrics = {{ endpoint = "ipc:///tmp/eigstream-proc-{tag}-metrics"; interval_ms = 100; http = ""; }};
'''


def test_startup_failures(tmp):
    # An ipc bind takes over an existing path, so hold a tcp port instead.
    ctx = zmq.Context()
    holder = ctx.socket(zmq.PULL)
    holder.bind("tcp://127.0.0.1:*")
    busy = holder.getsockopt_string(zmq.LAST_ENDPOINT)
    cfg = os.path.join(tmp, "busy.cfg")
    write(cfg, config_text(f"busy{os.getpid()}", 8, 2).replace(
        f"ipc:///tmp/eigstream-proc-busy{os.getpid()}-in", busy))
    r = subprocess.run([DAEMON, "-c", cfg], capture_output=True, text=True, timeout=10)
    check(r.returncode == 1, f"daemon on a busy endpoint: exit {r.returncode}")
    check(f"input: cannot bind {busy}: Address already in use" in r.stderr, f"busy endpoint message: {r.stderr!r}")
    ctx.destroy(linger=0)
    write(cfg, config_text(f"busy{os.getpid()}", 8, 2))

    check_forced_cuda(cfg)


def check_forced_cuda(cfg):
    """--backend cuda: without a usable GPU (or a build without CUDA) the
    daemon exits 1 naming the setting and the GPU count; on a GPU host it
    logs that it runs on the cuda backend and drains on SIGTERM, exit 0.
    Which of the two happened is decided by what the daemon says, never by
    how long it took (the deadline only bounds a stuck run)."""
    p = subprocess.Popen([DAEMON, "-c", cfg, "--backend", "cuda"], stderr=subprocess.PIPE, text=True)
    refused = re.compile(r"solver\.backend = cuda: .*\(eigstream built (with|without) CUDA, (\d+) usable GPU\)")
    running = re.compile(r"backend cuda \(solver\.backend cuda\)")
    err, outcome = "", None
    deadline = time.time() + 60
    while outcome is None and time.time() < deadline:
        line = p.stderr.readline()
        if line == "":
            outcome = "exited"
            break
        err += line
        if running.search(line):
            outcome = "running"
    if outcome == "running":
        p.send_signal(signal.SIGTERM)
        _, rest = p.communicate(timeout=60)
        err += rest
        check(p.returncode == 0 and "stopped cleanly" in err,
              f"--backend cuda on a GPU host: exit {p.returncode} after SIGTERM {err[-1500:]!r}")
        return
    if outcome is None:
        p.kill()
        p.communicate()
        check(False, f"--backend cuda: neither refused nor running within 60 s: {err[-1500:]!r}")
        return
    _, rest = p.communicate(timeout=60)
    err += rest
    m = refused.search(err)
    check(p.returncode == 1 and m is not None and (m.group(1) == "without" or m.group(2) == "0"),
          f"--backend cuda without a usable GPU: exit {p.returncode} {err[-1500:]!r}")


def test_override_validation(tmp):
    # Command-line overrides are validated like a file: exit 1 naming the setting.
    cfg = os.path.join(tmp, "big_n.cfg")
    write(cfg, 'solver = { n = 600; matrices = 2; backend = "cpu"; };\n')
    r = subprocess.run([DAEMON, "-c", cfg, "--backend", "cuda"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 1, f"--backend cuda with n = 600: exit {r.returncode}")
    check("solver.n: 600 is too large: backend cuda takes n up to 512" in r.stderr,
          f"--backend cuda with n = 600 message: {r.stderr!r}")
    r = subprocess.run([DAEMON, "--output", "tcp://127.0.0.1:5550"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 1 and "output.endpoint: same as input.endpoint" in r.stderr,
          f"--output equal to input.endpoint: exit {r.returncode} {r.stderr!r}")


def hermitian_frames(seed, frames, matrices, n):
    """{seq: matrices x n x n random Hermitian} for seq 0..frames-1 (fixed seed)."""
    rng = np.random.default_rng(seed)
    sent = {}
    for seq in range(frames):
        x = rng.standard_normal((matrices, n, n)) + 1j * rng.standard_normal((matrices, n, n))
        sent[seq] = (x + x.conj().transpose(0, 2, 1)) / 2
    return sent


def fill_daemon(push, pull, sent, frames):
    """Sends frame 0 and reads its eigenspace (the daemon runs), then sends
    without reading outputs until the daemon is full: with outputs stalled and
    the block policy, every queue, pool and high-water mark fills and the
    sender is pushed back for good, whatever the machine's speed (a capacity
    argument, not a race). Returns (frames sent, [the first output])."""
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            push.send_multipart(ec.encode_covariance(0, time.time_ns(), sent[0], crc=True))
            break
        except zmq.Again:
            continue  # not connected yet
    received = [pull.recv_multipart()] if pull.poll(30000) else []
    next_seq, blocked_since = 1, None
    while next_seq < frames and time.time() < deadline:
        try:
            push.send_multipart(ec.encode_covariance(next_seq, time.time_ns(), sent[next_seq],
                                                     crc=(next_seq % 2 == 0)), flags=zmq.NOBLOCK)
            next_seq, blocked_since = next_seq + 1, None
        except zmq.Again:
            blocked_since = blocked_since or time.time()
            # Still refused a second later: full, not just mid-transfer.
            if time.time() - blocked_since > 1.0:
                break
            time.sleep(0.01)
    return next_seq, received


def test_sigterm_drain(tmp):
    n, matrices, frames = 96, 16, 60
    tag = f"drain{os.getpid()}"
    cfg = os.path.join(tmp, "drain.cfg")
    write(cfg, config_text(tag, n, matrices))
    daemon = subprocess.Popen([DAEMON, "-c", cfg], stderr=subprocess.PIPE, text=True)
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    pull = ctx.socket(zmq.PULL)
    push.setsockopt(zmq.LINGER, 0)
    push.setsockopt(zmq.SNDTIMEO, 200)
    push.setsockopt(zmq.SNDHWM, 1)  # pushed back as soon as the daemon stops taking frames
    pull.setsockopt(zmq.RCVHWM, 1)  # unread outputs stall the daemon's publish stage
    push.connect(f"ipc:///tmp/eigstream-proc-{tag}-in")
    pull.connect(f"ipc:///tmp/eigstream-proc-{tag}-out")

    sent = hermitian_frames(7, frames, matrices, n)
    next_seq, received = fill_daemon(push, pull, sent, frames)
    check(len(received) == 1, "no eigenspace for the first frame within 30 s")
    check(next_seq < frames, f"the daemon took all {frames} frames with its outputs stalled")
    # Full of accepted frames that cannot leave until we read: the drain has
    # work to do whatever the machine's speed.
    daemon.send_signal(signal.SIGTERM)
    deadline = time.time() + 60
    while daemon.poll() is None and time.time() < deadline:
        if pull.poll(50):
            received.append(pull.recv_multipart())
    try:
        _, err = daemon.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        _, err = daemon.communicate()
        check(False, "daemon did not exit within 30 s of SIGTERM")
    while pull.poll(200):
        received.append(pull.recv_multipart())
    check(daemon.returncode == 0, f"exit status {daemon.returncode} after SIGTERM")
    if os.environ.get("EIGSTREAM_TEST_VERBOSE"):
        print(err, file=sys.stderr)
    m = re.search(r"accounting: in=(\d+) out=(\d+) \(late \d+\) dropped=(\d+) .* in_flight=(\d+)", err)
    check(m is not None, f"no accounting line in: {err[-2000:]!r}")
    if m:
        acc_in, acc_out, acc_dropped, in_flight = map(int, m.groups())
        check(acc_in == acc_out + acc_dropped and in_flight == 0,
              f"accounting in={acc_in} out={acc_out} dropped={acc_dropped} in_flight={in_flight}")
        check(acc_dropped == 0, f"block policy dropped {acc_dropped}")
        check(len(received) == acc_out, f"received {len(received)} frames, daemon published {acc_out}")
        check(acc_in < next_seq, f"all {next_seq} frames sent were accepted: the stop did not end the intake")
        check(acc_out > 1, f"only {acc_out} frame published: nothing was drained after the stop")
        print(f"sigterm drain: sent {next_seq}, accepted {acc_in}, published {acc_out}, received {len(received)}",
              file=sys.stderr)
    last = -1
    for parts in received:
        h, _, results = ec.decode_eigenspace(parts)
        check(h["seq"] > last, f"out of order: {h['seq']} after {last}")
        last = h["seq"]
        a = sent[h["seq"]]
        for b, r in enumerate(results):
            ref = np.linalg.eigvalsh(a[b])
            scale = n * np.finfo(float).eps * np.abs(a[b]).sum(axis=0).max()
            ratio = np.abs(r.values - ref).max() / scale
            check(r.status == 0 and ratio <= 60, f"seq {h['seq']} matrix {b} (n={n}): eigenvalue ratio {ratio:.3g}")
            v = r.vectors
            res = np.abs(a[b] @ v - v * r.values[r.first_index:r.first_index + v.shape[1]]).sum(axis=0).max()
            check(res / scale <= 60, f"seq {h['seq']} matrix {b} (n={n}): residual ratio {res / scale:.3g}")
    ctx.destroy(linger=0)


def start_stalled(tmp, tag, n=96, matrices=16, frames=60):
    """The daemon of config_text, full of accepted frames it cannot publish
    (outputs unread, block policy: fill_daemon's capacity argument); returns
    (daemon with its stderr read line by line into .lines, ctx, pull)."""
    cfg = os.path.join(tmp, f"{tag}.cfg")
    tag = f"{tag}{os.getpid()}"
    write(cfg, config_text(tag, n, matrices))
    daemon = subprocess.Popen([DAEMON, "-c", cfg], stderr=subprocess.PIPE, text=True)
    daemon.lines = []
    reader = threading.Thread(target=lambda: daemon.lines.extend(iter(daemon.stderr.readline, "")), daemon=True)
    reader.start()
    daemon.reader = reader
    ctx = zmq.Context()
    push, pull = ctx.socket(zmq.PUSH), ctx.socket(zmq.PULL)
    push.setsockopt(zmq.LINGER, 0)
    push.setsockopt(zmq.SNDHWM, 1)
    pull.setsockopt(zmq.RCVHWM, 1)
    push.connect(f"ipc:///tmp/eigstream-proc-{tag}-in")
    pull.connect(f"ipc:///tmp/eigstream-proc-{tag}-out")
    sent = hermitian_frames(3, frames, matrices, n)
    fill_daemon(push, pull, sent, frames)
    return daemon, ctx, pull


def wait_line(daemon, pattern, seconds=60):
    """True once a stderr line of daemon matches pattern (within a generous deadline)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if any(re.search(pattern, line) for line in list(daemon.lines)):
            return True
        time.sleep(0.02)
    return False


def test_second_signal(tmp):
    """A second signal exits at once with status 1 (docs/daemon.md): the
    daemon is full of frames it cannot publish (outputs unread), so the drain
    the first SIGTERM starts cannot finish; only the second signal ends it."""
    daemon, ctx, _ = start_stalled(tmp, "twice")
    daemon.send_signal(signal.SIGTERM)
    check(wait_line(daemon, r"stop accepting, draining"), "no drain line after the first SIGTERM")
    check(daemon.poll() is None, f"the daemon ended on the first SIGTERM with its outputs stalled: {daemon.poll()}")
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()
    daemon.reader.join(timeout=10)
    check(daemon.returncode == 1 and any("again: exiting without finishing the drain" in line for line in daemon.lines),
          f"second SIGTERM: exit {daemon.returncode}, log {''.join(daemon.lines)[-800:]!r}")
    ctx.destroy(linger=0)


def test_write_config(tmp):
    """--write-config prints the default file: byte for byte the shipped
    config/eigstream.cfg, which --check-config accepts, and every setting in it
    has the default --help-config lists."""
    r = subprocess.run([DAEMON, "--write-config"], capture_output=True, text=True, timeout=10)
    check(r.returncode == 0 and r.stdout, f"--write-config: exit {r.returncode} {r.stderr!r}")
    shipped = os.path.join(HERE, "..", "..", "config", "eigstream.cfg")
    with open(shipped) as f:
        check(r.stdout == f.read(), "--write-config differs from config/eigstream.cfg")
    path = os.path.join(tmp, "written.cfg")
    write(path, r.stdout)
    c = subprocess.run([DAEMON, "--check-config", path], capture_output=True, text=True, timeout=10)
    check(c.returncode == 0, f"--check-config on --write-config's output: exit {c.returncode} {c.stderr!r}")
    h = subprocess.run([DAEMON, "--help-config"], capture_output=True, text=True, timeout=10)
    listed = dict(re.findall(r"^  (\w+\.\w+) = (.*)$", h.stdout, re.M))
    written, group = {}, None
    for line in r.stdout.splitlines():
        if re.match(r"^(\w+) = \{$", line):
            group = line.split()[0]
        elif re.match(r"^\};$", line):
            group = None
        else:
            m = re.match(r"^  (\w+) = (.*);$", line)
            if m and group:
                written[f"{group}.{m.group(1)}"] = m.group(2)
    check(len(written) >= 20 and written == listed,
          f"--write-config and --help-config disagree: {sorted(set(written.items()) ^ set(listed.items()))[:6]}")


def test_reject_log_limit(tmp):
    """At most one reject log line per reason per second, each saying how
    many were suppressed since the last: 300 messages of each of two reasons
    in bursts, then (1.1 s after the daemon has counted the last) one more of
    each; any three lines of a reason span a second or more by their
    timestamps, and their counts (1 + the suppressed they name) add up to
    exactly what was sent."""
    tag = f"rejects{os.getpid()}"
    cfg = os.path.join(tmp, "rejects.cfg")
    write(cfg, config_text(tag, 8, 2))
    daemon = subprocess.Popen([DAEMON, "-c", cfg], stderr=subprocess.PIPE, text=True)
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.connect(f"ipc:///tmp/eigstream-proc-{tag}-in")
    bad = {"header_size": [b"not a frame"], "bad_magic": [b"EIGX" + bytes(60), b"payload"]}
    sent = {reason: 0 for reason in bad}
    metrics = ctx.socket(zmq.SUB)
    metrics.setsockopt(zmq.SUBSCRIBE, b"")
    metrics.connect(f"ipc:///tmp/eigstream-proc-{tag}-metrics")

    def wait_rejected():
        """The daemon's reject counters once they equal what was sent (60 s at most)."""
        deadline, doc = time.time() + 60, {}
        while time.time() < deadline and doc.get("rejected", {}) != sent:
            if metrics.poll(500):
                doc = json.loads(metrics.recv())
                doc = {"rejected": {k: v for k, v in doc.get("rejected", {}).items() if v}}
        return doc.get("rejected")

    for burst in range(6):
        for _ in range(50):
            for reason, parts in bad.items():
                push.send_multipart(parts)
                sent[reason] += 1
        time.sleep(0.4)
    # The last one of each reason must be logged, with the count suppressed
    # before it: sent more than a second after the daemon has rejected the
    # bursts (their counters say when), whatever its lag; waiting longer only
    # adds to the second.
    check(wait_rejected() == sent, f"the bursts' rejects not all counted: sent {sent}")
    time.sleep(1.1)
    for reason, parts in bad.items():
        push.send_multipart(parts)
        sent[reason] += 1
    push.close(linger=5000)
    rejected = wait_rejected()
    check(rejected == sent, f"rejected counters {rejected}, sent {sent}")
    daemon.send_signal(signal.SIGTERM)
    _, err = daemon.communicate(timeout=60)
    ctx.destroy(linger=0)
    line_re = re.compile(r"^\S+T(\d+):(\d+):([\d.]+)Z WARN  receive: rejected message: (\w+)(?:: .*?)?"
                         r"(?: \((\d+) more suppressed\))?$", re.M)
    for reason in bad:
        lines = [(int(h) * 3600 + int(m) * 60 + float(sec), int(more or 0))
                 for h, m, sec, r, more in line_re.findall(err) if r == reason]
        # One line per second of the daemon's monotonic clock (log.h), whose
        # second boundaries this test cannot see: two lines may straddle one,
        # but any three lines span more than a second.
        spans = [c[0] - a[0] for a, c in zip(lines, lines[2:])]
        check(lines and all(g >= 0.999 for g in spans), f"{reason}: log lines {len(lines)}, spans of three {spans}")
        check(sum(1 + more for _, more in lines) == sent[reason],
              f"{reason}: the lines account for {sum(1 + more for _, more in lines)} messages, sent {sent[reason]}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_check_config(tmp)
        test_write_config(tmp)
        test_startup_failures(tmp)
        test_override_validation(tmp)
        test_reject_log_limit(tmp)
        test_second_signal(tmp)
        test_sigterm_drain(tmp)
    return eigstream_check.outcome()


if __name__ == "__main__":
    sys.exit(main())
