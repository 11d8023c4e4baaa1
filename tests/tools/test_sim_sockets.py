#!/usr/bin/python3
"""eigstream-sim over several PUSH sockets: --endpoint "a,b,c" (label integration).

  test_sim_sockets.py PATH_TO_SIM

A listed --endpoint opens one PUSH socket per entry and sends frame seq f,
every fragment of it, on the (f mod K)-th, so that a daemon whose
input.endpoint lists the same endpoints reads each connection in order.
Oracle: the wire header as docs/protocol.md lays it out (64 bytes, magic
"EIGS" at 0, u64 seq at 8, flags at 36 with FRAGMENT = bit 2, fragment
first at 56 and matrices at 60, little-endian), read by PULL sockets of
pyzmq bound on ports the kernel picks (ZMQ_LAST_ENDPOINT).

dealt      3 sockets, 30 whole frames: seq 0..29 each arrive exactly once,
           socket k gets exactly the seqs with seq % 3 == k, in increasing
           order; exit 0, the summary says 3 sockets and 30 written.
fragments  3 sockets, 12 frames of 3 fragments: each frame's fragments all
           arrive on socket seq % 3, back to back, first = 0, 2, 4 in order.
stall      2 sockets, the second's endpoint served by nobody, --hwm 2: the
           sim gives up (exit 1) naming that endpoint, after the frames its
           high-water mark holds (seq 1, 3: sent 5); the first socket's
           receiver got only even seqs.
refused    a bad list: empty entries, 9 entries, a non-ZeroMQ entry, or a
           list with --pattern pub: exit 2 and a message naming --endpoint.
Exit 77 (skipped) without pyzmq. The time bounds are only each process'
generous timeout: nothing here races a clock.
"""
import os
import re
import struct
import subprocess
import sys

try:
    import zmq
except ImportError:
    print("tools_sim_sockets: skipped, no pyzmq (python3-zmq)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "service"))
from service_util import check, failures  # noqa: E402

SIM = sys.argv[1]
FLAG_FRAGMENT = 1 << 2
SMALL = ["--n", "4", "--cells", "6", "--snapshots", "16", "--pool", "2", "--rate", "0", "--quiet"]


def header_fields(parts):
    """(seq, fragment first or None) of a message's 64-byte header."""
    head = parts[0]
    check(len(head) == 64 and head[:4] == b"EIGS", f"not a frame header: {head[:8]!r} ({len(head)} bytes)")
    seq, = struct.unpack_from("<Q", head, 8)
    flags, = struct.unpack_from("<I", head, 36)
    first, = struct.unpack_from("<I", head, 56)
    return seq, first if flags & FLAG_FRAGMENT else None


class Receivers:
    """K PULL sockets bound on tcp://127.0.0.1 ports the kernel picks."""

    def __init__(self, count):
        self.ctx = zmq.Context()
        self.socks = []
        for _ in range(count):
            sock = self.ctx.socket(zmq.PULL)
            sock.setsockopt(zmq.LINGER, 0)
            sock.bind("tcp://127.0.0.1:*")
            self.socks.append(sock)
        self.endpoints = [s.getsockopt(zmq.LAST_ENDPOINT).decode() for s in self.socks]
        self.got = [[] for _ in self.socks]  # per socket: (seq, first) in arrival order

    def receive_until(self, messages, proc, limit_s=60):
        """Reads every socket until `messages` have come in all, the sim has
        ended and nothing more is pending, or limit_s passed (a hang)."""
        poller = zmq.Poller()
        for s in self.socks:
            poller.register(s, zmq.POLLIN)
        waited_ms = 0
        while waited_ms < limit_s * 1000:
            ready = dict(poller.poll(100))
            for k, s in enumerate(self.socks):
                if s in ready:
                    self.got[k].append(header_fields(s.recv_multipart()))
            if not ready:
                waited_ms += 100
                total = sum(len(g) for g in self.got)
                if proc.poll() is not None and total >= messages:
                    return

    def close(self):
        for s in self.socks:
            s.close()
        self.ctx.term()


def run_sim(endpoints, frames, extra=()):
    """Starts the sim sending `frames` over the listed endpoints."""
    argv = [SIM, "--endpoint", ",".join(endpoints), "--frames", str(frames), *SMALL, *extra]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc, name):
    """(exit status, stdout, stderr) of the sim."""
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        check(False, f"{name}: the sim did not end: {err!r}")
    return proc.returncode, out, err


