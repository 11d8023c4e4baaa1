#!/usr/bin/python3
"""Scale-out on one machine (label integration): eigstream-sim -> eigstream-dispatch
-> 3 CPU daemons (input.pattern = dispatch) -> eigstream-merge -> this test (PULL).

  test_scaleout.py BUILD_DIR SOURCE_DIR CASE      CASE: configs | steady | stop | kill |
                                                        fragment_rules | fragments | promtool |
                                                        dealers | dealers_stop

configs  every config/examples/*.cfg passes the daemon's validator (--check-config); bad
         command lines of eigstream-dispatch and eigstream-merge exit 2 naming the option.
steady   60 frames (n = 8, 4 matrices) plus 2 garbage messages: the dispatcher counts the
         garbage by reason and forwards none of it; every frame comes out of the merge once,
         in sequence order, decodable; the books balance (dispatcher: in = dispatched +
         rejected, dispatched = sum over daemons; merge: out = 60, no gap, no duplicate);
         each of the 3 daemons got frames (all three are READY with equal credit first).
stop     the same, with one daemon stopped by SIGTERM after 15 frames came out: no frame is
         lost (GOODBYE, then what was in flight is received and published), it exits 0.
kill     the same, with one daemon stopped (SIGSTOP) after 15 frames came out and killed
         (SIGKILL) once 10 more frames were dispatched: the source is never blocked (the sim
         sends all 60 and exits 0); the frames missing at the consumer are exactly the gaps
         the merge names, every one of them was dispatched to the dead daemon (the
         dispatcher's seq log is the oracle), at least one is missing (it held frames when it
         died), and every frame dispatched to a live daemon comes out, in order.
fragment_rules
         eigstream-dispatch alone between this test as the source and three fake daemons
         (DEALERs speaking the control messages): every fragment of a frame goes to the
         daemon that got its first, in order, with no credit of its own; a stray fragment
         is rejected incomplete; drop_oldest evicts a held fragmented frame whole; a held
         frame the source gives up is dropped (frame_incomplete), a routed one counted
         abandoned; a daemon that says GOODBYE mid-frame gets the rest of the frame, then
         the answer; the rest of a frame whose daemon went silent is dropped
         (fragment_orphaned). Every counter is checked against the script, and both books
         balance (messages, and fragmented frames).
dealers  steady with each daemon on 3 DEALERs (input.io_threads = 3): 9 peers, each dealt
         frames by its own credit; every frame out once, in order, against NumPy; no daemon
         counts a source restart (each connection keeps its order).
dealers_stop
         stop with 3 DEALERs a daemon: each says GOODBYE; nothing lost; all 3 peers "goodbye".
promtool
         promtool lints the Prometheus text files steady and fragments left in
         BUILD/tests/scaleout/prom (skipped, exit 77, without promtool).
fragments
         steady with the sim sending each frame as 3 fragments: every frame out of the merge
         once, in order; the books balance in messages and in frames; per the seq log every
         seq went to one daemon, its fragments in order and complete.

Synchronisation is by events (log lines, files, counts), never by measured times: the
windows and timeouts are only upper bounds for a stuck run.
"""
import glob
import shutil
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import zmq

BUILD, SOURCE, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(SOURCE, "tools", "python"))
import eigstream_client as ec  # noqa: E402

DAEMON = os.path.join(BUILD, "app", "eigstream")
SIM = os.path.join(BUILD, "tools", "sim", "eigstream-sim")
DISPATCH = os.path.join(BUILD, "tools", "dispatch", "eigstream-dispatch")
MERGE = os.path.join(BUILD, "tools", "merge", "eigstream-merge")
FRAMES = 60
failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
        print("FAIL", message, file=sys.stderr)


