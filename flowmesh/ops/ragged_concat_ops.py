"""``tf.ragged.stack``: stacking ragged (and dense) tensors along any axis.

TensorFlow's algorithm (``ragged_concat_ops.py``): dense inputs become ragged, all inputs
get the same ragged rank; along axis 0 the flat values and the (offset) splits are
concatenated; along axis 1 the rows are concatenated and then interleaved with a row
gather; deeper axes recurse into ``values`` (the outer splits must then match).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.ops import array_ops, check_ops, range_ops
from flowmesh.ops.ragged_gather_ops import gather_rows
from flowmesh.ops.ragged_segment_ids import lengths_to_splits
from flowmesh.ops.ragged_tensor import RaggedTensor


def stack(values: Any, axis: int = 0, name: str | None = None) -> Any:
    """Stacks the ragged or dense tensors ``values`` (of one rank R) along a new ``axis``.

    Args:
        values: a list of RaggedTensors and/or Tensors (a single one is wrapped in a list).
        axis: in ``[-(R + 1), R]``.
        name: a name prefix.

    Returns:
        A RaggedTensor of rank R + 1 (a Tensor when every input is dense and ``axis`` is
        the last one).

    Raises:
        ValueError: no inputs, different ranks, mixed row-splits dtypes or ``axis`` out of range.
        InvalidArgumentError: (at run time) inputs with different rows where they must match.
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    with name_scope(name, "RaggedConcat", values):
        return _stack_or_concat(list(values), axis, stack_values=True)


def _as_inputs(values: list[Any]) -> tuple[list[Any], dtypes.DType]:
    if not values:
        raise ValueError("rt_inputs may not be empty.")
    values = [v if isinstance(v, RaggedTensor) else convert_to_tensor(v, name="rt_input") for v in values]
    split_dtypes = {v.row_splits_dtype for v in values if isinstance(v, RaggedTensor)}
    if len(split_dtypes) > 1:
        raise ValueError("Input RaggedTensors have mismatched row_splits dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to compatible dtypes.")
    return values, (split_dtypes.pop() if split_dtypes else dtypes.int64)


def _stack_or_concat(values: list[Any], axis: int, stack_values: bool) -> Any:
    values, splits_dtype = _as_inputs(values)
    if len(values) == 1 and not stack_values:
        return values[0]
    ndims = values[0].shape.rank
    for v in values[1:]:
        if ndims is not None and v.shape.rank is not None and v.shape.rank != ndims:
            raise ValueError(f"tf.ragged.stack: inputs must have the same rank, got shapes "
                             f"{[str(x.shape) for x in values]}")
    out_ndims = ndims if (ndims is None or not stack_values) else ndims + 1
    if out_ndims is not None:
        if not -out_ndims <= axis < out_ndims:
            raise ValueError(f"axis={axis} out of bounds: expected {-out_ndims} <= axis < {out_ndims}")
        axis = axis % out_ndims
    elif axis < 0:
        raise ValueError(f"axis={axis} may only be negative if ndims is statically known.")
    if stack_values and ndims == 1 and axis == 0:
        lengths = array_ops.concat([array_ops.shape(v) for v in values], 0)  # int32 splits, as TensorFlow
        return RaggedTensor.from_row_lengths(array_ops.concat(values, 0), lengths)
    if all(not isinstance(v, RaggedTensor) for v in values) and ndims is not None and \
            (axis == out_ndims - 1 or axis == ndims - 1):
        return array_ops.stack(values, axis) if stack_values else array_ops.concat(values, axis)
    values = [v if isinstance(v, RaggedTensor) else
              RaggedTensor.from_tensor(v, ragged_rank=1, row_splits_dtype=splits_dtype) for v in values]
    ragged_rank = max(max(v.ragged_rank for v in values), 1)
    values = [_increase_ragged_rank(v, ragged_rank, splits_dtype) for v in values]
    if axis == 0:
        return _along_axis_0(values, stack_values)
    if axis == 1:
        return _along_axis_1(values, stack_values)
    checks = [check_ops.assert_equal(values[0].row_splits, v.row_splits,
                                     message="Inputs must have identical ragged splits") for v in values[1:]]
    with control_dependencies(checks):
        splits = array_ops.identity(values[0].row_splits)
    inner = _stack_or_concat([v.values for v in values], axis - 1, stack_values)
    return RaggedTensor.from_row_splits(inner, splits, validate=False)


def _increase_ragged_rank(rt: Any, ragged_rank: int, splits_dtype: dtypes.DType) -> Any:
    if ragged_rank <= 0:
        return rt
    if not isinstance(rt, RaggedTensor):
        rt = RaggedTensor.from_tensor(rt, row_splits_dtype=splits_dtype)
    if rt.ragged_rank < ragged_rank:
        rt = rt.with_values(_increase_ragged_rank(rt.values, ragged_rank - 1, splits_dtype))
    return rt


def _concat_splits(splits_list: Sequence[Tensor]) -> Tensor:
    pieces, offset = [splits_list[0]], splits_list[0][-1]
    for splits in splits_list[1:]:
        pieces.append(splits[1:] + offset)
        offset = offset + splits[-1]
    return array_ops.concat(pieces, 0)


def _along_axis_0(values: list[RaggedTensor], stack_values: bool) -> RaggedTensor:
    flat = array_ops.concat([v.flat_values for v in values], 0)
    nested = [v.nested_row_splits for v in values]
    splits = [_concat_splits([n[dim] for n in nested]) for dim in range(values[0].ragged_rank)]
    if stack_values:
        splits.insert(0, lengths_to_splits(array_ops.stack([v.nrows() for v in values])))
    return RaggedTensor.from_nested_row_splits(flat, splits, validate=False)


def _along_axis_1(values: list[RaggedTensor], stack_values: bool) -> RaggedTensor:
    count = len(values)
    nrows = values[0].nrows()
    checks = [check_ops.assert_equal(v.nrows(), nrows, message="Input tensors have incompatible shapes.")
              for v in values[1:]]
    with control_dependencies(checks):
        nrows = array_ops.identity(nrows)
    joined = _along_axis_0(values, stack_values=False)
    order = array_ops.reshape(array_ops.transpose(array_ops.reshape(range_ops.range(nrows * count), [count, -1])),
                              [-1])
    permuted = gather_rows(joined, order)
    if stack_values:
        splits = range_ops.range(0, nrows * count + 1, count)
        return RaggedTensor.from_row_splits(permuted, splits, validate=False)
    return RaggedTensor.from_row_splits(permuted.values, permuted.row_splits[::count], validate=False)
