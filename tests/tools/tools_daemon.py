"""tools_daemon.py - the small lapack daemon the tool tests run against.

    from tools_daemon import start_daemon, stop_daemon
    daemon = start_daemon(DAEMON, tmp, "top", n=8, matrices=2, output_pattern="push",
                          metrics_endpoint=f"ipc://{tmp}/top-metrics")
    ...  # input ipc://{tmp}/top-in, output ipc://{tmp}/top-out
    stop_daemon(daemon)
"""
import os
import signal
import subprocess


def start_daemon(daemon, tmp, tag, n, matrices, output_pattern, metrics_endpoint, extra=""):
    """Starts DAEMON on ipc://{tmp}/{tag}-in and -out (backend lapack, one
    thread, metrics every 100 ms on metrics_endpoint, "" for none; extra:
    more settings, appended to the file); returns the Popen (stderr
    discarded)."""
    cfg = os.path.join(tmp, tag + ".cfg")
    with open(cfg, "w") as f:
        f.write(f'''
input = {{ endpoint = "ipc://{tmp}/{tag}-in"; }};
output = {{ endpoint = "ipc://{tmp}/{tag}-out"; pattern = "{output_pattern}"; }};
solver = {{ n = {n}; matrices = {matrices}; backend = "lapack"; cpu_threads = 1; }};
metrics = {{ endpoint = "{metrics_endpoint}"; interval_ms = 100; http = ""; }};
{extra}
''')
    return subprocess.Popen([daemon, "-c", cfg], stderr=subprocess.DEVNULL)


def stop_daemon(p):
    """SIGTERM, then SIGKILL when it has not drained within 20 s."""
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
