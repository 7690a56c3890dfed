"""``tf.ragged.range``: one ``range(starts[i], limits[i], deltas[i])`` per row.

Built from ``cumsum``/``repeat``/``gather``: row ``i`` holds
``ceil((limits[i] - starts[i]) / deltas[i])`` values (0 when the signs disagree), as
TensorFlow's ``RaggedRange`` kernel counts them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, check_ops, gather_ops, math_ops, range_ops, reduction_ops
from flowmesh.ops._builders import constant_value
from flowmesh.ops.ragged_segment_ids import lengths_to_splits, row_splits_to_segment_ids
from flowmesh.ops.ragged_tensor import RaggedTensor
from flowmesh.ops.select_ops import where_v2

_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _matching(tensors: list[Tensor]) -> list[Tensor]:
    """Casts to the widest of the tensors' dtypes in ``_RANGE_DTYPES``' order."""
    for t in tensors:
        if t.dtype not in _RANGE_DTYPES:
            raise TypeError(f"tf.ragged.range takes int32, int64, float32 or float64 values, got "
                            f"{t.dtype.name} ({t.name})")
    widest = max((t.dtype for t in tensors), key=_RANGE_DTYPES.index)
    return [cast_ops.cast(t, widest) for t in tensors]


def _row_sizes(starts: Tensor, limits: Tensor, deltas: Tensor, splits_dtype: dtypes.DType) -> Tensor:
    if starts.dtype.is_integer:
        span, step = math_ops.abs(limits - starts), math_ops.abs(deltas)
        sizes = math_ops.floordiv(span + step - 1, math_ops.maximum(step, 1))
    else:
        sizes = math_ops.ceil(math_ops.abs((limits - starts) / deltas))
    same_sign = math_ops.equal(limits > starts, deltas > 0)
    sizes = where_v2(math_ops.logical_and(same_sign, math_ops.not_equal(limits, starts)),
                     sizes, array_ops.zeros_like(sizes))
    return cast_ops.cast(sizes, splits_dtype)


def range(starts: Any, limits: Any = None, deltas: Any = 1, dtype: Any = None,  # noqa: A001
          name: str | None = None, row_splits_dtype: Any = dtypes.int64) -> RaggedTensor:
    """A ragged-rank-1 tensor whose row ``i`` is ``range(starts[i], limits[i], deltas[i])``.

    Args:
        starts, limits, deltas: scalars or vectors (scalars broadcast); ``limits=None`` makes
            ``starts`` the limits and the starts 0.
        dtype: the value dtype (default: the widest of the inputs').
        name: a name prefix.
        row_splits_dtype: ``int32`` or ``int64``.

    Raises:
        InvalidArgumentError: a zero delta (statically) or vectors of different lengths.
    """
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if limits is None:
        starts, limits = 0, starts
    with name_scope(name, "RaggedRange", [starts, limits, deltas]):
        target = None if dtype is None else dtypes.as_dtype(dtype)
        parts = [convert_to_tensor(v, dtype=target, name=n) for v, n in
                 ((starts, "starts"), (limits, "limits"), (deltas, "deltas"))]
        for t in parts:
            if t.shape.rank not in (0, 1):
                raise InvalidArgumentError(f"tf.ragged.range: {t.name} must be a scalar or vector of known "
                                           f"rank, got shape {t.shape}")
        starts, limits, deltas = _matching(parts)
        static_deltas = constant_value(deltas)
        if static_deltas is not None and (np.asarray(static_deltas) == 0).any():
            raise InvalidArgumentError("tf.ragged.range: Requires delta != 0")
        vectors = [t for t in (starts, limits, deltas) if t.shape.rank == 1]
        count = array_ops.shape(vectors[0])[0] if vectors else convert_to_tensor(1)
        checks = [check_ops.assert_equal(array_ops.shape(v)[0], count,
                                         message="starts, limits, and deltas must have the same shape")
                  for v in vectors[1:]]
        with control_dependencies(checks):
            starts, limits, deltas = (array_ops.identity(t) if t.shape.rank == 1 else
                                      reduction_ops.broadcast_to(t, array_ops.expand_dims(count, 0))
                                      for t in (starts, limits, deltas))
        sizes = _row_sizes(starts, limits, deltas, splits_dtype)
        splits = lengths_to_splits(sizes)
        rowids = row_splits_to_segment_ids(splits)
        offsets = cast_ops.cast(range_ops.range(splits[-1]) - gather_ops.gather(splits, rowids), starts.dtype)
        values = gather_ops.gather(starts, rowids) + offsets * gather_ops.gather(deltas, rowids)
        return RaggedTensor.from_row_splits(values, splits, validate=False)

