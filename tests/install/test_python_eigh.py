#!/usr/bin/python3
"""The Python package eigstream (tools/python/eigstream) against numpy.linalg.eigh.

usage: test_python_eigh.py EIG_H [--backends cpu,lapack] [--expect-lib-under DIR]

The package is imported from PYTHONPATH (the source tree with EIGSTREAM_LIB
naming the built library, or an install prefix whose recorded path it must
use: --expect-lib-under). Oracles: numpy.linalg.eigh / eigvalsh (eigenvalues
within 30 n eps |A|), the LAPACK ratios |A v - v w| / (n eps |A|) and
|V^H V - I| / (n eps) below 60, eig/eig.h itself for the binding's struct and
error table. Backend cuda: exit 77 (skipped) without a GPU, after checking
that asking for it fails with EigError. Fixed seeds.
"""
import argparse
import os
import re
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed for", sys.executable)
    sys.exit(77)

import eigstream  # noqa: E402
from eigstream import _library, _solver  # noqa: E402

failures = []
THRESHOLD = 60.0


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def hermitian(rng, shape, n, dtype, junk=True):
    """A Hermitian array h and an input a with h's lower triangle and, above
    the diagonal, junk that must not be read (UPLO='L')."""
    x = rng.standard_normal(shape + (n, n)) + 1j * rng.standard_normal(shape + (n, n))
    h = ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dtype)
    a = h.copy()
    if junk:
        upper = np.triu(np.ones((n, n), bool), 1)
        a[..., upper] = 1e3 * (1 + 1j)
    return h, a


def ratios(h, w, v):
    """Worst residual and orthogonality ratios of a batch (LAPACK's)."""
    eps = np.finfo(w.dtype).eps
    hb, wb, vb = h.reshape((-1,) + h.shape[-2:]), w.reshape(-1, w.shape[-1]), v.reshape((-1,) + v.shape[-2:])
    n = h.shape[-1]
    worst_r = worst_o = 0.0
    for hm, wm, vm in zip(hb.astype(np.complex128), wb.astype(np.float64), vb.astype(np.complex128)):
        norm = max(np.linalg.norm(hm, 1), np.finfo(np.float64).tiny)
        worst_r = max(worst_r, np.linalg.norm(hm @ vm - vm * wm, 1) / (n * eps * norm))
        worst_o = max(worst_o, np.linalg.norm(vm.conj().T @ vm - np.eye(n), 1) / (n * eps))
    return worst_r, worst_o


def check_solution(case, h, w, v):
    """w against numpy's eigenvalues, v by its ratios."""
    n = h.shape[-1]
    eps = np.finfo(w.dtype).eps
    wn = np.linalg.eigvalsh(h.astype(np.complex128))
    norm = np.abs(wn).max() if wn.size else 0.0
    err = np.abs(w.astype(np.float64) - wn).max()
    check(err <= 30 * n * eps * max(norm, 1e-300), f"{case}: eigenvalues off numpy's by {err:.3g} "
          f"(bound {30 * n * eps * norm:.3g})")
    check(np.all(np.diff(w, axis=-1) >= 0), f"{case}: eigenvalues not ascending")
    if v is not None:
        r, o = ratios(h, w, v)
        check(r < THRESHOLD and o < THRESHOLD, f"{case}: residual ratio {r:.3g}, orthogonality {o:.3g}")


def test_accuracy(backend):
    rng = np.random.default_rng(12)
    for dtype in (np.complex64, np.complex128):
        real = np.float32 if dtype == np.complex64 else np.float64
        for shape, n in (((), 1), ((), 7), ((), 40), ((5,), 16), ((3,), 1)):
            h, a = hermitian(rng, shape, n, dtype)
            case = f"{backend} {np.dtype(dtype).name} shape {shape + (n, n)}"
            w, v = eigstream.eigh(a, backend=backend)
            check(w.dtype == real and v.dtype == dtype, f"{case}: dtypes {w.dtype}, {v.dtype}")
            check(w.shape == shape + (n,) and v.shape == shape + (n, n), f"{case}: shapes {w.shape} {v.shape}")
            check_solution(case, h, w, v)
            wv = eigstream.eigvalsh(a, backend=backend)
            check(np.allclose(wv, w, rtol=0, atol=30 * n * np.finfo(real).eps * (np.abs(w).max() + 1)),
                  f"{case}: eigvalsh differs from eigh's w")
            # UPLO='U': the upper triangle of h, junk below.
            au = h.copy()
            au[..., np.tril(np.ones((n, n), bool), -1)] = np.nan
            w, v = eigstream.eigh(au, UPLO="U", backend=backend)
            check_solution(case + " UPLO=U", h, w, v)
        # Fortran order and a strided view: the staging copy.
        h, a = hermitian(rng, (4,), 12, dtype)
        w, v = eigstream.eigh(np.asfortranarray(a), backend=backend)
        check_solution(f"{backend} {np.dtype(dtype).name} Fortran order", h, w, v)
        big_h, big_a = hermitian(rng, (8,), 12, dtype)
        w, v = eigstream.eigh(big_a[::2], backend=backend)
        check_solution(f"{backend} {np.dtype(dtype).name} strided batch", big_h[::2], w, v)


