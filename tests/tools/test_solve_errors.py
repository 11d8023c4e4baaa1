#!/usr/bin/python3
"""eigstream-solve's exit status 1: each reason gives a one-line message on
stderr and never a crash. Needs only the standard library (the .npy files are
built by hand here).

usage: test_solve_errors.py SOLVE SCRATCH_DIR
"""
import os
import random
import struct
import subprocess
import sys
import zipfile

SOLVE, SCRATCH = sys.argv[1:3]
failures = []


def path(name):
    return os.path.join(SCRATCH, name)


def npy_bytes(descr, shape, payload_bytes=None, fortran=False, version=1):
    """A .npy file of the given header; payload of zeros, by default exactly
    what the shape needs."""
    sizes = {"<c8": 8, "<c16": 16, "<f8": 8, ">c16": 16, "<i4": 4}
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_text)
    start = 10 if version == 1 else 12
    total = (start + len(header) + 1 + 63) // 64 * 64
    header = header.ljust(total - start - 1) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    if payload_bytes is None:
        payload_bytes = sizes[descr]
        for d in shape:
            payload_bytes *= d
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + b"\0" * payload_bytes


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


def expect(case, want, args, needle=None):
    r = subprocess.run([SOLVE] + args, capture_output=True, text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    if r.returncode != want:
        failures.append(f"{case}: exit {r.returncode}, want {want}; stderr {r.stderr!r}")
    elif want == 1 and (len(lines) != 1 or not lines[0].startswith("eigstream-solve: ")):
        failures.append(f"{case}: want one 'eigstream-solve: ' line on stderr, got {r.stderr!r}")
    elif needle and needle not in r.stderr:
        failures.append(f"{case}: stderr {r.stderr!r} does not mention {needle!r}")


good = write("good.npy", npy_bytes("<c16", (2, 3, 3)))
# The zero matrix is valid input: this proves the files above are well formed.
expect("zero matrices", 0, ["--backend", "lapack", good, path("w.npy"), path("v.npy")])

expect("missing file", 1, [path("absent.npy"), path("w.npy")], "absent.npy")
expect("bad magic", 1, [write("magic.npy", b"PK\x03\x04" + b"\0" * 200), path("w.npy")], "magic")
expect("real dtype", 1, [write("real.npy", npy_bytes("<f8", (3, 3))), path("w.npy")], "not complex")
expect("big-endian dtype", 1, [write("big.npy", npy_bytes(">c16", (3, 3))), path("w.npy")], "big-endian")
expect("integer dtype", 1, [write("int.npy", npy_bytes("<i4", (3, 3))), path("w.npy")],
       "eigstream-solve takes complex <c8 or <c16 only")
expect("non-square", 1, [write("rect.npy", npy_bytes("<c16", (3, 4))), path("w.npy")], "not square")
expect("batch non-square", 1, [write("rect3.npy", npy_bytes("<c8", (2, 3, 4))), path("w.npy")], "not square")
expect("1-d input", 1, [write("vec.npy", npy_bytes("<c16", (9,))), path("w.npy")], "(n, n)")
expect("truncated", 1, [write("trunc.npy", npy_bytes("<c16", (2, 3, 3), 200)), path("w.npy")], "needs 288")
expect("trailing bytes", 1, [write("trail.npy", npy_bytes("<c16", (3, 3), 150)), path("w.npy")], "follow")
expect("unsupported version", 1, [write("v9.npy", b"\x93NUMPY\x09\x00" + b" " * 100), path("w.npy")], "9.0")
expect("unwritable values", 1, ["--backend", "lapack", good, path("no-such-dir/w.npy")], "no-such-dir")
expect("unwritable vectors", 1, ["--backend", "lapack", good, path("w.npy"), path("no-such-dir/v.npy")], "no-such-dir")
expect("bad option", 1, ["--frobnicate", good, path("w.npy")], "--frobnicate")
expect("bad backend", 1, ["--backend", "gpu", good, path("w.npy")], "gpu")
expect("bad threads", 1, ["--threads", "-2", good, path("w.npy")], "-2")
expect("missing value", 1, [good, path("w.npy"), "--threads"], "--threads")
expect("no arguments", 1, [], "IN VALUES")
expect("unknown extension", 1, [good, path("w.txt")], "not a .npy, .npz or .mat")
expect("--var on a .npy", 1, ["--var", "a", good, path("w.npy")], "--var")
expect("bad layout", 1, ["--layout", "fortran", good, path("w.npy")], "fortran")
expect("bad mat version", 1, ["--mat-version", "7", good, path("w.mat")], "7")
expect("one file twice", 1, [good, path("o.npz"), path("o.npz")], "one file")
expect("not a zip", 1, [write("nozip.npz", b"\x93NUMPY" + b" " * 100), path("w.npy")], "not a zip")
expect("too many arguments", 1, [good, "a", "b", "c"], "too many")
expect("help", 0, ["--help"])

def hostile_copies(name, original, garble_within):
    """Garbled (in the first garble_within bytes) and truncated copies of a
    good file: exit 0, 1 or 2, never a signal."""
    rng = random.Random(11)
    for round_ in range(60):
        data = bytearray(original)
        if round_ % 3 == 0:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(rng.randrange(1, 6)):
                data[rng.randrange(garble_within)] = rng.randrange(256)
        r = subprocess.run([SOLVE, "--backend", "lapack", write(name, bytes(data)), path("w.npy")],
                           capture_output=True, timeout=60)
        if r.returncode not in (0, 1, 2):
            failures.append(f"{name} round {round_}: exit {r.returncode}, stderr {r.stderr!r}")


hostile_copies("fuzz.npy", npy_bytes("<c16", (2, 3, 3), version=2), 128)

# .npz: an archive from the standard library's zipfile (an independent
# writer), one with a damaged member, and hostile copies whose garbling also
# reaches the central directory and the headers.
zip_path = path("good.npz")
with zipfile.ZipFile(zip_path, "w") as z:
    z.writestr("a.npy", npy_bytes("<c16", (2, 3, 3), version=1))
zipped = open(zip_path, "rb").read()
expect("npz from zipfile", 0, ["--backend", "lapack", zip_path, path("w.npy")])
crc_damaged = bytearray(zipped)
crc_damaged[zipped.index(b"NUMPY") + 200] ^= 0xFF  # in the matrices: only the CRC tells
expect("npz CRC", 1, [write("crc.npz", bytes(crc_damaged)), path("w.npy")], "CRC")
hostile_copies("fuzz.npz", zipped, len(zipped))

for failure in failures:
    print("FAIL", failure, file=sys.stderr)
if failures:
    sys.exit(1)
print("all passed")
