#!/usr/bin/python3
"""eigstream-merge's sequence handling, the merge alone between this test as three fake daemons
(PUSH sockets the merge connects to) and this test as the consumer (label integration).

  test_scaleout_merge.py BUILD_DIR SOURCE_DIR CASE     CASE: restart | jumps | damaged | late_start | sink

restart     a source that starts again: run A seq 0..99, then run B 0..9 (behind by less than the
            window: told from copies by its timestamps), then run C 0..39. Every frame of every run
            comes out once, each run in order after the one before; 3 sequences (epochs), no gap,
            nothing dropped.
jumps       seq 10^12 and 2^64-1 from one input in the middle of 0..99: every good frame comes out
            once, in order; the two are dropped out_of_range; no gap; one sequence.
damaged     a truncated copy, a bad-CRC copy and a short-header copy of seq 20 and 21, before and
            after the good frames: the good frames come out (their CRC checks), the damaged copies
            are rejected by reason (truncated 4, crc_mismatch 4, header_size 4), no duplicate.
late_start  a merge started mid-stream (no --first-seq): the sequence begins at the lowest seq
            that came in its first --window-ms (500, although 501 came first); a frame of seq 495
            after that is dropped late AND named as a gap [495, 495], the one place losses are named
            (the JSON and --gap-log agree).
sink        eigstream-sink told to expect 12 frames gets 10: VERDICT FAIL with missing=2; a source
            restart seen by the sink is counted as a restart, not a gap.

The frames are made here (eigstream_client.encode_eigenspace), so the expected output is known
independently of the merge. Synchronisation is by the merge's JSON counters and its exit at
--last-seq; the windows and timeouts are upper bounds for a stuck run, never measured times.
"""
import json
import os
import signal
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_scaleout as ts  # noqa: E402  (its helpers; argv has the same shape)
from test_scaleout import check, free_ports, wait_for  # noqa: E402

MERGE = os.path.join(BUILD, "tools", "merge", "eigstream-merge")
SINK = os.path.join(BUILD, "tools", "sink", "eigstream-sink")
N, COUNT, WINDOW = 4, 2, 16
def frame(seq, timestamp_ns):
    """A valid eigenspace frame (n = 4, 2 matrices, full mode, CRC) of seq."""
    values = np.tile(np.arange(1.0, N + 1.0), (COUNT, 1))
    vectors = np.tile(np.eye(N, dtype=np.complex128), (COUNT, 1, 1))
    return ec.encode_eigenspace(seq, timestamp_ns, values, vectors, [1] * COUNT, mode="full",
                                stage_times=(timestamp_ns,) * 4)


class Merge:
    """The merge with three PUSH inputs bound here and a PULL consumer on its output."""

    def __init__(self, tmp, extra):
        self.tmp = tmp
        *ins, out = free_ports(4)
        self.ctx = zmq.Context()
        self.inputs = []
        for p in ins:
            s = self.ctx.socket(zmq.PUSH)
            s.bind(f"tcp://127.0.0.1:{p}")
            self.inputs.append(s)
        self.consumer = self.ctx.socket(zmq.PULL)
        self.consumer.connect(f"tcp://127.0.0.1:{out}")
        self.json = os.path.join(tmp, "merge.json")
        self.gap_log = os.path.join(tmp, "gaps.log")
        self.proc = subprocess.Popen([MERGE, "--in", ",".join(f"tcp://127.0.0.1:{p}" for p in ins),
                                      "--out", f"tcp://127.0.0.1:{out}", "--out-pattern", "push",
                                      "--window", str(WINDOW), "--stats-s", "0.02", "--json", self.json,
                                      "--gap-log", self.gap_log, *extra],
                                     stderr=subprocess.PIPE, text=True)
        self.received = []

    def send(self, i, parts):
        self.inputs[i % 3].send_multipart(parts)

    def stats(self):
        return ts.read_json(self.json)

    def wait_in(self, count):
        """Until the merge has taken count messages in."""
        wait_for(lambda: self.stats().get("frames_in", 0) >= count, f"the merge to take {count} messages")

    def read(self, count):
        """Reads until count frames came out in all; (seq, timestamp, crc ok) each."""
        poller = zmq.Poller()
        poller.register(self.consumer, zmq.POLLIN)
        end = time.monotonic() + 120
        while len(self.received) < count and time.monotonic() < end:
            if poller.poll(50):
                parts = self.consumer.recv_multipart()
                try:
                    header, _, _ = ec.decode_eigenspace(parts, check_crc=True)
                    self.received.append((header["seq"], header["timestamp_ns"], True))
                except ec.ProtocolError:
                    self.received.append((None, None, False))
        check(len(self.received) >= count, f"the consumer got {len(self.received)} frames, not {count}")

    def finish(self, stop=True):
        if stop and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
            check(False, "the merge did not stop")
        check(self.proc.returncode == 0, f"merge exit {self.proc.returncode}")
        self.log = err
        stats = self.stats()
        # Whatever it sent before stopping is on the consumer's socket: read it all.
        self.read(stats.get("frames_out", 0))
        for s in self.inputs + [self.consumer]:
            s.close(0)
        self.ctx.term()
        return stats

    def gap_lines(self):
        with open(self.gap_log) as f:
            return [tuple(int(v) for v in line.split()) for line in f]


