#!/usr/bin/python3
"""eigstream_client - Python codec and client for eigstream wire protocol v1.

docs/protocol.md is the byte-exact specification; this module, like
pipeline/protocol/protocol.c, implements it with explicit little-endian layouts.
Needs NumPy; the socket helpers and the CLI also need pyzmq.

    parts = encode_covariance(seq, ts_ns, matrices)          # list of bytes
    header, matrices = decode_covariance(parts)              # (count, n, n)
    messages = encode_fragments(seq, ts_ns, matrices, 4)     # a frame as 4 fragments (lists of parts)
    header, matrices = decode_fragments(messages)            # the whole frame again, (count, n, n)
    header, times, results = decode_eigenspace(parts)        # list of MatrixResult
    parts = encode_iq(seq, ts_ns, raw, "cpg", scale)          # raw (C, P, G) complex64 or (C, P, G, 2) int16
    header, raw = decode_iq(parts); x = iq_values(header, raw)  # (C, P, G) complex128 = raw * scale

Every decoding error raises ProtocolError whose .reason is one of the stable
snake_case names of protocol_reject_name() ("bad_magic", "crc_mismatch", ...).

CLI:
    eigstream_client.py send --endpoint tcp://127.0.0.1:5550 --count 180 --n 128 --frames 10
    eigstream_client.py recv --endpoint tcp://127.0.0.1:5551 --frames 10
"""

import argparse
import collections
import struct
import sys
import time

import numpy as np

MAGIC = b"EIGS"
VERSION = 1
HEADER_BYTES = 64
PREFIX_BYTES = 6
STAGE_TIMES_BYTES = 32
MATRIX_META_BYTES = 16

KIND_COVARIANCE = 1
KIND_EIGENSPACE = 2
KIND_IQ = 3
COVARIANCE_PREFIX = MAGIC + bytes([VERSION, KIND_COVARIANCE])
EIGENSPACE_PREFIX = MAGIC + bytes([VERSION, KIND_EIGENSPACE])
IQ_PREFIX = MAGIC + bytes([VERSION, KIND_IQ])

ELEMENT_COMPLEX_FLOAT = 1
ELEMENT_COMPLEX_DOUBLE = 2
ELEMENT_DTYPE = {ELEMENT_COMPLEX_FLOAT: np.dtype("<c8"), ELEMENT_COMPLEX_DOUBLE: np.dtype("<c16")}
REAL_DTYPE = {ELEMENT_COMPLEX_FLOAT: np.dtype("<f4"), ELEMENT_COMPLEX_DOUBLE: np.dtype("<f8")}

# IQ cube (kind 3): sample format (element byte, SigMF names) and layout (storage byte).
IQ_FORMATS = {"cf32_le": 1, "ci16_le": 3}
IQ_FORMAT_NAMES = {v: k for k, v in IQ_FORMATS.items()}
IQ_SAMPLE_BYTES = {1: 8, 3: 4}
IQ_LAYOUTS = {"cpg": 0, "pcg": 1, "pgc": 2}
IQ_LAYOUT_NAMES = {v: k for k, v in IQ_LAYOUTS.items()}
# The axes of the canonical (channel, pulse, gate) array in wire order, slowest first.
IQ_LAYOUT_AXES = {"cpg": (0, 1, 2), "pcg": (1, 0, 2), "pgc": (1, 2, 0)}

STORAGES = {"full": 0, "packed_lower": 1, "packed_upper": 2}
MODES = {"none": 0, "full": 1, "values": 2, "signal": 3, "noise": 4}
STORAGE_NAMES = {v: k for k, v in STORAGES.items()}
MODE_NAMES = {v: k for k, v in MODES.items()}

FLAG_CRC = 1
FLAG_LATE = 2
FLAG_FRAGMENT = 4  # covariance: one fragment of a frame (first @56, matrices @60)
FLAG_LOSSLESS = 8  # covariance, IQ: not to be dropped for overflow (the receiver waits for room)
FLAG_CHECK_FAILED = 16  # eigenspace: the sender's self-check of one of its matrices failed
FLAG_SNAPSHOTS = 32  # eigenspace, v1.1: the snapshots field carries K (set iff it is nonzero)
FLAG_KNOWN = FLAG_CRC | FLAG_LATE | FLAG_FRAGMENT | FLAG_LOSSLESS | FLAG_CHECK_FAILED | FLAG_SNAPSHOTS

# In the order of pipeline/protocol/protocol.h's protocol_reject (the metrics keys).
REJECT_NAMES = ("ok", "parts", "header_size", "bad_magic", "bad_version", "bad_kind", "bad_field",
                "size_mismatch", "config_mismatch", "truncated", "oversized", "crc_mismatch", "nonfinite",
                "incomplete")

