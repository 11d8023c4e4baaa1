#!/usr/bin/python3
"""Integration test of eigstream-sim and eigstream-sink without the daemon.

A NumPy stand-in for the daemon receives the simulator's covariance frames,
solves them with numpy.linalg.eigh and publishes eigenspace frames to the
sink. Oracles: the scene's analytic structure (Hermitian, d = sources +
jammers eigenvalues far above the unit noise, signal subspace = span of the
ULA steering vectors), checked here with NumPy; then the sink must PASS
those frames and FAIL on a sequence gap, a wrong scene, a bad status and a
corrupted CRC.

usage: test_sim_sink.py EIGSTREAM_SIM EIGSTREAM_SINK TOOLS_PYTHON_DIR
Exit 77 (skip) without NumPy or pyzmq.
"""
import json
import os
import sys
import tempfile

SIM, SINK = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from eigstream_check import check, report, require  # noqa: E402

np, zmq = require("numpy", "zmq")
import eigstream_client as ec  # noqa: E402
from sim_sink_util import receive_from_sim, send_to_sink  # noqa: E402

N, CELLS, K = 16, 8, 256
SOURCES, JAMMERS = "-20:20,5:15,30:10", "45:30"
ANGLES = [-20.0, 5.0, 30.0, 45.0]
D = len(ANGLES)


def steering(n, angles_deg):
    u = np.sin(np.radians(angles_deg))
    return np.exp(1j * np.pi * np.outer(np.arange(n), u))


def max_principal_angle_deg(a, b):
    qa, _ = np.linalg.qr(a)
    qb, _ = np.linalg.qr(b)
    s = np.linalg.svd(qa.conj().T @ qb, compute_uv=False)
    return np.degrees(np.arccos(np.clip(s.min(), -1.0, 1.0)))


def receive_sim_frames(tmp, frames, extra):
    """Runs eigstream-sim into a PULL socket; returns the received parts lists."""
    return receive_from_sim(SIM, f"ipc://{tmp}/cov", frames,
                            ["--n", str(N), "--cells", str(CELLS), "--snapshots", str(K), "--sources", SOURCES,
                             "--jammers", JAMMERS, "--seed", "5"] + extra)


def check_sim_frames(tmp):
    a_true = steering(N, ANGLES)
    for extra in ([], ["--precision", "float", "--storage", "packed_upper", "--per-matrix-parts"],
                  ["--storage", "packed_lower", "--crc", "off"]):
        frames = receive_sim_frames(tmp, 3, extra)
        case = f"sim {' '.join(extra) or 'defaults'}"
        for i, parts in enumerate(frames):
            h, r = ec.decode_covariance(parts)
            check(h["seq"] == i and h["n"] == N and h["count"] == CELLS and h["snapshots"] == K,
                  f"{case}: header {h}")
            check(len(parts) == (1 + CELLS if "--per-matrix-parts" in extra else 2), f"{case}: parts")
            check(h["crc"] == ("off" not in extra), f"{case}: crc flag")
            check(np.array_equal(r, r.conj().transpose(0, 2, 1)), f"{case}: not Hermitian")
            for cell in range(CELLS):
                w, v = np.linalg.eigh(r[cell].astype(np.complex128))
                # Emitters of 10..30 dB per channel on 16 channels: eigenvalues
                # >= 16 * 10 = 160 over unit noise (Marchenko-Pastur edge ~1.6 at n/K = 1/16).
                check(w[-D] > 50 and w[-D - 1] < 3, f"{case}: cell {cell} spectrum {w[-D - 1:]}")
                angle = max_principal_angle_deg(v[:, -D:], a_true)
                check(angle < 5, f"{case}: cell {cell} signal subspace angle {angle:.2f} deg")
        if len(frames) == 3:
            # Pool of 2: frame 2 repeats frame 0's matrices, frame 1 differs.
            _, r0 = ec.decode_covariance(frames[0])
            _, r1 = ec.decode_covariance(frames[1])
            _, r2 = ec.decode_covariance(frames[2])
            check(np.array_equal(r0, r2) and not np.array_equal(r0, r1), f"{case}: pool cycling")


