#!/usr/bin/python3
"""Soak test: eigstream-sim -> eigstream (daemon) -> eigstream-sink at a fixed
rate for a given duration, watching the daemon for leaks.

  eigstream_soak.py --build build --duration 3600 --rate 1 --out soak-results/
  (normally through tools/soak/eigstream-soak.sh)

Every --sample-s seconds it reads the daemon's VmRSS (/proc/PID/status) and
open file descriptors (/proc/PID/fd), then the daemon's metrics document
(GET /api/metrics on its HTTP server, metrics.http = 127.0.0.1:0, the port
read from the dashboard line of its log; after the /proc figures, so that
the fd count never holds a connection of our own). The sink writes one latency line per
frame (--latency-csv), from which the end-to-end p99 of each minute comes.

Verdict (exit 1 on any, 0 otherwise, 2 on a usage or startup error):
  - frames lost: sent by the simulator - received by the sink != 0, or the
    daemon's accounting (in = out, no drop, no reject) disagrees;
  - RSS growth after --warmup-s: least-squares slope of the RSS floor (the
    minimum of each minute: rss_baseline says why) x the post-warm-up span
    beyond +-rss_bound_mb (default 1 MB);
  - fds growth: the last sample after warm-up above the first one;
  - the daemon exiting non-zero at SIGTERM, or the sink's VERDICT FAIL.
Writes OUT/samples.csv (t_s, rss_kb, fds, frames_in, frames_out, dropped,
e2e_p99_us), OUT/minutes.csv (minute, frames, p50_ms, p99_ms, max_ms),
OUT/report.json, OUT/report.txt, and with --plot OUT/soak.png.
--report-only recomputes the reports of an earlier run in OUT.
Needs only the Python standard library (matplotlib for --plot), so that it
runs on hosts without NumPy or pyzmq, the GPU machine among them.
"""
import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build", help="build directory with app/ and tools/")
    p.add_argument("--duration", type=float, default=3600.0, help="seconds of streaming")
    p.add_argument("--rate", type=float, default=1.0, help="frames/s sent")
    p.add_argument("--n", type=int, default=128, help="matrix order")
    p.add_argument("--cells", type=int, default=180, help="matrices per frame")
    p.add_argument("--backend", default="cpu", choices=["cpu", "lapack", "cuda", "auto"])
    p.add_argument("--cpu-threads", type=int, default=1)
    p.add_argument("--overflow", default="drop_oldest", choices=["drop_oldest", "block"],
                   help="the daemon's frame.overflow_policy: drop_oldest (the default, as deployed) "
                        "or block (back-pressure the simulator instead of dropping: what a soak on a "
                        "shared machine uses so that nothing is lost to other jobs' CPU load)")
    p.add_argument("--warmup-s", type=float, default=None,
                   help="samples before this are not in the slope (default: min(300, duration/4))")
    p.add_argument("--sample-s", type=float, default=5.0, help="seconds between RSS/fd samples")
    p.add_argument("--rss-bound-mb", type=float, default=1.0, help="allowed |RSS growth| after warm-up")
    p.add_argument("--out", default="soak-results", help="directory for the CSVs and reports")
    p.add_argument("--plot", action="store_true", help="write OUT/soak.png (matplotlib)")
    p.add_argument("--tag", default=str(os.getpid()), help="ipc endpoint suffix")
    p.add_argument("--report-only", action="store_true",
                   help="recompute OUT's reports from its CSVs and report.json (no run)")
    a = p.parse_args()
    if a.warmup_s is None:
        a.warmup_s = min(300.0, a.duration / 4)
    if a.duration <= 0 or a.rate <= 0 or a.sample_s <= 0:
        p.error("--duration, --rate and --sample-s must be positive")
    return a


def daemon_config(a, eps):
    """The daemon's config text: ipc endpoints eps, output PUSH (lossless to
    the sink), metrics every second on the ZeroMQ socket and on HTTP at
    127.0.0.1 (any free port), the overflow policy of --overflow."""
    return f'''
input = {{ endpoint = "{eps['in']}"; }};
output = {{ endpoint = "{eps['out']}"; pattern = "push"; }};
solver = {{ n = {a.n}; matrices = {a.cells}; backend = "{a.backend}"; cpu_threads = {a.cpu_threads}; }};
metrics = {{ endpoint = "{eps['metrics']}"; interval_ms = 1000; http = "127.0.0.1:0"; }};
frame = {{ overflow_policy = "{a.overflow}"; }};
'''