# Header: magic, version, kind, header_bytes, seq, timestamp_ns, n, count, element,
# storage, mode, reserved0, flags, payload_bytes, crc32c, snapshots, then 8 bytes:
# reserved, the IQ scale (kind 3) or a covariance fragment's first and matrices.
_HEADER = struct.Struct("<4sBBHQQIIBBBBIQII8s")
_STAGE_TIMES = struct.Struct("<4Q")
_MATRIX_META = np.dtype([("status", "<i4"), ("signal_dim", "<u4"), ("k_sent", "<u4"), ("first_index", "<u4")])
assert _HEADER.size == HEADER_BYTES and _MATRIX_META.itemsize == MATRIX_META_BYTES

MatrixResult = collections.namedtuple("MatrixResult", "status signal_dim values vectors first_index")


class ProtocolError(ValueError):
    """A message that a receiver must reject; .reason is the stable name."""

    def __init__(self, reason, detail=""):
        assert reason in REJECT_NAMES, reason
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


# ---- CRC32C (Castagnoli, reflected 0x82F63B78) ------------------------------------

def _crc_byte_table():
    table = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


_CRC_TABLE = _crc_byte_table()
_CRC_TABLE_NP = np.array(_CRC_TABLE, dtype=np.uint32)


def _crc_raw_bytes(reg, data):
    """Runs the raw (uninverted) CRC register over bytes, one at a time."""
    table = _CRC_TABLE
    for b in data:
        reg = (reg >> 8) ^ table[(reg ^ b) & 0xFF]
    return reg


# The register update is linear over GF(2): feeding z zero bytes is a 32x32 bit
# matrix, kept as the images of the 32 basis bits. This lets NumPy run the CRC
# of many chunks side by side and merge them, since
#   raw(A || B) = zeros(|B|) * raw(A) xor raw(B).

def _mat_apply(mat, v):
    r = 0
    k = 0
    while v:
        if v & 1:
            r ^= mat[k]
        v >>= 1
        k += 1
    return r


def _mat_mul(a, b):
    return [_mat_apply(a, col) for col in b]


_ZERO_BYTE_MAT = [_crc_raw_bytes(1 << k, b"\0") for k in range(32)]


def _zeros_mat(nbytes):
    result = [1 << k for k in range(32)]
    power = _ZERO_BYTE_MAT
    while nbytes:
        if nbytes & 1:
            result = _mat_mul(power, result)
        power = _mat_mul(power, power)
        nbytes >>= 1
    return result


def _mat_apply_np(mat, v):
    """Applies mat to a uint32 array through four 256-entry byte tables."""
    out = np.zeros_like(v)
    for p in range(4):
        table = np.array([_mat_apply(mat, x << (8 * p)) for x in range(256)], dtype=np.uint32)
        out ^= table[(v >> np.uint32(8 * p)) & np.uint32(0xFF)]
    return out


def _crc_raw_numpy(data):
    """Raw CRC register (from 0) of a large buffer, NumPy-parallel over lanes."""
    n = len(data)
    lanes = 1 << 16
    while lanes > 1 and n // lanes < 256:
        lanes >>= 1
    length = n // lanes
    body = np.frombuffer(data, dtype=np.uint8, count=lanes * length).reshape(lanes, length)
    cols = np.ascontiguousarray(body.T)
    reg = np.zeros(lanes, dtype=np.uint32)
    for j in range(length):
        reg = (reg >> np.uint32(8)) ^ _CRC_TABLE_NP[(reg ^ cols[j]) & np.uint32(0xFF)]
    shift = _zeros_mat(length)
    while len(reg) > 1:
        reg = _mat_apply_np(shift, reg[0::2]) ^ reg[1::2]
        shift = _mat_mul(shift, shift)
    return _crc_raw_bytes(int(reg[0]), memoryview(data)[lanes * length:])


def crc32c(data, crc=0):
    """CRC32C of data (bytes-like), continuing from crc: crc32c(b, crc32c(a)) == crc32c(a + b)."""
    data = memoryview(data).cast("B")
    n = len(data)
    if n < (1 << 16):
        reg = _crc_raw_bytes(crc ^ 0xFFFFFFFF, data)
    else:
        reg = _mat_apply(_zeros_mat(n), crc ^ 0xFFFFFFFF) ^ _crc_raw_numpy(data)
    return reg ^ 0xFFFFFFFF


def _parts_crc(parts):
    crc = 0
    for p in parts:
        crc = crc32c(p, crc)
    return crc


# ---- header ------------------------------------------------------------------------

def encode_header(kind, seq, timestamp_ns, n, count, element, storage=0, mode=0, flags=0,
                  payload_bytes=0, crc=0, snapshots=0, scale=0.0, first=0, matrices=0):
    """64 header bytes; snapshots is the gate count G of an IQ cube (kind 3), scale
    its sample scale (bytes 56..59, binary32). A covariance fragment (flags with
    FLAG_FRAGMENT) carries first (@56) and matrices (@60); as in C, a covariance
    header writes them whatever the flags (0, 0: the reserved zeros). The other
    kinds' bytes 56..63 are reserved zero (IQ: 60..63). An eigenspace header's
    FLAG_SNAPSHOTS follows its snapshots field (set iff nonzero), as in C."""
    if kind == KIND_EIGENSPACE:
        flags = flags | FLAG_SNAPSHOTS if snapshots else flags & ~FLAG_SNAPSHOTS
    if kind == KIND_IQ:
        tail = struct.pack("<f", scale) + bytes(4)
    elif kind == KIND_COVARIANCE:
        tail = struct.pack("<II", first, matrices)
    else:
        tail = bytes(8)
    return _HEADER.pack(MAGIC, VERSION, kind, HEADER_BYTES, seq, timestamp_ns, n, count, element,
                        storage, mode, 0, flags, payload_bytes, crc, snapshots, tail)


