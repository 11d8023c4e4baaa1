#!/usr/bin/python3
"""The daemon's HTTP metrics server, the daemon run as a subprocess
(label integration; backend lapack, n = 8).

  test_metrics_http.py DAEMON SIM CASE OUTDIR

CASE:
  prometheus  frames sent, then /metrics checked by `promtool check metrics`
              and against the ZeroMQ JSON metrics and what was sent: counters
              equal, histogram buckets cumulative, _count = frames published.
  robustness  while frames stream: POST gets 405, an unknown path 404, a
              100 KB header an error or a closed connection; a slowloris
              client and 200 idle connections neither slow the stream (every
              frame sent is published) nor lock /metrics out for longer than
              the connection timeout; the daemon then exits 0 on SIGTERM.
  limits      the connection limits (4 per address, 64 shared), the request
              size limit, the idle timeout; refusals counted by reason.
  slowloris   100 connections dripping a byte a second from 25 other
              addresses: a scrape from the scraper address (metrics.http_scrapers)
              answers, every refusal counted exactly; with
              metrics.http_deadline_s = 2 dripping connections are cut after 2 s.
  dashboard   the dashboard in headless Chromium against the daemon fed by
              eigstream-sim: data-samples > 0 in the dumped DOM, and a
              1600x1000 screenshot OUTDIR/dashboard.png.
Exit 77 (skipped) when promtool (prometheus) or chromium is missing.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import zmq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "python"))
import eigstream_client as ec  # noqa: E402

SKIP = 77
N, MATRICES = 8, 4
import eigstream_check  # noqa: E402  (tools/python: check() counts, outcome() ends main)
from eigstream_check import check  # noqa: E402


class Daemon:
    """The daemon on ipc endpoints of its own, HTTP on a free port."""

    def __init__(self, daemon, tmp, tag, metrics_extra=""):
        self.tag = f"{tag}{os.getpid()}"
        self.input = f"ipc:///tmp/eigstream-http-{self.tag}-in"
        self.output = f"ipc:///tmp/eigstream-http-{self.tag}-out"
        self.metrics = f"ipc:///tmp/eigstream-http-{self.tag}-metrics"
        cfg = os.path.join(tmp, f"{tag}.cfg")
        with open(cfg, "w") as f:
            f.write(f'''
input = {{ endpoint = "{self.input}"; hwm = 1000; }};
output = {{ endpoint = "{self.output}"; pattern = "push"; hwm = 1000; }};
solver = {{ n = {N}; matrices = {MATRICES}; backend = "lapack"; cpu_threads = 1; }};
frame = {{ overflow_policy = "block"; deadline_ms = 60000; }};
metrics = {{ endpoint = "{self.metrics}"; interval_ms = 200; http = "127.0.0.1:0"; {metrics_extra} }};
''')
        self.err_path = os.path.join(tmp, f"{tag}.stderr")
        self.err_file = open(self.err_path, "w")
        self.proc = subprocess.Popen([daemon, "-c", cfg], stderr=self.err_file)
        self.port = None
        deadline = time.time() + 20
        while self.port is None and time.time() < deadline and self.proc.poll() is None:
            m = re.search(r"dashboard: http://127\.0\.0\.1:(\d+)/", open(self.err_path).read())
            self.port = int(m.group(1)) if m else None
            time.sleep(0.05)
        if self.port is None:
            raise RuntimeError(f"no dashboard line: {open(self.err_path).read()!r}")
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            check(False, "daemon did not exit within 30 s of SIGTERM")
        self.err_file.close()
        return self.proc.returncode


def http_get(url, method="GET", timeout=5):
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def prometheus_samples(text):
    """{(name, frozenset(labels)): value} of every sample line."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def random_frames(count, seed=11):
    rng = np.random.default_rng(seed)
    frames = []
    for _ in range(count):
        x = rng.standard_normal((MATRICES, N, N)) + 1j * rng.standard_normal((MATRICES, N, N))
        frames.append((x + x.conj().transpose(0, 2, 1)) / 2)
    return frames


def sockets(d):
    ctx = zmq.Context()
    push, pull = ctx.socket(zmq.PUSH), ctx.socket(zmq.PULL)
    push.setsockopt(zmq.LINGER, 0)
    push.connect(d.input)
    pull.connect(d.output)
    return ctx, push, pull


