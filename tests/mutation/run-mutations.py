#!/usr/bin/env python3
"""Mutation check: break a core behaviour in a copy of the tree, build it, run
the tests that guard it; every mutation must be killed (a guard test fails).

  tests/mutation/run-mutations.py                 # all mutations
  tests/mutation/run-mutations.py --list          # names, files, guard tests
  tests/mutation/run-mutations.py --only crc_check,drop_oldest
  tests/mutation/run-mutations.py --rotate 4      # 4 of them, chosen by the day (CI)
  tests/mutation/run-mutations.py --work DIR      # the copy and its build (kept, reused)

How: the tree (git's tracked and untracked-not-ignored files of the source
root) is copied into WORK/src (only changed files are rewritten, so a reused
copy rebuilds incrementally), configured once in WORK/build (Release, CUDA
off, warnings not errors: a mutant may warn), built, and the guard tests run
unmutated first: a guard that fails on the real code proves nothing. Then for
each mutation: its snippet is found in the pristine file (exactly once, else
the script fails loudly: a refactor must not silently disable a mutation),
replaced, the copy rebuilt (incrementally), the guard tests run (ctest -R),
and the file restored. A mutation is killed when ctest fails; it survives when
every guard test passes; a mutant that does not build is an error.

Exit status: 0 when every mutation ran was killed, 1 when one survived or
errored (each named), 2 on a usage or setup error. Python standard library
only. The mutations are of behaviours, not of lines: when the code moves,
update the snippet, never drop the mutation.
"""
import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class Mutation:
    def __init__(self, name, path, snippet, replacement, guards, why):
        self.name, self.path, self.snippet, self.replacement = name, path, snippet, replacement
        self.guards, self.why = guards, why