def _check_iq_fields(element, storage, mode, flags, reserved):
    scale = struct.unpack("<f", reserved[:4])[0]
    if reserved[4:] != bytes(4):
        raise ProtocolError("bad_field", "reserved bytes")
    if (element not in IQ_FORMAT_NAMES or storage not in IQ_LAYOUT_NAMES or mode != 0 or
            flags & (FLAG_LATE | FLAG_FRAGMENT | FLAG_CHECK_FAILED | FLAG_SNAPSHOTS)):
        raise ProtocolError("bad_field", f"format {element} layout {storage} mode {mode} flags {flags}")
    if not (np.isfinite(scale) and scale > 0):
        raise ProtocolError("bad_field", f"scale {scale}")
    return scale


def decode_header(part, expect_kind=0):
    """Decodes and checks a header part like protocol_header_decode_kind(); returns a dict.

    expect_kind 0 takes any known kind; another known kind is bad_kind, checked
    before the kind's fields, as in C. IQ headers carry gates, scale, format and
    layout (names) instead of snapshots, element and storage. Covariance headers
    also carry fragment (FLAG_FRAGMENT), first (the fragment's first matrix, 0
    for a whole frame) and matrices (the matrices this message carries: the
    fragment's, or count for a whole frame); FRAGMENT on another kind, or
    nonzero bytes 56..63 of a covariance header without it, is bad_field."""
    part = bytes(part)
    if len(part) != HEADER_BYTES:
        raise ProtocolError("header_size", f"{len(part)} bytes")
    (magic, version, kind, header_bytes, seq, timestamp_ns, n, count, element, storage, mode,
     reserved0, flags, payload_bytes, crc, snapshots, reserved) = _HEADER.unpack(part)
    if magic != MAGIC:
        raise ProtocolError("bad_magic", repr(magic))
    if version != VERSION:
        raise ProtocolError("bad_version", str(version))
    if kind not in (KIND_COVARIANCE, KIND_EIGENSPACE, KIND_IQ) or (expect_kind and kind != expect_kind):
        raise ProtocolError("bad_kind", str(kind))
    if header_bytes != HEADER_BYTES:
        raise ProtocolError("header_size", f"header_bytes {header_bytes}")
    fragment = kind == KIND_COVARIANCE and bool(flags & FLAG_FRAGMENT)
    if (kind != KIND_IQ and not fragment and reserved != bytes(8)) or reserved0 != 0:
        raise ProtocolError("bad_field", "reserved bytes")
    if flags & ~FLAG_KNOWN:
        raise ProtocolError("bad_field", f"flags {flags:#x}")
    common = dict(version=version, kind=kind, seq=seq, timestamp_ns=timestamp_ns, n=n, count=count,
                  element=element, flags=flags, crc=bool(flags & FLAG_CRC), late=bool(flags & FLAG_LATE),
                  check_failed=bool(flags & FLAG_CHECK_FAILED), payload_bytes=payload_bytes, crc32c=crc)
    if kind == KIND_IQ:
        scale = _check_iq_fields(element, storage, mode, flags, reserved)
        return dict(common, channels=n, pulses=count, gates=snapshots, scale=scale,
                    format=IQ_FORMAT_NAMES[element], layout=IQ_LAYOUT_NAMES[storage])
    if element not in ELEMENT_DTYPE:
        raise ProtocolError("bad_field", f"element {element}")
    if kind == KIND_COVARIANCE:
        if storage not in STORAGE_NAMES or mode != 0 or flags & (FLAG_LATE | FLAG_CHECK_FAILED | FLAG_SNAPSHOTS):
            raise ProtocolError("bad_field", f"storage {storage} mode {mode} flags {flags}")
    elif flags & (FLAG_FRAGMENT | FLAG_LOSSLESS) or storage != 0 or not 1 <= mode <= 4:
        raise ProtocolError("bad_field", f"storage {storage} mode {mode} flags {flags}")
    elif bool(flags & FLAG_SNAPSHOTS) != bool(snapshots):  # v1.1: the marker exactly when K is carried
        raise ProtocolError("bad_field", f"flags {flags} snapshots {snapshots}")
    out = dict(common, storage=STORAGE_NAMES.get(storage), mode=MODE_NAMES.get(mode), snapshots=snapshots)
    if kind == KIND_COVARIANCE:
        first, matrices = struct.unpack("<II", reserved) if fragment else (0, count)
        out.update(fragment=fragment, first=first, matrices=matrices)
    return out


# ---- covariance frames ----------------------------------------------------------------