def free_ports(count):
    socks = [socket.socket() for _ in range(count)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def wait_for(predicate, what, limit_s=120):
    """Polls predicate until true; a stuck run fails after limit_s (an upper bound, not a timing assert)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    check(False, f"gave up waiting for {what}")
    return False


def read_json(path):
    """A tool's --json file, {} until it has been written whole."""
    try:
        with open(path) as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def stop_then_kill(top, index):
    """Daemon index SIGSTOPped while it holds frames, 10 more frames dealt to
    the others, then SIGKILLed. Returns its dispatcher name."""
    victim = top.daemons[index]
    name = top.daemon_name(victim)
    victim.send_signal(signal.SIGSTOP)
    stopped_at = len(top.seq_log())
    wait_for(lambda: len(top.seq_log()) >= stopped_at + 10, "10 more frames dispatched after the stop")
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    return name


def stop_processes(procs):
    """SIGTERM to each of procs still running, then waits for each; one that does not
    stop within the bound is killed and named. Returns their exit statuses."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            check(False, f"{p.args[0]} did not stop on SIGTERM")
    return [p.returncode for p in procs]


def run_cases(cases, case):
    """Runs cases[case](tmp) in a fresh temporary directory: the exit status of a test script."""
    if case not in cases:
        print(f"unknown case {case}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cases[case](tmp)
    print(f"{case}: {'FAIL' if failures else 'PASS'} ({len(failures)} failures)")
    return 1 if failures else 0


class Lines:
    """Collects a process's stderr lines in a thread."""

    def __init__(self, proc, tag):
        self.lines, self.tag = [], tag
        self.thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.thread.start()

    def _read(self, proc):
        for line in proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def count(self, pattern):
        return sum(1 for line in list(self.lines) if re.search(pattern, line))

    def dump(self):
        for line in self.lines[-30:]:
            print(f"  [{self.tag}] {line}", file=sys.stderr)


def daemon_config(example, dispatch_port, out_port):
    """An example config with this run's endpoints and the test's small sizes."""
    text = open(example).read()
    text = re.sub(r'endpoint = "tcp://127\.0\.0\.1:5560"', f'endpoint = "tcp://127.0.0.1:{dispatch_port}"', text)
    text = re.sub(r'endpoint = "tcp://127\.0\.0\.1:557\d"', f'endpoint = "tcp://127.0.0.1:{out_port}"', text)
    text = re.sub(r"n = \d+;", "n = 8;", text)
    text = re.sub(r"matrices = \d+;", "matrices = 4;", text)
    text = re.sub(r'http = "[^"]*";', 'http = "";', text)
    return text


# The kill case's victim gets a deeper receive queue, so its credit (free
# slots) stays above the others' 4: the dispatcher keeps choosing it after it
# is stopped, and at least one frame is certainly held by it when it dies,
# whatever the timing (with equal credit it might have published everything).
DEEP_QUEUE = 8


class Topology:
    """dealers: each daemon's input.io_threads (DEALERs to the dispatcher, each a peer of its own)."""
    def __init__(self, tmp, window_ms, deep=None, dispatch_extra=(), dealers=1):
        self.tmp = tmp
        front, back, out, *ins = free_ports(6)
        self.front, self.back, self.out, self.ins = front, back, out, ins
        self.procs = []
        self.ctx = zmq.Context()
        self.consumer = self.ctx.socket(zmq.PULL)
        self.consumer.connect(f"tcp://127.0.0.1:{out}")
        self.received = []  # (seq, flags) in arrival order
        self.stop = threading.Event()
        self.reader = threading.Thread(target=self._consume, daemon=True)
        self.reader.start()
        self.merge = self._start([MERGE, "--in", ",".join(f"tcp://127.0.0.1:{p}" for p in ins),
                                  "--out", f"tcp://127.0.0.1:{out}", "--out-pattern", "push",
                                  "--first-seq", "0", "--last-seq", str(FRAMES - 1), "--window", "1000",
                                  "--window-ms", str(window_ms), "--stats-s", "0",
                                  "--json", os.path.join(tmp, "merge.json"),
                                  "--prometheus", os.path.join(tmp, "merge.prom")], "merge")
        self.dispatch = self._start([DISPATCH, "--front", f"tcp://127.0.0.1:{front}",
                                     "--back", f"tcp://127.0.0.1:{back}", "--overflow", "block",
                                     "--queue", "8", "--stats-s", "0", "--seq-log", os.path.join(tmp, "seq.log"),
                                     "--json", os.path.join(tmp, "dispatch.json"),
                                     "--prometheus", os.path.join(tmp, "dispatch.prom"), *dispatch_extra], "dispatch")
        self.daemons = []
        examples = sorted(glob.glob(os.path.join(SOURCE, "config", "examples", "scaleout-daemon-*.cfg")))
        for i, port in enumerate(ins):
            path = os.path.join(tmp, f"daemon{i}.cfg")
            with open(path, "w") as f:
                text = daemon_config(examples[i], back, port)
                if dealers > 1:
                    text = text.replace('pattern = "dispatch";', f'pattern = "dispatch";\n  io_threads = {dealers};')
                f.write(text)
                if i == deep:
                    f.write(f"frame = {{ queue_depth = {DEEP_QUEUE}; }};\n")
                elif dealers > 1:  # credit of 2 per DEALER
                    f.write(f"frame = {{ queue_depth = {2 * dealers}; }};\n")
            self.daemons.append(self._start([DAEMON, "-c", path], f"daemon{i}"))
        peers = 3 * dealers
        wait_for(lambda: self.dispatch.log.count(r"daemon \S+ ready \(credit") == peers, f"{peers} peers READY")

    def _start(self, argv, tag):
        p = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        p.log = Lines(p, tag)
        self.procs.append(p)
        return p

    def _consume(self):
        poller = zmq.Poller()
        poller.register(self.consumer, zmq.POLLIN)
        while not self.stop.is_set():
            if poller.poll(50):
                parts = self.consumer.recv_multipart()
                header, _, results = ec.decode_eigenspace(parts)
                self.received.append((header["seq"], header["flags"], results))

    def seq_log(self):
        try:
            with open(os.path.join(self.tmp, "seq.log")) as f:
                return [line.split() for line in f if line.endswith("\n")]
        except FileNotFoundError:
            return []

    def daemon_name(self, proc):
        return f"{socket.gethostname()}:{proc.pid}"

    def finish(self):
        """Waits for the merge (it exits at --last-seq), then stops the rest; the JSONs."""
        self.merge.wait(timeout=180)
        with open(os.path.join(self.tmp, "merge.json")) as f:
            out = json.load(f)["frames_out"]
        # What the merge sent is on its way (its socket lingers): read all of it.
        wait_for(lambda: len(self.received) >= out, f"the consumer to read the {out} frames the merge sent")
        stop_processes(self.daemons + [self.dispatch])
        self.stop.set()
        self.reader.join()
        self.consumer.close(0)
        self.ctx.term()
        with open(os.path.join(self.tmp, "merge.json")) as f:
            merge = json.load(f)
        with open(os.path.join(self.tmp, "dispatch.json")) as f:
            dispatch = json.load(f)
        return merge, dispatch

    def dump(self):
        for p in self.procs:
            p.log.dump()


SIM_ARGS = ["--n", "8", "--cells", "4", "--snapshots", "64", "--seed", "11", "--frames", str(FRAMES), "--quiet"]


def run_sim(top, rate, extra=()):
    return subprocess.run([SIM, "--endpoint", f"tcp://127.0.0.1:{top.front}", "--rate", str(rate), *SIM_ARGS, *extra],
                          capture_output=True, text=True, timeout=300)


def sim_matrices():
    """{seq: (cells, n, n) complex128}: what eigstream-sim sends with SIM_ARGS (whole
    frames, captured by a PULL of ours; the sim is deterministic in its --seed)."""
    ctx = zmq.Context()  # the topology's may be closed by now
    pull = ctx.socket(zmq.PULL)
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    pull.RCVTIMEO = 60000
    sim = subprocess.Popen([SIM, "--endpoint", f"tcp://127.0.0.1:{port}", "--rate", "0", *SIM_ARGS],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ref = {}
    try:
        for _ in range(FRAMES):
            header, matrices = ec.decode_covariance(pull.recv_multipart())
            ref[header["seq"]] = matrices.astype(np.complex128)
    except zmq.Again:
        check(False, f"reference sim sent {len(ref)} of {FRAMES} frames")
    sim.communicate(timeout=60)
    ctx.destroy(linger=0)
    return ref


def sim_reference():
    """{seq: numpy.linalg.eigvalsh of each matrix} of sim_matrices(): the oracle of the
    values that come out of the merge."""
    return {seq: np.linalg.eigvalsh(a) for seq, a in sim_matrices().items()}


def check_order(seqs):
    check(all(a < b for a, b in zip(seqs, seqs[1:])), f"merge output not in strictly increasing seq order: {seqs}")


def check_all_out(top, merge):
    """Every frame 0..FRAMES-1 reached the consumer once, in order, solved, and the merge's books agree."""
    seqs = [s for s, _, _ in top.received]
    check(seqs == list(range(FRAMES)), f"consumer got {len(seqs)} frames, not 0..{FRAMES - 1} in order: {seqs}")
    check(all(m.status == 0 and (m.values[1:] >= m.values[:-1]).all() for _, _, results in top.received
              for m in results), "a matrix did not converge or its eigenvalues are not ascending")
    # The values against NumPy on the matrices the sim sent (a LAPACK
    # eigvalsh; bound 60 * n * eps * max |lambda|, the suite's ratio).
    ref = sim_reference()
    for seq, _, results in top.received:
        want = ref.get(seq)
        if not check(want is not None and len(results) == len(want), f"seq {seq}: no reference or wrong count"):
            continue
        for i, m in enumerate(results):
            scale = np.abs(want[i]).max()
            err = np.abs(np.asarray(m.values, dtype=np.float64) - want[i]).max()
            check(err <= 60 * 8 * np.finfo(np.float64).eps * scale,
                  f"seq {seq} matrix {i} (n=8): eigenvalues differ from numpy by {err:.3g} (max |lambda| {scale:.3g})")
    check(merge["frames_out"] == FRAMES and merge["gap_frames"] == 0 and merge["dropped"]["duplicate"] == 0,
          f"merge books: {merge}")


def test_configs():
    examples = sorted(glob.glob(os.path.join(SOURCE, "config", "examples", "*.cfg")))
    check(len(examples) >= 3, f"config/examples has {len(examples)} configs")
    for path in examples:
        r = subprocess.run([DAEMON, "--check-config", path], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, f"{path}: --check-config exit {r.returncode}: {r.stderr.strip()}")


def test_usage():
    """Bad command lines exit 2 naming the problem; --help exits 0."""
    cases = (([MERGE], "--in is required"),
             ([MERGE, "--in", "tcp://127.0.0.1:1", "--window", "0"], "--window"),
             ([DISPATCH, "--queue", "0"], "--queue"),
             ([DISPATCH, "--overflow", "drop"], "--overflow"))
    for argv, want in cases:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and want in r.stderr, f"{argv}: exit {r.returncode}, {r.stderr!r}")
    for tool in (MERGE, DISPATCH):
        r = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and "docs/scaleout.md" in r.stdout, f"{tool} --help: exit {r.returncode}")