def zero_drops(stats):
    return all(v == 0 for v in stats["dropped"].values())


def test_restart(tmp):
    m = Merge(tmp, ["--window-ms", "300"])
    runs = [(100, 1_000_000_000_000), (10, 2_000_000_000_000), (40, 3_000_000_000_000)]
    expected = []
    for r, (frames, t0) in enumerate(runs):
        for seq in range(frames):
            m.send(seq, frame(seq, t0 + seq))
            expected.append((seq, t0 + seq))
        # The next run starts once this one is out: a restart, not two runs interleaved.
        m.read(len(expected))
        wait_for(lambda: m.stats().get("epochs", 0) == r + 1, f"sequence {r + 1} to begin")
    stats = m.finish()
    got = [(s, t) for s, t, _ in m.received]
    check(got == expected, f"output is not run A, B, C in order: {[(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e][:5]} ({len(got)} frames)")
    check(stats["frames_in"] == 150 and stats["frames_out"] == 150 and stats["epochs"] == 3
          and stats["gap_frames"] == 0 and zero_drops(stats) and stats["rejected_total"] == 0,
          f"merge books: {stats}")
    check(m.log.count("source restart") == 2, "the two restarts are not logged once each")
    print(f"books: in={stats['frames_in']} out={stats['frames_out']} epochs={stats['epochs']} "
          f"gaps={stats['gap_frames']} dropped={stats['dropped']}")


def test_jumps(tmp):
    m = Merge(tmp, ["--first-seq", "0", "--last-seq", "99", "--window-ms", "60000"])
    t0 = 1_000_000_000_000
    for seq in range(100):
        m.send(seq, frame(seq, t0 + seq))
        if seq == 30:
            m.send(1, frame(10**12, t0 + 10**12))
            m.send(2, frame(2**64 - 1, t0))
    stats = m.finish(stop=False)  # it exits at --last-seq
    got = [s for s, _, _ in m.received]
    check(got == list(range(100)), f"good frames not all out in order: {got}")
    dropped = stats["dropped"]
    check(stats["frames_in"] == 102 and stats["frames_out"] == 100 and dropped["out_of_range"] == 2
          and sum(dropped.values()) == 2 and stats["gap_frames"] == 0 and stats["epochs"] == 1,
          f"merge books: {stats}")
    for seq in (10**12, 2**64 - 1):
        check(f"out_of_range: seq {seq} dropped" in m.log, f"seq {seq} is not named in the log")
    print(f"books: in={stats['frames_in']} out={stats['frames_out']} out_of_range={dropped['out_of_range']} "
          f"gaps={stats['gap_frames']} epochs={stats['epochs']}")


def damaged_copies(seq, t):
    good = frame(seq, t)
    truncated = [good[0], good[1], good[2][:-8]]
    data = bytearray(good[2])
    data[5] ^= 0x40
    bad_crc = [good[0], good[1], bytes(data)]
    short_header = [good[0][:40], good[1], good[2]]
    return [truncated, bad_crc, short_header]


