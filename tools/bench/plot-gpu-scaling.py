#!/usr/bin/env python3
"""Draws the one-GPU / two-GPU pairs of `eigstream-bench pipeline` (a CSV:
host, configuration, one_gpu, two_gpus frames/s, '#' comment lines) as the
speed-up of each pair against the 1.8x target, and writes a PNG.

    tools/bench/plot-gpu-scaling.py docs/gpu2-scaling.csv docs/gpu2-scaling.png
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


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: plot-gpu-scaling.py PAIRS.csv OUT.png")
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
