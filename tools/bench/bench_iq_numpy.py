#!/usr/bin/python3
"""The NumPy peer of `eigstream-bench iq`: the same forming (window, Doppler
FFT along the pulses zero-padded to F, per bin and range segment the sample
covariance over the training gates, / K) written the way a NumPy user would:
numpy.fft.fft and a batched matmul, complex128 (c128) or complex64 (c64).

usage: bench_iq_numpy.py CUBE WINDOW OURS C P G FORMAT LAYOUT PRECISION F
                         BIN_FIRST BIN_COUNT SEGMENTS GUARD SCALE RUNS

CUBE: the raw cube (wire format and layout codes of docs/protocol.md);
WINDOW: P float64 coefficients, raw; OURS: our matrices (bins x segments,
n x n column-major, lower triangle valid) for the agreement line. The
thread count of NumPy's BLAS comes from the environment (OPENBLAS_NUM_THREADS,
set by the bench). Prints `numpy_ms MEDIAN MIN` and `max_abs_diff D SCALE`
(the largest |ours - numpy| over lower triangles, and max |R|).
"""
import sys
import time

import numpy as np


def main():
    cube_path, window_path, ours_path = sys.argv[1:4]
    c, p, g, fmt, layout, precision, f, first, count, segments, guard = (int(v) for v in sys.argv[4:15])
    scale, runs = float(sys.argv[15]), int(sys.argv[16])
    raw = np.fromfile(cube_path, dtype="<i2" if fmt == 3 else "<f4")
    window = np.fromfile(window_path, dtype="<f8")
    shape = {0: (c, p, g), 1: (p, c, g), 2: (p, g, c)}[layout]
    axes = {0: (0, 1, 2), 1: (1, 0, 2), 2: (2, 0, 1)}[layout]  # positions of channel, pulse, gate
    complex_type = np.complex128 if precision == 2 else np.complex64
    real_type = np.float64 if precision == 2 else np.float32
    length = g // segments
    t = np.arange(length)
    train = t if guard == 0 else t[np.abs(t - length // 2) > guard]
    bins = (first + np.arange(count)) % f
    weight_shape = [1, 1, 1]
    weight_shape[axes[1]] = p
    weights = (scale * window).astype(real_type).reshape(weight_shape)

    def form():
        x = raw.reshape(shape + (2,)).astype(real_type).view(complex_type)[..., 0]
        # NumPy 1.x's fft computes and returns complex128 whatever the input:
        # back to the precision, so that the products run in it as ours do.
        spectrum = np.fft.fft(x * weights, n=f, axis=axes[1]).astype(complex_type, copy=False)
        # (bin, channel, gate) for the chosen bins, contiguous so that matmul
        # hands each A A^H to BLAS (a strided operand makes NumPy fall back to
        # its own loop, ~10x slower here), per bin and segment.
        sel = np.moveaxis(np.take(spectrum, bins, axis=axes[1]), (axes[1], axes[0], axes[2]), (0, 1, 2))
        out = np.empty((count, segments, c, c), dtype=complex_type)
        for s in range(segments):
            a = np.ascontiguousarray(sel[:, :, s * length + train])
            out[:, s] = np.matmul(a, np.conj(a).transpose(0, 2, 1)) / len(train)
        return out.reshape(count * segments, c, c)

    form()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = form()
        times.append((time.perf_counter() - t0) * 1e3)
    ours = np.fromfile(ours_path, dtype=complex_type).reshape(count * segments, c, c).transpose(0, 2, 1)
    lower = np.tril(np.ones((c, c), dtype=bool))
    diff = np.max(np.abs(ours - r)[:, lower])
    print(f"numpy_ms {np.median(times):.3f} {min(times):.3f}")
    print(f"max_abs_diff {diff:.3e} {np.max(np.abs(r)):.3e}")


if __name__ == "__main__":
    main()
