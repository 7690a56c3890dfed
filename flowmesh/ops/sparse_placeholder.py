"""``tf.sparse.placeholder`` (``tf.compat.v1.sparse_placeholder``): a SparseTensor of three
placeholders, fed with a ``SparseTensorValue``."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops.constant_op import placeholder as dense_placeholder


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """A SparseTensor fed whole (``feed_dict={sp: SparseTensorValue(...)}``).

    ``shape`` (a list with ``None`` for unknown sizes) fixes the rank and, when fully known,
    the dense shape.
    """
    base = name or "Placeholder"
    rank = None if shape is None else len(shape)
    values = dense_placeholder(dtype, shape=[None], name=f"{base}/values")
    indices = dense_placeholder(dtypes.int64, shape=[None, rank], name=f"{base}/indices")
    if shape is not None and all(d is not None and int(d) >= 0 for d in shape):
        from flowmesh.core.convert import convert_to_tensor

        dense_shape = convert_to_tensor([int(d) for d in shape], dtype=dtypes.int64, name=f"{base}/shape")
    else:
        dense_shape = dense_placeholder(dtypes.int64, shape=[rank], name=f"{base}/shape")
    return SparseTensor(indices, values, dense_shape)