def test_status(backend):
    """A NaN in the read triangle fails that matrix only, named by index."""
    rng = np.random.default_rng(5)
    for dtype in (np.complex64, np.complex128):
        h, a = hermitian(rng, (4,), 10, dtype)
        a[2, 6, 3] = np.nan
        a[3, 1, 1] = 1 + 1j  # non-real diagonal
        try:
            eigstream.eigh(a, backend=backend)
            check(False, f"{backend} {np.dtype(dtype).name}: no MatrixError for NaN / non-real diagonal")
        except eigstream.MatrixError as e:
            check(e.indices == [2, 3], f"{backend}: MatrixError.indices {e.indices}, expected [2, 3]")
            check(list(e.info) == [0, 0, eigstream.INFO_NONFINITE, eigstream.INFO_NONREAL_DIAGONAL],
                  f"{backend}: info {list(e.info)}")
            check("2: NaN or Inf" in str(e) and "3: diagonal" in str(e), f"{backend}: message {e}")
            check(np.isnan(e.w[2:]).all() and np.isnan(e.v[2:]).all(), f"{backend}: failed results not NaN")
            check_solution(f"{backend} {np.dtype(dtype).name} batch with failures", h[:2], e.w[:2], e.v[:2])
        # A NaN above the diagonal is not read with UPLO='L'.
        h, a = hermitian(rng, (), 6, dtype)
        a[0, 5] = np.nan
        w, v = eigstream.eigh(a, backend=backend)
        check_solution(f"{backend} NaN in the unread triangle", h, w, v)


def test_plan(backend):
    """Repeated calls reuse the plan's arrays; shape and dtype are enforced."""
    rng = np.random.default_rng(9)
    with eigstream.Plan(8, 3, np.complex128, backend=backend) as plan:
        check(plan.backend == backend or backend == "auto", f"plan.backend {plan.backend}")
        addresses = set()
        for i in range(3):
            h, a = hermitian(rng, (3,), 8, np.complex128)
            w, v = plan(a)
            check_solution(f"{backend} Plan call {i}", h, w, v)
            addresses.add((w.ctypes.data, v.ctypes.data))
        check(len(addresses) == 1, f"{backend} Plan: results moved between calls: {addresses}")
        check(list(plan.info) == [0, 0, 0], f"Plan.info {list(plan.info)}")
        for bad, err in ((np.zeros((3, 8, 8), np.complex64), TypeError),
                         (np.zeros((2, 8, 8), np.complex128), ValueError)):
            try:
                plan(bad)
                check(False, f"Plan accepted {bad.dtype} {bad.shape}")
            except err:
                pass
    with eigstream.Plan(5, None, np.complex64, backend=backend, vectors=False) as plan:
        h, a = hermitian(rng, (), 5, np.complex64)
        w = plan(a)
        check_solution(f"{backend} Plan values only", h, w, None)
    try:
        plan(a)
        check(False, "a closed plan ran")
    except ValueError:
        pass


def test_errors():
    for call, err in ((lambda: eigstream.eigh(np.eye(3, dtype=complex), backend="gpu"), ValueError),
                      (lambda: eigstream.Plan(2**32 + 3), ValueError),
                      (lambda: eigstream.Plan(5000), eigstream.EigError)):
        try:
            call()
            check(False, f"no {err.__name__}")
        except err as e:
            print(f"expected {type(e).__name__}: {e}")
    w, v = eigstream.eigh(np.zeros((0, 4, 4), np.complex64))
    check(w.shape == (0, 4) and v.shape == (0, 4, 4) and w.dtype == np.float32, "empty batch")