def test_steady(tmp):
    top = Topology(tmp, window_ms=60000)
    garbage = top.ctx.socket(zmq.PUSH)
    garbage.connect(f"tcp://127.0.0.1:{top.front}")
    garbage.send(b"hello")                       # header_size
    garbage.send_multipart([b"EIGX" + bytes(60), b"payload"])  # bad_magic
    garbage.close(linger=5000)
    sim = run_sim(top, 0)
    check(sim.returncode == 0, f"sim exit {sim.returncode}: {sim.stderr}")
    merge, dispatch = top.finish()
    check_all_out(top, merge)
    check(sum(i["frames_in"] for i in merge["inputs"]) == FRAMES, f"merge inputs: {merge['inputs']}")
    check(dispatch["rejected"] == {"header_size": 1, "bad_magic": 1}, f"dispatcher rejects: {dispatch['rejected']}")
    check(dispatch["frames_in"] == FRAMES + 2 and dispatch["dispatched"] == FRAMES
          and dispatch["dropped_total"] == 0 and dispatch["queued"] == 0, f"dispatcher books: {dispatch}")
    per = [d["dispatched"] for d in dispatch["daemons"]]
    check(len(per) == 3 and sum(per) == FRAMES and min(per) > 0, f"per-daemon dispatched {per}")
    log = top.seq_log()
    check(sorted(int(s) for s, _ in log) == list(range(FRAMES)), "seq log is not every frame once")
    check_prometheus(tmp, dispatch, merge)
    return top


