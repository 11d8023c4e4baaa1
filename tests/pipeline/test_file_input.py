#!/usr/bin/python3
"""The daemon reading a recording (input.endpoint = "file:NAME"), label integration.

  test_file_input.py EIGSTREAM EIGSTREAM_SIM EIGSTREAM_RECORD EIGSTREAM_REPLAY

A recording of eigstream-sim's covariance frames (made with eigstream-record,
as a user would) is reprocessed by the daemon:
1. every frame is published, the daemon exits 0 by itself at the end of the
   recording with in == out, nothing dropped or rejected; every eigenvalue
   matches numpy.linalg.eigvalsh of the recorded matrix (the recording read
   back through eigstream-replay --to-npy);
2. a second run gives bit-identical eigenspaces (the data parts);
3. replay_timing = original paces the frames: the daemon cannot finish sooner
   than the recorded duration divided by replay_speed (a lower bound, true
   on any machine);
4. a recording of other n, matrices or precision, or of eigenspace frames,
   is refused at start with exit 1 and a message naming the mismatch;
5. a recording damaged after it was written: the damaged frames rejected
   (crc_mismatch, truncated), the others published and right.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import zmq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import eigstream_client as ec  # noqa: E402
from eigstream_check import check, report  # noqa: E402

DAEMON, SIM, RECORD, REPLAY = sys.argv[1:5]
N, CELLS, FRAMES = 16, 6, 8


def record_sim(tmp, name, rate, extra=()):
    """Records FRAMES frames of eigstream-sim at `rate` into tmp/name."""
    tag = f"{name}{os.getpid()}"
    endpoint = f"ipc:///tmp/eigstream-file-{tag}"
    path = os.path.join(tmp, name)
    rec = subprocess.Popen([RECORD, "--endpoint", endpoint, "--bind", "--frames", str(FRAMES), "--quiet", path],
                           stderr=subprocess.PIPE, text=True)
    # Bound once its ipc socket file exists (zmq_bind creates it listening):
    # waited for, so that the sim's frames never queue for a late recorder.
    socket_file, deadline = endpoint[len("ipc://"):], time.time() + 60
    while not os.path.exists(socket_file) and rec.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    check(os.path.exists(socket_file), f"eigstream-record did not bind {endpoint}")
    sim = subprocess.run([SIM, "--endpoint", endpoint, "--n", str(N), "--cells", str(CELLS), "--frames",
                          str(FRAMES), "--rate", str(rate), "--snapshots", "64", "--quiet", *extra],
                         capture_output=True, text=True, timeout=60)
    check(sim.returncode == 0, f"eigstream-sim: exit {sim.returncode} {sim.stderr!r}")
    _, err = rec.communicate(timeout=60)
    check(rec.returncode == 0, f"eigstream-record: exit {rec.returncode} {err!r}")
    return path


def config(tmp, name, recording, n=N, matrices=CELLS, extra=""):
    tag = f"{name}{os.getpid()}"
    path = os.path.join(tmp, name + ".cfg")
    with open(path, "w") as f:
        f.write(f'''
input = {{ endpoint = "file:{recording}"; {extra} }};
output = {{ endpoint = "ipc:///tmp/eigstream-file-{tag}-out"; pattern = "push"; }};
solver = {{ n = {n}; matrices = {matrices}; backend = "lapack"; cpu_threads = 1; }};
frame = {{ deadline_ms = 60000; queue_depth = 2; }};
metrics = {{ endpoint = ""; http = ""; }};
''')
    return path, f"ipc:///tmp/eigstream-file-{tag}-out"


def run_daemon(cfg, out_endpoint):
    """Runs the daemon to its end, collecting every output; (exit, stderr, outputs, seconds)."""
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.connect(out_endpoint)
    start = time.monotonic()
    daemon = subprocess.Popen([DAEMON, "-c", cfg], stderr=subprocess.PIPE, text=True)
    received = []
    deadline = time.time() + 60
    while daemon.poll() is None and time.time() < deadline:
        if pull.poll(50):
            received.append(pull.recv_multipart())
    if daemon.poll() is None:
        daemon.kill()
    _, err = daemon.communicate()
    seconds = time.monotonic() - start
    while pull.poll(200):
        received.append(pull.recv_multipart())
    ctx.destroy(linger=0)
    return daemon.returncode, err, received, seconds


def test_reprocess(tmp):
    recording = record_sim(tmp, "cov", 50)
    npy = os.path.join(tmp, "cov.npy")
    r = subprocess.run([REPLAY, "--to-npy", npy, recording], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"replay --to-npy: exit {r.returncode} {r.stderr!r}")
    matrices = np.load(npy)
    check(matrices.shape == (FRAMES, CELLS, N, N), f"exported shape {matrices.shape}")
    cfg, out = config(tmp, "run", recording)
    runs = []
    for attempt in range(2):
        code, err, received, _ = run_daemon(cfg, out)
        check(code == 0, f"run {attempt}: exit {code} {err[-1500:]!r}")
        m = re.search(r"accounting: in=(\d+) out=(\d+) \(late \d+\) dropped=(\d+) .* in_flight=(\d+) rejected=(\d+)",
                      err)
        check(m is not None and tuple(map(int, m.groups())) == (FRAMES, FRAMES, 0, 0, 0),
              f"run {attempt}: accounting {m.groups() if m else err[-800:]!r}")
        check(len(received) == FRAMES, f"run {attempt}: received {len(received)} of {FRAMES}")
        runs.append(received)
    for k, parts in enumerate(runs[0]):
        _, _, results = ec.decode_eigenspace(parts)
        for b, res in enumerate(results):
            a = matrices[k, b]
            ref = np.linalg.eigvalsh(a)
            scale = N * np.finfo(float).eps * np.abs(a).sum(axis=0).max()
            check(res.status == 0 and np.abs(res.values - ref).max() <= 60 * scale,
                  f"frame {k} matrix {b}: eigenvalues differ from numpy")
    same = all(a[2] == b[2] for a, b in zip(runs[0], runs[1])) and len(runs[0]) == len(runs[1])
    check(same, "two runs over the same recording gave different eigenspace data")


def test_paced(tmp):
    # Recorded at 10 frames/s: 7 intervals of ~0.1 s.
    recording = record_sim(tmp, "paced", 10)
    r = subprocess.run([REPLAY, "--info", recording], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, f"replay --info: exit {r.returncode} {r.stderr!r}")
    cfg, out = config(tmp, "paced", recording, extra='replay_timing = "original"; replay_speed = 2.0;')
    code, err, received, seconds = run_daemon(cfg, out)
    check(code == 0 and len(received) == FRAMES, f"paced: exit {code}, {len(received)} frames {err[-800:]!r}")
    # The recorded span is >= 7 * 0.1 s less the sim's own jitter; at speed 2
    # the daemon needs at least ~0.35 s. A fast machine cannot beat it.
    check(seconds >= 0.3, f"paced replay at speed 2 took {seconds:.3f} s, less than the recorded span allows")


def test_mismatch(tmp):
    recording = record_sim(tmp, "mis", 100, ("--precision", "float"))
    for name, n, matrices, want in [("n", N + 1, CELLS, "n=16 matrices=6 float"),
                                    ("matrices", N, CELLS + 1, "n=16 matrices=6 float"),
                                    ("precision", N, CELLS, "solver.precision=double")]:
        cfg, _ = config(tmp, "mis_" + name, recording, n=n, matrices=matrices)
        r = subprocess.run([DAEMON, "-c", cfg], capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and want in r.stderr, f"{name} mismatch: exit {r.returncode} {r.stderr[-600:]!r}")
    cfg, _ = config(tmp, "missing", os.path.join(tmp, "no-such-recording"))
    r = subprocess.run([DAEMON, "-c", cfg], capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "no-such-recording" in r.stderr, f"missing recording: {r.stderr[-600:]!r}")


def test_corrupted(tmp):
    """A recording damaged after it was written: one payload byte of frame 2
    flipped in the data file (its CRC no longer matches the index:
    crc_mismatch) and the seq in frame 5's journal record changed (docs/
    recording.md, layout samples: the record no longer holds, so the frame's
    head cannot be read back whole: truncated). The daemon rejects exactly
    those two with their reasons, publishes the other six (eigenvalues
    against numpy on the matrices exported before the damage) and exits 0."""
    recording = record_sim(tmp, "bad", 100)
    npy = os.path.join(tmp, "bad.npy")
    r = subprocess.run([REPLAY, "--to-npy", npy, recording], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"replay --to-npy: exit {r.returncode} {r.stderr!r}")
    matrices = np.load(npy)
    samples = CELLS * N * N * 16  # a frame's bytes in the data file: its samples
    with open(recording + ".sigmf-data", "r+b") as f:
        f.seek(2 * samples + 1000)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0x01]))
    with open(recording + ".sigmf-index", "r+b") as f:
        f.seek(16 + 5 * (64 + 64) + 8)  # frame 5's record (64 bytes, then its 64-byte head): its seq @8
        f.write((1000).to_bytes(8, "little"))
    cfg, out = config(tmp, "bad", recording)
    code, err, received, _ = run_daemon(cfg, out)
    check(code == 0, f"corrupted recording: exit {code} {err[-1500:]!r}")
    m = re.search(r"accounting: in=(\d+) out=(\d+) \(late \d+\) dropped=(\d+) .* in_flight=(\d+) rejected=(\d+)", err)
    check(m is not None and tuple(map(int, m.groups())) == (FRAMES - 2, FRAMES - 2, 0, 0, 2),
          f"corrupted recording: accounting {m.groups() if m else err[-800:]!r}")
    check(re.search(r"rejected message: crc_mismatch: recorded frame 2\b", err) is not None and
          re.search(r"rejected message: truncated: recorded frame 5\b", err) is not None,
          f"corrupted recording: reject lines {re.findall(r'rejected message: .*', err)}")
    kept = [k for k in range(FRAMES) if k not in (2, 5)]
    check(len(received) == len(kept), f"corrupted recording: received {len(received)} of {len(kept)}")
    for k, parts in zip(kept, received):
        h, _, results = ec.decode_eigenspace(parts)
        for b, res in enumerate(results):
            ref = np.linalg.eigvalsh(matrices[k, b])
            scale = N * np.finfo(float).eps * np.abs(matrices[k, b]).sum(axis=0).max()
            check(res.status == 0 and np.abs(res.values - ref).max() <= 60 * scale,
                  f"corrupted recording: output seq {h['seq']} (frame {k}) matrix {b} differs from numpy")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_reprocess(tmp)
        test_corrupted(tmp)
        test_paced(tmp)
        test_mismatch(tmp)
    return report("test_file_input")


if __name__ == "__main__":
    sys.exit(main())
