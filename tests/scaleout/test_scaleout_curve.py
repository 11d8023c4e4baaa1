#!/usr/bin/python3
"""CURVE on every scale-out hop (label integration).

  test_scaleout_curve.py BUILD_DIR SOURCE_DIR CASE     CASE: e2e | flipped | rogue | check_config

Keys: eigstream-keygen makes a pair for the source, the dispatcher, each daemon, the merge
and the consumer; allow-lists are directories of the public files: the dispatcher's
front end lets in the source, its back end the daemons, each daemon the merge, the merge's
output the consumers (docs/scaleout.md, "Security").

e2e     eigstream-sim -> eigstream-dispatch -> 2 CPU daemons (input.pattern = dispatch,
        security.curve_dispatcher_key) -> eigstream-merge (CURVE client of the daemons, CURVE
        server to its consumers) -> eigstream-sink and this test, both CURVE subscribers.
        60 frames of 4 matrices, n = 8, output.mode = full. Every frame reaches this test
        once, in order, and every eigenpair of it is checked against the matrices the sim
        sent (captured by a PULL of ours from a second sim run with the same seed): the
        values against numpy.linalg.eigvalsh, the vectors by LAPACK's residual and
        orthogonality ratios (|A V - V L| / (|A| n eps), |V^H V - I| / (n eps), both <= 60).
        The sink says VERDICT: PASS frames=60. Books: the dispatcher took 60, dispatched 60
        (the two daemons' sum), rejected and dropped none, refused no one; the merge took 60,
        put out 60, no gap, no duplicate, refused no one.
flipped e2e with the other side binding where a side may: the sim binds and the dispatcher's
        front end connects (--front-connect), the merge binds its inputs (--in-bind) and the
        daemons' outputs connect. The CURVE roles do not follow the binds: the same books.
rogue   the same topology with one daemon, and before the sim starts: on the back end a
        plain-text DEALER that says READY with credit 4e9, a CURVE DEALER with an unlisted key
        and one with the source's key (listed on the front end only) saying the same; on the
        front end a plain-text PUSH and a PUSH with a daemon's key, each sending a frame; on
        the merge's output a plain-text SUB and one with an unlisted key; and a real daemon
        whose key the dispatcher does not list (it logs once that no connection completes,
        and exits 0 on SIGTERM). Each is refused and
        counted: key_not_allowed exactly 1 on the front end, 3 on the back end, 1 on the
        merge's output (a CURVE client told 400 by ZAP does not try again), before and after
        the run; each plain-text client at least once on each (plaintext or handshake: libzmq's
        plain-text client tries again until it reads the server's CURVE greeting itself, and
        one that hangs up first reads as handshake). All 60 frames still come out in order:
        the only daemon in the dispatcher's table is the real one, which was dispatched all
        60, no READY of a rogue reached the table (unknown_peer_messages 0, credit_capped 0),
        and no rogue received a byte.
check_config
        eigstream --check-config refuses, naming security.curve_dispatcher_key: dispatch +
        CURVE without it, the key without security.curve_secret_key, the key with
        input.pattern pull; accepts dispatch + CURVE + the key. eigstream-dispatch and
        eigstream-merge refuse a CURVE option without its partner (exit 2), and refuse a
        loose secret key file at start (exit 1, the option named).

Synchronisation by events (READY lines, JSON counters, subscriptions counted by the merge),
never by measured times; the limits are upper bounds for a stuck run.
"""
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import zmq
import zmq.auth

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_scaleout as ts  # noqa: E402  (its helpers; argv has the same shape)
from test_scaleout import check, free_ports, wait_for, Lines, ec  # noqa: E402

CASE = sys.argv[3]
DAEMON, SIM, DISPATCH, MERGE = ts.DAEMON, ts.SIM, ts.DISPATCH, ts.MERGE
SINK = os.path.join(ts.BUILD, "tools", "sink", "eigstream-sink")
KEYGEN = os.path.join(ts.BUILD, "tools", "keygen", "eigstream-keygen")
FRAMES, N, CELLS = ts.FRAMES, 8, 4
SIM_ARGS = ts.SIM_ARGS  # --n 8 --cells 4 --snapshots 64 --seed 11 --frames 60
READY, GOODBYE = 1, 4
EPS = np.finfo(np.float64).eps


