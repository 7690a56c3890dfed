"""Kernel of ``RandomIndexShuffle`` (``ops/random_index_shuffle_ops.py``).

TensorFlow's documented construction (``random_index_shuffle.cc``): a cycle-walking cipher
(Black & Rogaway) over the Simon block cipher (Beaulieu et al., 2013). The block has
``B = max(16, ceil(log2(max_index)) rounded up to even)`` bits, split in two ``W = B/2``-bit
words; the three 32-bit seed words (truncated to ``W`` bits) start Simon's key schedule,
which runs to ``rounds`` round keys; an index is encrypted again until the result is
``<= max_index``, so each (seed, max_index) gives a bijection of ``[0, max_index]``.
Written here with NumPy ``uint64`` words, all outputs at once (a 16-bit block, where a walk can
take thousands of steps, is encrypted whole into a table that is then walked).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel

_C = 0xFFFFFFFC
_Z = 0x7369F885192C0EF5
_TORCH_OF = {np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64}


def block_bits(max_index: int) -> int:
    """The cipher's block size for ``max_index`` (even, at least 16, at most 64)."""
    bits = math.ceil(math.log2(max_index))
    return min(max(bits + bits % 2, 16), 64)


def _rotl(x: np.ndarray, r: int, w: int, mask: np.uint64) -> np.ndarray:
    return ((x << np.uint64(r)) | (x >> np.uint64(w - r))) & mask


def _rotr(x: np.ndarray, r: int, w: int, mask: np.uint64) -> np.ndarray:
    return ((x >> np.uint64(r)) | (x << np.uint64(w - r))) & mask


def round_keys(seeds: np.ndarray, w: int, rounds: int) -> list[np.ndarray]:
    """Simon's key schedule for each row of ``seeds`` ([n, 3] uint32 words)."""
    mask = np.uint64((1 << w) - 1)
    keys = [seeds[:, j].astype(np.uint64) & mask for j in range(3)]
    c, z = np.uint64(_C & int(mask)), _Z & int(mask)
    for i in range(3, rounds):
        bit = np.uint64(z & 1)
        keys.append(c ^ bit ^ keys[i - 3] ^ _rotr(keys[i - 1], 3, w, mask)
                    ^ _rotr(keys[i - 1], 4, w, mask))
        z >>= 1
    return keys


def encrypt(values: np.ndarray, keys: list[np.ndarray], w: int) -> np.ndarray:
    """One Simon encryption of each ``W+W``-bit block (two rounds per step)."""
    mask = np.uint64((1 << w) - 1)
    left, right = (values >> np.uint64(w)) & mask, values & mask

    def f(x: np.ndarray) -> np.ndarray:
        return (_rotl(x, 1, w, mask) & _rotl(x, 8, w, mask)) ^ _rotl(x, 2, w, mask)

    for i in range(0, len(keys) - 1, 2):
        left = left ^ f(right) ^ keys[i]
        right = right ^ f(left) ^ keys[i + 1]
    return (left << np.uint64(w)) | right


def index_shuffle(index: np.ndarray, seeds: np.ndarray, max_index: np.ndarray,
                  rounds: int) -> np.ndarray:
    """Positions of ``index`` in the permutations of ``[0, max_index]`` (uint64 arrays of
    one length; ``seeds`` is ``[n, 3]``)."""
    out = np.zeros_like(index)
    bits = np.array([block_bits(int(m)) if m > 0 else 0 for m in max_index], np.int64)
    for size in sorted(set(bits.tolist()) - {0}):
        rows = np.nonzero(bits == size)[0]
        walk = _walk_table if size == _TABLE_BITS else _walk_vectorized
        out[rows] = walk(index[rows], seeds[rows], max_index[rows], size // 2, rounds)
    return out


# A 16-bit block (every max_index < 2**14 uses one) can need thousands of cycle-walk steps
# per index: its whole permutation table is encrypted at once and walked in Python.
_TABLE_BITS = 16


def _walk_vectorized(index: np.ndarray, seeds: np.ndarray, limit: np.ndarray, w: int,
                     rounds: int) -> np.ndarray:
    keys = round_keys(seeds, w, rounds)
    value = index.copy()
    pending = np.ones(len(value), bool)
    while pending.any():  # cycle-walk until the block lands in [0, max_index]
        step = encrypt(value[pending], [k[pending] for k in keys], w)
        value[pending] = step
        pending[pending] = step > limit[pending]
    return value


def _walk_table(index: np.ndarray, seeds: np.ndarray, limit: np.ndarray, w: int,
                rounds: int) -> np.ndarray:
    out = np.empty_like(index)
    domain = np.arange(1 << (2 * w), dtype=np.uint64)
    tables: dict[tuple[int, ...], list[int]] = {}
    for i, (start, seed, top) in enumerate(zip(index.tolist(), seeds, limit.tolist())):
        key = tuple(int(k) for k in seed)
        table = tables.get(key)
        if table is None:
            keys = [np.full(len(domain), r[0], np.uint64)
                    for r in round_keys(seed[None, :], w, rounds)]
            table = tables[key] = encrypt(domain, keys, w).tolist()
        value = table[start & (len(table) - 1)]  # the cipher reads the block's low bits only
        while value > top:
            value = table[value]
        out[i] = value
    return out


@kernel("RandomIndexShuffle")
def _random_index_shuffle(ctx: KernelContext):
    rounds = int(ctx.attr("rounds", 4))
    device = ctx.torch_device

    def run(index: Any, seed: Any, max_index: Any) -> Any:
        idx, key, top = (np.asarray(v.cpu().numpy()) for v in (index, seed, max_index))
        n = max(idx.size, top.size, key.size // 3)
        _check_shapes(idx, key, top, n)
        seeds = np.broadcast_to(key.reshape(-1, 3), (n, 3)).astype(np.int64).astype(np.uint32)
        result = index_shuffle(np.broadcast_to(idx.reshape(-1), (n,)).astype(np.uint64),
                               seeds, np.broadcast_to(top.reshape(-1), (n,)).astype(np.uint64),
                               rounds)
        result = result.astype(idx.dtype)
        shaped = result.reshape(()) if idx.ndim == 0 and key.ndim == 1 and top.ndim == 0 else result
        return torch.from_numpy(np.array(shaped)).to(
            device=device, dtype=_TORCH_OF.get(idx.dtype, index.dtype))

    return run


def _check_shapes(index: np.ndarray, seed: np.ndarray, max_index: np.ndarray, n: int) -> None:
    if not (index.ndim == 0 or (index.ndim == 1 and index.shape[0] == n)):
        raise InvalidArgumentError("RandomIndexShuffle: index must be a scalar or a vector of "
                                   f"length {n}, got shape {list(index.shape)}")
    if not (seed.shape == (3,) or seed.shape == (n, 3)):
        raise InvalidArgumentError(f"RandomIndexShuffle: Seed must be a vector of size [3] or a "
                                   f"matrix of size [{n}, 3] but got {list(seed.shape)}.")
    if not (max_index.ndim == 0 or (max_index.ndim == 1 and max_index.shape[0] == n)):
        raise InvalidArgumentError("RandomIndexShuffle: Maxval must be a scalar or a vector of "
                                   f"the same size as index but got {list(max_index.shape)}")
