"""Kernels of ``flowmesh/ops/reader_ops.py``: readers in resource stores.

A :class:`ReaderState` follows TensorFlow's ``ReaderBase``: under its lock, a read takes
a work unit (a file name) from the string queue when it has none (blocking like a
dequeue, so a step cancelled or timed out wakes it up), opens it as an iterator of
``(key, value)`` records, and finishes the work unit when that iterator is exhausted.
``read_up_to`` stops at the end of a work unit once it has at least one record.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.formats.tfrecord import check_compression, open_records, read_records
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.kernels.data_flow_ops import QueueState
from flowmesh.kernels.io_ops import scalar_string

Record = tuple[bytes, bytes]
_CHUNK = 1 << 20


class ReaderState:
    """A reader's current work unit and counters; :meth:`records` is the reader kind."""

    kind = "ReaderBase"
    one_record_per_work = False  # the work unit is finished as soon as its record is read

    def __init__(self, name: str, attrs: dict[str, Any]):
        self.name = name
        self.attrs = attrs
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.work: str | None = None
        self.current: Iterator[Record] | None = None
        self.work_started = self.work_finished = self.num_records_produced = 0

    def records(self, work: str) -> Iterator[Record]:
        raise NotImplementedError

    # --- reading (TensorFlow's ReaderBase::ReadUpTo) -----------------------------------------
    def read(self, step: Any, queue: QueueState, limit: int) -> list[Record]:
        """Up to ``limit`` records; a batch ends at the end of a work unit once non-empty."""
        out: list[Record] = []
        with self.lock:
            while len(out) < limit:
                if self.current is None:
                    self._start(step, queue)
                record = next(self.current, None)  # type: ignore[arg-type]
                if record is not None:
                    out.append(record)
                    self.num_records_produced += 1
                if record is None or self.one_record_per_work:
                    self._finish()
                    if out:
                        break
        return out

    def _start(self, step: Any, queue: QueueState) -> None:
        if len(queue.dtypes) != 1 or queue.dtypes[0] != dtypes.string:
            raise InvalidArgumentError(
                f"{self.kind} '{self.name}' reads work units from a queue of string scalars; queue "
                f"'{queue.name}' has components {[d.name for d in queue.dtypes]}")
        element = queue.dequeue(step, 1, up_to=False)[0]
        self.work = scalar_string(element[0])
        self.current = self.records(self.work)
        self.work_started += 1

    def _finish(self) -> None:
        self.current = None
        self.work_finished = self.work_started

    # --- state -----------------------------------------------------------------------------
    def serialize(self) -> bytes:
        raise UnimplementedError(None, None, f"Reader SerializeState ({self.kind} '{self.name}' does not "
                                             "support serialization)")

    def restore(self, state: bytes) -> None:
        raise UnimplementedError(None, None, f"Reader RestoreState ({self.kind} '{self.name}' does not "
                                             "support serialization)")


class TFRecordReaderState(ReaderState):
    kind = "TFRecordReader"

    def records(self, work: str) -> Iterator[Record]:
        offset = 0
        for record in read_records(work, check_compression(self.attrs.get("compression_type", ""))):
            yield f"{work}:{offset}".encode(), record
            offset += len(record) + 16  # length, its CRC, the data, its CRC


class TextLineReaderState(ReaderState):
    kind = "TextLineReader"

    def records(self, work: str) -> Iterator[Record]:
        skip = int(self.attrs.get("skip_header_lines", 0))
        for number, line in enumerate(_lines(work), start=1):
            if number > skip:
                yield f"{work}:{number}".encode(), line


def _lines(path: str) -> Iterator[bytes]:
    stream = open_records(path)
    try:
        rest = b""
        while chunk := stream.read(_CHUNK):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                yield line[:-1] if line.endswith(b"\r") else line
        if rest:
            yield rest[:-1] if rest.endswith(b"\r") else rest
    finally:
        stream.close()


class FixedLengthRecordReaderState(ReaderState):
    kind = "FixedLengthRecordReader"

    def records(self, work: str) -> Iterator[Record]:
        size = int(self.attrs["record_bytes"])
        header, footer = int(self.attrs.get("header_bytes", 0)), int(self.attrs.get("footer_bytes", 0))
        hop = int(self.attrs.get("hop_bytes", 0)) or size
        data = _read_all(work, check_compression(self.attrs.get("encoding", "")))
        limit = len(data) - footer
        for number, start in enumerate(range(header, max(header, limit - size + 1), hop)):
            yield f"{work}:{number}".encode(), data[start:start + size]


def _read_all(path: str, compression: str = "") -> bytes:
    stream = open_records(path, compression)
    try:
        parts = []
        while part := stream.read(_CHUNK):
            parts.append(part)
        return b"".join(parts)
    finally:
        stream.close()


class WholeFileReaderState(ReaderState):
    kind = "WholeFileReader"
    one_record_per_work = True

    def records(self, work: str) -> Iterator[Record]:
        yield work.encode(), _read_all(work)


