#!/usr/bin/python3
"""eigstream-record and eigstream-replay end to end (label integration).

  test_record_replay.py CASE RECORD REPLAY SIM DAEMON BENCH TOOLS_PYTHON_DIR

Oracles are independent of the tools under test: what a Python sender sent
(eigstream_client), the data file read directly (frames back to back, each
its wire bytes), the meta's JSON index, numpy.linalg.eigh. No check depends
on the machine's speed (pacing compares against the schedule with generous
tolerances).

Cases: roundtrip, eigenspace, npy, repair, fsize, ring, pacing, info, bench,
fragments, fragment_faults, client_fragments, lossless, unreachable, linger, read_python.
Exit 77 (skip) without NumPy or pyzmq.
"""
import glob
import json
import math
import os
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    import numpy as np
    import zmq
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

CASE, RECORD, REPLAY, SIM, DAEMON, BENCH = sys.argv[1:7]
sys.path.insert(0, sys.argv[7])
import eigstream_client as ec  # noqa: E402
from eigstream_check import check, report  # noqa: E402

N, CELLS = 8, 4
CTX = zmq.Context.instance()


def start_recorder(tmp, name, extra=(), endpoint=None, bind=True, preexec_fn=None):
    """eigstream-record NAME on an ipc endpoint (bound unless told); returns (proc, endpoint)."""
    endpoint = endpoint or f"ipc://{tmp}/rec-in"
    args = [RECORD, "--endpoint", endpoint, "--quiet", os.path.join(tmp, name)] + list(extra)
    proc = subprocess.Popen(args + (["--bind"] if bind else []), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=preexec_fn)
    return proc, endpoint


