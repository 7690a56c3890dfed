"""Selecting whole rows of a ``RaggedTensor`` (the row gather behind ``tf.ragged.stack``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.ops import cast_ops, gather_ops, range_ops
from flowmesh.ops.ragged_segment_ids import lengths_to_splits, row_splits_to_segment_ids
from flowmesh.ops.ragged_tensor import RaggedTensor


def gather_rows(params: Any, indices: Tensor) -> Any:
    """Rows ``indices`` (a 1-D int tensor) of ``params`` (a RaggedTensor or a Tensor).

    Gradients reach ``params``' flat values through ``gather``.
    """
    if not isinstance(params, RaggedTensor):
        return gather_ops.gather(params, indices)
    splits = params.row_splits
    indices = cast_ops.cast(indices, splits.dtype)
    starts = gather_ops.gather(splits[:-1], indices)
    limits = gather_ops.gather(splits[1:], indices)
    new_splits = lengths_to_splits(limits - starts)
    rowids = row_splits_to_segment_ids(new_splits)
    positions = gather_ops.gather(starts, rowids) + (range_ops.range(new_splits[-1]) - gather_ops.gather(new_splits, rowids))
    return RaggedTensor.from_row_splits(gather_rows(params.values, positions), new_splits, validate=False)
