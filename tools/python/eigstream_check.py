"""eigstream_check.py - check() and the closing report of the Python tests
(the counterpart of tests/test_check.h for C).

    from eigstream_check import check, report
    check(len(parts) == 2, f"parts: {len(parts)}")
    report("test_name")      # exits 1 after any failed check

Each test puts tools/python on sys.path already, for eigstream_client.
"""
import importlib
import sys

failures = 0


def require(*modules):
    """The named modules, imported (a list); without one of them the test is
    skipped: "SKIP: <why>" and exit status 77 (the tests' SKIP_RETURN_CODE)."""
    try:
        return [importlib.import_module(m) for m in modules]
    except ImportError as e:
        print(f"SKIP: {e}")
        sys.exit(77)


def check(cond, what):
    """Counts and prints a failure when cond is false; goes on either way, so
    one run names every failing case. Returns cond."""
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


def report(name):
    """Ends a test: "<name>: N failures" and exit status 1 when any check
    failed, else "<name>: all passed" (and the script goes on to exit 0)."""
    if failures:
        print(f"{name}: {failures} failures")
        sys.exit(1)
    print(f"{name}: all passed")


def outcome():
    """A main's exit status: 1 after "N failure(s)" on stderr when any check
    failed, else 0 after "ok"."""
    if failures:
        print(f"{failures} failure(s)", file=sys.stderr)
        return 1
    print("ok", file=sys.stderr)
    return 0
