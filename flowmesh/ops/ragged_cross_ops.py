"""``tf.ragged.cross`` and ``tf.ragged.cross_hashed``: per row, every combination of the
values of ragged, dense and sparse rank-2 inputs.

Each input becomes a ``SparseTensor`` holding all its entries (in the order given, as
TensorFlow's ``RaggedCross`` keeps it), the ``SparseCross`` op crosses them, and the rows of
the result come back as a ``RaggedTensor``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import name_scope
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops.cross_ops import sparse_cross, sparse_cross_hashed
from flowmesh.ops.ragged_tensor import RaggedTensor


def _as_sparse(value: Any) -> SparseTensor:
    if isinstance(value, SparseTensor):
        return value
    if not isinstance(value, RaggedTensor):
        value = convert_to_tensor(value, name="input")
        if value.shape.rank not in (None, 2):
            raise ValueError(f"tf.ragged.cross: dense inputs must have rank 2, got shape {value.shape}")
        value = RaggedTensor.from_tensor(value)
    elif value.ragged_rank != 1 or (value.shape.rank is not None and value.shape.rank != 2):
        raise ValueError(f"tf.ragged.cross: ragged inputs must have rank 2 and ragged_rank 1, got shape "
                         f"{value.shape}")
    return value.to_sparse()


def _rows(inputs: Sequence[Any]) -> list[SparseTensor]:
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("tf.ragged.cross: inputs must be a non-empty list of RaggedTensors, Tensors or "
                         "SparseTensors")
    return [_as_sparse(v) for v in inputs]


def cross(inputs: Sequence[Any], name: str | None = None) -> RaggedTensor:
    """Per row, every combination of the inputs' values, joined with ``"_X_"``.

    Args:
        inputs: rank-2 RaggedTensors, Tensors or SparseTensors of strings or int64.
        name: a name prefix.

    Returns:
        A string RaggedTensor with one row per input row.

    Raises:
        ValueError: no inputs, or an input that is not rank 2.
    """
    with name_scope(name, "RaggedCross", list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]):
        return RaggedTensor.from_sparse(sparse_cross(_rows(inputs)))


def cross_hashed(inputs: Sequence[Any], num_buckets: int = 0, hash_key: int | None = None,
                 name: str | None = None) -> RaggedTensor:
    """Like :func:`cross`, each combination fingerprinted (``FingerprintCat64``) and taken
    modulo ``num_buckets`` when it is > 0.

    Returns:
        An int64 RaggedTensor with one row per input row.
    """
    with name_scope(name, "RaggedCross", list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]):
        return RaggedTensor.from_sparse(sparse_cross_hashed(_rows(inputs), num_buckets, hash_key))
