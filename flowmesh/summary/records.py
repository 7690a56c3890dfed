"""The TFRecord framing of event files (and of ``.tfrecord`` data files).

Each record is::

    uint64 length            little endian
    uint32 masked_crc32c(length)
    bytes  data[length]
    uint32 masked_crc32c(data)

where ``masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8`` (mod 2**32), as in
TensorFlow's ``core/lib/io/record_writer.cc``. :func:`read_records` checks both checksums,
so a torn or corrupted file is reported, never misread.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import IO

import crc32c

from flowmesh.errors import DataLossError

_MASK_DELTA = 0xA282EAD8
_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")


def masked_crc32c(data: bytes) -> int:
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    """One framed record."""
    length = _LENGTH.pack(len(data))
    return b"".join((length, _CRC.pack(masked_crc32c(length)), data, _CRC.pack(masked_crc32c(data))))


def read_records(f: IO[bytes], name: str = "record file") -> Iterator[bytes]:
    """The records of an open binary file, in order.

    A file that ends in the middle of a record (a writer still appending, or killed) ends
    the iteration there, as TensorFlow's readers do.

    Raises:
        DataLossError: a checksum does not match (the file is corrupted).
    """
    offset = 0
    while True:
        header = f.read(_LENGTH.size + _CRC.size)
        if len(header) < _LENGTH.size + _CRC.size:
            return
        length_bytes, length_crc = header[:_LENGTH.size], _CRC.unpack(header[_LENGTH.size:])[0]
        if masked_crc32c(length_bytes) != length_crc:
            raise DataLossError(None, None, f"Corrupted record length at byte {offset} of {name}")
        (length,) = _LENGTH.unpack(length_bytes)
        body = f.read(length + _CRC.size)
        if len(body) < length + _CRC.size:
            return
        data = body[:length]
        if masked_crc32c(data) != _CRC.unpack(body[length:])[0]:
            raise DataLossError(None, None, f"Corrupted record data at byte {offset} of {name}")
        offset += len(header) + len(body)
        yield data
