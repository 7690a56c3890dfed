"""``tf.experimental.RowPartition``: how a flat list of values is split into rows, in any of
TensorFlow's encodings (row splits, row lengths, value row ids, row starts/limits, uniform
row length), each one computed from the row splits on demand."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops import array_ops, cast_ops, math_ops, range_ops
from flowmesh.ops._builders import constant_value
from flowmesh.ops.ragged_segment_ids import (
    check_splits,
    lengths_to_splits,
    row_splits_to_segment_ids,
    segment_ids_to_row_splits,
    validated_splits,
)


def _int(value: Any, name: str, dtype_hint: Any) -> Tensor:
    t = convert_to_tensor(value, name=name, preferred_dtype=dtypes.as_dtype(dtype_hint or dtypes.int64))
    if t.dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"{name} must be int32 or int64, got {t.dtype.name}")
    return t


class RowPartition:
    """A partition of ``nvals`` values into ``nrows`` rows (``tf.experimental.RowPartition``).
    Build one with a ``from_*`` factory."""

    def __init__(self, row_splits: Tensor, uniform_row_length: Tensor | None = None, internal: bool = False,
                 static_row_splits: Any = None):
        if not internal:
            raise ValueError("RowPartition constructor is private; use a factory method such as "
                             "RowPartition.from_row_splits()")
        self._row_splits = row_splits
        self._uniform_row_length = uniform_row_length
        static = constant_value(row_splits) if static_row_splits is None else static_row_splits
        self._static_row_splits = None if static is None else np.asarray(static)

    @classmethod
    def from_row_splits(cls, row_splits: Any, validate: bool = True, dtype: Any = None,
                        dtype_hint: Any = None) -> RowPartition:
        """Row ``i`` holds values ``row_splits[i] .. row_splits[i + 1] - 1``."""
        with name_scope(None, "RowPartitionFromRowSplits", [row_splits]):
            splits = check_splits(_int(row_splits, "row_splits", dtype or dtype_hint))
            if dtype is not None:
                splits = cast_ops.cast(splits, dtype)
            static = constant_value(splits)
            if validate:
                splits = validated_splits(splits, splits[-1])
            return cls(splits, internal=True, static_row_splits=static)

    @classmethod
    def from_row_lengths(cls, row_lengths: Any, validate: bool = True, dtype: Any = None,
                         dtype_hint: Any = None) -> RowPartition:
        """Row ``i`` holds the next ``row_lengths[i]`` values."""
        lengths = _int(row_lengths, "row_lengths", dtype or dtype_hint)
        static = constant_value(lengths)
        splits = lengths_to_splits(lengths) if static is None else convert_to_tensor(
            np.concatenate([[0], np.cumsum(static)]).astype(lengths.dtype.as_numpy_dtype))
        return cls.from_row_splits(splits, validate=validate, dtype=dtype)

    @classmethod
    def from_value_rowids(cls, value_rowids: Any, nrows: Any = None, validate: bool = True, dtype: Any = None,
                          dtype_hint: Any = None) -> RowPartition:
        """Value ``j`` belongs to row ``value_rowids[j]`` (sorted)."""
        rowids = _int(value_rowids, "value_rowids", dtype or dtype_hint)
        return cls.from_row_splits(segment_ids_to_row_splits(rowids, nrows, out_type=rowids.dtype),
                                   validate=validate, dtype=dtype)

    @classmethod
    def from_row_starts(cls, row_starts: Any, nvals: Any, validate: bool = True, dtype: Any = None,
                        dtype_hint: Any = None) -> RowPartition:
        """Row ``i`` starts at ``row_starts[i]``; the last ends at ``nvals``."""
        starts = _int(row_starts, "row_starts", dtype or dtype_hint)
        end = array_ops.reshape(cast_ops.cast(convert_to_tensor(nvals), starts.dtype), [1])
        return cls.from_row_splits(array_ops.concat([starts, end], 0), validate=validate, dtype=dtype)

    @classmethod
    def from_row_limits(cls, row_limits: Any, validate: bool = True, dtype: Any = None,
                        dtype_hint: Any = None) -> RowPartition:
        """Row ``i`` ends at ``row_limits[i]``; the first starts at 0."""
        limits = _int(row_limits, "row_limits", dtype or dtype_hint)
        zero = array_ops.zeros([1], limits.dtype)
        return cls.from_row_splits(array_ops.concat([zero, limits], 0), validate=validate, dtype=dtype)

    @classmethod
    def from_uniform_row_length(cls, uniform_row_length: Any, nvals: Any = None, nrows: Any = None,
                                validate: bool = True, dtype: Any = None, dtype_hint: Any = None) -> RowPartition:
        """Every row holds ``uniform_row_length`` values (give ``nvals`` or ``nrows``).

        Raises:
            ValueError: neither ``nvals`` nor ``nrows``.
        """
        length = _int(uniform_row_length, "uniform_row_length", dtype or dtype_hint)
        if nrows is None:
            if nvals is None:
                raise ValueError("Either nvals or nrows must be specified")
            nvals = cast_ops.cast(convert_to_tensor(nvals), length.dtype)
            known = (constant_value(nvals), constant_value(length))
            nrows = math_ops.floordiv(nvals, math_ops.maximum(length, 1)) if None in known else \
                int(known[0]) // max(int(known[1]), 1)
        nrows = cast_ops.cast(convert_to_tensor(nrows), length.dtype)
        splits = range_ops.range(nrows + 1) * length
        static, static_length = constant_value(nrows), constant_value(length)
        known = None
        if static is not None:
            splits.set_shape([int(static) + 1])
            if static_length is not None:
                known = np.arange(int(static) + 1) * int(static_length)
        return cls(splits, uniform_row_length=length, internal=True, static_row_splits=known)

    # --- encodings ---------------------------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._row_splits.dtype

    def row_splits(self) -> Tensor:
        return self._row_splits

    def row_lengths(self) -> Tensor:
        return self._row_splits[1:] - self._row_splits[:-1]

    def value_rowids(self) -> Tensor:
        return row_splits_to_segment_ids(self._row_splits)

    def row_starts(self) -> Tensor:
        return self._row_splits[:-1]

    def row_limits(self) -> Tensor:
        return self._row_splits[1:]

    def nrows(self) -> Tensor:
        return array_ops.shape(self._row_splits, out_type=self.dtype)[0] - 1

    def nvals(self) -> Tensor:
        return self._row_splits[-1]

    def uniform_row_length(self) -> Tensor | None:
        return self._uniform_row_length

    def is_uniform(self) -> bool:
        return self._uniform_row_length is not None

    @property
    def static_nrows(self) -> int | None:
        dims = self._row_splits.shape.as_list() if self._row_splits.shape.rank == 1 else [None]
        return None if dims[0] is None else dims[0] - 1

    @property
    def static_nvals(self) -> int | None:
        return None if self._static_row_splits is None else int(self._static_row_splits[-1])

    def static_row_lengths(self) -> tuple[int, ...] | None:
        """The row lengths when the splits are known at graph construction, else None."""
        if self._static_row_splits is None:
            return None
        return tuple(int(v) for v in np.diff(self._static_row_splits))

    @property
    def static_uniform_row_length(self) -> int | None:
        value = None if self._uniform_row_length is None else constant_value(self._uniform_row_length)
        return None if value is None else int(value)

    def with_dtype(self, dtype: Any) -> RowPartition:
        """This partition with int32 or int64 tensors."""
        dtype = dtypes.as_dtype(dtype)
        if dtype == self.dtype:
            return self
        length = None if self._uniform_row_length is None else cast_ops.cast(self._uniform_row_length, dtype)
        return RowPartition(cast_ops.cast(self._row_splits, dtype), length, internal=True,
                            static_row_splits=self._static_row_splits)

    def __repr__(self) -> str:
        return f"tf.RowPartition(row_splits={self._row_splits!r})"
