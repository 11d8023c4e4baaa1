#!/usr/bin/python3
"""The README stays a front door whose Layout table tells the truth.

usage: test_readme_layout.py SOURCE_DIR [MAX_LINES]

Fails when README.md has more than MAX_LINES lines (default 320), when it has
no "## Layout" table, or when a path the table names does not exist in the
checkout. A path is a `code span` in the table that contains a slash, a `*`
or a file extension (`protocol.h`, `stage_receive*.c`, `app/`). It is looked
up from the checkout's root and, failing that, inside the row's own folder
(the first column's path), so the `pipeline/` row may name `pipeline.c`. A
`*` must match at least one file. Program names, settings and other spans
without a slash or an extension are not paths and are not checked.
"""
import glob
import os
import re
import sys

EXTENSION = re.compile(r"\.(c|h|cu|cuh|cc|cpp|py|sh|md|cfg|txt|cmake|json|yml|yaml|in|supp)$")


def layout_rows(lines):
    """The Layout section's table rows, as lists of cells (header and rule dropped)."""
    rows, inside = [], False
    for line in lines:
        if re.match(r"^#{1,6}\s", line):
            inside = re.match(r"^##\s+Layout\s*$", line) is not None
            continue
        if inside and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            rows.append(cells)
    return rows[1:]  # the first row is the header


def names_path(span):
    return "/" in span or "*" in span or EXTENSION.search(span) is not None


def exists(root, path):
    full = os.path.join(root, path)
    if "*" in path:
        return bool(glob.glob(full))
    return os.path.exists(full) and (not path.endswith("/") or os.path.isdir(full))


def main():
    root = sys.argv[1]
    max_lines = int(sys.argv[2]) if len(sys.argv) > 2 else 320
    lines = open(os.path.join(root, "README.md"), encoding="utf-8").read().splitlines()
    failures = []
    if len(lines) > max_lines:
        failures.append(f"README.md has {len(lines)} lines, more than {max_lines}: move detail to docs/")
    rows = layout_rows(lines)
    if not rows:
        failures.append("README.md has no table under '## Layout'")
    checked = 0
    for cells in rows:
        folders = [s for s in re.findall(r"`([^`]+)`", cells[0]) if names_path(s)]
        if not folders:
            failures.append(f"Layout row '{cells[0]}' names no path in its first column")
        for cell in cells:
            for span in re.findall(r"`([^`]+)`", cell):
                if not names_path(span) or " " in span:
                    continue
                checked += 1
                candidates = [span] + [os.path.join(f, span) for f in folders if f.endswith("/")]
                if not any(exists(root, c) for c in candidates):
                    where = " or ".join(candidates)
                    failures.append(f"Layout row {cells[0]} names {span}: no {where} in the checkout")
    for f in failures:
        print("FAIL:", f)
    if failures:
        print(f"test_readme_layout: {len(failures)} failures")
        sys.exit(1)
    print(f"test_readme_layout: README.md {len(lines)} lines (at most {max_lines}), "
          f"{len(rows)} layout rows, {checked} paths exist")


main()
