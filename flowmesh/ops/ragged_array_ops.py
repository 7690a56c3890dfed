"""``tf.ragged.boolean_mask`` and ``tf.ragged.stack_dynamic_partitions``.

Both follow TensorFlow's ``ragged_array_ops.py``: a ragged mask is peeled one ragged
dimension at a time down to a dense mask; a dense mask of rank > 1 on dense data gives
ragged rows; partitions are a stable sort plus ``from_value_rowids``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.ops import array_ops, cast_ops, check_ops, gather_ops, range_ops, reduction_ops, segment_ops
from flowmesh.ops.ragged_concat_ops import stack
from flowmesh.ops.ragged_gather_ops import gather_rows
from flowmesh.ops.ragged_segment_ids import lengths_to_splits, row_splits_to_segment_ids
from flowmesh.ops.ragged_tensor import RaggedTensor
from flowmesh.ops.sort_ops import argsort


def _tensor_or_ragged(value: Any, name: str, dtype: Any = None, preferred: Any = None) -> Any:
    if isinstance(value, RaggedTensor):
        return value
    return convert_to_tensor(value, dtype=dtype, preferred_dtype=preferred, name=name)


def _splits_dtype(*values: Any) -> dtypes.DType:
    found = {v.row_splits_dtype for v in values if isinstance(v, RaggedTensor)}
    if len(found) > 1:
        raise ValueError("Input RaggedTensors have mismatched row_splits dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to compatible dtypes.")
    return found.pop() if found else dtypes.int64


def boolean_mask(data: Any, mask: Any, name: str | None = None) -> Any:
    """The entries of ``data`` where ``mask`` is true, keeping ``data``'s rank: masked
    positions are dropped from their rows (``tf.ragged.boolean_mask``).

    Args:
        data: a Tensor or RaggedTensor.
        mask: a bool Tensor or RaggedTensor whose shape is a prefix of ``data``'s.
        name: a name prefix.

    Returns:
        A RaggedTensor (a Tensor when both are dense and ``mask`` is a vector).

    Raises:
        ValueError: ``mask`` of unknown rank or scalar.
    """
    with name_scope(name, "RaggedMask", [data, mask]):
        data = _tensor_or_ragged(data, "data")
        mask = _tensor_or_ragged(mask, "mask", dtype=dtypes.bool)
        splits_dtype = _splits_dtype(data, mask)
        rank = mask.shape.rank
        if rank is None:
            raise ValueError("mask.shape.ndims must be known statically.")
        if rank == 0:
            raise ValueError("mask cannot be scalar.")
        if isinstance(mask, RaggedTensor):
            return _mask_ragged_mask(data, mask)
        if isinstance(data, RaggedTensor) and rank == 1:
            masked_splits = lengths_to_splits(gather_ops.boolean_mask(data.row_lengths(), mask))
            row_mask = gather_ops.gather(mask, row_splits_to_segment_ids(data.row_splits))
            return RaggedTensor.from_row_splits(boolean_mask(data.values, row_mask), masked_splits, validate=False)
        if isinstance(data, RaggedTensor):
            ragged_mask = RaggedTensor.from_tensor(mask, ragged_rank=min(data.ragged_rank, rank - 1),
                                                   row_splits_dtype=data.row_splits_dtype)
            return boolean_mask(data, ragged_mask)
        return _mask_dense(data, mask, splits_dtype)


def _mask_ragged_mask(data: Any, mask: RaggedTensor) -> Any:
    if not isinstance(data, RaggedTensor):
        data = RaggedTensor.from_tensor(data, ragged_rank=mask.ragged_rank, row_splits_dtype=mask.row_splits_dtype)
    checks = [check_ops.assert_equal(a, b, message="Inputs must have identical ragged splits")
              for a, b in zip(mask.nested_row_splits, data.nested_row_splits[:mask.ragged_rank]) if a is not b]
    with control_dependencies(checks):
        splits = []
        while isinstance(mask, RaggedTensor):
            if mask.shape.rank is not None and mask.shape.rank > 2:
                splits.append(array_ops.identity(mask.row_splits))
            else:
                counts = cast_ops.cast(mask.values, mask.row_splits_dtype)
                lengths = segment_ops.unsorted_segment_sum(counts, mask.value_rowids(), mask.nrows())
                splits.append(lengths_to_splits(lengths))
            mask, data = mask.values, data.values
        masked = boolean_mask(data, mask)
    return RaggedTensor.from_nested_row_splits(masked, splits, validate=False)


def _mask_dense(data: Tensor, mask: Tensor, splits_dtype: dtypes.DType) -> Any:
    masked = gather_ops.boolean_mask(data, mask)
    rank = mask.shape.rank
    if rank >= 2:
        lengths = reduction_ops.count_nonzero(mask, axis=-1, dtype=splits_dtype)
        masked = RaggedTensor.from_row_lengths(masked, array_ops.reshape(lengths, [-1]), validate=False)
        if rank > 2:
            mask_shape = array_ops.shape(mask, out_type=splits_dtype)
            split_size = reduction_ops.cumprod(mask_shape) + 1
            for dim in range(rank - 3, -1, -1):
                masked = RaggedTensor.from_row_splits(masked, range_ops.range(split_size[dim]) * mask_shape[dim + 1],
                                                      validate=False)
    return masked


def stack_dynamic_partitions(data: Any, partitions: Any, num_partitions: Any, name: str | None = None) -> RaggedTensor:
    """A RaggedTensor whose row ``i`` stacks the slices of ``data`` with partition ``i``
    (in row-major order; ``partitions.shape`` a prefix of ``data.shape``).

    Raises:
        ValueError: ``partitions`` of unknown rank, or ragged partitions with dense data.
        InvalidArgumentError: (at run time) partitions outside ``[0, num_partitions)``.
    """
    with name_scope(name, "SegmentStack", [data, partitions, num_partitions]):
        data = _tensor_or_ragged(data, "data")
        splits_dtype = data.row_splits_dtype if isinstance(data, RaggedTensor) else None
        partitions = _tensor_or_ragged(partitions, "partitions", preferred=splits_dtype)
        if splits_dtype is not None:
            partitions = cast_ops.cast(partitions, splits_dtype) if not isinstance(partitions, RaggedTensor) \
                else partitions.with_flat_values(cast_ops.cast(partitions.flat_values, splits_dtype))
        num_partitions = cast_ops.cast(convert_to_tensor(num_partitions, name="num_partitions"), partitions.dtype)
        rank = partitions.shape.rank
        if rank is None:
            raise ValueError("partitions must have known rank.")
        num_partitions.shape.assert_has_rank(0)
        if rank == 0:
            return RaggedTensor.from_value_rowids(array_ops.stack([data]) if not isinstance(data, RaggedTensor)
                                                  else stack([data]),
                                                  array_ops.stack([partitions]), nrows=num_partitions, validate=False)
        if rank == 1 and not isinstance(partitions, RaggedTensor):
            permutation = argsort(partitions, stable=True)
            rowids = gather_ops.gather(partitions, permutation)
            values = gather_rows(data, permutation)
            checks = [check_ops.assert_less(rowids[-1:], num_partitions,
                                            message="partitions must be less than num_partitions"),
                      check_ops.assert_non_negative(partitions, message="partitions must be non-negative.")]
            with control_dependencies(checks):
                return RaggedTensor.from_value_rowids(values, array_ops.identity(rowids), nrows=num_partitions,
                                                      validate=False)
        if not isinstance(data, RaggedTensor):
            if isinstance(partitions, RaggedTensor):
                raise ValueError("If partitions is ragged, then data must be ragged (or convert partitions "
                                 "with to_tensor())")
            data = RaggedTensor.from_tensor(data, row_splits_dtype=partitions.dtype, ragged_rank=1)
        if not isinstance(partitions, RaggedTensor):
            partitions = RaggedTensor.from_tensor(partitions, row_splits_dtype=partitions.dtype,
                                                  ragged_rank=max(data.ragged_rank, rank - 1))
        check = check_ops.assert_equal(data.row_splits, partitions.row_splits,
                                       message="data and partitions have incompatible ragged shapes")
        with control_dependencies([check]):
            return stack_dynamic_partitions(data.values, partitions.values, num_partitions)
