#!/usr/bin/python3
"""realtime.* settings (label integration).

  test_service_realtime.py PATH_TO_EIGSTREAM [CASE]     CASE: main (default) | refused | fifo

main runs 1, 2 and 4; refused runs 3 and fifo runs 5, each its own ctest,
because each may be impossible on a given machine: then it prints why and
exits 77, which ctest reports as skipped (never as passed).

The oracle is the kernel: /proc/PID/task/TID/comm names each thread
(eigs-receive, -form, -solve, -publish), its status gives
Cpus_allowed_list, its stat the scheduling policy and rt priority.

1. Affinity: each thread on the CPUs its setting lists; ZeroMQ's
   background threads (ZMQbg/IO/K, ZMQbg/Reaper) on realtime.cpu_affinity_io's
   and, with a CPU that is not there, free with a warning naming it.
2. A CPU that is not there (1000): on_failure warn runs without it, with a
   warning naming realtime.cpu_affinity_solve and the cause; error exits 1
   with that message.
3. Refusals made certain: the daemon runs with RLIMIT_RTPRIO = 0 and
   RLIMIT_MEMLOCK = 0 and, when the test runs as root, without CAP_SYS_NICE
   and CAP_IPC_LOCK (setpriv drops them from the bounding set). Then
   realtime.priority and realtime.mlockall warn (the threads stay
   SCHED_OTHER) or, with on_failure error, stop the start; each message
   names the setting and the cause.
   Several solver workers (solver.workers = 3): every worker's form and
   solve thread (eigs-form, eigs-form-1, eigs-form-2, likewise solve) on
   the form and solve lists, the deal thread (eigs-deal) on the
   form list.
4. realtime.gpu_numa with a host backend: not applicable, warned or an error.
5. Where this machine permits SCHED_FIFO (probed with os.sched_setscheduler
   in a child first), the threads run SCHED_FIFO at the priority; else
   skipped (77).
With EIGSTREAM_TEST_BACKEND=cuda (label gpu) only realtime.gpu_numa on the
cuda path runs: the threads on the CPUs sysfs lists for the GPU's node, or
the "not applicable" warning when the GPU reports no node (-1); exit 77
without a usable GPU.
"""
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from service_util import Daemon, check, finish

DAEMON = sys.argv[1]
NAMES = ("eigs-receive", "eigs-form", "eigs-solve", "eigs-publish")
SETTINGS = ("receive", "form", "solve", "publish")
# Three solver workers: the setting whose CPU list each thread must have.
WORKER_THREADS = {"eigs-receive": "receive", "eigs-publish": "publish", "eigs-deal": "form",
                  "eigs-form": "form", "eigs-form-1": "form", "eigs-form-2": "form",
                  "eigs-solve": "solve", "eigs-solve-1": "solve", "eigs-solve-2": "solve"}


BACKEND = os.environ.get("EIGSTREAM_TEST_BACKEND", "lapack")


def config(tag, realtime, solver=""):
    rows = "".join(f" {k} = {v};" for k, v in realtime.items())
    return f'''
input = {{ endpoint = "ipc:///tmp/eigstream-{tag}-in"; }};
output = {{ endpoint = "ipc:///tmp/eigstream-{tag}-out"; pattern = "push"; }};
solver = {{ n = 8; matrices = 2; backend = "{BACKEND}"; cpu_threads = 1;{solver} }};
metrics = {{ endpoint = ""; http = ""; }};
realtime = {{{rows} }};
'''


def unprivileged(memlock=0):
    """Command prefix and preexec_fn that make SCHED_FIFO refused, and mlockall
    refused by the kernel (memlock 0) or held to a finite RLIMIT_MEMLOCK."""
    def limits():
        resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (memlock, memlock))
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", "--inh-caps=-all", "--bounding-set=-sys_nice,-ipc_lock", "--"]
    return prefix, limits