MUTATIONS = [
    Mutation(
        "crc_check", "pipeline/stage_receive.c",
        "if ((f->header.flags & PROTOCOL_FLAG_CRC) && scan->crc != f->header.crc32c)",
        "if ((f->header.flags & PROTOCOL_FLAG_CRC) && scan->crc != f->header.crc32c && 0)",
        "^pipeline_stream_(copy_team|malformed)$",
        "the daemon's input CRC32C check turned off: a frame whose payload changed is accepted"),
    Mutation(
        "reject_order", "pipeline/protocol/protocol.c",
        """    if (parts != 1 && parts != matrices)
        return PROTOCOL_REJECT_PARTS;
    /* One part per matrix: each must hold exactly one matrix. */
    return check_part_sizes(part_bytes, parts, expected, matrix);""",
        """    protocol_reject sizes = check_part_sizes(part_bytes, parts, expected, matrix);
    if (sizes != PROTOCOL_OK)
        return sizes;
    if (parts != 1 && parts != matrices)
        return PROTOCOL_REJECT_PARTS;
    return PROTOCOL_OK;""",
        "^(pipeline_stream_reject_order|protocol_codec)$",
        "part sizes judged before the part count: a message with the wrong number of parts is counted oversized"),
    Mutation(
        "drop_oldest", "pipeline/stage_receive.c",
        """        if (queue_push_evict_oldest(rx->ctx->to_form, f, &evicted) != QUEUE_OK)
            pipeline_frame_drop(rx->ctx->p, f, METRICS_DROP_OVERFLOW); /* closed: cannot happen while we run */
        else if (evicted != NULL)
            pipeline_frame_drop(rx->ctx->p, evicted, METRICS_DROP_OVERFLOW);""",
        """        (void)evicted;
        if (queue_try_push(rx->ctx->to_form, f) != QUEUE_OK)
            pipeline_frame_drop(rx->ctx->p, f, METRICS_DROP_OVERFLOW); /* mutant: the incoming frame is dropped */""",
        "^pipeline_stream_overflow_drop$",
        "overflow_policy drop_oldest drops the incoming frame instead of evicting the oldest"),
    Mutation(
        "deadline_late", "pipeline/pipeline_frames.c",
        "return now_ns - f->received_ns > (uint64_t)pipeline_live_get(p)->deadline_ms * 1000000u;",
        "return now_ns - f->received_ns > (uint64_t)pipeline_live_get(p)->deadline_ms * 1000000000u;",
        "^pipeline_stream_late_(publish|drop)$",
        "the deadline read as seconds instead of milliseconds: no frame is ever late (neither flagged nor dropped)"),
    Mutation(
        "repair_journal", "pipeline/recording/recording_repair.c",
        """    if (e == RECORDING_OK && layout == RECORDING_LAYOUT_SAMPLES)
        e = repair_journal_samples(&s, journal, journal_bytes, err, err_bytes);""",
        """    if (e == RECORDING_OK && layout == RECORDING_LAYOUT_SAMPLES && 0)
        e = repair_journal_samples(&s, journal, journal_bytes, err, err_bytes);""",
        "^recording_repair_sweep$",
        "--repair ignores the journal's records and heads and walks the data file as frames (layout samples "
        "has no headers there: nothing recovered)"),
    Mutation(
        "merge_gap_naming", "tools/merge/merge_report.c",
        "s->gaps[s->gap_ranges] = (merge_gap){first, last};",
        "s->gaps[s->gap_ranges] = (merge_gap){first + 1, last};",
        "^scaleout_kill$",
        "eigstream-merge names each gap without its first seq"),
    Mutation(
        "dispatch_back_allow", "tools/dispatch/dispatch_main.c",
        '"--curve-secret-key", x->o.back_curve_allow,',
        '"--curve-secret-key", x->o.front_curve_allow,',
        "^scaleout_curve_rogue$",
        "eigstream-dispatch lets the sources' keys, not the daemons', in on its back end"),
    Mutation(
        "dispatch_back_drain", "tools/dispatch/dispatch_main.c",
        "if (connection_watch_drain(x.back_watch,",
        "if (0 && connection_watch_drain(x.back_watch,",
        "^scaleout_faults_drain$",
        "eigstream-dispatch closes at exit without waiting for its daemons to read what it sent"),
    Mutation(
        "dispatch_fronts_attach", "tools/dispatch/dispatch_main.c",
        "if (cli_socket_attach(x->front[k], x->fronts.entry[k], !x->o.front_connect) != 0) {",
        "if (k == 0 && cli_socket_attach(x->front[k], x->fronts.entry[k], !x->o.front_connect) != 0) {",
        "^scaleout_dispatch_fronts$",
        "eigstream-dispatch attaches only its first front socket: the other endpoints' frames never come"),
    Mutation(
        "dispatch_fronts_fragments", "tools/dispatch/dispatch_main.c",
        "if (fragment && x->fronts.count > 1) {",
        "if (0 && fragment && x->fronts.count > 1) {",
        "^scaleout_dispatch_fronts_fragment$",
        "eigstream-dispatch routes fragments over several front sockets, where two frames' could interleave"),
    Mutation(
        "curve_dispatcher_key_rule", "config/config_validate.c",
        "if (dispatch && curve && !dispatcher_key)",
        "if (0 && dispatch && curve && !dispatcher_key)",
        "^scaleout_curve_check_config$|^config_unit$",
        "--check-config passes a CURVE daemon behind a dispatcher without the dispatcher's key"),
    Mutation(
        "mdl_threshold", "pipeline/form/mdl.c",
        "+ 0.5 * (double)k * (2.0 * n - k) * log(snapshots);",
        "+ 0.25 * (double)k * (2.0 * n - k) * log(snapshots);",
        "^(pipeline_units|pipeline_stream_ipc_signal_mdl)$",
        "MDL's penalty halved: more signal dimensions estimated than the criterion gives"),
    Mutation(
        "packed_index", "pipeline/form/form.proto.c",
        "const FORM_COMPLEX *src = a + b * packed + j * (2 * n - j - 1) / 2;",
        "const FORM_COMPLEX *src = a + b * packed + j * (2 * n - j + 1) / 2;",
        "^pipeline_stream_tcp_full$",
        "packed_lower unpacked with a column offset one element off"),
    Mutation(
        "npz_crc", "tools/npy/npz.c",
        "if (crc32_update(0, *bytes, (size_t)m->size) != m->crc) {",
        "if (crc32_update(0, *bytes, (size_t)m->size) != m->crc && 0) {",
        "^tools_solve_errors$",
        "a .npz member's CRC-32 not checked: eigstream-solve solves a damaged archive's matrices"),
    Mutation(
        "matlab_layout", "tools/solve/solve_layout.c",
        "const int numpy[3] = {0, 1, 2}, matlab[3] = {2, 0, 1};",
        "const int numpy[3] = {0, 1, 2}, matlab[3] = {2, 1, 0};",
        "^tools_solve_formats$",
        "MATLAB's A(:, :, b) read transposed: eigstream-solve solves conj(A), whose eigenvectors are A's conjugated"),
]


