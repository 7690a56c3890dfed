"""File stages: TFRecord records, text lines, fixed-length records (one file after another).

Every element is a scalar string, passed along as ``bytes`` (see ``base.as_value``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from flowmesh.errors import InvalidArgumentError
from flowmesh.formats.tfrecord import (
    check_compression,
    open_records,
    read_record_blocks,
    read_records,
)
from flowmesh.kernels.pipeline.base import Block, DatasetDef, Element, string_vector
from flowmesh.kernels.pipeline.context import PipelineContext

_CHUNK = 1 << 20


def file_names(value: object, stage: str) -> list[str]:
    """The file names in a string scalar or vector value.

    Raises:
        InvalidArgumentError: a name is not a string or the value has rank > 1.
    """
    array = np.asarray(value, dtype=object)
    if array.ndim > 1:
        raise InvalidArgumentError(f"{stage}: `filenames` must be a scalar or a vector, got shape "
                                   f"{list(array.shape)}")
    names = []
    for item in array.reshape(-1):
        if isinstance(item, bytes):
            names.append(item.decode())
        elif isinstance(item, str):
            names.append(item)
        else:
            raise InvalidArgumentError(f"{stage}: file names must be strings, got {item!r}")
    return names


class TFRecordDataset(DatasetDef):
    """The records of each file in order, checksums verified."""

    def __init__(self, name: str, filenames: Sequence[str], compression: str, buffer_size: int):
        self.name = name
        self.filenames = list(filenames)
        self.compression = check_compression(compression)
        self.buffer_size = buffer_size if buffer_size > 0 else _CHUNK

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        for path in self.filenames:
            for record in read_records(path, self.compression, self.buffer_size):
                yield (record,)

    def blocks(self, ctx: PipelineContext) -> Iterator[Block]:
        for path in self.filenames:
            for records in read_record_blocks(path, self.compression, self.buffer_size):
                yield (string_vector(records),)


class TextLineDataset(DatasetDef):
    """The lines of each file without their ``\\n`` (or ``\\r\\n``)."""

    def __init__(self, name: str, filenames: Sequence[str], compression: str, buffer_size: int):
        self.name = name
        self.filenames = list(filenames)
        self.compression = check_compression(compression)
        self.buffer_size = buffer_size if buffer_size > 0 else _CHUNK

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        for path in self.filenames:
            stream = open_records(path, self.compression)
            try:
                rest = b""
                while True:
                    chunk = stream.read(self.buffer_size)
                    if not chunk:
                        break
                    lines = (rest + chunk).split(b"\n")
                    rest = lines.pop()
                    for line in lines:
                        yield (line[:-1] if line.endswith(b"\r") else line,)
                if rest:
                    yield (rest[:-1] if rest.endswith(b"\r") else rest,)
            finally:
                stream.close()


class FixedLengthRecordDataset(DatasetDef):
    """Records of ``record_bytes`` between ``header_bytes`` and ``footer_bytes`` of each file
    (a body that is not a whole number of records is an error, as in TensorFlow)."""

    def __init__(self, name: str, filenames: Sequence[str], header_bytes: int, record_bytes: int,
                 footer_bytes: int, buffer_size: int, compression: str):
        if record_bytes <= 0:
            raise InvalidArgumentError(f"FixedLengthRecordDataset '{name}': record_bytes must be "
                                       f"positive, got {record_bytes}")
        self.name = name
        self.filenames = list(filenames)
        self.layout = (max(0, header_bytes), record_bytes, max(0, footer_bytes))
        self.buffer_size = buffer_size if buffer_size > 0 else _CHUNK
        self.compression = check_compression(compression)

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        header, size, footer = self.layout
        for path in self.filenames:
            stream = open_records(path, self.compression)
            try:
                data = _read_all(stream, self.buffer_size)
            finally:
                stream.close()
            if len(data) < header + footer:
                raise InvalidArgumentError(
                    f"File {path} is {len(data)} bytes, smaller than header_bytes + footer_bytes "
                    f"= {header + footer}")
            body = memoryview(data)[header:len(data) - footer]
            if len(body) % size:
                raise InvalidArgumentError(
                    f"Excluding the header ({header} bytes) and footer ({footer} bytes), input "
                    f"file \"{path}\" has body length {len(body)} bytes, which is not an exact "
                    f"multiple of the record length ({size} bytes).")
            for start in range(0, len(body) - size + 1, size):
                yield (bytes(body[start:start + size]),)


def _read_all(stream: object, chunk: int) -> bytes:
    parts = []
    while True:
        part = stream.read(chunk)  # type: ignore[attr-defined]
        if not part:
            return b"".join(parts)
        parts.append(part)
