"""``tf.sets``: set operations along the last dimension of dense or sparse tensors
(``DenseToDenseSetOperation``, ``DenseToSparseSetOperation``, ``SparseToSparseSetOperation``,
``SetSize``), with TensorFlow's rules: each row (all dimensions but the last) is a set, the
result is a SparseTensor whose rows hold the sorted members and whose last dimension is the
largest row's size. Kernels in ``kernels/set_ops.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_op, make_tensor
from flowmesh.ops.sparse_top_level import convert_to_tensor_or_sparse_tensor

_TYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.string)
_OPERATIONS = ("a-b", "b-a", "intersection", "union")


def _result_shape(sparse_first: bool):
    def shape_fn(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
        if sparse_first:
            dense_shape = inputs[2].shape
            rank = dense_shape.as_list()[0] if dense_shape.rank == 1 else None
        else:
            rank = inputs[0].shape.rank
        if rank is not None and rank < 2:
            raise InvalidArgumentError(f"tf.sets: inputs must be at least 2-D (rows of sets), got rank {rank}")
        return [(dtypes.int64, TensorShape([None, rank])), (attrs["T"], TensorShape([None])),
                (dtypes.int64, TensorShape([rank]))]
    return shape_fn


register_op("DenseToDenseSetOperation", _result_shape(False), not_differentiable=True)
register_op("DenseToSparseSetOperation", _result_shape(False), not_differentiable=True)
register_op("SparseToSparseSetOperation", _result_shape(True), not_differentiable=True)
register_op("SetSize", lambda inputs, attrs: [(dtypes.int32, TensorShape(None))], not_differentiable=True)


def _check_type(value: Any, what: str) -> None:
    if value.dtype not in _TYPES:
        raise TypeError(f"tf.sets: {what} must be an integer or string tensor, got {value.dtype.name}")


def _set_operation(a: Any, b: Any, operation: str, validate_indices: bool) -> SparseTensor:
    """``a`` dense or sparse, ``b`` dense or sparse; a sparse ``a`` with a dense ``b`` is
    the caller's job to flip (TensorFlow has no SparseToDense set op)."""
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    b = convert_to_tensor_or_sparse_tensor(b, name="b")
    _check_type(a, "a")
    _check_type(b, "b")
    if a.dtype != b.dtype:
        raise TypeError(f"tf.sets: types of a ({a.dtype.name}) and b ({b.dtype.name}) differ")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise InvalidArgumentError("tf.sets: a sparse 'a' needs a sparse 'b' (flip the operands)")
    attrs = {"set_operation": operation, "validate_indices": bool(validate_indices), "T": a.dtype}
    if isinstance(a, SparseTensor):
        op = make_op("SparseToSparseSetOperation", [a.indices, a.values, a.dense_shape, b.indices, b.values,
                                                    b.dense_shape], attrs, name="SparseToSparseSetOperation")
    elif isinstance(b, SparseTensor):
        op = make_op("DenseToSparseSetOperation", [a, b.indices, b.values, b.dense_shape], attrs,
                     name="DenseToSparseSetOperation")
    else:
        op = make_op("DenseToDenseSetOperation", [a, b], attrs, name="DenseToDenseSetOperation")
    return SparseTensor(*op.outputs)


def set_size(a: Any, validate_indices: bool = True) -> Tensor:
    """The number of distinct members of each set (row) of the SparseTensor ``a``, as int32
    of ``a``'s dense shape without its last dimension."""
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r}.")
    _check_type(a, "a")
    return make_tensor("SetSize", [a.indices, a.values, a.dense_shape], {"validate_indices": bool(validate_indices)},
                       name="SetSize")


def set_intersection(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """The members each row of ``a`` shares with the same row of ``b``."""
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    b = convert_to_tensor_or_sparse_tensor(b, name="b")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        a, b = b, a
    with name_scope(None, "set_intersection"):
        return _set_operation(a, b, "intersection", validate_indices)


def set_difference(a: Any, b: Any, aminusb: bool = True, validate_indices: bool = True) -> SparseTensor:
    """The members of each row of ``a`` not in ``b`` (``b - a`` with ``aminusb=False``)."""
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    b = convert_to_tensor_or_sparse_tensor(b, name="b")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        a, b, aminusb = b, a, not aminusb
    with name_scope(None, "set_difference"):
        return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


def set_union(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """The members of each row of ``a`` or of ``b``."""
    a = convert_to_tensor_or_sparse_tensor(a, name="a")
    b = convert_to_tensor_or_sparse_tensor(b, name="b")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        a, b = b, a
    with name_scope(None, "set_union"):
        return _set_operation(a, b, "union", validate_indices)
