#!/usr/bin/python3
"""The latency report end to end (label integration): eigstream-sim ->
eigstream (lapack, n 8) -> eigstream-sink --latency-csv, with a Python
subscriber on the daemon's PUB output beside the sink.

  test_latency_report.py EIGSTREAM EIGSTREAM_SIM EIGSTREAM_SINK TOOLS_DIR

1. The CSV has one row per frame, stage times in order within each row
   (received <= solve_start <= solve_end <= published <= sink), derived ms
   columns equal to the ns differences, and every frame's times equal to
   the meta part eigstream_client.decode_eigenspace reads from the same frame.
2. tools/latency/eigstream-latency-plot.py writes two plausible PNGs and
   prints the p99 numpy.percentile gives for the CSV column; a report
   without rows exits 1.
Exit 77 (skip) without NumPy, pyzmq or matplotlib.
"""
import csv
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import zmq
    import matplotlib  # noqa: F401 (the plot script needs it)
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

DAEMON, SIM, SINK, TOOLS = sys.argv[1:5]
sys.path.insert(0, os.path.join(TOOLS, "python"))
import eigstream_client as ec  # noqa: E402
from eigstream_check import check, report  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tools_daemon import start_daemon, stop_daemon  # noqa: E402

PLOT = os.path.join(TOOLS, "latency", "eigstream-latency-plot.py")
N, CELLS, FRAMES = 8, 4, 30
TIMES = ("received_ns", "solve_start_ns", "solve_end_ns", "published_ns")


def run_chain(tmp, csv_path):
    """Runs sim -> daemon -> sink + tap; returns {seq: (header, times)} of the tap.

    Readiness by handshake, not by sleeps: the sim streams (--frames 0) until
    the tap has seen a frame (its subscription has reached the daemon's PUB),
    then the sink starts and the sim streams on until the sink has checked
    its FRAMES frames; every frame the sink saw was published after the tap
    subscribed, so the tap has them all."""
    daemon = start_daemon(DAEMON, tmp, "lat", N, CELLS, "pub", "")
    ctx = zmq.Context()
    tap = ctx.socket(zmq.SUB)
    tap.setsockopt(zmq.SUBSCRIBE, b"")
    tap.connect(f"ipc://{tmp}/lat-out")
    sim = subprocess.Popen([SIM, "--endpoint", f"ipc://{tmp}/lat-in", "--n", str(N), "--cells", str(CELLS),
                            "--frames", "0", "--rate", "40", "--quiet"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tapped = {}

    def tap_one(timeout_ms):
        if not tap.poll(timeout_ms):
            return False
        h, times, _ = ec.decode_eigenspace(tap.recv_multipart())
        tapped[h["seq"]] = (h, times)
        return True

    check(tap_one(30000), "the tap saw no frame within 30 s")
    sink = subprocess.Popen([SINK, "--endpoint", f"ipc://{tmp}/lat-out", "--pattern", "sub", "--n", str(N),
                             "--frames", str(FRAMES), "--duration", "60", "--quiet", "--latency-csv", csv_path],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 90
    while sink.poll() is None and time.time() < deadline:
        tap_one(100)
    if sink.poll() is None:
        sink.kill()
        check(False, "sink did not stop after its frames")
    out, err = sink.communicate()
    check(sink.returncode in (0, 1) and "VERDICT" in out, f"sink exit {sink.returncode}: {out!r} {err!r}")
    sim.send_signal(signal.SIGINT)
    _, sim_err = sim.communicate(timeout=60)
    check(sim.returncode == 0, f"sim exit {sim.returncode} after SIGINT: {sim_err!r}")
    while tap_one(1000):  # what was published before the sim stopped
        pass
    stop_daemon(daemon)
    ctx.destroy(linger=0)
    return tapped


def check_csv(csv_path, tapped):
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    seqs = sorted(int(r["seq"]) for r in rows)
    check(len(rows) == FRAMES and seqs == list(range(seqs[0], seqs[0] + FRAMES)),
          f"{len(rows)} rows, seqs {[r['seq'] for r in rows]}: want {FRAMES} consecutive")
    for r in rows:
        ns = [int(r[c]) for c in ("source_ns",) + TIMES + ("sink_ns",)]
        check(ns == sorted(ns), f"seq {r['seq']}: times out of order {ns}")
        derived = {"receive_to_solve_ms": ns[2] - ns[1], "solve_ms": ns[3] - ns[2], "solve_to_publish_ms":
                   ns[4] - ns[3], "end_to_end_ms": ns[4] - ns[1], "transport_ms": ns[5] - ns[4]}
        for c, d in derived.items():
            check(abs(float(r[c]) - d / 1e6) < 1e-6, f"seq {r['seq']}: {c} {r[c]} != {d / 1e6}")
        seq = int(r["seq"])
        if check(seq in tapped, f"seq {seq}: the sink saw it, the tap (subscribed first) did not"):
            h, times = tapped[seq]
            check(int(r["source_ns"]) == h["timestamp_ns"] and all(int(r[c]) == times[c] for c in TIMES),
                  f"seq {seq}: csv {r} != meta {times} source {h['timestamp_ns']}")
    return rows


def check_plot(tmp, csv_path, rows):
    r = subprocess.run(["/usr/bin/python3", PLOT, csv_path, "--out", os.path.join(tmp, "plot"),
                        "--deadline-ms", "1000"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"plot exit {r.returncode}: {r.stderr!r}")
    for name in ("plot-timeline.png", "plot-histogram.png"):
        path = os.path.join(tmp, name)
        data = open(path, "rb").read() if os.path.exists(path) else b""
        check(data[:8] == b"\x89PNG\r\n\x1a\n" and 5000 < len(data) < 5000000, f"{name}: {len(data)} bytes")
    m = re.search(r"^end_to_end_ms p50 (\S+) p99 (\S+) max (\S+)$", r.stdout, re.M)
    e2e = np.array([float(row["end_to_end_ms"]) for row in rows])
    check(m is not None and abs(float(m.group(2)) - np.percentile(e2e, 99)) < 1e-6 and
          abs(float(m.group(3)) - e2e.max()) < 1e-6, f"printed {r.stdout!r}, p99 {np.percentile(e2e, 99)}")
    empty = os.path.join(tmp, "empty.csv")
    with open(csv_path) as f, open(empty, "w") as g:
        g.write(f.readline())
    r = subprocess.run(["/usr/bin/python3", PLOT, empty], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "no frames" in r.stderr, f"empty report: exit {r.returncode} {r.stderr!r}")


with tempfile.TemporaryDirectory() as tmp:
    csv_path = os.path.join(tmp, "latency.csv")
    tapped = run_chain(tmp, csv_path)
    rows = check_csv(csv_path, tapped) if os.path.exists(csv_path) else check(False, "no CSV written")
    if rows:
        check_plot(tmp, csv_path, rows)

report("test_latency_report")
