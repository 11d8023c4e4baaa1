#!/usr/bin/python3
"""eigstream-sim gives up when nothing receives (issue 26; label integration).

  test_sim_stall.py PATH_TO_SIM

It used to block in zmq_send until a signal (1,329 s once). Now, with
--stall-timeout-ms 1000, each case ends by itself with the sim's summary:
"sent S frames" and "W frames written to the connection, Q still queued at
exit (not delivered)", S = W + Q. Oracles: the receiver's own count of
frames (a PULL socket of pyzmq) and ZeroMQ's documented high-water mark.

none     no receiver ever: exit 1, "no receiver at ENDPOINT", S = 3 = --hwm
         (a connecting PUSH queues up to its high-water mark), W = 0, Q = 3.
stopped  a receiver that reads 2 frames of 512 KiB and then stops reading,
         connected: exit 1, "the receiver at ENDPOINT has taken nothing",
         W >= 2, Q >= 1, S < 40 (the frames asked for).
gone     a receiver that reads 2 frames and closes: exit 1, "no receiver at",
         W >= 2, Q >= 1.
served   a receiver that reads everything: exit 0, S = W = 5, Q = 0, and the
         receiver got exactly 5 frames.
slow     a receiver at ZMQ_RCVHWM 1 that reads a frame (8 KiB) every 50 ms:
         exit 0 and the receiver got every one of the 40 frames, including
         those still in the kernel's socket buffers when ZeroMQ had released
         the last (libzmq drops them at the receiver when the sender closes
         an IPC connection then; the sim waits for them to be read first:
         cli_peer_drain). 17 of 24 arrived before.
No bound on time other than each process' generous timeout: the sim's is
1 s of nothing queued, whatever the machine's speed.
"""
import os
import re
import subprocess
import sys
import threading
import time

import zmq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "service"))
from service_util import check, failures  # noqa: E402

SIM = sys.argv[1]


def endpoint(name):
    return f"ipc:///tmp/eigstream-sim-stall-{os.getpid()}-{name}"


def run_sim(name, frames, extra=(), n=64, cells=8, linger_ms=1000):
    """The sim (by default 64 x 64 x 8 complex128 = 512 KiB frames) against
    endpoint name: (exit status, stderr, sent, written, queued)."""
    argv = [SIM, "--endpoint", endpoint(name), "--n", str(n), "--cells", str(cells), "--snapshots", "128",
            "--pool", "1", "--rate", "0", "--frames", str(frames), "--stall-timeout-ms", "1000", "--linger-ms",
            str(linger_ms), "--quiet", *extra]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    sent = re.search(r"sent (\d+) frames", r.stdout)
    counts = re.search(r"(\d+) frames written to the connection, (\d+) still queued at exit", r.stdout)
    if not check(sent and counts, f"{name}: no summary in {r.stdout!r} {r.stderr!r}"):
        return r.returncode, r.stderr, -1, -1, -1
    return r.returncode, r.stderr, int(sent.group(1)), int(counts.group(1)), int(counts.group(2))


class Receiver:
    """A PULL bound at endpoint name that reads `take` frames (None: all),
    then stops reading, or with close closes its socket."""

    def __init__(self, name, take, close=False, pause_s=0.0):
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.PULL)
        self.sock.setsockopt(zmq.RCVHWM, 1)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind(endpoint(name))
        self.got, self.take, self.close, self.pause_s = 0, take, close, pause_s
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while not self.done.is_set() and (self.take is None or self.got < self.take):
            if self.sock.poll(100):
                self.sock.recv_multipart()
                self.got += 1
                time.sleep(self.pause_s)
        if self.close:
            self.sock.close()

    def stop(self):
        self.done.set()
        self.thread.join(30)
        if not self.close:
            self.sock.close()
        self.ctx.term()


def main():
    rc, err, sent, written, queued = run_sim("none", 20, ["--hwm", "3"])
    check(rc == 1, f"none: exit {rc}, want 1")
    check(f"no receiver at {endpoint('none')}: no frame could be queued for" in err and
          "giving up (--stall-timeout-ms 1000)" in err, f"none: message {err!r}")
    check((sent, written, queued) == (3, 0, 3), f"none: sent {sent}, written {written}, queued {queued}; want 3, 0, 3")

    for name, close, message in (("stopped", False, "has taken nothing for"), ("gone", True, "no receiver at")):
        receiver = Receiver(name, 2, close)
        rc, err, sent, written, queued = run_sim(name, 40, ["--hwm", "2"])
        receiver.stop()
        check(rc == 1, f"{name}: exit {rc}, want 1")
        check(message in err and "giving up" in err, f"{name}: message {err!r}, want {message!r}")
        check(receiver.got == 2, f"{name}: the receiver read {receiver.got} frames, want 2")
        check(sent == written + queued and written >= 2 and queued >= 1 and sent < 40,
              f"{name}: sent {sent}, written {written}, queued {queued}: want sent = written + queued, "
              f"written >= 2 (the receiver read 2), queued >= 1, sent < 40")

    receiver = Receiver("served", None)
    rc, err, sent, written, queued = run_sim("served", 5)
    end = time.time() + 60
    while receiver.got < 5 and time.time() < end:
        time.sleep(0.05)
    receiver.stop()
    check(rc == 0, f"served: exit {rc}: {err!r}")
    check((sent, written, queued, receiver.got) == (5, 5, 0, 5),
          f"served: sent {sent}, written {written}, queued {queued}, received {receiver.got}; want 5, 5, 0, 5")

    # --linger-ms bounds the wait for the slow reader: far above its 2 s
    receiver = Receiver("slow", None, pause_s=0.05)
    rc, err, sent, written, queued = run_sim("slow", 40, n=16, cells=4, linger_ms=120000)
    end = time.time() + 60
    while receiver.got < 40 and time.time() < end:
        time.sleep(0.05)
    receiver.stop()
    check(rc == 0 and "may not have been delivered" not in err, f"slow: exit {rc}: {err!r}")
    check((sent, written, receiver.got) == (40, 40, 40),
          f"slow: sent {sent}, written {written}, received {receiver.got}; want 40, 40, 40")

    if failures:
        sys.exit(1)
    print("tools_sim_stall: ok")


if __name__ == "__main__":
    main()
