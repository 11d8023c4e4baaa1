"""eigh, eigvalsh and Plan: NumPy arrays through an eig_plan of libeigstream-eig
(conventions and errors: the package docstring)."""
import ctypes
import operator
import threading

import numpy as np

from . import _library as lib_
from ._library import LibraryError  # noqa: F401 (re-exported by the package)

BACKENDS = ("auto", "cpu", "lapack", "cuda")
# Per-matrix info codes for invalid input (eig.h); info > 0 is the number of
# eigenvalues QR left unconverged.
INFO_NONFINITE = -1
INFO_NONREAL_DIAGONAL = -2

_PRECISION = {np.dtype(np.complex64): (lib_.EIG_COMPLEX_FLOAT, np.float32),
              np.dtype(np.complex128): (lib_.EIG_COMPLEX_DOUBLE, np.float64)}
# eigh's input dtype -> (the complex dtype solved, w's dtype, v's dtype), by
# numpy.linalg's rules: bool and integers solve as float64, float32 stays
# single; real input gives real eigenvectors.
_RESULT_TYPES = {np.dtype(np.complex64): (np.complex64, np.float32, np.complex64),
                 np.dtype(np.complex128): (np.complex128, np.float64, np.complex128),
                 np.dtype(np.float32): (np.complex64, np.float32, np.float32),
                 np.dtype(np.float64): (np.complex128, np.float64, np.float64)}
_INT_MAX = 2**31 - 1


class EigError(RuntimeError):
    """The library refused or failed a call (nothing was solved): .code is the
    eig_error value, .name its enum name ("EIG_ENOCUDA", ...)."""

    def __init__(self, code, what):
        self.code = code
        self.name = (lib_.ERROR_NAMES[code] if 0 <= code < len(lib_.ERROR_NAMES)
                     else f"eig_error {code}")
        message = lib_.load().eig_strerror(code).decode()
        super().__init__(f"{what}: {message} ({self.name})")


def _info_text(info):
    if info == INFO_NONFINITE:
        return "NaN or Inf in the referenced triangle"
    if info == INFO_NONREAL_DIAGONAL:
        return "diagonal element with a non-zero imaginary part"
    return f"{info} eigenvalues did not converge"


class MatrixError(np.linalg.LinAlgError):
    """Some matrices of the batch are invalid or did not converge.

    .indices  batch indices of the failed matrices, ascending ([0] for a single matrix)
    .info     the per-matrix info array (0 ok, INFO_NONFINITE, INFO_NONREAL_DIAGONAL,
              > 0 eigenvalues unconverged)
    .w, .v    the results of the whole call, NaN for the failed matrices (v is None
              for eigvalsh)
    """

    def __init__(self, info, w, v):
        self.info = info
        self.indices = [int(i) for i in np.flatnonzero(info)]
        self.w, self.v = w, v
        listed = "; ".join(f"{i}: {_info_text(int(info[i]))} (info {int(info[i])})"
                           for i in self.indices[:10])
        more = f"; and {len(self.indices) - 10} more" if len(self.indices) > 10 else ""
        super().__init__(f"{len(self.indices)} of {len(info)} matrices failed: {listed}{more}")


def _index(value, what, low):
    """value as an int in [low, INT_MAX] (a C int: ctypes would wrap a larger one)."""
    v = operator.index(value)
    if not low <= v <= _INT_MAX:
        raise ValueError(f"{what} = {v}: must be in {low}..{_INT_MAX}")
    return v


