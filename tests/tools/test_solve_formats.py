#!/usr/bin/python3
"""eigstream-solve's .npz and MATLAB .mat files, written and read by other
tools, with numpy.linalg.eigh as the oracle of every result.

usage: test_solve_formats.py SOLVE SCRATCH_DIR [MAT_WRITE]

MAT_WRITE (tests/tools/mat_write.c) is given when eigstream-solve was built
with libmatio: then the .mat cases run, else they are left out and said so.
- .npz: numpy.savez (stored) and numpy.savez_compressed (deflate) in, read
  back by numpy.load; 'w' and 'v' in one output archive, or VALUES and
  VECTORS apart; --var among several arrays, and the error naming them.
- .mat v5: scipy.io.savemat of MATLAB's (n, n, B) layout in, scipy.io.loadmat
  of the output; a real symmetric matrix (MATLAB saves a complex one with zero
  imaginary parts as real); a (B, n, n) array refused by the auto layout with
  the hint, then solved with --layout numpy; single precision.
- .mat v7.3: a file written by libmatio's API (mat_write) in, the output
  (--mat-version auto keeps 7.3) read with h5py as MATLAB lays it out in
  HDF5 (dimensions reversed, complex as a (real, imag) compound).
- --layout matlab on a .npy: (n, n, B) Fortran-order in and out.
Every solution: eigenvalues against numpy.linalg.eigvalsh (to 30 n eps of
the matrix's norm), and the vectors' residual and orthogonality ratios below
60 (LAPACK's zhet21 measures). Exit 77 without NumPy.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from solve_common import THRESHOLD, fail, failures  # noqa: E402  (exits 77 without NumPy)
import numpy as np  # noqa: E402

SOLVE, SCRATCH = sys.argv[1:3]
MAT_WRITE = sys.argv[3] if len(sys.argv) > 3 else None


def path(name):
    return os.path.join(SCRATCH, name)


def solve(case, *args, expect=0):
    r = subprocess.run([SOLVE, *args], capture_output=True, text=True, timeout=120)
    if r.returncode != expect:
        fail(case, f"eigstream-solve {' '.join(args)} exited {r.returncode} (expected {expect}): {r.stderr.strip()}")
    return r


def hermitian(rng, batch, n, dtype=np.complex128):
    """(batch, n, n) Hermitian matrices, NumPy's stack layout."""
    x = rng.standard_normal((batch, n, n)) + 1j * rng.standard_normal((batch, n, n))
    return ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dtype)


def check_solution(case, h, w, v):
    """h: (B, n, n) matrices solved; w: (B, n) values; v: (B, n, n) vectors
    (v[b][:, k] for w[b][k]) or None."""
    n = h.shape[-1]
    eps = np.finfo(np.float32 if w.dtype == np.float32 else np.float64).eps
    h64 = h.astype(np.complex128)
    w_ref = np.linalg.eigvalsh(h64)
    norm = np.abs(h64).sum(axis=-2).max(axis=-1)[:, None]
    err = (np.abs(w.astype(np.float64) - w_ref) / (n * eps * np.maximum(norm, 1e-300))).max()
    if not err < 30:
        fail(case, f"eigenvalues differ from numpy.linalg.eigvalsh: {err:.3g} n eps |A|")
    if v is None:
        return
    v64 = v.astype(np.complex128)
    residual = np.abs(h64 @ v64 - v64 * w.astype(np.float64)[:, None, :]).sum(axis=-2).max(axis=-1)
    residual_ratio = (residual / (n * eps * np.maximum(norm[:, 0], 1e-300))).max()
    gram = np.conj(np.swapaxes(v64, -1, -2)) @ v64 - np.eye(n)
    orthogonality_ratio = (np.abs(gram).sum(axis=-2).max(axis=-1) / (n * eps)).max()
    if not (residual_ratio < THRESHOLD and orthogonality_ratio < THRESHOLD):
        fail(case, f"residual ratio {residual_ratio:.3g}, orthogonality ratio {orthogonality_ratio:.3g}")
    print(f"{case}: B={h.shape[0]} n={n} {v.dtype}: eigenvalues {err:.2g} n eps, "
          f"residual {residual_ratio:.2g}, orthogonality {orthogonality_ratio:.2g}")


