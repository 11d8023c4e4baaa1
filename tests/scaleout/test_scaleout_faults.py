#!/usr/bin/python3
"""eigstream-dispatch against bad and dying peers (label integration).

  test_scaleout_faults.py BUILD_DIR SOURCE_DIR CASE
      CASE: table | credit | oversized | redispatch | drain

table       100 daemons, one after another, say READY then GOODBYE (a rolling restart, each a new
            name): the table of 64 entries is reclaimed, never full; a 101st is accepted and gets a
            frame; the books balance with the departed entries (dispatched = the table's sum +
            departed). Then 70 peers say READY and go silent: 63 are taken (one entry is the live
            daemon's), 7 refused (table_full);
            once the silent ones are buried, a new daemon is accepted again.
credit      a fake daemon claims credit 4e9 in READY and 4e9 more in CREDIT: it holds --max-credit
            (10), the excess is counted credit_capped, exactly.
oversized   a 2 GB multipart message (20 parts of 100 MiB, each under the per-part bound) on the
            dispatcher's front end: rejected oversized, the process's resident memory afterwards
            under 300 MB, and the next good frame still dispatched. The merge likewise rejects a
            message whose parts sum past its --max-bytes.
redispatch  the kill scenario of test_scaleout.py (sim -> dispatch -> 3 CPU daemons -> merge, one
            daemon SIGSTOPped holding frames, then SIGKILLed) with re-dispatch on: every one of
            the 60 frames comes out of the merge once, in order, no gap; every frame the dead
            daemon was sent is re-dispatched once (the seq log names them), and the merge's
            duplicates are exactly the re-dispatched frames that had been published already.
drain       the back end over IPC, a fake daemon at RCVHWM 1 with credit for all 40 frames, reading
            none until the dispatcher has its SIGTERM: the dispatcher waits (its 1 s linger) until
            the daemon has read what it was sent, so the daemon gets all 40 frames and the GOODBYE,
            and the dispatcher exits 0 with dispatched = 40. Without the wait the dispatcher closes
            at once and libzmq drops what the daemon had not yet read out of the kernel.

Synchronisation by handshakes (control answers, JSON counters, log lines); the timeouts are
upper bounds for a stuck run.
"""
import json
import os
import signal
import subprocess
import sys
import time

import zmq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_scaleout as ts  # noqa: E402  (its helpers; argv has the same shape)
from test_scaleout import check, free_ports, wait_for, control, Lines  # noqa: E402

CASE = sys.argv[3]
DISPATCH, MERGE = ts.DISPATCH, ts.MERGE
READY, CREDIT, HEARTBEAT, GOODBYE = 1, 2, 3, 4


class Dispatcher:
    def __init__(self, tmp, extra=(), back_ipc=False):
        self.front, self.back = free_ports(2)
        self.back_endpoint = f"ipc://{tmp}/back.ipc" if back_ipc else f"tcp://127.0.0.1:{self.back}"
        self.json = os.path.join(tmp, "dispatch.json")
        self.proc = subprocess.Popen([DISPATCH, "--front", f"tcp://127.0.0.1:{self.front}",
                                      "--back", self.back_endpoint, "--stats-s", "0.05",
                                      "--json", self.json, *extra], stderr=subprocess.PIPE, text=True)
        self.log = Lines(self.proc, "dispatch")
        self.ctx = zmq.Context()

    def stats(self):
        return ts.read_json(self.json)

    def wait_stats(self, predicate, what):
        return wait_for(lambda: predicate(self.stats()), what)

    def daemon(self, name, hwm=1000):
        s = self.ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.IDENTITY, name.encode())
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.RCVHWM, hwm)
        s.connect(self.back_endpoint)
        return s

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        check(self.proc.returncode == 0, f"dispatcher exit {self.proc.returncode}")
        self.log.thread.join(timeout=10)
        return self.stats()


def recv_goodbye(sock, limit_s=60):
    """The dispatcher's GOODBYE answer (heartbeats before it skipped), or None."""
    end = time.monotonic() + limit_s
    while sock.poll(max(0, int((end - time.monotonic()) * 1000))):
        message = sock.recv()
        if len(message) > 5 and message[5] == GOODBYE:
            return message
    return None