def scrape_until(d, predicate, seconds=10):
    """/metrics parsed, once predicate holds (the metrics thread refreshes it)."""
    deadline = time.time() + seconds
    while True:
        status, headers, body = http_get(d.url + "/metrics")
        samples = prometheus_samples(body.decode()) if status == 200 else {}
        if (status == 200 and predicate(samples)) or time.time() > deadline:
            return status, headers, body, samples
        time.sleep(0.1)


def check_histograms(samples, published):
    families = [("eigstream_stage_latency_seconds", {"stage": s}) for s in ("receive", "form", "solve", "publish")]
    families.append(("eigstream_end_to_end_latency_seconds", {}))
    for name, labels in families:
        buckets = sorted((float(dict(k[1])["le"]), v) for k, v in samples.items()
                         if k[0] == name + "_bucket" and set(labels.items()) <= set(k[1]))
        counts = [v for _, v in buckets]
        check(len(buckets) >= 40 and buckets[0][0] <= 20e-6 and buckets[-2][0] >= 16.0 and buckets[-1][0] == float("inf"),
              f"{name}{labels}: bucket edges {[b[0] for b in buckets[:2]]}..{[b[0] for b in buckets[-2:]]}")
        check(all(a <= b for a, b in zip(counts, counts[1:])), f"{name}{labels}: buckets not cumulative {counts}")
        count = value(samples, name + "_count", **labels)
        check(count == published and counts[-1] == count,
              f"{name}{labels}: _count {count}, +Inf {counts[-1]}, published {published}")


def check_exported_list(body):
    """Every family of tests/tools/exported_metrics.txt (the list the Grafana
    dashboard's test checks its queries against) is served by /metrics with
    that type."""
    served = dict(re.findall(r"^# TYPE (\S+) (\S+)$", body.decode(), re.M))
    listed = os.path.join(HERE, "..", "tools", "exported_metrics.txt")
    with open(listed) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, kind = line.split()
                check(served.get(name) == kind,
                      f"exported_metrics.txt lists {name} {kind}; /metrics serves {served.get(name)}")


