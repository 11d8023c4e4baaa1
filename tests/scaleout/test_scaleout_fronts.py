#!/usr/bin/python3
"""eigstream-dispatch with several front sockets (--front E1,E2,E3), between this test as a source
of three PUSH sockets and a fake daemon (a DEALER speaking the control messages) (label integration).

  test_scaleout_fronts.py BUILD_DIR SOURCE_DIR CASE     CASE: fronts | connect | curve | refused | fragment

fronts    60 frames, seq f on PUSH socket f mod 3, each socket connected to its own endpoint of
          the list, plus one garbage message on the last: the daemon gets every frame exactly
          once, each socket's frames in their order; the books balance (frames_in 61 = dispatched
          60 + rejected 1, nothing dropped or queued, the daemon's dispatched 60), and the seq
          log names each seq once. A socket left unbound, or read by nobody, loses its frames.
connect   the same with the source binding its three PUSH sockets and the dispatcher connecting
          socket k to the k-th endpoint (--front-connect).
curve     the same over CURVE (--curve-secret-key with both allow-lists): the three PUSH sockets
          and the daemon are CURVE clients with listed keys; a plain-text PUSH on the second
          endpoint and one with an unlisted key on the third are refused and counted on the
          front end, and none of their frames reaches the daemon: every endpoint is under the
          one allow-list.
refused   a bad list exits 2 naming --front, before anything opens: empty entries
          ("tcp://127.0.0.1:1,,"), a leading comma, 9 entries, an entry that is no ZeroMQ
          endpoint, an entry listed twice.
fragment  a frame of 3 fragments on one of the three sockets: every fragment rejected `config_mismatch`
          (the log says fragmented frames need one front endpoint), no fragmented frame started;
          a whole frame after it is still dispatched; the books balance.

Synchronisation by handshakes (READY taken, JSON counters, frames received); the timeouts are
upper bounds for a stuck run.
"""
import os
import signal
import subprocess
import sys

import numpy as np
import zmq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_scaleout as ts  # noqa: E402  (its helpers; argv has the same shape)
from test_scaleout import check, free_ports, wait_for, Lines, FakeDaemon, ec  # noqa: E402

CASE = sys.argv[3]
DISPATCH = ts.DISPATCH
KEYGEN = os.path.join(ts.BUILD, "tools", "keygen", "eigstream-keygen")
READY = 1
SOCKETS, FRAMES = 3, 60
MATRICES = np.stack([np.eye(4, dtype=np.complex64) * (i + 1) for i in range(2)])