class IdentityReaderState(ReaderState):
    """Its state is TensorFlow's ``ReaderBaseState`` proto (fields 1-4)."""

    kind = "IdentityReader"
    one_record_per_work = True

    def records(self, work: str) -> Iterator[Record]:
        yield work.encode(), work.encode()

    def serialize(self) -> bytes:
        with self.lock:
            out = b""
            for field, value in ((1, self.work_started), (2, self.work_finished), (3, self.num_records_produced)):
                if value:
                    out += _varint(field << 3) + _varint(value)
            if self.current is not None and self.work:
                work = self.work.encode()
                out += _varint(4 << 3 | 2) + _varint(len(work)) + work
            return out

    def restore(self, state: bytes) -> None:
        fields = _parse_fields(state, self.name)
        with self.lock:
            self.reset()
            self.work_started, self.work_finished, self.num_records_produced = (
                int(fields.get(i, 0)) for i in (1, 2, 3))
            if 4 in fields:
                self.work = bytes(fields[4]).decode()
                self.current = self.records(self.work)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _parse_fields(data: bytes, name: str) -> dict[int, Any]:
    """Varint and length-delimited fields of a small proto message."""
    fields: dict[int, Any] = {}
    pos = 0

    def varint() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            if pos >= len(data):
                raise InvalidArgumentError(f"Could not parse the state for IdentityReader '{name}'")
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while pos < len(data):
        key = varint()
        if key & 7 == 0:
            fields[key >> 3] = varint()
        elif key & 7 == 2:
            length = varint()
            fields[key >> 3], pos = data[pos:pos + length], pos + length
        else:
            raise InvalidArgumentError(f"Could not parse the state for IdentityReader '{name}'")
    return fields


_KINDS: dict[str, type[ReaderState]] = {
    "TFRecordReaderV2": TFRecordReaderState, "TextLineReaderV2": TextLineReaderState,
    "FixedLengthRecordReaderV2": FixedLengthRecordReaderState,
    "WholeFileReaderV2": WholeFileReaderState, "IdentityReaderV2": IdentityReaderState,
}


def _reader_kernel(op_type: str, cls: type[ReaderState]) -> None:
    @kernel(op_type, device_types=("CPU",))
    def make(ctx: KernelContext):
        name = ctx.attr("shared_name") or ctx.op.name
        attrs = dict(ctx.op.attrs)
        state = ctx.device.resources.lookup_or_create(ctx.attr("container", ""), name, lambda: cls(name, attrs))
        return lambda: state


for _op_type, _cls in _KINDS.items():
    _reader_kernel(_op_type, _cls)


def _check(reader: Any, queue: Any, op_type: str) -> tuple[ReaderState, QueueState]:
    if not isinstance(reader, ReaderState):
        raise InvalidArgumentError(f"{op_type} expects a reader handle, got {type(reader).__name__}")
    if not isinstance(queue, QueueState):
        raise InvalidArgumentError(f"{op_type} expects a queue handle, got {type(queue).__name__}")
    return reader, queue


@kernel("ReaderReadV2", needs_step=True, device_types=("CPU",))
def _read(ctx: KernelContext):
    def read(step: Any, reader: Any, queue: Any) -> tuple[Any, Any]:
        state, q = _check(reader, queue, "ReaderReadV2")
        key, value = state.read(step, q, 1)[0]
        return np.array(key, dtype=object), np.array(value, dtype=object)

    return read


@kernel("ReaderReadUpToV2", needs_step=True, device_types=("CPU",))
def _read_up_to(ctx: KernelContext):
    def read_up_to(step: Any, reader: Any, queue: Any, num_records: Any) -> tuple[Any, Any]:
        state, q = _check(reader, queue, "ReaderReadUpToV2")
        limit = int(num_records)
        if limit <= 0:
            raise InvalidArgumentError(f"ReaderReadUpToV2: num_records must be positive, got {limit}")
        records = state.read(step, q, limit)
        keys, values = np.empty(len(records), dtype=object), np.empty(len(records), dtype=object)
        for i, (key, value) in enumerate(records):
            keys[i], values[i] = key, value
        return keys, values

    return read_up_to


simple_kernel("ReaderNumRecordsProducedV2",
              lambda reader: torch.tensor(reader.num_records_produced, dtype=torch.int64))
simple_kernel("ReaderNumWorkUnitsCompletedV2",
              lambda reader: torch.tensor(reader.work_finished, dtype=torch.int64))
simple_kernel("ReaderSerializeStateV2", lambda reader: np.array(reader.serialize(), dtype=object))
simple_kernel("ReaderRestoreStateV2", lambda reader, state: reader.restore(_bytes(state)))


def _reset(reader: ReaderState) -> None:
    with reader.lock:
        reader.reset()


simple_kernel("ReaderResetV2", _reset)


def _bytes(value: Any) -> bytes:
    if isinstance(value, np.ndarray):
        value = value.reshape(-1)[0]
    return value if isinstance(value, bytes) else str(value).encode()