def read_rss_kb(pid):
    """VmRSS of pid in kB (-1 when the line is missing)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def count_fds(pid):
    """Open file descriptors of pid (entries of /proc/PID/fd)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def metrics_url(daemon_log, daemon, timeout=60.0):
    """The daemon's /api/metrics URL, from the "dashboard: http://HOST:PORT/"
    line of its log; None when the daemon exits or says nothing in timeout s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and daemon.poll() is None:
        with open(daemon_log) as f:
            m = re.search(r"dashboard: (http://[^/\s]+)/", f.read())
        if m:
            return m.group(1) + "/api/metrics"
        time.sleep(0.05)
    return None


def latest_metrics(url, last):
    """The daemon's current metrics document (or last, when there is no
    URL or the server does not answer with one)."""
    if url is None:
        return last
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())
    except (OSError, ValueError):  # urllib.error.URLError is an OSError
        return last


def settled_metrics(url, sent, timeout=30.0):
    """The daemon's metrics document once it accounts for every frame the
    simulator sent (frames in >= sent, none in flight): the document is
    refreshed every metrics interval, so one read right after the run may
    predate its last frames, more so on a loaded machine. After timeout s
    (frames lost: the verdict says so) the last one read, or None."""
    deadline, doc = time.monotonic() + timeout, None
    while url is not None:
        doc = latest_metrics(url, doc)
        frames = (doc or {}).get("frames", {})
        if (frames.get("in", 0) >= sent and frames.get("in_flight") == 0) or time.monotonic() > deadline:
            return doc
        time.sleep(0.1)
    return doc


def sample_row(t, pid, url, doc):
    """One samples.csv row at t seconds: /proc figures, then the counters of
    the metrics document at url (doc when none comes); (row, document)."""
    rss_kb, fds = read_rss_kb(pid), count_fds(pid)
    doc = latest_metrics(url, doc)
    frames = (doc or {}).get("frames", {})
    e2e = (doc or {}).get("latency_us", {}).get("end_to_end", {})
    return {"t_s": round(t, 3), "rss_kb": rss_kb, "fds": fds,
            "frames_in": frames.get("in", 0), "frames_out": frames.get("out", 0),
            "dropped": frames.get("dropped", 0), "e2e_p99_us": e2e.get("p99", 0)}, doc


def start_processes(a, eps, out, cfg):
    """Daemon first (it binds), then the sink, then the simulator;
    (daemon, sink, sim, frames to send, metrics URL or None)."""
    tools = os.path.join(a.build, "tools")
    daemon_log = open(os.path.join(out, "daemon.log"), "w")
    daemon = subprocess.Popen([os.path.join(a.build, "app", "eigstream"), "-c", cfg],
                              stderr=daemon_log, stdout=daemon_log)
    url = metrics_url(os.path.join(out, "daemon.log"), daemon)  # its sockets are bound by then
    frames = int(round(a.duration * a.rate))
    sink = subprocess.Popen([os.path.join(tools, "sink", "eigstream-sink"), "--endpoint", eps["out"],
                             "--pattern", "pull", "--n", str(a.n), "--frames", str(frames), "--quiet",
                             "--latency-csv", os.path.join(out, "latency.csv"),
                             "--json", os.path.join(out, "sink.json")],
                            stdout=open(os.path.join(out, "sink.log"), "w"), stderr=subprocess.STDOUT)
    sim = subprocess.Popen([os.path.join(tools, "sim", "eigstream-sim"), "--endpoint", eps["in"],
                            "--n", str(a.n), "--cells", str(a.cells), "--rate", str(a.rate),
                            "--frames", str(frames), "--quiet"],
                           stdout=open(os.path.join(out, "sim.log"), "w"), stderr=subprocess.STDOUT)
    return daemon, sink, sim, frames, url


def monitor(a, daemon, sink, sim, url, samples_csv):
    """Samples the daemon until the sink has finished (or a time limit past
    the duration). Returns (samples, last metrics document)."""
    samples, doc, t0 = [], None, time.monotonic()
    limit = a.duration + 120 + a.duration * 0.1
    writer = csv.DictWriter(samples_csv, ["t_s", "rss_kb", "fds", "frames_in", "frames_out",
                                          "dropped", "e2e_p99_us"])
    writer.writeheader()
    next_t, sim_done = t0, None
    while sink.poll() is None and daemon.poll() is None and time.monotonic() - t0 < limit:
        now = time.monotonic()
        if sim_done is None and sim.poll() is not None:
            sim_done = now
        if sim_done is not None and now - sim_done > 30:
            break  # frames were lost: the sink would wait for them forever
        if now >= next_t:
            try:
                row, doc = sample_row(now - t0, daemon.pid, url, doc)
            except OSError:
                break  # the daemon exited between the poll and /proc: its status tells
            samples.append(row)
            writer.writerow(row)
            samples_csv.flush()
            next_t += a.sample_s
        time.sleep(min(0.5, max(0.0, next_t - time.monotonic())))
    return samples, latest_metrics(url, doc)


def stop(proc, sig=signal.SIGTERM, timeout=30):
    """Signals proc unless it has exited, kills it after timeout s; its exit status."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def slope_per_s(ts, ys):
    """Least-squares slope of ys against ts (units of y per second)."""
    if len(ts) < 2:
        return 0.0
    t_mean, y_mean = sum(ts) / len(ts), sum(ys) / len(ys)
    sxx = sum((t - t_mean) ** 2 for t in ts)
    if sxx == 0:
        return 0.0
    return sum((t - t_mean) * (y - y_mean) for t, y in zip(ts, ys)) / sxx


