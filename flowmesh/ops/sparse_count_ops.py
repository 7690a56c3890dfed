"""``tf.sparse.bincount``: counts (or summed weights) of each value as a SparseTensor
(``DenseCountSparseOutput`` / ``SparseCountSparseOutput``, kernels in
``kernels/sparse_count_ops.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops._builders import make_op
from flowmesh.ops.reduction_ops import reduce_prod


def _count_shape(values_at: int, weights_at: int):
    def rule(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        weights, values = inputs[weights_at], inputs[values_at]
        out = weights.dtype if weights.shape.num_elements() != 0 else values.dtype
        rank = inputs[0].shape.rank if values_at == 0 else inputs[2].shape.as_list()[0]
        return [(dtypes.int64, TensorShape([None, rank])), (out, TensorShape([None])),
                (dtypes.int64, TensorShape([rank]))]

    return rule


register_op("DenseCountSparseOutput", _count_shape(0, 1), not_differentiable=True)
register_op("SparseCountSparseOutput", _count_shape(1, 3), not_differentiable=True)


def bincount(values: Any, weights: Any = None, axis: int = 0, minlength: Any = None, maxlength: Any = None,
             binary_output: bool = False, name: str | None = None) -> Any:
    """``tf.sparse.bincount``: how often each value occurs (``axis=0``: over all values;
    ``axis=-1``: per row of a rank-2 input), as a SparseTensor."""
    from flowmesh.core.sparse_tensor import SparseTensor

    if axis not in (0, -1):
        raise InvalidArgumentError(f"sparse.bincount: axis must be 0 or -1, got {axis}")
    attrs = {"minlength": -1 if minlength is None else int(minlength),
             "maxlength": -1 if maxlength is None else int(maxlength), "binary_output": bool(binary_output)}
    sparse = isinstance(values, SparseTensor) or hasattr(values, "dense_shape")
    if sparse:
        sp = SparseTensor.from_value(values)
        w = sp.values if weights is None else SparseTensor.from_value(weights).values
        w = array_ops.zeros([0], dtype=sp.values.dtype) if weights is None else w
        shape = sp.dense_shape if axis == -1 else array_ops.reshape(_prod(sp.dense_shape), [1])
        op = make_op("SparseCountSparseOutput", [sp.indices, sp.values, shape, w], attrs,
                     name=name or "SparseCountSparseOutput")
        return SparseTensor(*op.outputs)
    v = convert_to_tensor(values, name="values")
    if axis == 0 or v.shape.rank == 1:
        v = array_ops.reshape(v, [-1])
    elif v.shape.rank != 2:
        raise InvalidArgumentError(f"sparse.bincount: axis=-1 needs a rank-2 input, got shape {v.shape}")
    w = array_ops.zeros([0], dtype=v.dtype) if weights is None else \
        array_ops.reshape(convert_to_tensor(weights, name="weights"), [-1])
    op = make_op("DenseCountSparseOutput", [v, w], attrs, name=name or "DenseCountSparseOutput")
    return SparseTensor(*op.outputs)


def _prod(shape: Tensor) -> Tensor:
    return reduce_prod(shape)
