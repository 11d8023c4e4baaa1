#!/usr/bin/python3
"""eigstream-sim --iq and eigstream-sink --iq without the daemon.

1. The simulator's cubes against the scene, in NumPy: the header (kind 3,
   ci16_le and cf32_le, every layout, one part and one per slice, the scale),
   the mean sample power against the scene's (noise 1 + every emitter), each
   target's beam-Doppler response peaking at its own Doppler bin
   round(f F) mod F and angle, the jammer's direction as the top
   eigenvector of the spatial covariance of every Doppler bin; with a
   clutter ridge alone, the Bartlett beam of each Doppler bin b peaking on
   the ridge: at a sin(theta) = 2 (b / F + k) / slope (k any integer: the
   ridge aliases when slope > 1).
2. A NumPy stand-in for the daemon forms the cubes (numpy.hanning,
   numpy.fft.fft, per-bin sample covariance) and solves them
   (numpy.linalg.eigh, d = eigenvalues over 10x the median); the sink must
   PASS those eigenspaces in modes full, signal and noise, and FAIL when
   told another target Doppler (the target is not in that bin's subspace)
   or another jammer angle.

usage: test_sim_sink_iq.py EIGSTREAM_SIM EIGSTREAM_SINK TOOLS_PYTHON_DIR
Exit 77 (skip) without NumPy or pyzmq.
"""
import os
import sys
import tempfile

SIM, SINK = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from eigstream_check import check, report, require  # noqa: E402

np, zmq = require("numpy", "zmq")
import eigstream_client as ec  # noqa: E402
from sim_sink_util import receive_from_sim, send_to_sink  # noqa: E402

C, P, G = 12, 32, 64
TARGETS = [(-20.0, 0.25, 20.0), (15.0, -0.125, 15.0)]  # angle, doppler (cycles/pulse), power dB
JAMMER = (40.0, 30.0)
SCENE = ["--targets", ",".join(f"{a}:{f}:{p}" for a, f, p in TARGETS), "--jammers", f"{JAMMER[0]}:{JAMMER[1]}"]


def steering(angle_deg):
    return np.exp(1j * np.pi * np.arange(C) * np.sin(np.radians(angle_deg)))


def receive_cubes(tmp, frames, extra, scene=SCENE):
    """eigstream-sim --iq's cubes of the scene; the received parts lists."""
    return receive_from_sim(SIM, f"ipc://{tmp}/iq", frames,
                            ["--iq", "--n", str(C), "--pulses", str(P), "--gates", str(G), "--seed", "3"]
                            + scene + extra)


def spectrum(x):
    return np.fft.fft(x * np.hanning(P)[None, :, None], axis=1)  # (C, F = P, G)


