#!/usr/bin/python3
"""Every installed program's --help against the README and docs/.

usage: test_help_readme.py BINDIR README.md [DOCS_DIR]

The documentation is README.md and every docs/*.md (DOCS_DIR, by default the
docs/ folder beside README.md; it must hold at least one page). For each
eigstream* executable in BINDIR (and each mode of eigstream-bench:
`pipeline`, `record`, `--backend cuda` when built with CUDA), the options its --help lists must be documented:
each appears in a section, of any of those files, whose heading names the
program, or on a command line in any of them that runs it (a section ends at
the next heading of its level or above, or at the end of its file).
Conversely, every option on a documented command line that runs a program
must be one its --help lists (the examples only use options that exist; a
line that runs a mode this build lacks is left out). -h/--help are left out
(every program takes them; the docs say so once).
"""
import glob
import os
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
MODES = {"eigstream-bench": [["pipeline"], ["record"], ["--backend", "cuda"]]}
IGNORED = {"-h", "--help"}


def help_options(program, mode):
    """Options named in `program [mode] --help` (which must exit 0): (options,
    None), (None, error), or (None, None) for a mode the build lacks."""
    args = [program] + mode + ["--help"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if r.returncode != 0 and mode and "built without" in r.stderr + r.stdout:
        return None, None
    if r.returncode != 0:
        return None, f"{' '.join(args)} exited {r.returncode}: {r.stderr.strip()[:200]}"
    return set(OPTION.findall(r.stdout + r.stderr)) - IGNORED, None


def token(name):
    return re.compile(r"(?<![\w/.-])" + re.escape(name) + r"(?![\w-])")


def readme_sections(lines, name):
    """Text of every section (## or deeper) whose heading names the program."""
    pattern, text, level = token(name), [], None
    for line in lines:
        m = re.match(r"^(#{2,6})\s", line)
        if m:
            depth = len(m.group(1))
            if level is not None and depth <= level:
                level = None
            if level is None and pattern.search(line):
                level = depth
        if level is not None:
            text.append(line)
    return "\n".join(text)


def command_lines(lines, name):
    """README lines or `code spans` that run the program: the text from the
    program's name (with or without a path) to the end of the span or line."""
    runs = []
    start = re.compile(r"(?:^|[\s`(])(?:[\w./-]*/)?" + re.escape(name) + r"(?![\w-])(.*)")
    for line in lines:
        for span in re.findall(r"`([^`]*)`", line) + ([line] if line.startswith("    ") else []):
            m = start.search(span)
            if m:
                runs.append(m.group(1).split("#")[0])
    return runs


def doc_files(readme, docs):
    """README.md, then docs/*.md in name order: each file's lines."""
    pages = sorted(glob.glob(os.path.join(docs, "*.md")))
    if not pages:
        sys.exit(f"test_help_readme: no *.md in {docs}")
    return [open(f, encoding="utf-8").read().splitlines() for f in [readme] + pages]


def main():
    bindir, readme = sys.argv[1:3]
    docs = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(os.path.abspath(readme)), "docs")
    files = doc_files(readme, docs)
    programs = sorted(p for p in os.listdir(bindir)
                      if re.fullmatch(r"eigstream(-[a-z]+)?", p) and os.access(os.path.join(bindir, p), os.X_OK))
    failures = []
    if "eigstream" not in programs:
        failures.append(f"no eigstream daemon in {bindir}")
    for name in programs:
        program = os.path.join(bindir, name)
        documented = "\n".join(readme_sections(lines, name) for lines in files)
        runs = [run for lines in files for run in command_lines(lines, name)]
        documented += "\n" + "\n".join(runs)
        known = set()
        for mode in [[]] + MODES.get(name, []):
            options, error = help_options(program, mode)
            if error:
                failures.append(error)
            if options is None:
                if not error:  # a mode not built: its command lines are not checked
                    runs = [r for r in runs if " ".join(mode) not in r]
                continue
            known |= options
            where = " ".join([name] + mode)
            for opt in sorted(options):
                if not OPTION.search(documented) or opt not in set(OPTION.findall(documented)):
                    failures.append(f"{where} --help lists {opt}; neither the README nor docs/ documents it")
        used = set()
        for run in runs:
            used |= set(OPTION.findall(run))
        for opt in sorted(used - known - IGNORED):
            failures.append(f"the docs run {name} with {opt}, which its --help does not list")
        print(f"{name}: {len(known)} options checked, {len(runs)} documented command lines")
    for f in failures:
        print("FAIL:", f)
    if failures:
        print(f"test_help_readme: {len(failures)} failures")
        sys.exit(1)
    print("test_help_readme: all passed")


main()
