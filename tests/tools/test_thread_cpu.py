#!/usr/bin/env python3
"""tools/scaleout/thread-cpu.py against the kernel's own accounting of the same processes.

A busy Python loop (1 s of CPU) and a sleeping process (1.5 s) run while thread-cpu.py samples
them; it must exit by itself once both are gone. Its table must name both, and its CPU
seconds for each must agree with what wait4() reports for that child (rusage: an
independent count of the same time): never more than the child used, and for the busy
loop most of it (the sampler misses at most its first and last interval, 0.05 s each).
The sleeping process's share must be near zero. Nothing here depends on how fast the
machine is: the bounds compare two counts of the same CPU time.
"""
import os
import subprocess
import sys
import tempfile

sampler = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "threads.txt")
    # Busy until it has used 1 s of CPU itself (no children: wait4 would count theirs too).
    busy = subprocess.Popen([sys.executable, "-c", "import time\nwhile time.process_time() < 1.0: pass"])
    idle = subprocess.Popen(["sleep", "1.5"])
    watch = subprocess.Popen([sys.executable, sampler, "--out", out, "--interval", "0.05",
                              str(busy.pid), str(idle.pid)])
    used = {}
    for child in (busy, idle):
        _, status, rusage = os.wait4(child.pid, 0)
        assert status == 0, f"child {child.pid} exit status {status}"
        used[child.pid] = rusage.ru_utime + rusage.ru_stime
        child.returncode = 0
    assert watch.wait(timeout=30) == 0, "thread-cpu.py did not exit 0 after its processes ended"
    rows = {}
    for line in open(out):
        process, thread, share, cpu = line.split()
        pid = int(process[process.index("[") + 1:-1])
        rows[pid] = (process, thread, float(share), float(cpu))
    print(open(out).read(), "rusage:", used)
    assert set(rows) == {busy.pid, idle.pid}, f"rows for {sorted(rows)}, want {busy.pid} and {idle.pid}"
    assert rows[busy.pid][0].startswith(os.path.basename(sys.executable) + "[") and rows[idle.pid][0].startswith("sleep["), rows
    tick = 1.0 / os.sysconf("SC_CLK_TCK")
    busy_cpu = rows[busy.pid][3]
    assert busy_cpu <= used[busy.pid] + tick, f"busy loop sampled {busy_cpu} s, used {used[busy.pid]} s"
    assert busy_cpu >= 0.5 * used[busy.pid] - tick, f"busy loop sampled {busy_cpu} s of {used[busy.pid]} s"
    assert rows[busy.pid][2] > 0.0 and rows[busy.pid][2] <= 100.0 * 1.05, rows[busy.pid]
    assert rows[idle.pid][3] <= used[idle.pid] + tick and rows[idle.pid][2] < 5.0, rows[idle.pid]
    # Busiest first.
    lines = open(out).read().split("\n")
    assert lines[0].startswith(rows[busy.pid][0]), lines
print("thread-cpu: the table agrees with rusage")