class Dispatcher:
    """eigstream-dispatch with --front listing SOCKETS endpoints, its JSON and seq log."""

    def __init__(self, tmp, extra=()):
        *self.fronts, self.back = free_ports(SOCKETS + 1)
        self.json, self.seq_log = os.path.join(tmp, "dispatch.json"), os.path.join(tmp, "seq.log")
        front = ",".join(f"tcp://127.0.0.1:{p}" for p in self.fronts)
        self.proc = subprocess.Popen([DISPATCH, "--front", front, "--back", f"tcp://127.0.0.1:{self.back}",
                                      "--stats-s", "0.05", "--json", self.json, "--seq-log", self.seq_log,
                                      "--max-credit", "1000", "--queue", "100", "--overflow", "block", *extra],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.log = Lines(self.proc, "dispatch")
        self.ctx = zmq.Context()

    def stats(self):
        return ts.read_json(self.json)

    def wait_stats(self, predicate, what):
        return wait_for(lambda: (lambda j: bool(j) and predicate(j))(self.stats()), what, 60)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        check(self.proc.returncode == 0, f"dispatcher exit {self.proc.returncode}")
        self.log.thread.join(timeout=10)
        if ts.failures:
            self.log.dump()
        return self.stats()


def daemon_ready(d, sock=None):
    """The test's daemon, READY with credit for every frame; waits until the dispatcher took it."""
    daemon = FakeDaemon(d.ctx, d.back, "daemon-0") if sock is None else sock
    daemon.send(READY, 1000, 600000)
    d.wait_stats(lambda j: j.get("daemons_alive") == 1, "the daemon READY")
    return daemon


def pushers(d, make=None):
    """One PUSH per front endpoint, socket k attached to endpoint k's port: make(ctx, port), by
    default a PUSH connected to it."""
    out = []
    for port in d.fronts:
        if make is not None:
            s = make(d.ctx, port)
        else:
            s = d.ctx.socket(zmq.PUSH)
            s.connect(f"tcp://127.0.0.1:{port}")
        s.setsockopt(zmq.LINGER, 0)
        out.append(s)
    return out


def send_frames(socks):
    for f in range(FRAMES):
        socks[f % SOCKETS].send_multipart(ec.encode_covariance(f, f, MATRICES))


def check_delivery(got, d, extra_in):
    """Every frame exactly once at the daemon, each socket's frames in order; the books balance."""
    seqs = [seq for seq, first in got]
    check(sorted(seqs) == list(range(FRAMES)), f"the daemon got seqs {seqs}")
    if len(got) < FRAMES:
        return d.stop()  # frames lost: the books cannot balance either (expect named the failure)
    check(all(first is None for _, first in got), f"fragments among {got}")
    for k in range(SOCKETS):
        mine = [s for s in seqs if s % SOCKETS == k]
        check(mine == sorted(mine), f"socket {k}'s frames out of order: {mine}")
    d.wait_stats(lambda j: j.get("dispatched") == FRAMES, f"{FRAMES} frames dispatched")
    j = d.stop()
    daemons = j.get("daemons", [])
    check(j.get("frames_in") == FRAMES + extra_in and j.get("dispatched") == FRAMES
          and j.get("rejected_total") == extra_in and j.get("dropped_total") == 0 and j.get("queued") == 0
          and len(daemons) == 1 and daemons[0].get("dispatched") == FRAMES
          and j["frames_in"] == j["dispatched"] + j["rejected_total"] + j["dropped_total"] + j["queued"],
          f"books: {j}")
    logged = [int(line.split()[0]) for line in open(d.seq_log) if line.strip()]
    check(sorted(logged) == list(range(FRAMES)), f"seq log: {logged}")
    print(f"books: frames_in={j.get('frames_in')} dispatched={j.get('dispatched')} "
          f"rejected={j.get('rejected')} dropped_total={j.get('dropped_total')}")
    return j


def test_fronts(tmp):
    d = Dispatcher(tmp)
    daemon = daemon_ready(d)
    socks = pushers(d)
    send_frames(socks)
    socks[-1].send_multipart([b"not a frame"])
    got = daemon.expect(FRAMES, 120)
    d.wait_stats(lambda j: j.get("rejected_total") == 1, "the garbage rejected")
    check_delivery(got, d, 1)
    check(d.log.count(r"front tcp://127\.0\.0\.1:\d+,tcp://127\.0\.0\.1:\d+,tcp://127\.0\.0\.1:\d+ \(bind\)") == 1,
          "the start line names the three endpoints")
    for s in socks + [daemon.sock]:
        s.close(0)
    d.ctx.term()


def test_connect(tmp):
    d = Dispatcher(tmp, ["--front-connect"])
    daemon = daemon_ready(d)

    def bound(ctx, port):
        s = ctx.socket(zmq.PUSH)
        s.setsockopt(zmq.SNDTIMEO, 60000)  # a send waits for the dispatcher's connection; bounded for a stuck run
        s.bind(f"tcp://127.0.0.1:{port}")
        return s
    socks = pushers(d, bound)
    send_frames(socks)
    got = daemon.expect(FRAMES, 120)
    check_delivery(got, d, 0)
    check(d.log.count(r"front tcp://127\.0\.0\.1:\d+,tcp://127\.0\.0\.1:\d+,tcp://127\.0\.0\.1:\d+ \(connect\)") == 1,
          "the start line names the three endpoints, connected")
    for s in socks + [daemon.sock]:
        s.close(0)
    d.ctx.term()


def test_curve(tmp):
    import test_scaleout_curve as tc  # its key pairs and clients (argv has the same shape)
    keys = tc.Keys(tmp, 1)
    d = Dispatcher(tmp, ["--curve-secret-key", keys.secret("dispatch"),
                         "--front-curve-allow", os.path.join(keys.dir, "sources"),
                         "--back-curve-allow", os.path.join(keys.dir, "daemons")])
    daemon = FakeDaemon.__new__(FakeDaemon)
    daemon.name, daemon.got = "daemon0", []
    daemon.sock = tc.client_socket(d.ctx, zmq.DEALER, keys, "dispatch", "daemon0", b"daemon0")
    daemon.sock.connect(f"tcp://127.0.0.1:{d.back}")
    daemon_ready(d, daemon)
    socks = pushers(d, lambda ctx, port: (lambda s: (s.connect(f"tcp://127.0.0.1:{port}"), s)[1])(
        tc.client_socket(ctx, zmq.PUSH, keys, "dispatch", "source")))
    rogues = []
    for port, client in ((d.fronts[1], None), (d.fronts[2], "stranger")):
        s = tc.client_socket(d.ctx, zmq.PUSH, keys, "dispatch", client)
        s.connect(f"tcp://127.0.0.1:{port}")
        try:
            s.send_multipart(ec.encode_covariance(1000 + len(rogues), 0, MATRICES), zmq.DONTWAIT)
        except zmq.Again:
            pass  # no handshake completed: nothing queued
        rogues.append(s)
    send_frames(socks)
    got = daemon.expect(FRAMES, 120)
    d.wait_stats(lambda j: tc.plain_count(j.get("auth_rejected", {}).get("front", {})) >= 1
                 and j["auth_rejected"]["front"].get("key_not_allowed", 0) >= 1, "the rogues refused")
    j = check_delivery(got, d, 0)
    check(j.get("curve") is True and j["auth_rejected"]["back"] == tc.zeros(), f"CURVE report: {j}")
    print(f"auth_rejected: {j.get('auth_rejected')}")
    for s in socks + rogues + [daemon.sock]:
        s.close(0)
    d.ctx.term()


def test_refused(tmp):
    ok = "tcp://127.0.0.1:{}"
    lists = {"empty entries": "tcp://127.0.0.1:1,,",
             "a leading comma": ",tcp://127.0.0.1:2",
             "9 entries": ",".join(ok.format(p) for p in range(40001, 40010)),
             "no ZeroMQ endpoint": "tcp://127.0.0.1:1,localhost:2",
             "no address": "tcp://127.0.0.1:1,ipc://",
             "an entry twice": "tcp://127.0.0.1:1,tcp://127.0.0.1:2,tcp://127.0.0.1:1"}
    back = free_ports(1)[0]
    for what, front in lists.items():
        r = subprocess.run([DISPATCH, "--front", front, "--back", f"tcp://127.0.0.1:{back}", "--stats-s", "0"],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "--front" in r.stderr and "front tcp" not in r.stderr,
              f"{what} ({front}): exit {r.returncode}, {r.stderr!r}")
        print(f"{what}: exit {r.returncode}: {r.stderr.strip()}")


def test_fragment(tmp):
    d = Dispatcher(tmp)
    daemon = daemon_ready(d)
    socks = pushers(d)
    for m in ec.encode_fragments(7, 0, np.concatenate([MATRICES] * 3), 3):
        socks[1].send_multipart(m)
    d.wait_stats(lambda j: j.get("rejected", {}).get("config_mismatch") == 3, "the 3 fragments rejected")
    socks[2].send_multipart(ec.encode_covariance(8, 0, MATRICES))
    got = daemon.expect(1)
    check(got == [(8, None)], f"the daemon got {got}, wanted only the whole frame 8")
    d.wait_stats(lambda j: j.get("dispatched") == 1, "the whole frame dispatched")
    j = d.stop()
    fragmented = j.get("fragmented_frames", {})
    check(j.get("frames_in") == 4 and j.get("dispatched") == 1 and j.get("rejected_total") == 3
          and j.get("rejected", {}).get("config_mismatch") == 3
          and j.get("dropped_total") == 0 and j.get("queued") == 0
          and fragmented.get("started") == 0 and fragmented.get("dispatched") == 0, f"books: {j}")
    check(d.log.count(r"rejected a message: config_mismatch: a fragment \(seq 7, matrix 0\): fragmented frames need one "
                      r"front endpoint \(--front lists 3\)") == 1, "the refusal logged once, saying why")
    print(f"books: frames_in={j.get('frames_in')} dispatched={j.get('dispatched')} rejected={j.get('rejected')} "
          f"fragmented_frames={fragmented}")
    for s in socks + [daemon.sock]:
        s.close(0)
    d.ctx.term()


def main():
    for tool in (DISPATCH,) + ((KEYGEN,) if CASE == "curve" else ()):
        if not os.access(tool, os.X_OK):
            print(f"missing {tool}", file=sys.stderr)
            return 1
    cases = {"fronts": test_fronts, "connect": test_connect, "curve": test_curve, "refused": test_refused,
             "fragment": test_fragment}
    return ts.run_cases(cases, CASE)


if __name__ == "__main__":
    sys.exit(main())