def check_cubes(tmp):
    power = 1 + sum(10 ** (p / 10) for _, _, p in TARGETS) + 10 ** (JAMMER[1] / 10)
    for fmt in ("ci16_le", "cf32_le"):
        for layout in ("cpg", "pcg", "pgc"):
            per_slice = layout != "cpg"
            extra = ["--iq-format", fmt, "--iq-layout", layout] + (["--per-slice-parts"] if per_slice else [])
            case = f"sim --iq {fmt} {layout}"
            for parts in receive_cubes(tmp, 2, extra):
                h, raw = ec.decode_iq(parts)
                slices = C if layout == "cpg" else P
                check(len(parts) == (1 + slices if per_slice else 2), f"{case}: {len(parts)} parts")
                check((h["channels"], h["pulses"], h["gates"], h["format"], h["layout"]) == (C, P, G, fmt, layout),
                      f"{case}: header {h}")
                if fmt == "ci16_le":  # 4 sigma at full scale
                    check(abs(h["scale"] * 32767 / (4 * np.sqrt(power)) - 1) < 1e-6, f"{case}: scale {h['scale']}")
                x = ec.iq_values(h, raw)
                mean_power = np.mean(np.abs(x) ** 2)
                check(abs(mean_power / power - 1) < 0.15, f"{case}: sample power {mean_power:.1f}, scene {power:.1f}")
                X = spectrum(x)
                for angle, doppler, _ in TARGETS:
                    response = np.mean(np.abs(np.einsum("c,cbg->bg", steering(angle).conj(), X)) ** 2, axis=1)
                    want = int(round(doppler * P)) % P
                    check(int(np.argmax(response)) == want, f"{case}: target {angle} deg peaks at bin "
                          f"{int(np.argmax(response))}, want {want}")
                for b in (0, P // 3, P - 1):
                    w, v = np.linalg.eigh(X[:, b, :] @ X[:, b, :].conj().T)
                    fraction = abs(v[:, -1].conj() @ steering(JAMMER[0])) ** 2 / C
                    check(fraction > 0.98, f"{case}: bin {b} top eigenvector holds {fraction:.3f} of the jammer")


def check_clutter(tmp):
    slope = 1.5
    scene = ["--targets", "none", "--jammers", "none", "--clutter-patches", "96", "--clutter-db", "30",
             "--clutter-slope", str(slope)]
    for parts in receive_cubes(tmp, 1, ["--iq-format", "cf32_le"], scene):
        h, raw = ec.decode_iq(parts)
        X = spectrum(ec.iq_values(h, raw))
        grid = np.linspace(-1, 1, 801)
        manifold = np.exp(1j * np.pi * np.outer(np.arange(C), grid))  # (C, grid)
        for b in range(P):
            # The ridge's Dopplers slope * u / 2 span more than one cycle per
            # pulse: bin b holds every u with slope * u / 2 = b / P (mod 1).
            ridge = [2 * (b / P + k) / slope for k in (-2, -1, 0, 1)]
            ridge = [u for u in ridge if abs(u) <= 1]
            R = X[:, b, :] @ X[:, b, :].conj().T
            beam = np.real(np.einsum("cu,cd,du->u", manifold.conj(), R, manifold))
            peak = grid[int(np.argmax(beam))]
            check(min(abs(peak - u) for u in ridge) < 0.1,
                  f"clutter bin {b}: beam peaks at sin(theta) {peak:.3f}, ridge at {np.round(ridge, 3)}")


def form_and_solve(parts, seq, mode):
    """The daemon's job, in NumPy: one matrix per Doppler bin (one segment)."""
    h, raw = ec.decode_iq(parts)
    X = spectrum(ec.iq_values(h, raw))
    values, vectors, dims = [], [], []
    for b in range(P):
        w, v = np.linalg.eigh(X[:, b, :] @ X[:, b, :].conj().T / G)
        values.append(w)
        vectors.append(v)
        dims.append(int(np.sum(w > 10 * np.median(w))))
    now = h["timestamp_ns"]
    return ec.encode_eigenspace(seq, now, np.array(values), np.array(vectors), dims, mode,
                                stage_times=(now + 1, now + 2, now + 3, now + 4))


def run_sink(tmp, messages, args, name):
    """eigstream-sink --iq fed messages; (exit code, stdout + stderr)."""
    return send_to_sink(SINK, f"ipc://{tmp}/eig-{name}", messages, ["--iq", "--fft-size", str(P)] + args)


def check_sink(tmp):
    cubes = receive_cubes(tmp, 2, [])
    if len(cubes) != 2:
        return
    for mode in ("full", "signal", "noise"):
        rc, out = run_sink(tmp, [form_and_solve(p, i, mode) for i, p in enumerate(cubes)], SCENE, mode)
        check(rc == 0 and "VERDICT: PASS frames=2" in out, f"sink --iq {mode}: rc={rc} {out}")
    msgs = [form_and_solve(p, i, "full") for i, p in enumerate(cubes)]
    wrong_doppler = ["--targets", "-20:-0.375:20", "--jammers", "40:30"]
    rc, out = run_sink(tmp, msgs, wrong_doppler, "wrong_doppler")
    check(rc == 1 and "VERDICT: FAIL" in out and "target own-bin projection" in out,
          f"sink --iq, a target at another Doppler: rc={rc} {out}")
    wrong_jammer = ["--targets", SCENE[1], "--jammers", "-60:30"]
    rc, out = run_sink(tmp, msgs, wrong_jammer, "wrong_jammer")
    check(rc == 1 and "VERDICT: FAIL" in out and "jammer projection" in out,
          f"sink --iq, a jammer at another angle: rc={rc} {out}")


with tempfile.TemporaryDirectory() as tmp:
    check_cubes(tmp)
    check_clutter(tmp)
    check_sink(tmp)
report("test_sim_sink_iq")
