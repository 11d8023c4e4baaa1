#!/usr/bin/python3
"""Cross-language test of wire protocol v1: the Python client encodes and the
C codec (pipeline/protocol/protocol.c, through protocol_parts_tool) decodes, and the
other way round. Oracles: the matrices NumPy generated, and closed-form
patterns that protocol_parts_tool writes and this script recomputes.
Fragments (flag FRAGMENT) both ways, byte for byte, with their rejects in
both codecs; and the two lists of reject names, in enum order.

usage: test_cross_language.py PROTOCOL_PARTS_TOOL TOOLS_PYTHON_DIR
Exit 77 (skip) without NumPy.
"""
import os
import struct
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


def check_rejected(tmp, parts, name, decode, what):
    """Both decoders reject parts as name: the C one (exit 2, "reject NAME")
    and the Python one (decode raises ProtocolError NAME); what names the
    case in a failure."""
    lines, _, rc = c_decode(parts, tmp)
    check(rc == 2 and lines == [f"reject {name}"], f"C reject {name} ({what}): got {lines} rc={rc}")
    try:
        decode(parts)
        check(False, f"python accepted {what}")
    except ec.ProtocolError as e:
        check(e.reason == name, f"python reject {name} ({what}): got {e.reason}")


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
        check_rejected(tmp, parts, name, ec.decode_covariance, f"a {name} message")

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


def pattern_covariance(count, n):
    """protocol_parts_tool's closed-form matrices (count, n, n), complex128."""
    want = np.zeros((count, n, n), dtype=np.complex128)
    for b in range(count):
        for i in range(n):
            for j in range(n):
                if i == j:
                    want[b, i, j] = b + i
                elif i > j:
                    want[b, i, j] = complex((b + 1) * 0.5 + i * 0.25 + j * 0.0625, (i - j) * 0.03125 + b * 0.5)
                else:
                    want[b, i, j] = complex((b + 1) * 0.5 + j * 0.25 + i * 0.0625, -((j - i) * 0.03125 + b * 0.5))
    return want


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
                want = pattern_covariance(count, n)
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


def iq_raw(rng, fmt, channels, pulses, gates):
    """A random cube as encode_iq takes it (ci16 covers the whole int16 range)."""
    if fmt == "ci16_le":
        return rng.integers(-32768, 32768, size=(channels, pulses, gates, 2), dtype=np.int16)
    x = rng.standard_normal((channels, pulses, gates)) + 1j * rng.standard_normal((channels, pulses, gates))
    return (x * 1000).astype(np.complex64)


def python_to_c_iq(tmp):
    rng = np.random.default_rng(20261123)
    for fmt in ("ci16_le", "cf32_le"):
        for layout in ("cpg", "pcg", "pgc"):
            for per_slice in (False, True):
                channels, pulses, gates = 3, 4, 5
                raw = iq_raw(rng, fmt, channels, pulses, gates)
                parts = ec.encode_iq(17, 555, raw, layout, scale=0.375, crc=True, per_slice_parts=per_slice)
                case = f"py->C iq {fmt} {layout} per_slice={per_slice}"
                slices = channels if layout == "cpg" else pulses
                check(len(parts) == (1 + slices if per_slice else 2), f"{case}: {len(parts)} parts")
                lines, data, rc = c_decode(parts, tmp)
                check(rc == 0 and lines and lines[0].startswith(
                    f"ok kind=3 seq=17 timestamp=555 channels=3 pulses=4 gates=5 format={fmt} layout={layout} "
                    f"scale=0.375 crc=1"), f"{case}: {lines} rc={rc}")
                h, back = ec.decode_iq(parts)
                want = ec.iq_values(h, raw).reshape(-1)
                got = np.frombuffer(data, dtype=np.complex128)
                check(got.shape == want.shape and np.array_equal(got, want), f"{case}: values differ")
                check(np.array_equal(back, raw) and h["gates"] == 5 and h["scale"] == 0.375, f"{case}: python round trip")


