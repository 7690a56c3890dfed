"""TensorFlow's checkpoint format (the V2 "tensor bundle"), read and written.

A bundle ``P`` is ``P.index``, an SSTable (:mod:`flowmesh.checkpoint.sstable`) mapping

* ``""`` -> ``BundleHeaderProto`` (number of shards, endianness, version),
* a tensor's name -> ``BundleEntryProto`` (dtype, shape, shard, offset, size and the masked
  CRC-32C of its bytes); a partitioned tensor's entry lists its ``slices`` instead, and each
  slice has an entry of its own under an OrderedCode key (``_slice_key``),

and ``P.data-0000k-of-0000n`` files holding the raw little-endian tensor bytes. A string
tensor is stored as the varint lengths, a masked CRC-32C of the lengths, then the bytes.

:func:`index_from_table` turns a bundle index into a :class:`CheckpointIndex`, so
``CheckpointReader`` (and through it ``Saver.restore``, ``NewCheckpointReader``,
``list_variables``, ``init_from_checkpoint``) reads TensorFlow's checkpoints with the same
slice assembly as flowmesh's own; :func:`read_slice` reads and verifies one stored slice.
:func:`write_bundle` / :func:`merge_bundles` write TensorFlow's format (``Saver(
write_version=tf.train.SaverDef.V2)``) so TensorFlow restores flowmesh's checkpoints.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from flowmesh.checkpoint import sstable
from flowmesh.checkpoint.encoding import _as_bytes, check_supported, numpy_dtype
from flowmesh.checkpoint.index import (
    CheckpointIndex,
    RecordEntry,
    ShardFile,
    SliceEntry,
    TensorEntry,
    data_suffix,
    index_path,
)
from flowmesh.checkpoint.safetensors_io import Stored
from flowmesh.checkpoint.slices import Slice
from flowmesh.errors import DataLossError, InvalidArgumentError
from flowmesh.formats import filesystem as fs
from flowmesh.formats.crc import crc32c, mask, masked_crc32c, unmask

CHECKSUM = "tensor-bundle"  # ShardFile.checksum of a bundle's data files
_DT = {  # flowmesh dtype name <-> TensorFlow's DataType number (types.proto)
    "float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7,
    "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17, "complex128": 18,
    "float16": 19, "uint32": 22, "uint64": 23,
}
_DT_NAME = {v: k for k, v in _DT.items()}


def _protos() -> Any:
    from flowmesh.protos import tensor_bundle

    return tensor_bundle


# --- keys -----------------------------------------------------------------------------------------
def _num_increasing(value: int) -> bytes:
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(body)]) + body


_HEADER_BITS = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0), (0xFE, 0),
                (0xFF, 0), (0xFF, 0x80), (0xFF, 0xC0)]


def _signed_num_increasing(value: int) -> bytes:
    """OrderedCode's WriteSignedNumIncreasing (tensorflow/core/lib/strings/ordered_code.cc)."""
    x = ~value if value < 0 else value
    if x < 64:
        return bytes([(_HEADER_BITS[1][0] ^ value) & 0xFF])
    length = x.bit_length() // 7 + 1
    buf = bytearray(value.to_bytes(10, "big", signed=True))[10 - length:]
    buf[0] ^= _HEADER_BITS[length][0]
    buf[1] ^= _HEADER_BITS[length][1]
    return bytes(buf)


def _ordered_string(text: bytes) -> bytes:
    return text.replace(b"\xff", b"\xff\x00").replace(b"\x00", b"\x00\xff") + b"\x00\x01"


def _slice_key(name: str, extents: Sequence[tuple[int, int]]) -> bytes:
    """TensorFlow's ``EncodeTensorNameSlice``: extents as (start, length), -1 for a full dim."""
    key = _num_increasing(0) + _ordered_string(name.encode()) + _num_increasing(len(extents))
    for start, length in extents:
        key += _signed_num_increasing(start) + _signed_num_increasing(length)
    return key


def _extents(box: Slice) -> list[tuple[int, int]]:
    return [(0, -1) if (o == 0 and n == f) else (o, n)
            for o, n, f in zip(box.offset, box.shape, box.full_shape)]


