"""Segment reductions: ``tf.math.segment_*`` (sorted ids) and ``unsorted_segment_*``.

``data`` rows are combined per segment id; ``segment_ids`` index the leading dimensions
of ``data`` (its shape is a prefix of ``data``'s shape). Negative ids are dropped by the
unsorted variants, as in TensorFlow; the sorted variants require non-decreasing,
non-negative ids (checked at run time). Empty segments hold 0 for sums and sorted
min/max, 1 for products, and the dtype's lowest/highest value for unsorted max/min.
Gradients follow TensorFlow's ``math_grad.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor, register_tensor_conversion_function
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, select_ops
from flowmesh.ops._builders import INDEX_TYPES, REAL_NUMERIC, check_dtype, constant_value, make_tensor


def _check_ids(data: Tensor, ids: Tensor) -> None:
    if ids.dtype not in INDEX_TYPES:
        raise TypeError(f"segment_ids must be int32 or int64, got {ids.dtype.name}")
    if data.shape.rank is None or ids.shape.rank is None:
        return
    prefix = data.shape[:ids.shape.rank] if ids.shape.rank <= data.shape.rank else None
    if prefix is None or not prefix.is_compatible_with(ids.shape):
        raise InvalidArgumentError(
            f"segment_ids.shape = {ids.shape} must be a prefix of data.shape = {data.shape}")


def _unsorted_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    data, ids, num = inputs
    _check_ids(data, ids)
    n = constant_value(num)
    if n is not None and int(n) < 0:
        raise InvalidArgumentError(f"num_segments must be non-negative, got {int(n)}")
    if data.shape.rank is None or ids.shape.rank is None:
        return [(data.dtype, unknown_shape())]
    rest = data.shape.as_list()[ids.shape.rank:]
    return [(data.dtype, TensorShape([None if n is None else int(n)] + rest))]


def _sorted_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    data, ids = inputs
    _check_ids(data, ids)
    if ids.shape.rank not in (None, 1):
        raise InvalidArgumentError(f"segment_ids should be a vector, got shape {ids.shape}")
    if data.shape.rank is None:
        return [(data.dtype, unknown_shape())]
    return [(data.dtype, TensorShape([None] + data.shape.as_list()[1:]))]


def _gather_drop_negatives(params: Tensor, ids: Tensor) -> tuple[Tensor, Tensor]:
    """``gather(params, ids)`` with rows for negative ids zeroed; also returns the mask."""
    clipped = math_ops.maximum(ids, array_ops.zeros_like(ids))
    gathered = gather_ops.gather(params, clipped)
    is_positive = math_ops.greater_equal(ids, array_ops.zeros_like(ids))
    rank_diff = array_ops.rank(gathered) - array_ops.rank(is_positive)
    mask_shape = array_ops.concat([array_ops.shape(is_positive),
                                   array_ops.fill(array_ops.expand_dims(rank_diff, 0), 1)], 0)
    mask = array_ops.reshape(is_positive, mask_shape)
    return select_ops.where_v2(mask, gathered, array_ops.zeros_like(gathered)), mask


def _min_max_grad(op: Any, grad: Tensor, sum_fn: Any) -> Tensor:
    data, ids = op.inputs[0], op.inputs[1]
    gathered_out, mask = _gather_drop_negatives(op.outputs[0], ids)
    selected = math_ops.logical_and(math_ops.equal(data, gathered_out), mask)
    count = sum_fn(cast_ops.cast(selected, grad.dtype), op)
    gathered_grad, _ = _gather_drop_negatives(math_ops.truediv(grad, count), ids)
    return select_ops.where_v2(selected, gathered_grad, array_ops.zeros_like(gathered_grad))


def _unsorted_sum_of(values: Tensor, op: Any) -> Tensor:
    return unsorted_segment_sum(values, op.inputs[1], op.inputs[2])


def _sorted_sum_of(values: Tensor, op: Any) -> Tensor:
    return segment_sum(values, op.inputs[1])


def _unsorted_prod_grad(op: Any, grad: Tensor) -> list:
    data, ids, num = op.inputs
    is_zero = math_ops.equal(data, array_ops.zeros_like(data))
    zeros_per_segment = unsorted_segment_sum(cast_ops.cast(is_zero, dtypes.int32), ids, num)
    grad = select_ops.where_v2(math_ops.greater(zeros_per_segment, 1), array_ops.zeros_like(grad), grad)
    non_zero = select_ops.where_v2(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = unsorted_segment_prod(non_zero, ids, num)
    clipped = math_ops.maximum(ids, array_ops.zeros_like(ids))
    gathered_prod = gather_ops.gather(op.outputs[0], clipped)
    gathered_non_zero_prod = gather_ops.gather(non_zero_prod, clipped)
    partial = select_ops.where_v2(is_zero, gathered_non_zero_prod,
                                math_ops.truediv(gathered_prod, non_zero))
    gathered_grad, _ = _gather_drop_negatives(grad, ids)
    return [gathered_grad * partial, None, None]


def _sorted_mean_grad(op: Any, grad: Tensor) -> list:
    data, ids = op.inputs
    ones_shape = array_ops.concat([array_ops.shape(ids), array_ops.fill(
        array_ops.expand_dims(array_ops.rank(data) - 1, 0), 1)], 0)
    counts = segment_sum(array_ops.fill(ones_shape, convert_to_tensor(1, dtype=grad.dtype)), ids)
    return [gather_ops.gather(math_ops.truediv(grad, counts), ids), None]


register_op("UnsortedSegmentSum", _unsorted_shape,
            grad=lambda op, g: [_gather_drop_negatives(g, op.inputs[1])[0], None, None])
register_op("UnsortedSegmentMax", _unsorted_shape,
            grad=lambda op, g: [_min_max_grad(op, g, _unsorted_sum_of), None, None])
register_op("UnsortedSegmentMin", _unsorted_shape,
            grad=lambda op, g: [_min_max_grad(op, g, _unsorted_sum_of), None, None])
register_op("UnsortedSegmentProd", _unsorted_shape, grad=_unsorted_prod_grad)
register_op("SegmentSum", _sorted_shape, grad=lambda op, g: [gather_ops.gather(g, op.inputs[1]), None])
register_op("SegmentMean", _sorted_shape, grad=_sorted_mean_grad)
register_op("SegmentMax", _sorted_shape,
            grad=lambda op, g: [_min_max_grad(op, g, _sorted_sum_of), None])
register_op("SegmentMin", _sorted_shape,
            grad=lambda op, g: [_min_max_grad(op, g, _sorted_sum_of), None])
register_op("SegmentProd", _sorted_shape, not_differentiable=True)


def _unsorted(op_type: str, default_name: str, allowed: Sequence[dtypes.DType]):
    def op_fn(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
        d = convert_to_tensor(data, name="data")
        check_dtype(op_type, d, allowed, "data")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        n = num_segments if isinstance(num_segments, Tensor) else \
            convert_to_tensor(num_segments, dtype=ids.dtype, name="num_segments")
        return make_tensor(op_type, [d, ids, n], name=name or default_name)

    op_fn.__name__ = default_name
    op_fn.__doc__ = (
        f"``{op_type}``: combines rows of ``data`` into ``num_segments`` segments chosen by\n"
        "``segment_ids`` (negative ids are dropped).\n\n"
        "Raises:\n    InvalidArgumentError: an id is >= num_segments (at run time), or\n"
        "        segment_ids' shape is not a prefix of data's.\n")
    return op_fn


def _sorted(op_type: str, default_name: str, allowed: Sequence[dtypes.DType]):
    def op_fn(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
        d = convert_to_tensor(data, name="data")
        check_dtype(op_type, d, allowed, "data")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        return make_tensor(op_type, [d, ids], name=name or default_name)

    op_fn.__name__ = default_name
    op_fn.__doc__ = (
        f"``{op_type}`` over sorted ``segment_ids``; the output has ``max(ids) + 1`` rows.\n\n"
        "Raises:\n    InvalidArgumentError: ids are negative or decreasing (at run time).\n")
    return op_fn


_NUMERIC = REAL_NUMERIC + (dtypes.complex64, dtypes.complex128)
unsorted_segment_sum = _unsorted("UnsortedSegmentSum", "UnsortedSegmentSum", _NUMERIC)
unsorted_segment_max = _unsorted("UnsortedSegmentMax", "UnsortedSegmentMax", REAL_NUMERIC)
unsorted_segment_min = _unsorted("UnsortedSegmentMin", "UnsortedSegmentMin", REAL_NUMERIC)
unsorted_segment_prod = _unsorted("UnsortedSegmentProd", "UnsortedSegmentProd", _NUMERIC)
segment_sum = _sorted("SegmentSum", "SegmentSum", _NUMERIC)
segment_mean = _sorted("SegmentMean", "SegmentMean", _NUMERIC)
segment_max = _sorted("SegmentMax", "SegmentMax", REAL_NUMERIC)
segment_min = _sorted("SegmentMin", "SegmentMin", REAL_NUMERIC)
segment_prod = _sorted("SegmentProd", "SegmentProd", _NUMERIC)


# --- IndexedSlices -> Tensor -----------------------------------------------------------------
def _indexed_slices_to_tensor(value: IndexedSlices, dtype: Any, name: str | None) -> Tensor:
    """An IndexedSlices as a dense tensor: its rows summed into place (``tf.convert_to_tensor``)."""
    if value.dense_shape is None:
        raise ValueError(f"Cannot convert {value!r} to a Tensor without a dense_shape")
    with name_scope(name, "IndexedSlicesToTensor"):
        return unsorted_segment_sum(value.values, value.indices, value.dense_shape[0])


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


def _segment_counts(ids: Tensor, num_segments: Any, data: Tensor, dtype: Any) -> Tensor:
    """Rows per segment, shaped to broadcast against the segment result."""
    ones = array_ops.ones_like(ids, dtype=dtype)
    counts = unsorted_segment_sum(ones, ids, num_segments)
    extra = array_ops.rank(data) - array_ops.rank(ids)
    shape = array_ops.concat([array_ops.shape(counts), array_ops.fill(array_ops.expand_dims(extra, 0), 1)], 0)
    return array_ops.reshape(counts, shape)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any,
                          name: str | None = None) -> Tensor:
    """Mean of the rows per segment (0 for empty segments)."""
    with name_scope(name, "UnsortedSegmentMean", [data, segment_ids]):
        d = convert_to_tensor(data)
        ids = convert_to_tensor(segment_ids)
        counts = _segment_counts(ids, num_segments, d, d.dtype)
        total = unsorted_segment_sum(d, ids, num_segments)
        return math_ops.div_no_nan(total, counts)


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any,
                            name: str | None = None) -> Tensor:
    """Sum of the rows per segment divided by ``sqrt(rows in segment)``."""
    with name_scope(name, "UnsortedSegmentSqrtN", [data, segment_ids]):
        d = convert_to_tensor(data)
        ids = convert_to_tensor(segment_ids)
        counts = _segment_counts(ids, num_segments, d, d.dtype)
        total = unsorted_segment_sum(d, ids, num_segments)
        return math_ops.div_no_nan(total, math_ops.sqrt(counts))
