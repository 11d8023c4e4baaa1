#!/usr/bin/python3
"""Cross-language test of wire protocol v1: the Python client encodes and the
C codec (pipeline/protocol.c, through protocol_parts_tool) decodes, and the
other way round. Oracles: the matrices NumPy generated, and closed-form
patterns that protocol_parts_tool writes and this script recomputes.

usage: test_cross_language.py PROTOCOL_PARTS_TOOL TOOLS_PYTHON_DIR
Exit 77 (skip) without NumPy.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy missing")
    sys.exit(77)

TOOL = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import eigstream_client as ec  # noqa: E402
from eigstream_check import check, report  # noqa: E402


def c_decode(parts, tmp):
    """Runs the C decoder on parts; returns (stdout lines, output bytes, exit code)."""
    src, out = os.path.join(tmp, "in.parts"), os.path.join(tmp, "out.bin")
    if os.path.exists(out):
        os.remove(out)
    ec.save_parts(src, parts)
    p = subprocess.run([TOOL, "decode", src, out], capture_output=True, text=True)
    data = open(out, "rb").read() if os.path.exists(out) else b""
    return p.stdout.splitlines(), data, p.returncode


def hermitian(rng, count, n, dtype):
    x = rng.standard_normal((count, n, n)) + 1j * rng.standard_normal((count, n, n))
    return ((x + np.conj(x.transpose(0, 2, 1))) / 2).astype(dtype)


def python_to_c_covariance(tmp):
    rng = np.random.default_rng(20261121)
    # n = 48 complex128 full = 36 KB per matrix: 3 matrices exceed 64 KB and use the
    # NumPy-parallel CRC path, which the C CRC must agree with.
    for dtype in (np.complex64, np.complex128):
        for storage in ("full", "packed_lower", "packed_upper"):
            for per_matrix in (False, True):
                n, count = (48, 3) if per_matrix else (7, 5)
                a = hermitian(rng, count, n, dtype)
                parts = ec.encode_covariance(42, 123456789, a, storage, crc=True, per_matrix_parts=per_matrix,
                                             snapshots=64)
                case = f"py->C covariance {np.dtype(dtype).name} {storage} per_matrix={per_matrix} n={n}"
                lines, data, rc = c_decode(parts, tmp)
                check(rc == 0 and lines and lines[0].startswith("ok kind=1 seq=42 timestamp=123456789"),
                      f"{case}: {lines} rc={rc}")
                check(f"storage={storage}" in lines[0] and "crc=1" in lines[0] and "snapshots=64" in lines[0],
                      f"{case}: {lines}")
                got = np.frombuffer(data, dtype=np.complex128)
                want = a.astype(np.complex128).transpose(0, 2, 1).reshape(-1)  # column-major
                check(got.shape == want.shape and np.array_equal(got, want), f"{case}: matrices differ")
                # The Python decoder must give back the same matrices.
                h, back = ec.decode_covariance(parts)
                check(np.array_equal(back, a) and h["snapshots"] == 64, f"{case}: python round trip")


def python_to_c_rejects(tmp):
    rng = np.random.default_rng(7)
    a = hermitian(rng, 2, 4, np.complex128)
    good = ec.encode_covariance(1, 2, a, "full", crc=True)

    def corrupt(name, parts):
        lines, _, rc = c_decode(parts, tmp)
        check(rc == 2 and lines == [f"reject {name}"], f"C reject {name}: got {lines} rc={rc}")
        try:
            ec.decode_covariance(parts)
            check(False, f"python accepted a {name} message")
        except ec.ProtocolError as e:
            check(e.reason == name, f"python reject {name}: got {e.reason}")

    flipped = bytearray(good[1])
    flipped[17] ^= 0x04
    corrupt("crc_mismatch", [good[0], bytes(flipped)])
    corrupt("bad_magic", [b"EIGX" + good[0][4:], good[1]])
    corrupt("bad_version", [good[0][:4] + b"\x02" + good[0][5:], good[1]])
    corrupt("bad_kind", [good[0][:5] + b"\x07" + good[0][6:], good[1]])
    corrupt("bad_field", [good[0][:33] + b"\x05" + good[0][34:], good[1]])
    corrupt("header_size", [good[0] + b"\0", good[1]])
    corrupt("truncated", [good[0], good[1][:-16]])
    corrupt("oversized", [good[0], good[1] + b"\0" * 16])
    corrupt("parts", [good[0], good[1][:100], good[1][100:200], good[1][200:]])
    bad = a.copy()
    bad[1, 2, 3] = np.nan
    corrupt("nonfinite", ec.encode_covariance(1, 2, bad, "full", crc=True))


def python_to_c_eigenspace(tmp):
    rng = np.random.default_rng(99)
    n, count = 6, 4
    for dtype in (np.complex64, np.complex128):
        a = hermitian(rng, count, n, np.complex128)
        w, v = np.linalg.eigh(a)
        real = np.float32 if dtype == np.complex64 else np.float64
        w, v = w.astype(real), v.astype(dtype)
        dims = [0, 2, 6, 3]
        for mode in ("full", "values", "signal", "noise"):
            parts = ec.encode_eigenspace(5, 77, w, v, dims, mode, statuses=[0, 3, -1, 0],
                                         stage_times=(10, 20, 30, 40), crc=True, late=True)
            case = f"py->C eigenspace {np.dtype(dtype).name} {mode}"
            lines, data, rc = c_decode(parts, tmp)
            check(rc == 0 and lines[0].startswith(f"ok kind=2 seq=5 timestamp=77 n={n} count={count}"),
                  f"{case}: {lines[:1]} rc={rc}")
            check(f"mode={mode} crc=1 late=1 received=10 solve_start=20 solve_end=30 published=40" in lines[0],
                  f"{case}: {lines[:1]}")
            off = 0
            for b in range(count):
                first, k = {"full": (0, n), "values": (0, 0), "signal": (n - dims[b], dims[b]),
                            "noise": (0, n - dims[b])}[mode]
                check(lines[1 + b] == f"matrix {b} {[0, 3, -1, 0][b]} {dims[b]} {k} {first}",
                      f"{case}: meta line {lines[1 + b]}")
                vals = np.frombuffer(data, np.float64, n, off)
                off += 8 * n
                check(np.array_equal(vals, w[b].astype(np.float64)), f"{case}: values of matrix {b}")
                vecs = np.frombuffer(data, np.complex128, n * k, off).reshape(k, n).T
                off += 16 * n * k
                check(np.array_equal(vecs, v[b][:, first:first + k].astype(np.complex128)),
                      f"{case}: vectors of matrix {b}")
            check(off == len(data), f"{case}: output length")


def c_to_python(tmp):
    path = os.path.join(tmp, "c.parts")
    for element, dtype in ((1, np.complex64), (2, np.complex128)):
        for storage, sname in ((0, "full"), (1, "packed_lower"), (2, "packed_upper")):
            for per_matrix in (0, 1):
                n, count = 9, 4
                subprocess.run([TOOL, "encode-covariance", path, str(n), str(count), str(element), str(storage),
                                str(per_matrix), "1", "3"], check=True)
                parts = ec.load_parts(path)
                case = f"C->py covariance element={element} {sname} per_matrix={per_matrix}"
                check(len(parts) == (1 + count if per_matrix else 2), f"{case}: {len(parts)} parts")
                h, a = ec.decode_covariance(parts)
                check(h["seq"] == 3 and h["timestamp_ns"] == 3000000007 and h["storage"] == sname and h["crc"]
                      and h["snapshots"] == 64, f"{case}: header {h}")
                want = np.zeros((count, n, n), dtype=np.complex128)
                for b in range(count):
                    for i in range(n):
                        for j in range(n):
                            if i == j:
                                want[b, i, j] = b + i
                            elif i > j:
                                want[b, i, j] = complex((b + 1) * 0.5 + i * 0.25 + j * 0.0625,
                                                        (i - j) * 0.03125 + b * 0.5)
                            else:
                                want[b, i, j] = complex((b + 1) * 0.5 + j * 0.25 + i * 0.0625,
                                                        -((j - i) * 0.03125 + b * 0.5))
                check(a.dtype == dtype and np.array_equal(a.astype(np.complex128), want), f"{case}: matrices")
    for element, real in ((1, np.float32), (2, np.float64)):
        for mode, mname in ((1, "full"), (2, "values"), (3, "signal"), (4, "noise")):
            n, count = 5, 8
            subprocess.run([TOOL, "encode-eigenspace", path, str(n), str(count), str(element), str(mode), "1", "4"],
                           check=True)
            case = f"C->py eigenspace element={element} {mname}"
            h, t, results = ec.decode_eigenspace(ec.load_parts(path))
            check(h["mode"] == mname and h["late"] and h["crc"] and h["seq"] == 4 and h["timestamp_ns"] == 40,
                  f"{case}: header {h}")
            check(t == dict(received_ns=41, solve_start_ns=42, solve_end_ns=43, published_ns=44), f"{case}: {t}")
            for b, r in enumerate(results):
                d = b % (n + 1)
                status = b if b % 5 == 3 else (-1 if b % 7 == 6 else 0)
                first, k = {"full": (0, n), "values": (0, 0), "signal": (n - d, d), "noise": (0, n - d)}[mname]
                check((r.status, r.signal_dim, r.first_index) == (status, d, first), f"{case}: meta {b}")
                check(r.values.dtype == real and np.array_equal(r.values, b + 0.5 * np.arange(n)), f"{case}: values")
                if k == 0:
                    check(r.vectors is None, f"{case}: no vectors expected")
                    continue
                i = np.arange(n)[:, None]
                col = np.arange(k)[None, :] + first
                want = (i + 0.5 * col) + 1j * (b * 0.25 - i)
                check(r.vectors.shape == (n, k) and np.array_equal(r.vectors, want), f"{case}: vectors {b}")


with tempfile.TemporaryDirectory() as tmp:
    python_to_c_covariance(tmp)
    python_to_c_rejects(tmp)
    python_to_c_eigenspace(tmp)
    c_to_python(tmp)

report("test_cross_language")