class Keys:
    """A key pair per party and the allow-list directories (mode 0700, as keygen's files need)."""

    def __init__(self, tmp, daemons):
        self.dir = os.path.join(tmp, "keys")
        os.makedirs(self.dir)
        self.daemons = [f"daemon{i}" for i in range(daemons)]
        for name in ["source", "dispatch", "merge", "consumer", "stranger", "intruder", *self.daemons]:
            r = subprocess.run([KEYGEN, self.base(name)], capture_output=True, text=True, timeout=30)
            check(r.returncode == 0, f"keygen {name}: {r.stderr}")
        self.allow("sources", ["source"])
        self.allow("daemons", self.daemons)
        self.allow("merges", ["merge"])
        self.allow("consumers", ["consumer"])

    def base(self, name):
        return os.path.join(self.dir, name)

    def public(self, name):
        return self.base(name) + ".key"

    def secret(self, name):
        return self.base(name) + ".key_secret"

    def allow(self, listname, names):
        path = os.path.join(self.dir, listname)
        os.makedirs(path, mode=0o755)
        for name in names:
            shutil.copy(self.public(name), path)

    def pyzmq(self, name):
        """(public, secret) as pyzmq's curve_* options take them."""
        return zmq.auth.load_certificate(self.secret(name))


def curve_client(sock, keys, server, client):
    sock.curve_serverkey = zmq.auth.load_certificate(keys.public(server))[0]
    sock.curve_publickey, sock.curve_secretkey = keys.pyzmq(client)


def client_socket(ctx, kind, keys, server, client, identity=None):
    """A socket of kind, lingering 0, a CURVE client of server with client's keys (None: plain
    text); identity, when given, set before the handshake."""
    s = ctx.socket(kind)
    s.setsockopt(zmq.LINGER, 0)
    if identity is not None:
        s.setsockopt(zmq.IDENTITY, identity)
    if client is not None:
        curve_client(s, keys, server, client)
    return s


def daemon_config(keys, name, back, out, out_bind=True):
    return f'''
input = {{ endpoint = "tcp://127.0.0.1:{back}"; pattern = "dispatch"; bind = false; heartbeat_ms = 1000; }};
output = {{ endpoint = "tcp://127.0.0.1:{out}"; pattern = "push"; bind = {str(out_bind).lower()}; mode = "full";
           snapshots = 64; }};
solver = {{ backend = "cpu"; precision = "double"; n = {N}; matrices = {CELLS}; cpu_threads = 1; }};
metrics = {{ endpoint = ""; http = ""; }};
security = {{ curve_secret_key = "{keys.secret(name)}"; curve_allow = "{os.path.join(keys.dir, "merges")}";
             curve_dispatcher_key = "{keys.public("dispatch")}"; }};
'''