def test_damaged(tmp):
    m = Merge(tmp, ["--first-seq", "0", "--last-seq", "59", "--window-ms", "60000"])
    t0 = 1_000_000_000_000
    sent = 0
    for seq in range(60):
        if seq in (20, 21):
            for parts in damaged_copies(seq, t0 + seq):   # before the good frame ...
                m.send(seq, parts)
                sent += 1
        m.send(seq, frame(seq, t0 + seq))
        sent += 1
        if seq in (20, 21):
            m.wait_in(sent)
            for parts in damaged_copies(seq, t0 + seq):   # ... and after it, while it is held or out
                m.send(seq + 1, parts)
                sent += 1
    stats = m.finish(stop=False)
    got = [(s, ok) for s, _, ok in m.received]
    check(got == [(s, True) for s in range(60)], f"output is not 0..59 once each with a good CRC: {got}")
    check(stats["frames_in"] == 72 and stats["frames_out"] == 60 and stats["rejected_total"] == 12
          and stats["rejected"] == {"header_size": 4, "truncated": 4, "crc_mismatch": 4}
          and zero_drops(stats) and stats["gap_frames"] == 0, f"merge books: {stats}")
    print(f"books: in={stats['frames_in']} out={stats['frames_out']} rejected={stats['rejected']} "
          f"dropped={stats['dropped']}")


def test_late_start(tmp):
    m = Merge(tmp, ["--window-ms", "2000", "--last-seq", "530"])
    t0 = 1_000_000_000_000
    m.send(1, frame(501, t0 + 501))
    m.send(2, frame(502, t0 + 502))
    m.wait_in(2)
    m.send(0, frame(500, t0 + 500))                  # lower, later, on another input
    m.wait_in(3)
    wait_for(lambda: m.stats().get("epochs", 0) == 1, "the sequence to begin")
    m.send(0, frame(495, t0 + 495))                  # below the sequence's start: late, named
    for seq in range(503, 531):
        m.send(seq, frame(seq, t0 + seq))
    stats = m.finish(stop=False)
    got = [s for s, _, _ in m.received]
    check(got == list(range(500, 531)), f"output is not 500..530 in order: {got}")
    check(stats["frames_in"] == 32 and stats["frames_out"] == 31 and stats["dropped"]["late"] == 1
          and stats["gap_frames"] == 1 and stats["gaps"] == [[495, 495]] and stats["epochs"] == 1,
          f"merge books: {stats}")
    check(m.gap_lines() == [(495, 495)], f"--gap-log: {m.gap_lines()}")
    print(f"books: in={stats['frames_in']} out={stats['frames_out']} late={stats['dropped']['late']} "
          f"gaps={stats['gaps']}")


def test_sink(tmp):
    port, = free_ports(1)
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.bind(f"tcp://127.0.0.1:{port}")
    sink = subprocess.Popen([SINK, "--endpoint", f"tcp://127.0.0.1:{port}", "--pattern", "pull", "--n", str(N),
                             "--frames", "12", "--duration", "600", "--json", os.path.join(tmp, "sink.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(sink.stderr), daemon=True)
    reader.start()
    t0 = 1_000_000_000_000
    for seq in list(range(6)) + list(range(4)):          # a restart after 6 frames: 10 in all
        push.send_multipart(frame(seq, t0 + seq))
    # Its once-a-second line says when all 10 are in; it waits for the 2 that never come.
    wait_for(lambda: any(line.rstrip().endswith("frames 10") for line in list(lines)), "the sink to count 10")
    sink.send_signal(signal.SIGINT)
    out = sink.stdout.read()
    sink.wait(timeout=60)
    reader.join()
    push.close(0)
    ctx.term()
    with open(os.path.join(tmp, "sink.json")) as f:
        js = json.load(f)
    check(sink.returncode == 1 and "VERDICT: FAIL" in out, f"sink exit {sink.returncode}: {out}")
    check(js["frames"] == 10 and f"missing={12 - js['frames']} of 12" in out and js["restarts"] == 1
          and js["gaps"] == 0, f"sink: {out} {js}")
    print(f"sink: frames={js['frames']} restarts={js['restarts']} gaps={js['gaps']} verdict line: {out.strip()}")


def main():
    cases = {"restart": test_restart, "jumps": test_jumps, "damaged": test_damaged,
             "late_start": test_late_start, "sink": test_sink}
    with tempfile.TemporaryDirectory() as tmp:
        if CASE not in cases:
            print(f"unknown case {CASE}", file=sys.stderr)
            return 2
        cases[CASE](tmp)
    print(f"{CASE}: {'FAIL' if ts.failures else 'PASS'} ({len(ts.failures)} failures)")
    return 1 if ts.failures else 0


if __name__ == "__main__":
    sys.exit(main())