def _packed_index(n, storage):
    """(rows, cols) of the stored elements of one matrix, in wire order (column-major)."""
    # np.triu_indices lists (a, b), a <= b, sorted by a then b: read as
    # (column j = a, row i = b) that is the lower triangle in column-major order.
    if storage == "packed_lower":
        cols, rows = np.triu_indices(n)
    else:
        cols, rows = np.tril_indices(n)
    return rows, cols


def _element_of(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.complex64:
        return ELEMENT_COMPLEX_FLOAT
    if dtype == np.complex128:
        return ELEMENT_COMPLEX_DOUBLE
    raise ValueError(f"matrices must be complex64 or complex128, not {dtype}")


def _covariance_body(matrices, storage):
    """(element, n, rows): the wire elements of matrices (count, n, n), one row per matrix."""
    matrices = np.asarray(matrices)
    if matrices.ndim != 3 or matrices.shape[1] != matrices.shape[2]:
        raise ValueError("matrices must have shape (count, n, n)")
    element = _element_of(matrices.dtype)
    count, n = matrices.shape[0], matrices.shape[1]
    wire = ELEMENT_DTYPE[element]
    if storage == "full":
        body = np.ascontiguousarray(matrices.transpose(0, 2, 1), dtype=wire).reshape(count, n * n)
    elif storage in ("packed_lower", "packed_upper"):
        rows, cols = _packed_index(n, storage)
        body = np.ascontiguousarray(matrices[:, rows, cols], dtype=wire)
    else:
        raise ValueError(f"unknown storage {storage!r}")
    return element, n, body


def _covariance_message(seq, timestamp_ns, body, element, n, count, storage, crc, per_matrix_parts, snapshots,
                        flags=0, first=0):
    if per_matrix_parts:
        payload = [body[b].tobytes() for b in range(body.shape[0])]
    else:
        payload = [body.tobytes()]
    payload_bytes = sum(len(p) for p in payload)
    flags |= FLAG_CRC if crc else 0
    matrices = body.shape[0] if flags & FLAG_FRAGMENT else 0
    header = encode_header(KIND_COVARIANCE, seq, timestamp_ns, n, count, element, STORAGES[storage], 0,
                           flags, payload_bytes, _parts_crc(payload) if crc else 0, snapshots,
                           first=first, matrices=matrices)
    return [header] + payload


def encode_covariance(seq, timestamp_ns, matrices, storage="full", crc=True, per_matrix_parts=False,
                      snapshots=0):
    """Parts of a covariance frame holding matrices (count, n, n), complex64/128.

    Packed storage sends the named triangle only (the matrices are taken as
    Hermitian). Returns a list of bytes: [header, payload] or [header, m0, m1, ...].
    """
    element, n, body = _covariance_body(matrices, storage)
    return _covariance_message(seq, timestamp_ns, body, element, n, body.shape[0], storage, crc,
                               per_matrix_parts, snapshots)


def fragment_ranges(count, fragments):
    """[(first, matrices)] of a frame of count matrices sent as `fragments`
    fragments, as the C senders split it (protocol_fragment_range): consecutive, sizes as
    equal as can be, the first count % fragments one matrix larger.
    fragments must be 1..count (ValueError otherwise)."""
    if not 1 <= fragments <= count:
        raise ValueError(f"fragments must be 1..{count}, not {fragments}")
    base, extra = divmod(count, fragments)
    ranges, first = [], 0
    for i in range(fragments):
        matrices = base + (1 if i < extra else 0)
        ranges.append((first, matrices))
        first += matrices
    return ranges


def encode_fragment(seq, timestamp_ns, matrices, first, count, storage="full", crc=True, per_matrix_parts=False,
                    snapshots=0):
    """Parts of one fragment (docs/protocol.md, fragmented covariance frames):
    matrices (m, n, n) are matrices first .. first+m-1 of a frame of count
    matrices. payload_bytes and the CRC are the fragment's own; per_matrix_parts
    sends m parts of one matrix each. No range check: a test may craft a bad
    fragment (decode_covariance rejects m = 0 or first + m > count)."""
    element, n, body = _covariance_body(matrices, storage)
    return _covariance_message(seq, timestamp_ns, body, element, n, count, storage, crc, per_matrix_parts,
                               snapshots, FLAG_FRAGMENT, first)


def encode_fragments(seq, timestamp_ns, matrices, fragments, storage="full", crc=True, per_matrix_parts=False,
                     snapshots=0):
    """A covariance frame of matrices (count, n, n) as `fragments` messages
    (fragment_ranges), each a list of parts as encode_fragment returns: send
    them back to back, in order, on one socket."""
    matrices = np.asarray(matrices)
    return [encode_fragment(seq, timestamp_ns, matrices[first:first + m], first, matrices.shape[0], storage, crc,
                            per_matrix_parts, snapshots)
            for first, m in fragment_ranges(matrices.shape[0], fragments)]


def decode_matrix_header(part, kind):
    """decode_header(part, kind) of a covariance or eigenspace frame (a header
    of another kind is bad_kind there); n or count 0 is size_mismatch."""
    h = decode_header(part, kind)
    if h["n"] == 0 or h["count"] == 0:
        raise ProtocolError("size_mismatch", "n or count is 0")
    return h


def decode_covariance(parts, check_crc=True, max_payload_bytes=0):
    """(header dict, matrices (count, n, n)) of a covariance frame; packed storage
    is expanded to full Hermitian matrices. A fragment (header["fragment"]) is
    checked like a frame of its own `matrices` (the header's, >= 1 and ending
    within count, else size_mismatch; its payload_bytes, parts and CRC) and
    gives its (matrices, n, n). Raises ProtocolError."""
    if len(parts) < 2:
        raise ProtocolError("parts", f"{len(parts)} parts")
    h = decode_matrix_header(parts[0], KIND_COVARIANCE)
    n, count, element, storage = h["n"], h["count"], h["element"], h["storage"]
    if h["fragment"] and (h["matrices"] == 0 or h["first"] >= count or h["matrices"] > count - h["first"]):
        raise ProtocolError("size_mismatch", f"fragment of matrices {h['first']} + {h['matrices']} in {count}")
    count = h["matrices"]  # the matrices this message carries
    esize = ELEMENT_DTYPE[element].itemsize
    per = n * n if storage == "full" else n * (n + 1) // 2
    matrix_bytes = per * esize
    if h["payload_bytes"] != matrix_bytes * count:
        raise ProtocolError("size_mismatch", f"payload_bytes {h['payload_bytes']} != {matrix_bytes * count}")
    if max_payload_bytes and h["payload_bytes"] > max_payload_bytes:
        raise ProtocolError("oversized", "over the maximum payload")
    payload = parts[1:]
    if len(payload) not in (1, count):
        raise ProtocolError("parts", f"{len(parts)} parts")
    total = sum(len(p) for p in payload)
    if total < h["payload_bytes"]:
        raise ProtocolError("truncated", f"{total} < {h['payload_bytes']}")
    if total > h["payload_bytes"]:
        raise ProtocolError("oversized", f"{total} > {h['payload_bytes']}")
    if len(payload) > 1 and any(len(p) != matrix_bytes for p in payload):
        raise ProtocolError("size_mismatch", "per-matrix part of the wrong size")
    if check_crc and h["crc"] and _parts_crc(payload) != h["crc32c"]:
        raise ProtocolError("crc_mismatch")
    dtype = ELEMENT_DTYPE[element]
    body = np.frombuffer(b"".join(payload) if len(payload) > 1 else payload[0], dtype=dtype).reshape(count, per)
    if not np.all(np.isfinite(body)):
        raise ProtocolError("nonfinite")
    if storage == "full":
        out = body.reshape(count, n, n).transpose(0, 2, 1).astype(dtype.newbyteorder("="))
    else:
        rows, cols = _packed_index(n, storage)
        out = np.zeros((count, n, n), dtype=dtype.newbyteorder("="))
        out[:, cols, rows] = np.conj(body)
        out[:, rows, cols] = body  # the stored triangle (and diagonal) wins
    return h, out


def decode_fragments(messages, check_crc=True, max_payload_bytes=0):
    """(frame header dict, matrices (count, n, n)) of one frame's fragments, given
    in the order they came (each a list of parts). Each is decoded and checked
    by decode_covariance (its reason raised); then, as docs/protocol.md's
    receiver assembles them, the first must start at matrix 0, each next one
    continue the same frame (seq, timestamp, n, count, element, storage,
    snapshots, CRC flag) at the next matrix, and the last end at count, else
    ProtocolError("incomplete"). The header is the whole frame's: no FRAGMENT
    flag, first 0, matrices = count, payload_bytes summed and crc32c that of the
    whole payload (when flagged CRC)."""
    if not messages:
        raise ProtocolError("incomplete", "no fragments")
    same = ("seq", "timestamp_ns", "n", "count", "element", "storage", "snapshots", "crc")
    frame, blocks, next_first, crc = None, [], 0, 0
    for i, parts in enumerate(messages):
        h, m = decode_covariance(parts, check_crc, max_payload_bytes)
        if not h["fragment"]:
            raise ProtocolError("incomplete", f"message {i} is a whole frame")
        if frame is None:
            frame = h
        if h["first"] != next_first or any(h[k] != frame[k] for k in same):
            raise ProtocolError("incomplete", f"fragment {i} at matrix {h['first']} (seq {h['seq']}) does not "
                                f"continue seq {frame['seq']} at matrix {next_first}")
        for p in parts[1:] if frame["crc"] else ():
            crc = crc32c(p, crc)  # the whole payload's CRC, continued fragment by fragment
        blocks.append(m)
        next_first += h["matrices"]
    if next_first != frame["count"]:
        raise ProtocolError("incomplete", f"fragments end at matrix {next_first} of {frame['count']}")
    header = dict(frame, flags=frame["flags"] & ~FLAG_FRAGMENT, fragment=False, first=0, matrices=frame["count"],
                  payload_bytes=sum(sum(len(p) for p in parts[1:]) for parts in messages),
                  crc32c=crc if frame["crc"] else 0)
    return header, np.concatenate(blocks)


# ---- IQ cube frames --------------------------------------------------------------------

def encode_iq(seq, timestamp_ns, raw, layout="cpg", scale=1.0, crc=True, per_slice_parts=False):
    """Parts of an IQ cube frame (kind 3).

    raw: the samples as sent, indexed (channel, pulse, gate): complex64 (C, P, G)
    for cf32_le, or int16 (C, P, G, 2) holding (re, im) for ci16_le. Each value
    is raw * scale. per_slice_parts sends one part per index of the layout's
    slowest dimension (per channel for cpg, per pulse for pcg and pgc)."""
    raw = np.asarray(raw)
    if raw.dtype == np.int16 and raw.ndim == 4 and raw.shape[3] == 2:
        fmt, wire = "ci16_le", np.dtype("<i2")
    elif raw.dtype == np.complex64 and raw.ndim == 3:
        fmt, wire = "cf32_le", np.dtype("<c8")
    else:
        raise ValueError("raw must be complex64 (C, P, G) or int16 (C, P, G, 2)")
    if layout not in IQ_LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}")
    channels, pulses, gates = raw.shape[:3]
    axes = IQ_LAYOUT_AXES[layout] + ((3,) if fmt == "ci16_le" else ())
    body = np.ascontiguousarray(raw.transpose(axes), dtype=wire)
    payload = [body[i].tobytes() for i in range(body.shape[0])] if per_slice_parts else [body.tobytes()]
    payload_bytes = sum(len(p) for p in payload)
    header = encode_header(KIND_IQ, seq, timestamp_ns, channels, pulses, IQ_FORMATS[fmt], IQ_LAYOUTS[layout], 0,
                           FLAG_CRC if crc else 0, payload_bytes, _parts_crc(payload) if crc else 0, gates,
                           scale)
    return [header] + payload