def finish(proc, timeout=30):
    """(exit status, stdout + stderr) of a process, killed after timeout s."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        check(False, f"{proc.args[0]} did not finish in {timeout} s")
    return proc.returncode, (out or "") + (err or "")


def push_frames(endpoint, messages, delay=0.0):
    """Sends messages from a PUSH that connects to endpoint (blocking, no loss)."""
    push = CTX.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 10000)
    push.connect(endpoint)
    for m in messages:
        push.send_multipart(m)
        if delay:
            time.sleep(delay)
    push.close()


def random_hermitian(rng, count, n, dtype):
    x = rng.standard_normal((count, n, n)) + 1j * rng.standard_normal((count, n, n))
    return ((x + x.conj().transpose(0, 2, 1)) / 2).astype(dtype)


def covariance_messages(frames, dtype=np.complex128, storage="full", per_matrix_parts=False, seqs=None, seed=3):
    """(messages, matrices) of random Hermitian covariance frames."""
    rng = np.random.default_rng(seed)
    mats = [random_hermitian(rng, CELLS, N, dtype) for _ in range(frames)]
    seqs = list(range(frames)) if seqs is None else seqs
    msgs = [ec.encode_covariance(s, time.time_ns(), m, storage, True, per_matrix_parts) for s, m in zip(seqs, mats)]
    return msgs, mats


def record_messages(tmp, name, messages, extra=()):
    """Records messages sent by a Python PUSH; returns (exit status, output)."""
    proc, endpoint = start_recorder(tmp, name, ["--frames", str(len(messages))] + list(extra))
    push_frames(endpoint, messages)
    return finish(proc)


def replay_into_pull(tmp, name, frames, extra=(), timeout_s=30):
    """Replays into a bound PULL; returns (status, output, [(monotonic receipt s, parts)])."""
    pull = CTX.socket(zmq.PULL)
    endpoint = f"ipc://{tmp}/replay-out"
    pull.bind(endpoint)
    proc = subprocess.Popen([REPLAY, "--endpoint", endpoint, "--quiet", os.path.join(tmp, name)] + list(extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got, deadline = [], time.monotonic() + timeout_s
    while len(got) < frames and time.monotonic() < deadline:
        if pull.poll(200):
            parts = pull.recv_multipart()
            got.append((time.monotonic(), parts))
    status, out = finish(proc)
    pull.close(linger=0)
    check(len(got) == frames, f"replay {name} {extra}: received {len(got)} of {frames} frames: {out}")
    return status, out, got


def data_frames(tmp, name):
    """The recorded frames as on the wire, rebuilt by docs/recording.md's layout samples alone (the
    oracle): NAME.sigmf-index is a 16-byte header, then per frame a 64-byte record followed by the
    frame's head (its 64-byte header, and an eigenspace frame's meta part: 32 + 16 count bytes);
    NAME.sigmf-data holds the rest of each frame, its samples, back to back in frame order."""
    journal = open(os.path.join(tmp, name + ".sigmf-index"), "rb").read()
    data = open(os.path.join(tmp, name + ".sigmf-data"), "rb").read()
    frames, at, sample = [], 16, 0
    while at + 128 <= len(journal):
        h = ec.decode_header(journal[at + 64:at + 128])
        head = 64 + (32 + 16 * h["count"] if h["kind"] == ec.KIND_EIGENSPACE else 0)
        samples = 64 + h["payload_bytes"] - head
        frames.append(journal[at + 64:at + 64 + head] + data[sample:sample + samples])
        at, sample = at + 64 + head, sample + samples
    check(sample == len(data), f"{name}: the data file holds {len(data)} bytes, the frames' samples {sample}")
    return frames


def meta_index(tmp, name):
    return json.load(open(os.path.join(tmp, name + ".sigmf-meta")))["global"]["eigstream:index"]


# ---- cases -------------------------------------------------------------------------------

def sim_capture(tmp, extra, frames):
    """What eigstream-sim sends with these options (a PULL of ours): the oracle of payloads."""
    pull = CTX.socket(zmq.PULL)
    pull.bind(f"ipc://{tmp}/sim-cap")
    sim = subprocess.Popen([SIM, "--endpoint", f"ipc://{tmp}/sim-cap"] + extra, stdout=subprocess.PIPE, text=True)
    pull.RCVTIMEO = 30000
    got = [pull.recv_multipart() for _ in range(frames)]
    finish(sim)
    pull.close(linger=0)
    return got


def case_roundtrip(tmp):
    """sim -> record -> replay -> PULL: byte-exact with --keep-seq --keep-timestamps --lossy; by default fresh
    seq/time and the LOSSLESS flag (docs/protocol.md), nothing else changed."""
    frames = 4
    for variant in ([], ["--precision", "float", "--storage", "packed_upper", "--per-matrix-parts"],
                    ["--storage", "packed_lower", "--per-matrix-parts"], ["--precision", "float"]):
        sim_args = ["--n", str(N), "--cells", str(CELLS), "--frames", str(frames), "--rate", "0", "--pool", "2",
                    "--seed", "9", "--quiet"] + variant
        sent = sim_capture(tmp, sim_args, frames)
        name = "rt" + "".join(v.strip("-")[:2] for v in variant)
        proc, endpoint = start_recorder(tmp, name, ["--frames", str(frames)])
        sim = subprocess.Popen([SIM, "--endpoint", endpoint] + sim_args, stdout=subprocess.PIPE, text=True)
        finish(sim)
        status, out = finish(proc)
        check(status == 0 and f"recorded {frames} frames" in out, f"{variant}: record: {status} {out}")
        stored = data_frames(tmp, name)
        index = meta_index(tmp, name)
        check(len(stored) == frames and len(index) == frames, f"{variant}: {len(stored)} frames stored")
        _, out, got = replay_into_pull(tmp, name, frames, ["--max", "--keep-seq", "--keep-timestamps", "--lossy"])
        for i, (_, parts) in enumerate(got):
            check(len(parts) == len(sent[i]) and [len(p) for p in parts] == [len(p) for p in sent[i]],
                  f"{variant}: frame {i}: part structure {[len(p) for p in parts]}")
            check(parts[1:] == sent[i][1:], f"{variant}: frame {i}: payload differs from what the sim sent")
            check(b"".join(parts) == stored[i], f"{variant}: frame {i}: differs from the data file")
            h, sh = ec.decode_header(parts[0]), ec.decode_header(sent[i][0])
            check(h["timestamp_ns"] == index[i]["timestamp_ns"] and h["seq"] == index[i]["seq"] == i,
                  f"{variant}: frame {i}: kept seq/timestamp {h['seq']} {h['timestamp_ns']} vs index {index[i]}")
            sh["timestamp_ns"] = h["timestamp_ns"]
            check(h == sh, f"{variant}: frame {i}: header {h} vs sent {sh}")
        # Default: fresh seq 0.. and timestamps at send, flag LOSSLESS, everything else as recorded.
        before = time.time_ns()
        _, out, got = replay_into_pull(tmp, name, 2 * frames, ["--rate", "200", "--loop", "2"])
        after = time.time_ns()
        for j, (_, parts) in enumerate(got):
            h = ec.decode_header(parts[0])
            rec = stored[j % frames]
            check(h["seq"] == j and before <= h["timestamp_ns"] <= after, f"{variant}: fresh frame {j}: {h}")
            lossless = ec.decode_header(rec[:64])["flags"] | ec.FLAG_LOSSLESS
            check(h["flags"] == lossless, f"{variant}: fresh frame {j}: flags {h['flags']:#x}, not {lossless:#x}")
            check(parts[0][:8] == rec[:8] and parts[0][24:36] == rec[24:36] and parts[0][40:] == rec[40:64] and
                  b"".join(parts[1:]) == rec[64:], f"{variant}: fresh frame {j}: bytes other than seq/timestamp/flags changed")
        check("pacing error p50" in out, f"summary line: {out}")


def daemon_config(tmp, n, matrices):
    cfg = os.path.join(tmp, "daemon.cfg")
    with open(cfg, "w") as f:
        f.write(f'''
input = {{ endpoint = "ipc://{tmp}/d-in"; }};
output = {{ endpoint = "ipc://{tmp}/d-out"; pattern = "push"; mode = "full"; }};
solver = {{ n = {n}; matrices = {matrices}; backend = "lapack"; cpu_threads = 1; }};
frame = {{ overflow_policy = "block"; deadline_ms = 60000; }};
metrics = {{ endpoint = "ipc://{tmp}/d-metrics"; interval_ms = 1000; http = ""; }};  # no shared default port
''')
    return cfg


def case_eigenspace(tmp):
    """The daemon's eigenspace frames recorded, replayed, exported; values vs numpy.linalg.eigh."""
    frames = 3
    daemon = subprocess.Popen([DAEMON, "-c", daemon_config(tmp, N, CELLS)], stderr=subprocess.PIPE, text=True)
    proc, _ = start_recorder(tmp, "eig", ["--frames", str(frames), "--kind", "eigenspace"],
                             endpoint=f"ipc://{tmp}/d-out", bind=False)
    msgs, mats = covariance_messages(frames)
    push_frames(f"ipc://{tmp}/d-in", msgs)
    status, out = finish(proc)
    daemon.send_signal(signal.SIGTERM)
    finish(daemon)
    check(status == 0 and f"recorded {frames} frames" in out, f"record eigenspace: {status} {out}")
    npy = os.path.join(tmp, "eig.npy")
    r = subprocess.run([REPLAY, "--to-npy", npy, os.path.join(tmp, "eig")], capture_output=True, text=True)
    check(r.returncode == 0, f"--to-npy eigenspace: {r.returncode} {r.stderr}")
    if r.returncode != 0:
        return
    values, vectors = np.load(npy), np.load(os.path.join(tmp, "eig-vectors.npy"))
    check(values.shape == (frames, CELLS, N) and vectors.shape == (frames, CELLS, N, N),
          f"shapes {values.shape} {vectors.shape}")
    for f in range(frames):
        for b in range(CELLS):
            a = mats[f][b]
            scale = N * np.finfo(float).eps * np.abs(a).sum(axis=0).max()
            ratio = np.abs(values[f, b] - np.linalg.eigh(a)[0]).max() / scale
            res = np.abs(a @ vectors[f, b] - vectors[f, b] * values[f, b]).sum(axis=0).max() / scale
            check(ratio <= 60 and res <= 60, f"frame {f} matrix {b} (n={N}): value ratio {ratio:.3g} residual {res:.3g}")
    import eigstream
    rec = eigstream.read_recording(os.path.join(tmp, "eig"))
    check(rec.kind == "eigenspace" and rec.values.shape == (frames, CELLS, N) and rec.vectors.shape == values.shape
          + (N,), f"read_recording eigenspace: {rec}")
    for f in range(frames):
        for b in range(CELLS):
            a = mats[f][b]
            scale = N * np.finfo(float).eps * np.abs(a).sum(axis=0).max()
            ratio = np.abs(rec.values[f, b] - np.linalg.eigh(a)[0]).max() / scale
            res = np.abs(a @ rec.vectors[f, b] - rec.vectors[f, b] * rec.values[f, b]).sum(axis=0).max() / scale
            check(ratio <= 60 and res <= 60, f"read_recording frame {f} matrix {b}: ratio {ratio:.3g} res {res:.3g}")
    _, out, got = replay_into_pull(tmp, "eig", frames, ["--max"])
    for j, (_, parts) in enumerate(got):
        h, _, results = ec.decode_eigenspace(parts)
        check(h["seq"] == j and np.array_equal(results[1].values, values[j, 1]), f"replayed eigenspace frame {j}")


