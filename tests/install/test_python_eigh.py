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
from eigstream import _library  # noqa: E402

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
    for call, err in ((lambda: eigstream.eigh(np.eye(3)), TypeError),
                      (lambda: eigstream.eigh(np.zeros((2, 3), complex)), ValueError),
                      (lambda: eigstream.eigh(np.eye(3, dtype=complex), UPLO="X"), ValueError),
                      (lambda: eigstream.eigh(np.eye(3, dtype=complex), backend="gpu"), ValueError),
                      (lambda: eigstream.Plan(2**32 + 3), ValueError),
                      (lambda: eigstream.Plan(5000), eigstream.EigError)):
        try:
            call()
            check(False, f"no {err.__name__}")
        except err as e:
            print(f"expected {type(e).__name__}: {e}")
    w, v = eigstream.eigh(np.zeros((0, 4, 4), np.complex64))
    check(w.shape == (0, 4) and v.shape == (0, 4, 4) and w.dtype == np.float32, "empty batch")


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
    soversion = re.search(r"libeigstream-eig\.so\.(\d+)", _library.SONAME).group(1)
    loaded = os.path.realpath(eigstream.library_path())
    check(f".so.{soversion}" in loaded, f"loaded {loaded}, binding expects SONAME {_library.SONAME}")


def test_library_error():
    """A wrong EIGSTREAM_LIB is an error naming it, not a reason to load
    another copy (a fresh interpreter: the library loads once per process)."""
    code = ("import numpy, eigstream\n"
            "try:\n    eigstream.eigh(numpy.eye(2, dtype=complex))\n"
            "except eigstream.LibraryError as e:\n    print('LibraryError:', e)\n")
    env = dict(os.environ, EIGSTREAM_LIB="/nonexistent/libeigstream-eig.so.0")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    check(r.returncode == 0 and "LibraryError: libeigstream-eig not loaded; tried: EIGSTREAM_LIB "
          "/nonexistent/libeigstream-eig.so.0" in r.stdout, f"bad EIGSTREAM_LIB: {r.stdout}{r.stderr}")


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
    test_errors()
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
        test_status(backend)
        test_plan(backend)
    if failures:
        print(f"test_python_eigh: {len(failures)} failures")
        sys.exit(1)
    print("test_python_eigh: all passed")
    sys.exit(77 if skipped else 0)


main()
