"""``dense_to_sparse_batch``: batches of variable-shape elements as one ``SparseTensor``
holding every entry (zeros included), whose dense shape is ``[batch, *row_shape]``.

Built from flowmesh's stages: each element becomes a SparseTensor of all its coordinates
(row-major, as TensorFlow's ``DenseToSparseBatchDataset`` orders them), sparse batching
stacks them, and the dense shape is set to ``row_shape`` (a -1 entry keeps the batch's
largest extent), checked to hold every element.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import control_dependencies
from flowmesh.core.shapes import TensorShape
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data.dataset import Dataset

Transform = Callable[[Dataset], Dataset]


def dense_to_sparse_batch(batch_size: Any, row_shape: Any) -> Transform:
    """Batches ``batch_size`` elements (tensors of ``row_shape``'s rank, no larger than it)
    into a ``SparseTensor`` of dense shape ``[batch, *row_shape]``.

    Raises:
        TypeError: (when applied) elements that are not single tensors.
        ValueError: (when applied) elements whose rank is not ``row_shape``'s.
        InvalidArgumentError: (when run) an element larger than ``row_shape``.
    """
    from flowmesh.ops import array_ops, check_ops, math_ops
    from flowmesh.ops.select_ops import where

    if isinstance(row_shape, (list, tuple)):
        dims = [-1 if d is None else int(d) for d in row_shape]
    else:
        dims = [-1 if d is None else int(d) for d in TensorShape(row_shape).as_list()]

    def to_sparse(x: Any) -> SparseTensor:
        coordinates = where(array_ops.ones_like(x, dtype=dtypes.bool))
        return SparseTensor(coordinates, array_ops.reshape(x, [-1]), array_ops.shape(x, out_type=dtypes.int64))

    def with_row_shape(batch: SparseTensor) -> SparseTensor:
        extents = batch.dense_shape[1:]
        wanted = convert_to_tensor(np.array(dims, np.int64))
        row = where(wanted < 0, extents, wanted)
        check = check_ops.assert_less_equal(extents, row, message=(
            f"dense_to_sparse_batch: an element is larger than row_shape {dims}"))
        with control_dependencies([check]):
            dense_shape = array_ops.concat([batch.dense_shape[:1], math_ops.maximum(row, extents)], 0)
        return SparseTensor(batch.indices, batch.values, dense_shape)

    def apply(dataset: Dataset) -> Dataset:
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"dense_to_sparse_batch takes a dataset of single tensors, got {spec!r}")
        if spec.shape.rank is not None and spec.shape.rank != len(dims):
            raise ValueError(f"dense_to_sparse_batch: elements of rank {spec.shape.rank} do not have the rank of "
                             f"row_shape {dims}")
        return dataset.map(to_sparse).batch(batch_size).map(with_row_shape)

    return apply