def case_check(tmp):
    """--check INPUTS NAME: the daemon's eigenspace recording checked against the recorded inputs.
    The oracle is which input was changed: inputs whose frame 2 holds other matrices fail
    exactly that frame's CELLS matrices (exit 3); inputs without frame 3 leave one frame
    unchecked (exit 1); the true inputs pass every matrix (exit 0)."""
    frames = 4
    msgs, _ = covariance_messages(frames)
    check(record_messages(tmp, "cov", msgs)[0] == 0, "record the inputs")
    other, _ = covariance_messages(frames, seed=99)
    check(record_messages(tmp, "cov-other", msgs[:2] + [other[2]] + msgs[3:])[0] == 0, "record the changed inputs")
    check(record_messages(tmp, "cov-short", msgs[:3])[0] == 0, "record the short inputs")
    daemon = subprocess.Popen([DAEMON, "-c", daemon_config(tmp, N, CELLS)], stderr=subprocess.PIPE, text=True)
    proc, _ = start_recorder(tmp, "eig", ["--frames", str(frames), "--kind", "eigenspace"],
                             endpoint=f"ipc://{tmp}/d-out", bind=False)
    push_frames(f"ipc://{tmp}/d-in", msgs)
    status, out = finish(proc)
    daemon.send_signal(signal.SIGTERM)
    finish(daemon)
    check(status == 0, f"record eigenspace: {status} {out}")
    for inputs, want_status, want in (
            ("cov", 0, f"{frames} frames, {frames * CELLS} matrices checked, 0 failed"),
            ("cov-other", 3, f"{frames} frames, {frames * CELLS} matrices checked, {CELLS} failed"),
            ("cov-short", 1, f"{frames} frames, {(frames - 1) * CELLS} matrices checked, 0 failed")):
        r = subprocess.run([REPLAY, "--check", os.path.join(tmp, inputs), os.path.join(tmp, "eig")],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == want_status and want in r.stdout,
              f"--check {inputs}: exit {r.returncode} (want {want_status}), {r.stdout!r} {r.stderr!r}; want {want!r}")
    check("1 frames without their input" in r.stdout, f"--check cov-short: {r.stdout!r}")
    r = subprocess.run([REPLAY, "--check", os.path.join(tmp, "eig"), os.path.join(tmp, "cov")],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "NAME is not a recording of eigenspace frames" in r.stderr,
          f"--check with the two swapped: {r.returncode} {r.stderr!r}")


def case_npy(tmp):
    """--to-npy of covariance recordings equals the matrices sent (packed expanded to full)."""
    for dtype, storage, parts in ((np.complex128, "full", False), (np.complex64, "packed_lower", True),
                                  (np.complex128, "packed_upper", False), (np.complex64, "full", True)):
        name = f"npy-{storage}-{np.dtype(dtype).itemsize}"
        msgs, mats = covariance_messages(3, dtype, storage, parts)
        status, out = record_messages(tmp, name, msgs)
        npy = os.path.join(tmp, name + ".npy")
        r = subprocess.run([REPLAY, "--to-npy", npy, os.path.join(tmp, name)], capture_output=True, text=True)
        check(status == 0 and r.returncode == 0, f"{name}: record {status} export {r.returncode} {r.stderr}")
        if r.returncode == 0:
            a = np.load(npy)
            check(a.dtype == dtype and a.shape == (3, CELLS, N, N) and np.array_equal(a, np.stack(mats)),
                  f"{name}: exported {a.dtype} {a.shape} differs from the matrices sent")


def case_repair(tmp):
    """SIGKILL mid-stream, a cut frame, --repair, replay: every complete frame comes back."""
    msgs, mats = covariance_messages(6)
    proc, endpoint = start_recorder(tmp, "crash")
    push_frames(endpoint, msgs)
    data, journal = os.path.join(tmp, "crash.sigmf-data"), os.path.join(tmp, "crash.sigmf-index")
    samples = sum(len(p) for p in msgs[0][1:])

    def size(path):
        return os.path.getsize(path) if os.path.exists(path) else 0

    # The journal entries (a 64-byte record and the 64-byte head a frame, after a 16-byte header)
    # follow each frame's samples: waited for, not slept for.
    deadline = time.time() + 60
    while time.time() < deadline and size(journal) < 16 + 6 * 128:
        time.sleep(0.05)
    check(size(journal) >= 16 + 6 * 128, f"the recorder journaled {(size(journal) - 16) // 128} of 6 frames in 60 s")
    proc.send_signal(signal.SIGKILL)
    finish(proc)
    cut = samples // 2
    with open(data, "ab") as f:  # a frame's samples cut mid-write, as a kill during a write leaves them
        f.write(b"".join(msgs[0][1:])[:cut])
    r = subprocess.run([RECORD, "--repair", os.path.join(tmp, "crash")], capture_output=True, text=True)
    check(r.returncode == 0 and "6 frames recovered" in r.stdout and f"{cut} bytes cut" in r.stdout,
          f"repair: {r.returncode} {r.stdout} {r.stderr}")
    _, out, got = replay_into_pull(tmp, "crash", 6, ["--max", "--keep-seq"])
    check([g[1][1:] for g in got] == [m[1:] for m in msgs], "repaired recording: payloads differ from those sent")
    info = subprocess.run([REPLAY, "--info", os.path.join(tmp, "crash")], capture_output=True, text=True)
    check(f"truncated   {cut} bytes" in info.stdout, f"--info after repair: {info.stdout}")


def case_fsize(tmp):
    """RLIMIT_FSIZE: a clear message, exit 1, and the recording replays to its last complete frame."""
    msgs, _ = covariance_messages(10)
    samples = sum(len(p) for p in msgs[0][1:])  # what a frame puts in the data file (layout samples)
    limit = 5 * samples + samples // 2

    def limit_fsize():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc, endpoint = start_recorder(tmp, "full", ["--frames", "10"], preexec_fn=limit_fsize)
    push = CTX.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 0)
    push.setsockopt(zmq.SNDTIMEO, 2000)
    push.connect(endpoint)
    try:
        for m in msgs:
            push.send_multipart(m)
    except zmq.Again:
        pass  # the recorder stopped taking frames
    status, out = finish(proc)
    push.close()
    check(status == 1 and "write error" in out, f"recorder past RLIMIT_FSIZE: exit {status}: {out}")
    _, out, got = replay_into_pull(tmp, "full", 5, ["--max", "--keep-seq"])
    check([g[1][1:] for g in got] == [m[1:] for m in msgs[:5]], "replay after the size limit: payloads differ")
    check(os.path.getsize(os.path.join(tmp, "full.sigmf-data")) == 5 * samples,
          "data file not cut back to the last complete frame's samples")


