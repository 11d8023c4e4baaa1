#!/usr/bin/python3
"""Clear errors for resource limits (label integration; issue 26).

  test_service_limits.py PATH_TO_EIGSTREAM

With RLIMIT_NOFILE (soft and hard) at 8, 16 and 24, the daemon with its
default sockets (input, output, metrics PUB, metrics HTTP) exits 1 at start
with one line naming RLIMIT_NOFILE, the limit, the number these settings
need (34) and the settings that count; never a libzmq assertion (exit 134).
With the soft limit at 8 and the hard limit at 4096 it raises the soft
limit itself and starts; SIGTERM then exits 0.
"""
import os
import resource
import sys
import tempfile

from service_util import Daemon, check, finish

DAEMON = sys.argv[1]


def config(tag):
    return f'''input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; }};
solver = {{ n = 8; matrices = 2; backend = "lapack"; cpu_threads = 1; }};
metrics = {{ endpoint = "ipc:///tmp/eigstream-{tag}-metrics"; http = "127.0.0.1:0"; }};
'''


def limited(soft, hard):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-limits-")
    cfg = os.path.join(tmp, "limits.cfg")
    with open(cfg, "w") as f:
        f.write(config(f"limits{os.getpid()}"))
    daemon = None
    for n in (8, 16, 24):
        daemon = Daemon([DAEMON, "-c", cfg], preexec_fn=limited(n, n))
        status = daemon.exit_status(timeout=60)
        text = daemon.text()
        check(status == 1, f"ulimit -n {n}: exit status {status}, want 1")
        want = (f"cannot start: RLIMIT_NOFILE (ulimit -n) is {n}, hard limit {n}: these settings need at least 34 "
                "open files (input.io_threads = 1, metrics.endpoint on, metrics.http on, security off")
        check(want in text, f"ulimit -n {n}: no clear message; log:\n{text}")
        check("Assertion" not in text and "epoll.cpp" not in text, f"ulimit -n {n}: an assertion:\n{text}")
    daemon = Daemon([DAEMON, "-c", cfg], preexec_fn=limited(8, 4096))
    check(daemon.http_port() is not None, "soft 8, hard 4096: the daemon did not start (it may raise the soft limit)")
    check(daemon.stop() == 0, f"soft 8, hard 4096: exit status {daemon.p.returncode} after SIGTERM")
    os.unlink(cfg)
    os.rmdir(tmp)
    finish("service limits", daemon)


if __name__ == "__main__":
    main()
