#!/usr/bin/python3
"""A config/examples file run by the daemon, its eigenpairs against NumPy
(label integration).

  test_config_example.py PATH_TO_EIGSTREAM EXAMPLE.cfg

The daemon reads the example's text unchanged, with the test's plumbing
appended in groups the example does not set (a second group of the same name
would be refused, and the test would fail saying so): ipc input, PUSH output
to the test, metrics off, no HTTP server. It must start on the example's
solver (its startup line names the backend, n and matrices; with several
workers, the workers line names each of them), take one frame per solver
worker plus one, each of random Hermitian matrices (fixed seed), and publish
them all in seq order; every matrix is checked against numpy.linalg.eigvalsh
(LAPACK's zheevd) by the ratios of LAPACK's tests, residual and
orthogonality included. SIGTERM then drains it: exit 0, accounting in = out,
nothing dropped.

A GPU example on a host that cannot run it (built without CUDA, or fewer
usable GPUs than solver.gpu_devices names) is skipped (exit 77), on the
daemon's own refusal, which names the usable GPUs; so is one on a host whose
Python lacks NumPy or pyzmq.
"""
import os
import re
import sys

DAEMON, EXAMPLE = sys.argv[1:3]
NAME = "config_example_" + os.path.splitext(os.path.basename(EXAMPLE))[0]

# A GPU example runs on GPU hosts whose Python may lack NumPy or pyzmq: there
# it skips (77), naming what is missing; a CPU example fails without them.
try:
    import numpy as np
    import zmq  # noqa: F401
except ImportError as missing:
    if "gpu" in os.path.basename(EXAMPLE):
        print(f"SKIP: {missing}")
        sys.exit(77)
    raise

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "service"))
from service_util import Daemon, check, ec, finish, ipc_clients  # noqa: E402


def plumbing(tag):
    return f'''
# --- appended by {os.path.basename(__file__)}: the test's endpoints ---
input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "push"; }};
metrics = {{ endpoint = ""; http = ""; }};
'''


def gpu_refusal(text, example_text):
    """The reason to skip when the daemon refused a GPU example for want of GPUs, else None."""
    m = re.search(r"solver\.backend = cuda: .*\(eigstream built (with|without) CUDA, (\d+) usable GPU\)", text)
    if m is None:
        return None
    devices = re.search(r"gpu_devices\s*=\s*\[([^\]]*)\]", example_text)
    wanted = max((int(x) for x in devices.group(1).split(",")), default=0) + 1 if devices else 1
    if m.group(1) == "without" or int(m.group(2)) < wanted:
        return f"{os.path.basename(EXAMPLE)} needs {wanted} GPU(s): {m.group(0)}"
    return None


def check_frame(parts, sent, n):
    """Every matrix of an eigenspace against numpy.linalg.eigvalsh; returns its seq."""
    h, _, results = ec.decode_eigenspace(parts)
    seq = h["seq"]
    if not check(seq in sent, f"eigenspace of a frame never sent: seq {seq}"):
        return seq
    a = sent[seq]
    check(len(results) == len(a), f"seq {seq}: {len(results)} matrices, sent {len(a)}")
    eps = np.finfo(float).eps
    for b, r in enumerate(results):
        ref = np.linalg.eigvalsh(a[b])
        scale = n * eps * np.abs(a[b]).sum(axis=0).max()
        ratio = np.abs(r.values - ref).max() / scale
        v = r.vectors
        lam = r.values[r.first_index:r.first_index + v.shape[1]]
        res = np.abs(a[b] @ v - v * lam).sum(axis=0).max() / scale
        orth = np.abs(v.conj().T @ v - np.eye(v.shape[1])).max() / (n * eps)
        check(r.status == 0 and ratio <= 60 and res <= 60 and orth <= 60,
              f"seq {seq} matrix {b} (n={n}): status {r.status}, eigenvalue ratio {ratio:.3g}, "
              f"residual ratio {res:.3g}, orthogonality ratio {orth:.3g} (bound 60)")
    return seq


def body(daemon, tag, example_text):
    start = daemon.wait_for(r"main: eigstream .*: backend (\S+) .* n=(\d+), matrices=(\d+)")
    if start is None:
        daemon.exit_status()
        reason = gpu_refusal(daemon.text(), example_text)
        if reason is not None:
            print(f"SKIP: {reason}")
            sys.exit(77)
        check(False, f"the daemon did not start on {EXAMPLE}: exit {daemon.p.returncode}")
        return
    backend, n, matrices = re.search(r"backend (\S+) .* n=(\d+), matrices=(\d+)", start).groups()
    n, matrices = int(n), int(matrices)
    want_backend = re.search(r'backend\s*=\s*"(\w+)"', example_text)
    if want_backend and want_backend.group(1) != "auto":
        check(backend == want_backend.group(1), f"backend {backend}, the example sets {want_backend.group(1)}")
    workers = re.search(r"workers\s*=\s*(\d+)", example_text)
    devices = re.search(r"gpu_devices\s*=\s*\[([^\]]*)\]", example_text)
    count = len(devices.group(1).split(",")) if devices else int(workers.group(1)) if workers else 1
    if count > 1:
        line = daemon.wait_for(r"pipeline: (\d+) solver workers")
        check(line is not None and f"{count} solver workers" in line, f"want {count} solver workers: {line!r}")

    rng = np.random.default_rng(30)
    frames = count + 1
    sent = {}
    for seq in range(frames):
        x = rng.standard_normal((matrices, n, n)) + 1j * rng.standard_normal((matrices, n, n))
        sent[seq] = (x + x.conj().transpose(0, 2, 1)) / 2
    ctx, push, pull = ipc_clients(tag)
    # All at once: the receive queue (frame.queue_depth, 4 by default) holds
    # them, so that each worker has a frame and the reorder window works.
    for seq in range(frames):
        push.send_multipart(ec.encode_covariance(seq, 0, sent[seq], crc=True))
    seqs = []
    for _ in range(frames):
        if not check(pull.poll(300_000), f"eigenspace {len(seqs)} of {frames} did not come within 300 s"):
            break
        seqs.append(check_frame(pull.recv_multipart(), sent, n))
    check(seqs == list(range(frames)), f"published seqs {seqs}, want 0..{frames - 1} in order")
    ctx.destroy(linger=0)
    status = daemon.stop()
    check(status == 0, f"exit status {status} after SIGTERM")
    m = re.search(r"accounting: in=(\d+) out=(\d+) \(late \d+\) dropped=(\d+) .* in_flight=(\d+) rejected=(\d+)",
                  daemon.text())
    check(m is not None and m.groups() == (str(frames), str(frames), "0", "0", "0"),
          f"accounting {m.group(0) if m else None}, want in=out={frames}, nothing dropped, in flight or rejected")
    print(f"{NAME}: backend {backend}, {count} worker(s), {frames} frames of {matrices} x {n}x{n} checked",
          file=sys.stderr)


def settings_of(text):
    """The example's text without its comments (#, // and /* */): enough to read its backend,
    workers and gpu_devices (a string holding // would be cut too)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(#|//).*", "", text)


def main():
    with open(EXAMPLE) as f:
        example_text = f.read()
    tag = f"example{os.getpid()}"
    cfg = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"{tag}.cfg")
    with open(cfg, "w") as f:
        f.write(example_text + plumbing(tag))
    daemon = Daemon([DAEMON, "-c", cfg])
    try:
        body(daemon, tag, settings_of(example_text))
    finally:
        daemon.kill()
        os.unlink(cfg)
    finish(NAME, daemon)


if __name__ == "__main__":
    main()
