"""The ctypes view of libeigstream-eig: where the library is found, and the
types and signatures of eig/eig.h that the solver module calls.

The names and values below mirror eig.h; tests/install/test_python_eigh.py
checks them against the header (field order of eig_plan_params, the order of
enum eig_error), so that a change of the C API cannot pass unnoticed.
"""
import ctypes
import ctypes.util
import os

# enum eig_error, in eig.h's order (the value is the index).
ERROR_NAMES = ("EIG_OK", "EIG_EINVAL", "EIG_ENOMEM", "EIG_EMATRIX", "EIG_ENOCUDA",
               "EIG_ENODEVICE", "EIG_EDEVICE", "EIG_EUNSUPPORTED", "EIG_EBACKEND")
EIG_OK = 0
EIG_EMATRIX = 3

EIG_COMPLEX_FLOAT = 1
EIG_COMPLEX_DOUBLE = 2
EIG_JOB_VALUES = 0
EIG_JOB_VECTORS = 1
EIG_STORAGE_FULL = 0
EIG_LOWER = 0
EIG_UPPER = 1

# The SONAME this binding speaks to (eig/install.cmake EIGSTREAM_EIG_SOVERSION).
SONAME = "libeigstream-eig.so.2"


class CudaTuning(ctypes.Structure):
    """eig_cuda_tuning."""
    _fields_ = [("qr_path", ctypes.c_int), ("qr_log_cap", ctypes.c_int),
                ("qr_group_min", ctypes.c_int), ("qr_bulges", ctypes.c_int),
                ("back_path", ctypes.c_int), ("tridiag_path", ctypes.c_int)]


class PlanParams(ctypes.Structure):
    """eig_plan_params (every enum is an int-sized C enum)."""
    _fields_ = [("n", ctypes.c_int), ("batch", ctypes.c_int), ("precision", ctypes.c_int),
                ("job", ctypes.c_int), ("storage", ctypes.c_int), ("uplo", ctypes.c_int),
                ("backend", ctypes.c_int), ("threads", ctypes.c_int), ("device", ctypes.c_int),
                ("device_only", ctypes.c_int), ("cuda", CudaTuning)]


class LibraryError(OSError):
    """libeigstream-eig could not be loaded; the message lists every place tried."""


def _configured_path():
    """The library path the install recorded (eigstream/_config.py, written by
    tools/package/CMakeLists.txt), or None from a source tree or a pip install."""
    try:
        from . import _config
    except ImportError:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, _config.LIBRARY_RELATIVE))


def _candidates(tried):
    """Where to look, in order: EIGSTREAM_LIB alone when set (a wrong path
    there is an error, not a reason to pick up another copy), else the
    configured path, then the system's search (ldconfig cache), which must
    name this binding's SONAME (another is another ABI); what is passed over
    is noted in tried."""
    env = os.environ.get("EIGSTREAM_LIB")
    if env:
        return [("EIGSTREAM_LIB", env)]
    found = []
    configured = _configured_path()
    if configured:
        found.append(("install path", configured))
    system = ctypes.util.find_library("eigstream-eig")
    if system == SONAME:
        found.append(("find_library", system))
    elif system:
        tried.append(f"find_library found {system}, this binding needs {SONAME}")
    return found


def _declare(lib):
    """Sets argtypes/restype of every function the binding calls."""
    P, c_int, c_void_p = ctypes.POINTER, ctypes.c_int, ctypes.c_void_p
    sig = {
        "eig_plan_params_default": ([], PlanParams),
        "eig_plan_create": ([P(c_void_p), P(PlanParams)], c_int),
        "eig_plan_execute": ([c_void_p, c_void_p, c_void_p, c_void_p, c_void_p], c_int),
        "eig_plan_destroy": ([P(c_void_p)], None),
        "eig_plan_get_params": ([c_void_p], P(PlanParams)),
        "eig_strerror": ([c_int], ctypes.c_char_p),
        "eig_backend_name": ([c_int], ctypes.c_char_p),
        "eig_backend_parse": ([ctypes.c_char_p, P(c_int)], c_int),
        "eig_cuda_built": ([], c_int),
        "eig_cuda_device_count": ([], c_int),
    }
    for name, (args, res) in sig.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res


_lib = None
_lib_path = None


def load():
    """The loaded library (loaded once); raises LibraryError naming every
    candidate and why it failed."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for origin, path in _candidates(tried):
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{origin} {path}: {e}")
            continue
        _declare(lib)
        _lib, _lib_path = lib, path
        return lib
    if not tried:
        tried.append('no EIGSTREAM_LIB, no install path, find_library("eigstream-eig") found nothing')
    raise LibraryError("libeigstream-eig not loaded; tried: " + "; ".join(tried))


def path():
    """The path or name the library was loaded from (loads it if needed)."""
    load()
    return _lib_path