def case_dealt():
    receivers = Receivers(3)
    proc = run_sim(receivers.endpoints, 30)
    receivers.receive_until(30, proc)
    rc, out, err = finish(proc, "dealt")
    receivers.close()
    check(rc == 0, f"dealt: exit {rc}: {err!r}")
    check(re.search(r"sent 30 frames", out) and
          "30 frames written to the connection, 0 still queued at exit (not delivered), over 3 sockets" in out,
          f"dealt: summary {out!r}")
    seqs = sorted(seq for got in receivers.got for seq, _ in got)
    check(seqs == list(range(30)), f"dealt: seqs received {seqs}, want 0..29 once each")
    for k, got in enumerate(receivers.got):
        mine = [seq for seq, _ in got]
        check(mine == list(range(k, 30, 3)), f"dealt: socket {k} got seqs {mine}, want {list(range(k, 30, 3))}")
        check(all(first is None for _, first in got), f"dealt: socket {k}: a fragment in whole frames")


def case_fragments():
    # 6 matrices in 3 fragments: 2 + 2 + 2, first = 0, 2, 4.
    receivers = Receivers(3)
    proc = run_sim(receivers.endpoints, 12, ["--fragments", "3"])
    receivers.receive_until(36, proc)
    rc, out, err = finish(proc, "fragments")
    receivers.close()
    check(rc == 0, f"fragments: exit {rc}: {err!r}")
    for k, got in enumerate(receivers.got):
        want = [(seq, first) for seq in range(k, 12, 3) for first in (0, 2, 4)]
        check(got == want, f"fragments: socket {k} got (seq, first) {got}, want {want}")


def case_stall():
    ctx = zmq.Context()
    reader = ctx.socket(zmq.PULL)
    reader.setsockopt(zmq.LINGER, 0)
    reader.bind("tcp://127.0.0.1:*")
    served = reader.getsockopt(zmq.LAST_ENDPOINT).decode()
    nobody = f"ipc:///tmp/eigstream-sim-sockets-{os.getpid()}-nobody"
    proc = run_sim([served, nobody], 40, ["--hwm", "2", "--stall-timeout-ms", "1000", "--linger-ms", "1000"])
    seqs = []
    while proc.poll() is None or reader.poll(0):
        if reader.poll(100):
            seqs.append(header_fields(reader.recv_multipart())[0])
    rc, out, err = finish(proc, "stall")
    reader.close()
    ctx.term()
    check(rc == 1, f"stall: exit {rc}, want 1: {err!r}")
    check(f"no receiver at {nobody}: no frame could be queued for" in err and
          "giving up (--stall-timeout-ms 1000)" in err, f"stall: message {err!r}")
    check(re.search(r"sent 5 frames", out) and "over 2 sockets" in out,
          f"stall: summary {out!r}, want sent 5 (seq 0..4: the second socket holds 1 and 3) over 2 sockets")
    check(seqs == [0, 2, 4], f"stall: the served socket got seqs {seqs}, want [0, 2, 4]")


def case_refused():
    lists = {"empty entries": "tcp://127.0.0.1:1,,",
             "nine entries": ",".join(f"tcp://127.0.0.1:{p}" for p in range(1, 10)),
             "not ZeroMQ": "tcp://127.0.0.1:1,127.0.0.1:2"}
    for name, text in lists.items():
        r = subprocess.run([SIM, "--endpoint", text, "--frames", "1", *SMALL], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 2 and "--endpoint" in r.stderr,
              f"refused {name}: exit {r.returncode} (want 2), message {r.stderr!r} (want --endpoint named)")
    r = subprocess.run([SIM, "--endpoint", "tcp://127.0.0.1:1,tcp://127.0.0.1:2", "--pattern", "pub", *SMALL],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "--endpoint" in r.stderr and "--pattern push" in r.stderr,
          f"refused pub: exit {r.returncode} (want 2), message {r.stderr!r}")


def main():
    case_dealt()
    case_fragments()
    case_stall()
    case_refused()
    if failures:
        sys.exit(1)
    print("tools_sim_sockets: ok")


if __name__ == "__main__":
    main()
