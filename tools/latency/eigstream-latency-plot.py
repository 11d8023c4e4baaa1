#!/usr/bin/python3
"""eigstream-latency-plot: plots the latency report of eigstream-sink
--latency-csv and prints its percentiles.

  eigstream-latency-plot.py FILE.csv [--out PREFIX] [--deadline-ms MS]

Writes PREFIX-timeline.png (each frame's daemon stages stacked over the time
it was received: receive -> solve start, solve, solve end -> publish, whose
sum is end_to_end_ms; the transport to the sink as a line) and
PREFIX-histogram.png (end_to_end_ms with p50 and p99 marked), PREFIX being
FILE without .csv by default; a --deadline-ms line on both. Prints the
frame count and p50/p99/max (numpy.percentile, linear interpolation) of
every duration column, end_to_end_ms first.

Exit status: 0, 1 on an unreadable or empty report, 2 on a usage error.
Needs NumPy and matplotlib (Debian python3-numpy, python3-matplotlib); draws
with the Agg backend, so no display is needed.
"""
import argparse
import csv
import sys

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STAGES = ("receive_to_solve_ms", "solve_ms", "solve_to_publish_ms")
DURATIONS = ("end_to_end_ms",) + STAGES + ("transport_ms",)
COLUMNS = ("seq", "source_ns", "received_ns", "solve_start_ns", "solve_end_ns", "published_ns",
           "sink_ns") + DURATIONS


def read_report(path):
    """The report as {column: numpy array} (ns columns as int64), rows in file
    order. Raises ValueError naming what is wrong."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"missing columns {', '.join(missing)}")
        rows = list(reader)
    if not rows:
        raise ValueError("no frames")
    report = {}
    for c in COLUMNS:
        kind = np.float64 if c.endswith("_ms") else np.int64
        report[c] = np.array([kind(r[c]) for r in rows])
    return report


def percentiles(x):
    return np.percentile(x, 50), np.percentile(x, 99), np.max(x)


def plot_timeline(report, deadline_ms, path):
    t = (report["received_ns"] - report["received_ns"].min()) / 1e9
    order = np.argsort(t, kind="stable")
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.stackplot(t[order], *[report[s][order] for s in STAGES], labels=[s[:-3] for s in STAGES], alpha=0.8)
    ax.plot(t[order], report["transport_ms"][order], color="black", linewidth=0.8, label="transport (sink)")
    if deadline_ms:
        ax.axhline(deadline_ms, color="red", linestyle="--", label=f"deadline {deadline_ms:g} ms")
    ax.set_xlabel("received by the daemon, s from the first frame")
    ax.set_ylabel("ms")
    ax.set_title(f"eigstream per-frame latency ({len(t)} frames)")
    ax.legend(loc="upper right", fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_histogram(report, deadline_ms, path):
    e2e = report["end_to_end_ms"]
    p50, p99, _ = percentiles(e2e)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.hist(e2e, bins=max(10, min(60, len(e2e) // 2)), color="steelblue")
    ax.axvline(p50, color="green", label=f"p50 {p50:.3f} ms")
    ax.axvline(p99, color="orange", label=f"p99 {p99:.3f} ms")
    if deadline_ms:
        ax.axvline(deadline_ms, color="red", linestyle="--", label=f"deadline {deadline_ms:g} ms")
    ax.set_xlabel("end to end (daemon receipt -> published), ms")
    ax.set_ylabel("frames")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="eigstream-latency-plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", help="eigstream-sink --latency-csv report")
    parser.add_argument("--out", help="prefix of the two PNG files (default: the CSV path without .csv)")
    parser.add_argument("--deadline-ms", type=float, default=0.0, help="draw the deadline (0: none)")
    args = parser.parse_args(argv)
    prefix = args.out or (args.csv[:-4] if args.csv.endswith(".csv") else args.csv)
    try:
        report = read_report(args.csv)
    except (OSError, ValueError) as e:
        print(f"eigstream-latency-plot: {args.csv}: {e}", file=sys.stderr)
        return 1
    plot_timeline(report, args.deadline_ms, prefix + "-timeline.png")
    plot_histogram(report, args.deadline_ms, prefix + "-histogram.png")
    print(f"frames {len(report['seq'])}")
    for c in DURATIONS:
        p50, p99, mx = percentiles(report[c])
        print(f"{c} p50 {p50:.6f} p99 {p99:.6f} max {mx:.6f}")
    print(f"wrote {prefix}-timeline.png {prefix}-histogram.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
