"""sim_sink_util.py - what test_sim_sink.py and test_sim_sink_iq.py share:
eigstream-sim run into a PULL socket of the test, and eigstream-sink fed
from a PUSH socket of the test (the test stands in for the daemon).

Import after eigstream_check.require("numpy", "zmq") has passed.
"""
import subprocess

import zmq

from eigstream_check import check


def receive_from_sim(sim, endpoint, frames, args):
    """Runs eigstream-sim (binary sim) for `frames` frames, unpaced, with
    args after the common ones, into a PULL socket bound at endpoint; checks
    that it sent them all and exited 0. Returns the received parts lists."""
    pull = zmq.Context.instance().socket(zmq.PULL)
    pull.bind(endpoint)
    pull.RCVTIMEO = 30000
    proc = subprocess.Popen([sim, "--endpoint", endpoint, "--frames", str(frames), "--rate", "0", "--pool", "2",
                             "--quiet"] + args, stdout=subprocess.PIPE, text=True)
    got = []
    try:
        for _ in range(frames):
            got.append(pull.recv_multipart())
    except zmq.Again:
        check(False, "timed out waiting for the simulator")
    out, _ = proc.communicate(timeout=30)
    check(proc.returncode == 0 and f"sent {frames} frames" in out, f"sim exit {proc.returncode}: {out}")
    pull.close(linger=0)
    return got


def send_to_sink(sink, endpoint, messages, args):
    """Pushes messages (parts lists) from a socket bound at endpoint to
    eigstream-sink (binary sink: PULL, connect, quiet, 20 s at most, args
    after the common ones). Returns (exit code, stdout + stderr)."""
    push = zmq.Context.instance().socket(zmq.PUSH)
    push.bind(endpoint)
    proc = subprocess.Popen([sink, "--endpoint", endpoint, "--pattern", "pull", "--frames", str(len(messages)),
                             "--duration", "20", "--quiet"] + args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    push.SNDTIMEO = 10000
    for m in messages:
        push.send_multipart(m)
    out, err = proc.communicate(timeout=30)
    push.close(linger=0)
    return proc.returncode, out + err