def test_table(tmp):
    d = Dispatcher(tmp, ["--liveness", "2"])
    for i in range(100):
        s = d.daemon(f"restart-{i}")
        s.send(control(READY, credit=1, heartbeat_ms=60000))
        s.send(control(GOODBYE))
        check(recv_goodbye(s) is not None, f"daemon {i}: no GOODBYE answer")
        s.close()
    last = d.daemon("restart-100")
    last.send(control(READY, credit=1, heartbeat_ms=60000))
    d.wait_stats(lambda j: j.get("daemons_alive") == 1, "the 101st daemon to be taken")
    source = d.ctx.socket(zmq.PUSH)
    source.connect(f"tcp://127.0.0.1:{d.front}")
    source.send_multipart(ts.ec.encode_covariance(0, 1, ts.np.tile(ts.np.eye(4, dtype=ts.np.complex64), (2, 1, 1))))
    got = []
    while len(got) < 1 and last.poll(60000):
        part = last.recv_multipart()
        if len(part) > 1:
            got.append(part)
    check(len(got) == 1, "the 101st daemon got no frame")
    j = d.stats()
    d.wait_stats(lambda j: j.get("dispatched") == 1, "the frame dispatched")
    j = d.stats()
    table_sum = sum(x["dispatched"] for x in j["daemons"])
    check(j["table_full"] == 0 and j["departed"]["daemons"] == 37 and len(j["daemons"]) == 64
          and j["dispatched"] == table_sum + j["departed"]["dispatched"] == 1, f"books after 101 daemons: {j}")
    books1 = (j["table_full"], j["departed"]["daemons"], len(j["daemons"]))
    # 70 peers say READY and nothing more: 63 join the live daemon in the 64 entries, 7 are refused.
    rogues = [d.daemon(f"rogue-{i}") for i in range(70)]
    for r in rogues:
        r.send(control(READY, credit=1, heartbeat_ms=100))
    d.wait_stats(lambda j: j.get("table_full", 0) >= 7, "the table to refuse")
    j = d.stats()
    refused = j["table_full"]
    # Silent for --liveness 2 x 100 ms: buried, and their entries reclaimable.
    d.wait_stats(lambda j: j.get("daemons_alive") == 1, "the silent peers to be buried")
    late = d.daemon("after-rogues")
    late.send(control(READY, credit=1, heartbeat_ms=60000))
    d.wait_stats(lambda j: j.get("daemons_alive") == 2, "a daemon taken after the rogues")
    j = d.stop()
    check(refused == 7, f"table_full {refused}, expected 7 (64 entries: 1 daemon + 63 rogues alive)")
    print(f"books: after 100 restarts table_full={books1[0]} departed={books1[1]} entries={books1[2]}; "
          f"70 silent READYs: refused={refused}; afterwards accepted, departed={j['departed']['daemons']}")
    for s in rogues + [last, late, source]:
        s.close(0)
    d.ctx.term()


def test_credit(tmp):
    d = Dispatcher(tmp, ["--max-credit", "10"])
    s = d.daemon("greedy")
    s.send(control(READY, credit=4_000_000_000, heartbeat_ms=60000))
    d.wait_stats(lambda j: j.get("daemons_alive") == 1, "the greedy daemon")
    s.send(control(CREDIT, credit=4_000_000_000))
    expected = (4_000_000_000 - 10) + (4_000_000_000 + 10 - 10)
    d.wait_stats(lambda j: j.get("credit_capped") == expected, "the second claim capped")
    j = d.stop()
    check(j["daemons"][0]["credit"] == 10 and j["credit_capped"] == expected, f"credit books: {j}")
    print(f"books: credit={j['daemons'][0]['credit']} credit_capped={j['credit_capped']}")
    s.close(0)
    d.ctx.term()


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def test_oversized(tmp):
    d = Dispatcher(tmp)
    daemon = d.daemon("taker")
    daemon.send(control(READY, credit=4, heartbeat_ms=60000))
    d.wait_stats(lambda j: j.get("daemons_alive") == 1, "the daemon")
    source = d.ctx.socket(zmq.PUSH)
    source.connect(f"tcp://127.0.0.1:{d.front}")
    chunk = bytes(100 << 20)  # under the per-part bound (--max-bytes 128 MiB + header)
    frame = ts.ec.encode_covariance(0, 1, ts.np.tile(ts.np.eye(4, dtype=ts.np.complex64), (2, 1, 1)))
    source.send_multipart([frame[0]] + [chunk] * 20, copy=False)
    d.wait_stats(lambda j: j.get("rejected", {}).get("oversized") == 1, "the 2 GB message rejected")
    rss, peak = rss_kb(d.proc.pid)
    source.send_multipart(frame)
    d.wait_stats(lambda j: j.get("dispatched") == 1, "the good frame dispatched")
    j = d.stop()
    check(rss < 300 * 1024, f"dispatcher resident {rss} kB after the rejection (peak {peak} kB)")
    check(j["frames_in"] == 2 and j["rejected"] == {"oversized": 1} and j["dispatched"] == 1, f"books: {j}")
    print(f"books: frames_in={j['frames_in']} rejected={j['rejected']} dispatched={j['dispatched']}; "
          f"resident after {rss // 1024} MB (peak while ZeroMQ assembled it {peak // 1024} MB)")
    daemon.close(0)
    source.close(0)
    d.ctx.term()
    # The merge: three parts of 600 kB each pass the part bound, their sum (1.8 MB) not --max-bytes 1 MiB.
    port_in, port_out = free_ports(2)
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.bind(f"tcp://127.0.0.1:{port_in}")
    mjson = os.path.join(tmp, "merge.json")
    merge = subprocess.Popen([MERGE, "--in", f"tcp://127.0.0.1:{port_in}", "--out", f"tcp://127.0.0.1:{port_out}",
                              "--max-bytes", str(1 << 20), "--stats-s", "0.05", "--json", mjson],
                             stderr=subprocess.PIPE, text=True)
    Lines(merge, "merge")
    push.send_multipart([bytes(600_000)] * 3)

    def merge_rejected():
        try:
            with open(mjson) as f:
                return json.load(f).get("rejected", {}).get("oversized") == 1
        except (FileNotFoundError, json.JSONDecodeError):
            return False
    wait_for(merge_rejected, "the merge to reject the oversized message")
    merge.send_signal(signal.SIGTERM)
    merge.wait(timeout=60)
    with open(mjson) as f:
        mj = json.load(f)
    check(mj["frames_in"] == 1 and mj["rejected"] == {"oversized": 1}, f"merge books: {mj}")
    print(f"merge books: frames_in={mj['frames_in']} rejected={mj['rejected']}")
    push.close(0)
    ctx.term()