PROM_DIR = os.path.join(BUILD, "tests", "scaleout", "prom")


def check_prometheus(tmp, dispatch, merge):
    """Both text files' counters equal the JSON's; the files are kept in
    PROM_DIR for the promtool case (its own ctest, skipped without promtool)."""
    texts = {}
    os.makedirs(PROM_DIR, exist_ok=True)
    for name in ("dispatch", "merge"):
        with open(os.path.join(tmp, f"{name}.prom")) as f:
            texts[name] = f.read()
        shutil.copyfile(os.path.join(tmp, f"{name}.prom"), os.path.join(PROM_DIR, f"{CASE}-{name}.prom"))
    check(f"eigstream_dispatch_frames_in_total {dispatch['frames_in']}\n" in texts["dispatch"],
          "dispatch.prom frames_in differs from the JSON")
    check(f"eigstream_merge_frames_out_total {merge['frames_out']}\n" in texts["merge"],
          "merge.prom frames_out differs from the JSON")


def test_promtool():
    """promtool lints the text files the steady and fragments cases left
    (FIXTURES_REQUIRED orders it after them). Exit 77 without promtool."""
    if shutil.which("promtool") is None:
        print("SKIP: promtool not on PATH (the Prometheus text files are not linted)")
        sys.exit(77)
    files = sorted(glob.glob(os.path.join(PROM_DIR, "*.prom")))
    check(len(files) >= 2, f"no .prom files in {PROM_DIR}: run scaleout_steady first")
    for path in files:
        with open(path) as f:
            text = f.read()
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        check(r.returncode == 0, f"promtool on {path}: {r.stdout} {r.stderr}")


def sim_midway(top):
    """Starts the sim at 10 frames/s in a thread and returns once 15 frames came out of the merge:
    (the thread, the dict its subprocess result lands in under "r")."""
    result = {}
    sim = threading.Thread(target=lambda: result.update(r=run_sim(top, 10)))
    sim.start()
    wait_for(lambda: len(top.received) >= 15, "15 frames out before the stop")
    return sim, result