class CurveTopology:
    """sim -> dispatch -> daemons -> merge (pub) -> this test, CURVE on every hop."""

    def __init__(self, tmp, daemons, flipped=False):
        """flipped: the other side binds on the front end and the merge's inputs (the sim
        binds, the dispatcher connects; the merge binds, the daemons connect)."""
        self.tmp, self.keys, self.flipped = tmp, Keys(tmp, daemons), flipped
        k = self.keys
        self.front, self.back, self.out, *self.ins = free_ports(3 + daemons)
        self.procs = []
        self.merge_json = os.path.join(tmp, "merge.json")
        self.dispatch_json = os.path.join(tmp, "dispatch.json")
        self.merge = self._start([MERGE, "--in", ",".join(f"tcp://127.0.0.1:{p}" for p in self.ins),
                                  "--out", f"tcp://127.0.0.1:{self.out}", "--out-pattern", "pub",
                                  "--out-hwm", "1000", "--first-seq", "0", "--last-seq", str(FRAMES - 1),
                                  *(["--in-bind"] if flipped else []),
                                  "--window", "1000", "--window-ms", "60000", "--stats-s", "0.05",
                                  "--json", self.merge_json, "--prometheus", os.path.join(tmp, "merge.prom"),
                                  "--curve-server-key", ",".join(k.public(d) for d in k.daemons),
                                  "--curve-key", k.secret("merge"), "--curve-secret-key", k.secret("merge"),
                                  "--curve-allow", os.path.join(k.dir, "consumers")], "merge")
        self.dispatch = self._start([DISPATCH, "--front", f"tcp://127.0.0.1:{self.front}",
                                     "--back", f"tcp://127.0.0.1:{self.back}", "--overflow", "block",
                                     *(["--front-connect"] if flipped else []),
                                     "--queue", "8", "--stats-s", "0.05", "--json", self.dispatch_json,
                                     "--prometheus", os.path.join(tmp, "dispatch.prom"),
                                     "--curve-secret-key", k.secret("dispatch"),
                                     "--front-curve-allow", os.path.join(k.dir, "sources"),
                                     "--back-curve-allow", os.path.join(k.dir, "daemons")], "dispatch")
        self.daemons = []
        for i, name in enumerate(k.daemons):
            path = os.path.join(tmp, f"{name}.cfg")
            with open(path, "w") as f:
                f.write(daemon_config(k, name, self.back, self.ins[i], out_bind=not flipped))
            self.daemons.append(self._start([DAEMON, "-c", path], name))
        wait_for(lambda: self.dispatch.log.count(r"daemon \S+ ready \(credit") == daemons,
                 f"{daemons} CURVE daemons READY at the CURVE dispatcher")
        self.ctx = zmq.Context()
        self.received = []
        self.consumer = self.subscriber("consumer")
        self.stop = threading.Event()
        self.reader = threading.Thread(target=self._consume, daemon=True)
        self.reader.start()

    def _start(self, argv, tag):
        p = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        p.log = Lines(p, tag)
        self.procs.append(p)
        return p

    def subscriber(self, client):
        """A SUB of the merge's output with client's keys (None: plain text)."""
        s = client_socket(self.ctx, zmq.SUB, self.keys, "merge", client)
        s.setsockopt(zmq.SUBSCRIBE, b"")
        s.connect(f"tcp://127.0.0.1:{self.out}")
        return s

    def _consume(self):
        while not self.stop.is_set():
            if self.consumer.poll(50):
                parts = self.consumer.recv_multipart()
                header, _, results = ec.decode_eigenspace(parts)
                self.received.append((header["seq"], results))

    def merge_stats(self):
        return ts.read_json(self.merge_json)

    def dispatch_stats(self):
        return ts.read_json(self.dispatch_json)

    def run_sim(self):
        k = self.keys
        return subprocess.run([SIM, "--endpoint", f"tcp://127.0.0.1:{self.front}", "--rate", "0", *SIM_ARGS,
                               *(["--bind"] if self.flipped else []),
                               "--curve-server-key", k.public("dispatch"), "--curve-key", k.secret("source")],
                              capture_output=True, text=True, timeout=300)

    def finish(self):
        """The merge exits at --last-seq; then the daemons and the dispatcher stop. The JSONs."""
        self.merge.wait(timeout=180)
        out = self.merge_stats().get("frames_out", 0)
        wait_for(lambda: len(self.received) >= out, f"the consumer to read the {out} frames the merge sent")
        statuses = ts.stop_processes(self.daemons + [self.dispatch])
        check(statuses == [0] * len(statuses), f"the daemons' and the dispatcher's exits: {statuses}")
        self.stop.set()
        self.reader.join()
        self.consumer.close(0)
        return self.merge_stats(), self.dispatch_stats()

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.ctx.destroy(linger=0)

    def dump(self):
        for p in self.procs:
            p.log.dump()


