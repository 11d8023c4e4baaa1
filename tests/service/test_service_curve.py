#!/usr/bin/python3
"""CURVE security of the daemon's ZeroMQ sockets, and eigstream-keygen
(label integration).

  test_service_curve.py PATH_TO_EIGSTREAM PATH_TO_KEYGEN [PATH_TO_SIM PATH_TO_SINK]

Oracles: pyzmq/libzmq (zmq.curve_public derives a public key from a secret
one; zmq.auth.load_certificate reads the files; pyzmq clients do the CURVE
handshakes), os.stat for the modes, numpy.linalg.eigvalsh for the frames.

1. keygen: BASE.key 0644 and BASE.key_secret 0600, a matching pair that
   pyzmq reads; a second run refuses and leaves both files unchanged.
2. A secret key file readable by the group: the daemon refuses to start,
   naming the file, its mode and the fix.
3. The daemon with CURVE on input, output (pub) and metrics; the allow-list
   is a directory holding the listed client's .key only.
   - the listed client sends frames, receives their eigenspaces (checked)
     and the metrics;
   - a client with an unlisted key and a plain-text client, each on input
     and output, get nothing; each refusal is counted
     (eigstream_auth_rejected_total{reason="key_not_allowed"|"plaintext"});
     the unlisted key is logged once though refused more than once, each
     socket's plain-text refusal once (fresh plain-text clients until each
     socket has named one: one that hangs up first counts as "handshake");
     no frame of theirs is accepted. The unlisted key's client on input and
     output is two refused clients exactly, however often it reconnects
     (ZAP's domain names the socket).
   - a client with the wrong server key reconnects (libzmq, every 100 ms):
     its own socket monitor counts its connections (the oracle); the
     daemon counts exactly one refused client (reason "handshake") and
     every other connection as a retry (eigstream_auth_retries_total).
     It runs first: failures before ZAP are counted per socket (no peer
     named), so no other "handshake" refusal on the output may precede it.
4. The tools as CURVE clients (--curve-server-key, --curve-key):
   eigstream-sim feeds the daemon and eigstream-sink, listed, receives two
   eigenspaces and checks them against the scene (VERDICT: PASS).
5. SIGTERM: exit 0.
"""
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np
import zmq
import zmq.auth
import zmq.utils.monitor

from service_util import check, check_eigenspace, covariance, daemon_session, hermitian, scrape, wait_metric

DAEMON, KEYGEN = sys.argv[1], sys.argv[2]
SIM, SINK = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else (None, None)


def keygen(base):
    return subprocess.run([KEYGEN, base], capture_output=True, text=True, timeout=30)


def test_keygen(keys):
    base = os.path.join(keys, "server")
    r = keygen(base)
    check(r.returncode == 0, f"keygen: exit {r.returncode} {r.stderr}")
    public, secret = base + ".key", base + ".key_secret"
    check(stat.S_IMODE(os.stat(public).st_mode) == 0o644, f"{public}: mode {os.stat(public).st_mode:o}")
    check(stat.S_IMODE(os.stat(secret).st_mode) == 0o600, f"{secret}: mode {os.stat(secret).st_mode:o}")
    pub, sec = zmq.auth.load_certificate(secret)
    pub_only, none = zmq.auth.load_certificate(public)
    check(pub == pub_only and none is None, "the public file's key is not the secret file's")
    check(zmq.curve_public(sec) == pub, "public key does not belong to the secret key")
    check(pub.decode() in r.stdout, "keygen did not print the public key")
    before = (open(public).read(), open(secret).read())
    r = keygen(base)
    check(r.returncode == 1 and "refusing to overwrite" in r.stderr, f"second keygen: {r.returncode} {r.stderr}")
    check((open(public).read(), open(secret).read()) == before, "second keygen changed the files")
    for name in ("client", "stranger"):
        check(keygen(os.path.join(keys, name)).returncode == 0, f"keygen {name}")


def config(tag, secret, allow):
    return f'''
input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "pub"; hwm = 100; }};
solver = {{ n = 8; matrices = 2; backend = "lapack"; cpu_threads = 1; }};
metrics = {{ endpoint = "ipc:///tmp/eigstream-{tag}-metrics"; http = "127.0.0.1:0"; interval_ms = 100; }};
security = {{ curve_secret_key = "{secret}"; curve_allow = "{allow}"; }};
'''


def test_loose_permissions(tmp, keys, allow):
    loose = os.path.join(tmp, "loose.key_secret")
    shutil.copy(os.path.join(keys, "server.key_secret"), loose)
    os.chmod(loose, 0o640)
    cfg = os.path.join(tmp, "loose.cfg")
    with open(cfg, "w") as f:
        f.write(config(f"loose{os.getpid()}", loose, allow))
    r = subprocess.run([DAEMON, "-c", cfg], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1, f"loose secret key: exit {r.returncode}")
    check(f"security.curve_secret_key: {loose}: mode 0640 lets group or others at the secret key: refused "
          f"(chmod 600 {loose})" in r.stderr, f"loose secret key message: {r.stderr!r}")


