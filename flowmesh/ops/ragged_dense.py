"""Ragged rows <-> padded dense tensors, on plain tensors (``values`` + ``row_splits``).

``RaggedTensor.to_tensor`` and ``from_tensor`` (``ragged_tensor.py``) call these one ragged
dimension at a time. Padding is a ``gather`` from the values with one extra "default" row
appended, so it works for every dtype (strings too) and the gradient flows back to the
values through ``gather``'s.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.ops import array_ops, cast_ops, gather_ops, manip_ops, math_ops, range_ops, reduction_ops
from flowmesh.ops.select_ops import where_v2


def default_fill(dtype: dtypes.DType, default_value: Any) -> Tensor:
    """``default_value`` as a tensor of ``dtype`` (zero, ``False`` or ``b""`` when None)."""
    if default_value is None:
        default_value = b"" if dtype == dtypes.string else (False if dtype == dtypes.bool else 0)
    return convert_to_tensor(default_value, dtype=dtype, name="default_value")


def _resized(vector: Tensor, size: Tensor) -> Tensor:
    """``vector`` cut or zero-padded to ``size`` entries."""
    zeros = array_ops.zeros(array_ops.expand_dims(size, 0), dtype=vector.dtype)
    return array_ops.concat([vector, zeros], 0)[:size]


def pad_rows(values: Tensor, row_splits: Tensor, default: Tensor, nrows: Tensor | None = None,
             ncols: Tensor | None = None) -> Tensor:
    """The rows of a ragged-rank-1 partition as a dense ``[nrows, ncols, ...]`` tensor.

    Args:
        values: dense ``[nvals, ...]`` values.
        row_splits: the partition's splits.
        default: broadcastable to ``values.shape[1:]``; fills the padding.
        nrows: rows of the result (default: the partition's; fewer cut, more pad).
        ncols: columns of the result (default: the longest row; shorter rows are cut).

    Returns:
        The padded tensor.
    """
    splits_dtype = row_splits.dtype
    starts, lengths = row_splits[:-1], row_splits[1:] - row_splits[:-1]
    if ncols is None:
        ncols = longest(lengths)
    ncols = cast_ops.cast(ncols, splits_dtype)
    if nrows is not None:
        nrows = cast_ops.cast(nrows, splits_dtype)
        starts, lengths = _resized(starts, nrows), _resized(lengths, nrows)
    columns = array_ops.expand_dims(range_ops.range(ncols), 0)
    index = array_ops.expand_dims(starts, 1) + columns
    nvals = array_ops.shape(values, out_type=splits_dtype)[0]
    index = where_v2(columns < array_ops.expand_dims(lengths, 1), index, nvals)
    inner = array_ops.shape(values, out_type=splits_dtype)[1:]
    row_shape = array_ops.concat([array_ops.ones([1], splits_dtype), inner], 0)
    default_row = array_ops.fill(row_shape, default) if default.shape.rank == 0 else \
        reduction_ops.broadcast_to(default, row_shape)  # (fill also holds strings)
    padded = array_ops.concat([values, default_row], 0)
    return gather_ops.gather(padded, index)


def lengths_from_padding(tensor: Tensor, padding: Any, splits_dtype: dtypes.DType) -> Tensor:
    """Row lengths of ``[nrows, ncols, ...]`` ``tensor`` without its trailing ``padding`` cells
    (a cell is padding when all its inner values equal ``padding``)."""
    padding = convert_to_tensor(padding, name="padding", dtype=tensor.dtype)
    if tensor.shape.rank is not None:
        padding.shape.assert_is_compatible_with(tensor.shape[2:])
    has_default = math_ops.equal(padding, tensor)
    rank = tensor.shape.rank
    if rank is None:
        raise ValueError("RaggedTensor.from_tensor with padding needs a tensor of known rank")
    if rank > 2:
        has_default = reduction_ops.reduce_all(has_default, axis=list(range(2, rank)))
    ncols = array_ops.shape(tensor, out_type=splits_dtype)[1]
    nondefault = cast_ops.cast(math_ops.logical_not(has_default), splits_dtype)
    column_ends = array_ops.expand_dims(range_ops.range(1, ncols + 1), 0)
    ends = nondefault * column_ends
    zero = array_ops.zeros(array_ops.stack([array_ops.shape(ends, out_type=splits_dtype)[0], 1]), splits_dtype)
    return reduction_ops.reduce_max(array_ops.concat([ends, zero], 1), axis=1)  # 0 for no columns


def masked_rows(tensor: Tensor, lengths: Tensor) -> Tensor:
    """The first ``lengths[i]`` cells of each row ``i`` of ``tensor``, concatenated."""
    ncols = array_ops.shape(tensor, out_type=lengths.dtype)[1]
    mask = manip_ops.sequence_mask(lengths, maxlen=ncols)
    return gather_ops.boolean_mask(tensor, mask)


def longest(lengths: Tensor) -> Tensor:
    """The largest of ``lengths``, 0 when there are none."""
    return reduction_ops.reduce_max(array_ops.concat([lengths, array_ops.zeros([1], lengths.dtype)], 0))