def check_eigenpairs(received):
    """Every frame 0..FRAMES-1 once, in order; every eigenpair against NumPy/LAPACK."""
    seqs = [s for s, _ in received]
    check(seqs == list(range(FRAMES)), f"consumer got {len(seqs)} frames, not 0..{FRAMES - 1} in order: {seqs}")
    ref = ts.sim_matrices()
    worst = {"values": 0.0, "residual": 0.0, "orthogonality": 0.0}
    checked = 0
    for seq, results in received:
        a_all = ref.get(seq)
        if a_all is None or len(results) != len(a_all):
            check(False, f"seq {seq}: no reference or wrong count")
            continue
        for i, m in enumerate(results):
            a = a_all[i]
            want = np.linalg.eigvalsh(a)
            values = np.asarray(m.values, dtype=np.float64)
            scale = max(np.abs(want).max(), np.finfo(np.float64).tiny)
            ratios = {"values": np.abs(values - want).max() / (N * EPS * scale)}
            if m.status != 0 or m.vectors is None or m.vectors.shape != (N, N):
                check(False, f"seq {seq} matrix {i}: status {m.status}, vectors "
                      f"{None if m.vectors is None else m.vectors.shape}")
                continue
            v = np.asarray(m.vectors, dtype=np.complex128)
            ratios["residual"] = np.abs(a @ v - v * values).max() / (np.abs(a).max() * N * EPS)
            ratios["orthogonality"] = np.abs(v.conj().T @ v - np.eye(N)).max() / (N * EPS)
            for name, r in ratios.items():
                worst[name] = max(worst[name], r)
                check(np.isfinite(r) and r <= 60, f"seq {seq} matrix {i} (n={N}, sim scene): {name} ratio {r:.3g} > 60")
            checked += 1
    check(checked == FRAMES * CELLS, f"eigenpairs checked for {checked} matrices, want {FRAMES * CELLS}")
    print(f"eigenpairs: {checked} matrices, worst ratios " + ", ".join(f"{k} {v:.3g}" for k, v in worst.items()))


def zeros():
    return {"key_not_allowed": 0, "plaintext": 0, "handshake": 0}


def plain_count(counts):
    """Plain-text refusals: a client that hangs up before the server's greeting is read reads as handshake."""
    return counts.get("plaintext", 0) + counts.get("handshake", 0)


