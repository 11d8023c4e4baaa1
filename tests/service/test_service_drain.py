#!/usr/bin/python3
"""A SIGTERM's drain delivers to a slow consumer (label integration).

  test_service_drain.py PATH_TO_EIGSTREAM [curve]

The daemon (PUSH output) solves 40 frames for a consumer at ZMQ_RCVHWM 1
that reads 20 a second, so that when /metrics says all 40 are out most are
still on their way: in ZeroMQ's queues and in the kernel's socket buffers.
SIGTERM then; the consumer keeps reading. Every one of the 40 eigenspaces
must arrive (eigenvalues against numpy.linalg.eigvalsh), the daemon exit 0
with "accounting: in=40 out=40 ... dropped=0" and name nothing as not
delivered. Before the daemon waited for its receivers to read what it had
written (connection_watch.h), libzmq dropped the unread tail at the consumer
when the daemon closed: 37 of 40 arrived, and the accounting said out=40.
With `curve` every socket is a CURVE server (security.*, keys made here
with pyzmq) and the consumer and the source CURVE clients: the output's one
monitor is then the handshake counter's, which feeds the connection watch.
No bound on time is a pass condition: on a machine too slow to build a
backlog the case is merely easy.
"""
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np
import zmq
import zmq.auth

from service_util import check, check_eigenspace, covariance, daemon_session, hermitian, started_with, wait_metric

DAEMON = sys.argv[1]
CURVE = len(sys.argv) > 2 and sys.argv[2] == "curve"
FRAMES = 40
KEYS = {}  # with CURVE: "server" (public, secret), "client" (public, secret), "secret_file", "allow"


def make_keys(tmp):
    """The server's and the client's key pairs in ZPL files (the daemon's format); the client's
    public key alone in the allow-list directory."""
    keys, allow = os.path.join(tmp, "keys"), os.path.join(tmp, "allow")
    os.makedirs(keys, mode=0o700)
    os.makedirs(allow, mode=0o700)
    for name in ("server", "client"):
        public, secret = zmq.auth.create_certificates(keys, name)
        os.chmod(secret, 0o600)
        KEYS[name] = zmq.auth.load_certificate(secret)
    shutil.copy(os.path.join(keys, "client.key"), allow)
    KEYS["secret_file"], KEYS["allow"] = os.path.join(keys, "server.key_secret"), allow


def config(tag):
    security = (f'security = {{ curve_secret_key = "{KEYS["secret_file"]}"; curve_allow = "{KEYS["allow"]}"; }};'
                if CURVE else "")
    return f'''input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "push"; hwm = 4; }};
solver = {{ n = 8; matrices = 2; backend = "lapack"; cpu_threads = 1; }};
frame = {{ overflow_policy = "block"; deadline_ms = 60000; }};
metrics = {{ endpoint = ""; http = "127.0.0.1:0"; interval_ms = 100; }};
{security}
'''


def client(ctx, kind):
    """A socket of kind, a CURVE client of the daemon with CURVE."""
    s = ctx.socket(kind)
    s.setsockopt(zmq.LINGER, 0)
    if CURVE:
        s.curve_serverkey = KEYS["server"][0]
        s.curve_publickey, s.curve_secretkey = KEYS["client"]
    return s


class SlowConsumer:
    """A PULL at ZMQ_RCVHWM 1 reading an eigenspace every 50 ms until FRAMES
    came or nothing came for 10 s once stop() was called."""

    def __init__(self, ctx, tag):
        self.pull = client(ctx, zmq.PULL)
        self.pull.setsockopt(zmq.RCVHWM, 1)
        self.pull.connect(f"ipc:///tmp/eigstream-{tag}-out")
        self.got, self.stopping = [], threading.Event()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        quiet_since = None
        while len(self.got) < FRAMES:
            if self.pull.poll(200):
                self.got.append(self.pull.recv_multipart())
                quiet_since = None
                time.sleep(0.05)
            elif self.stopping.is_set():
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since > 10:
                    break

    def stop(self):
        self.stopping.set()
        self.thread.join(120)
        self.pull.close()


def run(daemon, cfg, tag):
    port = started_with(daemon, "eigstream_deadline_seconds", 60.0)
    if port is None:
        return
    ctx = zmq.Context()
    consumer = SlowConsumer(ctx, tag)
    push = client(ctx, zmq.PUSH)
    push.connect(f"ipc:///tmp/eigstream-{tag}-in")
    rng = np.random.default_rng(40)
    sent = {}
    for seq in range(FRAMES):
        sent[seq] = hermitian(rng, 2, 8)
        push.send_multipart(covariance(seq, sent[seq]))
    out = wait_metric(port, "eigstream_frames_published_total", lambda v: v >= FRAMES)
    check(out == FRAMES, f"/metrics: {out} frames out, want {FRAMES}")
    start = len(daemon.lines)
    status = daemon.stop()
    consumer.stop()
    push.close()
    ctx.destroy(linger=0)
    check(status == 0, f"exit status {status} after SIGTERM (expected 0: drained)")
    seqs = [check_eigenspace(parts, sent) for parts in consumer.got]
    check(seqs == list(range(FRAMES)), f"the consumer got seqs {seqs}, want 0..{FRAMES - 1}")
    check(daemon.wait_for(rf"accounting: in={FRAMES} out={FRAMES} .*dropped=0 .*in_flight=0", start, timeout=10)
          is not None, f"no 'accounting: in={FRAMES} out={FRAMES} ... dropped=0' line")
    check(daemon.wait_for(r"not delivered|may not be delivered", start, timeout=0) is None,
          "the daemon named published frames as not delivered")


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-drain-")
    try:
        if CURVE:
            make_keys(tmp)
        daemon_session("service drain" + (" curve" if CURVE else ""), DAEMON, tmp, config, run, clean_exit=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
