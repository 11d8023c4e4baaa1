"""What test_deb.py, test_lintian.py and test_install.py share: a failure list that check()
fills (a failed check prints FAIL and the test goes on, so that one run names
every problem) and run(), a subprocess whose exit status is checked."""
import subprocess

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(args, env=None, expect=0, timeout=300):
    """Runs args, captured as text; expect None takes any exit status."""
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    check(expect is None or r.returncode == expect, f"{' '.join(args)} exited {r.returncode} (expected {expect}):\n"
          f"{r.stdout[-1500:]}{r.stderr[-1500:]}")
    return r