def python_to_c_iq_rejects(tmp):
    rng = np.random.default_rng(5)
    good = ec.encode_iq(1, 2, iq_raw(rng, "cf32_le", 2, 3, 4), "pcg", scale=2.0, crc=True, per_slice_parts=True)

    def corrupt(name, parts):
        check_rejected(tmp, parts, name, ec.decode_iq, f"an iq {name} message")

    h = good[0]
    flipped = bytearray(good[2])
    flipped[3] ^= 0x01
    corrupt("crc_mismatch", [h, good[1], bytes(flipped), good[3]])
    corrupt("bad_field", [h[:32] + b"\x02" + h[33:]] + good[1:])               # complex double is no IQ format
    corrupt("bad_field", [h[:33] + b"\x03" + h[34:]] + good[1:])               # layout 3
    corrupt("bad_field", [h[:56] + struct.pack("<f", -2.0) + h[60:]] + good[1:])  # negative scale
    corrupt("bad_field", [h[:56] + struct.pack("<f", float("nan")) + h[60:]] + good[1:])
    corrupt("bad_field", [h[:61] + b"\x01" + h[62:]] + good[1:])               # reserved tail
    corrupt("size_mismatch", [h[:52] + struct.pack("<I", 0) + h[56:]] + good[1:])  # gates 0
    corrupt("parts", [h, good[1] + good[2], good[3]])
    corrupt("size_mismatch", [h, good[1][:-8], good[2] + good[1][-8:], good[3]])
    corrupt("truncated", [h, good[1], good[2], good[3][:-8]])
    corrupt("oversized", [h, good[1], good[2], good[3] + bytes(8)])
    nan = bytearray(good[2])
    nan[4:8] = struct.pack("<f", float("inf"))
    body = [good[1], bytes(nan), good[3]]
    corrupt("nonfinite", [ec.encode_header(ec.KIND_IQ, 1, 2, 2, 3, 1, 1, 0, 0, 192, 0, 4, 2.0)] + body)
    # A covariance decoder refuses an IQ frame by kind, before any field.
    try:
        ec.decode_covariance(good)
        check(False, "decode_covariance accepted an IQ frame")
    except ec.ProtocolError as e:
        check(e.reason == "bad_kind", f"covariance decoder on IQ: {e.reason}")


def c_to_python_iq(tmp):
    path = os.path.join(tmp, "iq.parts")
    for fmt, code in (("cf32_le", 1), ("ci16_le", 3)):
        for layout, lcode in (("cpg", 0), ("pcg", 1), ("pgc", 2)):
            for per_slice in (0, 1):
                channels, pulses, gates = 4, 3, 6
                subprocess.run([TOOL, "encode-iq", path, str(channels), str(pulses), str(gates), str(code),
                                str(lcode), str(per_slice), "1", "8"], check=True)
                parts = ec.load_parts(path)
                case = f"C->py iq {fmt} {layout} per_slice={per_slice}"
                h, raw = ec.decode_iq(parts)
                check(h["seq"] == 8 and h["timestamp_ns"] == 8000000011 and h["format"] == fmt and
                      h["layout"] == layout and h["scale"] == 0.25 and h["gates"] == gates, f"{case}: header {h}")
                c, p, g = np.meshgrid(np.arange(channels), np.arange(pulses), np.arange(gates), indexing="ij")
                if fmt == "ci16_le":
                    want = np.stack([(c * 1031 + p * 97 + g * 13) % 65536 - 32768,
                                     (c * 7 + p * 211 + g * 3 + 12345) % 65536 - 32768], axis=-1).astype(np.int16)
                else:
                    want = ((c + 0.5 * p + 0.25 * g) + 1j * (0.125 * g - c)).astype(np.complex64)
                check(raw.dtype == want.dtype and np.array_equal(raw, want), f"{case}: samples")
                # Byte for byte: Python encodes the same cube into the same message.
                again = ec.encode_iq(8, 8000000011, want, layout, scale=0.25, crc=True, per_slice_parts=bool(per_slice))
                check(again == parts, f"{case}: python encoding differs from C's")


