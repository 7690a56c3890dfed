"""Parsing a batch of same-layout Examples without a per-record loop.

Records written by one program usually share their wire layout byte for byte, apart from
the values: same keys in the same order, same list lengths. This module parses the first
record's layout (where every feature's packed values start and end), then checks with one
NumPy comparison that every other record has the same *structure bytes* (everything but
the value regions). Protobuf parsing depends only on those bytes, so equal structure bytes
mean every record parses to the same tree with values at the same offsets; the values are
then sliced out of a ``[records, length]`` byte matrix for the whole batch at once.

Anything unusual (different lengths, a different layout, a type or size mismatch, a
missing feature) returns ``None`` and the caller uses the general parser, which also
produces the error messages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.kernels.example_decoding import DenseSpec, kind_of

_KINDS = {0x0A: "bytes_list", 0x12: "float_list", 0x1A: "int64_list"}


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while pos < end:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    raise ValueError("truncated varint")


def _length_field(data: bytes, pos: int, end: int, tag: int) -> tuple[int, int]:
    """(start, end) of the length-delimited field ``tag`` at ``pos``."""
    if pos >= end or data[pos] != tag:
        raise ValueError("unexpected tag")
    length, start = _varint(data, pos + 1, end)
    if start + length > end:
        raise ValueError("field overruns its message")
    return start, start + length


def layout(record: bytes) -> dict[bytes, tuple[str, int, int, int]]:
    """key -> (kind, list start, values start, list end) for one Example (the last entry of
    a key wins). Raises ValueError for anything but the plain layout."""
    found: dict[bytes, tuple[str, int, int, int]] = {}
    pos, end = 0, len(record)
    while pos < end:  # Example: features (field 1), possibly repeated (merged)
        fstart, fend = _length_field(record, pos, end, 0x0A)
        pos = fstart
        while pos < fend:  # Features: map entries (field 1)
            estart, eend = _length_field(record, pos, fend, 0x0A)
            kstart, kend = _length_field(record, estart, eend, 0x0A)
            vstart, vend = _length_field(record, kend, eend, 0x12)
            if vend != eend:
                raise ValueError("unexpected fields in a map entry")
            found[record[kstart:kend]] = _feature(record, vstart, vend)
            pos = eend
        pos = fend
    return found


def _feature(record: bytes, start: int, end: int) -> tuple[str, int, int, int]:
    if start == end:
        return ("", start, start, end)
    kind = _KINDS.get(record[start])
    if kind is None:
        raise ValueError("unknown Feature kind")
    lstart, lend = _length_field(record, start, end, record[start])
    if lend != end:
        raise ValueError("unexpected fields in a Feature")
    if kind == "bytes_list" or lstart == lend:
        return (kind, lstart, lend, lend)
    vstart, vend = _length_field(record, lstart, lend, 0x0A)  # one packed run
    if vend != lend:
        raise ValueError("several packed runs")
    return (kind, lstart, vstart, vend)


class _Layout:
    """One wire layout: where each feature's values are, and the structure bytes (all but
    the values): a record's bytes, and which of them are values."""

    def __init__(self, record: bytes):
        self.fields = layout(record)
        opaque = np.zeros(len(record), dtype=bool)
        for kind, lstart, vstart, lend in self.fields.values():
            opaque[(vstart if kind != "bytes_list" else lstart):lend] = True
        self.structure = np.flatnonzero(~opaque)  # the byte columns that must match
        self.template = np.frombuffer(record, np.uint8)[self.structure]

    def matches(self, matrix: np.ndarray) -> bool:
        return bool((matrix[:, self.structure] == self.template).all())


_recent: dict[int, _Layout] = {}  # record width -> the last layout seen at that width


def _layout_of(records: Sequence[bytes], matrix: np.ndarray) -> _Layout | None:
    """The layout every record has (the recent one at this width, else the first record's),
    or ``None``."""
    width = matrix.shape[1]
    recent = _recent.get(width)
    if recent is not None and recent.matches(matrix):
        return recent
    try:
        found = _Layout(records[0])
    except (ValueError, IndexError):
        return None
    if not found.matches(matrix):
        return None
    if len(_recent) > 64:
        _recent.clear()
    _recent[width] = found
    return found


def parse_dense(records: Sequence[bytes], specs: Sequence[DenseSpec]) -> list[np.ndarray] | None:
    """The dense features of ``records`` when they all share one layout, else ``None``."""
    if not len(records) or any(s.sequence or s.dtype.name == "string" for s in specs):
        return None
    if len(set(map(len, records))) != 1:
        return None
    matrix = np.frombuffer(b"".join(records), np.uint8).reshape(len(records), -1)
    found = _layout_of(records, matrix)
    if found is None:
        return None
    out = []
    for spec in specs:
        value = _dense(matrix, found.fields.get(spec.key.encode()), spec)
        if value is None:
            return None
        out.append(value)
    return out


def _dense(matrix: np.ndarray, field: Any, spec: DenseSpec) -> np.ndarray | None:
    n = matrix.shape[0]
    size = math.prod(spec.shape)
    if field is None:
        if spec.default is None:
            return None
        default = np.asarray(spec.default, dtype=spec.dtype.as_numpy_dtype)
        return np.broadcast_to(default, (n, *spec.shape)).copy()
    kind, _, vstart, vend = field
    if kind != kind_of(spec.dtype, spec.key):
        return None
    region = matrix[:, vstart:vend]
    if kind == "float_list":
        if vend - vstart != 4 * size:
            return None
        return np.ascontiguousarray(region).view("<f4").reshape((n, *spec.shape))
    return _varints(region, size, spec)


def _varints(region: np.ndarray, size: int, spec: DenseSpec) -> np.ndarray | None:
    if region.shape[1] == size and not (region >= 0x80).any():  # one byte per value
        return region.astype(np.int64).reshape((region.shape[0], *spec.shape))
    data = region.reshape(-1)
    ends = np.flatnonzero(data < 0x80)
    if len(ends) != size * region.shape[0] or (len(data) and data[-1] >= 0x80):
        return None
    if region.shape[1] and ((region[:, -1] >= 0x80).any()
                            or (np.count_nonzero(region < 0x80, axis=1) != size).any()):
        return None
    starts = np.concatenate([[0], ends[:-1] + 1]) if len(ends) else ends
    position = np.arange(len(data)) - np.repeat(starts, ends - starts + 1)
    groups = (data & 0x7F).astype(np.uint64) << (7 * position).astype(np.uint64)
    values = np.add.reduceat(groups, starts) if len(ends) else np.zeros(0, np.uint64)
    return values.view(np.int64).reshape((region.shape[0], *spec.shape))
