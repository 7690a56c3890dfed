"""A SparseTensor as one ``variant`` component of a dataset element, and back.

``SparseToElementVariant`` packs ``(indices, values, dense_shape)`` into one value;
``ElementVariantToSparse`` unpacks it (attrs ``dtype`` of the values and the static
``shape`` of the sparse tensor). ``tf.data`` inserts them where a ``SparseTensor`` enters
or leaves a pipeline (``from_tensor_slices``, a ``map`` function's arguments and results,
``get_next``); users never call them. Kernels: ``flowmesh/kernels/sparse_element_ops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops._builders import make_op, make_tensor


def _to_sparse_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    rank = as_shape(attrs["shape"]).rank
    return [(dtypes.int64, TensorShape([None, rank])), (attrs["dtype"], TensorShape([None])),
            (dtypes.int64, TensorShape([rank]))]


register_op("SparseToElementVariant", lambda inputs, attrs: [(dtypes.variant, TensorShape([]))],
            not_differentiable=True)
register_op("ElementVariantToSparse", _to_sparse_shape, not_differentiable=True)


def to_variant(sparse: Any, name: str | None = None) -> Tensor:
    """One variant scalar holding the ``SparseTensor`` ``sparse``."""
    return make_tensor("SparseToElementVariant", [sparse.indices, sparse.values, sparse.dense_shape],
                       name=name or "SparseToElementVariant")


def from_variant(variant: Tensor, dtype: Any, shape: Any, name: str | None = None) -> Any:
    """The ``SparseTensor`` (values ``dtype``, static ``shape``) held by ``variant``."""
    from flowmesh.core.sparse_tensor import SparseTensor

    op = make_op("ElementVariantToSparse", [variant], {"dtype": dtypes.as_dtype(dtype), "shape": as_shape(shape)},
                 name=name or "ElementVariantToSparse")
    return SparseTensor(*op.outputs)