def proc_cpu_seconds(pid):
    """utime + stime of pid from /proc (the kernel's count, in clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def check_cpu_seconds(d):
    """process_cpu_seconds_total against the kernel: a value read from /proc
    at some refresh (every metrics.interval_ms), so a scrape after the
    kernel's count c0 eventually reads >= c0, and never more than the
    count read after the scrape."""
    c0 = proc_cpu_seconds(d.proc.pid)
    _, _, _, samples = scrape_until(d, lambda s: (value(s, "process_cpu_seconds_total") or -1) >= c0 - 1e-9,
                                    seconds=30)
    c1 = proc_cpu_seconds(d.proc.pid)
    cpu = value(samples, "process_cpu_seconds_total")
    check(cpu is not None and c0 - 1e-9 <= cpu <= c1 + 1e-9,
          f"process_cpu_seconds_total = {cpu}, the kernel counted {c0} before and {c1} after")


def case_prometheus(daemon, sim, outdir, tmp):
    if shutil.which("promtool") is None:
        print("promtool not found (apt-get install prometheus): skipped", file=sys.stderr)
        return SKIP
    d = Daemon(daemon, tmp, "prom")
    ctx, push, pull = sockets(d)
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(d.metrics)
    frames, garbage = random_frames(40), 3
    for seq, a in enumerate(frames):
        push.send_multipart(ec.encode_covariance(seq, time.time_ns(), a, crc=True))
    for _ in range(garbage):
        push.send(b"not a frame")  # one short part: rejected (bad header size)
    received = sum(1 for _ in range(len(frames)) if pull.poll(30000) and pull.recv_multipart())
    check(received == len(frames), f"received {received} of {len(frames)} eigenspaces")
    status, headers, body, samples = scrape_until(
        d, lambda s: value(s, "eigstream_frames_published_total") == len(frames)
        and sum(v for k, v in s.items() if k[0] == "eigstream_frames_rejected_total") == garbage)
    check(status == 200, f"/metrics status {status}")
    check(headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"), f"Content-Type {headers}")
    with open(os.path.join(outdir, "metrics.txt"), "wb") as f:
        f.write(body)
    r = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, timeout=30)
    print(f"promtool check metrics: exit {r.returncode} {r.stdout.decode()}{r.stderr.decode()}", file=sys.stderr)
    check(r.returncode == 0, f"promtool check metrics failed: {r.stdout!r} {r.stderr!r}")

    check_exported_list(body)
    check(value(samples, "eigstream_frames_received_total") == len(frames), "received_total != frames sent")
    check(value(samples, "eigstream_frames_published_total") == len(frames), "published_total != frames sent")
    check_histograms(samples, len(frames))
    check(value(samples, "eigstream_frames_in_flight") == 0, "frames in flight after all were published")
    info = [(dict(k[1]), v) for k, v in samples.items() if k[0] == "eigstream_build_info"]
    check(len(info) == 1 and info[0][1] == 1 and info[0][0].get("backend") == "lapack"
          and info[0][0].get("gpu") == "none" and info[0][0].get("precision") == "double"
          and info[0][0].get("version"), f"eigstream_build_info {info}")
    check_cpu_seconds(d)
    for name in ("process_resident_memory_bytes", "process_open_fds", "process_max_fds",
                 "process_start_time_seconds", "process_virtual_memory_bytes"):
        check((value(samples, name) or 0) > 0, f"{name} = {value(samples, name)}")

    # The ZeroMQ document of a later interval: the same numbers.
    doc = None
    deadline = time.time() + 10
    while time.time() < deadline:
        if sub.poll(500):
            doc = json.loads(sub.recv())
            if doc["frames"]["out"] == len(frames) and doc["frames"]["rejected"] == garbage:
                break
    check(doc is not None, "no ZeroMQ metrics document")
    if doc:
        check(doc["frames"]["in"] == value(samples, "eigstream_frames_received_total"), "in differs from JSON")
        check(doc["frames"]["late"] == value(samples, "eigstream_frames_late_total"), "late differs from JSON")
        for reason, count in doc["dropped"].items():
            check(count == value(samples, "eigstream_frames_dropped_total", reason=reason), f"dropped {reason}")
        for reason, count in doc["rejected"].items():
            check(count == value(samples, "eigstream_frames_rejected_total", reason=reason), f"rejected {reason}")
        failed = sum(v for k, v in samples.items() if k[0] == "eigstream_matrices_failed_total")
        check(doc["frames"]["matrices_failed"] == failed, "matrices_failed differs from JSON")
        check(doc["latency_us"]["end_to_end"]["count"] == len(frames), "JSON end-to-end count")
    status, _, body = http_get(d.url + "/api/metrics")
    api = json.loads(body) if status == 200 else {}
    check(api.get("frames", {}).get("out") == len(frames) and api.get("history", {}).get("points", 0) > 0,
          f"/api/metrics: status {status} frames {api.get('frames')}")
    ctx.destroy(linger=0)
    rc = d.stop()
    check(rc == 0, f"daemon exit {rc}")
    return 0


def raw_request(port, data, timeout=5, source="127.0.0.1"):
    """Sends data on a fresh connection from source; the status line, or "" when closed."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0)) as s:
        try:
            s.sendall(data)
            return s.recv(200).decode(errors="replace").split("\r\n")[0]
        except (ConnectionResetError, BrokenPipeError, socket.timeout):
            return ""


def slowloris(port, stop, held):
    """20 connections sending a header a byte per second, never ending it."""
    conns = []
    for _ in range(20):
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=("127.0.0.2", 0))
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            conns.append(c)
        except OSError:
            pass
    held.append(len(conns))
    while not stop.is_set():
        for c in list(conns):
            try:
                c.send(b"X")
            except OSError:
                conns.remove(c)
        stop.wait(1.0)
    for c in conns:
        c.close()