def case_ring(tmp):
    """--max-bytes 3 frames, --max-files 2, 10 frames: the 2 newest recordings remain, consecutive."""
    msgs, _ = covariance_messages(10)
    frame_bytes = sum(len(p) for p in msgs[0])
    status, out = record_messages(tmp, "ring", msgs, ["--max-bytes", str(3 * frame_bytes), "--max-files", "2"])
    check(status == 0, f"ring record: {status} {out}")
    metas = sorted(glob.glob(os.path.join(tmp, "ring-*.sigmf-meta")))
    names = [os.path.basename(m)[:-len(".sigmf-meta")] for m in metas]
    check(names == ["ring-000003", "ring-000004"], f"ring left {names}")
    check(sorted(glob.glob(os.path.join(tmp, "ring-*.sigmf-data"))) == [os.path.join(tmp, n + ".sigmf-data")
                                                                         for n in names], "stale data files")
    seqs = []
    for name, frames in zip(names, (3, 1)):
        _, out, got = replay_into_pull(tmp, name, frames, ["--max", "--keep-seq"])
        seqs += [ec.decode_header(g[1][0])["seq"] for g in got]
    check(seqs == [6, 7, 8, 9], f"ring frames {seqs}")


def case_pacing(tmp):
    """Recorded at 10 frames/s by eigstream-sim; replayed original and --speed 2 on schedule, judged by what
    the docs promise (sleeps against one start time, so errors do not add up) with a tolerance that holds on
    a loaded machine: a frame can only be delayed, never early, so each frame's delay is measured against the
    least delayed one (arrival - cumulative schedule - min over frames of the same); the median delay must
    stay under 100 ms and none may exceed 1 s. No pacing (--max) or the wrong speed makes the delays grow
    with the frame index: a median of 375 ms or more here."""
    frames = 16
    proc, endpoint = start_recorder(tmp, "paced", ["--frames", str(frames)])
    sim = subprocess.Popen([SIM, "--endpoint", endpoint, "--n", str(N), "--cells", str(CELLS), "--frames",
                            str(frames), "--rate", "10", "--quiet"], stdout=subprocess.PIPE, text=True)
    finish(sim)
    finish(proc)
    recorded = np.diff([f["received_ns"] for f in meta_index(tmp, "paced")]) / 1e9
    for speed in (1, 2):
        extra = ["--timing", "original"] + (["--speed", str(speed)] if speed != 1 else [])
        _, out, got = replay_into_pull(tmp, "paced", frames, extra)
        arrivals = np.array([g[0] for g in got])
        schedule = np.concatenate([[0.0], np.cumsum(recorded / speed)])
        if len(arrivals) == len(schedule):
            late = arrivals - schedule
            delay = late - late.min()
            check(np.median(delay) < 0.100 and delay.max() < 1.0,
                  f"speed {speed}: delays against the schedule (ms): {np.round(delay * 1e3, 1)}")
        check(re.search(r"pacing error p50 [0-9.]+ ms p99 [0-9.]+ ms", out) is not None, f"summary: {out}")


def case_info(tmp):
    """--info: a sequence gap (seq 0, 1, 3, 4) and one flipped payload byte -> 1 gap, 1 CRC failure."""
    msgs, _ = covariance_messages(4, seqs=[0, 1, 3, 4])
    status, out = record_messages(tmp, "gappy", msgs, ["--description", "gap and flip"])
    samples = sum(len(p) for p in msgs[0][1:])
    with open(os.path.join(tmp, "gappy.sigmf-data"), "r+b") as f:
        f.seek(2 * samples + 100)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0x10]))
    r = subprocess.run([REPLAY, "--info", os.path.join(tmp, "gappy")], capture_output=True, text=True)
    check(r.returncode == 1, f"--info with a CRC failure: exit {r.returncode}")
    check("1 gaps (1 frames missing)" in r.stdout and "crc         1 failures in 4 frames" in r.stdout,
          f"--info: {r.stdout}")
    check("frame 2:" in r.stderr and 'description "gap and flip"' in r.stdout, f"--info: {r.stdout} {r.stderr}")


def case_bench(tmp):
    """eigstream-bench record, tiny: exits 0, prints the table, and its numbers hold together (no timing
    assertions): the frame size against the test's own count (cells * n * n * 16 bytes), every rate positive
    and finite, each ratio the quotient of the two rates it names, p50 <= p99, the table's values those of
    the JSON, the pacing rows for the frames asked."""
    n, cells, pacing = 16, 8, 5
    out = os.path.join(tmp, "b.json")
    r = subprocess.run([BENCH, "record", "--frames", "2", "--n", str(n), "--cells", str(cells), "--pacing-frames",
                        str(pacing), "--dir", tmp, "--json", out], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"bench record: {r.returncode} {r.stdout} {r.stderr}")
    for row in ("write: recording", "write: dd", "feed: replay --max", "feed: eigstream-sim", "pacing"):
        check(row in r.stdout, f"bench table lacks {row!r}: {r.stdout}")
    if not check(os.path.exists(out), "bench --json wrote nothing"):
        return
    with open(out) as f:
        j = json.load(f)
    check(abs(j["frame_mb"] - cells * n * n * 16 / 1e6) < 1e-3, f"frame_mb {j['frame_mb']}, want {cells * n * n * 16 / 1e6}")
    for key in ("write_recording_mb_s", "write_dd_mb_s", "feed_replay_fps", "feed_sim_fps", "pacing_rate"):
        check(math.isfinite(j[key]) and j[key] > 0, f"{key} = {j[key]}")
    for ratio, num, den in (("write_ratio", "write_recording_mb_s", "write_dd_mb_s"),
                            ("feed_ratio", "feed_replay_fps", "feed_sim_fps")):
        check(abs(j[ratio] - j[num] / j[den]) <= 1e-3 * j[ratio] + 1e-4, f"{ratio} {j[ratio]} != {num} / {den}")
    check(j["pacing_frames"] == pacing, f"pacing_frames {j['pacing_frames']}")
    check(0 <= j["pacing_p50_ms"] <= j["pacing_p99_ms"], f"pacing p50 {j['pacing_p50_ms']} p99 {j['pacing_p99_ms']}")
    table = {m.group(1).strip(): float(m.group(2)) for m in re.finditer(r"^(\S[^\n]*?)\s+(-?[\d.]+) (?:MB/s|frames/s)",
                                                                        r.stdout, re.M)}
    for row, key in (("write: recording (fdatasync)", "write_recording_mb_s"), ("feed: replay --max", "feed_replay_fps"),
                     ("feed: eigstream-sim --rate 0", "feed_sim_fps")):
        check(row in table and abs(table[row] - j[key]) <= 0.051 + 1e-3 * j[key],
              f"table {row} {table.get(row)} vs JSON {key} {j[key]}")
    m = re.search(r"^pacing: (\d+) frames at", r.stdout, re.M)
    check(m is not None and int(m.group(1)) == pacing, f"pacing row: {r.stdout!r}")


