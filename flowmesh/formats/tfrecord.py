"""TFRecord files: framing, GZIP/ZLIB streams, on local paths and fsspec URLs.

Each record is TensorFlow's (``core/lib/io/record_writer.cc``)::

    uint64 length                 little endian
    uint32 masked_crc32c(length)
    bytes  data[length]
    uint32 masked_crc32c(data)

with the masked CRC-32C of ``formats/crc.py``. A compressed
file (``GZIP`` or ``ZLIB``) is one compressed stream of those bytes. Both checksums are
checked on every record; a mismatch or a file that ends inside a record raises
``DataLossError`` naming the file and the record's byte offset (in the uncompressed
stream for compressed files), never a silent short read. Event files (``summary/``) are
TFRecord files too; :func:`read_stream_records` reads them from an open file that a writer
may still be appending to.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from flowmesh.errors import DataLossError, InvalidArgumentError, NotFoundError
from flowmesh.formats import filesystem as fs
from flowmesh.formats.crc import MASK_DELTA, crc32c, masked_crc32c

_HEADER = struct.Struct("<QI")
_CRC = struct.Struct("<I")
_CHUNK = 1 << 20
_MIN_RUN = 16  # same-size records framed together (below: one at a time)
COMPRESSION_TYPES = ("", "ZLIB", "GZIP")


def encode_record(data: bytes) -> bytes:
    """One framed record."""
    length = struct.pack("<Q", len(data))
    return b"".join((length, _CRC.pack(masked_crc32c(length)), data,
                     _CRC.pack(masked_crc32c(data))))


def read_stream_records(f: IO[bytes], name: str = "record file") -> Iterator[bytes]:
    """The records of an open binary file, in order (event files).

    A file that ends in the middle of a record (a writer still appending, or killed) ends
    the iteration there, as TensorFlow's event readers do.

    Raises:
        DataLossError: a checksum does not match (the file is corrupted).
    """
    offset = 0
    while True:
        header = f.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        length_bytes, length_crc = header[:8], _CRC.unpack(header[8:])[0]
        if masked_crc32c(length_bytes) != length_crc:
            raise DataLossError(None, None, f"Corrupted record length at byte {offset} of {name}")
        (length,) = struct.unpack("<Q", length_bytes)
        body = f.read(length + _CRC.size)
        if len(body) < length + _CRC.size:
            return
        data = body[:length]
        if masked_crc32c(data) != _CRC.unpack(body[length:])[0]:
            raise DataLossError(None, None, f"Corrupted record data at byte {offset} of {name}")
        offset += len(header) + len(body)
        yield data


def check_compression(compression_type: Any) -> str:
    """``None``/``""``/``"ZLIB"``/``"GZIP"`` (any case) -> the canonical name.

    Raises:
        InvalidArgumentError: an unknown compression type.
    """
    name = (compression_type or "")
    name = name.decode() if isinstance(name, bytes) else str(name)
    name = name.upper()
    if name not in COMPRESSION_TYPES:
        raise InvalidArgumentError(f"Unsupported compression_type {compression_type!r}: use "
                                   "'', 'ZLIB' or 'GZIP'")
    return name


class _Decompressed:
    """A ``read(n)`` view of a ZLIB or GZIP stream."""

    def __init__(self, raw: IO[bytes], compression: str, name: str):
        self._raw = raw
        self._name = name
        self._inflate = zlib.decompressobj(wbits=31 if compression == "GZIP" else 15)
        self._compression = compression
        self._buffer = b""
        self._eof = False

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n and not self._eof:
            chunk = self._raw.read(_CHUNK)
            try:
                if chunk:
                    self._buffer += self._inflate.decompress(chunk)
                else:
                    self._buffer += self._inflate.flush()
                    self._eof = True
                while self._inflate.eof and self._inflate.unused_data:  # concatenated members
                    rest = self._inflate.unused_data
                    self._inflate = zlib.decompressobj(wbits=31 if self._compression == "GZIP" else 15)
                    self._buffer += self._inflate.decompress(rest)
            except zlib.error as exc:
                raise DataLossError(f"{self._name}: corrupted {self._compression} stream ({exc})") \
                    from None
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def close(self) -> None:
        self._raw.close()


def open_records(path: str, compression: str = "") -> Any:
    """Opens a record file for reading (``read(n)``/``close()``), decompressing if asked.

    Raises:
        NotFoundError: the file does not exist (naming the path).
    """
    if not fs.exists(path):
        raise NotFoundError(f"{path}; No such file or directory")
    raw = fs.open_read(path)
    return raw if not compression else _Decompressed(raw, compression, path)


def read_records(path: str, compression: str = "", buffer_size: int = _CHUNK) -> Iterator[bytes]:
    """The records of the file at ``path``, every checksum verified.

    Raises:
        NotFoundError: the file is missing.
        DataLossError: a checksum mismatch or a truncated record (file and byte offset).
    """
    for block in read_record_blocks(path, compression, buffer_size):
        yield from block


def read_record_blocks(path: str, compression: str = "",
                       buffer_size: int = _CHUNK) -> Iterator[list[bytes]]:
    """The records of the file at ``path`` in lists, one per read buffer (every checksum
    verified): what :func:`read_records` yields one at a time.

    Raises:
        NotFoundError: the file is missing.
        DataLossError: a checksum mismatch or a truncated record (file and byte offset),
            after the records before it.
    """
    stream = open_records(path, compression)
    try:
        yield from _record_blocks(stream, path, max(buffer_size, 1 << 16))
    finally:
        stream.close()


def _record_blocks(stream: Any, path: str, chunk: int) -> Iterator[list[bytes]]:
    """Frames the stream a buffer at a time: every complete record of a buffer is checked
    and cut out (:func:`_frame`), then handed out as one list."""
    buf, base = b"", 0  # base: file offset of buf[0]
    checked: dict[int, int] = {}
    while True:
        records, pos, need, error = _frame(buf, base, path, checked)
        if records:
            yield records
        if error is not None:  # the records before a corrupted one are still read
            raise error
        buf, base = buf[pos:], base + pos
        more = stream.read(max(chunk, need - len(buf)))
        if not more:
            if buf:
                raise _truncated(path, base, len(buf))
            return
        buf += more


def _frame(buf: bytes, base: int, path: str,
           checked: dict[int, int]) -> tuple[list[bytes], int, int, DataLossError | None]:
    """The complete records at the start of ``buf`` (checksums verified), where the rest
    starts, how many bytes the next record needs, and the error of a corrupted record that
    ended the run (``None`` if none). ``checked`` caches the masked CRC of length fields
    already verified (records of one size share their header)."""
    out: list[bytes] = []
    append, crc = out.append, crc32c
    unpack_header, unpack_crc = _HEADER.unpack_from, _CRC.unpack_from
    header_size, size, pos = _HEADER.size, len(buf), 0
    while size - pos >= header_size:
        length, length_crc = unpack_header(buf, pos)
        if checked.get(length) != length_crc:
            c = crc(buf[pos:pos + 8])  # crc.mask, inlined in this loop
            if ((((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF) != length_crc:
                return out, pos, 0, DataLossError(
                    f"corrupted record at {base + pos} in {path}: the length's checksum does "
                    "not match (not a TFRecord file, or a wrong compression_type?)")
            if len(checked) > 256:
                checked.clear()
            checked[length] = length_crc
        end = pos + header_size + length
        if end + 4 > size:
            return out, pos, end + 4 - pos, None
        stride = end + 4 - pos
        probe = pos + (_MIN_RUN - 1) * stride  # a run is likely when that record looks alike
        if probe + stride <= size and unpack_header(buf, probe) == (length, length_crc):
            run = _same_header_run(buf, pos, stride)
            good = _cut_run(buf, pos, length, run, out)
            if good < run:
                return out, pos + good * stride, 0, _bad_data(path, base + pos + good * stride,
                                                              length)
            pos += run * stride
            continue
        data = buf[pos + header_size:end]
        c = crc(data)
        if ((((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF) != unpack_crc(buf, end)[0]:
            return out, pos, 0, _bad_data(path, base + pos, length)
        append(data)
        pos = end + 4
    return out, pos, header_size, None


def _same_header_run(buf: bytes, pos: int, stride: int) -> int:
    """How many records from ``pos`` (at least 1) have the header (length and its checksum)
    of the first, assuming each is ``stride`` bytes long: the run :func:`_cut_run` frames at
    once."""
    fits = (len(buf) - pos) // stride
    headers = np.ndarray((fits, _HEADER.size), np.uint8, buf, pos, (stride, 1))
    same = (headers == headers[0]).all(axis=1)
    return fits if same.all() else int(same.argmin())


def _cut_run(buf: bytes, pos: int, length: int, run: int, out: list[bytes]) -> int:
    """Appends the data of ``run`` records of ``length`` bytes each (headers already
    checked) to ``out``, checking each one's data checksum; returns how many were good (the
    records after a bad one are not appended)."""
    stride = length + _HEADER.size + 4
    start = pos + _HEADER.size
    records = np.ndarray((run,), np.dtype((np.void, length)), buf, start, (stride,)).tolist()
    crc = np.fromiter(map(crc32c, records), np.uint32, run)
    masked = ((crc >> 15) | (crc << 17)) + np.uint32(MASK_DELTA)  # wraps mod 2**32
    stored = np.ndarray((run,), "<u4", buf, start + length, (stride,))
    bad = np.flatnonzero(masked != stored)
    good = int(bad[0]) if len(bad) else run
    out.extend(records[:good] if good < run else records)
    return good


def _bad_data(path: str, offset: int, length: int) -> DataLossError:
    return DataLossError(f"corrupted record at {offset} in {path}: the data's checksum does "
                         f"not match ({length} bytes)")


def _truncated(path: str, offset: int, available: int) -> DataLossError:
    return DataLossError(f"truncated record at {offset} in {path}: the file ends {available} "
                         "bytes into the record (an interrupted writer?)")


class RecordWriter:
    """Appends framed records to a file (optionally compressed).

    Args:
        path: a local path or fsspec URL (overwritten).
        compression: ``""``, ``"ZLIB"`` or ``"GZIP"``.
        level: the compression level (TensorFlow's default: 6... zlib's default).
    """

    def __init__(self, path: str, compression: str = "", level: int = -1):
        self.path = path
        self._file = _open_write(path)
        self._deflate = None
        if compression:
            wbits = 31 if compression == "GZIP" else 15
            self._deflate = zlib.compressobj(level, zlib.DEFLATED, wbits)

    def write(self, record: bytes) -> None:
        framed = encode_record(bytes(record))
        self._file.write(self._deflate.compress(framed) if self._deflate else framed)

    def flush(self) -> None:
        if self._deflate is not None:
            self._file.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        if self._file is None:
            return
        if self._deflate is not None:
            self._file.write(self._deflate.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None


def _open_write(path: str) -> IO[bytes]:
    if fs.is_url(path):
        import fsspec

        return fsspec.open(path, "wb").open()
    try:
        return open(path[len("file://"):] if path.startswith("file://") else path, "wb")  # noqa: SIM115
    except OSError as exc:
        raise fs.os_error(exc, path, "Opening") from None
