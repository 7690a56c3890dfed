"""The immutable sorted table (leveldb's SSTable) TensorFlow uses as a checkpoint's ``.index``.

Layout (``tensorflow/core/lib/io/table_builder.cc``, leveldb's ``table_format.md``)::

    [data block][trailer] ... [metaindex block][trailer] [index block][trailer] [footer]

A block holds prefix-compressed entries ``varint shared | varint unshared | varint
value_len | key suffix | value`` followed by ``uint32`` restart offsets and their count;
its trailer is a compression byte (0: none; TensorFlow never compresses bundle indexes)
and the masked CRC-32C of block + compression byte. The index block maps a key >= every
key of a data block to that block's handle (``varint offset | varint size``); the 48-byte
footer holds the metaindex and index handles, zero padding and the magic number.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence

from flowmesh.errors import DataLossError
from flowmesh.formats.crc import crc32c, mask, unmask

MAGIC = 0xDB4775248B80FB57
FOOTER_BYTES = 48
_RESTART_INTERVAL = 16
_BLOCK_BYTES = 4096
_U32 = struct.Struct("<I")


def put_varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def get_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it. Raises ValueError when truncated."""
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def is_table(data: bytes) -> bool:
    """True when ``data`` ends with the table magic number (an SSTable, not a flowmesh index)."""
    return len(data) >= FOOTER_BYTES and struct.unpack_from("<Q", data, len(data) - 8)[0] == MAGIC


# --- writing --------------------------------------------------------------------------------------
def _block(entries: Sequence[tuple[bytes, bytes]], interval: int) -> bytes:
    out = bytearray()
    restarts: list[int] = []
    previous = b""
    for i, (key, value) in enumerate(entries):
        shared = 0
        if i % interval == 0:
            restarts.append(len(out))
        else:
            limit = min(len(previous), len(key))
            while shared < limit and previous[shared] == key[shared]:
                shared += 1
        put_varint(out, shared)
        put_varint(out, len(key) - shared)
        put_varint(out, len(value))
        out += key[shared:]
        out += value
        previous = key
    for r in restarts or [0]:
        out += _U32.pack(r)
    out += _U32.pack(len(restarts or [0]))
    return bytes(out)


def _append_block(out: bytearray, block: bytes) -> bytes:
    handle = bytearray()
    put_varint(handle, len(out))
    put_varint(handle, len(block))
    out += block
    out += b"\x00" + _U32.pack(mask(crc32c(b"\x00", crc32c(block))))
    return bytes(handle)


def write_table(items: Sequence[tuple[bytes, bytes]]) -> bytes:
    """The table bytes of ``items`` (keys strictly increasing, bytewise)."""
    out = bytearray()
    index: list[tuple[bytes, bytes]] = []
    pending: list[tuple[bytes, bytes]] = []
    size = 0
    for i, (key, value) in enumerate(items):
        if i and key <= items[i - 1][0]:
            raise ValueError(f"table keys must be strictly increasing: {items[i - 1][0]!r} then {key!r}")
        pending.append((key, value))
        size += len(key) + len(value) + 3
        if size >= _BLOCK_BYTES:
            index.append((key, _append_block(out, _block(pending, _RESTART_INTERVAL))))
            pending, size = [], 0
    if pending:
        index.append((pending[-1][0], _append_block(out, _block(pending, _RESTART_INTERVAL))))
    meta_handle = _append_block(out, _block([], 1))
    index_handle = _append_block(out, _block(index, 1))
    footer = (meta_handle + index_handle).ljust(FOOTER_BYTES - 8, b"\x00")
    return bytes(out + footer + struct.pack("<Q", MAGIC))


# --- reading --------------------------------------------------------------------------------------
def _handle(data: bytes, pos: int) -> tuple[int, int, int]:
    offset, pos = get_varint(data, pos)
    size, pos = get_varint(data, pos)
    return offset, size, pos


def _read_block(data: bytes, offset: int, size: int) -> memoryview:
    end = offset + size
    if end + 5 > len(data):
        raise ValueError(f"block [{offset}, {end}) runs past the end of the file")
    view = memoryview(data)
    kind = data[end]
    stored = _U32.unpack_from(data, end + 1)[0]
    if unmask(stored) != crc32c(view[end:end + 1], crc32c(view[offset:end])):
        raise ValueError(f"block at offset {offset} fails its CRC-32C check")
    if kind != 0:
        raise ValueError(f"block at offset {offset} is compressed (type {kind}), which TensorFlow "
                         "never does for checkpoint indexes")
    return view[offset:end]


def _entries(block: memoryview) -> Iterator[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise ValueError("block too short")
    restarts = _U32.unpack_from(block, len(block) - 4)[0]
    limit = len(block) - 4 - 4 * restarts
    if limit < 0:
        raise ValueError("bad restart count")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = get_varint(block, pos)
        unshared, pos = get_varint(block, pos)
        length, pos = get_varint(block, pos)
        if shared > len(key) or pos + unshared + length > limit:
            raise ValueError("entry runs past its block")
        key = key[:shared] + bytes(block[pos:pos + unshared])
        pos += unshared
        yield key, bytes(block[pos:pos + length])
        pos += length


def read_table(data: bytes, path: str) -> list[tuple[bytes, bytes]]:
    """Every ``(key, value)`` of the table in ``data``, in key order.

    Raises:
        DataLossError: naming ``path`` when the table is truncated or fails a checksum.
    """
    try:
        if not is_table(data):
            raise ValueError("no table magic number at its end (truncated, or not a table)")
        footer = len(data) - FOOTER_BYTES
        _, _, pos = _handle(data, footer)
        index_offset, index_size, _ = _handle(data, pos)
        items: list[tuple[bytes, bytes]] = []
        for _, handle in _entries(_read_block(data, index_offset, index_size)):
            offset, size, _ = _handle(handle, 0)
            items.extend(_entries(_read_block(data, offset, size)))
        return items
    except (ValueError, IndexError, struct.error) as exc:
        raise DataLossError(None, None, f"Checkpoint index {path} is corrupted: {exc}. Restore an "
                            "earlier checkpoint.") from None
