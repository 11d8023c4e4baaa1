"""read_recording: an eigstream SigMF recording (docs/recording.md) as NumPy
arrays in the natural orientation, whatever the wire layout."""
import json
import os

import numpy as np

import eigstream_client as wire


class Recording:
    """What read_recording returns.

    .meta          the SigMF meta (dict, as in NAME.sigmf-meta)
    .kind          "covariance", "eigenspace" or "iq"
    .seq, .timestamp_ns, .received_ns
                   per frame, uint64 (frames,): the recorded header's seq and
                   source timestamp, and when the recorder got it (0 unknown)
    covariance:
    .matrices      (frames, count, n, n) complex64/complex128 with
                   [f, b, i, j] = A(i, j) of matrix b of frame f (packed
                   storage expanded to the full Hermitian matrix)
    eigenspace:
    .values        (frames, count, n) float32/float64, ascending
    .vectors       (frames, count, n, k): [f, b, :, c] the eigenvector of
                   eigenvalue first_index + c; None when k differs between
                   matrices (modes signal, noise with a varying dimension)
    .first_index, .status, .signal_dim
                   (frames, count) int arrays
    iq:
    .cubes         (frames, channels, pulses, gates) complex128: each cube's
                   samples times its header's scale, whatever its layout
    .scale         (frames,) float64: each cube's scale
    """

    def __repr__(self):
        shape = {"covariance": lambda: self.matrices.shape, "iq": lambda: self.cubes.shape}.get(
            self.kind, lambda: self.values.shape)()
        return f"<eigstream.Recording {self.kind} {shape}>"


def _paths(name):
    for suffix in (".sigmf-meta", ".sigmf-data"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name + ".sigmf-meta", name + ".sigmf-data", name + ".sigmf-index"


JOURNAL_HEADER, RECORD = 16, 64  # docs/recording.md, Journal


def _blobs(g, kind, count, data_path, journal_path):
    """Each frame's bytes as on the wire. Layout samples: its head (header,
    and an eigenspace frame's meta part) from its journal entry, then its
    samples from the data file; layout frames (before 2026-11-27): the whole
    frame from the data file."""
    index = g["eigstream:index"]
    data = np.memmap(data_path, np.uint8, "r") if os.path.getsize(data_path) else np.zeros(0, np.uint8)
    if g.get("eigstream:layout", "frames") == "frames":
        for e in index:
            yield bytes(data[int(e["offset"]): int(e["offset"]) + int(e["bytes"])])
        return
    head = wire.HEADER_BYTES + (wire.STAGE_TIMES_BYTES + wire.MATRIX_META_BYTES * count if kind == "eigenspace" else 0)
    journal = np.memmap(journal_path, np.uint8, "r") if index else np.zeros(0, np.uint8)
    for f, e in enumerate(index):
        at = JOURNAL_HEADER + f * (RECORD + head) + RECORD
        offset, samples = int(e["offset"]), int(e["bytes"]) - head
        yield bytes(journal[at: at + head]) + bytes(data[offset: offset + samples])


def _frame_parts(kind, count, blob):
    """The wire parts of one recorded frame (header, then its payload parts)."""
    header, payload = blob[:wire.HEADER_BYTES], blob[wire.HEADER_BYTES:]
    if kind == "covariance":
        return [header, payload]
    meta_bytes = wire.STAGE_TIMES_BYTES + wire.MATRIX_META_BYTES * count
    return [header, payload[:meta_bytes], payload[meta_bytes:]]


def _read_iq(meta, g, data_path, journal_path):
    """read_recording of a recording of IQ cubes (docs/recording.md)."""
    rec = Recording()
    rec.meta, rec.kind, index = meta, "iq", g["eigstream:index"]
    for field in ("seq", "timestamp_ns", "received_ns"):
        setattr(rec, field, np.array([int(e[field]) for e in index], np.uint64))
    shape = (len(index), int(g["eigstream:n"]), int(g["eigstream:count"]), int(g["eigstream:gates"]))
    rec.cubes, rec.scale = np.empty(shape, np.complex128), np.empty(len(index), np.float64)
    for f, (e, blob) in enumerate(zip(index, _blobs(g, "iq", 0, data_path, journal_path))):
        payload = blob[wire.HEADER_BYTES:]
        try:
            h, raw = wire.decode_iq([blob[:wire.HEADER_BYTES], payload])
        except wire.ProtocolError as err:
            raise wire.ProtocolError(err.reason, f"{data_path}: frame {f} (seq {e['seq']}): {err}") from None
        rec.cubes[f], rec.scale[f] = wire.iq_values(h, raw), h["scale"]
    return rec


def read_recording(name):
    """Reads the recording NAME (or NAME.sigmf-meta / NAME.sigmf-data) into a
    Recording. Every frame is decoded by the wire protocol's rules, its CRC
    checked: a frame that fails raises eigstream.client.ProtocolError naming
    it; a meta without eigstream's fields raises ValueError (a recording of
    another tool: read its samples with the SigMF fields alone)."""
    meta_path, data_path, journal_path = _paths(os.fspath(name))
    with open(meta_path) as f:
        meta = json.load(f)
    g = meta["global"]
    if "eigstream:kind" not in g or "eigstream:index" not in g:
        raise ValueError(f"{meta_path}: not an eigstream recording (no eigstream:kind / eigstream:index)")
    kind, n, count = g["eigstream:kind"], int(g["eigstream:n"]), int(g["eigstream:count"])
    index = g["eigstream:index"]
    if kind == "iq":
        return _read_iq(meta, g, data_path, journal_path)
    rec = Recording()
    rec.meta, rec.kind = meta, kind
    for field in ("seq", "timestamp_ns", "received_ns"):
        setattr(rec, field, np.array([int(e[field]) for e in index], np.uint64))
    complex_type = np.complex64 if g["eigstream:element"] == "float" else np.complex128
    real_type = np.float32 if complex_type == np.complex64 else np.float64
    frames = len(index)
    if kind == "covariance":
        rec.matrices = np.empty((frames, count, n, n), complex_type)
    else:
        rec.values = np.empty((frames, count, n), real_type)
        rec.first_index, rec.status, rec.signal_dim = (np.empty((frames, count), np.int64) for _ in range(3))
        vectors = []
    for f, (e, blob) in enumerate(zip(index, _blobs(g, kind, count, data_path, journal_path))):
        try:
            parts = _frame_parts(kind, count, blob)
            if kind == "covariance":
                rec.matrices[f] = wire.decode_covariance(parts)[1]
                continue
            results = wire.decode_eigenspace(parts)[2]
        except wire.ProtocolError as err:
            raise wire.ProtocolError(err.reason, f"{data_path}: frame {f} (seq {e['seq']}): {err}") from None
        for b, r in enumerate(results):
            rec.values[f, b] = r.values
            rec.first_index[f, b], rec.status[f, b], rec.signal_dim[f, b] = r.first_index, r.status, r.signal_dim
        vectors.append([r.vectors for r in results])
    if kind == "eigenspace":
        ks = {0 if v is None else v.shape[1] for frame in vectors for v in frame}
        rec.vectors = None
        if len(ks) == 1 and 0 not in ks:
            rec.vectors = np.array(vectors, complex_type).reshape(frames, count, n, ks.pop())
        elif not vectors:
            rec.vectors = np.empty((0, count, n, n), complex_type)
    return rec
