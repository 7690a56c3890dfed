"""``tf.random_index_shuffle``: the position of an index in a seeded pseudorandom
permutation of ``[0, max_index]``, computed without materializing the permutation
(TensorFlow's ``RandomIndexShuffle``; the construction is in the kernel's docstring,
``kernels/random_index_shuffle_ops.py``). Values equal TensorFlow's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_tensor

_INDEX_DTYPES = (dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64)


def _shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    index, seed, max_index = inputs
    if index.dtype != max_index.dtype:
        raise TypeError(f"RandomIndexShuffle: index ({index.dtype.name}) and max_index "
                        f"({max_index.dtype.name}) must have the same dtype")
    if index.dtype not in _INDEX_DTYPES:
        raise TypeError(f"RandomIndexShuffle: index must be int32, int64, uint32 or uint64, got "
                        f"{index.dtype.name}")
    if seed.dtype not in _INDEX_DTYPES:
        raise TypeError(f"RandomIndexShuffle: Invalid seed type: {seed.dtype.name}")
    ranks = (index.shape.rank, seed.shape.rank, max_index.shape.rank)
    if ranks == (0, 1, 0):
        return [(index.dtype, TensorShape([]))]
    sizes = [index.shape.as_list()[0] if index.shape.rank == 1 else None,
             seed.shape.as_list()[0] if seed.shape.rank == 2 else None,
             max_index.shape.as_list()[0] if max_index.shape.rank == 1 else None]
    known = [s for s in sizes if s is not None]
    return [(index.dtype, TensorShape([known[0] if known else None]))]


register_op("RandomIndexShuffle", _shape, not_differentiable=True)


def random_index_shuffle(index: Any, seed: Any, max_index: Any, rounds: int = 4,
                         name: str | None = None) -> Tensor:
    """Where ``index`` lands in the permutation of ``[0, max_index]`` keyed by ``seed``.

    Args:
        index: a scalar or vector of int32/int64/uint32/uint64 in ``[0, max_index]``.
        seed: 3 integers (shape ``[3]``) or one row of 3 per index (``[n, 3]``).
        max_index: the permutation's largest value (scalar or one per index).
        rounds: cipher rounds, an even number >= 4 (more rounds: better mixing).
        name: op name.

    Returns:
        The permuted indices, of ``index``'s dtype (a scalar when all inputs are
        unbatched, else a vector).

    Raises:
        ValueError: ``rounds`` is odd or below 4.
    """
    if rounds < 4 or rounds % 2:
        raise ValueError(f"random_index_shuffle: rounds must be an even number >= 4, got {rounds}")
    index = convert_to_tensor(index, dtype_hint=dtypes.int64, name="index")
    max_index = convert_to_tensor(max_index, dtype=index.dtype, name="max_index")
    seed = convert_to_tensor(seed, dtype_hint=dtypes.int64, name="seed")
    return make_tensor("RandomIndexShuffle", [index, seed, max_index], {"rounds": int(rounds)},
                       name=name or "RandomIndexShuffle")


__all__ = ["random_index_shuffle"]


_SEED_PAD = 498247692  # TensorFlow's first seed word for index_shuffle (its op takes 3 words)


def index_shuffle(index: Any, seed: Any, max_index: Any) -> Tensor:
    """``tf.random.experimental.index_shuffle``: the position of ``index`` in the permutation
    of ``[0, max_index]`` keyed by ``seed`` (shape ``[2]``, like every stateless op's seed),
    as TensorFlow computes it: the seed gets TensorFlow's constant first word and goes to
    ``RandomIndexShuffle`` with 4 rounds.

    Args:
        index: a scalar or vector of int32/int64/uint32/uint64 in ``[0, max_index]``.
        seed: shape ``[2]``, int32/int64/uint32/uint64.
        max_index: the permutation's largest value (scalar or one per index).

    Returns:
        The permuted indices, of ``index``'s dtype.
    """
    from flowmesh.ops.manip_ops import pad

    seed = convert_to_tensor(seed, dtype_hint=dtypes.int64, name="seed")
    rank = 1 if seed.shape.rank is None else seed.shape.rank
    seed = pad(seed, [[1, 0]] + [[0, 0]] * (rank - 1), constant_values=_SEED_PAD)
    return random_index_shuffle(index, seed, max_index, rounds=4, name="index_shuffle")
