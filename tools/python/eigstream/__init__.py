"""eigstream from Python: the batched Hermitian eigensolver (libeigstream-eig,
through ctypes) and the wire protocol v1 client.

    import numpy as np, eigstream
    w, v = eigstream.eigh(a)                  # a: (..., n, n), any dtype numpy.linalg.eigh takes
    w = eigstream.eigvalsh(a, backend="lapack")
    with eigstream.Plan(128, 180, np.complex64, backend="cuda") as plan:
        for a in frames:
            w, v = plan(a)                    # no allocation per call

A drop-in for numpy.linalg.eigh / eigvalsh: the same shapes ((..., n, n)),
dtypes (complex64/complex128 -> complex v; float32/float64 -> real v; bool
and integers solve as float64), UPLO ('L' default, only that triangle read),
w ascending, v[..., :, k] the unit eigenvector of w[..., k], and the same
exceptions for a bad shape, dtype or UPLO. Eigenvectors follow one phase
convention on every backend: each one's component of largest magnitude is
real and positive (the first on a tie); numpy fixes none. One difference: a
diagonal element whose imaginary part is above n ulp of the largest element
makes the matrix invalid (numpy drops it).
A matrix that is invalid (NaN/Inf, non-real diagonal) or does not converge
raises MatrixError naming its batch indices (e.indices, e.info), with the
results of the whole batch attached (NaN for the bad ones). Any other failure
raises EigError with the library's code and message.

The shared library is looked up in this order: the EIGSTREAM_LIB environment
variable (a path), the path recorded by the install (eigstream/_config.py,
relative to this package), then ctypes.util.find_library("eigstream-eig").

eigstream.read_recording(NAME) reads an eigstream SigMF recording into NumPy
arrays in the natural orientation (docs/recording.md, "Reading recordings").

eigstream.client is the wire protocol client (tools/python/eigstream_client.py).
"""
__version__ = "0.1.0"  # the project's version (CMakeLists.txt, pyproject.toml: a test keeps them equal)

from ._solver import (  # noqa: F401
    BACKENDS,
    INFO_NONFINITE,
    INFO_NONREAL_DIAGONAL,
    EigError,
    LibraryError,
    MatrixError,
    Plan,
    cuda_built,
    cuda_device_count,
    eigh,
    eigvalsh,
    library_path,
)

from ._recording import Recording, read_recording  # noqa: F401,E402

__all__ = ["__version__", "Recording", "read_recording", "BACKENDS", "INFO_NONFINITE",
           "INFO_NONREAL_DIAGONAL", "EigError", "LibraryError", "MatrixError", "Plan", "cuda_built",
           "cuda_device_count", "eigh", "eigvalsh", "library_path"]
