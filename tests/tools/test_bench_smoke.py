#!/usr/bin/python3
"""eigstream-bench CPU mode runs end to end on a tiny batch: every solver
available, accurate (ratios under 60), and the JSON well formed. Not a
benchmark: the times are not looked at.

usage: test_bench_smoke.py BENCH SCRATCH_DIR
"""
import json
import os
import subprocess
import sys

BENCH, SCRATCH = sys.argv[1:3]
out = os.path.join(SCRATCH, "bench.json")
failures = []

r = subprocess.run([BENCH, "--n", "16", "--batch", "6", "--runs", "1", "--threads", "2",
                    "--json", out], capture_output=True, text=True, timeout=120)
if r.returncode != 0:
    failures.append(f"exit {r.returncode}; stdout {r.stdout!r}; stderr {r.stderr!r}")
else:
    with open(out) as f:
        report = json.load(f)
    solvers = {(x["precision"], x["solver"]) for x in report["results"]}
    for precision in ("c64", "c128"):
        for solver in ("cpu", "eig-lapack", "cheev" if precision == "c64" else "zheev"):
            if (precision, solver) not in solvers:
                failures.append(f"{precision} {solver} missing from the JSON")
    for x in report["results"]:
        case = f"{x['precision']} {x['solver']} n 16"
        if not x["available"]:
            failures.append(f"{case}: unavailable: {x['why']}")
        elif x["failed"] or x["residual_max"] is None or x["residual_max"] >= 60 \
                or x["orthogonality_max"] is None or x["orthogonality_max"] >= 60:
            failures.append(f"{case}: residual ratio {x['residual_max']}, orthogonality ratio "
                            f"{x['orthogonality_max']}, {x['failed']} failed")

for args, want in ((["--backend", "lapack"], 1), (["--runs", "0"], 1), (["--help"], 0)):
    r = subprocess.run([BENCH] + args, capture_output=True, text=True, timeout=60)
    if r.returncode != want:
        failures.append(f"{' '.join(args)}: exit {r.returncode}, want {want}")

for failure in failures:
    print("FAIL", failure, file=sys.stderr)
sys.exit(1 if failures else 0)