def decode_iq(parts, check_crc=True, max_payload_bytes=0):
    """(header dict, raw) of an IQ cube frame, checked in the order of
    docs/protocol.md; raw as encode_iq takes it (channel, pulse, gate order).
    Raises ProtocolError."""
    if len(parts) < 1:
        raise ProtocolError("parts", "no header part")
    h = decode_header(parts[0], KIND_IQ)
    channels, pulses, gates = h["channels"], h["pulses"], h["gates"]
    if channels == 0 or pulses == 0 or gates == 0:
        raise ProtocolError("size_mismatch", "channels, pulses or gates is 0")
    cube = channels * pulses * gates * IQ_SAMPLE_BYTES[h["element"]]
    if h["payload_bytes"] != cube:
        raise ProtocolError("size_mismatch", f"payload_bytes {h['payload_bytes']} != {cube}")
    if max_payload_bytes and cube > max_payload_bytes:
        raise ProtocolError("oversized", "over the maximum payload")
    payload = parts[1:]
    slices = channels if h["layout"] == "cpg" else pulses
    if len(payload) not in (1, slices):
        raise ProtocolError("parts", f"{len(parts)} parts")
    total = sum(len(p) for p in payload)
    if total < cube:
        raise ProtocolError("truncated", f"{total} < {cube}")
    if total > cube:
        raise ProtocolError("oversized", f"{total} > {cube}")
    if len(payload) > 1 and any(len(p) != cube // slices for p in payload):
        raise ProtocolError("size_mismatch", "slice part of the wrong size")
    if check_crc and h["crc"] and _parts_crc(payload) != h["crc32c"]:
        raise ProtocolError("crc_mismatch")
    data = b"".join(bytes(p) for p in payload)
    shape = tuple((channels, pulses, gates)[a] for a in IQ_LAYOUT_AXES[h["layout"]])
    inverse = tuple(np.argsort(IQ_LAYOUT_AXES[h["layout"]]))
    if h["format"] == "cf32_le":
        body = np.frombuffer(data, dtype="<c8").reshape(shape)
        if not np.all(np.isfinite(body)):
            raise ProtocolError("nonfinite")
        return h, np.ascontiguousarray(body.transpose(inverse), dtype=np.complex64)
    body = np.frombuffer(data, dtype="<i2").reshape(shape + (2,))
    return h, np.ascontiguousarray(body.transpose(inverse + (3,)), dtype=np.int16)


def iq_values(header, raw):
    """The cube's sample values raw * scale, complex128 (C, P, G)."""
    if raw.dtype == np.int16:
        x = raw[..., 0].astype(np.float64) + 1j * raw[..., 1].astype(np.float64)
    else:
        x = raw.astype(np.complex128)
    return x * np.float64(header["scale"])


# ---- eigenspace frames ------------------------------------------------------------------

def _mode_slice(mode, n, d):
    """(first_index, k_sent) of the vectors a mode sends for signal dimension d."""
    return {"full": (0, n), "values": (0, 0), "signal": (n - d, d), "noise": (0, n - d)}[mode]


def encode_eigenspace(seq, timestamp_ns, values, vectors, signal_dims, mode="full", statuses=None,
                      stage_times=None, crc=True, late=False):
    """Parts [header, meta, data] of an eigenspace frame.

    values (count, n) real ascending (float32 -> complex float frame, float64 ->
    complex double); vectors (count, n, n) with column k the eigenvector of
    values[:, k] (None for mode 'values'); the mode selects which columns go out.
    stage_times = (received, solve_start, solve_end, published) in ns (None: now).
    """
    values = np.asarray(values)
    count, n = values.shape
    element = ELEMENT_COMPLEX_FLOAT if values.dtype == np.float32 else ELEMENT_COMPLEX_DOUBLE
    statuses = np.zeros(count, dtype=np.int32) if statuses is None else np.asarray(statuses)
    meta = np.zeros(count, dtype=_MATRIX_META)
    data = []
    for b in range(count):
        d = int(signal_dims[b])
        if not 0 <= d <= n:
            raise ValueError(f"signal dimension {d} out of 0..{n}")
        first, k = _mode_slice(mode, n, d)
        meta[b] = (int(statuses[b]), d, k, first)
        data.append(np.ascontiguousarray(values[b], dtype=REAL_DTYPE[element]).tobytes())
        if k:
            cols = np.asarray(vectors[b])[:, first:first + k]
            data.append(np.ascontiguousarray(cols.T, dtype=ELEMENT_DTYPE[element]).tobytes())
    if stage_times is None:
        stage_times = (time.time_ns(),) * 4
    meta_part = _STAGE_TIMES.pack(*[int(t) for t in stage_times]) + meta.tobytes()
    data_part = b"".join(data)
    payload = [meta_part, data_part]
    flags = (FLAG_CRC if crc else 0) | (FLAG_LATE if late else 0)
    header = encode_header(KIND_EIGENSPACE, seq, timestamp_ns, n, count, element, 0, MODES[mode], flags,
                           len(meta_part) + len(data_part), _parts_crc(payload) if crc else 0)
    return [header] + payload


def decode_eigenspace(parts, check_crc=True):
    """(header dict, stage times dict, [MatrixResult]) of an eigenspace frame.

    MatrixResult: status (eig info), signal_dim, values (n,) ascending,
    vectors (n, k_sent) or None, first_index (eigenvalue index of column 0).
    Raises ProtocolError."""
    if len(parts) != 3:
        raise ProtocolError("parts", f"{len(parts)} parts")
    h = decode_matrix_header(parts[0], KIND_EIGENSPACE)
    n, count, element, mode = h["n"], h["count"], h["element"], h["mode"]
    meta_part, data_part = bytes(parts[1]), parts[2]
    meta_bytes = STAGE_TIMES_BYTES + MATRIX_META_BYTES * count
    if len(meta_part) != meta_bytes:
        raise ProtocolError("size_mismatch", f"meta part {len(meta_part)} bytes, want {meta_bytes}")
    received, solve_start, solve_end, published = _STAGE_TIMES.unpack_from(meta_part)
    times = dict(received_ns=received, solve_start_ns=solve_start, solve_end_ns=solve_end,
                 published_ns=published)
    meta = np.frombuffer(meta_part, dtype=_MATRIX_META, offset=STAGE_TIMES_BYTES, count=count)
    rsize, esize = REAL_DTYPE[element].itemsize, ELEMENT_DTYPE[element].itemsize
    data_bytes = 0
    for m in meta:
        d, k, first = int(m["signal_dim"]), int(m["k_sent"]), int(m["first_index"])
        if d > n or (first, k) != _mode_slice(mode, n, d):
            raise ProtocolError("bad_field", f"k_sent {k} first_index {first} for mode {mode}, d {d}")
        data_bytes += n * rsize + n * k * esize
    if h["payload_bytes"] != meta_bytes + data_bytes:
        raise ProtocolError("size_mismatch", f"payload_bytes {h['payload_bytes']} != {meta_bytes + data_bytes}")
    if len(data_part) < data_bytes:
        raise ProtocolError("truncated", f"data {len(data_part)} < {data_bytes}")
    if len(data_part) > data_bytes:
        raise ProtocolError("oversized", f"data {len(data_part)} > {data_bytes}")
    if check_crc and h["crc"] and _parts_crc([meta_part, data_part]) != h["crc32c"]:
        raise ProtocolError("crc_mismatch")
    results = []
    offset = 0
    for m in meta:
        k = int(m["k_sent"])
        values = np.frombuffer(data_part, dtype=REAL_DTYPE[element], count=n, offset=offset)
        offset += n * rsize
        vectors = None
        if k:
            vectors = np.frombuffer(data_part, dtype=ELEMENT_DTYPE[element], count=n * k, offset=offset)
            vectors = vectors.reshape(k, n).T
            offset += n * k * esize
        results.append(MatrixResult(int(m["status"]), int(m["signal_dim"]), values, vectors,
                                    int(m["first_index"])))
    return h, times, results


# ---- parts files (one multipart message: u32 count, then u64 length + bytes per part) ----

def save_parts(path, parts):
    with open(path, "wb") as f:
        f.write(struct.pack("<I", len(parts)))
        for p in parts:
            f.write(struct.pack("<Q", len(p)))
            f.write(p)


def load_parts(path):
    with open(path, "rb") as f:
        blob = f.read()
    (count,) = struct.unpack_from("<I", blob)
    offset, parts = 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<Q", blob, offset)
        offset += 8
        parts.append(blob[offset:offset + length])
        offset += length
    return parts


# ---- CLI ------------------------------------------------------------------------------------

def _random_hermitian(rng, count, n, dtype):
    x = rng.standard_normal((count, n, n)) + 1j * rng.standard_normal((count, n, n))
    a = x @ np.conj(x.transpose(0, 2, 1)) / n
    return a.astype(dtype)


def _cmd_send(args):
    import zmq
    rng = np.random.default_rng(args.seed)
    dtype = np.complex64 if args.precision == "float" else np.complex128
    pool = [_random_hermitian(rng, args.count, args.n, dtype) for _ in range(2)]
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PUB if args.pattern == "pub" else zmq.PUSH)
    sock.setsockopt(zmq.LINGER, 5000)
    sock.bind(args.endpoint) if args.bind else sock.connect(args.endpoint)
    if args.pattern == "pub":
        time.sleep(0.3)  # let subscribers connect before the first frame
    period = 1.0 / args.rate if args.rate > 0 else 0.0
    start = time.monotonic()
    for seq in range(args.frames):
        matrices, ts = pool[seq % len(pool)], time.time_ns()
        if args.fragments > 1:
            for parts in encode_fragments(seq, ts, matrices, args.fragments, args.storage, not args.no_crc,
                                          args.per_matrix_parts):
                sock.send_multipart(parts, copy=False)
        else:
            sock.send_multipart(encode_covariance(seq, ts, matrices, args.storage, not args.no_crc,
                                                  args.per_matrix_parts), copy=False)
        delay = start + (seq + 1) * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    sock.close()
    ctx.term()
    print(f"sent {args.frames} frames of {args.count} x {args.n}x{args.n} {args.precision}"
          + (f", {args.fragments} fragments each" if args.fragments > 1 else ""))
    return 0


