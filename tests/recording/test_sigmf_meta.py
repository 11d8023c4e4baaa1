#!/usr/bin/env python3
"""SigMF compliance of the meta files pipeline/recording writes, checked
against the SigMF 1.x core rules independently of the writer, plus the
eigstream namespace as docs/recording.md documents it. Layout samples (what
the writer writes): the data file holds samples only, so a SigMF reader
that reads it whole (sigmf-python's read_samples, GNU Radio's SigMF source)
gets exactly the captures' samples: no capture has core:header_bytes, and
the file's size is the captures' samples (plus a repaired recording's cut
bytes).

Usage: test_sigmf_meta.py FOLDER   (the recordings test_recording leaves)
"""
import json
import os
import re
import sys

DATATYPE = re.compile(r"^(c|r)(f32|f64|i32|i16|u32|u16|i8|u8)(_le|_be)?$")
KEY = re.compile(r"^[A-Za-z0-9_]+:[A-Za-z0-9_]+$")
DATETIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
SAMPLE_BYTES = {"cf64_le": 16, "cf32_le": 8, "rf64_le": 8, "rf32_le": 4, "ci16_le": 4}
INDEX_FIELDS = ("seq", "timestamp_ns", "received_ns", "offset", "bytes", "parts", "crc32c")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_datatype(name, dt):
    m = DATATYPE.match(dt) if isinstance(dt, str) else None
    if check(m is not None, f"{name}: core:datatype {dt!r} breaks the SigMF grammar"):
        eight_bit = m.group(2) in ("i8", "u8")
        check(eight_bit == (m.group(3) is None), f"{name}: core:datatype {dt!r}: endianness iff wider than 8 bits")


def check_keys(name, obj, where, namespaces):
    for key in obj:
        if check(KEY.match(key) is not None, f"{name}: {where} key {key!r} has no namespace prefix"):
            namespaces.add(key.split(":")[0])


def check_core(name, meta):
    for key, kind in (("global", dict), ("captures", list), ("annotations", list)):
        if not check(isinstance(meta.get(key), kind), f"{name}: top-level {key} missing or not {kind.__name__}"):
            return None
    g = meta["global"]
    check_datatype(name, g.get("core:datatype"))
    check(isinstance(g.get("core:version"), str), f"{name}: core:version is not a string")
    used = set()
    check_keys(name, g, "global", used)
    last = -1
    for i, c in enumerate(meta["captures"]):
        check_keys(name, c, f"captures[{i}]", used)
        start = c.get("core:sample_start")
        if check(is_int(start) and start >= 0, f"{name}: captures[{i}] core:sample_start not an integer"):
            check(start >= last, f"{name}: captures[{i}] core:sample_start decreases")
            last = start
        check(DATETIME.match(str(c.get("core:datetime", ""))) is not None, f"{name}: captures[{i}] core:datetime")
    for i, a in enumerate(meta["annotations"]):
        check_keys(name, a, f"annotations[{i}]", used)
        check(is_int(a.get("core:sample_start")), f"{name}: annotations[{i}] core:sample_start not an integer")
    declared = {"core"} | {e.get("name") for e in g.get("core:extensions", []) if isinstance(e, dict)}
    for e in g.get("core:extensions", []):
        check(isinstance(e.get("name"), str) and isinstance(e.get("version"), str)
              and isinstance(e.get("optional"), bool), f"{name}: core:extensions entry {e!r}")
    check(used <= declared, f"{name}: namespaces {sorted(used - declared)} not declared in core:extensions")
    return g


def check_eigstream(name, path, meta, g):
    types = {"eigstream:protocol_version": int, "eigstream:kind": str, "eigstream:n": int,
             "eigstream:count": int, "eigstream:element": str, "eigstream:frames": int,
             "eigstream:truncated_bytes": int, "eigstream:index": list}
    for key, kind in types.items():
        check(isinstance(g.get(key), kind), f"{name}: {key} missing or not {kind.__name__}")
    kind = g.get("eigstream:kind")
    check(kind in ("covariance", "eigenspace", "iq"), f"{name}: eigstream:kind {kind!r}")
    extra = {"covariance": ("eigstream:storage", str), "eigenspace": ("eigstream:mode", str)}.get(kind)
    for key, t in [extra] if extra else [("eigstream:iq_layout", str), ("eigstream:gates", int)]:
        check(isinstance(g.get(key), t), f"{name}: {key} missing")
    if kind == "iq":  # the wire's IQ sample formats are SigMF's datatypes (docs/iq.md)
        check(g.get("core:datatype") == g.get("eigstream:element") in ("ci16_le", "cf32_le"),
              f"{name}: IQ core:datatype {g.get('core:datatype')!r}, eigstream:element {g.get('eigstream:element')!r}")
    index = g.get("eigstream:index", [])
    check(len(index) == g.get("eigstream:frames") == len(meta["captures"]),
          f"{name}: index, frames and captures disagree")
    layout = g.get("eigstream:layout", "frames")
    check(layout == "samples", f"{name}: eigstream:layout {layout!r}: the writer writes layout samples")
    size = os.path.getsize(path[: -len(".sigmf-meta")] + ".sigmf-data")
    end, sample = 0, 0
    dt_bytes = SAMPLE_BYTES.get(g.get("core:datatype"), 1)
    # docs/recording.md: a frame's head, the bytes that are not samples: the
    # 64-byte header, and an eigenspace frame's meta part (32 + 16 count)
    head = 64 + (32 + 16 * g.get("eigstream:count", 0) if kind == "eigenspace" else 0)
    for i, e in enumerate(index):
        if not check(all(is_int(e.get(k)) for k in INDEX_FIELDS), f"{name}: index[{i}] fields not integers"):
            return
        check(e["offset"] >= end, f"{name}: index[{i}] overlaps the previous frame")
        in_data = e["bytes"] - head if layout == "samples" else e["bytes"]
        end = e["offset"] + in_data
        c = meta["captures"][i]
        check(c["core:sample_start"] == sample, f"{name}: captures[{i}] sample_start {c['core:sample_start']}, "
              f"index says {sample}")
        if layout == "samples":
            check("core:header_bytes" not in c, f"{name}: captures[{i}] has core:header_bytes in layout samples")
        else:
            check(c.get("core:header_bytes") == head, f"{name}: captures[{i}] core:header_bytes")
        sample += (e["bytes"] - head) // dt_bytes
    check(end + g.get("eigstream:truncated_bytes", 0) == size,
          f"{name}: data file {size} bytes, index ends at {end} + truncated {g.get('eigstream:truncated_bytes')}")
    if layout == "samples":
        whole = (size - g.get("eigstream:truncated_bytes", 0)) // dt_bytes
        check(whole == sample, f"{name}: the data file read whole is {whole} samples, the captures hold {sample}")


def main():
    folder = sys.argv[1]
    metas = sorted(f for f in os.listdir(folder) if f.endswith(".sigmf-meta"))
    check(len(metas) >= 10, f"only {len(metas)} meta files in {folder}")
    for f in metas:
        path = os.path.join(folder, f)
        with open(path) as fh:
            meta = json.load(fh)
        g = check_core(f, meta)
        if g is not None:
            check_eigstream(f, path, meta, g)
    for line in failures:
        print("FAIL", line, file=sys.stderr)
    print(f"test_sigmf_meta: {len(metas)} meta files, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