def log(*args):
    print("run-mutations:", *args, flush=True)


def run(argv, cwd=None, quiet=True, timeout=None):
    """The command's exit status; its output shown only when not quiet or when it failed."""
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if not quiet or r.returncode != 0:
        sys.stdout.write(r.stdout[-6000:])
    return r.returncode


def tree_files():
    """The source tree's files as git sees them (tracked, and untracked that are not ignored)."""
    r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       stdout=subprocess.PIPE, check=True)
    return [p for p in r.stdout.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))]


def sync_copy(dst):
    """Copies the tree into dst, rewriting only the files whose bytes differ
    (so that make sees only real changes); returns the count rewritten."""
    changed = 0
    for rel in tree_files():
        src_path, dst_path = os.path.join(ROOT, rel), os.path.join(dst, rel)
        with open(src_path, "rb") as f:
            data = f.read()
        try:
            with open(dst_path, "rb") as f:
                same = f.read() == data
        except FileNotFoundError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(dst_path), exist_ok=True)
            with open(dst_path, "wb") as f:
                f.write(data)
            shutil.copymode(src_path, dst_path)
            changed += 1
    return changed


def check_snippets(mutations, src):
    """Every snippet exactly once in its file; the problems, else []."""
    problems = []
    for m in mutations:
        path = os.path.join(src, m.path)
        try:
            with open(path) as f:
                count = f.read().count(m.snippet)
        except FileNotFoundError:
            problems.append(f"{m.name}: {m.path} does not exist (moved? update the mutation, do not drop it)")
            continue
        if count != 1:
            problems.append(f"{m.name}: its snippet occurs {count} times in {m.path}, not once "
                            "(the code changed: update the snippet, do not drop the mutation)")
    return problems


def build(build_dir, jobs):
    return run(["cmake", "--build", build_dir, "-j", str(jobs)])


