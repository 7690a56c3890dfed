"""Row partitions of ragged tensors: ``row_splits`` <-> segment ids (``value_rowids``) and
row lengths (``tf.ragged.row_splits_to_segment_ids`` / ``segment_ids_to_row_splits``).

``row_splits`` ``[0, s1, ..., nvals]`` says row ``i`` holds values ``s_i .. s_{i+1} - 1``;
the segment id of a value is the row it belongs to. Built from existing ops (``repeat``,
``bincount``, ``cumsum``), as TensorFlow builds them.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, cast_ops, check_ops, manip_ops, range_ops, reduction_ops, search_ops
from flowmesh.ops._builders import constant_value

SPLITS_DTYPES = (dtypes.int32, dtypes.int64)


def check_splits(splits: Tensor, what: str = "row_splits") -> Tensor:
    """Checks a row-splits tensor's dtype and rank at graph construction.

    Raises:
        ValueError: not int32/int64, not a vector, or statically empty.
    """
    if splits.dtype not in SPLITS_DTYPES:
        raise ValueError(f"{what} must have dtype int32 or int64, got {splits.dtype.name} ({splits.name}); "
                         f"cast it with tf.cast(..., tf.int64)")
    if splits.shape.rank not in (None, 1):
        raise ValueError(f"{what} must be a vector, got shape {splits.shape} ({splits.name})")
    if splits.shape.rank == 1 and splits.shape.as_list()[0] == 0:
        raise ValueError(f"Invalid {what}: [] (it needs at least the leading 0)")
    return splits


def lengths_to_splits(lengths: Tensor) -> Tensor:
    """``[0, cumsum(lengths)...]`` in the dtype of ``lengths``."""
    zero = array_ops.zeros([1], dtype=lengths.dtype)
    return array_ops.concat([zero, reduction_ops.cumsum(lengths)], 0)


def row_splits_to_segment_ids(splits: Any, name: str | None = None, out_type: Any = None) -> Tensor:
    """The segment id (row index) of every value of a ragged tensor with ``splits``.

    Args:
        splits: a 1-D int32/int64 sorted tensor starting at 0.
        name: a name prefix.
        out_type: the result dtype (default: ``splits``'s).

    Returns:
        A 1-D tensor of ``splits[-1]`` row indices.

    Raises:
        ValueError: ``splits`` is not a non-empty int32/int64 vector.
    """
    with name_scope(name, "RaggedSplitsToSegmentIds", [splits]):
        splits = check_splits(convert_to_tensor(splits, name="splits", preferred_dtype=dtypes.int64), "splits")
        out = splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        row_lengths = splits[1:] - splits[:-1]
        nrows = array_ops.shape(splits, out_type=out)[-1] - 1
        indices = range_ops.range(nrows)
        return manip_ops.repeat(indices, row_lengths, axis=0)


def segment_ids_to_row_splits(segment_ids: Any, num_segments: Any = None, out_type: Any = None,
                              name: str | None = None) -> Tensor:
    """The ``row_splits`` of the partition that sorted ``segment_ids`` describe.

    Args:
        segment_ids: a 1-D integer tensor (sorted ascending).
        num_segments: the number of rows (default ``max(segment_ids) + 1``, 0 when empty).
        out_type: the result dtype (default: ``segment_ids``'s when it is a Tensor, else int64).
        name: a name prefix.

    Returns:
        A 1-D tensor of ``num_segments + 1`` splits.

    Raises:
        ValueError: ``segment_ids`` is not a vector or ``num_segments`` not a scalar.
    """
    if out_type is None:
        if isinstance(segment_ids, Tensor):
            out_type = segment_ids.dtype
        elif isinstance(num_segments, Tensor):
            out_type = num_segments.dtype
        else:
            out_type = dtypes.int64
    out = dtypes.as_dtype(out_type)
    with name_scope(name, "SegmentIdsToRaggedSplits", [segment_ids]):
        ids = cast_ops.cast(convert_to_tensor(segment_ids, name="segment_ids"), dtypes.int32)
        if ids.shape.rank not in (None, 1):
            raise ValueError(f"segment_ids must be a vector, got shape {ids.shape}")
        if num_segments is not None:
            num_segments = cast_ops.cast(convert_to_tensor(num_segments, name="num_segments"), dtypes.int32)
            if num_segments.shape.rank not in (None, 0):
                raise ValueError(f"num_segments must be a scalar, got shape {num_segments.shape}")
        lengths = search_ops.bincount(ids, minlength=num_segments, maxlength=num_segments, dtype=out)
        splits = lengths_to_splits(lengths)
        static = None if num_segments is None else constant_value(num_segments)
        if static is not None:
            splits.set_shape(TensorShape([int(static) + 1]))
        return splits


def validated_splits(splits: Tensor, nvals: Tensor) -> Tensor:
    """``splits`` behind run-time checks that it starts at 0, never decreases and ends at
    ``nvals`` (a wrong static value raises at graph construction)."""
    message = "Arguments to from_row_splits do not form a valid RaggedTensor"
    checks = [check_ops.assert_equal(splits[:1], array_ops.zeros([1], splits.dtype), message=f"{message}: zero"),
              check_ops.assert_greater_equal(splits[1:], splits[:-1], message=f"{message}: monotonic"),
              check_ops.assert_equal(splits[-1:], array_ops.expand_dims(nvals, 0), message=f"{message}: nvals")]
    with control_dependencies(checks):
        return array_ops.identity(splits)