def matlab(stack):
    """NumPy's (B, n, n) as MATLAB's (n, n, B): A(:, :, b) = stack[b]."""
    return np.moveaxis(stack, 0, -1)


def numpy_stack(array):
    """MATLAB's (n, n, B) (or (n, B) values) back to NumPy's stack order."""
    return np.moveaxis(array, -1, 0)


def npz_cases(rng):
    h = hermitian(rng, 6, 9)
    np.savez(path("in.npz"), h)
    solve("npz savez", path("in.npz"), path("out.npz"))
    with np.load(path("out.npz")) as z:
        if sorted(z.files) != ["v", "w"]:
            fail("npz savez", f"output arrays {sorted(z.files)}, expected v and w")
        else:
            check_solution("npz savez", h, z["w"], z["v"])
    h32 = hermitian(rng, 4, 12, np.complex64)
    np.savez_compressed(path("in_c.npz"), first=h32, second=h32[:2])
    r = solve("npz two arrays", path("in_c.npz"), path("out.npz"), expect=1)
    if "first, second" not in r.stderr or "name one" not in r.stderr:
        fail("npz two arrays", f"the error does not name the arrays: {r.stderr.strip()}")
    solve("npz savez_compressed --var", "--var", "second", path("in_c.npz"), path("w.npz"), path("v.npz"))
    with np.load(path("w.npz")) as zw, np.load(path("v.npz")) as zv:
        if zw.files != ["w"] or zv.files != ["v"]:
            fail("npz apart", f"VALUES holds {zw.files}, VECTORS {zv.files}")
        else:
            check_solution("npz savez_compressed --var", h32[:2], zw["w"], zv["v"])
    np.savez(path("empty.npz"), np.zeros((0, 3, 3), np.complex128))
    solve("npz empty batch", path("empty.npz"), path("empty_out.npz"))
    with np.load(path("empty_out.npz")) as z:
        if z["w"].shape != (0, 3) or z["v"].shape != (0, 3, 3):
            fail("npz empty batch", f"w {z['w'].shape}, v {z['v'].shape}")
    r = solve("npz missing --var", "--var", "third", path("in_c.npz"), path("out.npz"), expect=1)
    if "no array 'third'" not in r.stderr:
        fail("npz missing --var", r.stderr.strip())


def mat_v5_cases(rng, sio):
    h = hermitian(rng, 5, 10)
    sio.savemat(path("in5.mat"), {"R": matlab(h)})
    solve("mat v5", path("in5.mat"), path("out5.mat"))
    m = sio.loadmat(path("out5.mat"))
    if m["w"].shape != (10, 5) or m["v"].shape != (10, 10, 5):
        fail("mat v5", f"shapes w {m['w'].shape}, v {m['v'].shape}, expected (10, 5) and (10, 10, 5)")
    else:
        check_solution("mat v5 (n, n, B)", h, numpy_stack(m["w"]), numpy_stack(m["v"]))
    # A real symmetric matrix: MATLAB saves a complex matrix whose imaginary
    # parts are zero as real. One matrix: values n x 1, as MATLAB's eig.
    s = np.real(h[0]) + np.real(h[0]).T
    sio.savemat(path("real.mat"), {"S": s})
    solve("mat v5 real", path("real.mat"), path("real_out.mat"))
    m = sio.loadmat(path("real_out.mat"))
    if m["w"].shape != (10, 1):
        fail("mat v5 real", f"w shape {m['w'].shape}, expected (10, 1)")
    else:
        check_solution("mat v5 real", s[None].astype(np.complex128), m["w"].T, m["v"][None])
    # NumPy's stack saved as is: MATLAB sees (B, n, n), not square in its layout.
    sio.savemat(path("stack.mat"), {"H": h})
    r = solve("mat v5 auto layout", path("stack.mat"), path("o.mat"), expect=1)
    if "--layout numpy" not in r.stderr:
        fail("mat v5 auto layout", f"no --layout hint: {r.stderr.strip()}")
    solve("mat v5 --layout numpy", "--layout", "numpy", path("stack.mat"), path("stack_out.mat"))
    m = sio.loadmat(path("stack_out.mat"))
    check_solution("mat v5 --layout numpy", h, m["w"], m["v"])
    # An empty matrix: empty results, and no crash in matio's empty variables.
    sio.savemat(path("empty.mat"), {"E": np.zeros((0, 0), complex)})
    solve("mat v5 empty", path("empty.mat"), path("empty_out.mat"))
    m = sio.loadmat(path("empty_out.mat"))
    if m["w"].size != 0 or m["v"].size != 0:
        fail("mat v5 empty", f"w {m['w'].shape}, v {m['v'].shape}")
    h32 = hermitian(rng, 3, 8, np.complex64)
    sio.savemat(path("single.mat"), {"A": matlab(h32)})
    solve("mat v5 single", path("single.mat"), path("single_w.npy"), path("single_v.npy"))
    w, v = np.load(path("single_w.npy")), np.load(path("single_v.npy"))
    if w.dtype != np.float32 or v.dtype != np.complex64 or w.shape != (8, 3):
        fail("mat v5 single", f"w {w.dtype} {w.shape}, v {v.dtype}")
    else:
        check_solution("mat v5 single -> npy", h32, numpy_stack(w), numpy_stack(v))