def guards_run(build_dir, regex, jobs, show_failures):
    """Runs the guard tests; the names of those that failed ([] when all
    passed). A failure's output is shown only when show_failures (the
    baseline: there a failure is a problem; under a mutant it is the point)."""
    r = subprocess.run(["ctest", "--test-dir", build_dir, "-R", regex, "-j", str(jobs), "--timeout", "300",
                        "--output-on-failure"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    listed = re.findall(r"^\s*\d+ - (\S+) \(([^)]*)\)$", r.stdout, re.M)
    failed = [name for name, why in listed if why != "Skipped"]
    skipped = [name for name, why in listed if why == "Skipped"]
    ran = re.search(r"tests passed, \d+ tests failed out of (\d+)", r.stdout)
    if ran is None or int(ran.group(1)) == 0:
        return ["(no test matched " + regex + ")"]
    if skipped:  # a skipped guard guards nothing: never a kill, always a problem
        return [f"{name} (skipped: an error)" for name in skipped] + failed
    if r.returncode != 0 and not failed:
        failed = ["(ctest failed)"]
    if failed and show_failures:
        sys.stdout.write(r.stdout[-8000:])
    return failed


def pick(args):
    by_name = {m.name: m for m in MUTATIONS}
    if args.only:
        names = args.only.split(",")
        unknown = [n for n in names if n not in by_name]
        if unknown:
            log(f"unknown mutation(s) {unknown}; --list names them")
            sys.exit(2)
        return [by_name[n] for n in names]
    if args.rotate:
        k = min(args.rotate, len(MUTATIONS))
        start = (datetime.date.today().toordinal() * k) % len(MUTATIONS)
        return [MUTATIONS[(start + i) % len(MUTATIONS)] for i in range(k)]
    return list(MUTATIONS)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--list", action="store_true", help="list the mutations and exit")
    p.add_argument("--only", help="comma-separated mutation names")
    p.add_argument("--rotate", type=int, default=0, help="run this many, a different set each day")
    p.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "eigstream-mutation"),
                   help="the copy and its build directory (reused between runs)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = p.parse_args()
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:18} {m.path:40} guards {m.guards}\n{'':18} {m.why}")
        return 0
    chosen = pick(args)
    src, build_dir = os.path.join(args.work, "src"), os.path.join(args.work, "build")
    os.makedirs(src, exist_ok=True)
    start = time.monotonic()
    log(f"copying the tree into {src}: {sync_copy(src)} file(s) changed")
    problems = check_snippets(MUTATIONS, src)  # all of them, run or not: a stale snippet fails every run
    if problems:
        for line in problems:
            log("ERROR", line)
        return 1
    env_ci = os.environ.pop("CI", None)  # a mutant may warn; -Werror is the normal build's business
    if run(["cmake", "-S", src, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DEIGSTREAM_CUDA=OFF"]) != 0 or \
            build(build_dir, args.jobs) != 0:
        log("ERROR: the unmutated copy does not configure or build")
        return 2
    # One ctest run for every guard: CMake's regular expressions allow few
    # groups, so the names each guard selects (ctest -N) are joined flat.
    names = set()
    for m in chosen:
        listing = subprocess.run(["ctest", "--test-dir", build_dir, "-N", "-R", m.guards], stdout=subprocess.PIPE,
                                 text=True).stdout
        found = re.findall(r"^\s*Test\s+#\d+: (\S+)$", listing, re.M)
        if not found:
            log(f"ERROR: {m.name}: no test matches its guards {m.guards} (renamed? update the mutation)")
            return 1
        names.update(found)
    guards = "^(" + "|".join(sorted(names)) + ")$"
    log(f"baseline: the guard tests on the unmutated copy ({time.monotonic() - start:.0f} s so far)")
    failed = guards_run(build_dir, guards, args.jobs, show_failures=True)
    if failed:
        log(f"ERROR: guard tests fail on the unmutated code: {failed}; fix that first (a failing guard kills "
            "nothing)")
        return 1
    results = []
    for m in chosen:
        path = os.path.join(src, m.path)
        with open(path) as f:
            pristine = f.read()
        t = time.monotonic()
        try:
            with open(path, "w") as f:
                f.write(pristine.replace(m.snippet, m.replacement, 1))
            if build(build_dir, args.jobs) != 0:
                verdict = "ERROR (does not build)"
            else:
                failed = guards_run(build_dir, m.guards, args.jobs, show_failures=False)
                broken = [f for f in failed if f.startswith("(") or "(skipped" in f]
                verdict = (f"ERROR: {', '.join(broken)}" if broken else
                           f"killed by {', '.join(failed)}" if failed else "SURVIVED")
        finally:
            with open(path, "w") as f:
                f.write(pristine)
        results.append((m, verdict))
        log(f"{m.name}: {verdict} (guards {m.guards}, {time.monotonic() - t:.0f} s)")
    build(build_dir, args.jobs)  # leave the copy's build unmutated for the next run
    if env_ci is not None:
        os.environ["CI"] = env_ci
    killed = sum(v.startswith("killed") for _, v in results)
    log(f"{killed} of {len(results)} mutations killed ({time.monotonic() - start:.0f} s)")
    for m, v in results:
        print(f"  {m.name:18} {v}   ({m.why})")
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