def percentile(values, q):
    """The q-th percentile of values, linear between the closest ranks (as
    NumPy's default): sorted[(len - 1) q / 100], interpolated."""
    v = sorted(values)
    x = (len(v) - 1) * q / 100.0
    i = int(x)
    if i + 1 >= len(v):
        return float(v[-1])
    return float(v[i] + (v[i + 1] - v[i]) * (x - i))


def rss_baseline(ts, rss_mb):
    """The RSS floor: the minimum of each window of min(60 s, span / 10) (at
    least one sample), at the window's mid time; (times, MB). A leak raises
    every sample, the floor included; a frame that libzmq holds while the
    daemon catches up (~47 MB at 180 x 128 complex double) raises only some,
    and would swing a fit of the raw samples by more than the bound."""
    if len(ts) < 2:
        return ts, rss_mb
    width = max(min(60.0, (ts[-1] - ts[0]) / 10), 1e-9)
    windows = {}
    for t, y in zip(ts, rss_mb):
        windows.setdefault(int((t - ts[0]) // width), []).append((t, y))
    mids = [(w[0][0] + w[-1][0]) / 2 for w in windows.values()]
    return mids, [min(y for _, y in w) for w in windows.values()]


def minute_percentiles(latency_path):
    """End-to-end ms (published - received in the daemon) per minute of sink
    receipt: [(minute, frames, p50, p99, max)]."""
    rows = []
    with open(latency_path) as f:
        for r in csv.DictReader(f):
            if r.get("end_to_end_ms"):  # a line cut short while the sink writes
                rows.append((int(r["sink_ns"]), float(r["end_to_end_ms"])))
    if not rows:
        return []
    t0 = rows[0][0]
    by_minute = {}
    for ns, ms in rows:
        by_minute.setdefault((ns - t0) // 60_000_000_000, []).append(ms)
    return [(m, len(v), percentile(v, 50), percentile(v, 99), float(max(v)))
            for m, v in sorted(by_minute.items())]


def analyse(a, samples, minutes, sent, received, doc, daemon_rc, sink_rc):
    """The report dictionary and the list of failure reasons."""
    warm = [s for s in samples if s["t_s"] >= a.warmup_s]
    ts = [s["t_s"] for s in warm]
    rss_mb = [s["rss_kb"] / 1024.0 for s in warm]
    slope = slope_per_s(*rss_baseline(ts, rss_mb))
    span = (ts[-1] - ts[0]) if len(ts) > 1 else 0.0
    fds = [s["fds"] for s in warm]
    frames = (doc or {}).get("frames", {})
    p99s = [m[3] for m in minutes]
    r = {"duration_s": a.duration, "rate": a.rate, "n": a.n, "cells": a.cells, "backend": a.backend,
         "cpu_threads": a.cpu_threads, "warmup_s": a.warmup_s, "samples": len(samples),
         "frames_sent": sent, "frames_received": received, "frames_lost": sent - received,
         "daemon": {k: frames.get(k) for k in ("in", "out", "late", "dropped", "rejected", "in_flight")},
         "daemon_exit": daemon_rc, "sink_exit": sink_rc,
         "rss_mb_start": samples[0]["rss_kb"] / 1024.0 if samples else None,
         "rss_mb_after_warmup": rss_mb[0] if rss_mb else None,
         "rss_mb_end": samples[-1]["rss_kb"] / 1024.0 if samples else None,
         "rss_mb_max_after_warmup": max(rss_mb) if rss_mb else None,
         "rss_slope_mb_per_hour": slope * 3600.0, "rss_growth_after_warmup_mb": slope * span,
         "fds_after_warmup": fds[0] if fds else None, "fds_end": fds[-1] if fds else None,
         "fds_min": min(fds) if fds else None, "fds_max": max(fds) if fds else None,
         "p99_ms_per_minute_min": min(p99s) if p99s else None,
         "p99_ms_per_minute_max": max(p99s) if p99s else None, "minutes": len(minutes)}
    fail = []
    if r["frames_lost"] != 0:
        fail.append(f"frames lost {r['frames_lost']}")
    if frames.get("dropped", 0) or frames.get("rejected", 0) or frames.get("in") != frames.get("out"):
        fail.append(f"daemon accounting {r['daemon']}")
    if len(ts) < 3:
        fail.append("too few samples after warm-up")
    if abs(r["rss_growth_after_warmup_mb"]) >= a.rss_bound_mb:
        fail.append(f"RSS growth {r['rss_growth_after_warmup_mb']:.3f} MB after warm-up")
    if fds and fds[-1] > fds[0]:
        fail.append(f"fds grew {fds[0]} -> {fds[-1]}")
    if daemon_rc != 0:
        fail.append(f"daemon exit {daemon_rc}")
    if sink_rc != 0:
        fail.append(f"sink exit {sink_rc}")
    r["verdict"] = "FAIL" if fail else "PASS"
    r["reasons"] = fail
    return r


def write_reports(out, r, minutes):
    """minutes.csv, report.json and report.txt under out; prints the text."""
    with open(os.path.join(out, "minutes.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["minute", "frames", "p50_ms", "p99_ms", "max_ms"])
        w.writerows([(m, c, f"{p50:.3f}", f"{p99:.3f}", f"{mx:.3f}") for m, c, p50, p99, mx in minutes])
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(r, f, indent=2)
    fmt = lambda v: "-" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))
    lines = [f"soak: n={r['n']} matrices={r['cells']} backend={r['backend']} x{r['cpu_threads']} "
             f"rate={r['rate']}/s duration={r['duration_s']:.0f}s warm-up={r['warmup_s']:.0f}s",
             f"frames: sent={r['frames_sent']} received={r['frames_received']} lost={r['frames_lost']} "
             f"daemon={r['daemon']}",
             f"rss MB: start={fmt(r['rss_mb_start'])} after-warm-up={fmt(r['rss_mb_after_warmup'])} "
             f"end={fmt(r['rss_mb_end'])} slope={r['rss_slope_mb_per_hour']:.3f} MB/h "
             f"growth after warm-up={r['rss_growth_after_warmup_mb']:.3f} MB",
             f"fds: after-warm-up={fmt(r['fds_after_warmup'])} end={fmt(r['fds_end'])} "
             f"range={fmt(r['fds_min'])}..{fmt(r['fds_max'])}",
             f"p99 end-to-end per minute: {fmt(r['p99_ms_per_minute_min'])}..{fmt(r['p99_ms_per_minute_max'])} ms "
             f"over {r['minutes']} minutes",
             f"VERDICT: {r['verdict']}" + (" (" + "; ".join(r["reasons"]) + ")" if r["reasons"] else "")]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


def plot(out, samples, minutes, a):
    """out/soak.png: RSS over time (warm-up marked) above p50/p99 per minute."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    ax1.plot([s["t_s"] / 60 for s in samples], [s["rss_kb"] / 1024 for s in samples], ".-")
    ax1.axvline(a.warmup_s / 60, color="gray", ls="--", label="warm-up")
    ax1.set_ylabel("daemon RSS (MB)")
    ax1.legend()
    ax2.plot([m[0] + 0.5 for m in minutes], [m[3] for m in minutes], "o-", label="p99")
    ax2.plot([m[0] + 0.5 for m in minutes], [m[2] for m in minutes], ".-", label="p50")
    ax2.set_ylabel("end-to-end latency (ms)")
    ax2.set_xlabel("minutes")
    ax2.legend()
    fig.suptitle(f"eigstream soak: n={a.n} x {a.cells}, {a.backend}, {a.rate} frames/s")
    fig.savefig(os.path.join(out, "soak.png"), dpi=100)


def received_frames(out):
    """Frames the sink counted (its --json file; 0 when it wrote none)."""
    try:
        with open(os.path.join(out, "sink.json")) as f:
            return json.load(f)["frames"]
    except (OSError, ValueError, KeyError):
        return 0


def read_samples(out):
    """OUT/samples.csv as rows of floats."""
    with open(os.path.join(out, "samples.csv")) as f:
        return [{k: float(v) if k in ("t_s", "e2e_p99_us") else int(float(v)) for k, v in r.items()}
                for r in csv.DictReader(f)]


def report_again(a):
    """--report-only: the verdict of an earlier run in a.out, recomputed from
    its samples and latencies (the counts and exit statuses from its
    report.json); exit status as main's."""
    with open(os.path.join(a.out, "report.json")) as f:
        old = json.load(f)
    for key in ("duration_s", "rate", "n", "cells", "backend", "cpu_threads", "warmup_s"):
        setattr(a, key.replace("duration_s", "duration"), old[key])
    samples = read_samples(a.out)
    minutes = minute_percentiles(os.path.join(a.out, "latency.csv"))
    r = analyse(a, samples, minutes, old["frames_sent"], old["frames_received"], {"frames": old["daemon"]},
                old["daemon_exit"], old["sink_exit"])
    write_reports(a.out, r, minutes)
    if a.plot:
        plot(a.out, samples, minutes, a)
    return 0 if r["verdict"] == "PASS" else 1


def main():
    """Runs the soak; exit status 0 PASS, 1 FAIL (2: argparse usage error)."""
    a = parse_args()
    if a.report_only:
        return report_again(a)
    os.makedirs(a.out, exist_ok=True)
    eps = {k: f"ipc:///tmp/eigstream-soak-{a.tag}-{k}" for k in ("in", "out", "metrics")}
    cfg = os.path.join(a.out, "daemon.cfg")
    with open(cfg, "w") as f:
        f.write(daemon_config(a, eps))
    daemon, sink, sim, sent, url = start_processes(a, eps, a.out, cfg)
    if url is None:
        print("eigstream-soak: no metrics URL in the daemon's log", file=sys.stderr)
    try:
        with open(os.path.join(a.out, "samples.csv"), "w", newline="") as f:
            samples, doc = monitor(a, daemon, sink, sim, url, f)
    finally:
        sim_rc = stop(sim, signal.SIGINT)
        sink_rc = stop(sink, signal.SIGINT)
        doc_final = settled_metrics(url, sent)
        daemon_rc = stop(daemon)
    if sim_rc != 0:
        sent = 0  # interrupted: what it sent is unknown, count it as a failure below
        print(f"eigstream-soak: simulator exit {sim_rc}", file=sys.stderr)
    latency = os.path.join(a.out, "latency.csv")
    minutes = minute_percentiles(latency) if os.path.exists(latency) else []
    r = analyse(a, samples, minutes, sent, received_frames(a.out), doc_final or doc, daemon_rc, sink_rc)
    if sim_rc != 0:
        r["reasons"].append(f"simulator exit {sim_rc}")
        r["verdict"] = "FAIL"
    write_reports(a.out, r, minutes)
    if a.plot:
        plot(a.out, samples, minutes, a)
    return 0 if r["verdict"] == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