def mat_v73_cases(rng):
    h = hermitian(rng, 4, 7)
    np.save(path("in73.npy"), np.asfortranarray(matlab(h)))
    r = subprocess.run([MAT_WRITE, path("in73.npy"), path("in73.mat"), "7.3", "A"], capture_output=True, text=True)
    if r.returncode != 0:
        fail("mat v7.3", f"mat_write: {r.stderr.strip()}")
        return
    solve("mat v7.3", path("in73.mat"), path("out73.mat"))
    with open(path("out73.mat"), "rb") as f:
        header = f.read(128)
    if header[124:128] != b"\x00\x02IM":
        fail("mat v7.3", f"the output is not v7.3 (header ends {header[124:128]!r})")
    try:
        import h5py
    except ImportError:
        print("mat v7.3: h5py missing, the output's contents are not checked (apt-get install python3-h5py)")
        return
    with h5py.File(path("out73.mat"), "r") as f:
        # HDF5 holds MATLAB's column-major arrays with their dimensions reversed.
        w = f["w"][()].T
        raw = f["v"][()]
        v = (raw["real"] + 1j * raw["imag"]).T
        classes = {k: f[k].attrs["MATLAB_class"] for k in ("w", "v")}
    if classes != {"w": b"double", "v": b"double"}:
        fail("mat v7.3", f"MATLAB_class {classes}")
    check_solution("mat v7.3 (libmatio in, h5py out)", h, numpy_stack(w), numpy_stack(v))
    solve("mat v7.3 -> v5", "--mat-version", "5", path("in73.mat"), path("out73_5.mat"))
    with open(path("out73_5.mat"), "rb") as f:
        header = f.read(128)
    if header[124:128] != b"\x00\x01IM":
        fail("mat v7.3 -> v5", f"--mat-version 5 wrote header {header[124:128]!r}")


def npy_matlab_layout(rng):
    h = hermitian(rng, 3, 6)
    np.save(path("nnb.npy"), matlab(h))  # a C-order view's copy: (n, n, B)
    solve("npy --layout matlab", "--layout", "matlab", path("nnb.npy"), path("nnb_w.npy"), path("nnb_v.npy"))
    w, v = np.load(path("nnb_w.npy")), np.load(path("nnb_v.npy"))
    if w.shape != (6, 3) or v.shape != (6, 6, 3):
        fail("npy --layout matlab", f"w {w.shape}, v {v.shape}")
    else:
        check_solution("npy --layout matlab", h, numpy_stack(w), numpy_stack(v))
    r = solve("npy auto layout", path("nnb.npy"), path("x.npy"), expect=1)
    if "--layout matlab" not in r.stderr:
        fail("npy auto layout", f"no --layout hint: {r.stderr.strip()}")


def main():
    rng = np.random.default_rng(28)
    npz_cases(rng)
    npy_matlab_layout(rng)
    if MAT_WRITE is None:
        print(".mat cases left out: eigstream-solve was built without libmatio")
    else:
        try:
            import scipy.io as sio
        except ImportError:
            sio = None
            print(".mat v5 cases left out: no SciPy (apt-get install python3-scipy)")
        if sio is not None:
            mat_v5_cases(rng, sio)
        mat_v73_cases(rng)
    if failures:
        print(f"{len(failures)} failures", file=sys.stderr)
        sys.exit(1)
    print("all passed")


main()