def solve(parts, seq, mode, dims=None, statuses=None):
    """The daemon's job, in NumPy: eigenspace parts for covariance parts."""
    h, r = ec.decode_covariance(parts)
    w, v = np.linalg.eigh(r)
    now = h["timestamp_ns"]
    dims = [D] * h["count"] if dims is None else dims
    return ec.encode_eigenspace(seq, h["timestamp_ns"], w, v, dims, mode, statuses=statuses,
                                stage_times=(now + 1000000, now + 2000000, now + 5000000, now + 6000000))


def run_sink(tmp, messages, sink_args, name):
    """Pushes messages to a sink (PULL, connect); returns (exit code, stdout, json)."""
    js = os.path.join(tmp, name + ".json")
    rc, out = send_to_sink(SINK, f"ipc://{tmp}/eig", messages,
                           ["--json", js, "--sources", SOURCES, "--jammers", JAMMERS] + sink_args)
    stats = json.load(open(js)) if os.path.exists(js) else {}
    return rc, out, stats


def check_sink(tmp):
    frames = receive_sim_frames(tmp, 3, [])
    if len(frames) != 3:
        return
    for mode in ("full", "signal", "noise", "values"):
        msgs = [solve(p, i, mode) for i, p in enumerate(frames)]
        rc, out, st = run_sink(tmp, msgs, ["--doa"], "good_" + mode)
        check(rc == 0 and "VERDICT: PASS frames=3 gaps=0 bad_status=0" in out, f"sink {mode}: rc={rc} {out}")
        check(st.get("dim_ok") == 3 * CELLS and st.get("latency_publish_ms", {}).get("p50") == 6.0,
              f"sink {mode}: json {st}")
        if mode != "values":
            check(st.get("subspace_checked") == 3 * CELLS and st.get("subspace_max_angle_deg", 90) < 5 and
                  st.get("doa_checked") == 3 * CELLS and st.get("doa_max_error_deg", 180) < 1,
                  f"sink {mode}: subspace/doa {st}")

    good = [solve(p, i, "signal") for i, p in enumerate(frames)]
    gap = [good[0], good[1], solve(frames[2], 3, "signal")]
    rc, out, st = run_sink(tmp, gap, [], "gap")
    check(rc == 1 and "VERDICT: FAIL (gaps=1)" in out and st.get("gaps") == 1, f"sink gap: rc={rc} {out}")

    rc, out, st = run_sink(tmp, good, ["--sources", "-10:20,5:15,30:10", "--doa"], "wrong_scene")
    check(rc == 1 and "subspace_max_angle=" in out.split("(")[1] and "doa_max_error" in out,
          f"sink wrong scene: rc={rc} {out}")

    dims = [D] * CELLS
    dims[3] = D - 1
    bad = [good[0], solve(frames[1], 1, "signal", statuses=[0, 0, 2, 0, 0, 0, 0, 0]),
           solve(frames[2], 2, "signal", dims=dims)]
    rc, out, st = run_sink(tmp, bad, [], "bad_status")
    check(rc == 1 and "bad_status=1" in out and f"dim_ok={3 * CELLS - 2}/{3 * CELLS - 1}" in out,
          f"sink bad status/dim: rc={rc} {out}")

    corrupt = list(good[1])
    data = bytearray(corrupt[2])
    data[100] ^= 1
    corrupt[2] = bytes(data)
    rc, out, st = run_sink(tmp, [good[0], corrupt, good[2]], ["--duration", "3"], "crc")
    check(rc == 1 and "rejected crc_mismatch=1" in out and st.get("rejects", {}).get("crc_mismatch") == 1,
          f"sink crc: rc={rc} {out}")


with tempfile.TemporaryDirectory() as tmp:
    check_sim_frames(tmp)
    check_sink(tmp)

report("test_sim_sink")
