#!/usr/bin/python3
"""Signals always work (label integration; issue 26).

  test_service_signals.py PATH_TO_EIGSTREAM

1. The daemon runs a file with frame.deadline_ms = 1000; 3 frames solved.
2. The file emptied, SIGHUP: refused ("sets no setting"), deadline still 1 s.
3. A file cut mid-line that libconfig would take ("frame = { deadline_ms =
   2500; }" without its final newline), SIGHUP: refused as cut short.
4. The file replaced by a FIFO that nobody writes, SIGHUP: refused at once
   ("not a regular file"), never read; 3 more frames solved.
5. SIGTERM right after: the daemon drains and exits 0 with
   "accounting: in=6 out=6 ... dropped=0".
Every wait is a handshake (a log line, a metric, an eigenspace) with a
generous deadline; nothing depends on the machine's speed.
"""
import os
import shutil
import re
import sys
import tempfile

import numpy as np

from service_util import check, check_eigenspace, covariance, daemon_session, hermitian, ipc_clients, scrape, sighup, started_with

DAEMON = sys.argv[1]
DEADLINE = "eigstream_deadline_seconds"


def config(tag):
    return f'''input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "push"; }};
solver = {{ n = 8; matrices = 2; backend = "lapack"; cpu_threads = 1; }};
frame = {{ deadline_ms = 1000; }};
metrics = {{ endpoint = ""; http = "127.0.0.1:0"; interval_ms = 100; }};
'''


def solve(push, pull, seqs, rng):
    for seq in seqs:
        a = hermitian(rng, 2, 8)
        push.send_multipart(covariance(seq, a))
        if check(pull.poll(60000), f"frame {seq}: no eigenspace within 60 s"):
            check(check_eigenspace(pull.recv_multipart(), {seq: a}) == seq, f"frame {seq}: another seq came back")


def run(daemon, cfg, tag):
    port = started_with(daemon, DEADLINE, 1.0)
    if port is None:
        return
    ctx, push, pull = ipc_clients(tag)
    rng = np.random.default_rng(26)
    solve(push, pull, (1, 2, 3), rng)

    kept = r"the running configuration is kept"
    open(cfg, "w").close()
    start = sighup(daemon)
    check(daemon.wait_for(rf"ERROR +reload: {re.escape(cfg)}: sets no setting.*{kept}", start) is not None,
          "empty file: no 'sets no setting' refusal")

    with open(cfg, "w") as f:
        f.write("frame = { deadline_ms = 2500; }")
    start = sighup(daemon)
    check(daemon.wait_for(rf"ERROR +reload: {re.escape(cfg)}: does not end with a newline.*{kept}", start)
          is not None, "cut file: no 'does not end with a newline' refusal")
    check(scrape(port).get(DEADLINE) == 1.0, "a refused file changed the deadline")

    os.unlink(cfg)
    os.mkfifo(cfg)
    start = sighup(daemon)
    check(daemon.wait_for(rf"ERROR +reload: {re.escape(cfg)}: not a regular file.*{kept}", start) is not None,
          "FIFO: no 'not a regular file' refusal")
    solve(push, pull, (4, 5, 6), rng)
    push.close()
    pull.close()
    ctx.destroy(linger=0)

    start = len(daemon.lines)
    check(daemon.stop() == 0, f"exit status {daemon.p.returncode} after one SIGTERM (expected 0: drained)")
    check(daemon.wait_for(r"accounting: in=6 out=6 .*dropped=0 .*in_flight=0", start, timeout=10) is not None,
          "no 'accounting: in=6 out=6 ... dropped=0 ... in_flight=0' line")


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-signals-")
    try:
        daemon_session("service signals", DAEMON, tmp, config, run, clean_exit=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
