#!/usr/bin/env python3
"""Draws `eigstream-bench pipeline` runs on several GPUs and writes a PNG. Two
CSV shapes ('#' comment lines allowed):

  host, configuration, one_gpu, two_gpus   one-GPU / two-GPU pairs: each pair's
                                           speed-up against the 1.8x target
  run, connections, gpus, frames_s         one daemon on 1..G GPUs: frames/s
                                           against GPUs, each run and connection
                                           count a line, beside linear scaling
                                           from the one-GPU figure (3.5x target
                                           at four GPUs)

    tools/bench/plot-gpu-scaling.py docs/gpu2-scaling.csv docs/gpu2-scaling.png
    tools/bench/plot-gpu-scaling.py docs/gpu4-scaling.csv docs/gpu4-scaling.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TARGET = 1.8


def read_pairs(path):
    with open(path, newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return [(r["host"], r["configuration"], float(r["one_gpu"]), float(r["two_gpus"])) for r in rows]


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def plot_curves(rows, out):
    """frames/s against GPUs, a line per (run, connections)."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    series = {}
    for r in rows:
        series.setdefault((r["run"], r["connections"]), []).append((int(r["gpus"]), float(r["frames_s"])))
    best = 0.0
    for (run, conn), points in sorted(series.items()):
        points.sort()
        ax.plot([g for g, _ in points], [f for _, f in points], marker="o",
                label="run %s, %s connections" % (run, conn))
        one = dict(points).get(1)
        if one:
            best = max(best, max(f / one for g, f in points if g > 1))
    ones = [float(r["frames_s"]) for r in rows if int(r["gpus"]) == 1]
    base = sorted(ones)[len(ones) // 2]
    gmax = max(int(r["gpus"]) for r in rows)
    ax.plot([1, gmax], [base, base * gmax], "k:", label="linear from the one-GPU median")
    ax.plot([gmax], [base * 3.5], "r*", markersize=12, label="target 3.5x at %d GPUs" % gmax)
    ax.set_xlabel("GPUs (solver.gpu_devices)")
    ax.set_ylabel("frames/s sustained")
    ax.set_xticks(sorted({int(r["gpus"]) for r in rows}))
    ax.legend(fontsize=7)
    ax.set_title("one daemon, signal mode, packed complex float in (each point one run)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("%s: %d points, best speed-up over its run's one GPU %.2fx" % (out, len(rows), best))


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: plot-gpu-scaling.py RUNS.csv OUT.png")
    rows = read_rows(argv[1])
    if rows and "gpus" in rows[0]:
        plot_curves(rows, argv[2])
        return
    pairs = read_pairs(argv[1])
    fig, (ax_rate, ax_ratio) = plt.subplots(1, 2, figsize=(11, 4.2))
    x = range(len(pairs))
    labels = ["%s: %s" % (h, c) for h, c, _, _ in pairs]
    ax_rate.bar([i - 0.2 for i in x], [p[2] for p in pairs], 0.4, label="[0]")
    ax_rate.bar([i + 0.2 for i in x], [p[3] for p in pairs], 0.4, label="[0, 1]")
    ax_rate.set_ylabel("frames/s")
    ax_rate.set_title("signal mode, packed complex float in", fontsize=9)
    ax_rate.set_xticks(list(x), labels, rotation=60, ha="right", fontsize=7)
    ax_rate.legend()
    ratios = [p[3] / p[2] for p in pairs]
    ax_ratio.bar(list(x), ratios, 0.6, color=["tab:green" if r >= TARGET else "tab:red" for r in ratios])
    ax_ratio.axhline(TARGET, color="k", linestyle="--", label="target %.1fx" % TARGET)
    ax_ratio.set_ylabel("two GPUs / one GPU")
    ax_ratio.set_xticks(list(x), labels, rotation=60, ha="right", fontsize=7)
    ax_ratio.legend()
    fig.suptitle("solver.gpu_devices [0] vs [0, 1] on 2 x NVIDIA H100 80GB HBM3 (each pair one run)")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    print("%s: %d pairs, median speed-up %.2fx" % (argv[2], len(pairs), sorted(ratios)[len(ratios) // 2]))


if __name__ == "__main__":
    main(sys.argv)