def _backend_code(lib, backend):
    """The eig_backend of a name, by the library's own name table."""
    code = ctypes.c_int()
    if not isinstance(backend, str) or lib.eig_backend_parse(backend.encode(), ctypes.byref(code)):
        raise ValueError(f"backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    return code.value


def _uplo_code(UPLO):
    """eig_uplo for a C-order NumPy array: the library reads column-major, so it
    sees the transpose, whose lower triangle is the array's upper one; the
    matrix it solves is the conjugate of ours (same eigenvalues, conjugate
    eigenvectors, which Plan conjugates back)."""
    u = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if u not in ("L", "U"):
        raise ValueError(f"UPLO {UPLO!r}: expected 'L' or 'U'")
    return lib_.EIG_UPPER if u == "L" else lib_.EIG_LOWER


class Plan:
    """A solver plan for repeated calls on arrays of one shape and dtype.

    Plan(n, batch=None, dtype=np.complex128, backend="auto", UPLO="L",
         vectors=True, threads=0, device=0)
    batch None solves (n, n) arrays, an int B solves (B, n, n) arrays.
    threads: CPU threads of the cpu/lapack backends (0 = all cores); device:
    the CUDA device. All workspace and the result arrays are allocated here:
    plan(a) returns (w, v) (w alone when vectors=False) as the plan's own
    arrays, overwritten by the next call (copy what you keep). An input that
    is not C-contiguous is copied into a staging array allocated once.
    .backend is the backend resolved ("cpu" when "auto" finds no GPU),
    .info the per-matrix info of the last call. Calls are serialised (the
    library executes a plan from one thread at a time). close() (or a with
    block) frees the plan.
    """

    def __init__(self, n, batch=None, dtype=np.complex128, backend="auto", UPLO="L",
                 vectors=True, threads=0, device=0):
        self._plan = ctypes.c_void_p()
        self._lib = lib = lib_.load()
        self.dtype = np.dtype(dtype)
        if self.dtype not in _PRECISION:
            raise TypeError(f"dtype {self.dtype}: eigstream solves complex64 and complex128")
        precision, real = _PRECISION[self.dtype]
        self.n = _index(n, "n", 1)
        self.batch = None if batch is None else _index(batch, "batch", 1)
        self.vectors = bool(vectors)
        count = 1 if self.batch is None else self.batch
        params = lib.eig_plan_params_default()
        params.n, params.batch, params.precision = self.n, count, precision
        params.job = lib_.EIG_JOB_VECTORS if self.vectors else lib_.EIG_JOB_VALUES
        params.storage = lib_.EIG_STORAGE_FULL
        params.uplo = _uplo_code(UPLO)
        params.backend = _backend_code(lib, backend)
        params.threads = _index(threads, "threads", 0)
        params.device = _index(device, "device", 0)
        e = lib.eig_plan_create(ctypes.byref(self._plan), ctypes.byref(params))
        if e != lib_.EIG_OK:
            raise EigError(e, f"Plan(n={self.n}, batch={self.batch}, dtype={self.dtype.name}, "
                              f"backend={backend!r})")
        resolved = lib.eig_plan_get_params(self._plan).contents.backend
        self.backend = lib.eig_backend_name(resolved).decode()
        self._shape = (self.n, self.n) if self.batch is None else (self.batch, self.n, self.n)
        self._w = np.empty((count, self.n), real)
        self._z = np.empty((count, self.n, self.n), self.dtype) if self.vectors else None
        self._abs = np.empty((count, self.n, self.n), real) if self.vectors else None
        self._info = np.zeros(count, np.intc)
        self._staging = None
        self._lock = threading.Lock()

    @property
    def info(self):
        """Per-matrix info of the last call (read-only view)."""
        view = self._info.view()
        view.flags.writeable = False
        return view

    def __call__(self, a):
        """Solves a (this plan's shape and dtype; only the UPLO triangle read).
        Raises MatrixError when some matrices fail (results attached),
        EigError when the library fails, ValueError/TypeError for a wrong
        shape or dtype."""
        a = np.asarray(a)
        if a.shape != self._shape:
            raise ValueError(f"shape {a.shape}: this plan solves arrays of shape {self._shape}")
        if a.dtype != self.dtype:
            raise TypeError(f"dtype {a.dtype}: this plan solves {self.dtype}")
        with self._lock:
            if not self._plan:
                raise ValueError("the plan is closed")
            if not a.flags.c_contiguous:
                if self._staging is None:
                    self._staging = np.empty(self._shape, self.dtype)
                np.copyto(self._staging, a)
                a = self._staging
            z = None if self._z is None else self._z.ctypes.data
            e = self._lib.eig_plan_execute(self._plan, a.ctypes.data, self._w.ctypes.data, z,
                                           self._info.ctypes.data)
            if e not in (lib_.EIG_OK, lib_.EIG_EMATRIX):
                raise EigError(e, f"executing the {self.backend} plan")
            w, v = self._results()
            if e == lib_.EIG_EMATRIX:
                raise MatrixError(self._info.copy(), w, v)
            return (w, v) if self.vectors else w

    def _results(self):
        """w and v in NumPy's layout: the library's column-major z, read as a
        C-order array, holds v transposed, and conjugated (see _uplo_code);
        then the phase convention (_normalize_phases)."""
        w, v = self._w, None
        if self._z is not None:
            np.conjugate(self._z, out=self._z)
            _normalize_phases(self._z, self._abs)
            v = self._z.swapaxes(1, 2)
        if self.batch is None:
            return w[0], (None if v is None else v[0])
        return w, v

    def close(self):
        """Frees the plan's workspace; later calls raise ValueError."""
        if getattr(self, "_plan", None):
            self._lib.eig_plan_destroy(ctypes.byref(self._plan))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def _normalize_phases(z, scratch):
    """The phase convention, one for every backend: each eigenvector (a row
    z[b, k, :] here) is multiplied by the unit complex number that makes its
    component of largest magnitude real and positive (the first such
    component on a tie; a zero vector is left alone). z is changed in place;
    scratch is a real array of z's shape."""
    np.abs(z, out=scratch)
    top = np.argmax(scratch, axis=-1)[..., None]
    component = np.take_along_axis(z, top, axis=-1)
    size = np.abs(component)
    phase = np.where(size > 0, np.conj(component) / np.where(size > 0, size, 1), 1)
    z *= phase
    np.put_along_axis(z, top, size, axis=-1)  # exactly real, no rounding left in its imaginary part


def _result_types(dtype):
    """(dtype solved, w dtype, v dtype) of an input dtype, or numpy.linalg's TypeError."""
    if dtype in _RESULT_TYPES:
        return _RESULT_TYPES[dtype]
    if dtype == np.bool_ or np.issubdtype(dtype, np.integer):
        return np.complex128, np.float64, np.float64
    raise TypeError(f"array type {dtype} is unsupported in linalg")


def _check_input(a, UPLO):
    """numpy.linalg.eigh's checks, in its order and with its exceptions."""
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


def _symmetric(a, UPLO):
    """The real symmetric matrices whose UPLO triangle a holds (the other one not read)."""
    low = np.tril(a) if UPLO.upper() == "L" else np.triu(a).swapaxes(-1, -2)
    return low + np.tril(low, -1).swapaxes(-1, -2)


def _real_vectors(a, w, v):
    """Real eigenvectors of the real symmetric matrices a (B, n, n) from the
    complex ones v the Hermitian solver gave. After _normalize_phases a
    vector of a simple eigenvalue is real up to rounding: its real part,
    renormalized. Within a cluster of close eigenvalues the solver may return
    any unitary mix, whose real and imaginary parts both lie in the real
    invariant subspace: an orthonormal basis of that subspace (SVD of
    [Re V, Im V]) rotated onto a's eigenvectors there (Rayleigh-Ritz)."""
    real = v.real.copy()
    eps = np.finfo(real.dtype).eps
    mixed = np.linalg.norm(v.imag, axis=-2) > np.sqrt(eps)
    for b in np.flatnonzero(mixed.any(axis=-1)):
        scale = max(np.abs(w[b]).max(), np.finfo(real.dtype).tiny)
        gaps = np.flatnonzero(np.diff(w[b]) > np.sqrt(eps) * scale) + 1
        for cluster in np.split(np.arange(w.shape[-1]), gaps):
            if not mixed[b, cluster].any():
                continue
            k = len(cluster)
            both = np.concatenate([v[b][:, cluster].real, v[b][:, cluster].imag], axis=1)
            basis = np.linalg.svd(both, full_matrices=False)[0][:, :k]
            _, rotation = np.linalg.eigh(basis.T @ a[b].astype(basis.dtype) @ basis)
            real[b][:, cluster] = basis @ rotation
    real /= np.linalg.norm(real, axis=-2, keepdims=True)
    z = np.ascontiguousarray(real.swapaxes(-1, -2))  # one vector per row, as _normalize_phases takes them
    _normalize_phases(z, np.empty_like(z))
    return z.swapaxes(-1, -2)


def _solve(a, UPLO, backend, threads, vectors):
    a = np.asarray(a)
    _check_input(a, UPLO)
    solved, w_type, v_type = _result_types(a.dtype)
    stack, n = a.shape[:-2], a.shape[-1]
    count = int(np.prod(stack, dtype=np.int64))
    if n == 0 or count == 0:
        w = np.empty(a.shape[:-1], w_type)
        return (w, np.empty(a.shape, v_type)) if vectors else w
    flat = a.reshape((count, n, n))
    try:
        with Plan(n, count, solved, backend, UPLO, vectors, threads) as plan:
            result = plan(flat.astype(solved, copy=False))
    except MatrixError as e:
        e.w = e.w.reshape(stack + (n,))
        e.v = None if e.v is None else e.v.reshape(a.shape)
        raise
    w = result[0] if vectors else result
    if not vectors:
        return w.reshape(stack + (n,))
    v = result[1]
    if np.dtype(v_type).kind == "f":
        v = _real_vectors(_symmetric(flat, UPLO), w, v).astype(v_type, copy=False)
    return w.reshape(stack + (n,)), v.reshape(a.shape)


def eigh(a, UPLO="L", backend="auto", threads=0):
    """numpy.linalg.eigh on eigstream's solver: (w, v) of a Hermitian (or real
    symmetric) array of shape (..., n, n), w ascending, v[..., :, k] the unit
    eigenvector of w[..., k]; only the UPLO triangle is read.

    dtypes as numpy: complex64/complex128 give float32/float64 w and complex v;
    float32/float64 give real w and real v; bool and integers solve as float64.
    Phase convention (every backend): each eigenvector's component of largest
    magnitude is real and positive (the first on a tie).
    backend: "auto" (cuda when built and a GPU is present, else cpu), "cpu",
    "lapack" or "cuda"; threads: CPU threads (0 = all cores).
    Raises numpy's LinAlgError (not 2-D or not square), TypeError (a dtype
    numpy.linalg refuses), ValueError (UPLO); MatrixError (a LinAlgError)
    naming the failed matrices by their index in the flattened stack;
    EigError when the library fails."""
    return _solve(a, UPLO, backend, threads, True)


def eigvalsh(a, UPLO="L", backend="auto", threads=0):
    """The eigenvalues alone (eigh's w), as numpy.linalg.eigvalsh."""
    return _solve(a, UPLO, backend, threads, False)


def cuda_built():
    """True when the library holds the cuda backend."""
    return bool(lib_.load().eig_cuda_built())


def cuda_device_count():
    """Usable CUDA devices (0 without CUDA, a driver or a GPU)."""
    return lib_.load().eig_cuda_device_count()


def library_path():
    """The path (or SONAME) libeigstream-eig was loaded from."""
    return lib_.path()
