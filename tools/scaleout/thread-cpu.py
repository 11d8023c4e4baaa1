#!/usr/bin/env python3
"""thread-cpu.py - where the CPU time of a run goes, thread by thread (Linux /proc).

    thread-cpu.py --out FILE [--interval S] PID...

Samples every thread of the given processes (utime + stime of /proc/PID/task/TID/stat)
every S seconds (default 0.1) until every process has exited or the sampler gets
SIGTERM/SIGINT, then writes FILE: one line per thread, busiest first,

    PROCESS[PID] THREAD %CORE SECONDS

%CORE is the thread's CPU time between the first and the last sample that saw it,
over the same span of wall time (100 = one core all the time). A thread seen in
fewer than two samples is left out: there is no span to divide by. bench-scaleout.sh
prints the busiest of these beside each configuration, so that the thread that paces
a topology (a daemon's ZeroMQ I/O thread, the merge's receive, the dispatcher's back
end) is named by measurement, not guessed.
"""
import argparse
import os
import signal
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:  # the thread or the process is gone
        return None


def sample(pid):
    """{(pid, tid): ("name[pid]", thread name, cpu seconds)} of one process, {} if gone."""
    argv0 = (read_text(f"/proc/{pid}/cmdline") or "").split("\0")[0]
    process = os.path.basename(argv0) or (read_text(f"/proc/{pid}/comm") or "").strip()  # comm stops at 15
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    threads = {}
    for tid in tids:
        stat = read_text(f"/proc/{pid}/task/{tid}/stat")
        if stat is None:
            continue
        # The name sits in parentheses and may hold spaces: the fields follow its last ')'.
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        utime, stime = int(fields[11]), int(fields[12])  # stat fields 14 and 15
        threads[(pid, tid)] = (f"{process}[{pid}]", name, (utime + stime) / TICKS)
    return threads


def main():
    ap = argparse.ArgumentParser(description="per-thread CPU share of running processes")
    ap.add_argument("--out", required=True, help="the table to write when sampling ends")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between samples")
    ap.add_argument("pids", nargs="+", type=int)
    args = ap.parse_args()
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    first, last = {}, {}  # (pid, tid) -> (wall time, process, thread, cpu seconds)
    while not stop:
        now, alive = time.monotonic(), 0
        for pid in args.pids:
            threads = sample(pid)
            alive += bool(threads)
            for key, (process, name, cpu) in threads.items():
                first.setdefault(key, (now, process, name, cpu))
                last[key] = (now, process, name, cpu)
        if not alive:
            break
        time.sleep(args.interval)
    rows = []
    for key, (t1, process, name, c1) in last.items():
        t0, _, _, c0 = first[key]
        if t1 > t0:
            rows.append((100.0 * (c1 - c0) / (t1 - t0), process, name, c1 - c0))
    rows.sort(reverse=True)
    with open(args.out, "w") as f:
        for share, process, name, cpu in rows:
            f.write(f"{process.replace(' ', '_')} {name.replace(' ', '_')} {share:.1f} {cpu:.3f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
