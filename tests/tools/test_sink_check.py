#!/usr/bin/python3
"""eigstream-sink --check end to end (label integration): eigstream-sim ->
eigstream (lapack, n 8, no forming) -> eigstream-sink --pattern pull --check.

  test_sink_check.py DAEMON SIM SINK

The sink makes the sim's matrices again (seed, snapshots, pool) and checks
every matrix of every frame it receives with the daemon's self-check: the
verdict is PASS, exactly frames x cells matrices are checked, none fails,
none is flagged CHECK_FAILED. With a wrong --seed the matrices are others:
every check fails and the verdict is FAIL (the check judges, it does not
just run). Counts, no timing: the sim streams until the sink has checked
a fixed number of frames.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tools_daemon import start_daemon, stop_daemon  # noqa: E402

N, CELLS, FRAMES = 8, 3, 6


def run(daemon_bin, sim, sink, tmp, tag, sink_seed):
    """The sim streams (--frames 0) until the sink has checked FRAMES frames:
    frames published before the sink connected are not waited for (the
    daemon's PUSH drops them after its deadline), so readiness needs no sleep."""
    # overflow_policy block: a sink slower than the sim (a sanitizer build's)
    # holds the sim back instead of frames being evicted between the ones it
    # checks; only frames published before it connected are dropped.
    daemon = start_daemon(daemon_bin, tmp, tag, n=N, matrices=CELLS, output_pattern="push", metrics_endpoint="",
                          extra='frame = { overflow_policy = "block"; };')
    sender = None
    try:
        receiver = subprocess.Popen([sink, "--endpoint", f"ipc://{tmp}/{tag}-out", "--pattern", "pull", "--n", str(N),
                                     "--frames", str(FRAMES), "--duration", "120", "--quiet", "--check",
                                     "--seed", str(sink_seed), "--snapshots", "64", "--pool", "4"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sender = subprocess.Popen([sim, "--endpoint", f"ipc://{tmp}/{tag}-in", "--n", str(N), "--cells", str(CELLS),
                                   "--frames", "0", "--rate", "50", "--snapshots", "64", "--seed", "7", "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        out, err = receiver.communicate(timeout=150)
    finally:
        if sender is not None:
            sender.send_signal(signal.SIGINT)
            sender.communicate(timeout=60)
        stop_daemon(daemon)
    return sender, receiver.returncode, out, err


def main():
    daemon_bin, sim, sink = sys.argv[1:4]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        sender, rc, out, err = run(daemon_bin, sim, sink, tmp, "check", 7)
        m = re.search(r"self-check: (\d+) matrices checked, (\d+) failed, .* (\d+) frames flagged", out)
        if not (rc == 0 and "VERDICT: PASS" in out and m and int(m.group(1)) == FRAMES * CELLS
                and int(m.group(2)) == 0 and int(m.group(3)) == 0):
            failures.append(f"right seed: exit {rc}, want PASS with {FRAMES * CELLS} checked, 0 failed: "
                            f"{out[-600:]!r} {err[-300:]!r}")
        sender, rc, out, err = run(daemon_bin, sim, sink, tmp, "wrong", 8)
        m = re.search(r"self-check: (\d+) matrices checked, (\d+) failed", out)
        if not (rc == 1 and "VERDICT: FAIL" in out and m and int(m.group(2)) == FRAMES * CELLS):
            failures.append(f"wrong seed: exit {rc}, want FAIL with every matrix failed: {out[-600:]!r}")
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print("ok" if not failures else f"{len(failures)} failure(s)", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
