"""``tf.experimental.DynamicRaggedShape``: the shape of a ragged or dense tensor, as row
partitions (one per ragged-or-partitioned dimension after the first) around the dense
``inner_shape`` of the flat values. ``rank = num_row_partitions + inner_rank``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, cast_ops, reduction_ops
from flowmesh.ops._builders import constant_value
from flowmesh.ops.ragged_tensor import RaggedTensor
from flowmesh.ops.row_partition import RowPartition


def _is_length(x: Any) -> bool:
    return isinstance(x, int) or (isinstance(x, (tuple, list)) and all(isinstance(v, int) for v in x))


class DynamicRaggedShape:
    """A (possibly ragged) shape: ``row_partitions`` and the dense ``inner_shape``.

    Raises:
        ValueError: partitions of mixed dtypes, or an inner shape that is not a vector.
    """

    def __init__(self, row_partitions: Sequence[RowPartition], inner_shape: Any, dtype: Any = None,
                 validate: bool = True, static_inner_shape: Any = None):
        partitions = tuple(row_partitions)
        found = {p.dtype for p in partitions}
        if dtype is None:
            if len(found) > 1:
                raise ValueError("row_partitions have mixed dtypes; pass dtype= to cast them")
            dtype = found.pop() if found else (inner_shape.dtype if isinstance(inner_shape, Tensor) else
                                               dtypes.int64)
        self._dtype = dtypes.as_dtype(dtype)
        self._row_partitions = tuple(p.with_dtype(self._dtype) for p in partitions)
        inner = convert_to_tensor(inner_shape, name="inner_shape", preferred_dtype=self._dtype)
        if inner.dtype != self._dtype:
            inner = cast_ops.cast(inner, self._dtype)
        if inner.shape.rank not in (None, 1):
            raise ValueError(f"inner_shape must be a vector, got shape {inner.shape}")
        self._inner_shape = inner
        static = constant_value(inner)
        if static is not None:
            self._static_inner_shape = TensorShape([int(v) for v in static])
        elif static_inner_shape is not None:
            self._static_inner_shape = TensorShape(static_inner_shape)
        else:
            length = inner.shape.as_list()[0] if inner.shape.rank == 1 else None
            self._static_inner_shape = TensorShape(None if length is None else [None] * length)

    # --- factories -----------------------------------------------------------------------------
    @classmethod
    def from_lengths(cls, lengths: list[Any], num_row_partitions: int | None = None,
                     dtype: Any = dtypes.int64) -> DynamicRaggedShape:
        """A shape from per-dimension lengths: ints for uniform dimensions, tuples of row
        lengths for ragged ones (``[2, (1, 2), 3]``).

        Raises:
            ValueError: ``lengths`` is not a list of ints / int tuples, or
                ``num_row_partitions`` does not fit it.
        """
        if not isinstance(lengths, list):
            raise ValueError("lengths should be a list")
        for x in lengths:
            if not _is_length(x):
                raise ValueError(f"element of lengths should be int or tuple of ints: instead {x!r}")
        if num_row_partitions is None:
            ragged = [not isinstance(x, int) for x in lengths]
            num_row_partitions = len(ragged) - ragged[::-1].index(True) - 1 if any(ragged) else 0
        if not lengths:
            if num_row_partitions > 0:
                raise ValueError("num_row_partitions==0 for a scalar shape")
            return cls([], [], dtype=dtype)
        if not num_row_partitions < len(lengths):
            raise ValueError("num_row_partitions should be less than `len(lengths)` if shape is not scalar.")
        if num_row_partitions == 0:
            return cls([], lengths, dtype=dtype)
        if not isinstance(lengths[0], int):
            raise ValueError("the first dimension must have a uniform length (an int)")
        partitions, nrows = [], lengths[0]
        for length in lengths[1:num_row_partitions + 1]:
            if isinstance(length, int):
                partitions.append(RowPartition.from_uniform_row_length(length, nrows=nrows, dtype=dtype))
                nrows = nrows * length
            else:
                if len(length) != nrows:
                    raise ValueError(f"ragged lengths {length} must have one entry per row ({nrows})")
                partitions.append(RowPartition.from_row_lengths(list(length), dtype=dtype))
                nrows = sum(length)
        return cls(partitions, [nrows] + list(lengths[num_row_partitions + 1:]), dtype=dtype)

    @classmethod
    def from_row_partitions(cls, row_partitions: Sequence[RowPartition], dtype: Any = None) -> DynamicRaggedShape:
        """The shape whose only inner dimension holds the last partition's values.

        Raises:
            ValueError: no partitions.
        """
        if not row_partitions:
            raise ValueError("row_partitions cannot be empty")
        return cls(row_partitions, array_ops.expand_dims(row_partitions[-1].nvals(), 0), dtype=dtype)

    @classmethod
    def from_tensor(cls, t: Any, dtype: Any = None) -> DynamicRaggedShape:
        """The shape of a RaggedTensor (its row partitions + its flat values' shape) or a Tensor."""
        if isinstance(t, RaggedTensor):
            partitions, rt = [], t
            while isinstance(rt, RaggedTensor):
                length = rt.uniform_row_length
                partitions.append(RowPartition(rt.row_splits, length, internal=True))
                rt = rt.values
            splits_dtype = t.row_splits_dtype
            return cls(partitions, array_ops.shape(t.flat_values, out_type=splits_dtype), dtype=dtype)
        t = convert_to_tensor(t)
        return cls([], array_ops.shape(t, out_type=dtypes.as_dtype(dtype or dtypes.int32)), dtype=dtype)

    # --- accessors ---------------------------------------------------------------------------
    @property
    def row_partitions(self) -> tuple[RowPartition, ...]:
        return self._row_partitions

    @property
    def num_row_partitions(self) -> int:
        return len(self._row_partitions)

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def inner_shape(self) -> Tensor:
        return self._inner_shape

    @property
    def inner_rank(self) -> int | None:
        return self._static_inner_shape.rank

    @property
    def rank(self) -> int | None:
        inner = self.inner_rank
        return None if inner is None else inner + self.num_row_partitions

    def static_lengths(self, ragged_lengths: bool = True) -> list[Any]:
        """Per dimension: its static length, a tuple of row lengths for a ragged dimension
        (when ``ragged_lengths`` and known), or None."""
        inner = self._static_inner_shape.as_list() if self._static_inner_shape.rank is not None else None
        if not self._row_partitions:
            return inner if inner is not None else [...]
        dims: list[Any] = [self._row_partitions[0].static_nrows]
        for p in self._row_partitions:
            if p.is_uniform():
                dims.append(p.static_uniform_row_length)
            elif ragged_lengths:
                dims.append(p.static_row_lengths())
            else:
                dims.append(None)
        return dims + (inner[1:] if inner is not None else [...])

    def is_uniform(self, axis: int) -> bool:
        """Whether every row has the same length along ``axis``.

        Raises:
            IndexError: ``axis`` out of range.
        """
        rank = self.rank
        if rank is not None and not 0 <= axis < rank:
            raise IndexError(f"Expected axis={axis} < rank={rank}")
        if axis == 0 or axis > self.num_row_partitions:
            return True
        return self._row_partitions[axis - 1].is_uniform()

    def __getitem__(self, index: int) -> Any:
        """The size of dimension ``index`` (an int when static, else a scalar Tensor).

        Raises:
            ValueError: the dimension is ragged (it has no single size).
            IndexError: ``index`` out of range.
        """
        if not isinstance(index, int):
            raise TypeError(f"DynamicRaggedShape indices must be ints, got {index!r}")
        rank = self.rank
        if index < 0:
            if rank is None:
                raise ValueError("negative indices need a shape of known rank")
            index += rank
        if rank is not None and not 0 <= index < rank:
            raise IndexError(f"Index {index} is out of range for a shape of rank {rank}")
        static = self.static_lengths(ragged_lengths=False)
        if index < len(static) and isinstance(static[index], int):
            return static[index]
        if index == 0:
            return self._row_partitions[0].nrows() if self._row_partitions else self._inner_shape[0]
        if index <= self.num_row_partitions:
            length = self._row_partitions[index - 1].uniform_row_length()
            if length is None:
                raise ValueError(f"Index {index} is not uniform")
            return length
        return self._inner_shape[index - self.num_row_partitions]

    def with_dtype(self, dtype: Any) -> DynamicRaggedShape:
        """This shape with int32 or int64 tensors."""
        return DynamicRaggedShape(self._row_partitions, self._inner_shape, dtype=dtype)

    def _num_elements(self) -> Tensor:
        return reduction_ops.reduce_prod(self._inner_shape)

    def __repr__(self) -> str:
        return f"<DynamicRaggedShape lengths={self.static_lengths()} num_row_partitions={self.num_row_partitions}>"