def reject_names():
    p = subprocess.run([TOOL, "reject-names"], capture_output=True, text=True)
    check(p.returncode == 0, f"reject-names exit {p.returncode}")
    names = p.stdout.split()
    check(names == list(ec.REJECT_NAMES), f"reject names: C {names} != Python {list(ec.REJECT_NAMES)}")
    check("incomplete" in names and names.index("incomplete") == names.index("nonfinite") + 1,
          f"incomplete follows nonfinite: {names}")


def python_to_c_fragments(tmp):
    rng = np.random.default_rng(20261127)
    for dtype in (np.complex64, np.complex128):
        for storage in ("full", "packed_lower", "packed_upper"):
            for per_matrix in (False, True):
                n, count, fragments = 6, 7, 3
                a = hermitian(rng, count, n, dtype)
                msgs = ec.encode_fragments(42, 987654321, a, fragments, storage, crc=True,
                                           per_matrix_parts=per_matrix, snapshots=64)
                for (first, m), parts in zip(((0, 3), (3, 2), (5, 2)), msgs):
                    case = f"py->C fragment {np.dtype(dtype).name} {storage} per_matrix={per_matrix} first={first}"
                    lines, data, rc = c_decode(parts, tmp)
                    check(rc == 0 and lines and lines[0].startswith(
                          f"ok kind=1 seq=42 timestamp=987654321 n={n} count={count}"), f"{case}: {lines} rc={rc}")
                    check(lines and lines[0].endswith(f"crc=1 snapshots=64 parts={1 + (m if per_matrix else 1)} "
                                                      f"fragment=1 first={first} matrices={m}"), f"{case}: {lines}")
                    got = np.frombuffer(data, dtype=np.complex128)
                    want = a[first:first + m].astype(np.complex128).transpose(0, 2, 1).reshape(-1)
                    check(got.shape == want.shape and np.array_equal(got, want), f"{case}: matrices differ")


def python_to_c_fragment_rejects(tmp):
    rng = np.random.default_rng(8)
    a = hermitian(rng, 4, 3, np.complex128)
    one = 3 * 3 * 16

    def corrupt(name, parts, what, decode=ec.decode_covariance):
        check_rejected(tmp, parts, name, decode, f"a fragment with {what}")

    def header(first, matrices, payload_bytes, flags=ec.FLAG_FRAGMENT, kind=ec.KIND_COVARIANCE, mode=0):
        return ec.encode_header(kind, 1, 2, 3, 4, 2, 0, mode, flags, payload_bytes, 0, 0, first=first,
                                matrices=matrices)

    body = a.transpose(0, 2, 1).astype("<c16").tobytes()
    good = ec.encode_fragment(1, 2, a[1:3], 1, 4, crc=True)
    flipped = bytearray(good[1])
    flipped[9] ^= 0x20
    corrupt("crc_mismatch", [good[0], bytes(flipped)], "a flipped payload bit")
    corrupt("size_mismatch", [header(0, 0, 0), body[:one]], "matrices 0")
    corrupt("size_mismatch", [header(3, 2, 2 * one), body[:2 * one]], "first + matrices > count")
    corrupt("size_mismatch", [header(4, 1, one), body[:one]], "first = count")
    corrupt("size_mismatch", [header(0, 2, 4 * one), body], "the frame's payload_bytes")
    corrupt("parts", [header(0, 2, 2 * one)] + [body[i * one:(i + 1) * one] for i in range(4)], "count parts")
    corrupt("truncated", [header(1, 2, 2 * one), body[:2 * one - 8]], "a short payload")
    corrupt("oversized", [header(1, 2, 2 * one), body[:2 * one + 8]], "a long payload")
    corrupt("bad_field", [header(1, 2, 2 * one, flags=0), body[:2 * one]], "first/matrices without FRAGMENT")
    eig = ec.encode_eigenspace(0, 0, np.zeros((1, 2)), None, [0], "values")
    corrupt("bad_field", [eig[0][:36] + bytes([ec.FLAG_FRAGMENT]) + eig[0][37:]] + eig[1:], "FRAGMENT on eigenspace",
            lambda parts: ec.decode_header(parts[0]))
    iq = ec.encode_iq(0, 0, np.zeros((1, 1, 1, 2), np.int16), crc=False)
    corrupt("bad_field", [iq[0][:36] + bytes([ec.FLAG_FRAGMENT]) + iq[0][37:]] + iq[1:], "FRAGMENT on an IQ cube",
            lambda parts: ec.decode_header(parts[0]))
    nan = a[1:3].copy()
    nan[1, 0, 2] = complex(np.inf, 0)
    corrupt("nonfinite", ec.encode_fragment(1, 2, nan, 1, 4, crc=True), "an infinite element")


