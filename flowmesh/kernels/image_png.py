"""PNG files written and (for what Pillow cannot read: 16-bit colour) read directly: chunks,
zlib, and the five row filters of the PNG specification. Used by ``kernels/image_codec.py``."""

from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}
_CHANNELS = {0: 1, 4: 2, 2: 3, 6: 4}


def _chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def png_bytes(array: np.ndarray, compression: int) -> bytes:
    """A ``[h, w, c]`` uint8/uint16 array (1-4 channels) as a PNG file (filter 0 rows)."""
    height, width, channels = array.shape
    depth = 16 if array.dtype == np.uint16 else 8
    samples = array.astype(">u2") if depth == 16 else array
    rows = np.ascontiguousarray(samples).view(np.uint8).reshape(height, -1)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()
    header = struct.pack(">IIBBBBB", width, height, depth, _COLOR_TYPE[channels], 0, 0, 0)
    return (SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, compression))
            + _chunk(b"IEND", b""))


def header(data: bytes) -> tuple[int, int, int, int, int] | None:
    """``(width, height, bit depth, colour type, interlace)`` of a PNG, None if not one."""
    if len(data) < 33 or not data.startswith(SIGNATURE) or data[12:16] != b"IHDR":
        return None
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    return width, height, depth, color, interlace


def _chunks(data: bytes):
    pos = len(SIGNATURE)
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        payload = data[pos + 8:pos + 8 + length]
        if len(payload) != length or len(data) < pos + 12 + length:
            raise ValueError(f"chunk {kind!r} at byte {pos} is truncated")
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + payload) & 0xFFFFFFFF != crc:
            raise ValueError(f"chunk {kind!r} at byte {pos} has a bad CRC")
        yield kind, payload
        pos += 12 + length


def _paeth(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _unfilter(kind: int, row: np.ndarray, prev: np.ndarray, bpp: int) -> np.ndarray:
    if kind == 0:
        return row
    if kind == 2:
        return row + prev
    if kind == 1:
        return np.cumsum(row.reshape(-1, bpp), axis=0).reshape(-1) & 255
    if kind not in (3, 4):
        raise ValueError(f"unknown row filter {kind}")
    out = row.copy()
    left = np.zeros(bpp, np.int64)
    upleft = np.zeros(bpp, np.int64)
    for start in range(0, len(row), bpp):
        up = prev[start:start + bpp]
        pred = (left + up) // 2 if kind == 3 else _paeth(left, up, upleft)
        left = (row[start:start + bpp] + pred) & 255
        out[start:start + bpp] = left
        upleft = up
    return out


def decode_sixteen_bit(data: bytes) -> np.ndarray:
    """The samples of a non-interlaced 16-bit PNG as ``[h, w, c]`` uint16."""
    width, height, depth, color, interlace = header(data)
    if depth != 16 or color not in _CHANNELS or interlace:
        raise ValueError(f"only non-interlaced 16-bit gray/RGB(A) PNGs are read directly "
                         f"(depth {depth}, colour type {color}, interlace {interlace})")
    compressed = b"".join(payload for kind, payload in _chunks(data) if kind == b"IDAT")
    bpp = 2 * _CHANNELS[color]
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(compressed), np.uint8)
    if raw.size < height * (stride + 1):
        raise ValueError(f"image data holds {raw.size} bytes, {height * (stride + 1)} needed")
    rows = raw[:height * (stride + 1)].reshape(height, stride + 1).astype(np.int64)
    prev = np.zeros(stride, np.int64)
    out = np.empty((height, stride), np.uint8)
    for y in range(height):
        prev = _unfilter(int(rows[y, 0]), rows[y, 1:], prev, bpp) & 255
        out[y] = prev
    return out.view(">u2").reshape(height, width, _CHANNELS[color]).astype(np.uint16)
