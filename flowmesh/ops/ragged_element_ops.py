"""A RaggedTensor as one ``variant`` component of a dataset element, and back.

``RaggedToElementVariant`` packs ``(flat_values, *nested_row_splits)`` into one value (attr
``row_splits_dtype``, so that a ragged-rank-0 element, which has no splits, still batches into
splits of that dtype); ``ElementVariantToRagged`` unpacks it (attrs ``dtype``, ``ragged_rank``,
``row_splits_dtype`` and the static ``flat_shape`` of the flat values). ``tf.data`` inserts
them where a ``RaggedTensor`` component enters or leaves a pipeline, as
``sparse_element_ops.py`` does for SparseTensors. Kernels:
``flowmesh/kernels/ragged_element_ops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops._builders import make_op, make_tensor


def _to_ragged_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    splits = [(attrs["row_splits_dtype"], TensorShape([None]))] * attrs["ragged_rank"]
    return [(attrs["dtype"], as_shape(attrs["flat_shape"])), *splits]


register_op("RaggedToElementVariant", lambda inputs, attrs: [(dtypes.variant, TensorShape([]))],
            not_differentiable=True)
register_op("ElementVariantToRagged", _to_ragged_shape, not_differentiable=True)


def to_variant(value: Any, row_splits_dtype: Any, name: str | None = None) -> Tensor:
    """One variant scalar holding ``value`` (a RaggedTensor, or a Tensor: ragged rank 0)."""
    parts = [value.flat_values, *value.nested_row_splits] if hasattr(value, "flat_values") else [value]
    return make_tensor("RaggedToElementVariant", parts, {"row_splits_dtype": dtypes.as_dtype(row_splits_dtype)},
                       name=name or "RaggedToElementVariant")


def from_variant(variant: Tensor, spec: Any, name: str | None = None) -> Any:
    """The value of ``spec`` (a ``RaggedTensorSpec``) held by ``variant``: a RaggedTensor, or a
    Tensor when ``spec.ragged_rank`` is 0 (as TensorFlow's ``RaggedTensorSpec``)."""
    from flowmesh.ops.ragged_tensor import RaggedTensor

    shape = spec.shape
    flat_shape = TensorShape([None]).concatenate(shape[spec.ragged_rank + 1:]) if shape.rank is not None \
        else TensorShape(None)
    if spec.ragged_rank == 0:
        flat_shape = shape
    op = make_op("ElementVariantToRagged", [variant],
                 {"dtype": spec.dtype, "ragged_rank": spec.ragged_rank, "row_splits_dtype": spec.row_splits_dtype,
                  "flat_shape": flat_shape}, name=name or "ElementVariantToRagged")
    if spec.ragged_rank == 0:
        return op.outputs[0]
    return RaggedTensor.from_nested_row_splits(op.outputs[0], op.outputs[1:], validate=False)
