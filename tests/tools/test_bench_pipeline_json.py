#!/usr/bin/python3
"""eigstream-bench pipeline's JSON names the input path it measured: the
daemon's connections, the source's sockets (one per connection with
--source-sockets each, else one), the input high-water mark and copy
threads, the CPUs of ZeroMQ's I/O threads (--io-cpus, realtime.cpu_affinity_io),
and the listed GPU devices (none on the lapack backend), as the command
line set them; every frame came back (exit 0). Not a benchmark: the
times are not looked at.

usage: test_bench_pipeline_json.py BENCH SCRATCH_DIR
"""
import json
import os
import subprocess
import sys

BENCH, SCRATCH = sys.argv[1:3]
os.makedirs(SCRATCH, exist_ok=True)
failures = []
last_cpu = str(max(os.sched_getaffinity(0)))
for sockets, want_sockets, io_cpus in (("each", 3, last_cpu), ("one", 1, "")):
    out = os.path.join(SCRATCH, f"pipeline-{sockets}.json")
    cmd = [BENCH, "pipeline", "--backend", "lapack", "--n", "16", "--matrices", "4", "--frames", "30",
           "--rate", "300", "--transport", "ipc", "--input-io-threads", "3", "--source-sockets", sockets,
           "--input-hwm", "6", "--copy-threads", "2", "--json", out] + (["--io-cpus", io_cpus] if io_cpus else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        failures.append(f"{sockets}: exit {r.returncode}; stdout {r.stdout[-800:]!r}; stderr {r.stderr[-800:]!r}")
        continue
    with open(out) as f:
        report = json.load(f)
    got = report.get("input")
    want = {"connections": 3, "source_sockets": want_sockets, "hwm": 6, "copy_threads": 2, "io_cpus": io_cpus}
    if got != want:
        failures.append(f"{sockets}: input {got}, want {want}")
    if report.get("gpu_devices") != []:
        failures.append(f"{sockets}: gpu_devices {report.get('gpu_devices')}, want []")
    if report.get("frames") != 30 or not report.get("max_rate", {}).get("fps", 0) > 0:
        failures.append(f"{sockets}: frames {report.get('frames')}, max_rate {report.get('max_rate')}")

for failure in failures:
    print("FAIL:", failure)
print("bench pipeline json:", "all passed" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