# --- reading --------------------------------------------------------------------------------------
def index_from_table(data: bytes, path: str) -> CheckpointIndex:
    """The :class:`CheckpointIndex` of a bundle's ``.index`` bytes.

    Raises:
        DataLossError: naming ``path`` for a corrupted table, entry or header.
    """
    items = dict(sstable.read_table(data, path))
    pb = _protos()
    try:
        header = pb.BundleHeaderProto.FromString(items.pop(b""))
        if header.endianness != pb.BundleHeaderProto.LITTLE:
            raise ValueError("it was written on a big-endian machine")
        tensors: dict[str, TensorEntry] = {}
        ends = [0] * max(header.num_shards, 1)
        for key, value in items.items():
            if key.startswith(b"\x00"):
                continue  # a slice entry: reached through its tensor's entry
            name = key.decode()
            entry = pb.BundleEntryProto.FromString(value)
            tensors[name] = _tensor_entry(name, entry, items, ends)
        shards = [ShardFile(data_suffix(k, len(ends)), ends[k], 1, CHECKSUM) for k in range(len(ends))]
        return CheckpointIndex(shards, tensors, {"format": "tensorflow-bundle"})
    except (KeyError, ValueError, UnicodeDecodeError, IndexError) as exc:
        raise DataLossError(None, None, f"Checkpoint index {path} is corrupted: {exc}. Restore an "
                            "earlier checkpoint.") from None


def _tensor_entry(name: str, entry: Any, items: dict[bytes, bytes], ends: list[int]) -> TensorEntry:
    if entry.dtype not in _DT_NAME:
        raise ValueError(f"tensor '{name}' has a DataType ({entry.dtype}) flowmesh cannot read")
    shape = tuple(int(d.size) for d in entry.shape.dim)
    result = TensorEntry(_DT_NAME[entry.dtype], shape)
    if not entry.slices:
        result.slices.append(_slice_entry(name, entry, Slice.whole(shape), ends))
        return result
    pb = _protos()
    for proto in entry.slices:
        extents = [(int(e.start), int(e.length) if e.HasField("length") else -1) for e in proto.extent]
        box = Slice(shape, tuple(s for s, _ in extents),
                    tuple(f if n < 0 else n for (_, n), f in zip(extents, shape)))
        stored = pb.BundleEntryProto.FromString(items[_slice_key(name, extents)])
        result.slices.append(_slice_entry(name, stored, box, ends))
    return result


def _slice_entry(name: str, entry: Any, box: Slice, ends: list[int]) -> SliceEntry:
    if not 0 <= entry.shard_id < len(ends):
        raise ValueError(f"tensor '{name}' names shard {entry.shard_id} of {len(ends)}")
    end = int(entry.offset + entry.size)
    ends[entry.shard_id] = max(ends[entry.shard_id], end)
    return SliceEntry(int(entry.shard_id), box,
                      [RecordEntry(name, Stored(int(entry.offset), end, (int(entry.crc32c),)))])


def read_slice(f: IO[bytes], path: str, name: str, dtype: str, s: SliceEntry,
               out: np.ndarray | None = None) -> np.ndarray:
    """Reads one stored slice, checking its masked CRC-32C.

    Raises:
        DataLossError: naming ``path`` when the bytes are short or fail their checksum.
    """
    stored = s.records[0].stored
    f.seek(stored.begin)
    data = f.read(stored.end - stored.begin)
    if len(data) != stored.end - stored.begin:
        raise _data_loss(path, name, "the file is truncated")
    if dtype == "string":
        value = _decode_strings(data, s.box.shape, path, name)
    else:
        if masked_crc32c(data) != stored.checksums[0]:
            raise _data_loss(path, name, "its bytes fail their CRC-32C check")
        value = np.frombuffer(data, dtype=numpy_dtype(dtype)).reshape(s.box.shape)
        if value.nbytes != len(data):
            raise _data_loss(path, name, "its size does not match its shape")
    if out is None:
        return value.copy() if dtype != "string" else value
    out[...] = value
    return out


def _decode_strings(data: bytes, shape: tuple[int, ...], path: str, name: str) -> np.ndarray:
    count = int(np.prod(shape)) if shape else 1
    lengths, pos, crc = [], 0, 0
    try:
        for _ in range(count):
            n, pos = sstable.get_varint(data, pos)
            lengths.append(n)
            crc = crc32c(struct.pack("<I", n) if n <= 0xFFFFFFFF else struct.pack("<Q", n), crc)
        if unmask(struct.unpack_from("<I", data, pos)[0]) != crc:
            raise ValueError("the string lengths fail their CRC-32C check")
    except (ValueError, struct.error) as exc:
        raise _data_loss(path, name, str(exc)) from None
    pos += 4
    out = np.empty(count, dtype=object)
    for i, n in enumerate(lengths):
        out[i] = data[pos:pos + n]
        pos += n
    if pos != len(data):
        raise _data_loss(path, name, "its string lengths do not add up to its size")
    return out.reshape(shape)


def _data_loss(path: str, name: str, why: str) -> DataLossError:
    return DataLossError(None, None, f"Checkpoint data file {path} is corrupted: tensor '{name}': {why}. "
                         "Restore an earlier checkpoint.")