def case_fragments(tmp):
    """sim --fragments 4 -> record: whole frames, byte-exact with sim --fragments 1 (timestamps aside) and
    with decode_fragments of the fragments; replayed into the daemon, every frame is solved (numpy eigh)."""
    frames, fragments = 5, 4
    base = ["--n", str(N), "--cells", str(CELLS), "--frames", str(frames), "--rate", "0", "--pool", "2",
            "--seed", "9", "--quiet"]
    for variant in ([], ["--precision", "float", "--storage", "packed_upper", "--per-matrix-parts"]):
        whole = sim_capture(tmp, base + variant, frames)
        pieces = sim_capture(tmp, base + variant + ["--fragments", str(fragments)], frames * fragments)
        name = "frag" + "".join(v.strip("-")[:2] for v in variant)
        proc, endpoint = start_recorder(tmp, name, ["--frames", str(frames)])
        sim = subprocess.Popen([SIM, "--endpoint", endpoint, "--fragments", str(fragments)] + base + variant,
                               stdout=subprocess.PIPE, text=True)
        finish(sim)
        status, out = finish(proc)
        check(status == 0 and f"recorded {frames} frames" in out and
              "0 rejected, 0 fragmented frames given up" in out, f"{variant}: record: {status} {out}")
        stored, index = data_frames(tmp, name), meta_index(tmp, name)
        check(len(stored) == frames and len(index) == frames, f"{variant}: {len(stored)} frames stored")
        for i in range(min(frames, len(stored))):
            sent = b"".join(whole[i])
            check(stored[i][:16] == sent[:16] and stored[i][24:] == sent[24:],
                  f"{variant}: frame {i}: differs from the whole frame the sim sends (timestamp aside)")
            h, mats = ec.decode_fragments(pieces[i * fragments:(i + 1) * fragments])
            sh, smats = ec.decode_covariance([stored[i][:64], stored[i][64:]])
            h["timestamp_ns"] = sh["timestamp_ns"]  # another run of the sim than the one recorded
            check(sh == h and np.array_equal(smats, mats), f"{variant}: frame {i}: {sh} vs decode_fragments {h}")
            check(index[i]["parts"] == 1, f"{variant}: frame {i}: {index[i]['parts']} parts recorded, not 1")
        if variant:
            continue
        # The recording into the daemon: every frame comes out solved.
        daemon = subprocess.Popen([DAEMON, "-c", daemon_config(tmp, N, CELLS)], stderr=subprocess.PIPE, text=True)
        pull = CTX.socket(zmq.PULL)
        pull.connect(f"ipc://{tmp}/d-out")
        replay = subprocess.run([REPLAY, "--endpoint", f"ipc://{tmp}/d-in", "--max", "--keep-seq", "--quiet",
                                 os.path.join(tmp, name)], capture_output=True, text=True, timeout=60)
        got, deadline = [], time.monotonic() + 60
        while len(got) < frames and time.monotonic() < deadline:
            if pull.poll(200):
                got.append(ec.decode_eigenspace(pull.recv_multipart()))
        pull.close(linger=0)
        daemon.send_signal(signal.SIGTERM)
        _, daemon_out = finish(daemon)
        check(replay.returncode == 0 and len(got) == frames,
              f"replay into the daemon: exit {replay.returncode}, {len(got)} of {frames} frames solved: "
              f"{replay.stderr} {daemon_out[-2000:]}")
        for h, _, results in got:
            _, mats = ec.decode_covariance([stored[h["seq"]][:64], stored[h["seq"]][64:]])
            for b, r in enumerate(results):
                scale = N * np.finfo(float).eps * np.abs(mats[b]).sum(axis=0).max()
                ratio = np.abs(r.values - np.linalg.eigh(mats[b])[0]).max() / scale
                check(r.status == 0 and ratio <= 60, f"daemon frame seq {h['seq']} matrix {b}: ratio {ratio:.3g}")


