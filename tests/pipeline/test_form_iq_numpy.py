#!/usr/bin/python3
"""IQ cube forming (pipeline/form/form_iq.c, through the form_iq_npy helper)
against NumPy as the independent oracle.

usage: test_form_iq_numpy.py FORM_IQ_NPY SCRATCH_DIR

Forming: for every window x sample format x layout x precision, a random cube
(NumPy's generator, fixed seed) is written raw as on the wire, formed by the
helper, and compared with numpy.fft.fft along the pulses of the windowed cube
zero-padded to the fft size, and numpy.einsum over each (bin, segment)'s
training gates, divided by K. Bins wrap past F-1, segments and guard gates
vary per case. Only the lower triangle is compared (the plan writes no
other); the upper must be left as the helper zeroed it.

Windows: none, hann and hamming are numpy.ones, numpy.hanning, numpy.hamming
directly (the helper's coefficients are also compared with them). Chebyshev
and Taylor have no NumPy function: their coefficients are checked
analytically instead - symmetric, largest coefficient 1, and the peak
sidelobe of the window's spectrum (|DFT| zero-padded 64x, beyond the first
null) at -sidelobe_db: Dolph-Chebyshev is equiripple at exactly that level
(tolerance 0.05 dB, the sampling of the ripple peaks); Taylor (nbar = 4)
keeps its near sidelobes at about the design level for sidelobe_db <= 30
(where nbar = 4 >= 2 A^2 + 1/2, A = acosh(10^(sll/20))/pi): within 0.5 dB,
and never above -sidelobe_db + 0.5. The forming oracle then takes those
coefficients as the window.

Tolerance (derivation in tests/pipeline/form_iq_oracle.h): with u the unit
roundoff of the precision and B = max over (channel, gate) of
sum_p |w_p x_p|, |R - R_numpy| <= 4 u (2 log2 F + P + K + 5) B^2.

Exits 77 (skipped) when this Python has no NumPy.
"""
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed for", sys.executable)
    sys.exit(77)

HELPER, SCRATCH = sys.argv[1:3]
CF32, CI16 = 1, 3
LAYOUTS = {0: "cpg", 1: "pcg", 2: "pgc"}
WINDOWS = ["none", "hann", "hamming", "chebyshev", "taylor"]
failures = []


def fail(case, message):
    failures.append(f"{case}: {message}")
    print(f"FAIL {case}: {message}", file=sys.stderr)


def to_wire(x, layout):
    """(c, p, g, re/im) -> the layout's index order (slowest first), re/im last."""
    return {0: x, 1: x.transpose(1, 0, 2, 3), 2: x.transpose(1, 2, 0, 3)}[layout]


def form(q, raw, scale):
    """Runs the helper on the raw cube; returns (matrices R[m] as n x n, window)."""
    cube = os.path.join(SCRATCH, "cube.bin")
    raw.tofile(cube)
    args = [q[k] for k in ("channels", "pulses", "gates", "format", "layout", "precision", "window",
                           "sidelobe_db", "fft_size", "bin_first", "bin_count", "segments", "guard")]
    run = subprocess.run([HELPER, cube, SCRATCH] + [str(a) for a in args] + [repr(scale)],
                         capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip())
    m = np.load(os.path.join(SCRATCH, "matrices.npy"))
    return m.transpose(0, 2, 1), np.load(os.path.join(SCRATCH, "window.npy"))