def _cmd_recv(args):
    import zmq
    ctx = zmq.Context()
    if args.pattern == "sub":
        sock = ctx.socket(zmq.SUB)
        sock.setsockopt(zmq.SUBSCRIBE, EIGENSPACE_PREFIX)
    else:
        sock = ctx.socket(zmq.PULL)
    sock.setsockopt(zmq.RCVTIMEO, int(args.timeout * 1000))
    sock.bind(args.endpoint) if args.bind else sock.connect(args.endpoint)
    got = 0
    try:
        while args.frames == 0 or got < args.frames:
            try:
                parts = sock.recv_multipart()
            except zmq.Again:
                print("timeout", file=sys.stderr)
                return 1
            try:
                h, t, results = decode_eigenspace(parts)
            except ProtocolError as e:
                print(f"reject {e.reason}: {e}")
                continue
            bad = sum(1 for r in results if r.status != 0)
            dims = sorted({r.signal_dim for r in results})
            latency_ms = (t["published_ns"] - h["timestamp_ns"]) / 1e6
            print(f"seq={h['seq']} n={h['n']} count={h['count']} mode={h['mode']} bad_status={bad} "
                  f"signal_dims={dims} late={int(h['late'])} publish_latency={latency_ms:.1f}ms")
            got += 1
    finally:
        sock.close(linger=0)
        ctx.term()
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="eigstream wire protocol v1 client")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send", help="send random Hermitian covariance frames")
    s.add_argument("--endpoint", default="tcp://127.0.0.1:5550")
    s.add_argument("--pattern", choices=("push", "pub"), default="push")
    s.add_argument("--bind", action="store_true")
    s.add_argument("--count", type=int, default=180)
    s.add_argument("--n", type=int, default=128)
    s.add_argument("--frames", type=int, default=10)
    s.add_argument("--rate", type=float, default=2.0, help="frames/s (0 = as fast as possible)")
    s.add_argument("--precision", choices=("double", "float"), default="double")
    s.add_argument("--storage", choices=tuple(STORAGES), default="full")
    s.add_argument("--per-matrix-parts", action="store_true")
    s.add_argument("--fragments", type=int, default=1, metavar="F",
                   help="send each frame as F fragments of consecutive whole matrices (docs/protocol.md; "
                        "1..count, 1 = whole frames)")
    s.add_argument("--no-crc", action="store_true")
    s.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("recv", help="receive and summarize eigenspace frames")
    r.add_argument("--endpoint", default="tcp://127.0.0.1:5551")
    r.add_argument("--pattern", choices=("sub", "pull"), default="sub")
    r.add_argument("--bind", action="store_true")
    r.add_argument("--frames", type=int, default=10, help="0 = forever")
    r.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for a frame")
    args = ap.parse_args(argv)
    if args.cmd == "send" and not 1 <= args.fragments <= args.count:
        ap.error(f"--fragments must be 1..{args.count} (--count), not {args.fragments}")
    return _cmd_send(args) if args.cmd == "send" else _cmd_recv(args)


if __name__ == "__main__":
    sys.exit(main())