def test_redispatch(tmp):
    top = ts.Topology(tmp, window_ms=30000, deep=1,
                      dispatch_extra=("--redispatch-ms", "30000", "--redispatch-keep", "64"))
    sim, sim_result = ts.sim_midway(top)
    name = ts.stop_then_kill(top, 1)
    sim.join()
    r = sim_result["r"]
    check(r.returncode == 0, f"sim failed: {r.returncode} {r.stderr}")
    merge, dispatch = top.finish()
    seqs = [s for s, _, _ in top.received]
    check(seqs == list(range(ts.FRAMES)), f"consumer got {len(seqs)} frames, not 0..{ts.FRAMES - 1}: {seqs}")
    log = top.seq_log()
    to_victim = sorted(int(line[0]) for line in log if line[1] == name and len(line) == 2)
    again = sorted(int(line[0]) for line in log if len(line) == 3 and line[2] == "redispatched")
    check(again == to_victim and dispatch["redispatched"] == len(again) and dispatch["redispatch_expired"] == 0,
          f"re-dispatched {again}, sent to the dead daemon {to_victim}, books {dispatch}")
    duplicates = merge["dropped"]["duplicate"]
    check(merge["frames_out"] == ts.FRAMES and merge["gap_frames"] == 0
          and merge["frames_in"] == ts.FRAMES + duplicates and duplicates <= len(again),
          f"merge books: {merge}")
    print(f"books: sent to the dead daemon {len(to_victim)}, redispatched {dispatch['redispatched']}, "
          f"merge in={merge['frames_in']} out={merge['frames_out']} duplicates={duplicates} "
          f"gaps={merge['gap_frames']}")
    if ts.failures:
        top.dump()


def test_drain(tmp):
    frames = 40
    d = Dispatcher(tmp, back_ipc=True)
    daemon = d.daemon("busy", hwm=1)
    daemon.send(control(READY, credit=frames, heartbeat_ms=60000))
    d.wait_stats(lambda j: j.get("daemons_alive") == 1, "the daemon")
    source = d.ctx.socket(zmq.PUSH)
    source.connect(f"tcp://127.0.0.1:{d.front}")
    matrices = ts.np.tile(ts.np.eye(4, dtype=ts.np.complex64), (2, 1, 1))
    for seq in range(frames):
        source.send_multipart(ts.ec.encode_covariance(seq, 1, matrices))
    d.wait_stats(lambda j: j.get("dispatched") == frames, f"all {frames} frames dispatched")
    d.proc.send_signal(signal.SIGTERM)
    # The daemon has read nothing yet (at its HWM, the rest in the kernel). It starts once the
    # dispatcher has exited or 0.2 s have passed: without the drain the dispatcher is gone by then.
    end = time.monotonic() + 0.2
    while d.proc.poll() is None and time.monotonic() < end:
        time.sleep(0.01)
    got, goodbye = [], False
    while not goodbye and daemon.poll(5000):
        parts = daemon.recv_multipart()
        if len(parts) > 1:
            got.append(parts)
        elif len(parts[0]) > 5 and parts[0][5] == GOODBYE:
            goodbye = True
    d.proc.wait(timeout=60)
    check(d.proc.returncode == 0, f"dispatcher exit {d.proc.returncode}")
    d.log.thread.join(timeout=10)
    j = d.stats()
    check(len(got) == frames and goodbye and j.get("dispatched") == frames,
          f"the daemon read {len(got)} of {frames} frames, GOODBYE {goodbye}; dispatched {j.get('dispatched')}")
    unread = [line for line in d.log.lines if "still unread" in line]
    check(not unread, f"the dispatcher named unread bytes: {unread}")
    print(f"books: dispatched={j.get('dispatched')}; after the dispatcher's SIGTERM the daemon read "
          f"{len(got)} frames, GOODBYE {'read' if goodbye else 'missing'}")
    daemon.close(0)
    source.close(0)
    d.ctx.term()


def main():
    cases = {"table": test_table, "credit": test_credit, "oversized": test_oversized,
             "redispatch": test_redispatch, "drain": test_drain}
    return ts.run_cases(cases, CASE)


if __name__ == "__main__":
    sys.exit(main())
