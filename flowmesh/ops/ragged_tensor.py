"""``tf.RaggedTensor``: rows of different lengths, as ``values`` + ``row_splits`` tensors.

A graph-side composite as in TensorFlow: ``values`` (a Tensor, or a RaggedTensor for each
further ragged dimension) holds the rows one after the other, and row ``i`` is
``values[row_splits[i]:row_splits[i + 1]]``. Fetching one with ``Session.run`` returns a
:class:`~flowmesh.core.ragged_tensor_value.RaggedTensorValue`; feeding one feeds its
component tensors (``tf.ragged.placeholder``). Everything is built from existing ops, so
gradients flow to ``flat_values`` through them. Indexing and the elementwise operators are
in ``ragged_operators.py``; the ``tf.ragged`` ops in the other ``ragged_*.py`` modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.core.ragged_tensor_value import RaggedTensorValue
from flowmesh.core.shapes import TensorShape
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops import array_ops, cast_ops, check_ops, math_ops, range_ops, reduction_ops
from flowmesh.ops._builders import constant_value
from flowmesh.ops.ragged_dense import default_fill, lengths_from_padding, longest, masked_rows, pad_rows
from flowmesh.ops.ragged_segment_ids import (
    check_splits,
    lengths_to_splits,
    row_splits_to_segment_ids,
    segment_ids_to_row_splits,
    validated_splits,
)
from flowmesh.ops.ragged_tensor_spec import RaggedTensorSpec
from flowmesh.ops.select_ops import where, where_v2


def _int_tensor(value: Any, name: str, dtype: dtypes.DType | None) -> Tensor:
    t = convert_to_tensor(value, name=name, preferred_dtype=dtype or dtypes.int64)
    if t.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{name} must be an int32 or int64 tensor, got {t.dtype.name}")
    return t


def _values_tensor(values: Any) -> Any:
    return values if isinstance(values, RaggedTensor) else convert_to_tensor(values, name="values")


def _partition_dtype(values: Any) -> dtypes.DType | None:
    return values.row_splits.dtype if isinstance(values, RaggedTensor) else None


class RaggedTensor:
    """A tensor with one or more ragged dimensions (``tf.RaggedTensor``).

    Build one with a factory (``from_row_splits``, ``from_row_lengths``,
    ``from_value_rowids``, ``from_tensor``, ``tf.ragged.constant`` ...), not the constructor.
    """

    def __init__(self, values: Any, row_splits: Tensor, uniform_row_length: Tensor | None = None,
                 internal: bool = False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the factory "
                             "methods instead (e.g., RaggedTensor.from_row_lengths())")
        if isinstance(values, RaggedTensor) and values.row_splits.dtype != row_splits.dtype:
            raise ValueError(f"RaggedTensor row_splits must have the same dtype as values.row_splits "
                             f"({row_splits.dtype.name} vs {values.row_splits.dtype.name}); use "
                             "with_row_splits_dtype to convert one")
        if not isinstance(values, RaggedTensor) and values.shape.rank == 0:
            raise ValueError(f"RaggedTensor values must have rank >= 1, got a scalar ({values.name})")
        self._values = values
        self._row_splits = row_splits
        self._uniform_row_length = uniform_row_length
        static = None if uniform_row_length is None else constant_value(uniform_row_length)
        self._static_uniform = None if static is None else int(static)

    # --- factories ---------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values: Any, row_splits: Any, name: str | None = None,
                        validate: bool = True) -> RaggedTensor:
        """Row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``.

        Raises:
            ValueError: ``row_splits`` is not an int vector, or fails validation statically.
            InvalidArgumentError: (at run time, ``validate``) splits not starting at 0,
                decreasing, or not ending at ``nrows(values)``.
        """
        with name_scope(name, "RaggedFromRowSplits", [values, row_splits]):
            values = _values_tensor(values)
            splits = check_splits(_int_tensor(row_splits, "row_splits", _partition_dtype(values)))
            if validate:
                splits = validated_splits(splits, _nvals(values, splits.dtype))
            return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values: Any, row_lengths: Any, name: str | None = None,
                         validate: bool = True) -> RaggedTensor:
        """Row ``i`` holds the next ``row_lengths[i]`` values."""
        with name_scope(name, "RaggedFromRowLengths", [values, row_lengths]):
            values = _values_tensor(values)
            lengths = _int_tensor(row_lengths, "row_lengths", _partition_dtype(values))
            if lengths.shape.rank not in (None, 1):
                raise ValueError(f"row_lengths must be a vector, got shape {lengths.shape}")
            if validate:
                with control_dependencies([check_ops.assert_non_negative(
                        lengths, message="Arguments to from_row_lengths do not form a valid RaggedTensor")]):
                    lengths = array_ops.identity(lengths)
            return cls.from_row_splits(values, lengths_to_splits(lengths), validate=validate)

    @classmethod
    def from_row_starts(cls, values: Any, row_starts: Any, name: str | None = None,
                        validate: bool = True) -> RaggedTensor:
        """Row ``i`` starts at ``row_starts[i]`` and ends where row ``i + 1`` starts."""
        with name_scope(name, "RaggedFromRowStarts", [values, row_starts]):
            values = _values_tensor(values)
            starts = _int_tensor(row_starts, "row_starts", _partition_dtype(values))
            nvals = array_ops.expand_dims(_nvals(values, starts.dtype), 0)
            return cls.from_row_splits(values, array_ops.concat([starts, nvals], 0), validate=validate)

    @classmethod
    def from_row_limits(cls, values: Any, row_limits: Any, name: str | None = None,
                        validate: bool = True) -> RaggedTensor:
        """Row ``i`` ends at ``row_limits[i]`` and starts where row ``i - 1`` ends."""
        with name_scope(name, "RaggedFromRowLimits", [values, row_limits]):
            values = _values_tensor(values)
            limits = _int_tensor(row_limits, "row_limits", _partition_dtype(values))
            zero = array_ops.zeros([1], limits.dtype)
            return cls.from_row_splits(values, array_ops.concat([zero, limits], 0), validate=validate)

    @classmethod
    def from_value_rowids(cls, values: Any, value_rowids: Any, nrows: Any = None, name: str | None = None,
                          validate: bool = True) -> RaggedTensor:
        """Value ``j`` goes to row ``value_rowids[j]`` (sorted ascending); ``nrows`` defaults
        to ``value_rowids[-1] + 1``."""
        with name_scope(name, "RaggedFromValueRowIds", [values, value_rowids, nrows]):
            values = _values_tensor(values)
            rowids = _int_tensor(value_rowids, "value_rowids", _partition_dtype(values))
            if rowids.shape.rank not in (None, 1):
                raise ValueError(f"value_rowids must be a vector, got shape {rowids.shape}")
            if nrows is not None:
                nrows = cast_ops.cast(convert_to_tensor(nrows, name="nrows"), rowids.dtype)
            if validate:
                checks = [check_ops.assert_non_negative(rowids, message="value_rowids must be non-negative"),
                          check_ops.assert_greater_equal(rowids[1:], rowids[:-1],
                                                         message="value_rowids must be sorted")]
                if nrows is not None:
                    checks.append(check_ops.assert_less(rowids[-1:], nrows,
                                                        message="value_rowids must be less than nrows"))
                with control_dependencies(checks):
                    rowids = array_ops.identity(rowids)
            splits = segment_ids_to_row_splits(rowids, nrows, out_type=rowids.dtype)
            return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_uniform_row_length(cls, values: Any, uniform_row_length: Any, nrows: Any = None,
                                validate: bool = True, name: str | None = None) -> RaggedTensor:
        """Every row holds ``uniform_row_length`` values; ``nrows`` defaults to
        ``nvals / uniform_row_length`` (0 when the length is 0)."""
        with name_scope(name, "RaggedFromUniformRowLength", [values, uniform_row_length, nrows]):
            values = _values_tensor(values)
            length = _int_tensor(uniform_row_length, "uniform_row_length", _partition_dtype(values))
            if length.shape.rank not in (None, 0):
                raise ValueError(f"uniform_row_length must be a scalar, got shape {length.shape}")
            nvals = _nvals(values, length.dtype)
            if nrows is None:
                nrows = where_v2(math_ops.equal(length, 0), array_ops.zeros([], length.dtype),
                                 math_ops.floordiv(nvals, math_ops.maximum(length, 1)))
            else:
                nrows = cast_ops.cast(convert_to_tensor(nrows, name="nrows"), length.dtype)
            splits = range_ops.range(nrows + 1) * length
            static_rows = constant_value(nrows)
            if static_rows is not None:
                splits.set_shape(TensorShape([int(static_rows) + 1]))
            if validate:
                with control_dependencies([check_ops.assert_equal(
                        nrows * length, nvals, message="uniform_row_length must divide nvals")]):
                    splits = array_ops.identity(splits)
            return cls(values, splits, uniform_row_length=length, internal=True)

    @classmethod
    def from_nested_row_splits(cls, flat_values: Any, nested_row_splits: Sequence[Any], name: str | None = None,
                               validate: bool = True) -> Any:
        """``from_row_splits`` applied innermost first (``flat_values`` if the list is empty)."""
        if isinstance(nested_row_splits, Tensor):
            raise TypeError("nested_row_splits must be a list of Tensors")
        with name_scope(name, "RaggedFromNestedRowSplits", [flat_values, *nested_row_splits]):
            result = flat_values
            for splits in reversed(list(nested_row_splits)):
                result = cls.from_row_splits(result, splits, validate=validate)
            return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values: Any, nested_row_lengths: Sequence[Any], name: str | None = None,
                                validate: bool = True) -> Any:
        """``from_row_lengths`` applied innermost first."""
        with name_scope(name, "RaggedFromNestedRowlengths", [flat_values, *nested_row_lengths]):
            result = flat_values
            for lengths in reversed(list(nested_row_lengths)):
                result = cls.from_row_lengths(result, lengths, validate=validate)
            return result

    @classmethod
    def from_nested_value_rowids(cls, flat_values: Any, nested_value_rowids: Sequence[Any],
                                 nested_nrows: Sequence[Any] | None = None, name: str | None = None,
                                 validate: bool = True) -> Any:
        """``from_value_rowids`` applied innermost first.

        Raises:
            ValueError: ``nested_nrows`` and ``nested_value_rowids`` differ in length.
        """
        rowids = list(nested_value_rowids)
        nrows = [None] * len(rowids) if nested_nrows is None else list(nested_nrows)
        if len(nrows) != len(rowids):
            raise ValueError("Argument `nested_nrows` must have the same length as `nested_value_rowids`")
        with name_scope(name, "RaggedFromNestedValueRowIds", [flat_values, *rowids]):
            result = flat_values
            for ids, n in reversed(list(zip(rowids, nrows))):
                result = cls.from_value_rowids(result, ids, n, validate=validate)
            return result

    @classmethod
    def from_tensor(cls, tensor: Any, lengths: Any = None, padding: Any = None, ragged_rank: int = 1,
                    name: str | None = None, row_splits_dtype: Any = dtypes.int64) -> RaggedTensor:
        """A dense ``[nrows, ncols, ...]`` tensor as a ragged one: every row whole, or its first
        ``lengths[i]`` cells, or without its trailing ``padding`` cells.

        Raises:
            ValueError: both ``lengths`` and ``padding``, ``ragged_rank < 1``, or rank < 2.
        """
        if lengths is not None and padding is not None:
            raise ValueError("Specify argument `lengths` or `padding`, but not both.")
        if not isinstance(ragged_rank, int) or ragged_rank <= 0:
            raise ValueError(f"Argument `ragged_rank` must be an int greater than 0. Received "
                             f"ragged_rank={ragged_rank}.")
        splits_dtype = dtypes.as_dtype(row_splits_dtype)
        with name_scope(name, "RaggedFromTensor", [tensor, lengths, padding]):
            tensor = convert_to_tensor(tensor, name="tensor")
            rank = tensor.shape.rank
            if rank is not None and rank < ragged_rank + 1:
                raise ValueError(f"The rank of a RaggedTensor must be greater than 1 and than ragged_rank; "
                                 f"got a tensor of rank {rank} with ragged_rank={ragged_rank}.")
            if ragged_rank > 1:
                return _from_tensor_nested(cls, tensor, lengths, padding, ragged_rank, splits_dtype)
            if padding is not None:
                lengths = lengths_from_padding(tensor, padding, splits_dtype)
            if lengths is not None:
                lengths = cast_ops.cast(_int_tensor(lengths, "lengths", splits_dtype), splits_dtype)
                ncols = array_ops.shape(tensor, out_type=splits_dtype)[1]
                lengths = math_ops.maximum(math_ops.minimum(lengths, ncols), array_ops.zeros([], splits_dtype))
                return cls.from_row_splits(masked_rows(tensor, lengths), lengths_to_splits(lengths), validate=False)
            dims = array_ops.shape(tensor, out_type=splits_dtype)
            static = tensor.shape.as_list() if rank is not None else [None, None, None]
            if rank is not None and all(d is not None for d in static[2:]):
                values = array_ops.reshape(tensor, [-1] + static[2:])
            else:
                values = array_ops.reshape(tensor, array_ops.concat([dims[:1] * dims[1:2], dims[2:]], 0))
            nrows, ncols = static[0], static[1]
            return cls.from_uniform_row_length(
                values, dims[1] if ncols is None else convert_to_tensor(ncols, splits_dtype),
                nrows=dims[0] if nrows is None else convert_to_tensor(nrows, splits_dtype), validate=False)

    @classmethod
    def from_sparse(cls, st_input: Any, name: str | None = None, row_splits_dtype: Any = dtypes.int64) -> RaggedTensor:
        """The rows of a 2-D ``SparseTensor`` (indices in row-major order) as a ragged tensor.

        Raises:
            ValueError: the sparse tensor is not 2-D.
        """
        splits_dtype = dtypes.as_dtype(row_splits_dtype)
        with name_scope(name, "RaggedFromSparse", [st_input]):
            dense_shape = st_input.dense_shape
            rank = dense_shape.shape.as_list()[0] if dense_shape.shape.rank == 1 else None
            if rank not in (None, 2):
                raise ValueError(f"rank(st_input) must be 2, got dense_shape {dense_shape.shape}")
            rowids = cast_ops.cast(st_input.indices[:, 0], splits_dtype)
            nrows = cast_ops.cast(dense_shape[0], splits_dtype)
            return cls.from_value_rowids(st_input.values, rowids, nrows, validate=False)

    # --- accessors ---------------------------------------------------------------------------
    @property
    def values(self) -> Any:
        """The concatenated rows (a Tensor, or a RaggedTensor when more dimensions are ragged)."""
        return self._values

    @property
    def row_splits(self) -> Tensor:
        """The 1-D splits of the outermost ragged dimension."""
        return self._row_splits

    @property
    def flat_values(self) -> Tensor:
        """The innermost values tensor."""
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> tuple[Tensor, ...]:
        """The row_splits of every ragged dimension, outermost first."""
        splits, values = [self._row_splits], self._values
        while isinstance(values, RaggedTensor):
            splits.append(values.row_splits)
            values = values.values
        return tuple(splits)

    @property
    def ragged_rank(self) -> int:
        """The number of ragged dimensions."""
        return self._values.ragged_rank + 1 if isinstance(self._values, RaggedTensor) else 1

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return self._row_splits.dtype

    @property
    def uniform_row_length(self) -> Tensor | None:
        """The length of every row when this dimension is uniform, else None."""
        return self._uniform_row_length

    @property
    def shape(self) -> TensorShape:
        """The static shape: ``[nrows, None (ragged) ..., flat_values dims]``."""
        splits_dim = self._row_splits.shape.as_list()[0] if self._row_splits.shape.rank == 1 else None
        nrows = None if splits_dim is None else splits_dim - 1
        ncols = self._static_uniform
        inner = self._values.shape
        return TensorShape([nrows, ncols]).concatenate(inner[1:] if inner.rank is not None else TensorShape(None))

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def graph(self) -> Any:
        return self._row_splits.graph

    @property
    def _type_spec(self) -> RaggedTensorSpec:
        return RaggedTensorSpec(self.shape, self.dtype, self.ragged_rank, self.row_splits_dtype)

    def nrows(self, out_type: Any = None, name: str | None = None) -> Tensor:
        """The number of rows (a scalar of ``out_type``, default the splits' dtype)."""
        with name_scope(name, "RaggedNRows", [self]):
            out = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
            return array_ops.shape(self._row_splits, out_type=out)[0] - 1

    def row_starts(self, name: str | None = None) -> Tensor:
        """Where each row starts in ``values``."""
        with name_scope(name, "RaggedRowStarts", [self]):
            return self._row_splits[:-1]

    def row_limits(self, name: str | None = None) -> Tensor:
        """Where each row ends in ``values``."""
        with name_scope(name, "RaggedRowLimits", [self]):
            return self._row_splits[1:]

    def value_rowids(self, name: str | None = None) -> Tensor:
        """The row index of every value."""
        with name_scope(name, "RaggedValueRowIds", [self]):
            return row_splits_to_segment_ids(self._row_splits)

    def nested_value_rowids(self, name: str | None = None) -> tuple[Tensor, ...]:
        """``value_rowids`` of every ragged dimension."""
        with name_scope(name, "RaggedNestedValueRowIds", [self]):
            return tuple(row_splits_to_segment_ids(s) for s in self.nested_row_splits)

    def row_lengths(self, axis: int = 1, name: str | None = None) -> Any:
        """The length of each row along ``axis`` (a Tensor for axis 1, ragged deeper).

        Raises:
            ValueError: ``axis`` is 0 or beyond the ragged dimensions.
        """
        if axis == 0:
            return self.nrows()
        with name_scope(name, "RaggedRowLengths", [self]):
            if axis == 1:
                return self._row_splits[1:] - self._row_splits[:-1]
            if isinstance(self._values, RaggedTensor):
                return self.with_values(self._values.row_lengths(axis - 1))
            raise ValueError(f"row_lengths: axis={axis} is not a ragged dimension of {self.shape}")

    def nested_row_lengths(self, name: str | None = None) -> tuple[Tensor, ...]:
        """The row lengths of every ragged dimension, outermost first."""
        with name_scope(name, "RaggedNestedRowLengths", [self]):
            return tuple(s[1:] - s[:-1] for s in self.nested_row_splits)

    def bounding_shape(self, axis: Any = None, name: str | None = None, out_type: Any = None) -> Tensor:
        """The smallest dense shape holding this tensor: ``[nrows, longest rows ..., inner dims]``."""
        with name_scope(name, "RaggedBoundingBox", [self, axis]):
            out = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
            dims = [array_ops.expand_dims(cast_ops.cast(self.nrows(), out), 0)]
            for splits in self.nested_row_splits:
                dims.append(array_ops.expand_dims(cast_ops.cast(longest(splits[1:] - splits[:-1]), out), 0))
            dims.append(array_ops.shape(self.flat_values, out_type=out)[1:])
            shape = array_ops.concat(dims, 0)
            return shape if axis is None else array_ops.gather(shape, axis)

    # --- rebuilding --------------------------------------------------------------------------
    def with_values(self, new_values: Any) -> RaggedTensor:
        """This partition around ``new_values`` (same number of rows as ``values``)."""
        new_values = _values_tensor(new_values)
        if isinstance(new_values, RaggedTensor) and new_values.row_splits_dtype != self.row_splits_dtype:
            new_values = new_values.with_row_splits_dtype(self.row_splits_dtype)
        return RaggedTensor(new_values, self._row_splits, self._uniform_row_length, internal=True)

    def with_flat_values(self, new_values: Any) -> RaggedTensor:
        """These ragged dimensions around ``new_values`` (same outer size as ``flat_values``)."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype: Any) -> RaggedTensor:
        """This tensor with every row-splits tensor cast to ``dtype`` (int32 or int64)."""
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"dtype must be int32 or int64, got {dtype.name}")
        if dtype == self.row_splits_dtype:
            return self
        values = self._values.with_row_splits_dtype(dtype) if isinstance(self._values, RaggedTensor) \
            else self._values
        length = None if self._uniform_row_length is None else cast_ops.cast(self._uniform_row_length, dtype)
        return RaggedTensor(values, cast_ops.cast(self._row_splits, dtype), length, internal=True)

    # --- conversions ---------------------------------------------------------------------------
    def to_tensor(self, default_value: Any = None, name: str | None = None, shape: Any = None) -> Tensor:
        """The padded dense tensor (``default_value`` fills the padding; ``shape``, possibly
        with ``None`` dims, cuts or pads each dimension to a size).

        Raises:
            ValueError: ``shape`` has the wrong rank or differs in a uniform inner dimension.
        """
        with name_scope(name, "RaggedToTensor", [self, default_value]):
            default = default_fill(self.dtype, default_value)
            rank = self.shape.rank
            target = None if shape is None else TensorShape(shape)
            if target is not None and target.rank is not None and rank is not None and target.rank != rank:
                raise ValueError(f"to_tensor: shape {target} must have the rank of the ragged tensor ({rank})")
            dims = [None] * (rank or 0) if target is None or target.rank is None else target.as_list()
            flat = self.flat_values
            inner = flat.shape.as_list()[1:] if flat.shape.rank is not None else []
            for want, have in zip(dims[self.ragged_rank + 1:], inner):
                if want is not None and have is not None and want != have:
                    raise ValueError(f"to_tensor: shape {target} differs from the uniform inner dimensions "
                                     f"{inner} of the values")
            dense = _pad_nested(self, default, dims)
            if rank is not None:
                dense.set_shape(TensorShape([d if d is not None else s for d, s in zip(dims, self.shape.as_list())]))
            return dense

    def to_sparse(self, name: str | None = None) -> Any:
        """A ``SparseTensor`` with an entry for every element (row-major indices)."""

        with name_scope(name, "RaggedToSparse", [self]):
            ones = array_ops.ones(array_ops.shape(self.flat_values), dtype=dtypes.bool)
            mask = self.with_flat_values(ones).to_tensor(False)
            indices = where(mask)
            values = array_ops.reshape(self.flat_values, [-1])
            return SparseTensor(indices, values, array_ops.shape(mask, out_type=dtypes.int64))

    # --- Session.run ---------------------------------------------------------------------------
    def _fetch_components(self) -> tuple[list[Any], Any]:
        return [self._values, self._row_splits], RaggedTensorValue

    def _feed_components(self, value: Any) -> list[tuple[Any, Any]]:
        """Feeding a RaggedTensor feeds its values and row_splits from a RaggedTensorValue."""
        if not isinstance(value, RaggedTensorValue):
            raise TypeError(f"A RaggedTensor feed must be a tf.ragged.RaggedTensorValue(values, row_splits), "
                            f"got {type(value).__name__}")
        return [(self._values, value.values), (self._row_splits, value.row_splits)]

    def __repr__(self) -> str:
        return f"tf.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"

    def __str__(self) -> str:
        return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"


RaggedTensorSpec.value_type = RaggedTensor  # the spec module cannot import this one (see its docstring)


def _nvals(values: Any, dtype: dtypes.DType) -> Tensor:
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=dtype)
    return array_ops.shape(values, out_type=dtype)[0]


def _from_tensor_nested(cls: type, tensor: Tensor, lengths: Any, padding: Any, ragged_rank: int,
                        splits_dtype: dtypes.DType) -> RaggedTensor:
    """``from_tensor`` with ``ragged_rank > 1``: the innermost ragged dimension from the
    tensor with its outer dimensions merged, then uniform partitions around it."""
    dims = array_ops.shape(tensor, out_type=splits_dtype)
    sizes = reduction_ops.cumprod(dims)
    merged = array_ops.reshape(tensor, array_ops.concat([sizes[ragged_rank - 1:ragged_rank], dims[ragged_rank:]], 0))
    result = cls.from_tensor(merged, lengths, padding, row_splits_dtype=splits_dtype)
    static = tensor.shape.as_list() if tensor.shape.rank is not None else [None] * (ragged_rank + 1)
    for axis in range(ragged_rank - 1, 0, -1):
        length = dims[axis] if static[axis] is None else convert_to_tensor(static[axis], splits_dtype)
        result = cls.from_uniform_row_length(result, length, nrows=sizes[axis - 1], validate=False)
    return result


def _pad_nested(rt: RaggedTensor, default: Tensor, dims: list[Any]) -> Tensor:
    """Pads the innermost ragged dimension first, then each outer one around it."""
    values = rt.values
    if isinstance(values, RaggedTensor):
        values = _pad_nested(values, default, [None] + list(dims[2:]))
    nrows = None if not dims or dims[0] is None else convert_to_tensor(dims[0], rt.row_splits_dtype)
    ncols = None if len(dims) < 2 or dims[1] is None else convert_to_tensor(dims[1], rt.row_splits_dtype)
    return pad_rows(values, rt.row_splits, default, nrows, ncols)
