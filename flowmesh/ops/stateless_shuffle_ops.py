"""``tf.random.experimental.stateless_shuffle``: a permutation of a tensor's first dimension
that is a deterministic function of a seed.

The permutation sorts one stateless 64-bit random key per row (``argsort`` is stable, so
equal keys, which are vanishingly rare, keep their order): the same ``value`` and ``seed``
give the same output on every run, as TensorFlow promises; the permutation itself is not
TensorFlow's (its ``StatelessShuffle`` kernel's Philox stream is not reproduced, as for
every flowmesh stateless op).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops.array_ops import shape
from flowmesh.ops.gather_ops import gather
from flowmesh.ops.random_dist_ops import stateless_random_uniform_full_int
from flowmesh.ops.sort_ops import argsort


def stateless_shuffle(value: Any, seed: Any, alg: Any = "auto_select", name: str | None = None) -> Tensor:
    """``value`` with its rows (dimension 0) permuted by ``seed``.

    Args:
        value: a tensor of rank >= 1.
        seed: shape ``[2]``, int32 or int64.
        alg: the RNG algorithm (accepted for compatibility: flowmesh has one stateless
            generator).
        name: name scope of the ops.

    Returns:
        A tensor of ``value``'s shape and dtype.

    Raises:
        ValueError: ``value`` is a scalar.
    """
    with name_scope(name, "stateless_shuffle", [value, seed]):
        value = convert_to_tensor(value, name="value")
        if value.shape.rank == 0:
            raise ValueError(f"stateless_shuffle: value must have rank >= 1 (it shuffles dimension 0), got "
                             f"a scalar {value.name}")
        rows = shape(value, out_type=dtypes.int64)[:1]
        keys = stateless_random_uniform_full_int(rows, seed, dtype=dtypes.int64)
        return gather(value, argsort(keys, stable=True))