def client(ctx, kind, server_public, keys=None):
    s = ctx.socket(kind)
    s.setsockopt(zmq.LINGER, 0)
    if keys is not None:
        s.curve_serverkey = server_public
        s.curve_publickey, s.curve_secretkey = keys
    return s


def refused_pair(ctx, server_public, keys, inp, out):
    """A subscriber on the output and a pusher with one frame on the input,
    with keys (or plain text when None); both are to be refused."""
    sub = client(ctx, zmq.SUB, server_public, keys)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(out)
    push = client(ctx, zmq.PUSH, server_public, keys)
    push.setsockopt(zmq.SNDTIMEO, 0)
    push.connect(inp)
    try:
        push.send_multipart(covariance(900, np.eye(8)[None].repeat(2, 0) + 0j))
    except zmq.Again:
        pass  # no handshake completed: PUSH has no peer to queue for
    return [sub, push]


def metric(port, name):
    return scrape(port).get(name, 0)


def test_reconnects(ctx, port, out, listed, wrong_server):
    """A client that keeps reconnecting with the wrong server key: one
    refused client, its other connections retries; the client's own
    socket monitor counts its connections."""
    rejected = 'eigstream_auth_rejected_total{reason="handshake"}'
    retries = 'eigstream_auth_retries_total{reason="handshake"}'
    before = (metric(port, rejected), metric(port, retries))
    sub = client(ctx, zmq.SUB, wrong_server, listed)
    monitor = sub.get_monitor_socket(zmq.EVENT_CONNECTED)
    sub.connect(out)
    connected, end = 0, time.time() + 60
    while connected < 8 and time.time() < end:
        if monitor.poll(1000):
            event = zmq.utils.monitor.recv_monitor_message(monitor)
            connected += event["event"] == zmq.EVENT_CONNECTED
    sub.disable_monitor()
    sub.close()  # the last connection is refused too: as a client that hung up, or by the key
    monitor.close()
    check(connected == 8, f"the wrong-key client connected {connected} times in 60 s, want 8")
    total = wait_metric(port, retries, lambda v: v - before[1] + metric(port, rejected) - before[0] >= connected)
    new, again = metric(port, rejected) - before[0], (total or 0) - before[1]
    print(f"one wrong-key client, {connected} connections: {new:.0f} refused client(s), {again:.0f} retries")
    check(new == 1 and again == connected - 1,
          f"{connected} connections of one wrong-key client: {new} refused clients, {again} retries; "
          f"want 1 and {connected - 1}")


def plaintext_logged(daemon, role):
    """How many times the daemon logged a plain-text refusal on role's socket."""
    return sum(f"auth: {role} ipc://" in x and "without CURVE" in x for x in list(daemon.lines))


