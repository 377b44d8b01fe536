"""Columnar protobuf encoding: the same message for many rows at once, with numpy.

The timeline writes tens of millions of small TracePackets; building a protobuf object per
packet costs microseconds each, so the hot path encodes a batch of rows (an Arrow record
batch) column by column instead. A `Rows` is n byte strings held as segments: each segment is
an (n, width) uint8 matrix whose row i holds lens[i] valid bytes at its start. Fields are
built from columns (varint, fixed64, double, string, nested message), optional per row
(`present`), then `encode()` keeps the valid bytes of every segment, row by row: the rows'
byte strings concatenated. Field numbers and wire types come from the caller (timeline.py
reads them from Perfetto's generated descriptors); this module knows nothing of Perfetto."""
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

VARINT, FIXED64, LEN = 0, 1, 2
_SHIFTS = np.arange(10, dtype=np.uint64) * np.uint64(7)


class Rows:
    """n byte strings, as segments [(data (n, w) uint8, lens (n,) int64)]."""
    __slots__ = ("n", "segs")

    def __init__(self, n, segs=()):
        self.n, self.segs = n, list(segs)

    def __add__(self, other):
        return Rows(self.n, self.segs + other.segs)

    def lens(self):
        total = np.zeros(self.n, dtype=np.int64)
        for _, lens in self.segs:
            total += lens
        return total

    def only(self, present):
        """The same rows, empty where present is False."""
        if present is None:
            return self
        keep = np.asarray(present, dtype=bool)
        return Rows(self.n, [(d, np.where(keep, lens, 0)) for d, lens in self.segs])

    def encode(self):
        """The rows' bytes, concatenated in row order."""
        segs = [(d, lens) for d, lens in self.segs if d.shape[1] and lens.any()]
        if not segs:
            return b""
        data = np.hstack([d for d, _ in segs])
        mask = np.hstack([np.arange(d.shape[1])[None, :] < lens[:, None] for d, lens in segs])
        return data[mask].tobytes()


def _varint_matrix(v):
    """uint64 values -> (n, w) varint bytes and their lengths."""
    v = np.asarray(v, dtype=np.uint64)
    nbytes = np.ones(len(v), dtype=np.int64)
    for k in range(1, 10):
        nbytes += v >= np.uint64(1 << (7 * k))
    w = int(nbytes.max()) if len(v) else 1
    groups = ((v[:, None] >> _SHIFTS[None, :w]) & np.uint64(0x7F)).astype(np.uint8)
    more = np.arange(w)[None, :] < (nbytes - 1)[:, None]
    groups[more] |= 0x80
    return groups, nbytes


def const(n, data, present=None):
    """The same bytes on every row."""
    d = np.frombuffer(bytes(data), dtype=np.uint8)
    return Rows(n, [(np.broadcast_to(d, (n, len(d))), np.full(n, len(d), dtype=np.int64))]).only(present)


def tag(number, wire_type):
    out = bytearray()
    v = (number << 3) | wire_type
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _column(values, n, dtype, fill):
    """A numpy column and its validity from an Arrow array (nulls -> fill, present False)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        arr = values.fill_null(fill).to_numpy(zero_copy_only=False).astype(dtype)
        return arr, valid
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = np.full(n, arr)
    return arr.astype(dtype), np.ones(n, dtype=bool)


def _present(valid, present):
    return valid if present is None else (valid & np.asarray(present, dtype=bool))


def varint_field(number, values, n, present=None):
    """An integer field (uint64, or int64 as its two's complement, as protobuf does)."""
    v, valid = _column(values, n, np.int64, 0)
    data, lens = _varint_matrix(v.astype(np.uint64))
    return (const(n, tag(number, VARINT)) + Rows(n, [(data, lens)])).only(_present(valid, present))


def fixed64_field(number, values, n, present=None):
    v, valid = _column(values, n, np.int64, 0)
    data = v.astype("<u8").view(np.uint8).reshape(n, 8)
    return (const(n, tag(number, FIXED64)) + Rows(n, [(data, np.full(n, 8, dtype=np.int64))])).only(
        _present(valid, present))


def double_field(number, values, n, present=None):
    v, valid = _column(values, n, np.float64, 0.0)
    data = v.astype("<f8").view(np.uint8).reshape(n, 8)
    return (const(n, tag(number, FIXED64)) + Rows(n, [(data, np.full(n, 8, dtype=np.int64))])).only(
        _present(valid, present))


def _string_rows(values, n):
    arr = pc.cast(values, pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    arr = arr.fill_null("")
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + n + 1]
    raw = arr.buffers()[2]
    chars = np.frombuffer(raw, dtype=np.uint8) if raw is not None else np.zeros(0, dtype=np.uint8)
    lens = (offsets[1:] - offsets[:-1]).astype(np.int64)
    w = int(lens.max()) if n else 0
    if w == 0 or len(chars) == 0:
        return Rows(n, [(np.zeros((n, 0), dtype=np.uint8), np.zeros(n, dtype=np.int64))]), valid
    idx = np.minimum(offsets[:-1, None] + np.arange(w)[None, :], len(chars) - 1)
    return Rows(n, [(chars[idx], lens)]), valid


def message_field(number, inner, present=None):
    """A length-delimited field holding `inner` (a nested message, or raw bytes)."""
    inner = inner.only(present)
    data, lens = _varint_matrix(inner.lens())
    return (const(inner.n, tag(number, LEN), present) + Rows(inner.n, [(data, lens)]).only(present) + inner)


def interleave(parts, n):
    """[(row indices, Rows)] covering rows 0..n-1 once -> their bytes in row order."""
    row_len = np.zeros(n, dtype=np.int64)
    blobs = []
    for idx, rows in parts:
        lens = rows.lens()
        row_len[idx] = lens
        blobs.append((idx, lens, np.frombuffer(rows.encode(), dtype=np.uint8)))
    starts = np.cumsum(row_len) - row_len
    out = np.empty(int(row_len.sum()), dtype=np.uint8)
    for idx, lens, blob in blobs:
        if len(blob):
            # byte j of the part goes to its row's start + (j - the part's own start of that row)
            own = np.cumsum(lens) - lens
            out[np.repeat(starts[idx] - own, lens) + np.arange(len(blob))] = blob
    return out.tobytes()


def string_field(number, values, n, present=None):
    rows, valid = _string_rows(values, n)
    return message_field(number, rows, _present(valid, present))
