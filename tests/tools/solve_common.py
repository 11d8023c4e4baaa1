"""What the eigstream-solve tests (test_solve_numpy.py, test_solve_formats.py)
share: NumPy or a skip (exit 77, which ctest reports as skipped), and the
failures, by case."""
import sys

try:
    import numpy  # noqa: F401  (the tests import it after this module)
except ImportError:
    print("SKIP: numpy is not installed for", sys.executable)
    sys.exit(77)

THRESHOLD = 60.0  # LAPACK's zhet21 threshold for the residual and orthogonality ratios
failures = []


def fail(case, message):
    failures.append(f"{case}: {message}")
    print(f"FAIL {case}: {message}", file=sys.stderr)