def training_gates(length, guard):
    """Indices of a segment's training gates: all but the centre and guard either side."""
    t = np.arange(length)
    return t if guard == 0 else t[np.abs(t - length // 2) > guard]


def oracle(q, x, w):
    """numpy.fft + einsum; x is the scaled complex cube (c, p, g)."""
    xw = x * w[None, :, None]
    spectrum = np.fft.fft(xw, n=q["fft_size"], axis=1)  # (c, F, g), zero-padded
    length = q["gates"] // q["segments"]
    train = training_gates(length, q["guard"])
    out = []
    for i in range(q["bin_count"]):
        b = (q["bin_first"] + i) % q["fft_size"]
        for s in range(q["segments"]):
            xs = spectrum[:, b, s * length + train]
            out.append(np.einsum("jt,kt->jk", xs, xs.conj()) / len(train))
    bound = np.max(np.sum(np.abs(xw), axis=1))
    return np.array(out), bound * bound, len(train)


def random_cube(rng, q):
    shape = (q["channels"], q["pulses"], q["gates"])
    if q["format"] == CI16:
        re, im = (rng.integers(-3000, 3001, size=shape) for _ in range(2))
        raw_c = np.stack([re, im], axis=-1).astype("<i2")
    else:
        raw_c = rng.uniform(-1, 1, size=shape + (2,)).astype("<f4")
    x = raw_c[..., 0].astype(np.float64) + 1j * raw_c[..., 1].astype(np.float64)
    return np.ascontiguousarray(to_wire(raw_c, q["layout"])), x


def check_forming(rng, q, case):
    scale = 1.0 / 4096 if q["format"] == CI16 else 2.5
    raw, x = random_cube(rng, q)
    try:
        got, window = form(q, raw, scale)
    except RuntimeError as e:
        fail(case, str(e))
        return
    p = q["pulses"]
    name = WINDOWS[q["window"]]
    reference = {"none": np.ones(p), "hann": np.hanning(p), "hamming": np.hamming(p)}.get(name, window)
    if np.max(np.abs(window - reference)) > 1e-14:
        fail(case, f"window coefficients differ from numpy's by {np.max(np.abs(window - reference)):.3g}")
    want, b2, k = oracle(q, x * np.float32(scale), reference)
    u = 2.0 ** -53 if q["precision"] == 2 else 2.0 ** -24
    tol = 4 * u * (2 * np.log2(q["fft_size"]) + p + k + 5) * b2
    lower = np.tril(np.ones((q["channels"],) * 2, dtype=bool))
    worst = np.max(np.abs(got - want)[:, lower])
    if not worst <= tol:
        fail(case, f"max |R - numpy| {worst:.3g} > tol {tol:.3g}")
    if np.any(got[:, ~lower] != 0):
        fail(case, "the strict upper triangle was written")


def peak_sidelobe_db(w):
    """Peak sidelobe of the window's spectrum relative to its main lobe, in dB."""
    spectrum = np.abs(np.fft.fft(w, 64 * len(w)))
    half = spectrum[: len(spectrum) // 2]
    first_null = np.argmax(np.diff(half) > 0)  # the first local minimum beyond the main lobe
    return 20 * np.log10(half[first_null:].max() / half[0])


def check_windows(rng):
    """Chebyshev and Taylor coefficients through the helper (a 1-channel cube)."""
    for name, sll, tol in (("chebyshev", 30, 0.05), ("chebyshev", 60, 0.05), ("chebyshev", 90, 0.05),
                           ("taylor", 25, 0.5), ("taylor", 30, 0.5)):
        for m in (33, 64):
            q = dict(channels=1, pulses=m, gates=1, format=CF32, layout=0, precision=2,
                     window=WINDOWS.index(name), sidelobe_db=sll, fft_size=m, bin_first=0, bin_count=1,
                     segments=1, guard=0)
            case = f"{name} {sll} dB, {m} taps"
            raw, _ = random_cube(rng, q)
            try:
                _, w = form(q, raw, 1.0)
            except RuntimeError as e:
                fail(case, str(e))
                continue
            if np.max(np.abs(w - w[::-1])) > 1e-12 or abs(w.max() - 1) > 1e-12:
                fail(case, f"not symmetric with peak 1 (peak {w.max()!r})")
            level = peak_sidelobe_db(w)
            if abs(level + sll) > tol:
                fail(case, f"peak sidelobe {level:.3f} dB, designed {-sll} dB (tolerance {tol} dB)")


def main():
    rng = np.random.default_rng(20261123)
    index = 0
    for window in range(len(WINDOWS)):
        for fmt in (CF32, CI16):
            for layout in LAYOUTS:
                for precision in (1, 2):
                    fft_size = 7 + 2 * (index % 3)
                    q = dict(channels=5, pulses=7, gates=12, format=fmt, layout=layout, precision=precision,
                             window=window, sidelobe_db=25 + 5 * (index % 3), fft_size=fft_size,
                             bin_first=fft_size - 1 - index % 2, bin_count=3 + index % 4,
                             segments=1 + index % 3, guard=index % 2)
                    case = (f"{WINDOWS[window]}, {'ci16' if fmt == CI16 else 'cf32'}, {LAYOUTS[layout]}, "
                            f"{'c128' if precision == 2 else 'c64'}, F={fft_size} bins {q['bin_first']}+"
                            f"{q['bin_count']}, {q['segments']} segments, guard {q['guard']}")
                    check_forming(rng, q, case)
                    index += 1
    check_windows(rng)
    if failures:
        print(f"test_form_iq_numpy: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print(f"test_form_iq_numpy: all passed ({index} forming cases, windows checked analytically)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
