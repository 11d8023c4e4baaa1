#!/usr/bin/python3
"""SIGHUP reload (label integration).

  test_service_reload.py PATH_TO_EIGSTREAM

1. The daemon runs a file with frame.deadline_ms = 1000 and log.level info.
   /metrics says eigstream_deadline_seconds 1 (the oracle: the file).
2. The file changes two live settings (deadline 2500, level debug) and two
   restart-only ones (solver.n, input.hwm); SIGHUP. The log names each
   restart-only setting as refused and lists the applied ones; /metrics
   then says 2.5; DEBUG lines appear; frames of the running n are still
   taken and solved (eigenvalues against numpy.linalg.eigvalsh), so solver.n
   was not applied.
3. A file with a syntax error, then one with a bad value: each is logged
   (FILE:LINE: setting: reason) and refused whole; the daemon keeps running
   with 2.5 s and still solves frames.
4. SIGTERM: exit 0.
"""
import re
import sys
import tempfile

import numpy as np

from service_util import check, check_eigenspace, covariance, daemon_session, hermitian, ipc_clients, scrape, sighup, started_with, wait_metric

DAEMON = sys.argv[1]
DEADLINE = "eigstream_deadline_seconds"


def config(tag, deadline_ms, level, n=8, hwm=4):
    return f'''
input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; hwm = {hwm}; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "push"; }};
solver = {{ n = {n}; matrices = 2; backend = "lapack"; cpu_threads = 1; }};
frame = {{ deadline_ms = {deadline_ms}; }};
metrics = {{ endpoint = ""; http = "127.0.0.1:0"; interval_ms = 100; }};
log = {{ level = "{level}"; }};
'''


def solve_one(push, pull, seq, rng):
    """A frame in, its eigenspace out and checked: the daemon still runs n = 8."""
    a = hermitian(rng, 2, 8)
    push.send_multipart(covariance(seq, a))
    if check(pull.poll(60000), f"frame {seq}: no eigenspace within 60 s"):
        check(check_eigenspace(pull.recv_multipart(), {seq: a}) == seq, f"frame {seq}: another seq came back")


def reload(daemon, cfg, text):
    """Writes the file, sends SIGHUP; the log index from which to look."""
    with open(cfg, "w") as f:
        f.write(text)
    return sighup(daemon)


def run(daemon, cfg, tag):
    port = started_with(daemon, DEADLINE, 1.0)
    if port is None:
        return
    ctx, push, pull = ipc_clients(tag)
    rng = np.random.default_rng(5)
    solve_one(push, pull, 1, rng)

    # 2. Two live changes, two refused.
    start = reload(daemon, cfg, config(tag, 2500, "debug", n=16, hwm=8))
    check(daemon.wait_for(r"reload: .*: applied frame\.deadline_ms, log\.level$", start) is not None,
          "no 'applied frame.deadline_ms, log.level' line")
    for setting in ("input.hwm", "solver.n"):
        refusal = rf"WARN +reload: {re.escape(setting)} changed in .* but needs a restart"
        check(daemon.wait_for(refusal, start) is not None, f"no refusal naming {setting}")
    check(wait_metric(port, DEADLINE, lambda v: v == 2.5) == 2.5, f"{DEADLINE} did not become 2.5")
    check(daemon.wait_for(r" DEBUG ", start) is not None, "no DEBUG line after log.level debug")
    solve_one(push, pull, 2, rng)

    # 3. Broken files: refused whole, the daemon keeps running.
    start = reload(daemon, cfg, "frame = { deadline_ms = 500 \n")
    refusal = rf"ERROR +reload: {re.escape(cfg)}:\d+: .*the running configuration is kept"
    check(daemon.wait_for(refusal, start) is not None, "syntax error: no refusal with FILE:LINE")
    start = reload(daemon, cfg, config(tag, 0, "info"))
    refusal = rf"ERROR +reload: {re.escape(cfg)}:\d+: frame\.deadline_ms: 0 is out of range"
    check(daemon.wait_for(refusal, start) is not None, "bad value: no refusal naming frame.deadline_ms")
    check(daemon.p.poll() is None, "the daemon exited after a bad reload")
    check(scrape(port).get(DEADLINE) == 2.5, "a refused file changed the deadline")
    solve_one(push, pull, 3, rng)
    push.close()
    pull.close()
    ctx.destroy(linger=0)


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-reload-")
    daemon_session("service reload", DAEMON, tmp, lambda tag: config(tag, 1000, "info"), run)


if __name__ == "__main__":
    main()
