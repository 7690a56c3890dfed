"""``tf.ragged_fill_empty_rows`` / ``tf.ragged_fill_empty_rows_grad``: the raw ops behind
``RaggedFillEmptyRows`` (TensorFlow's generated wrappers), on ``value_rowids`` form.

Every empty row gets one ``default_value``; rows keep their values in order. Built from
``bincount``/``repeat``/``gather``, so the gradient reaches ``values`` and
``default_value`` through ``gather``'s (the ``_grad`` function is the same computation
spelled out, for callers that use it directly).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, range_ops, reduction_ops, search_ops
from flowmesh.ops.ragged_segment_ids import lengths_to_splits, row_splits_to_segment_ids
from flowmesh.ops.select_ops import where_v2


def ragged_fill_empty_rows(value_rowids: Any, values: Any, nrows: Any, default_value: Any,
                           name: str | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Fills each empty row of a ``(value_rowids, values)`` ragged tensor with ``default_value``.

    Args:
        value_rowids: int64 sorted row ids of ``values``.
        values: the values (a tensor of rank >= 1).
        nrows: int64 number of rows.
        default_value: a scalar of ``values``' dtype.
        name: a name prefix.

    Returns:
        ``(output_value_rowids, output_values, empty_row_indicator, reverse_index_map)``:
        the filled tensor's row ids and values, which rows were empty, and the output
        position of every input value.
    """
    with name_scope(name, "RaggedFillEmptyRows", [value_rowids, values, nrows, default_value]):
        rowids = convert_to_tensor(value_rowids, dtype=dtypes.int64, name="value_rowids")
        values = convert_to_tensor(values, name="values")
        nrows = convert_to_tensor(nrows, dtype=dtypes.int64, name="nrows")
        default = convert_to_tensor(default_value, dtype=values.dtype, name="default_value")
        rows32 = cast_ops.cast(nrows, dtypes.int32)
        counts = search_ops.bincount(cast_ops.cast(rowids, dtypes.int32), minlength=rows32, maxlength=rows32,
                                     dtype=dtypes.int64)
        empty = math_ops.equal(counts, 0)
        in_splits = lengths_to_splits(counts)
        out_splits = lengths_to_splits(math_ops.maximum(counts, 1))
        out_rowids = row_splits_to_segment_ids(out_splits)
        nvals = array_ops.shape(values, out_type=dtypes.int64)[0]

        offsets = range_ops.range(array_ops.shape(out_rowids, out_type=dtypes.int64)[0]) - gather_ops.gather(out_splits, out_rowids)
        source = gather_ops.gather(in_splits, out_rowids) + offsets
        source = where_v2(gather_ops.gather(empty, out_rowids), nvals, source)
        inner = array_ops.shape(values, out_type=dtypes.int64)[1:]
        default_row = reduction_ops.broadcast_to(default, array_ops.concat([array_ops.ones([1], dtypes.int64), inner], 0))
        out_values = gather_ops.gather(array_ops.concat([values, default_row], 0), source)
        in_offsets = range_ops.range(nvals) - gather_ops.gather(in_splits, rowids)
        reverse_index_map = gather_ops.gather(out_splits, rowids) + in_offsets
        return out_rowids, out_values, empty, reverse_index_map


def ragged_fill_empty_rows_grad(reverse_index_map: Any, grad_values: Any,
                                name: str | None = None) -> tuple[Tensor, Tensor]:
    """The gradient of :func:`ragged_fill_empty_rows`: ``(d_values, d_default_value)``,
    the output gradients at each input value's position and the sum of the rest."""
    with name_scope(name, "RaggedFillEmptyRowsGrad", [reverse_index_map, grad_values]):
        index = convert_to_tensor(reverse_index_map, dtype=dtypes.int64, name="reverse_index_map")
        grads = convert_to_tensor(grad_values, name="grad_values")
        d_values = gather_ops.gather(grads, index)
        d_default = reduction_ops.reduce_sum(grads) - reduction_ops.reduce_sum(d_values)
        return d_values, d_default
