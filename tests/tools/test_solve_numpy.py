#!/usr/bin/python3
"""eigstream-solve and eigstream-gen end to end, with numpy.linalg.eigh as the
independent oracle.

usage: test_solve_numpy.py SOLVE GEN SCRATCH_DIR BACKEND

Exits 77 (skipped) when this Python has no NumPy. Each failure names the case
(dtype, order, shape) and the ratio that failed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from solve_common import THRESHOLD, fail, failures  # noqa: E402  (exits 77 without NumPy)
import numpy as np  # noqa: E402

SOLVE, GEN, SCRATCH, BACKEND = sys.argv[1:5]


def path(name):
    return os.path.join(SCRATCH, name)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


def hermitian_lower(rng, batch_shape, n, dtype):
    """A Hermitian matrix h, and the input a holding h's lower triangle with
    random garbage (and a NaN) above the diagonal, which eigh/solve must not read."""
    x = rng.standard_normal(batch_shape + (n, n)) + 1j * rng.standard_normal(batch_shape + (n, n))
    h = (x + np.conj(np.swapaxes(x, -1, -2))) / 2
    h = h.astype(dtype)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    a = np.where(upper, (rng.standard_normal(h.shape) * 1e3).astype(dtype), h)
    if n > 1:
        a[..., 0, n - 1] = np.nan
    return h, a


def norm1(m):
    return np.abs(m).sum(axis=-2).max(axis=-1)


def check_solution(case, h, w, v, dtype):
    """LAPACK-style ratios of the solution, computed in double."""
    n = h.shape[-1]
    eps = np.finfo(np.float32 if dtype == np.complex64 else np.float64).eps
    h64 = h.astype(np.complex128)
    w_ref = np.linalg.eigh(h64)[0]
    scale = np.maximum(norm1(h64), np.finfo(np.float64).tiny)
    value_ratio = np.abs(w.astype(np.float64) - w_ref).max(axis=-1) / (n * eps * scale)
    if not np.all(value_ratio < THRESHOLD):
        fail(case, f"eigenvalue ratio {np.max(value_ratio):.3g} vs numpy.linalg.eigh")
    if v is None:
        return
    v64 = v.astype(np.complex128)
    residual = norm1(h64 @ v64 - v64 * w.astype(np.float64)[..., None, :]) / (scale * n * eps)
    if not np.all(residual < THRESHOLD):
        fail(case, f"residual ratio |a v - v w| {np.max(residual):.3g}")
    gram = np.conj(np.swapaxes(v64, -1, -2)) @ v64 - np.eye(n)
    orthogonality = norm1(gram) / (n * eps)
    if not np.all(orthogonality < THRESHOLD):
        fail(case, f"orthogonality ratio |v^H v - I| {np.max(orthogonality):.3g}")


def test_layouts():
    rng = np.random.default_rng(20261121)
    for dtype in (np.complex64, np.complex128):
        for batch_shape in ((), (3,)):
            for n in (1, 5, 17):
                for order in ("C", "F"):
                    case = f"{np.dtype(dtype).name} order {order} shape {batch_shape + (n, n)}"
                    h, a = hermitian_lower(rng, batch_shape, n, dtype)
                    a = np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a)
                    np.save(path("in.npy"), a)
                    r = run(SOLVE, "--backend", BACKEND, path("in.npy"), path("w.npy"), path("v.npy"))
                    if r.returncode != 0:
                        fail(case, f"exit {r.returncode}: {r.stderr.strip()}")
                        continue
                    w, v = np.load(path("w.npy")), np.load(path("v.npy"))
                    real = np.float32 if dtype == np.complex64 else np.float64
                    if w.dtype != real or w.shape != batch_shape + (n,):
                        fail(case, f"values are {w.dtype} {w.shape}")
                        continue
                    if v.dtype != dtype or v.shape != a.shape:
                        fail(case, f"vectors are {v.dtype} {v.shape}")
                        continue
                    if np.any(np.diff(w, axis=-1) < 0):
                        fail(case, "eigenvalues not ascending")
                    check_solution(case, h, w, v, dtype)

    # Values only, and --check's report.
    h, a = hermitian_lower(rng, (4,), 12, np.complex128)
    np.save(path("in.npy"), a)
    r = run(SOLVE, "--backend", BACKEND, "--check", path("in.npy"), path("w.npy"))
    if r.returncode != 0 or "PASS" not in r.stdout or " ms" not in r.stdout or BACKEND not in r.stdout:
        fail("values only --check", f"exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")
    else:
        check_solution("values only c128 (4, 12, 12)", h, np.load(path("w.npy")), None, np.complex128)


def test_format_versions():
    """Inputs NumPy writes in .npy format versions 2.0 and 3.0 read like 1.0's."""
    rng = np.random.default_rng(3)
    h, a = hermitian_lower(rng, (2,), 6, np.complex128)
    for version in ((2, 0), (3, 0)):
        case = f"format version {version[0]}.{version[1]}"
        with open(path("in.npy"), "wb") as f:
            np.lib.format.write_array(f, a, version=version)
        r = run(SOLVE, "--backend", BACKEND, path("in.npy"), path("w.npy"), path("v.npy"))
        if r.returncode != 0:
            fail(case, f"exit {r.returncode}: {r.stderr.strip()}")
            continue
        check_solution(case, h, np.load(path("w.npy")), np.load(path("v.npy")), np.complex128)