def c_to_python_fragments(tmp):
    path = os.path.join(tmp, "frag.parts")
    n, count = 5, 7
    want = pattern_covariance(count, n)
    for element, dtype in ((1, np.complex64), (2, np.complex128)):
        for storage, sname in ((0, "full"), (1, "packed_lower"), (2, "packed_upper")):
            for per_matrix in (0, 1):
                msgs = []
                for first, m in ((0, 3), (3, 1), (4, 3)):
                    subprocess.run([TOOL, "encode-covariance", path, str(n), str(count), str(element), str(storage),
                                    str(per_matrix), "1", "6", str(first), str(m)], check=True)
                    parts = ec.load_parts(path)
                    case = f"C->py fragment element={element} {sname} per_matrix={per_matrix} first={first}"
                    h, a = ec.decode_covariance(parts)
                    check(h["fragment"] and h["first"] == first and h["matrices"] == m and h["count"] == count and
                          h["seq"] == 6 and h["timestamp_ns"] == 6000000007 and h["snapshots"] == 64 and h["crc"],
                          f"{case}: header {h}")
                    check(a.dtype == dtype and np.array_equal(a.astype(np.complex128), want[first:first + m]),
                          f"{case}: matrices")
                    # Byte for byte: Python encodes the same fragment into the same message.
                    again = ec.encode_fragment(6, 6000000007, want[first:first + m].astype(dtype), first, count,
                                               sname, crc=True, per_matrix_parts=bool(per_matrix), snapshots=64)
                    check(again == parts, f"{case}: python encoding differs from C's")
                    msgs.append(parts)
                # The frame the fragments make is C's whole frame: same matrices, and
                # the CRC joined from the fragments' is the whole payload's.
                h, a = ec.decode_fragments(msgs)
                subprocess.run([TOOL, "encode-covariance", path, str(n), str(count), str(element), str(storage),
                                str(per_matrix), "1", "6"], check=True)
                whole = ec.load_parts(path)
                hw = ec.decode_header(whole[0])
                case = f"C->py fragments joined element={element} {sname} per_matrix={per_matrix}"
                check(np.array_equal(a.astype(np.complex128), want), f"{case}: matrices")
                check(h["crc32c"] == hw["crc32c"] and h["payload_bytes"] == hw["payload_bytes"] and
                      h["flags"] == hw["flags"], f"{case}: joined header {h} vs whole {hw}")


with tempfile.TemporaryDirectory() as tmp:
    python_to_c_covariance(tmp)
    python_to_c_rejects(tmp)
    python_to_c_eigenspace(tmp)
    c_to_python(tmp)
    python_to_c_iq(tmp)
    python_to_c_iq_rejects(tmp)
    c_to_python_iq(tmp)
    reject_names()
    python_to_c_fragments(tmp)
    python_to_c_fragment_rejects(tmp)
    c_to_python_fragments(tmp)

report("test_cross_language")