def test_kill(tmp):
    # Re-dispatch off: this case checks what is lost without it (test_scaleout_faults.py: with it).
    top = Topology(tmp, window_ms=5000, deep=1, dispatch_extra=("--redispatch-ms", "0"))
    sim, sim_result = sim_midway(top)
    name = stop_then_kill(top, 1)
    sim.join()
    r = sim_result["r"]
    check(r.returncode == 0 and f"sent {FRAMES} frames" in r.stdout + r.stderr,
          f"sim blocked or failed: {r.returncode} {r.stdout} {r.stderr}")
    merge, dispatch = top.finish()
    seqs = [s for s, _, _ in top.received]
    check_order(seqs)
    missing = set(range(FRAMES)) - set(seqs)
    named = set()
    for first, last in merge["gaps"]:
        named.update(range(first, last + 1))
    log = top.seq_log()
    to_victim = {int(s) for s, d in log if d == name}
    to_others = {int(s) for s, d in log if d != name}
    check(named == missing, f"merge named {sorted(named)}, consumer missed {sorted(missing)}")
    check(missing <= to_victim, f"missing {sorted(missing - to_victim)} were not sent to the dead daemon")
    check(len(missing) >= 1, f"the stopped daemon held no frames (sent it: {sorted(to_victim)})")
    check(to_others <= set(seqs), f"frames of live daemons missing: {sorted(to_others - set(seqs))}")
    check(max(seqs) == FRAMES - 1, "the tail did not come out: the others did not carry on")
    check(merge["frames_out"] + merge["gap_frames"] == FRAMES, f"merge books: {merge}")
    check(dispatch["frames_in"] == FRAMES and dispatch["dispatched"] == FRAMES and dispatch["dropped_total"] == 0,
          f"dispatcher books: {dispatch}")
    dead = [d for d in dispatch["daemons"] if d["id"] == name]
    check(len(dead) == 1 and dead[0]["state"] in ("silent", "unreachable"), f"dead daemon's state: {dead}")
    check(sum(d["dispatched"] for d in dispatch["daemons"]) == FRAMES, "per-daemon dispatched does not sum up")
    print(f"kill: {len(missing)} frames lost with {name}: {sorted(missing)}; dispatched to it {len(to_victim)}")
    return top


def test_stop(tmp, dealers=1):
    """A daemon stopped on purpose (SIGTERM) mid-stream loses nothing: it says GOODBYE (on each of
    its DEALERs), receives what was already sent to it until the dispatcher answers, publishes it,
    and exits 0; each of its peers ends in state goodbye."""
    top = Topology(tmp, window_ms=60000, dealers=dealers)
    sim, sim_result = sim_midway(top)
    leaving = top.daemons[1]
    name = top.daemon_name(leaving)
    leaving.send_signal(signal.SIGTERM)
    check(leaving.wait(timeout=60) == 0, "the stopped daemon did not exit 0")
    sim.join()
    check(sim_result["r"].returncode == 0, f"sim: {sim_result['r'].stderr}")
    merge, dispatch = top.finish()
    seqs = [s for s, _, _ in top.received]
    check(seqs == list(range(FRAMES)), f"frames lost or out of order: missing {sorted(set(range(FRAMES)) - set(seqs))}")
    check(merge["gap_frames"] == 0 and merge["frames_out"] == FRAMES, f"merge books: {merge}")
    peers = [name] if dealers == 1 else [f"{name}/{k}" for k in range(1, dealers + 1)]
    gone = [d["state"] for d in dispatch["daemons"] if d["id"] in peers]
    check(gone == ["goodbye"] * dealers, f"stopped daemon's peers: {gone}")
    check(leaving.log.count(r"no answer to GOODBYE") == 0, "the daemon gave up waiting for the dispatcher")
    return top


DEALERS = 3


def test_dealers(tmp):
    """Each daemon with input.io_threads = 3: three DEALERs, three peers of the dispatcher, each
    with its own credit (2: frame.queue_depth 6 shared out). The sim sends all 60 at once, so the
    dispatcher deals out every peer's credit: every one of the 9 peers gets frames, every frame
    comes out of the merge once, in order, with NumPy's eigenvalues; the books balance (how the
    free slots go round the DEALERs: test_dispatch_control.c, test_share)."""
    top = Topology(tmp, window_ms=60000, dealers=DEALERS)
    sim = run_sim(top, 0)
    check(sim.returncode == 0, f"sim exit {sim.returncode}: {sim.stderr}")
    merge, dispatch = top.finish()
    check_all_out(top, merge)
    check(dispatch["frames_in"] == FRAMES and dispatch["dispatched"] == FRAMES and dispatch["dropped_total"] == 0,
          f"dispatcher books: {dispatch}")
    want = sorted(f"{top.daemon_name(d)}/{k}" for d in top.daemons for k in range(1, DEALERS + 1))
    ids = sorted(d["id"] for d in dispatch["daemons"])
    check(ids == want, f"dispatcher peers {ids}, want {want}")
    per = {d["id"]: d["dispatched"] for d in dispatch["daemons"]}
    check(sum(per.values()) == FRAMES and min(per.values()) > 0, f"per-peer dispatched {per}")
    restarts = sum(d.log.count(r"source restart") for d in top.daemons)
    check(restarts == 0, f"{restarts} daemons' connections counted a source restart")
    return top