PARITY_DTYPES = (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float32, np.float64,
                 np.complex64, np.complex128)
PARITY_SHAPES = ((1, 1), (4, 4), (3, 5, 5), (2, 2, 3, 3), (2, 1, 3, 2, 2), (0, 3, 3), (2, 0, 0))


def parity_input(rng, dtype, shape):
    """A Hermitian (symmetric) array of dtype and shape: small values for integers and bool."""
    kind = np.dtype(dtype).kind
    if kind in "biu":
        x = rng.integers(0, 2 if kind == "b" else 6, shape)
        return np.triu(x) + np.triu(x, 1).swapaxes(-1, -2) if kind != "b" else \
            (np.triu(x) + np.triu(x, 1).swapaxes(-1, -2)).astype(bool)
    x = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if kind == "c" else 0)
    return ((x + np.conj(x.swapaxes(-1, -2))) / 2).astype(dtype)


def numpy_phase(v):
    """numpy's eigenvectors under eigstream's phase convention (largest component real, positive)."""
    v = v.astype(np.complex128)
    top = np.argmax(np.abs(v), axis=-2)[..., None, :]
    c = np.take_along_axis(v, top, axis=-2)
    return v * np.conj(c) / np.abs(c)


def check_phase_convention(case, w, v, wn, vn):
    """Each vector's largest component is real and > 0; where eigenvalues are well apart and the largest
    component is clear, the vectors equal numpy's under the same convention."""
    if v.size == 0:
        return
    mag = np.abs(v)
    top = np.argmax(mag, axis=-2)[..., None, :]
    c = np.take_along_axis(v, top, axis=-2)
    check(np.all(np.real(c) > 0) and np.all(np.imag(c) == 0), f"{case}: largest components not real positive")
    if np.dtype(v.dtype).kind not in "fc":
        return
    n, eps = v.shape[-1], np.finfo(w.dtype).eps
    vb, wb = v.reshape((-1, n, n)), wn.reshape((-1, n))
    ref = numpy_phase(vn).reshape((-1, n, n))
    for b in range(vb.shape[0]):
        scale = max(np.abs(wb[b]).max(), 1e-300)
        for k in range(n):
            gap = min([abs(wb[b, k] - wb[b, j]) for j in range(n) if j != k] or [scale])
            sorted_mag = np.sort(np.abs(vb[b, :, k]))
            if gap < 1e-2 * scale or (n > 1 and sorted_mag[-1] - sorted_mag[-2] < 1e-3):
                continue
            err = np.abs(vb[b, :, k] - ref[b, :, k]).max()
            check(err <= 100 * n * eps * scale / gap, f"{case}: matrix {b} vector {k} differs from numpy's "
                  f"(same phase convention) by {err:.3g}")


def test_numpy_parity(backend):
    """Every dtype numpy.linalg.eigh takes, stacks of any rank, UPLO L and U: the same result dtypes and
    shapes as numpy.linalg.eigh/eigvalsh, its eigenvalues, eigenvectors by the LAPACK ratios and, where
    unique, equal to numpy's under the documented phase convention."""
    rng = np.random.default_rng(21)
    for dtype in PARITY_DTYPES:
        for shape in PARITY_SHAPES:
            a = parity_input(rng, dtype, shape)
            for uplo in ("L", "U"):
                case = f"{backend} {np.dtype(dtype).name} {shape} UPLO={uplo}"
                given = a.copy()
                n = shape[-1]
                if n > 1 and np.dtype(dtype).kind in "fciu":  # junk in the triangle not read
                    other = np.triu(np.ones((n, n), bool), 1) if uplo == "L" else np.tril(np.ones((n, n), bool), -1)
                    given[..., other] = 3 if np.dtype(dtype).kind in "iu" else 1e3
                wn, vn = np.linalg.eigh(given, UPLO=uplo)
                w, v = eigstream.eigh(given, UPLO=uplo, backend=backend)
                wv = eigstream.eigvalsh(given, UPLO=uplo, backend=backend)
                check(w.dtype == wn.dtype and v.dtype == vn.dtype and wv.dtype == wn.dtype,
                      f"{case}: dtypes w {w.dtype} v {v.dtype} eigvalsh {wv.dtype}, numpy {wn.dtype} {vn.dtype}")
                check(w.shape == wn.shape and v.shape == vn.shape and wv.shape == wn.shape,
                      f"{case}: shapes {w.shape} {v.shape}, numpy {wn.shape} {vn.shape}")
                if w.shape != wn.shape or w.size == 0:
                    continue
                h = a.astype(np.complex128) if np.dtype(dtype).kind == "c" else a.astype(np.float64)
                check_solution(case, h, w, v)
                check(np.abs(wv.astype(np.float64) - wn).max() <= 30 * n * np.finfo(w.dtype).eps *
                      max(np.abs(wn).max(), 1e-300), f"{case}: eigvalsh off numpy's")
                check_phase_convention(case, w, v, wn, vn)


