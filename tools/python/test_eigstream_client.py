#!/usr/bin/python3
"""Self-test of eigstream_client.py (exit 77 = skip without NumPy).

Oracles: the published CRC32C check values and a bit-at-a-time CRC written
here; numpy.linalg.eigh for eigenspace round trips; hand-built headers.
The byte-for-byte agreement with the C codec is tests/protocol/test_cross_language.py.
"""
import os
import struct
import sys

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy missing")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eigstream_client as ec  # noqa: E402
from eigstream_check import check, report  # noqa: E402


def crc_bitwise(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF


def expect_reject(reason, fn, *args):
    try:
        fn(*args)
        check(False, f"accepted, expected {reason}")
    except ec.ProtocolError as e:
        check(e.reason == reason, f"got {e.reason}, expected {reason}")


def test_crc():
    check(ec.crc32c(b"123456789") == 0xE3069283, "check value")
    check(ec.crc32c(bytes(32)) == 0x8A9136AA, "32 zeros")
    check(ec.crc32c(b"") == 0, "empty")
    rng = np.random.default_rng(3)
    small = rng.integers(0, 256, 3000, dtype=np.uint8).tobytes()
    check(ec.crc32c(small) == crc_bitwise(small), "3000 bytes vs bitwise")
    # Sizes that take the NumPy lane-parallel path, with odd tails.
    for size in (65536, 65536 * 3 + 17, 1 << 20 | 12345):
        big = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        ref = ec._crc_raw_bytes(0xFFFFFFFF, big) ^ 0xFFFFFFFF
        check(ec.crc32c(big) == ref, f"numpy path, {size} bytes")
        cut = size // 3
        check(ec.crc32c(big[cut:], ec.crc32c(big[:cut])) == ref, f"chained, {size} bytes")


def test_header():
    h = ec.encode_header(ec.KIND_COVARIANCE, 7, 99, 4, 2, 1, 2, 0, ec.FLAG_CRC, 160, 0xABCD, 64)
    check(len(h) == 64 and h[:6] == ec.COVARIANCE_PREFIX, "prefix")
    check(struct.unpack_from("<Q", h, 40)[0] == 160 and h[33] == 2, "fields at their offsets")
    d = ec.decode_header(h)
    check(d["seq"] == 7 and d["storage"] == "packed_upper" and d["crc"] and d["snapshots"] == 64, f"decode {d}")
    for offset, value, reason in ((0, 0x41, "bad_magic"), (4, 2, "bad_version"), (5, 9, "bad_kind"),
                                  (6, 63, "header_size"), (32, 0, "bad_field"), (33, 3, "bad_field"),
                                  (34, 1, "bad_field"), (35, 1, "bad_field"), (36, 2, "bad_field"),
                                  (37, 1, "bad_field"), (60, 1, "bad_field")):
        bad = bytearray(h)
        bad[offset] = value
        expect_reject(reason, ec.decode_header, bytes(bad))
    expect_reject("header_size", ec.decode_header, h[:63])
    # v1.1's marker: an eigenspace header carries FLAG_SNAPSHOTS (bit 5) exactly
    # when its snapshots field holds K (docs/protocol.md, Versioning).
    e = ec.encode_header(ec.KIND_EIGENSPACE, 7, 99, 4, 2, 2, 0, 1, ec.FLAG_CRC, 0, 0, 256)
    check(e[36] == 0x21 and struct.unpack_from("<I", e, 52)[0] == 256, f"K = 256: flags byte {e[36]:#x}, want 0x21")
    d = ec.decode_header(e)
    check(d["snapshots"] == 256 and d["flags"] == ec.FLAG_CRC | ec.FLAG_SNAPSHOTS, f"K = 256 decoded {d}")
    check(ec.encode_header(ec.KIND_EIGENSPACE, 7, 99, 4, 2, 2, 0, 1, ec.FLAG_CRC | ec.FLAG_SNAPSHOTS)[36] == 1,
          "K unknown: the marker kept")
    unmarked = bytearray(e)
    unmarked[36] = 1
    expect_reject("bad_field", ec.decode_header, bytes(unmarked))
    no_k = bytearray(e)
    no_k[52:56] = bytes(4)
    expect_reject("bad_field", ec.decode_header, bytes(no_k))
    marked_covariance = bytearray(h)
    marked_covariance[36] = 0x21
    expect_reject("bad_field", ec.decode_header, bytes(marked_covariance))


def test_covariance():
    rng = np.random.default_rng(11)
    for dtype in (np.complex64, np.complex128):
        x = rng.standard_normal((3, 5, 5)) + 1j * rng.standard_normal((3, 5, 5))
        a = ((x + x.conj().transpose(0, 2, 1)) / 2).astype(dtype)
        for storage in ("full", "packed_lower", "packed_upper"):
            for per in (False, True):
                parts = ec.encode_covariance(1, 2, a, storage, crc=True, per_matrix_parts=per)
                per_matrix = 25 if storage == "full" else 15
                check(len(parts) == (4 if per else 2), "parts")
                check(sum(len(p) for p in parts[1:]) == 3 * per_matrix * np.dtype(dtype).itemsize, "payload size")
                h, back = ec.decode_covariance(parts)
                check(back.dtype == dtype and np.array_equal(back, a), f"round trip {dtype} {storage} {per}")
    # Packed lower, hand-checked: column 0 rows 0..2, column 1 rows 1..2, column 2 row 2.
    m = np.array([[[1, 0, 0], [2 + 1j, 4, 0], [3 - 1j, 5 + 2j, 6]]], dtype=np.complex128)
    m = np.tril(m[0]) + np.tril(m[0], -1).conj().T
    payload = np.frombuffer(ec.encode_covariance(0, 0, m[None], "packed_lower")[1], dtype=np.complex128)
    check(np.array_equal(payload, [1, 2 + 1j, 3 - 1j, 4, 5 + 2j, 6]), f"packed lower order {payload}")
    payload = np.frombuffer(ec.encode_covariance(0, 0, m[None], "packed_upper")[1], dtype=np.complex128)
    check(np.array_equal(payload, [1, 2 - 1j, 4, 3 + 1j, 5 - 2j, 6]), f"packed upper order {payload}")

    good = ec.encode_covariance(0, 0, m[None].astype(np.complex128), "full")
    flipped = bytearray(good[1])
    flipped[3] ^= 1
    expect_reject("crc_mismatch", ec.decode_covariance, [good[0], bytes(flipped)])
    expect_reject("truncated", ec.decode_covariance, [good[0], good[1][:-1]])
    expect_reject("oversized", ec.decode_covariance, [good[0], good[1] + b"x"])
    expect_reject("oversized", ec.decode_covariance, good, True, 100)
    expect_reject("parts", ec.decode_covariance, good[:1])
    expect_reject("bad_kind", ec.decode_covariance, [ec.EIGENSPACE_PREFIX + good[0][6:34] + b"\x01" + good[0][35:],
                                                      good[1]])
    nan = m[None].copy()
    nan[0, 1, 1] = np.nan
    expect_reject("nonfinite", ec.decode_covariance, ec.encode_covariance(0, 0, nan))


def test_eigenspace():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 6, 6)) + 1j * rng.standard_normal((2, 6, 6))
    a = x @ x.conj().transpose(0, 2, 1)
    w, v = np.linalg.eigh(a)
    for mode, (first, k) in (("full", (0, 6)), ("values", (0, 0)), ("signal", (4, 2)), ("noise", (0, 4))):
        parts = ec.encode_eigenspace(3, 4, w, v, [2, 2], mode, statuses=[0, -1], stage_times=(5, 6, 7, 8),
                                     late=True)
        h, t, res = ec.decode_eigenspace(parts)
        check(h["mode"] == mode and h["late"] and t["published_ns"] == 8, f"{mode} header")
        for b, r in enumerate(res):
            check(r.status == [0, -1][b] and r.signal_dim == 2 and r.first_index == first, f"{mode} meta")
            check(np.array_equal(r.values, w[b]), f"{mode} values")
            if k:
                check(np.array_equal(r.vectors, v[b][:, first:first + k]), f"{mode} vectors")
                # Each vector is an eigenvector of its eigenvalue index.
                res_norm = np.linalg.norm(a[b] @ r.vectors - r.vectors * w[b][first:first + k])
                check(res_norm < 1e-10 * np.linalg.norm(a[b]), f"{mode} residual {res_norm}")
            else:
                check(r.vectors is None, f"{mode} no vectors")
    parts = ec.encode_eigenspace(0, 0, w, v, [2, 2], "signal")
    meta = bytearray(parts[1])
    meta[32 + 12] = 3  # first_index of matrix 0: 3 instead of 4
    expect_reject("bad_field", ec.decode_eigenspace, [parts[0], bytes(meta), parts[2]])
    expect_reject("truncated", ec.decode_eigenspace, [parts[0], parts[1], parts[2][:-8]])
    expect_reject("size_mismatch", ec.decode_eigenspace, [parts[0], parts[1][:-16], parts[2]])
    expect_reject("parts", ec.decode_eigenspace, parts[:2])