def stream(push, pull, frames, rate, counts):
    """Sends frames at rate per second, counting eigenspaces as they come."""
    start = time.time()
    for seq, a in enumerate(frames):
        while time.time() < start + seq / rate:
            while pull.poll(0):
                pull.recv_multipart()
                counts["received"] += 1
            time.sleep(0.005)
        push.send_multipart(ec.encode_covariance(seq, time.time_ns(), a, crc=False))
        counts["sent"] += 1
    deadline = time.time() + 30
    while counts["received"] < counts["sent"] and time.time() < deadline:
        if pull.poll(200):
            pull.recv_multipart()
            counts["received"] += 1


def case_robustness(daemon, sim, outdir, tmp):
    d = Daemon(daemon, tmp, "robust")
    ctx, push, pull = sockets(d)
    check(http_get(d.url + "/metrics", "POST")[0] == 405, "POST /metrics is not 405")
    check(http_get(d.url + "/nope")[0] == 404, "unknown path is not 404")
    status, _, body = http_get(d.url + "/metrics", "HEAD")
    check(status == 200 and body == b"", f"HEAD /metrics: {status}, {len(body)} bytes")
    # A busy HTTP address is a startup error naming it and the errno string.
    busy = os.path.join(tmp, "busy.cfg")
    with open(busy, "w") as f:
        f.write(f'metrics = {{ endpoint = ""; http = "127.0.0.1:{d.port}"; }};\n'
                f'input = {{ endpoint = "{d.input}-b"; }};\noutput = {{ endpoint = "{d.output}-b"; }};\n'
                f'solver = {{ n = {N}; matrices = {MATRICES}; backend = "lapack"; }};\n')
    r = subprocess.run([daemon, "-c", busy], capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and f"metrics.http: cannot bind 127.0.0.1:{d.port}: Address already in use" in r.stderr,
          f"busy metrics.http: exit {r.returncode} {r.stderr[-300:]!r}")
    big = raw_request(d.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
    check(big == "" or re.match(r"HTTP/1\.[01] (4\d\d|5\d\d)", big), f"100 KB header answered {big!r}")

    frames, rate = random_frames(300, seed=5), 25.0
    counts = {"sent": 0, "received": 0}
    streamer = threading.Thread(target=stream, args=(push, pull, frames, rate, counts))
    streamer.start()
    deadline = time.time() + 60
    while counts["received"] == 0 and time.time() < deadline:  # the stream flows before the attack
        time.sleep(0.05)
    stop, held = threading.Event(), []
    loris = threading.Thread(target=slowloris, args=(d.port, stop, held))
    loris.start()
    idle = []
    for _ in range(200):
        try:
            idle.append(socket.create_connection(("127.0.0.1", d.port), timeout=2, source_address=("127.0.0.3", 0)))
        except OSError:
            pass
    # The data path does not wait on HTTP: with the attack in place (the
    # slowloris still holding its connections), 20 more eigenspaces come out.
    # A count within a generous deadline, not a rate: it holds on a loaded
    # machine, and a data path blocked by the HTTP server never gets there.
    before = counts["received"]
    deadline = time.time() + 60
    while counts["received"] < before + 20 and time.time() < deadline and streamer.is_alive():
        time.sleep(0.05)
    flow = counts["received"] - before
    check(flow >= 20 and loris.is_alive(), f"under attack: {flow} eigenspaces came out (want 20 while the "
          f"slowloris holds its connections)")
    # Idle connections time out (5 s): /metrics answers again while the slowloris goes on.
    answered = None
    deadline = time.time() + 15
    while answered is None and time.time() < deadline:
        try:
            if http_get(d.url + "/metrics", timeout=2)[0] == 200:
                answered = time.time()
        except (OSError, urllib.error.URLError):
            time.sleep(0.5)
    check(answered is not None, "/metrics did not answer within 15 s during the attack")
    print(f"robustness: {len(idle)} idle connections opened, {held[0] if held else 0} slowloris; "
          f"{flow} eigenspaces under attack", file=sys.stderr)
    streamer.join()
    stop.set()
    loris.join()
    for c in idle:
        c.close()
    check(counts["received"] == counts["sent"] == len(frames),
          f"sent {counts['sent']}, received {counts['received']} of {len(frames)}")
    _, _, _, samples = scrape_until(d, lambda s: value(s, "eigstream_frames_published_total") == len(frames))
    check(value(samples, "eigstream_frames_published_total") == len(frames), "published_total after the attack")
    ctx.destroy(linger=0)
    rc = d.stop()
    check(rc == 0, f"daemon exit {rc} after SIGTERM")
    return 0


HOLD = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Hold: "  # a request in progress, never ended


class Holders:
    """Connections each with a request in progress, kept active (a byte a
    second, as a slowloris does) so that the idle timeout never closes them:
    each one occupies a slot of the server's limits for as long as the test
    wants. The kernel's accept queue is first in, first out, so connections
    opened before a probe are counted before it."""

    def __init__(self, port):
        self.port, self.conns, self.stop = port, [], threading.Event()
        self.thread = threading.Thread(target=self._keep, daemon=True)
        self.thread.start()

    def add(self, count, source="127.0.0.1"):
        """count connections from source; one the server refuses (closed at once) is kept too, dead."""
        for _ in range(count):
            c = socket.create_connection(("127.0.0.1", self.port), timeout=10, source_address=(source, 0))
            try:
                c.sendall(HOLD)
            except OSError:
                pass
            self.conns.append(c)

    def _keep(self):
        while not self.stop.wait(1.0):
            for c in list(self.conns):
                try:
                    c.send(b"a")
                except OSError:
                    pass

    def close(self, count=None):
        for c in self.conns[:count] if count else list(self.conns):
            c.close()
            self.conns.remove(c)
        if count is None:
            self.stop.set()


def probe(port, source="127.0.0.1", timeout=30):
    """The status line of GET /metrics on a fresh connection from source ("" when the server closed it,
    or left it unanswered for timeout s: a connection over the limit may wait in the listen queue)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0)) as c:
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return c.recv(200).decode(errors="replace").split("\r\n")[0]
    except OSError:
        return ""


def refusals(samples):
    """eigstream_http_refused_total by reason, and the connections open by class."""
    got = {r: value(samples, "eigstream_http_refused_total", reason=r) for r in ("per_address", "full", "deadline")}
    got.update({c: value(samples, "eigstream_http_connections", client=c) for c in ("scraper", "other")})
    return got


def case_limits(daemon, sim, outdir, tmp):
    """The HTTP server's bounds (metrics_http.h, docs/operations.md): at most 4
    connections per client address, 64 in all (no scraper configured), a
    request of up to 32 KB, an idle connection closed after 5 s. Judged by
    which requests are answered while other connections hold slots, not by
    time (the idle check's lower bound holds on any machine: a slow machine
    cannot make a timeout early); the refusals then counted exactly."""
    d = Daemon(daemon, tmp, "limits")
    h = Holders(d.port)
    h.add(3)
    check(probe(d.port).startswith("HTTP/1.1 200"), "per address: the 4th connection was not answered")
    h.add(1)
    # Refusals are judged with a 5 s wait: a slow machine can only make an
    # answer later, which passes them; a server without the limit answers at once.
    check(not probe(d.port, timeout=5).startswith("HTTP/1.1 200"),
          "per address: a 5th connection from one address answered")
    check(probe(d.port, "127.0.0.2").startswith("HTTP/1.1 200"),
          "per address: another address was refused while the first held 4")
    for a in range(2, 16):  # 14 more addresses: 60 held
        h.add(4, f"127.0.0.{a}")
    h.add(3, "127.0.0.16")
    check(probe(d.port, "127.0.0.17").startswith("HTTP/1.1 200"), "in all: the 64th connection was not answered")
    h.add(1, "127.0.0.16")
    check(not probe(d.port, "127.0.0.17", timeout=5).startswith("HTTP/1.1 200"), "in all: a 65th connection answered")
    h.close()

    small = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 8_000 + b"\r\n\r\n"
    big = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 40_000 + b"\r\n\r\n"
    # The holders' slots free as the server sees them close, which may take
    # a while: until then a request is refused as full. Each try comes from
    # an address of its own, never one that held slots, so that a refusal can
    # only be "full" and is counted here: the books stay exact on any machine.
    status, tries = "", 0
    while not status.startswith("HTTP/1.1 200") and tries < 100:
        status = raw_request(d.port, small, timeout=30, source=f"127.0.1.{tries + 1}")
        tries += 1
    check(status.startswith("HTTP/1.1 200"), f"an 8 KB request: {status!r}, want 200")
    status = raw_request(d.port, big, timeout=30, source="127.0.2.1")
    check(not status.startswith("HTTP/1.1 200"), f"a 40 KB request (over 32 KB): {status!r}, want refused")
    want = {"per_address": 1, "full": 1 + (tries - 1), "deadline": 0}
    _, _, _, samples = scrape_until(d, lambda s: all(refusals(s)[k] == v for k, v in want.items()), 30)
    got = refusals(samples)
    check(all(got[k] == v for k, v in want.items()), f"refusals counted {got}, want {want}")

    idle = socket.create_connection(("127.0.0.1", d.port), timeout=60)
    start = time.monotonic()
    try:
        closed = idle.recv(1) == b""
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        closed = False
    waited = time.monotonic() - start
    check(closed and waited >= 4.5, f"idle connection: closed {closed} after {waited:.1f} s, want closed after 5 s")
    idle.close()
    check(d.stop() == 0, "daemon exit after the limit checks")
    return 0


def case_slowloris(daemon, sim, outdir, tmp):
    """Connections that drip a byte a second (each resets the 5 s idle
    timeout) cannot lock a scrape out or live past the request deadline.
    Counts, not timing: every connection is opened before the numbers are
    read, the accept queue is first in first out, and each number is waited
    for as a condition (30 s) and then compared exactly."""
    d = Daemon(daemon, tmp, "loris", 'http_scrapers = "127.0.0.1"; http_deadline_s = 3600;')
    h = Holders(d.port)
    h.add(6, "127.0.0.200")  # 4 taken, 2 refused per_address
    for a in range(2, 27):   # 100 from 25 addresses, 4 each: 60 taken (64 shared), 40 refused full
        h.add(4, f"127.0.0.{a}")
    want = {"per_address": 2, "full": 40, "deadline": 0, "other": 64}
    status, _, _, samples = scrape_until(d, lambda s: all(refusals(s)[k] == v for k, v in want.items()), 30)
    got = refusals(samples)
    check(status == 200, f"a scrape from the scraper address during the attack: {status}")
    check(all(got[k] == v for k, v in want.items()), f"during 106 dripping connections: {got}, want {want}")
    check(not probe(d.port, "127.0.0.27", timeout=5).startswith("HTTP/1.1 200"),
          "a 65th connection from another address answered")
    want["full"] = 41
    status, _, _, samples = scrape_until(d, lambda s: refusals(s)["full"] == 41, 30)
    check(status == 200 and refusals(samples)["full"] == 41, f"after one more: {refusals(samples)}, want full 41")
    print(f"slowloris: {refusals(samples)} with 106 dripping connections; the scraper answered", file=sys.stderr)
    h.close()
    check(d.stop() == 0, "daemon exit after the slowloris")

    # The deadline: 3 connections that drip a byte every 0.5 s are cut once 2 s have passed.
    d = Daemon(daemon, tmp, "deadline", "http_deadline_s = 2;")
    conns = {}
    for _ in range(3):
        c = socket.create_connection(("127.0.0.1", d.port), timeout=10, source_address=("127.0.0.2", 0))
        c.sendall(HOLD)
        conns[c] = [time.monotonic(), 0, None]  # opened, bytes dripped, closed after s
    until = time.monotonic() + 30
    while any(v[2] is None for v in conns.values()) and time.monotonic() < until:
        for c, v in conns.items():
            if v[2] is not None:
                continue
            try:
                c.send(b"a")
                v[1] += 1
                c.settimeout(0.5)
                if c.recv(100) == b"":
                    v[2] = time.monotonic() - v[0]
            except socket.timeout:
                pass
            except OSError:
                v[2] = time.monotonic() - v[0]
    lived = [v[2] for v in conns.values()]
    check(all(t is not None and t >= 2.0 for t in lived), f"dripping connections lived {lived} s, want cut after 2 s")
    check(all(v[1] >= 2 for v in conns.values()), "the connections did not drip")
    _, _, _, samples = scrape_until(d, lambda s: refusals(s)["deadline"] == 3, 30)
    check(refusals(samples)["deadline"] == 3, f"deadline cuts counted {refusals(samples)}, want 3")
    print(f"deadline: connections cut after {lived} s", file=sys.stderr)
    for c in conns:
        c.close()
    check(d.stop() == 0, "daemon exit after the deadline check")
    return 0


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def check_idle_gaps(d, browser):
    """Once the feeder has stopped: waits (condition, not time) until the
    daemon's history ends in intervals without a frame (end-to-end p50 0),
    then the dashboard must leave those out of the latency lines as gaps
    (data-idle > 0) while still plotting the intervals with traffic."""
    deadline = time.time() + 60
    while True:
        _, _, body = http_get(d.url + "/api/metrics")
        p50 = json.loads(body)["history"]["end_to_end_p50_us"]
        if len(p50) >= 2 and p50[-1] == 0 and p50[-2] == 0 and any(v > 0 for v in p50):
            break
        check(time.time() < deadline, f"no idle interval in the history after the feeder stopped: {p50[-5:]}")
        time.sleep(0.2)
    r = subprocess.run(browser + ["--dump-dom", d.url + "/"], capture_output=True, text=True, timeout=120)
    idle = re.search(r'<body[^>]*data-idle="(\d+)"', r.stdout)
    samples = re.search(r'<body[^>]*data-samples="(\d+)"', r.stdout)
    print(f"chromium --dump-dom after the feeder stopped: data-idle={idle and idle.group(1)} "
          f"data-samples={samples and samples.group(1)}", file=sys.stderr)
    check(idle is not None and int(idle.group(1)) > 0, "idle intervals drawn at the axis floor, not as gaps")
    check(samples is not None and int(samples.group(1)) > 0, "no interval with traffic plotted")


def case_dashboard(daemon, sim, outdir, tmp):
    browser = chromium_binary()
    if browser is None:
        print("chromium not found (apt-get install chromium): skipped", file=sys.stderr)
        return SKIP
    d = Daemon(daemon, tmp, "dash")
    feeder = subprocess.Popen([sim, "--endpoint", d.input, "--n", str(N), "--cells", str(MATRICES),
                               "--rate", "20", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pull = zmq.Context().socket(zmq.PULL)
    pull.connect(d.output)
    drain_until = time.time() + 4
    while time.time() < drain_until:  # a few history points with traffic
        if pull.poll(100):
            pull.recv_multipart()
    base = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={tmp}/chromium", "--virtual-time-budget=4000"]
    r = subprocess.run(base + ["--dump-dom", d.url + "/"], capture_output=True, text=True, timeout=120)
    m = re.search(r'<body[^>]*data-samples="(\d+)"', r.stdout)
    samples = int(m.group(1)) if m else 0
    print(f"chromium --dump-dom: data-samples={samples}", file=sys.stderr)
    check(samples > 0, f"dashboard plotted no data: {r.stdout[:500]!r} {r.stderr[-500:]!r}")
    check(re.search(r'data-updated="\d{4}-', r.stdout) is not None, "data-updated not set")
    png = os.path.join(outdir, "dashboard.png")
    r = subprocess.run(base + ["--window-size=1600,1000", f"--screenshot={png}", d.url + "/"],
                       capture_output=True, text=True, timeout=120)
    check(os.path.exists(png) and os.path.getsize(png) > 10000, f"no screenshot: {r.stderr[-500:]!r}")
    print(f"screenshot: {png}", file=sys.stderr)
    feeder.send_signal(signal.SIGINT)
    feeder.wait(timeout=30)
    check_idle_gaps(d, base)
    pull.close(linger=0)
    rc = d.stop()
    check(rc == 0, f"daemon exit {rc}")
    return 0


def main():
    daemon, sim, case, outdir = sys.argv[1:5]
    os.makedirs(outdir, exist_ok=True)
    cases = {"prometheus": case_prometheus, "robustness": case_robustness, "dashboard": case_dashboard,
             "limits": case_limits, "slowloris": case_slowloris}
    with tempfile.TemporaryDirectory() as tmp:
        rc = cases[case](daemon, sim, outdir, tmp)
    if rc == SKIP:
        return SKIP
    return eigstream_check.outcome()


if __name__ == "__main__":
    sys.exit(main())
