"""Decoding ``tf.train.Example`` features: one protobuf parse per batch, NumPy per feature.

A batch of serialized Examples is framed as one ``ExampleBatchView`` message (a repeated
field of the same bytes) and parsed by one protobuf call; the views keep every feature's
list as its raw payload (``protos/example.py``). Dense float features whose payloads all
have the same packed layout are decoded with a single ``np.frombuffer`` over the batch;
other lists go through the real ``FloatList``/``Int64List``/``BytesList`` messages.

Errors follow TensorFlow's wording and name the feature, the example's index in the batch,
and the expected and found type or size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.protos import example as pb

_KIND_OF = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_TYPE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_LIST = {"float_list": pb.FloatList, "int64_list": pb.Int64List, "bytes_list": pb.BytesList}


@dataclass(frozen=True)
class DenseSpec:
    """A dense feature: ``shape`` per value (``sequence``: per row of a variable count)."""

    key: str
    dtype: dtypes.DType
    shape: tuple[int, ...]
    default: Any  # np.ndarray or None (required)
    sequence: bool = False


@dataclass(frozen=True)
class SparseSpec:
    """A variable-length feature, returned as (indices, values, dense_shape)."""

    key: str
    dtype: dtypes.DType


def kind_of(dtype: dtypes.DType, key: str) -> str:
    """The list kind a dtype is stored as.

    Raises:
        InvalidArgumentError: the dtype cannot be stored in an Example.
    """
    kind = _KIND_OF.get(dtype)
    if kind is None:
        raise InvalidArgumentError(f"Feature '{key}': dtype {dtype.name} is not supported; Example "
                                   "features are float32, int64 or string")
    return kind


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def packed_float_offset(payload: bytes) -> int | None:
    """Where the floats of a single packed ``FloatList`` payload start, else ``None``."""
    if not payload or payload[0] != 0x0A:
        return None
    length, start = _varint(payload, 1)
    return start if start + length == len(payload) else None


def decode_list(payload: bytes, kind: str) -> np.ndarray:
    """The values of one list payload as a 1-D NumPy array."""
    if kind == "float_list":
        start = packed_float_offset(payload)
        if start is not None:
            return np.frombuffer(payload, "<f4", offset=start)
        return np.asarray(pb.FloatList.FromString(payload).value, dtype=np.float32)
    values = _LIST[kind].FromString(payload).value
    if kind == "int64_list":
        return np.asarray(values, dtype=np.int64)
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def frame_batch(serialized: Sequence[bytes]) -> bytes:
    """``serialized`` as one ``ExampleBatchView`` message (field 1, length-delimited)."""
    parts = []
    for record in serialized:
        n = len(record)
        header = bytearray(b"\x0a")
        while n >= 0x80:
            header.append((n & 0x7F) | 0x80)
            n >>= 7
        header.append(n)
        parts.append(bytes(header))
        parts.append(record)
    return b"".join(parts)


def parse_views(serialized: Sequence[Any]) -> list[Any]:
    """The ``ExampleView`` of every serialized Example (one protobuf call).

    Raises:
        InvalidArgumentError: a record is not a serialized Example.
    """
    records = [s if isinstance(s, bytes) else bytes(s) for s in serialized]
    try:
        return list(pb.views_pb2.ExampleBatchView.FromString(frame_batch(records)).examples)
    except Exception:  # noqa: BLE001 - find the bad record for the message
        for i, record in enumerate(records):
            try:
                pb.views_pb2.ExampleView.FromString(record)
            except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError
                raise InvalidArgumentError(
                    f"Could not parse example input, value: {record[:40]!r} (index {i}: not a "
                    f"serialized tf.train.Example: {exc})") from None
        raise


def feature_map(features: Any) -> dict[bytes, Any]:
    """key -> FeatureView of a ``FeaturesView`` (the last entry of a key wins, as maps do)."""
    return {entry.key: entry.value for entry in features.feature}


def _payload(feature: Any, spec_key: str, kind: str, index: int) -> bytes:
    found = feature.WhichOneof("kind")
    if found is None:  # an empty Feature: no values of any type
        return b""
    if found != kind:
        raise InvalidArgumentError(
            f"Key: {spec_key}, Index: {index}. Data types don't match. Data type: "
            f"{_TYPE_NAME[found]} but expected type: {_TYPE_NAME[kind]}")
    return getattr(feature, kind)


def dense_batch(maps: Sequence[dict[bytes, Any]], spec: DenseSpec) -> np.ndarray:
    """One dense feature of every example, stacked (sequences padded with the default).

    Raises:
        InvalidArgumentError: missing without a default, wrong type, or wrong size.
    """
    kind = kind_of(spec.dtype, spec.key)
    key = spec.key.encode()
    payloads = []
    for i, features in enumerate(maps):
        feature = features.get(key)
        payloads.append(None if feature is None else _payload(feature, spec.key, kind, i))
    if spec.sequence:
        return _sequence_rows(payloads, spec, kind)
    fast = _dense_floats_fast(payloads, spec) if kind == "float_list" else \
        _dense_ints_fast(payloads, spec) if kind == "int64_list" else None
    if fast is not None:
        return fast
    size = int(np.prod(spec.shape, dtype=np.int64))
    rows = [_dense_values(p, spec, kind, size, i) for i, p in enumerate(payloads)]
    if not rows:
        return np.zeros((0, *spec.shape), dtype=_np_type(spec.dtype))
    return np.stack(rows).reshape((len(rows), *spec.shape))


def _dense_floats_fast(payloads: list[bytes | None], spec: DenseSpec) -> np.ndarray | None:
    if not payloads or any(p is None for p in payloads):
        return None
    first = payloads[0]
    width = len(first)
    start = packed_float_offset(first)
    size = int(np.prod(spec.shape, dtype=np.int64))
    if start is None or width - start != 4 * size or any(len(p) != width for p in payloads):
        return None
    if any(p[:start] != first[:start] for p in payloads):
        return None
    raw = np.frombuffer(b"".join(payloads), np.uint8).reshape(len(payloads), width)
    return np.ascontiguousarray(raw[:, start:]).view("<f4").reshape((len(payloads), *spec.shape))


def _dense_ints_fast(payloads: list[bytes | None], spec: DenseSpec) -> np.ndarray | None:
    """Decodes the packed varints of every payload at once (``None`` if any payload is not a
    single packed list or holds the wrong number of values)."""
    if not payloads or any(p is None or len(p) < 2 or p[0] != 0x0A for p in payloads):
        return None
    bodies = []
    for payload in payloads:
        length, start = _varint(payload, 1)
        if start + length != len(payload):
            return None
        bodies.append(payload[start:])
    size = int(np.prod(spec.shape, dtype=np.int64))
    data = np.frombuffer(b"".join(bodies), np.uint8)
    ends = np.flatnonzero(data < 0x80)
    if len(ends) != size * len(payloads) or (len(data) and data[-1] >= 0x80):
        return None
    starts = np.concatenate([[0], ends[:-1] + 1]) if len(ends) else ends
    position = np.arange(len(data)) - np.repeat(starts, ends - starts + 1)
    groups = (data & 0x7F).astype(np.uint64) << (7 * position).astype(np.uint64)
    values = np.add.reduceat(groups, starts) if len(ends) else np.zeros(0, np.uint64)
    bounds = np.cumsum([len(b) for b in bodies])
    counts = np.diff(np.concatenate([[0], np.searchsorted(ends, bounds)]))
    if (counts != size).any():
        return None
    return values.view(np.int64).reshape((len(payloads), *spec.shape))


def _np_type(dtype: dtypes.DType) -> Any:
    return object if dtype == dtypes.string else dtype.as_numpy_dtype


def _dense_values(payload: bytes | None, spec: DenseSpec, kind: str, size: int, index: int) -> Any:
    if payload is None:
        if spec.default is None:
            raise InvalidArgumentError(
                f"Feature: {spec.key} (data type: {spec.dtype.name}) is required but could not "
                f"be found (example index {index}).")
        return np.broadcast_to(np.asarray(spec.default, dtype=_np_type(spec.dtype)),
                               spec.shape).reshape(-1)
    values = decode_list(payload, kind)
    if values.size != size:
        raise InvalidArgumentError(
            f"Key: {spec.key}, Index: {index}. Number of {_TYPE_NAME[kind]} values != expected. "
            f"Values size: {values.size} but output shape: {list(spec.shape)}")
    return values


def _sequence_rows(payloads: list[bytes | None], spec: DenseSpec, kind: str) -> np.ndarray:
    row = int(np.prod(spec.shape, dtype=np.int64))
    decoded = []
    for i, payload in enumerate(payloads):
        values = decode_list(payload, kind) if payload else np.zeros(0, _np_type(spec.dtype))
        if row and values.size % row:
            raise InvalidArgumentError(
                f"Key: {spec.key}, Index: {i}. Number of {_TYPE_NAME[kind]} values is not a "
                f"multiple of the feature's shape {list(spec.shape)}: {values.size}")
        decoded.append(values.reshape((-1, *spec.shape)) if row else values.reshape(0, *spec.shape))
    longest = max((len(v) for v in decoded), default=0)
    fill = spec.default if spec.default is not None else ("" if kind == "bytes_list" else 0)
    if kind == "bytes_list" and isinstance(fill, str):
        fill = fill.encode()
    out = np.empty((len(decoded), longest, *spec.shape), dtype=_np_type(spec.dtype))
    out[...] = np.asarray(fill, dtype=_np_type(spec.dtype))
    for i, values in enumerate(decoded):
        out[i, :len(values)] = values
    return out


def sparse_batch(maps: Sequence[dict[bytes, Any]], spec: SparseSpec) -> tuple[np.ndarray, Any, np.ndarray]:
    """One variable-length feature of every example: ``(indices [n, 2], values, shape [2])``."""
    kind = kind_of(spec.dtype, spec.key)
    key = spec.key.encode()
    columns, rows, lists = [], [], []
    for i, features in enumerate(maps):
        feature = features.get(key)
        payload = b"" if feature is None else _payload(feature, spec.key, kind, i)
        values = decode_list(payload, kind) if payload else np.zeros(0, _np_type(spec.dtype))
        lists.append(values)
        rows.append(np.full(values.size, i, dtype=np.int64))
        columns.append(np.arange(values.size, dtype=np.int64))
    longest = max((v.size for v in lists), default=0)
    indices = np.stack([np.concatenate(rows), np.concatenate(columns)], axis=1) if lists \
        else np.zeros((0, 2), np.int64)
    values = np.concatenate(lists) if lists else np.zeros(0, _np_type(spec.dtype))
    return indices.astype(np.int64), values, np.array([len(maps), longest], dtype=np.int64)
