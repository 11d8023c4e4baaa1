#!/usr/bin/python3
"""eigstream-bench iq end to end on a tiny cube, and its verdict judged
(label integration). Not a benchmark: the times are not looked at.

usage: test_bench_iq_smoke.py BENCH PYTHON SCRATCH_DIR

1. The bench forms the cube on the CPU, runs its NumPy peer and exits 0; the
   agreement line it prints has a difference within its bound and a
   nonzero max |R|.
2. The verdict can fail: the same run with --python pointing at a wrapper
   that perturbs our matrices (ours.bin, one element of the lower triangle,
   by 1e-6 of max |R|: far above rounding) before the real peer reads them.
   The bench must exit non-zero saying the two disagree, and the difference
   it prints must be the perturbation the wrapper made (the test's own
   number, not the bench's).
Exit 77 when PYTHON has no NumPy (the peer cannot run).
"""
import os
import re
import stat
import subprocess
import sys

BENCH, PYTHON, SCRATCH = sys.argv[1:4]
ARGS = ["iq", "--channels", "8", "--pulses", "16", "--gates", "32", "--fft", "20", "--bin-first", "15",
        "--bins", "10", "--segments", "2", "--guard", "2", "--window", "taylor", "--sidelobe-db", "30",
        "--runs", "2", "--device", "cpu", "--dir", SCRATCH]
AGREEMENT = re.compile(r"NumPy vs ours: max \|difference\| (\S+) \(max \|R\| (\S+), bound (\S+)\)")
failures = []

# The wrapper: adds DELTA to the real part of element (1, 0) of the first
# matrix of ours.bin (complex double, n x n column-major: index 1), writes
# the perturbation it made to PERTURBED, then runs the real peer.
WRAPPER = """#!{python}
import os, sys
import numpy as np
script, cube, window, ours = sys.argv[1:5]
a = np.fromfile(ours, dtype="<c16")
delta = 1e-6 * np.abs(a).max()
a[1] += delta
a.tofile(ours)
with open({perturbed!r}, "w") as f:
    f.write(repr(delta))
os.execv({python!r}, [{python!r}] + sys.argv[1:])
"""


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL", message, file=sys.stderr)
    return cond


def main():
    if subprocess.run([PYTHON, "-c", "import numpy"], capture_output=True).returncode != 0:
        print(f"SKIP: {PYTHON} has no NumPy (the bench's peer)")
        return 77
    os.makedirs(SCRATCH, exist_ok=True)
    r = subprocess.run([BENCH] + ARGS + ["--python", PYTHON], capture_output=True, text=True, timeout=300)
    m = AGREEMENT.search(r.stdout)
    if check(r.returncode == 0 and m is not None, f"bench iq: exit {r.returncode} {r.stdout!r} {r.stderr!r}"):
        diff, peak, bound = (float(v) for v in m.groups())
        check(peak > 0 and 0 <= diff <= bound, f"agreement line: difference {diff}, max |R| {peak}, bound {bound}")

    perturbed = os.path.join(SCRATCH, "perturbed.txt")
    wrapper = os.path.join(SCRATCH, "perturbing-python")
    with open(wrapper, "w") as f:
        f.write(WRAPPER.format(python=PYTHON, perturbed=perturbed))
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
    if os.path.exists(perturbed):
        os.remove(perturbed)
    r = subprocess.run([BENCH] + ARGS + ["--python", wrapper], capture_output=True, text=True, timeout=300)
    m = AGREEMENT.search(r.stdout)
    check(r.returncode != 0 and "disagree beyond rounding" in r.stderr,
          f"bench iq with perturbed matrices: exit {r.returncode} (want non-zero) {r.stderr!r}")
    if check(m is not None and os.path.exists(perturbed), f"perturbed run printed no agreement line: {r.stdout!r}"):
        with open(perturbed) as f:
            delta = float(f.read())
        diff = float(m.group(1))
        check(abs(diff - delta) <= 1e-3 * delta, f"perturbed run: difference {diff}, the wrapper added {delta}")
    print("bench iq smoke:", "FAIL" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
