"""``SerializeSparse`` / ``SerializeManySparse`` / ``DeserializeManySparse``: a SparseTensor as
three serialized ``TensorProto``s (indices, values, dense shape), one triple for the whole
tensor or one per minibatch row (``tf.io.serialize_sparse`` & co.; TensorFlow's bytes, so
either side reads the other's). Kernels in ``kernels/sparse_serialize_ops.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import constant_value, make_op, make_tensor
from flowmesh.ops.sparse_ops import as_sparse


def _serialize_many_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    shape = constant_value(inputs[2])
    return [(dtypes.string, TensorShape([None if shape is None else int(shape[0]), 3]))]


def _deserialize_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    shape = inputs[0].shape
    if shape.rank is not None and (shape.rank != 2 or shape.as_list()[1] not in (None, 3)):
        raise InvalidArgumentError(f"DeserializeManySparse: serialized_sparse must be [N, 3], "
                                   f"got shape {shape}")
    rank = attrs.get("rank")
    return [(dtypes.int64, TensorShape([None, rank])), (attrs["dtype"], TensorShape([None])),
            (dtypes.int64, TensorShape([rank]))]


register_op("SerializeSparse", lambda i, a: [(dtypes.string, TensorShape([3]))],
            not_differentiable=True)
register_op("SerializeManySparse", _serialize_many_shape, not_differentiable=True)
register_op("DeserializeManySparse", _deserialize_shape, not_differentiable=True)


def _components(sp_input: Any, what: str, out_type: Any) -> list[Tensor]:
    if dtypes.as_dtype(out_type) != dtypes.string:
        raise TypeError(f"{what}: out_type must be tf.string (flowmesh has no variant-encoded "
                        f"sparse tensors), got {dtypes.as_dtype(out_type).name}")
    sp = as_sparse(sp_input, what)
    return [sp.indices, sp.values, sp.dense_shape]


def serialize_sparse(sp_input: Any, name: str | None = None, out_type: Any = dtypes.string) -> Tensor:
    """A ``SparseTensor`` as a string vector ``[3]``: its indices, values and dense shape, each a
    serialized ``TensorProto`` (``tf.io.serialize_sparse``)."""
    parts = _components(sp_input, "serialize_sparse", out_type)
    return make_tensor("SerializeSparse", parts, {"T": parts[1].dtype},
                       name=name or "SerializeSparse")


def serialize_many_sparse(sp_input: Any, name: str | None = None,
                          out_type: Any = dtypes.string) -> Tensor:
    """A rank-R ``SparseTensor`` as ``[N, 3]`` strings, row ``i`` the serialized rank-(R-1)
    tensor of minibatch entry ``i`` (``tf.io.serialize_many_sparse``)."""
    parts = _components(sp_input, "serialize_many_sparse", out_type)
    return make_tensor("SerializeManySparse", parts, {"T": parts[1].dtype},
                       name=name or "SerializeManySparse")


def deserialize_many_sparse(serialized_sparse: Any, dtype: Any, rank: int | None = None,
                            name: str | None = None) -> SparseTensor:
    """``[N, 3]`` serialized sparse tensors (of one rank R-1) as one rank-R ``SparseTensor``
    whose first dimension is the row, the other dimensions the largest of the rows
    (``tf.io.deserialize_many_sparse``)."""
    serialized = convert_to_tensor(serialized_sparse, dtype=dtypes.string, name="serialized_sparse")
    attrs = {"dtype": dtypes.as_dtype(dtype), "rank": None if rank is None else int(rank)}
    op = make_op("DeserializeManySparse", [serialized], attrs, name=name or "DeserializeManySparse")
    return SparseTensor(*op.outputs)