def start_sink(top):
    k = top.keys
    sink_json = os.path.join(top.tmp, "sink.json")
    sink = subprocess.Popen([SINK, "--endpoint", f"tcp://127.0.0.1:{top.out}", "--pattern", "sub", "--n", str(N),
                             "--frames", str(FRAMES), "--duration", "600", "--quiet", "--json", sink_json,
                             "--curve-server-key", k.public("merge"), "--curve-key", k.secret("consumer")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sink.log = Lines(sink, "sink")
    top.procs.append(sink)
    return sink


def test_e2e(tmp, flipped=False):
    top = CurveTopology(tmp, daemons=2, flipped=flipped)
    try:
        sink = start_sink(top)
        # Both subscribers counted by the merge: every frame it puts out reaches both.
        wait_for(lambda: top.merge_stats().get("subscriptions", 0) >= 2, "the sink's and the test's subscriptions")
        sim = top.run_sim()
        check(sim.returncode == 0, f"sim exit {sim.returncode}: {sim.stderr}")
        merge, dispatch = top.finish()
        out, _ = sink.communicate(timeout=120)
        verdict = [line for line in out.splitlines() if line.startswith("VERDICT")]
        check(sink.returncode == 0 and verdict and verdict[0].startswith("VERDICT: PASS")
              and f"frames={FRAMES} " in verdict[0], f"sink exit {sink.returncode}: {out}")
        print(verdict[0] if verdict else "no VERDICT line")
        check_eigenpairs(top.received)
        check(merge.get("curve") == {"inputs": True, "output": True}, f"merge curve: {merge.get('curve')}")
        check(merge["frames_in"] == FRAMES and merge["frames_out"] == FRAMES and merge["gap_frames"] == 0
              and merge["dropped"]["duplicate"] == 0 and merge["rejected_total"] == 0, f"merge books: {merge}")
        check(merge["auth_rejected"] == zeros(), f"merge refused someone: {merge['auth_rejected']}")
        per = [d["dispatched"] for d in dispatch["daemons"]]
        check(dispatch["curve"] is True and dispatch["frames_in"] == FRAMES and dispatch["dispatched"] == FRAMES
              and dispatch["rejected_total"] == 0 and dispatch["dropped_total"] == 0 and dispatch["queued"] == 0
              and len(per) == 2 and sum(per) == FRAMES, f"dispatcher books: {dispatch}")
        check(dispatch["auth_rejected"] == {"front": zeros(), "back": zeros()},
              f"dispatcher refused someone: {dispatch['auth_rejected']}")
        print(f"books: dispatch in={dispatch['frames_in']} dispatched={dispatch['dispatched']} per daemon {per}; "
              f"merge in={merge['frames_in']} out={merge['frames_out']} gaps={merge['gap_frames']}")
    finally:
        if ts.failures:
            top.dump()
        top.close()


def test_flipped(tmp):
    """e2e with the binds the other way round: the CURVE roles stay (the dispatcher and the
    daemons' outputs are the servers)."""
    test_e2e(tmp, flipped=True)


def rogue_dealer(top, client):
    """A DEALER on the dispatcher's back end, CURVE with client's keys (None: plain text),
    that says READY with credit 4e9 as soon as it can."""
    s = client_socket(top.ctx, zmq.DEALER, top.keys, "dispatch", client, f"rogue-{client}".encode())
    s.connect(f"tcp://127.0.0.1:{top.back}")
    try:
        s.send(ts.control(READY, credit=4_000_000_000, heartbeat_ms=1000), zmq.DONTWAIT)
    except zmq.Again:
        pass
    return s


def rogue_pusher(top, client):
    """A PUSH on the dispatcher's front end with client's keys (None: plain text) and one frame."""
    s = client_socket(top.ctx, zmq.PUSH, top.keys, "dispatch", client)
    s.connect(f"tcp://127.0.0.1:{top.front}")
    try:
        s.send_multipart(ec.encode_covariance(1000, 0, np.eye(N)[None].repeat(CELLS, 0) + 0j), zmq.DONTWAIT)
    except zmq.Again:
        pass  # no handshake completed: nothing queued
    return s


def auth_counts(top):
    d, m = top.dispatch_stats(), top.merge_stats()
    return (d.get("auth_rejected", {}).get("front", {}), d.get("auth_rejected", {}).get("back", {}),
            m.get("auth_rejected", {}))


def test_rogue(tmp):
    top = CurveTopology(tmp, daemons=1)
    try:
        rogues = [rogue_dealer(top, None), rogue_dealer(top, "stranger"), rogue_dealer(top, "source"),
                  rogue_pusher(top, None), rogue_pusher(top, "daemon0"),
                  top.subscriber(None), top.subscriber("stranger")]
        # A real daemon whose key the dispatcher does not list: refused, and it says so.
        path = os.path.join(tmp, "intruder.cfg")
        with open(path, "w") as f:
            f.write(daemon_config(top.keys, "intruder", top.back, free_ports(1)[0]))
        intruder = top._start([DAEMON, "-c", path], "intruder")
        want = lambda c: (c[0].get("key_not_allowed") == 1 and plain_count(c[0]) >= 1
                          and c[1].get("key_not_allowed") == 3 and plain_count(c[1]) >= 1
                          and c[2].get("key_not_allowed") == 1 and plain_count(c[2]) >= 1)
        wait_for(lambda: want(auth_counts(top)), "every rogue refused and counted")
        wait_for(lambda: intruder.log.count("no connection to eigstream-dispatch") == 1,
                 "the unlisted daemon to say that no connection completes")
        before = auth_counts(top)
        print(f"refused: front {before[0]}, back {before[1]}, merge output {before[2]}")
        wait_for(lambda: top.merge_stats().get("subscriptions", 0) >= 1, "the test's subscription")
        sim = top.run_sim()
        check(sim.returncode == 0, f"sim exit {sim.returncode}: {sim.stderr}")
        merge, dispatch = top.finish()
        seqs = [s for s, _ in top.received]
        check(seqs == list(range(FRAMES)), f"consumer got {len(seqs)} frames, not 0..{FRAMES - 1} in order: {seqs}")
        names = [d["id"] for d in dispatch["daemons"]]
        check(len(names) == 1 and not names[0].startswith("rogue") and dispatch["daemons"][0]["dispatched"] == FRAMES,
              f"the dispatcher's daemons: {dispatch['daemons']}")
        check(dispatch["frames_in"] == FRAMES and dispatch["dispatched"] == FRAMES and dispatch["rejected_total"] == 0
              and dispatch["unknown_peer_messages"] == 0 and dispatch["credit_capped"] == 0,
              f"dispatcher books: {dispatch}")
        check(merge["frames_out"] == FRAMES and merge["gap_frames"] == 0, f"merge books: {merge}")
        after = (dispatch["auth_rejected"]["front"], dispatch["auth_rejected"]["back"], merge["auth_rejected"])
        check([c["key_not_allowed"] for c in after] == [1, 3, 1] and want(after),
              f"the refusals after the run: {before} -> {after}")
        check(ts.stop_processes([intruder]) == [0] and intruder.log.count("no connection to eigstream-dispatch") == 1,
              f"the unlisted daemon: exit {intruder.returncode}, its warning logged once")
        for s in rogues:
            check(not s.poll(0), f"a rogue {s.type} received something")
            s.close(0)
        print(f"rogue: all {FRAMES} frames out to the one real daemon; refusals after the run {after}")
    finally:
        if ts.failures:
            top.dump()
        top.close()


def check_config_refuses(tmp, name, text, want):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([DAEMON, "--check-config", path], capture_output=True, text=True, timeout=30)
    if want is None:
        check(r.returncode == 0, f"{name}: --check-config exit {r.returncode}: {r.stderr}")
    else:
        check(r.returncode == 1 and want in r.stderr, f"{name}: exit {r.returncode}, {r.stderr!r}; want {want!r}")


def test_check_config(tmp):
    k = Keys(tmp, daemons=1)
    dispatch_in = 'input = { endpoint = "tcp://127.0.0.1:5560"; pattern = "dispatch"; bind = false; };\n'
    curve = f'  curve_secret_key = "{k.secret("daemon0")}"; curve_allow = "{os.path.join(k.dir, "merges")}";\n'
    key = f'  curve_dispatcher_key = "{k.public("dispatch")}";\n'
    check_config_refuses(tmp, "no_key.cfg", dispatch_in + "security = {\n" + curve + "};\n",
                         "security.curve_dispatcher_key: must name eigstream-dispatch's public key")
    check_config_refuses(tmp, "no_curve.cfg", dispatch_in + "security = {\n" + key + "};\n",
                         "security.curve_dispatcher_key: needs security.curve_secret_key")
    check_config_refuses(tmp, "pull.cfg", "security = {\n" + curve + key + "};\n",
                         "security.curve_dispatcher_key: is eigstream-dispatch's public key: it needs "
                         "input.pattern = \"dispatch\"")
    check_config_refuses(tmp, "good.cfg", dispatch_in + "security = {\n" + curve + key + "};\n", None)
    usage = (([DISPATCH, "--curve-secret-key", k.secret("dispatch"), "--front-curve-allow", k.dir],
              "--curve-secret-key, --front-curve-allow and --back-curve-allow go together"),
             ([MERGE, "--in", "tcp://127.0.0.1:1", "--curve-key", k.secret("merge")],
              "--curve-server-key and --curve-key go together"),
             ([MERGE, "--in", "tcp://127.0.0.1:1", "--curve-allow", k.dir],
              "--curve-secret-key and --curve-allow go together"))
    for argv, want in usage:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and want in r.stderr, f"{argv[1:]}: exit {r.returncode}, {r.stderr!r}")
    loose = os.path.join(tmp, "loose.key_secret")
    shutil.copy(k.secret("dispatch"), loose)
    os.chmod(loose, 0o640)
    front, back = free_ports(2)
    r = subprocess.run([DISPATCH, "--front", f"tcp://127.0.0.1:{front}", "--back", f"tcp://127.0.0.1:{back}",
                        "--curve-secret-key", loose, "--front-curve-allow", os.path.join(k.dir, "sources"),
                        "--back-curve-allow", os.path.join(k.dir, "daemons")], capture_output=True, text=True,
                       timeout=30)
    check(r.returncode == 1 and f"--curve-secret-key: {loose}: mode 0640" in r.stderr,
          f"dispatcher with a loose key: exit {r.returncode}, {r.stderr!r}")
    r = subprocess.run([MERGE, "--in", "tcp://127.0.0.1:1", "--out", f"tcp://127.0.0.1:{front}",
                        "--curve-secret-key", loose, "--curve-allow", os.path.join(k.dir, "consumers")],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and f"--curve-secret-key: {loose}: mode 0640" in r.stderr,
          f"merge with a loose key: exit {r.returncode}, {r.stderr!r}")


def main():
    for tool in (DAEMON, SIM, DISPATCH, MERGE, SINK, KEYGEN):
        if not os.access(tool, os.X_OK):
            print(f"missing {tool}", file=sys.stderr)
            return 1
    cases = {"e2e": test_e2e, "flipped": test_flipped, "rogue": test_rogue, "check_config": test_check_config}
    return ts.run_cases(cases, CASE)


if __name__ == "__main__":
    sys.exit(main())