def test_real_clusters(backend):
    """Real symmetric matrices with repeated eigenvalues: real orthonormal eigenvectors all the same (the
    complex solver may mix a cluster; the real basis is rebuilt), checked by the ratios."""
    rng = np.random.default_rng(4)
    for dtype in (np.float32, np.float64):
        q = np.linalg.qr(rng.standard_normal((3, 9, 9)))[0]
        d = np.array([1, 1, 1, 2, 2, -3, 5, 5, 5], float)
        a = (q * d) @ q.swapaxes(-1, -2)
        a = ((a + a.swapaxes(-1, -2)) / 2).astype(dtype)
        for given in (a, np.eye(6, dtype=dtype), np.ones((5, 5), dtype)):
            w, v = eigstream.eigh(given, backend=backend)
            case = f"{backend} {np.dtype(dtype).name} clustered {given.shape}"
            check(v.dtype == dtype, f"{case}: v dtype {v.dtype}")
            check_solution(case, given.astype(np.float64), w, v)
        # The cpu and lapack backends keep real input real; a backend that mixes a cluster by a complex
        # unitary (the cuda one may) must still give real eigenvectors: numpy's, mixed on purpose.
        wn, vn = np.linalg.eigh(a.astype(np.float64))
        mix = np.eye(9, dtype=complex)
        for lo, hi in ((0, 1), (1, 4), (4, 6), (6, 9)):  # wn: -3, 1, 1, 1, 2, 2, 5, 5, 5
            x = rng.standard_normal((hi - lo, hi - lo)) + 1j * rng.standard_normal((hi - lo, hi - lo))
            mix[lo:hi, lo:hi] = np.linalg.qr(x)[0]
        mixed = (vn @ mix * np.exp(1j * rng.uniform(0, 6, 9))).astype(np.result_type(dtype, np.complex64))
        real = _solver._real_vectors(a, wn.astype(dtype), mixed)
        case = f"{np.dtype(dtype).name}: _real_vectors of complex-mixed clusters"
        check(real.dtype.kind == "f", f"{case}: dtype {real.dtype}")
        check_solution(case, a.astype(np.float64), wn.astype(dtype), real.astype(dtype))


def test_numpy_errors():
    """What numpy.linalg.eigh refuses, eigstream.eigh refuses with the same exception and message."""
    bad = ((np.zeros(3), "L"), (np.zeros((2, 3)), "L"), (np.zeros((2, 4, 3), complex), "L"),
           (np.eye(2, dtype=np.float16), "L"), (np.eye(2, dtype=np.longdouble), "L"), (np.eye(2), "X"),
           (np.eye(2, dtype=np.clongdouble), "L"))
    for a, uplo in bad:
        for fn, ours in ((np.linalg.eigh, eigstream.eigh), (np.linalg.eigvalsh, eigstream.eigvalsh)):
            expected = got = None
            try:
                fn(a, UPLO=uplo)
            except Exception as e:  # noqa: BLE001 (numpy's, whatever it is)
                expected = e
            try:
                ours(a, UPLO=uplo)
            except Exception as e:  # noqa: BLE001
                got = e
            case = f"{fn.__name__} {a.dtype} {a.shape} UPLO={uplo}"
            check(expected is not None and got is not None and isinstance(got, type(expected)) and
                  str(got) == str(expected), f"{case}: numpy raised {expected!r}, eigstream {got!r}")


