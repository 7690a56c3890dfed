"""Kernels of ``ops/string_hash_ops.py``: TensorFlow's ``Hash64`` (``core/lib/hash/hash.cc``:
MurmurHash64A with seed ``0xDECAFCAFFE``) and SipHash-2-4, in Python integers mod 2**64."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import torch

from flowmesh.kernels.contract.registry import KernelContext, kernel

_MASK = (1 << 64) - 1
_M = 0xC6A4A7935BD1E995


def hash64(data: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TensorFlow's ``Hash64(data, n, seed)``."""
    n = len(data)
    h = (seed ^ (n * _M)) & _MASK
    body = n - n % 8
    for (k,) in struct.iter_unpack("<Q", data[:body]):
        k = (k * _M) & _MASK
        k ^= k >> 47
        k = (k * _M) & _MASK
        h = ((h ^ k) * _M) & _MASK
    tail = data[body:]
    if tail:
        for i in range(len(tail) - 1, -1, -1):
            h ^= tail[i] << (8 * i)
        h = (h * _M) & _MASK
    h ^= h >> 47
    h = (h * _M) & _MASK
    return h ^ (h >> 47)


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _MASK


def siphash24(key: tuple[int, int], data: bytes) -> int:
    """SipHash-2-4 of ``data`` with the 128-bit key ``(k0, k1)``."""
    k0, k1 = key
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261,
         k1 ^ 0x7465646279746573]
    last = (len(data) & 0xFF) << 56
    body = len(data) - len(data) % 8
    blocks = [m for (m,) in struct.iter_unpack("<Q", data[:body])]
    blocks.append(last | int.from_bytes(data[body:], "little"))
    for m in blocks:
        v[3] ^= m
        for _ in range(2):
            v = _round(v)
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        v = _round(v)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def _round(v: list[int]) -> list[int]:
    v0, v1, v2, v3 = v
    v0 = (v0 + v1) & _MASK
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & _MASK
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & _MASK
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & _MASK
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return [v0, v1, v2, v3]


def _buckets(x: Any, fn: Any, buckets: int) -> torch.Tensor:
    arr = np.asarray(x, dtype=object)
    out = np.empty(arr.shape, np.int64)
    for i, item in np.ndenumerate(arr):
        data = item if isinstance(item, bytes) else str(item).encode()
        out[i] = fn(data) % buckets
    return torch.from_numpy(out)


@kernel("StringToHashBucket", device_types=("CPU",))
def _hash_bucket(ctx: KernelContext):
    buckets = ctx.attr("num_buckets")
    return lambda x: _buckets(x, hash64, buckets)


@kernel("StringToHashBucketStrong", device_types=("CPU",))
def _hash_bucket_strong(ctx: KernelContext):
    buckets, key = ctx.attr("num_buckets"), tuple(k & _MASK for k in ctx.attr("key"))
    return lambda x: _buckets(x, lambda data: siphash24(key, data), buckets)