# --- writing --------------------------------------------------------------------------------------
def _tensor_bytes(array: np.ndarray, dtype: str) -> tuple[bytes, int]:
    """The stored bytes of a tensor and their masked CRC-32C."""
    if dtype != "string":
        data = np.ascontiguousarray(array, dtype=numpy_dtype(dtype)).tobytes()
        return data, masked_crc32c(data)
    items = [_as_bytes(x) for x in array.reshape(-1)]
    lengths, crc = bytearray(), 0
    for item in items:
        sstable.put_varint(lengths, len(item))
        crc = crc32c(struct.pack("<I", len(item)), crc)
    length_crc = struct.pack("<I", mask(crc))
    crc = crc32c(length_crc, crc)
    body = b"".join(items)
    return bytes(lengths) + length_crc + body, mask(crc32c(body, crc))


def _entry(dtype: str, shape: Sequence[int], shard: int = 0, offset: int = 0, size: int = 0,
           crc: int = 0) -> Any:
    entry = _protos().BundleEntryProto(dtype=_DT[dtype], shard_id=shard, offset=offset, size=size,
                                       crc32c=crc)
    for d in shape:
        entry.shape.dim.add(size=int(d))
    return entry


def _header(num_shards: int) -> bytes:
    header = _protos().BundleHeaderProto(num_shards=num_shards)
    header.version.producer = 1
    return header.SerializeToString()


def write_bundle(prefix: str, specs: Sequence[Any]) -> None:
    """Writes ``specs`` (:class:`~flowmesh.checkpoint.writer.SaveSpec`) as a one-shard bundle:
    the data file first, then the index (each atomically).

    Raises:
        InvalidArgumentError: a dtype TensorFlow's format cannot hold, or a tensor saved twice.
    """
    fs.makedirs(fs.dirname(prefix))
    entries: dict[bytes, Any] = {}
    full: dict[str, Any] = {}
    offset = 0
    with fs.atomic_write(prefix + data_suffix(0, 1)) as f:
        for spec in specs:
            check_supported(spec.dtype, spec.name)
            if spec.dtype not in _DT:
                raise InvalidArgumentError(None, None, f"Cannot save '{spec.name}' ({spec.dtype}) in "
                                           "TensorFlow's checkpoint format.")
            data, crc = _tensor_bytes(spec.array, spec.dtype)
            f.write(data)
            entry = _entry(spec.dtype, spec.array.shape, 0, offset, len(data), crc)
            offset += len(data)
            box = spec.box
            key = spec.name.encode() if box is None else _slice_key(spec.name, _extents(box))
            if key in entries or (box is None and spec.name in full):
                raise InvalidArgumentError(None, None, f"Tensor '{spec.name}' is saved twice; give each "
                                           "variable a unique name in var_list.")
            entries[key] = entry
            if box is not None:
                _add_slice(full.setdefault(spec.name, _entry(spec.dtype, box.full_shape)), box)
    for name, entry in full.items():
        entries[name.encode()] = entry
    _write_index(prefix, entries, 1)


def _add_slice(entry: Any, box: Slice) -> None:
    proto = entry.slices.add()
    for start, length in _extents(box):
        extent = proto.extent.add(start=start)
        if length >= 0:
            extent.length = length


def _write_index(prefix: str, entries: dict[bytes, Any], num_shards: int) -> None:
    items = [(b"", _header(num_shards))] + sorted((k, v.SerializeToString()) for k, v in entries.items())
    fs.write_bytes_atomic(index_path(prefix), sstable.write_table(items))


def merge_bundles(shard_prefixes: Sequence[str], destination: str) -> None:
    """TensorFlow's ``MergeV2Checkpoints``: moves shard ``k``'s data file to
    ``destination.data-0000k-of-0000n`` and writes one index over all of them (last).

    Raises:
        DataLossError: a shard's index is corrupted.
        InvalidArgumentError: two shards hold the same tensor (slice).
    """
    n = len(shard_prefixes)
    pb = _protos()
    merged: dict[bytes, Any] = {}
    for k, prefix in enumerate(shard_prefixes):
        path = index_path(prefix)
        items = dict(sstable.read_table(fs.read_bytes(path), path))
        items.pop(b"", None)
        for key, value in items.items():
            entry = pb.BundleEntryProto.FromString(value)
            if entry.slices and key in merged:
                merged[key].slices.extend(entry.slices)
                continue
            if key in merged:
                raise InvalidArgumentError(None, None, f"Tensor {key!r} is saved by two shards.")
            if not entry.slices:
                entry.shard_id = k
            merged[key] = entry
        fs.rename(prefix + data_suffix(0, 1), destination + data_suffix(k, n))
    _write_index(destination, merged, n)
    for prefix in shard_prefixes:
        fs.remove(index_path(prefix))

