#!/usr/bin/env python3
"""Draws `eigstream-bench pipeline` runs on several GPUs and writes a PNG. Two
CSV shapes ('#' comment lines allowed):

  host, configuration, one_gpu, two_gpus   one-GPU / two-GPU pairs: each pair's
                                           speed-up against the 1.8x target
  run, connections[, sockets][, io_cpus], gpus, frames_s
                                           one daemon on 1..G GPUs: frames/s
                                           against GPUs, a line per run coloured
                                           by connections and source sockets
                                           (and io_cpus: ZeroMQ's I/O threads on
                                           CPUs of their own, --io-cpus),
                                           beside linear scaling from the one-GPU
                                           median, and each run's G-GPU / 1-GPU
                                           speed-up against the 3.5x target

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
    """frames/s against GPUs, a line per run, coloured by its input (connections
    and source sockets; a CSV without the sockets column had one); beside it
    each run's speed-up of its most GPUs over its one GPU, against the target."""
    fig, (ax, ax_ratio) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [3, 2]})
    series = {}
    for r in rows:
        key = (r["run"], int(r["connections"]), int(r.get("sockets") or 1), r.get("io_cpus") or "")
        series.setdefault(key, []).append((int(r["gpus"]), float(r["frames_s"])))
    configs = sorted({(c, s, io) for _, c, s, io in series})
    colours = {cfg: plt.cm.tab10(i) for i, cfg in enumerate(configs)}
    gmax = max(int(r["gpus"]) for r in rows)
    labelled, ratios = set(), []
    def order(kv):  # by input, then run number ("s2" before "10")
        run = kv[0][0]
        digits = run.lstrip("s")
        return kv[0][1:], run[: len(run) - len(digits)], int(digits) if digits.isdigit() else 0, run

    for (run, conn, sockets, io), points in sorted(series.items(), key=order):
        points.sort()
        cfg = (conn, sockets, io)
        name = "%d connections, %d source socket%s%s" % (conn, sockets, "" if sockets == 1 else "s",
                                                        ", I/O threads on CPUs " + io if io else "")
        ax.plot([g for g, _ in points], [f for _, f in points], marker="o", color=colours[cfg], alpha=0.7,
                linewidth=1, label=None if cfg in labelled else name)
        labelled.add(cfg)
        rate = dict(points)
        if 1 in rate and gmax in rate:
            ratios.append(("%s" % run, cfg, rate[gmax] / rate[1]))
    ones = [float(r["frames_s"]) for r in rows if int(r["gpus"]) == 1]
    base = sorted(ones)[len(ones) // 2]
    ax.plot([1, gmax], [base, base * gmax], "k:", label="linear from the one-GPU median")
    ax.plot([gmax], [base * 3.5], "r*", markersize=12, label="target 3.5x at %d GPUs" % gmax)
    ax.set_xlabel("GPUs (solver.gpu_devices)")
    ax.set_ylabel("frames/s sustained")
    ax.set_xticks(sorted({int(r["gpus"]) for r in rows}))
    ax.legend(fontsize=7)
    ax.set_title("one daemon, signal mode, packed complex float in (a line per run)", fontsize=9)
    ax_ratio.bar(range(len(ratios)), [x for _, _, x in ratios], color=[colours[c] for _, c, _ in ratios])
    ax_ratio.axhline(3.5, color="r", linestyle="--", label="target 3.5x")
    ax_ratio.set_xticks(range(len(ratios)), ["%s\n%d/%d%s" % (run, c, s, "\nio" if io else "")
                                             for run, (c, s, io), _ in ratios], fontsize=6)
    ax_ratio.set_xlabel("run, connections/source sockets")
    ax_ratio.set_ylabel("%d GPUs / 1 GPU, same run" % gmax)
    ax_ratio.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    best = max((x for _, _, x in ratios), default=0.0)
    print("%s: %d points, %d runs with 1 and %d GPUs, best speed-up %.2fx" % (out, len(rows), len(ratios), gmax, best))
    for cfg in configs:
        xs = sorted(x for _, c, x in ratios if c == cfg)
        if xs:
            print("  %d connections, %d source socket(s)%s: %d runs, speed-ups %s, median %.2fx" % (
                cfg[0], cfg[1], ", I/O threads on CPUs " + cfg[2] if cfg[2] else "", len(xs), " ".join("%.2f" % x for x in xs),
                (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2))


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