def test_bad_matrix():
    """A batch with one NaN matrix: that one named, the others written and right."""
    rng = np.random.default_rng(7)
    h, a = hermitian_lower(rng, (4,), 9, np.complex128)
    a[2, 5, 3] = np.nan
    np.save(path("in.npy"), a)
    r = run(SOLVE, "--backend", BACKEND, path("in.npy"), path("w.npy"), path("v.npy"))
    case = "NaN in matrix 2 of 4"
    if r.returncode != 2:
        fail(case, f"exit {r.returncode}, want 2; stderr {r.stderr!r}")
        return
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    if len(lines) != 1 or "matrix 2" not in lines[0]:
        fail(case, f"stderr should name matrix 2 alone: {r.stderr!r}")
    w, v = np.load(path("w.npy")), np.load(path("v.npy"))
    if not np.all(np.isnan(w[2])):
        fail(case, "eigenvalues of matrix 2 are not NaN")
    keep = [0, 1, 3]
    check_solution(case + " (the others)", h[keep], w[keep], v[keep], np.complex128)


def test_gen():
    for precision, dtype in (("c128", np.complex128), ("c64", np.complex64)):
        for kind in ("radar", "random", "8"):
            case = f"eigstream-gen --kind {kind} --precision {precision}"
            out = path("gen.npy")
            r = run(GEN, "--kind", kind, "--batch", "3", "--n", "16", "--seed", "5",
                    "--precision", precision, out)
            if r.returncode != 0:
                fail(case, f"exit {r.returncode}: {r.stderr.strip()}")
                continue
            a = np.load(out)
            if a.dtype != dtype or a.shape != (3, 16, 16) or not a.flags.c_contiguous:
                fail(case, f"wrote {a.dtype} {a.shape}")
                continue
            if not np.array_equal(a, np.conj(np.swapaxes(a, -1, -2))):
                fail(case, "matrices are not exactly Hermitian")
            with open(out, "rb") as f:
                first = f.read()
            # Determinism: a second run into a fresh file (a run that failed
            # must not leave the first run's bytes to compare with).
            os.remove(out)
            r = run(GEN, "--kind", kind, "--batch", "3", "--n", "16", "--seed", "5",
                    "--precision", precision, out)
            if r.returncode != 0 or not os.path.exists(out):
                fail(case, f"second run: exit {r.returncode}: {r.stderr.strip()}")
                continue
            with open(out, "rb") as f:
                if f.read() != first:
                    fail(case, "the same arguments gave different bytes")
            r = run(SOLVE, "--backend", BACKEND, out, path("w.npy"), path("v.npy"))
            if r.returncode != 0:
                fail(case, f"solve exit {r.returncode}: {r.stderr.strip()}")
                continue
            check_solution(case, a, np.load(path("w.npy")), np.load(path("v.npy")), dtype)


test_layouts()
test_format_versions()
test_bad_matrix()
test_gen()
if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("all passed")