def threads(pid, names=NAMES):
    """{name: (tid, Cpus_allowed_list, policy, rt_priority)} of the named threads."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            if name not in names:
                continue
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                cpus = re.search(r"^Cpus_allowed_list:\s*(\S+)", f.read(), re.M).group(1)
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # stat fields 40 and 41 (rt_priority, policy); fields[0] is field 3.
            out[name] = (tid, cpus, int(fields[38]), int(fields[37]))
        except (FileNotFoundError, ProcessLookupError):
            continue
    return out


class RealtimeDaemon(Daemon):
    """The daemon with a realtime group; unpriv: the refusals made certain."""

    def __init__(self, tmp, name, realtime, unpriv=False, solver="", names=NAMES, memlock=0):
        self.cfg = os.path.join(tmp, name + ".cfg")
        self.names = names
        with open(self.cfg, "w") as f:
            f.write(config(f"rt{os.getpid()}{name}", realtime, solver))
        prefix, preexec = unprivileged(memlock) if unpriv else ([], None)
        super().__init__(prefix + [DAEMON, "-c", self.cfg], preexec_fn=preexec)

    def running_threads(self, timeout=60):
        """The named threads once they all exist, or None if the daemon ended."""
        end = time.time() + timeout
        while time.time() < end and self.p.poll() is None:
            t = threads(self.p.pid, self.names)
            if len(t) == len(self.names):
                return t
            time.sleep(0.02)
        return None


def cpu_list(cpus):
    """Kernel-style list of a set of CPU numbers ("0-1,3")."""
    cpus, parts, i = sorted(cpus), [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(parts)


def test_affinity(tmp):
    allowed = sorted(os.sched_getaffinity(0))
    first, last = allowed[0], allowed[-1]
    want = {"receive": str(first), "form": str(last), "solve": str(first), "publish": f"{first}" if first == last
            else f"{first},{last}"}
    d = RealtimeDaemon(tmp, "affinity", {f"cpu_affinity_{k}": f'"{v}"' for k, v in want.items()})
    t = d.running_threads()
    if check(t is not None, f"affinity: threads never appeared: {d.text()[-1500:]}"):
        for k, name in zip(SETTINGS, NAMES):
            expect = cpu_list(int(c) for c in want[k].split(","))
            check(t[name][1] == expect, f"{name}: Cpus_allowed_list {t[name][1]}, want {expect}")
    check(d.stop() == 0, "affinity: exit status after SIGTERM")


def test_workers_affinity(tmp):
    allowed = sorted(os.sched_getaffinity(0))
    first, last = allowed[0], allowed[-1]
    want = {"receive": str(first), "form": str(last), "solve": str(first), "publish": str(last)}
    d = RealtimeDaemon(tmp, "workers", {f"cpu_affinity_{k}": f'"{v}"' for k, v in want.items()},
                       solver=" workers = 3;", names=tuple(WORKER_THREADS))
    t = d.running_threads()
    if check(t is not None, f"workers: threads never appeared: {d.text()[-1500:]}"):
        for name, setting in WORKER_THREADS.items():
            check(t[name][1] == want[setting], f"workers: {name}: Cpus_allowed_list {t[name][1]}, "
                  f"want {want[setting]} (realtime.cpu_affinity_{setting})")
    check(d.stop() == 0, "workers: exit status after SIGTERM")


# ZeroMQ's background threads (libzmq's names): input.io_threads + 1 = 2 I/O
# threads at the default, and the reaper.
ZMQ_THREADS = ("ZMQbg/IO/0", "ZMQbg/IO/1", "ZMQbg/Reaper")


def test_io_affinity(tmp):
    """realtime.cpu_affinity_io: ZeroMQ's threads on its CPUs, the stages not;
    a CPU that is not there warns, names the setting, and leaves them free."""
    allowed = sorted(os.sched_getaffinity(0))
    process, last = cpu_list(allowed), str(allowed[-1])
    d = RealtimeDaemon(tmp, "io", {"cpu_affinity_io": f'"{last}"'}, names=NAMES + ZMQ_THREADS)
    t = d.running_threads()
    if check(t is not None, f"io affinity: threads never appeared: {d.text()[-1500:]}"):
        for name in ZMQ_THREADS:
            check(t[name][1] == last, f"io affinity: {name}: Cpus_allowed_list {t[name][1]}, want {last}")
        for name in NAMES:
            check(t[name][1] == process, f"io affinity: {name} on {t[name][1]}, want {process} (not pinned)")
    check(d.stop() == 0, "io affinity: exit status after SIGTERM")
    d = RealtimeDaemon(tmp, "io_warn", {"cpu_affinity_io": '"1000"'}, names=NAMES + ZMQ_THREADS)
    t = d.running_threads()
    if check(t is not None, f"io affinity, absent CPU: did not run: {d.text()[-1500:]}"):
        for name in ZMQ_THREADS:
            check(t[name][1] == process, f"io affinity, absent CPU: {name} on {t[name][1]}")
    d.stop()
    message = ("realtime.cpu_affinity_io: ZeroMQ's background threads on CPUs \"1000\": Invalid argument "
               f"(this process may use CPUs {process}); running without it (realtime.on_failure = warn)")
    check(message in d.text(), f"io affinity, absent CPU: message: {d.text()[-1500:]!r}")


def test_absent_cpu(tmp):
    process = cpu_list(os.sched_getaffinity(0))
    message = ('realtime.cpu_affinity_solve: the solve thread on CPUs "1000": Invalid argument '
               f"(this process may use CPUs {process})")
    d = RealtimeDaemon(tmp, "cpu_warn", {"cpu_affinity_solve": '"1000"'})
    t = d.running_threads()
    if check(t is not None, f"absent CPU, warn: did not run: {d.text()[-1500:]}"):
        check(t["eigs-solve"][1] == process, f"absent CPU, warn: solve thread on {t['eigs-solve'][1]}")
    d.stop()
    check(message + "; running without it (realtime.on_failure = warn)" in d.text(),
          f"absent CPU, warn: message: {d.text()[-1500:]!r}")
    d = RealtimeDaemon(tmp, "cpu_error", {"cpu_affinity_solve": '"1000"', "on_failure": '"error"'})
    check(d.exit_status() == 1, "absent CPU, error: exit status")
    check(message + " (realtime.on_failure = error)" in d.text(), f"absent CPU, error: {d.text()[-1500:]!r}")


def test_refused(tmp):
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        print("SKIP: refusals: root without setpriv cannot drop CAP_SYS_NICE/CAP_IPC_LOCK")
        sys.exit(77)
    prio = ("realtime.priority: SCHED_FIFO priority 10: Operation not permitted (needs CAP_SYS_NICE or "
            "RLIMIT_RTPRIO >= 10, now 0;")
    lock = "realtime.mlockall: mlockall: Operation not permitted (needs CAP_IPC_LOCK, or RLIMIT_MEMLOCK"
    d = RealtimeDaemon(tmp, "refused_warn", {"priority": 10, "mlockall": "true"}, unpriv=True)
    t = d.running_threads()
    if check(t is not None, f"refused, warn: did not run: {d.text()[-1500:]}"):
        for name in NAMES:
            check(t[name][2] == 0, f"refused, warn: {name} policy {t[name][2]}, want SCHED_OTHER (0)")
    d.stop()
    check(prio in d.text() and lock in d.text() and d.text().count("running without it") == 2,
          f"refused, warn: messages: {d.text()[-2000:]!r}")
    for setting, rows, message in (("priority", {"priority": 10}, prio), ("mlockall", {"mlockall": "true"}, lock)):
        d = RealtimeDaemon(tmp, f"refused_error_{setting}", dict(rows, on_failure='"error"'), unpriv=True)
        check(d.exit_status() == 1, f"refused {setting}, error: exit status {d.p.returncode}")
        check(message in d.text() and "(realtime.on_failure = error)" in d.text(),
              f"refused {setting}, error: {d.text()[-1500:]!r}")
    # A finite RLIMIT_MEMLOCK that the pages locked at the start fit under (2 GiB):
    # mlockall succeeds, and is undone and refused, since with MCL_FUTURE a later
    # allocation past the limit would fail. Not under ASan, whose shadow memory
    # no finite limit holds (CI's sanitizer stage sets ASAN_OPTIONS), nor where
    # the hard limit cannot be raised (no CAP_SYS_RESOURCE: 8 MiB holds no daemon).
    finite = 2 << 30
    probe = subprocess.run([sys.executable, "-c", "import resource; resource.setrlimit(resource.RLIMIT_MEMLOCK, "
                            f"({finite}, {finite}))"], capture_output=True)
    if os.environ.get("ASAN_OPTIONS") or probe.returncode != 0:
        print("note: the finite RLIMIT_MEMLOCK case did not run: " +
              ("ASan" if os.environ.get("ASAN_OPTIONS") else "this machine's hard limit cannot be raised to 2 GiB"))
        return
    d = RealtimeDaemon(tmp, "refused_finite", {"mlockall": "true", "on_failure": '"error"'}, unpriv=True,
                       memlock=finite)
    want = (f"realtime.mlockall: RLIMIT_MEMLOCK (ulimit -l) is {finite} bytes and the process lacks "
            "CAP_IPC_LOCK")
    check(d.exit_status() == 1 and want in d.text() and "(realtime.on_failure = error)" in d.text(),
          f"finite RLIMIT_MEMLOCK, error: exit {d.p.returncode}: {d.text()[-1500:]!r}")


def test_gpu_numa(tmp):
    message = "realtime.gpu_numa: not applicable: the lapack backend runs on the host, not on a GPU"
    d = RealtimeDaemon(tmp, "numa_warn", {"gpu_numa": "true"})
    check(d.running_threads() is not None, "gpu_numa, warn: did not run")
    d.stop()
    check(message + "; running without it" in d.text(), f"gpu_numa, warn: {d.text()[-1500:]!r}")
    d = RealtimeDaemon(tmp, "numa_error", {"gpu_numa": "true", "on_failure": '"error"'})
    check(d.exit_status() == 1 and message + " (realtime.on_failure = error)" in d.text(),
          f"gpu_numa, error: {d.text()[-1500:]!r}")


def test_fifo(tmp):
    probe = subprocess.run([sys.executable, "-c",
                            "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))"],
                           capture_output=True)
    if probe.returncode != 0:
        print("SKIP: SCHED_FIFO success: this machine does not permit it (probe: "
              f"{probe.stderr.decode(errors='replace').strip()[-200:]})")
        sys.exit(77)
    d = RealtimeDaemon(tmp, "fifo", {"priority": 10})
    t = d.running_threads()
    if check(t is not None, f"fifo: did not run: {d.text()[-1500:]}"):
        for name in NAMES:
            check(t[name][2:] == (1, 10), f"{name}: policy/priority {t[name][2:]}, want SCHED_FIFO (1) at 10")
    check(d.stop() == 0, "fifo: exit status after SIGTERM")


def test_gpu_numa_cuda(tmp):
    d = RealtimeDaemon(tmp, "numa_cuda", {"gpu_numa": "true"})
    t = d.running_threads()
    d.stop()
    if t is None and "0 usable GPU" in d.text():
        print("SKIP: no usable GPU for the cuda backend")
        sys.exit(77)
    if not check(t is not None, f"gpu_numa on cuda: did not run: {d.text()[-1500:]}"):
        return
    m = re.search(r"GPU on NUMA node (\d+): host buffers there, threads on CPUs (\S+)", d.text())
    if m is None:
        check(re.search(r"realtime\.gpu_numa: not applicable: /sys/bus/pci/devices/\S+/numa_node says -1",
                        d.text()) is not None, f"gpu_numa on cuda: neither a node nor 'says -1': {d.text()[-1500:]}")
        print("gpu_numa: the GPU reports no NUMA node (one-node machine): warned, as it should")
        return
    with open(f"/sys/devices/system/node/node{m.group(1)}/cpulist") as f:
        node_cpus = f.read().strip()
    check(m.group(2) == node_cpus, f"node CPUs {m.group(2)}, sysfs says {node_cpus}")
    # The kernel keeps the part of the set this process's cpuset allows.
    node = set()
    for part in node_cpus.split(","):
        first, _, last = part.partition("-")
        node.update(range(int(first), int(last or first) + 1))
    want = cpu_list(node & os.sched_getaffinity(0))
    for name in NAMES:
        check(t[name][1] == want, f"{name} on CPUs {t[name][1]}, want {want} (the GPU's node {node_cpus})")


def main():
    tmp = tempfile.mkdtemp(prefix="eigstream-realtime-")
    if BACKEND == "cuda":
        test_gpu_numa_cuda(tmp)
        finish("service realtime (cuda)")
        return
    case = sys.argv[2] if len(sys.argv) > 2 else "main"
    if case == "main":
        test_affinity(tmp)
        test_workers_affinity(tmp)
        test_io_affinity(tmp)
        test_absent_cpu(tmp)
        test_gpu_numa(tmp)
    elif case == "refused":
        test_refused(tmp)
    elif case == "fifo":
        test_fifo(tmp)
    else:
        print(f"unknown case {case!r} (main, refused, fifo)", file=sys.stderr)
        sys.exit(2)
    finish(f"service realtime ({case})")


if __name__ == "__main__":
    main()
