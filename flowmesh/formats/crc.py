"""TensorFlow's (and leveldb's) masked CRC-32C, the checksum of every file format it writes.

A CRC stored next to data that may itself contain CRCs is *masked*:
``masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8`` (mod 2**32), as in
``tensorflow/core/lib/hash/crc32c.h``. TFRecord files (``formats/tfrecord.py``), event files,
SSTable blocks and tensor-bundle entries (``checkpoint/``) all use it. CRC-32C itself comes
from the ``crc32c`` package (hardware accelerated).
"""

from __future__ import annotations

from typing import Any

import crc32c as _crc32c

MASK_DELTA = 0xA282EAD8


#: ``crc32c(data, value=0)``: the CRC-32C of ``data``, continuing from ``value`` (a previous
#: unmasked CRC); the package's C function itself, for the per-record loops.
crc32c = _crc32c.crc32c


def mask(crc: int) -> int:
    """The masked form of an unmasked CRC (what is stored in the file)."""
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """The CRC a stored masked value came from."""
    rot = (masked - MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def masked_crc32c(data: Any) -> int:
    """The masked CRC-32C of ``data``."""
    return mask(_crc32c.crc32c(data))