FRAGMENTS = 3


def test_fragments(tmp):
    """steady with fragmented frames: each frame whole out of the merge, all its fragments to one daemon."""
    top = Topology(tmp, window_ms=60000)
    stray = top.ctx.socket(zmq.PUSH)
    stray.connect(f"tcp://127.0.0.1:{top.front}")
    matrices = np.stack([np.eye(8, dtype=np.complex128)] * 4)
    stray.send_multipart(ec.encode_fragments(10 ** 6, 0, matrices, FRAGMENTS)[1])  # continues no frame
    stray.close(linger=5000)
    sim = run_sim(top, 0, ["--fragments", str(FRAGMENTS)])
    check(sim.returncode == 0, f"sim exit {sim.returncode}: {sim.stderr}")
    merge, dispatch = top.finish()
    check_all_out(top, merge)
    messages = FRAMES * FRAGMENTS
    check(dispatch["rejected"] == {"incomplete": 1}, f"dispatcher rejects: {dispatch['rejected']}")
    check(dispatch["frames_in"] == messages + 1 and dispatch["dispatched"] == messages
          and dispatch["dropped_total"] == 0 and dispatch["queued"] == 0, f"dispatcher books: {dispatch}")
    check(dispatch["fragmented_frames"] == {"started": FRAMES, "dispatched": FRAMES, "in_progress": 0,
                                            "abandoned": 0, "orphaned": 0, "dropped": 0},
          f"fragmented frames: {dispatch['fragmented_frames']}")
    per = [(d["frames"], d["dispatched"]) for d in dispatch["daemons"]]
    check(len(per) == 3 and sum(f for f, _ in per) == FRAMES and sum(m for _, m in per) == messages
          and min(f for f, _ in per) > 0, f"per-daemon (frames, messages) {per}")
    firsts = [first for first, _ in ec.fragment_ranges(4, FRAGMENTS)]
    by_seq = {}
    for line in top.seq_log():
        check(len(line) == 3, f"seq log line {line} is not 'seq daemon first'")
        by_seq.setdefault(int(line[0]), []).append((line[1], int(line[2])))
    check(sorted(by_seq) == list(range(FRAMES)), f"seq log seqs: {sorted(by_seq)}")
    for seq, lines in sorted(by_seq.items()):
        check(len({d for d, _ in lines}) == 1 and [f for _, f in lines] == firsts,
              f"seq {seq}: fragments went {lines}, not all to one daemon in order {firsts}")
    check_prometheus(tmp, dispatch, merge)
    return top


READY, CREDIT, HEARTBEAT, GOODBYE = 1, 2, 3, 4


def control(kind, credit=0, heartbeat_ms=0):
    """A dispatch control message (docs/protocol.md, "Dispatch control messages")."""
    return struct.pack("<4sBBBBII", b"EIGD", 1, kind, 0, 0, credit, heartbeat_ms)


class FakeDaemon:
    """A DEALER that speaks the control messages and records what it is sent: (seq, first) per
    frame message, first None for a whole frame, ("goodbye",) for the dispatcher's GOODBYE."""

    def __init__(self, ctx, port, name):
        self.name, self.got = name, []
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.IDENTITY, name.encode())
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(f"tcp://127.0.0.1:{port}")

    def send(self, kind, credit=0, heartbeat_ms=0):
        self.sock.send(control(kind, credit, heartbeat_ms))

    def expect(self, count, limit_s=30):
        """Waits for `count` more frame messages or GOODBYEs (heartbeats skipped); returns them."""
        out, end = [], time.monotonic() + limit_s
        while len(out) < count and time.monotonic() < end:
            if not self.sock.poll(50):
                continue
            parts = self.sock.recv_multipart()
            if parts[0][:4] == b"EIGD":
                if parts[0][5] == GOODBYE:
                    out.append(("goodbye",))
                continue
            h = ec.decode_header(parts[0], ec.KIND_COVARIANCE)
            out.append((h["seq"], h["first"] if h["fragment"] else None))
        check(len(out) == count, f"{self.name} got {out}, wanted {count} messages")
        self.got += out
        return out