def run(daemon, tag, keys):
    port = daemon.http_port()
    if not check(port is not None, "the daemon did not start"):
        return
    server_public, _ = zmq.auth.load_certificate(os.path.join(keys, "server.key"))
    listed = zmq.auth.load_certificate(os.path.join(keys, "client.key_secret"))
    stranger = zmq.auth.load_certificate(os.path.join(keys, "stranger.key_secret"))
    ctx = zmq.Context()
    inp, out, met = (f"ipc:///tmp/eigstream-{tag}-{x}" for x in ("in", "out", "metrics"))

    # First (failures before ZAP are counted per socket: no "handshake"
    # refusal on the output before): a client that reconnects with the wrong
    # server key.
    test_reconnects(ctx, port, out, listed, stranger[0])

    # Refused clients first: an unlisted key and plain text, on input and output.
    refused_subs = []
    refused_subs += refused_pair(ctx, server_public, stranger, inp, out)
    key_rejects = wait_metric(port, 'eigstream_auth_rejected_total{reason="key_not_allowed"}', lambda v: v >= 2)
    check(key_rejects is not None and key_rejects >= 2, f"key_not_allowed count {key_rejects}, want >= 2")
    # A plain-text client that hangs up first (it reads the daemon's CURVE
    # greeting and closes) can beat the daemon to its greeting: libzmq then
    # reports a broken pipe, not the mechanism, and the refusal is counted as
    # "handshake". libzmq does not reconnect after a protocol error, so fresh
    # clients try again until each socket has named one plain-text client.
    end = time.time() + 60
    while time.time() < end and not all(plaintext_logged(daemon, role) for role in ("input", "output")):
        refused_subs += refused_pair(ctx, server_public, None, inp, out)
        time.sleep(0.3)
    plain_rejects = wait_metric(port, 'eigstream_auth_rejected_total{reason="plaintext"}', lambda v: v >= 2)
    check(plain_rejects is not None and plain_rejects >= 2, f"plaintext count {plain_rejects}, want >= 2")
    key_clients = metric(port, 'eigstream_auth_rejected_total{reason="key_not_allowed"}')
    key_retries = metric(port, 'eigstream_auth_retries_total{reason="key_not_allowed"}')
    check(key_clients == 2, f"the unlisted key on input and output: {key_clients} refused clients "
          f"({key_retries} retries), want 2")

    # The listed client: frames in, eigenspaces and metrics out.
    sub = client(ctx, zmq.SUB, server_public, listed)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(out)
    metrics_sub = client(ctx, zmq.SUB, server_public, listed)
    metrics_sub.setsockopt(zmq.SUBSCRIBE, b"")
    metrics_sub.connect(met)
    push = client(ctx, zmq.PUSH, server_public, listed)
    push.connect(inp)
    rng = np.random.default_rng(11)
    sent, got = {}, None
    end = time.time() + 60
    while got is None and time.time() < end:  # PUB: resend until the subscription has arrived
        seq = len(sent)
        sent[seq] = hermitian(rng, 2, 8)
        push.send_multipart(covariance(seq, sent[seq]))
        if sub.poll(200):
            got = sub.recv_multipart()
    if check(got is not None, "the listed client received no eigenspace"):
        check_eigenspace(got, sent)
    doc = json.loads(metrics_sub.recv()) if metrics_sub.poll(30000) else {}
    check("frames" in doc, "the listed client received no metrics document")
    auth = doc.get("auth_rejected", {})
    check(auth.get("key_not_allowed", 0) >= 2 and auth.get("plaintext", 0) >= 2,
          f"the metrics document's auth_rejected {auth}: want key_not_allowed and plaintext >= 2")
    published = wait_metric(port, "eigstream_frames_published_total", lambda v: v >= len(sent))
    check(published == len(sent), f"published {published}, the listed client sent {len(sent)}")
    received = scrape(port).get("eigstream_frames_received_total")
    check(received == len(sent), f"accepted {received} frames, the listed client sent {len(sent)}: "
          "a refused client's frame got in")
    for s in refused_subs:
        if s.type == zmq.SUB:
            check(not s.poll(500), "a refused subscriber received an eigenspace")

    # Logged once: the stranger's key however often refused; plain text once per socket.
    lines = list(daemon.lines)
    key_lines = [x for x in lines if stranger[0].decode() in x]
    check(len(key_lines) == 1, f"stranger's key logged {len(key_lines)} times (refused {key_rejects}): {key_lines}")
    for role in ("input", "output"):
        n = plaintext_logged(daemon, role)
        check(n == 1, f"plain-text refusal on {role} logged {n} times (refused {plain_rejects} in all)")
    for s in refused_subs + [sub, metrics_sub, push]:
        s.close()
    ctx.destroy(linger=0)
    if SIM is not None:
        test_tools(keys, out, inp)


def test_tools(keys, out, inp):
    curve = ["--curve-server-key", os.path.join(keys, "server.key"),
             "--curve-key", os.path.join(keys, "client.key_secret")]
    sink = subprocess.Popen([SINK, "--endpoint", out, "--n", "8", "--frames", "2", "--quiet"] + curve,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sim = subprocess.Popen([SIM, "--endpoint", inp, "--n", "8", "--cells", "2", "--rate", "20", "--quiet"] + curve,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        text, _ = sink.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        sink.kill()
        text, _ = sink.communicate()
    sim.send_signal(signal.SIGINT)
    _, sim_err = sim.communicate(timeout=60)
    check(sink.returncode == 0 and "VERDICT: PASS frames=2" in text,
          f"eigstream-sink over CURVE: exit {sink.returncode}: {text[-500:]!r}")
    check(sim.returncode == 0, f"eigstream-sim over CURVE: exit {sim.returncode}: {sim_err[-500:]!r}")


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-curve-")
    keys, allow = os.path.join(tmp, "keys"), os.path.join(tmp, "allow")
    os.makedirs(keys)
    os.makedirs(allow)
    test_keygen(keys)
    shutil.copy(os.path.join(keys, "client.key"), allow)
    test_loose_permissions(tmp, keys, allow)

    daemon_session("service curve", DAEMON, tmp,
                   lambda tag: config(tag, os.path.join(keys, "server.key_secret"), allow),
                   lambda daemon, cfg, tag: run(daemon, tag, keys))


if __name__ == "__main__":
    main()