def hermitian(rng, count, n, dtype=np.complex128):
    x = rng.standard_normal((count, n, n)) + 1j * rng.standard_normal((count, n, n))
    return ((x + x.conj().transpose(0, 2, 1)) / 2).astype(dtype)


def test_fragments():
    # Splits: consecutive, ceil then floor (docs/protocol.md; eigstream-sim --fragments).
    check(ec.fragment_ranges(10, 4) == [(0, 3), (3, 3), (6, 2), (8, 2)], f"10/4 {ec.fragment_ranges(10, 4)}")
    check(ec.fragment_ranges(5, 5) == [(i, 1) for i in range(5)], "5/5")
    check(ec.fragment_ranges(7, 1) == [(0, 7)], "7/1")
    for bad in (0, 8):
        try:
            ec.fragment_ranges(7, bad)
            check(False, f"fragment_ranges(7, {bad}) accepted")
        except ValueError:
            pass

    # One fragment against a header built here from the spec's table.
    rng = np.random.default_rng(13)
    a = hermitian(rng, 5, 3)
    parts = ec.encode_fragment(9, 77, a[2:4], 2, 5, "full", crc=True, snapshots=32)
    payload = a[2:4].transpose(0, 2, 1).astype("<c16").tobytes()  # column-major, matrices 2 and 3
    want = (b"EIGS" + bytes([1, 1]) + struct.pack("<HQQII", 64, 9, 77, 3, 5) + bytes([2, 0, 0, 0]) +
            struct.pack("<IQIIII", 1 | 4, len(payload), crc_bitwise(payload), 32, 2, 2))
    check(parts == [want, payload], "fragment bytes differ from the spec's layout")
    h = ec.decode_header(parts[0])
    check(h["fragment"] and h["first"] == 2 and h["matrices"] == 2 and h["count"] == 5, f"fragment header {h}")
    whole = ec.decode_header(ec.encode_covariance(0, 0, a)[0])
    check(not whole["fragment"] and whole["first"] == 0 and whole["matrices"] == 5, f"whole header {whole}")
    h, m = ec.decode_covariance(parts)
    check(np.array_equal(m, a[2:4]), "fragment matrices")

    # Round trips through every storage, element and part layout.
    for dtype in (np.complex64, np.complex128):
        b = hermitian(rng, 7, 4, dtype)
        for storage in ("full", "packed_lower", "packed_upper"):
            for per in (False, True):
                msgs = ec.encode_fragments(3, 4, b, 3, storage, crc=True, per_matrix_parts=per, snapshots=8)
                case = f"{np.dtype(dtype).name} {storage} per={per}"
                check([len(x) for x in msgs] == ([4, 3, 3] if per else [2, 2, 2]), f"{case}: parts")
                firsts = [ec.decode_header(x[0])["first"] for x in msgs]
                check(firsts == [0, 3, 5], f"{case}: firsts {firsts}")
                h, back = ec.decode_fragments(msgs)
                check(back.dtype == dtype and np.array_equal(back, b), f"{case}: matrices")
                frame = ec.encode_covariance(3, 4, b, storage, crc=True, snapshots=8)
                check(h["crc32c"] == crc_bitwise(frame[1]) and h["payload_bytes"] == len(frame[1]) and
                      h["flags"] == ec.FLAG_CRC and not h["fragment"] and h["matrices"] == 7, f"{case}: header {h}")

    # The checks of protocol_covariance_check_sizes, in its order.
    def fragment_header(first, matrices, payload_bytes, count=5, flags=ec.FLAG_FRAGMENT):
        return ec.encode_header(ec.KIND_COVARIANCE, 1, 2, 3, count, 2, 0, 0, flags, payload_bytes, 0, 0,
                                first=first, matrices=matrices)
    one = 3 * 3 * 16
    body = a[0:2].transpose(0, 2, 1).astype("<c16").tobytes()
    expect_reject("size_mismatch", ec.decode_covariance, [fragment_header(0, 0, 0), b""])
    expect_reject("size_mismatch", ec.decode_covariance, [fragment_header(4, 2, 2 * one), body])
    expect_reject("size_mismatch", ec.decode_covariance, [fragment_header(5, 1, one), body[:one]])
    expect_reject("size_mismatch", ec.decode_covariance, [fragment_header(0, 2, 5 * one), body])  # the frame's bytes
    expect_reject("parts", ec.decode_covariance, [fragment_header(0, 2, 2 * one)] + [body[:one // 2]] * 4)
    expect_reject("truncated", ec.decode_covariance, [fragment_header(0, 2, 2 * one), body[:-1]])
    h, m = ec.decode_covariance([fragment_header(0, 2, 2 * one), body[:one], body[one:]])
    check(np.array_equal(m, a[0:2]), "two per-matrix parts of a fragment of 2")
    flipped = bytearray(parts[1])
    flipped[5] ^= 0x10
    expect_reject("crc_mismatch", ec.decode_covariance, [parts[0], bytes(flipped)])
    # FRAGMENT is for covariance only; without it bytes 56..63 stay reserved.
    eig = bytearray(ec.encode_eigenspace(0, 0, np.zeros((1, 2)), None, [0], "values")[0])
    eig[36] |= ec.FLAG_FRAGMENT
    expect_reject("bad_field", ec.decode_header, bytes(eig))
    iq = bytearray(ec.encode_iq(0, 0, np.zeros((1, 1, 1, 2), np.int16))[0])
    iq[36] |= ec.FLAG_FRAGMENT
    expect_reject("bad_field", ec.decode_header, bytes(iq))
    expect_reject("bad_field", ec.decode_header, fragment_header(1, 1, one, flags=0))

    # Assembly: a frame is its fragments from matrix 0, in order, to the end.
    msgs = ec.encode_fragments(5, 6, a, 3)
    other = ec.encode_fragments(6, 6, a, 3)
    expect_reject("incomplete", ec.decode_fragments, [msgs[0], msgs[2]])
    expect_reject("incomplete", ec.decode_fragments, [msgs[1], msgs[2]])
    expect_reject("incomplete", ec.decode_fragments, msgs[:2])
    expect_reject("incomplete", ec.decode_fragments, [msgs[0], other[1], msgs[2]])
    expect_reject("incomplete", ec.decode_fragments, [ec.encode_covariance(5, 6, a)])
    expect_reject("incomplete", ec.decode_fragments, [])
    check(ec.REJECT_NAMES.index("incomplete") == 13 and ec.REJECT_NAMES[12] == "nonfinite", "reject order")


test_crc()
test_header()
test_covariance()
test_eigenspace()
test_fragments()
report("test_eigstream_client")
