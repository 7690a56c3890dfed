"""``tf.sparse`` basics: densifying a ``SparseTensor`` (``SparseToDense``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops._builders import make_tensor, shape_from_tensor
from flowmesh.ops.nd_index_ops import gather_nd


def _to_dense_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(inputs[2].dtype, shape_from_tensor(inputs[1]))]


def _to_dense_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [None, None, gather_nd(grad, op.inputs[0]), None]


register_op("SparseToDense", _to_dense_shape, grad=_to_dense_grad)


def as_sparse(value: Any, op_name: str) -> SparseTensor:
    """``value`` as a SparseTensor (a SparseTensorValue is converted).

    Raises:
        TypeError: ``value`` is neither, naming ``op_name``.
    """
    if isinstance(value, SparseTensor):
        return value
    if not all(hasattr(value, a) for a in ("indices", "values", "dense_shape")):
        raise TypeError(f"{op_name}: input must be a SparseTensor, got {type(value).__name__}")
    return SparseTensor.from_value(value)


def sparse_to_dense(sparse_indices: Any, output_shape: Any, sparse_values: Any,
                    default_value: Any = 0, validate_indices: bool = True,
                    name: str | None = None) -> Tensor:
    """A dense tensor of ``output_shape`` with ``sparse_values`` at ``sparse_indices``."""
    values = convert_to_tensor(sparse_values, name="sparse_values")
    indices = convert_to_tensor(sparse_indices, name="sparse_indices")
    shape = convert_to_tensor(output_shape, dtype=indices.dtype, name="output_shape")
    default = convert_to_tensor(default_value, dtype=values.dtype, name="default_value")
    return make_tensor("SparseToDense", [indices, shape, values, default],
                       {"validate_indices": validate_indices}, name=name or "SparseToDense")


def to_dense(sp_input: Any, default_value: Any = None, validate_indices: bool = True,
             name: str | None = None) -> Tensor:
    """``tf.sparse.to_dense``: the dense tensor a ``SparseTensor`` describes.

    Raises:
        TypeError: ``sp_input`` is not a SparseTensor.
    """
    if not isinstance(sp_input, SparseTensor):
        if not all(hasattr(sp_input, a) for a in ("indices", "values", "dense_shape")):
            raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}")
        sp_input = SparseTensor.from_value(sp_input)
    if default_value is None:
        default_value = b"" if sp_input.dtype.name == "string" else 0
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values, default_value,
                           validate_indices, name=name or "SparseToDense")


sparse_tensor_to_dense = to_dense