def test_fragment_rules(tmp):
    """eigstream-dispatch's fragment routing, message by message, against fake daemons."""
    front, back = free_ports(2)
    json_path, log_path = os.path.join(tmp, "dispatch.json"), os.path.join(tmp, "seq.log")
    proc = subprocess.Popen([DISPATCH, "--front", f"tcp://127.0.0.1:{front}", "--back", f"tcp://127.0.0.1:{back}",
                             "--queue", "2", "--overflow", "drop_oldest", "--liveness", "1", "--stats-s", "0.02",
                             "--fragment-timeout-ms", "600000", "--json", json_path, "--seq-log", log_path,
                             "--prometheus", os.path.join(tmp, "dispatch.prom")],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    proc.log = Lines(proc, "dispatch")
    ctx = zmq.Context()
    source = ctx.socket(zmq.PUSH)
    source.setsockopt(zmq.LINGER, 0)
    source.connect(f"tcp://127.0.0.1:{front}")
    matrices = np.stack([np.eye(2, dtype=np.complex128) * (i + 1) for i in range(6)])

    def fragments(seq, count):
        return ec.encode_fragments(seq, 0, matrices, count)  # 6 matrices in `count` fragments

    def stats():
        try:
            with open(json_path) as f:
                return json.load(f)
        except (FileNotFoundError, ValueError):
            return None

    def wait_stats(predicate, what):
        wait_for(lambda: (lambda j: j is not None and predicate(j))(stats()), what, 60)

    def credit(j, name):
        """A daemon's credit by its id (the list is in the order the daemons said READY)."""
        return {d["id"]: d["credit"] for d in j["daemons"]}.get(name)

    a, b, c = (FakeDaemon(ctx, back, n) for n in ("daemon-a", "daemon-b", "daemon-c"))
    a.send(READY, 1, 600000)
    b.send(READY, 0, 600000)
    wait_for(lambda: proc.log.count(r"daemon daemon-[ab] ready \(credit") == 2, "a and b READY", 60)
    # 1. A frame of 3 fragments goes whole to the one daemon with credit (1), which it spends once.
    for m in fragments(0, 3):
        source.send_multipart(m)
    check(a.expect(3) == [(0, 0), (0, 2), (0, 4)], f"seq 0 at a: {a.got}")
    # 2. A whole frame waits for credit, as before.
    source.send_multipart(ec.encode_covariance(1, 0, matrices))
    wait_stats(lambda j: j["queued_frames"] == 1, "seq 1 held")
    b.send(CREDIT, 1)
    check(b.expect(1) == [(1, None)], f"seq 1 at b: {b.got}")
    # 3. A fragment that continues no frame: rejected incomplete.
    source.send_multipart(fragments(50, 3)[1])
    wait_stats(lambda j: j["rejected"].get("incomplete") == 1, "the stray fragment rejected")
    # 4. No credit: two fragmented frames held (5 messages), a third frame evicts the oldest whole.
    for m in fragments(2, 3) + fragments(3, 2):
        source.send_multipart(m)
    wait_stats(lambda j: j["queued_frames"] == 2 and j["queued"] == 5, "seqs 2 and 3 held")
    source.send_multipart(ec.encode_covariance(4, 0, matrices))
    wait_stats(lambda j: j["dropped"]["queue_full"] == 3 and j["queued"] == 3, "seq 2 evicted whole")
    a.send(CREDIT, 2)
    check(a.expect(3) == [(3, 0), (3, 3), (4, None)], f"seqs 3 and 4 at a: {a.got}")
    # 5. A held frame the source gives up (a new frame begins) is dropped, not sent in part;
    #    its late last fragment continues nothing.
    late = fragments(5, 3)
    for m in late[:2]:
        source.send_multipart(m)
    wait_stats(lambda j: j["queued"] == 2, "seq 5's first two fragments held")
    source.send_multipart(ec.encode_covariance(6, 0, matrices))
    wait_stats(lambda j: j["dropped"]["frame_incomplete"] == 2, "seq 5 dropped as incomplete")
    source.send_multipart(late[2])
    wait_stats(lambda j: j["rejected"].get("incomplete") == 2, "seq 5's late fragment rejected")
    b.send(CREDIT, 1)
    check(b.expect(1) == [(6, None)], f"seq 6 at b: {b.got}")
    # 6. A routed frame the source gives up ends there (abandoned); the next frame, held for
    #    want of credit, gets b's one credit, and its second fragment follows with b at 0.
    a.send(CREDIT, 1)
    wait_stats(lambda j: credit(j, "daemon-a") == 1 and credit(j, "daemon-b") == 0, "a's credit")
    source.send_multipart(fragments(7, 3)[0])
    check(a.expect(1) == [(7, 0)], f"seq 7 at a: {a.got}")
    seq8 = fragments(8, 2)
    source.send_multipart(seq8[0])
    wait_stats(lambda j: j["fragmented_frames"]["abandoned"] == 2 and j["queued"] == 1, "seq 7 abandoned")
    b.send(CREDIT, 1)
    check(b.expect(1) == [(8, 0)], f"seq 8 at b: {b.got}")
    source.send_multipart(seq8[1])
    check(b.expect(1) == [(8, 3)], f"seq 8's second fragment at b (no credit left): {b.got}")
    # 7. GOODBYE mid-frame: the rest of the frame still goes to c, then the answer.
    c.send(READY, 1, 600000)
    wait_for(lambda: proc.log.count(r"daemon daemon-c ready \(credit") == 1, "c READY", 60)
    seq9 = fragments(9, 3)
    source.send_multipart(seq9[0])
    check(c.expect(1) == [(9, 0)], f"seq 9 at c: {c.got}")
    c.send(GOODBYE)
    wait_for(lambda: proc.log.count(r"daemon daemon-c gone \(goodbye\)") == 1, "c's GOODBYE heard", 60)
    for m in seq9[1:]:
        source.send_multipart(m)
    check(c.expect(3) == [(9, 2), (9, 4), ("goodbye",)], f"the rest of seq 9, then GOODBYE, at c: {c.got}")
    # 8. The daemon of a routed frame goes silent (heartbeat 100 ms, liveness 1): the rest of
    #    the frame is dropped as orphaned.
    a.send(CREDIT, 1)
    wait_stats(lambda j: credit(j, "daemon-a") == 1, "a's credit")
    seq10 = fragments(10, 3)
    source.send_multipart(seq10[0])
    check(a.expect(1) == [(10, 0)], f"seq 10 at a: {a.got}")
    a.send(READY, 0, 100)
    wait_for(lambda: proc.log.count(r"daemon daemon-a gone \(silent\)") == 1, "a buried silent", 60)
    for m in seq10[1:]:
        source.send_multipart(m)
    wait_stats(lambda j: j["dropped"]["fragment_orphaned"] == 2, "seq 10's rest dropped orphaned")
    proc.send_signal(signal.SIGTERM)
    check(proc.wait(timeout=60) == 0, "the dispatcher did not exit 0")
    check(b.expect(1) == [("goodbye",)], "b was not told GOODBYE at exit")
    j = stats()
    fr = j["fragmented_frames"]
    check(j["frames_in"] == 24 and j["dispatched"] == 15 and j["rejected_total"] == 2 and j["dropped_total"] == 7
          and j["queued"] == 0, f"message books: {j}")
    check(j["frames_in"] == j["dispatched"] + j["rejected_total"] + j["dropped_total"] + j["queued"],
          "the message books do not balance")
    check(j["dropped"] == {"queue_full": 3, "shutdown": 0, "fragment_orphaned": 2, "frame_incomplete": 2},
          f"drops: {j['dropped']}")
    check(fr == {"started": 8, "dispatched": 4, "in_progress": 0, "abandoned": 2, "orphaned": 1, "dropped": 1},
          f"fragmented frames: {fr}")
    per = {d["id"]: (d["frames"], d["dispatched"]) for d in j["daemons"]}
    check(per == {"daemon-a": (5, 8), "daemon-b": (3, 4), "daemon-c": (1, 3)}, f"per daemon (frames, messages): {per}")
    with open(log_path) as f:
        log = [line.split() for line in f]
    sent = {d.name: [m for m in d.got if m[0] != "goodbye"] for d in (a, b, c)}
    from_log = {d.name: [(int(x[0]), int(x[2]) if len(x) == 3 else None) for x in log if x[1] == d.name]
                for d in (a, b, c)}
    check(from_log == sent, f"the seq log {from_log} differs from what the daemons got {sent}")
    ctx.destroy(linger=0)
    if failures:
        proc.log.dump()


def main():
    for tool in (DAEMON, SIM, DISPATCH, MERGE):
        if not os.access(tool, os.X_OK):
            print(f"missing {tool}", file=sys.stderr)
            return 1
    for stale in glob.glob(os.path.join(PROM_DIR, f"{CASE}-*.prom")):
        os.remove(stale)  # a failed run must not leave the last run's files to lint
    with tempfile.TemporaryDirectory() as tmp:
        top = None
        if CASE == "configs":
            test_configs()
            test_usage()
        elif CASE == "steady":
            top = test_steady(tmp)
        elif CASE == "kill":
            top = test_kill(tmp)
        elif CASE == "stop":
            top = test_stop(tmp)
        elif CASE == "dealers":
            top = test_dealers(tmp)
        elif CASE == "dealers_stop":
            top = test_stop(tmp, dealers=DEALERS)
        elif CASE == "fragment_rules":
            test_fragment_rules(tmp)
        elif CASE == "fragments":
            top = test_fragments(tmp)
        elif CASE == "promtool":
            test_promtool()
        else:
            print(f"unknown case {CASE}", file=sys.stderr)
            return 2
        if failures and top is not None:
            top.dump()
    print(f"{CASE}: {'FAIL' if failures else 'PASS'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
