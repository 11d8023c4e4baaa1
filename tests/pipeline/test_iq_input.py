#!/usr/bin/python3
"""The daemon with form.input = iq, as a subprocess (label integration).

  test_iq_input.py PATH_TO_EIGSTREAM PATH_TO_EIGSTREAM_RECORD

1. Valid IQ cubes (eigstream_client.encode_iq: ci16_le in pcg, one part and
   one part per pulse) are formed and solved: every eigenspace's eigenvalues
   agree with an independent NumPy oracle (numpy.hanning window,
   numpy.fft.fft over the pulses, per Doppler bin and range segment the
   sample covariance over the training gates, guard gates excluded around
   the cell under test, numpy.linalg.eigvalsh) to 1e-9 of the largest, and
   the eigenspace header carries the snapshot count K.
2. Bad messages are rejected with their reason and counted (the metrics
   JSON's rejected map), in docs/protocol.md's order: a covariance frame
   (bad_kind), another gate count or layout (config_mismatch), a negative
   scale (bad_field), the wrong part count (parts), a short slice
   (size_mismatch), a corrupted CRC (crc_mismatch); the stream goes on: a
   valid cube after them is still published.
3. Recorded cubes: eigstream-record records three cubes (one part, one part
   per pulse); the recording's data file is exactly their payloads (SigMF
   samples, nothing else) and its meta names them (ci16_le, gates, layout);
   eigstream.read_recording gives the cubes back (channel, pulse, gate);
   the daemon with input.endpoint = "file:NAME" publishes every cube's
   eigenvalues, against the same NumPy oracle; a recording of other cubes
   (another gate count) is refused at start, naming both.
4. Other tools' IQ (eigstream-record --import-iq): a SigMF recording written
   here by the SigMF spec alone (cf32_le, core:num_channels 4 interleaved,
   core:sample_rate, core:datetime) and a raw cf64_le file (as GNU Radio's
   File Sink writes a vector stream) become recordings of pgc cubes: the
   cubes read back equal the samples written, the leftover samples are
   named, the timestamps follow the sample rate, and the daemon's file input
   (form.iq_format cf32_le, form.iq_layout pgc) publishes eigenvalues equal
   to the NumPy oracle's.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import zmq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import eigstream  # noqa: E402
import eigstream_client as ec  # noqa: E402
from eigstream_check import check, report  # noqa: E402

DAEMON, RECORD = sys.argv[1], sys.argv[2]
C, P, G = 4, 8, 16            # channels, pulses, gates
SEGMENTS, GUARDS = 2, 1       # segments of 8 gates; centre gate 4 and 1 either side excluded
BIN_FIRST, BINS = 6, 8        # bins 6, 7, 0, 1, ..., 5 of the 8-point FFT (wraps)
MATRICES = BINS * SEGMENTS
K = G // SEGMENTS - (2 * GUARDS + 1)


def config(tmp, endpoint=None, iq_format="ci16_le", iq_layout="pcg"):
    return f'''
input = {{ endpoint = "{endpoint or f'ipc://{tmp}/in'}"; }};
output = {{ endpoint = "ipc://{tmp}/out"; pattern = "push"; mode = "full"; }};
metrics = {{ endpoint = "ipc://{tmp}/metrics"; interval_ms = 100; http = ""; }};
solver = {{ backend = "cpu"; n = {C}; matrices = {MATRICES}; cpu_threads = 1; }};
form = {{ input = "iq"; iq_format = "{iq_format}"; iq_layout = "{iq_layout}"; pulses = {P}; range_gates = {G};
         window = "hann"; doppler_first = {BIN_FIRST}; doppler_bins = {BINS}; range_segments = {SEGMENTS};
         guard_gates = {GUARDS}; fft_threads = 1; }};
'''


def oracle_values(x):
    """Eigenvalues (MATRICES, C), ascending, of the matrices form_iq.h defines, in NumPy."""
    w = np.hanning(P)
    spectrum = np.fft.fft(x * w[None, :, None], n=P, axis=1)  # (C, F, G)
    values = []
    length = G // SEGMENTS
    for i in range(BINS):
        b = (BIN_FIRST + i) % P
        for s in range(SEGMENTS):
            centre = s * length + length // 2
            gates = [g for g in range(s * length, (s + 1) * length) if abs(g - centre) > GUARDS]
            assert len(gates) == K
            xs = spectrum[:, b, gates]
            values.append(np.linalg.eigvalsh(xs @ xs.conj().T / K))
    return np.array(values)


def cube(rng):
    return rng.integers(-2000, 2000, size=(C, P, G, 2), dtype=np.int16)


def metrics_rejected(sub, want_total, timeout=20.0):
    """The rejected map of the first metrics document whose total is want_total."""
    deadline = time.time() + timeout
    doc = None
    while time.time() < deadline:
        if sub.poll(200):
            doc = json.loads(sub.recv())
            if doc["frames"]["rejected"] == want_total:
                return doc["rejected"]
    return doc["rejected"] if doc else {}


def run(tmp):
    cfg = os.path.join(tmp, "iq.cfg")
    with open(cfg, "w") as f:
        f.write(config(tmp))
    log = open(os.path.join(tmp, "daemon.log"), "w")
    daemon = subprocess.Popen([DAEMON, "-c", cfg], stderr=log)
    ctx = zmq.Context()
    push, pull, sub = ctx.socket(zmq.PUSH), ctx.socket(zmq.PULL), ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    for s, e in ((push, "in"), (pull, "out"), (sub, "metrics")):
        s.connect(f"ipc://{tmp}/{e}")
    rng = np.random.default_rng(11)
    scale = 2.0 ** -10

    # 1. valid cubes, one part and one part per pulse
    raws = [cube(rng) for _ in range(3)]
    for seq, raw in enumerate(raws):
        push.send_multipart(ec.encode_iq(seq, time.time_ns(), raw, "pcg", scale=scale, per_slice_parts=seq % 2 == 1))
    for seq, raw in enumerate(raws):
        if not pull.poll(30000):
            check(False, f"no eigenspace for cube {seq}")
            break
        h, _, results = ec.decode_eigenspace(pull.recv_multipart())
        want = oracle_values(ec.iq_values({"scale": scale}, raw))
        got = np.array([r.values for r in results])
        err = np.max(np.abs(got - want)) / np.max(np.abs(want))
        check(h["seq"] == seq and h["count"] == MATRICES and h["n"] == C, f"cube {seq}: header {h}")
        check(h["snapshots"] == K, f"cube {seq}: eigenspace snapshots {h['snapshots']}, want K = {K}")
        check(err < 1e-9, f"cube {seq}: eigenvalues differ from the NumPy oracle by {err:.3g} of the largest")
        check(all(r.status == 0 for r in results), f"cube {seq}: statuses {[r.status for r in results]}")

    # 2. rejects, each counted with its reason
    good = ec.encode_iq(10, 0, raws[0], "pcg", scale=scale, per_slice_parts=True)
    h = good[0]
    other_gates = ec.encode_iq(11, 0, np.zeros((C, P, G + 2, 2), np.int16), "pcg", scale=scale)
    other_layout = ec.encode_iq(12, 0, raws[0], "cpg", scale=scale)
    covariance = ec.encode_covariance(13, 0, np.eye(C, dtype=np.complex128)[None].repeat(MATRICES, 0))
    flipped = bytearray(good[3])
    flipped[0] ^= 1
    bad = {
        "bad_kind": [covariance],
        "config_mismatch": [other_gates, other_layout],
        "bad_field": [[h[:56] + np.float32(-scale).tobytes() + h[60:]] + good[1:]],
        "parts": [[h, good[1] + good[2]] + good[3:]],
        "size_mismatch": [[h, good[1][:-4], good[2] + good[1][-4:]] + good[3:]],
        "crc_mismatch": [good[:3] + [bytes(flipped)] + good[4:]],
    }
    total = 0
    for messages in bad.values():
        for m in messages:
            push.send_multipart(m)
            total += 1
    push.send_multipart(ec.encode_iq(20, time.time_ns(), raws[1], "pcg", scale=scale))
    check(pull.poll(30000), "no eigenspace for the valid cube after the rejects")
    if pull.poll(0):
        hh, _, _ = ec.decode_eigenspace(pull.recv_multipart())
        check(hh["seq"] == 20, f"after the rejects: seq {hh['seq']}")
    rejected = metrics_rejected(sub, total)
    for reason, messages in bad.items():
        check(rejected.get(reason) == len(messages), f"rejected {reason}: {rejected.get(reason)}, want {len(messages)}")
    ctx.destroy(linger=0)
    daemon.terminate()
    rc = daemon.wait(timeout=60)
    log.close()
    check(rc == 0, f"daemon exit {rc}")
    text = open(os.path.join(tmp, "daemon.log")).read()
    check("config_mismatch: cube of 4 channels x 8 pulses x 18 gates" in text, "config_mismatch log line names the cube")
    if rc != 0 or os.environ.get("VERBOSE"):
        print(text, file=sys.stderr)


def record_cubes(tmp, name, messages):
    """Records messages with eigstream-record (a PUSH of ours into its bound PULL); the recording's path."""
    path = os.path.join(tmp, name)
    rec = subprocess.Popen([RECORD, "--endpoint", f"ipc://{tmp}/rec-{name}", "--bind", "--kind", "iq", "--frames",
                            str(len(messages)), "--quiet", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.connect(f"ipc://{tmp}/rec-{name}")
    for m in messages:
        push.send_multipart(m)
    out, _ = rec.communicate(timeout=60)
    ctx.destroy(linger=0)
    check(rec.returncode == 0, f"eigstream-record {name}: exit {rec.returncode}: {out.decode()[-800:]}")
    return path


def run_recorded(tmp, rng, scale):
    raws = [cube(rng) for _ in range(3)]
    messages = [ec.encode_iq(seq, time.time_ns(), raw, "pcg", scale=scale, per_slice_parts=seq == 1)
                for seq, raw in enumerate(raws)]
    path = record_cubes(tmp, "cubes", messages)
    data = open(path + ".sigmf-data", "rb").read()
    check(data == b"".join(b"".join(m[1:]) for m in messages), "the data file is not exactly the cubes' samples")
    rec = eigstream.read_recording(path)  # the package's pure-Python reader
    check(rec.kind == "iq" and rec.cubes.shape == (3, C, P, G) and
          all(np.array_equal(rec.cubes[k], ec.iq_values({"scale": scale}, raw)) for k, raw in enumerate(raws)),
          f"read_recording of the cubes: {rec}")
    g = json.load(open(path + ".sigmf-meta"))["global"]
    check((g["core:datatype"], g["eigstream:kind"], g["eigstream:n"], g["eigstream:count"], g["eigstream:gates"],
           g["eigstream:iq_layout"]) == ("ci16_le", "iq", C, P, G, "pcg"), f"meta: {g}")
    solve_file(tmp, path, [ec.iq_values({"scale": scale}, raw) for raw in raws], "ci16_le", "pcg", "file input", 1e-9)
    cfg = os.path.join(tmp, "other.cfg")
    other = record_cubes(tmp, "other", [ec.encode_iq(0, 0, np.zeros((C, P, G + 2, 2), np.int16), "pcg", scale=scale)])
    with open(cfg, "w") as f:
        f.write(config(tmp, "file:" + other))
    r = subprocess.run([DAEMON, "-c", cfg], capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "gates=18" in r.stderr and "form.range_gates=16" in r.stderr,
          f"a recording of other cubes: exit {r.returncode}: {r.stderr[-600:]}")


def solve_file(tmp, path, cubes, iq_format, iq_layout, case, tolerance):
    """The daemon's file input on recording path: each cube's eigenvalues against the oracle's, to
    tolerance of the largest."""
    cfg = os.path.join(tmp, case + ".cfg")
    with open(cfg, "w") as f:
        f.write(config(tmp, "file:" + path, iq_format, iq_layout))
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.connect(f"ipc://{tmp}/out")
    daemon = subprocess.Popen([DAEMON, "-c", cfg], stderr=subprocess.PIPE)
    for seq, x in enumerate(cubes):
        if not pull.poll(30000):
            check(False, f"{case}: no eigenspace for cube {seq}")
            break
        h, _, results = ec.decode_eigenspace(pull.recv_multipart())
        want = oracle_values(x)
        err = np.max(np.abs(np.array([r.values for r in results]) - want)) / np.max(np.abs(want))
        check(h["seq"] == seq and err < tolerance, f"{case}, cube {seq}: seq {h['seq']}, eigenvalues off by {err:.3g}")
    _, err = daemon.communicate(timeout=60)
    check(daemon.returncode == 0, f"{case}: daemon exit {daemon.returncode}: {err.decode()[-800:]}")
    ctx.destroy(linger=0)


def run_import(tmp, rng):
    import eigstream
    cubes = (rng.standard_normal((3, C, P, G)) + 1j * rng.standard_normal((3, C, P, G))).astype(np.complex64)
    # time order, channels interleaved (SigMF core:num_channels): sample t = p G + g of cube k, channel c
    stream = cubes.transpose(0, 2, 3, 1).reshape(-1, C)
    tail = np.ones((5, C), np.complex64)  # 5 x 4 = 20 samples: not a whole cube
    src = os.path.join(tmp, "other-tool")
    np.concatenate([stream, tail]).astype("<c8").tofile(src + ".sigmf-data")
    rate, start = 2.5e6, "2026-11-23T15:04:05.000000001Z"
    json.dump({"global": {"core:datatype": "cf32_le", "core:version": "1.2.0", "core:num_channels": C,
                          "core:sample_rate": rate},
               "captures": [{"core:sample_start": 0, "core:datetime": start}], "annotations": []},
              open(src + ".sigmf-meta", "w"))
    name = os.path.join(tmp, "imported")
    r = subprocess.run([RECORD, "--import-iq", src, "--pulses", str(P), "--gates", str(G), name],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "imported 3 cubes of 4 channels x 8 pulses x 16 gates (cf32_le, layout pgc)" in
          r.stdout and "20 samples after the last whole cube" in r.stdout, f"import: {r.returncode} {r.stdout} {r.stderr}")
    rec = eigstream.read_recording(name)
    check(rec.cubes.shape == (3, C, P, G) and np.array_equal(rec.cubes, cubes.astype(np.complex128)),
          "imported cubes differ from the samples written")
    first_ns = 1795446245000000001  # 2026-11-23T15:04:05.000000001Z (calendar.timegm)
    step = P * G / rate * 1e9
    check([int(t) for t in rec.timestamp_ns] == [first_ns + int(k * step) for k in range(3)],
          f"timestamps {rec.timestamp_ns}: want the first capture's time plus P G sample periods a cube")
    solve_file(tmp, name, [c.astype(np.complex128) for c in cubes], "cf32_le", "pgc", "imported SigMF", 1e-5)
    # a raw cf64_le file (no meta), as GNU Radio's File Sink writes a stream of vectors of C
    raw = os.path.join(tmp, "gnuradio.c128")
    stream.astype("<c16").tofile(raw)
    name = os.path.join(tmp, "imported-raw")
    r = subprocess.run([RECORD, "--import-iq", raw, "--iq-format", "cf64_le", "--channels", str(C),
                        "--pulses", str(P), "--gates", str(G), name], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "narrowed from cf64_le" in r.stdout, f"raw import: {r.returncode} {r.stdout} {r.stderr}")
    check(np.array_equal(eigstream.read_recording(name).cubes, cubes.astype(np.complex128)),
          "raw cf64_le import differs from the samples written")
    r = subprocess.run([RECORD, "--import-iq", raw, "--pulses", str(P), "--gates", str(G), name + "-x"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "--iq-format" in r.stderr, f"raw import without --iq-format: {r.returncode} {r.stderr}")


with tempfile.TemporaryDirectory() as tmp:
    run(tmp)
with tempfile.TemporaryDirectory() as tmp:
    run_import(tmp, np.random.default_rng(13))
with tempfile.TemporaryDirectory() as tmp:
    run_recorded(tmp, np.random.default_rng(12), 2.0 ** -10)
report("test_iq_input")