class LoudRecorder:
    """eigstream-record NAME bound on an ipc endpoint, with its skip and give-up lines (no --quiet): a
    thread collects its stderr lines as they come."""

    def __init__(self, tmp, name, extra):
        self.endpoint = f"ipc://{tmp}/rec-in"
        self.proc = subprocess.Popen([RECORD, "--endpoint", self.endpoint, "--bind", os.path.join(tmp, name)]
                                     + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines, self.lock = [], threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def text(self):
        with self.lock:
            return "\n".join(self.lines)

    def wait_for(self, pattern, what, timeout=60):
        """Polls stderr (up to timeout s, never a timing assertion) for a line matching pattern."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.text(), re.M):
                return
            time.sleep(0.05)
        check(False, f"{what}: no line matching {pattern!r} in {timeout} s: {self.text()}")

    def finish(self, sig=None):
        """(exit status, stdout) after sig (if any); killed after 30 s."""
        if sig is not None:
            self.proc.send_signal(sig)
        try:  # stdout is one summary line: no pipe fills while it runs
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            check(False, "eigstream-record did not finish in 30 s")
        out = self.proc.stdout.read()
        self.proc.stdout.close()
        self.reader.join(timeout=10)
        self.proc.stderr.close()
        return self.proc.returncode, out


def flip_crc(parts):
    """The fragment with one payload bit flipped (still finite): its CRC no longer matches."""
    body = bytearray(parts[1])
    body[0] ^= 1
    return [parts[0], bytes(body)] + parts[2:]


def case_fragment_faults(tmp):
    """Hand-made fragments: a missing middle one, bad CRCs, strays, a field that differs, a whole frame in
    between, a timeout, an oversized frame and the end: exactly the good frames recorded, and exactly the
    skipped fragments and given-up frames the rules of docs/protocol.md count."""
    rng = np.random.default_rng(5)
    mats = {s: random_hermitian(rng, CELLS, N, np.complex128) for s in range(13)}
    ts = {s: 1_700_000_000_000_000_000 + s for s in mats}

    def frags(seq, fragments=4, **kw):
        return ec.encode_fragments(seq, ts[seq], mats[seq], fragments, **kw)

    def one(seq, first, matrices=1, timestamp=None):
        m = mats[seq][first:first + matrices]
        return ec.encode_fragment(seq, ts[seq] if timestamp is None else timestamp, m, first, CELLS)

    f0, f1 = frags(0), frags(1)
    f7, f8 = frags(7), frags(8)
    phase_a = ([f0[0], f0[1], f0[3]] +                          # matrix 2 missing: f0[3] skipped
               [f1[0], flip_crc(f1[1]), f1[2], f1[3]] +          # gives seq 0 up; CRC: skipped, seq 1 given up; 2 skipped
               [ec.encode_fragment(50, ts[1], mats[1][2:4], 2, CELLS)] +  # a stray: skipped
               frags(2) + frags(3, 2, per_matrix_parts=True) + frags(4, crc=False) +  # recorded
               frags(5)[:2] + [ec.encode_covariance(6, ts[6], mats[6])] +  # the whole seq 6 gives seq 5 up
               [flip_crc(f7[0])] + f7[1:] +                      # bad first: skipped, seq 7 given up; 3 skipped
               [f8[0], one(8, 1, timestamp=ts[8] + 1)] + f8[1:] +  # a field differs: skipped, seq 8 goes on
               frags(9))
    good = [2, 3, 4, 6, 8, 9]
    rec = LoudRecorder(tmp, "faults", ["--frames", "7", "--fragment-timeout-ms", "3000"])
    push = CTX.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 10000)
    push.connect(rec.endpoint)
    for m in phase_a:
        push.send_multipart(m)
    # A frame whose next fragment comes too late: given up once the bound passes, its rest skipped.
    f10 = frags(10)
    for m in f10[:2]:
        push.send_multipart(m)
    rec.wait_for(r"gave up a fragmented frame: seq 10 with 2 of its 4 matrices: no next fragment", "timeout")
    for m in f10[2:] + frags(11):
        push.send_multipart(m)
    good.append(11)
    status, out = rec.finish()
    push.close()
    err = rec.text()
    check(status == 0 and "recorded 7 frames" in out and "12 rejected, 5 fragmented frames given up" in out,
          f"faults: exit {status}: {out} {err}")
    skipped = re.findall(r"skipped a message: (\w+): fragment of seq (\d+) at matrix (\d+)", err)
    expect_skipped = [("incomplete", "0", "3"), ("crc_mismatch", "1", "1"), ("incomplete", "1", "2"),
                      ("incomplete", "1", "3"), ("incomplete", "50", "2"), ("crc_mismatch", "7", "0"),
                      ("incomplete", "7", "1"), ("incomplete", "7", "2"), ("incomplete", "7", "3"),
                      ("incomplete", "8", "1"), ("incomplete", "10", "2"), ("incomplete", "10", "3")]
    check(skipped == expect_skipped, f"skipped fragments {skipped}")
    gave_up = re.findall(r"gave up a fragmented frame: seq (\d+) with (\d+) of its 4 matrices: (.*)", err)
    expect_gave_up = [("0", "2", "a new frame began"),
                      ("1", "1", "its fragment at matrix 1 was rejected (crc_mismatch)"),
                      ("5", "2", "a whole frame came in between"),
                      ("7", "0", "its fragment at matrix 0 was rejected (crc_mismatch)"),
                      ("10", "2", "no next fragment within --fragment-timeout-ms")]
    check(gave_up == expect_gave_up, f"frames given up {gave_up}")
    stored = data_frames(tmp, "faults")
    check(len(stored) == len(good), f"{len(stored)} frames recorded, not {len(good)}")
    for seq, frame in zip(good, stored):
        h, m = ec.decode_covariance([frame[:64], frame[64:]])
        check(h["seq"] == seq and h["timestamp_ns"] == ts[seq] and np.array_equal(m, mats[seq]),
              f"recorded frame seq {h['seq']}: not seq {seq} as sent")
        check(h["crc"] == (seq != 4) and not h["fragment"], f"recorded frame seq {seq}: flags {h['flags']}")

    # The end: a frame still incomplete is given up; a fragment of a frame over --max-frame-bytes is refused.
    big = random_hermitian(rng, 2 * CELLS, N, np.complex128)
    rec = LoudRecorder(tmp, "ending", ["--fragment-timeout-ms", "3600000",
                                              "--max-frame-bytes", str(CELLS * N * N * 16)])
    push = CTX.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 10000)
    push.connect(rec.endpoint)
    for m in frags(0) + ec.encode_fragments(1, ts[1], big, 8)[:1] + frags(2)[:2] + [one(12, 3)]:
        push.send_multipart(m)
    # The stray came after seq 2's fragments: once it is counted, they have been taken.
    rec.wait_for(r"skipped a message: incomplete: fragment of seq 12", "the stray")
    status, out = rec.finish(signal.SIGTERM)
    push.close()
    err = rec.text()
    check(status == 0 and "recorded 1 frames" in out and "2 rejected, 2 fragmented frames given up" in out,
          f"ending: exit {status}: {out} {err}")
    check(re.search(r"skipped a message: oversized: fragment of seq 1 at matrix 0: its frame of 8 matrices", err)
          and "gave up a fragmented frame: seq 1 with 0 of its 8 matrices: its fragment at matrix 0 was rejected "
              "(oversized)" in err
          and "gave up a fragmented frame: seq 2 with 2 of its 4 matrices: the recorder stopped" in err,
          f"ending: {err}")
    stored = data_frames(tmp, "ending")
    check(len(stored) == 1 and ec.decode_header(stored[0][:64])["seq"] == 0, "ending: recorded frames")


def case_client_fragments(tmp):
    """eigstream_client.py send --fragments 3 -> eigstream-record: the client's frames, whole."""
    proc, endpoint = start_recorder(tmp, "client", ["--frames", "3"])
    client = os.path.join(os.path.dirname(ec.__file__), "eigstream_client.py")
    r = subprocess.run([sys.executable, client, "send", "--endpoint", endpoint, "--n", str(N), "--count", str(CELLS),
                        "--frames", "3", "--rate", "0", "--fragments", "3", "--seed", "4"],
                       capture_output=True, text=True, timeout=60)
    status, out = finish(proc)
    check(r.returncode == 0 and status == 0 and "recorded 3 frames" in out and "0 rejected" in out,
          f"client send --fragments: {r.returncode} {r.stdout} {r.stderr}; record {status} {out}")
    rng = np.random.default_rng(4)
    pool = [ec._random_hermitian(rng, CELLS, N, np.complex128) for _ in range(2)]
    for seq, frame in enumerate(data_frames(tmp, "client")):
        h, m = ec.decode_covariance([frame[:64], frame[64:]])
        check(h["seq"] == seq and np.array_equal(m, pool[seq % 2]), f"client frame {seq}")
    bad = subprocess.run([sys.executable, client, "send", "--count", "4", "--fragments", "5"], capture_output=True,
                         text=True, timeout=60)
    check(bad.returncode == 2 and "--fragments must be 1..4" in bad.stderr, f"--fragments 5 of 4: {bad.stderr}")


def case_lossless(tmp):
    """Three --max replays of 20 frames (n 64, 64 matrices) into a daemon with the default frame settings
    (overflow_policy drop_oldest, queue_depth 4; lapack on one thread, so it falls behind): all 60 come out
    solved (the issue's in = 60, out = 44 before the LOSSLESS flag), and the daemon's accounting says
    dropped = 0. The oracle: the frames counted on the daemon's output, and its own accounting line."""
    frames, n, cells = 20, 64, 64
    proc, endpoint = start_recorder(tmp, "big", ["--frames", str(frames)])
    sim = subprocess.Popen([SIM, "--endpoint", endpoint, "--n", str(n), "--cells", str(cells), "--frames",
                            str(frames), "--rate", "0", "--quiet"], stdout=subprocess.PIPE, text=True)
    finish(sim)
    status, out = finish(proc)
    check(status == 0, f"record: {status} {out}")
    cfg = os.path.join(tmp, "default.cfg")
    with open(cfg, "w") as f:  # no frame = { ... }: the defaults
        f.write(f'''
input = {{ endpoint = "ipc://{tmp}/d-in"; }};
output = {{ endpoint = "ipc://{tmp}/d-out"; pattern = "push"; mode = "values"; }};
solver = {{ n = {n}; matrices = {cells}; backend = "lapack"; cpu_threads = 1; }};
metrics = {{ endpoint = ""; http = ""; }};
''')
    daemon = subprocess.Popen([DAEMON, "-c", cfg], stderr=subprocess.PIPE, text=True)
    pull = CTX.socket(zmq.PULL)
    pull.connect(f"ipc://{tmp}/d-out")
    outs = []
    for _ in range(3):
        r = subprocess.run([REPLAY, "--endpoint", f"ipc://{tmp}/d-in", "--max", "--quiet",
                            os.path.join(tmp, "big")], capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and f"{frames} frames written to the connection, 0 still queued" in r.stdout,
              f"replay: exit {r.returncode}: {r.stdout} {r.stderr}")
        outs.append(r.stdout)
    got, deadline = [], time.monotonic() + 60
    while len(got) < 3 * frames and time.monotonic() < deadline:
        if pull.poll(200):
            got.append(ec.decode_header(pull.recv_multipart()[0])["seq"])
    pull.close(linger=0)
    daemon.send_signal(signal.SIGTERM)
    _, log = finish(daemon, 60)
    check(sorted(got) == sorted(list(range(frames)) * 3),
          f"{len(got)} of {3 * frames} frames solved; seqs {sorted(got)}")
    accounting = [line for line in log.splitlines() if "accounting:" in line]
    check(accounting and f"in={3 * frames} out={3 * frames}" in accounting[-1] and "dropped=0" in accounting[-1],
          f"daemon accounting: {accounting[-1:]}")


def case_unreachable(tmp):
    """Replay and record against an endpoint nobody serves give up after --connect-timeout-ms with a message
    naming it and exit 1 (not the hang of the issue); a replay names what it did not send."""
    msgs, _ = covariance_messages(3)
    status, out = record_messages(tmp, "small", msgs)
    check(status == 0, f"record: {out}")
    nobody = f"ipc://{tmp}/nobody"
    for tool, args, says in ((REPLAY, [os.path.join(tmp, "small")], "no receiver at " + nobody),
                             (RECORD, [os.path.join(tmp, "none")], "nothing to connect to at " + nobody),
                             (REPLAY, ["--endpoint", "tcp://127.0.0.1:1", os.path.join(tmp, "small")],
                              "no receiver at tcp://127.0.0.1:1")):
        t = time.monotonic()
        r = subprocess.run([tool, "--endpoint", nobody, "--connect-timeout-ms", "500"] + args,
                           capture_output=True, text=True, timeout=60)
        took = time.monotonic() - t
        check(r.returncode == 1 and says in r.stderr, f"{os.path.basename(tool)} {args}: exit {r.returncode}: "
              f"{r.stdout} {r.stderr}")
        check(took < 20, f"{os.path.basename(tool)}: took {took:.1f} s to give up after 0.5 s")


def case_linger(tmp):
    """A receiver that stops reading: the replay blocks (backpressure), and SIGINT ends it within --linger-ms
    (plus slack for process start and exit), its summary saying how many frames were written and how many
    were still queued (dropped): the two add up to those sent, and the dropped ones are not 0."""
    msgs = [ec.encode_covariance(s, time.time_ns(), np.zeros((16, 64, 64), np.complex128), "full", True, False)
            for s in range(20)]
    status, out = record_messages(tmp, "stuck", msgs)
    check(status == 0, f"record: {out}")
    pull = CTX.socket(zmq.PULL)
    pull.setsockopt(zmq.RCVHWM, 1)
    pull.setsockopt(zmq.RCVBUF, 4096)
    pull.bind(f"ipc://{tmp}/stuck")
    proc = subprocess.Popen([REPLAY, "--endpoint", f"ipc://{tmp}/stuck", "--max", "--linger-ms", "1000",
                             os.path.join(tmp, "stuck")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # 20 frames of 1 MB cannot pass a receiver that reads nothing: the replay
    # blocks, and says so once it has waited 10 s (its words, not a sleep of
    # ours, so that a slow start cannot leave nothing queued yet).
    said = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if not select.select([proc.stderr], [], [], 1.0)[0]:
            continue
        said.append(proc.stderr.readline())
        if "has taken nothing for 10 s" in said[-1]:
            break
    check(proc.poll() is None and said and "has taken nothing for 10 s" in said[-1],
          f"the replay did not block on a receiver that reads nothing: {''.join(said)!r}")
    t = time.monotonic()
    proc.send_signal(signal.SIGINT)
    status, out = finish(proc, 30)
    took = time.monotonic() - t
    pull.close(linger=0)
    m = re.search(r"sent (\d+) frames.*\n.*: (\d+) frames written to the connection, (\d+) still queued", out)
    check(m is not None, f"summary: {out}")
    if m:
        sent, written, queued = map(int, m.groups())
        check(sent == written + queued and queued > 0 and sent < 20, f"sent {sent} written {written} queued {queued}")
    check(status == 0 and took < 1.0 + 4.0, f"SIGINT: exit {status} after {took:.2f} s (--linger-ms 1000): {out}")


def case_slow_reader(tmp):
    """A receiver at ZMQ_RCVHWM 1 that reads a frame every 50 ms gets every frame of a --max replay, and the
    replay exits 0 only then: the frames still in the kernel's socket buffers when ZeroMQ had released the
    last are read before the replay closes (libzmq drops them at the receiver when the sender closes an IPC
    connection first; cli_peer_drain). Without that wait the receiver got 37 of 40 (the sim's case)."""
    msgs, _ = covariance_messages(40)
    status, out = record_messages(tmp, "slow", msgs)
    check(status == 0, f"record: {out}")
    pull = CTX.socket(zmq.PULL)
    pull.setsockopt(zmq.RCVHWM, 1)
    pull.bind(f"ipc://{tmp}/slow")
    proc = subprocess.Popen([REPLAY, "--endpoint", f"ipc://{tmp}/slow", "--max", "--linger-ms", "120000",
                             "--quiet", os.path.join(tmp, "slow")], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    # Reads until all 40 came, or nothing came for 10 s after the replay ended (a bound on the failure)
    got, quiet_since = [], None
    while len(got) < 40 and (quiet_since is None or time.monotonic() - quiet_since < 10):
        if pull.poll(200):
            got.append(ec.decode_header(pull.recv_multipart()[0])["seq"])
            time.sleep(0.05)
            quiet_since = None
        elif quiet_since is None and proc.poll() is not None:
            quiet_since = time.monotonic()
    status, out = finish(proc, 60)
    pull.close(linger=0)
    check(got == list(range(40)), f"the slow reader got seqs {got}, want 0..39")
    check(status == 0 and "40 frames written to the connection, 0 still queued" in out, f"replay: exit {status}: {out}")


def steering(n, degrees):
    """A half-wavelength uniform linear array's response to a plane wave from `degrees` off broadside."""
    return np.exp(1j * np.pi * np.arange(n) * np.sin(np.radians(degrees)))


def case_read_python(tmp):
    """eigstream.read_recording against what was sent, for every storage and precision; a raw read by the
    SigMF fields alone (core:sample_start, core:datatype: the spec's reader), and of the whole data file
    as samples (what sigmf-python's read_samples and GNU Radio's SigMF source read), in the orientation
    docs/recording.md states (column-major: sample i + j n is A(i, j)); and the physics: a
    source at +20 degrees, recorded and read back, beamforms to +20 degrees, not -20 (conj(R) would)."""
    import eigstream  # tools/python on sys.path: the package's pure-Python reader
    for dtype, storage in ((np.complex128, "full"), (np.complex64, "full"), (np.complex128, "packed_lower"),
                           (np.complex64, "packed_upper")):
        name = f"py-{storage}-{np.dtype(dtype).itemsize}"
        msgs, mats = covariance_messages(3, dtype, storage, storage == "full")
        status, out = record_messages(tmp, name, msgs)
        check(status == 0, f"{name}: record: {out}")
        rec = eigstream.read_recording(os.path.join(tmp, name))
        check(rec.kind == "covariance" and rec.matrices.dtype == dtype and rec.matrices.shape == (3, CELLS, N, N),
              f"{name}: {rec}")
        check(np.array_equal(rec.matrices, np.array(mats)), f"{name}: read_recording differs from the matrices sent")
        check(list(rec.seq) == [0, 1, 2], f"{name}: seq {rec.seq}")
        if storage == "full":  # the data file read whole: every matrix sent, column-major, nothing else
            whole = np.fromfile(os.path.join(tmp, name + ".sigmf-data"), np.dtype(dtype).newbyteorder("<"))
            check(np.array_equal(whole, np.array(mats).transpose(0, 1, 3, 2).reshape(-1)),
                  f"{name}: the data file read whole is not the matrices sent, column-major")
    # A recording of layout frames (before 2026-11-27), built from the last one by docs/recording.md:
    # whole frames in the data file, no heads in the journal, captures with core:header_bytes.
    frames = data_frames(tmp, name)
    meta = json.load(open(os.path.join(tmp, name + ".sigmf-meta")))
    g, offset = meta["global"], 0
    del g["eigstream:layout"]
    for e, c, frame in zip(g["eigstream:index"], meta["captures"], frames):
        e["offset"], offset = offset, offset + len(frame)
        c["core:header_bytes"] = 64
    old = os.path.join(tmp, "old-layout")
    json.dump(meta, open(old + ".sigmf-meta", "w"))
    open(old + ".sigmf-data", "wb").write(b"".join(frames))
    rec = eigstream.read_recording(old)
    check(np.array_equal(rec.matrices, np.array(mats)), "read_recording of layout frames differs from the matrices")
    # A steering-vector covariance R = a a^H + I, source at +20 degrees; full storage, one matrix per frame.
    n = 16
    r = np.outer(steering(n, 20), steering(n, 20).conj()) + np.eye(n)
    msgs = [ec.encode_covariance(0, time.time_ns(), r[None].astype(np.complex128), "full", True, False)]
    status, out = record_messages(tmp, "doa", msgs)
    check(status == 0, f"doa: record: {out}")
    meta = json.load(open(os.path.join(tmp, "doa.sigmf-meta")))
    blob = open(os.path.join(tmp, "doa.sigmf-data"), "rb").read()
    capture = meta["captures"][0]
    check(meta["global"]["core:datatype"] == "cf64_le", f"doa: datatype {meta['global']['core:datatype']}")
    check("core:header_bytes" not in capture, f"doa: a capture has header bytes: {capture}")
    start = 16 * capture["core:sample_start"]
    samples = np.frombuffer(blob[start:start + 16 * n * n], "<c16")
    check(np.array_equal(samples.reshape((n, n), order="F"), r), "doa: the samples are not A column-major")
    angles = np.arange(-90, 91)
    for how, m in (("read_recording", eigstream.read_recording(os.path.join(tmp, "doa")).matrices[0, 0]),
                   ("raw, column-major", samples.reshape((n, n), order="F"))):
        power = [np.real(steering(n, t).conj() @ m @ steering(n, t)) for t in angles]
        check(angles[int(np.argmax(power))] == 20, f"doa {how}: the beam peaks at {angles[int(np.argmax(power))]} "
              "degrees, not +20")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
with tempfile.TemporaryDirectory(prefix="esrec") as tmpdir:
    CASES[CASE](tmpdir)
CTX.destroy(linger=0)
report(f"test_record_replay {CASE}")