def test_version(source_pyproject):
    """__version__ is the package's version in pyproject.toml."""
    text = open(source_pyproject).read() if source_pyproject else ""
    version = re.search(r'^version = "([^"]+)"', text, re.M)
    check(version is not None and eigstream.__version__ == version.group(1),
          f"eigstream.__version__ {eigstream.__version__!r}, pyproject.toml {version and version.group(1)}")


def test_binding_matches_header(eig_h):
    """The ctypes struct and error table against eig.h's declarations."""
    text = open(eig_h).read()
    body = re.search(r"typedef struct eig_plan_params \{(.*?)\} eig_plan_params;", text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields = re.findall(r"(\w+)\s*;", body)
    check(fields == [f for f, _ in _library.PlanParams._fields_],
          f"eig_plan_params fields {fields} vs binding {[f for f, _ in _library.PlanParams._fields_]}")
    body = re.search(r"typedef struct eig_cuda_tuning \{(.*?)\} eig_cuda_tuning;", text, re.S).group(1)
    fields = re.findall(r"(\w+)\s*;", re.sub(r"/\*.*?\*/", "", body, flags=re.S))
    check(fields == [f for f, _ in _library.CudaTuning._fields_], f"eig_cuda_tuning fields {fields}")
    body = re.search(r"typedef enum eig_error \{(.*?)\} eig_error;", text, re.S).group(1)
    names = re.findall(r"\b(EIG_E?\w+)\b", re.sub(r"/\*.*?\*/", "", body, flags=re.S))
    check(tuple(names) == _library.ERROR_NAMES, f"eig_error {names}")
    loaded = os.path.realpath(eigstream.library_path())
    dynamic = subprocess.run(["readelf", "-d", loaded], capture_output=True, text=True).stdout
    soname = re.search(r"Library soname: \[([^\]]+)\]", dynamic)
    check(soname is not None and soname.group(1) == _library.SONAME,
          f"loaded {loaded} (SONAME {soname.group(1) if soname else None}), binding expects "
          f"SONAME {_library.SONAME}")


def test_library_error():
    """A wrong EIGSTREAM_LIB is an error naming it, not a reason to load
    another copy (a fresh interpreter: the library loads once per process)."""
    code = ("import numpy, eigstream\n"
            "try:\n    eigstream.eigh(numpy.eye(2, dtype=complex))\n"
            "except eigstream.LibraryError as e:\n    print('LibraryError:', e)\n")
    env = dict(os.environ, EIGSTREAM_LIB="/nonexistent/libeigstream-eig.so.2")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    check(r.returncode == 0 and "LibraryError: libeigstream-eig not loaded; tried: EIGSTREAM_LIB "
          "/nonexistent/libeigstream-eig.so.2" in r.stdout, f"bad EIGSTREAM_LIB: {r.stdout}{r.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("eig_h")
    ap.add_argument("--backends", default="cpu,lapack,auto")
    ap.add_argument("--expect-lib-under")
    args = ap.parse_args()
    print("library:", eigstream.library_path(), "package:", os.path.dirname(eigstream.__file__))
    if args.expect_lib_under:
        lib = os.path.realpath(eigstream.library_path())
        check(lib.startswith(os.path.realpath(args.expect_lib_under) + os.sep),
              f"library {lib} not under {args.expect_lib_under}")
    test_binding_matches_header(args.eig_h)
    test_version(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.eig_h))), "tools", "python",
                              "pyproject.toml"))
    test_errors()
    test_numpy_errors()
    test_library_error()
    skipped = False
    for backend in args.backends.split(","):
        if backend == "cuda" and eigstream.cuda_device_count() == 0:
            try:
                eigstream.eigh(np.eye(2, dtype=np.complex64), backend="cuda")
                check(False, "backend cuda ran without a GPU")
            except eigstream.EigError as e:
                check(e.name in ("EIG_ENOCUDA", "EIG_ENODEVICE"), f"cuda without GPU: {e.name}")
                print(f"SKIP cuda: {e}")
            skipped = True
            continue
        test_accuracy(backend)
        test_numpy_parity(backend)
        test_real_clusters(backend)
        test_status(backend)
        test_plan(backend)
    if failures:
        print(f"test_python_eigh: {len(failures)} failures")
        sys.exit(1)
    print("test_python_eigh: all passed")
    sys.exit(77 if skipped else 0)


main()
