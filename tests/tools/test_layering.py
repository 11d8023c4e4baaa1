#!/usr/bin/env python3
"""The include graph's layering (STYLE.md habit 6), read from the sources.

Usage: test_layering.py SOURCE_DIR

Every quoted include of a C/C++/CUDA source under the layered folders must
name a header of its own folder or of a folder below it:

    eig/, cuda/           the solver (eig/ first; cuda/ implements its API)
    pipeline/protocol/    wire codec, CURVE, log           (over eig/)
    pipeline/recording/   recordings                       (over protocol/)
    pipeline/form/        forming                          (over protocol/, eig/)
    pipeline/metrics/     metrics, HTTP, dashboard         (over protocol/)
    config/               the settings                     (over form/, protocol/, eig/)
    pipeline/             the engine                       (over everything above)

Headers are looked up by name in the folders (the build's include
directories are these folders), so an include of a header that lives in a
higher folder fails with the file and the include named. A header that is
not in any layered folder (a system or third-party one in quotes) fails too.

Inside the engine, struct pipeline is seen only by the files that run the
pipeline (pipeline*.c): engine.h, which defines it, may be included by
nothing else; the stages (stage*.c) see the engine through stage.h and
stage_receive.h, and no header but engine.h may define struct pipeline.
"""
import os
import re
import sys

ORDER = ["eig", "cuda", "pipeline/protocol", "pipeline/recording", "pipeline/form", "pipeline/metrics",
         "config", "pipeline"]
# What each folder may include besides itself: the folders below it.
ALLOWED = {
    "eig": set(),
    "cuda": {"eig"},
    "pipeline/protocol": {"eig"},
    "pipeline/recording": {"pipeline/protocol", "eig"},
    "pipeline/form": {"pipeline/protocol", "eig"},
    "pipeline/metrics": {"pipeline/protocol", "eig"},
    "config": {"pipeline/form", "pipeline/protocol", "eig"},
    "pipeline": {"config", "pipeline/metrics", "pipeline/form", "pipeline/recording", "pipeline/protocol",
                 "cuda", "eig"},
}
SOURCE = re.compile(r"\.(c|h|cu|cuh|cpp)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_files(root, folder):
    path = os.path.join(root, folder)
    return {f for f in os.listdir(path) if os.path.isfile(os.path.join(path, f))}


def sources(root):
    """(folder, name, text) of every source file of the layered folders."""
    for folder in ORDER:
        for name in sorted(folder_files(root, folder)):
            if SOURCE.search(name):
                yield folder, name, open(os.path.join(root, folder, name), encoding="utf-8", errors="replace").read()


def engine_seen_by_runners_only(root):
    """engine.h included only by pipeline/pipeline*.c; struct pipeline defined only there."""
    failures = 0
    runners = 0
    for folder, name, text in sources(root):
        runner = folder == "pipeline" and name.startswith("pipeline") and name.endswith(".c")
        if "engine.h" in [os.path.basename(i) for i in INCLUDE.findall(text)]:
            runners += 1
            if not runner:
                print(f"FAIL {folder}/{name}: includes engine.h (struct pipeline); a stage uses stage.h")
                failures += 1
        if re.search(r"^struct pipeline\s*\{", text, re.M) and name != "engine.h":
            print(f"FAIL {folder}/{name}: defines struct pipeline outside engine.h")
            failures += 1
    if runners == 0:
        print("FAIL no file includes engine.h: is the engine still in pipeline/?")
        failures += 1
    return failures


def main():
    root = sys.argv[1]
    owner = {}
    for folder in ORDER:
        for name in folder_files(root, folder):
            owner.setdefault(name, folder)
    failures = 0
    checked = 0
    for folder, name, text in sources(root):
        for inc in INCLUDE.findall(text):
            checked += 1
            base = os.path.basename(inc)
            if base in folder_files(root, folder):
                continue
            home = owner.get(base)
            if home is None:
                print(f"FAIL {folder}/{name}: includes \"{inc}\", which no layered folder holds")
                failures += 1
            elif home not in ALLOWED[folder]:
                print(f"FAIL {folder}/{name}: includes \"{inc}\" from {home}/, which is not below {folder}/")
                failures += 1
    failures += engine_seen_by_runners_only(root)
    if checked < 100:
        print(f"FAIL only {checked} includes read: is {root} the source tree?")
        failures += 1
    print(f"layering: {checked} includes checked, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
