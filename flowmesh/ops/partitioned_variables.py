"""Partitioned variables: one logical variable stored as slices, e.g. over several ps tasks.

``tf.get_variable(name, shape, partitioner=...)`` (or a ``variable_scope`` with a
partitioner) creates ``name/part_0``, ``name/part_1``, ... each an ordinary variable
holding a contiguous slice of the full tensor along one axis, and returns a
:class:`PartitionedVariable` grouping them. Under ``replica_device_setter`` each part is
placed on its own ps task (round robin), so a large embedding is sharded over the
parameter servers; ``tf.nn.embedding_lookup(partitioned, ids, partition_strategy="div")``
then gathers only the rows it needs from each shard, and the sparse gradient updates only
those rows on the ps that holds them.

Slicing follows TensorFlow: with ``n`` parts of a dimension of size ``d``, the first
``d % n`` parts get ``d // n + 1`` rows and the others ``d // n`` (the ``"div"``
layout of ``embedding_lookup``). Each part carries a :class:`SaveSliceInfo` so a
``Saver`` writes the parts as slices of one checkpoint tensor named ``name``.

Partitioners (``fixed_size_partitioner``, ``min_max_variable_partitioner``,
``variable_axis_size_partitioner``) are functions ``(shape, dtype) -> [parts per axis]``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor, register_tensor_conversion_function
from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops import array_ops, init_ops, manip_ops
from flowmesh.ops.control_flow_ops import group

Partitioner = Callable[..., list[int]]


# --- partitioners ----------------------------------------------------------------------------
def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Partitioner:
    """A partitioner that splits ``axis`` into ``num_shards`` parts (fewer if the axis is
    smaller).

    Args:
        num_shards: number of parts (>= 1).
        axis: the dimension to split.

    Returns:
        ``partitioner(shape, dtype=None) -> [1, ..., num_shards, ..., 1]``.

    Raises:
        ValueError: ``num_shards`` < 1.
    """
    if int(num_shards) < 1:
        raise ValueError(f"fixed_size_partitioner: num_shards must be >= 1, got {num_shards}")

    def _partitioner(shape: Any, dtype: Any = None, **unused: Any) -> list[int]:
        shape = as_shape(shape)
        _check_axis(shape, axis)
        parts = [1] * shape.rank
        parts[axis] = min(int(num_shards), int(shape[axis]))
        return parts

    return _partitioner


def min_max_variable_partitioner(max_partitions: int = 1, axis: int = 0,
                                 min_slice_size: int = 256 << 10,
                                 bytes_per_string_element: int = 16) -> Partitioner:
    """A partitioner giving each part at least ``min_slice_size`` bytes, and at most
    ``max_partitions`` parts.

    Args:
        max_partitions: upper bound on the number of parts.
        axis: the dimension to split.
        min_slice_size: minimum bytes per part (the last one may be smaller).
        bytes_per_string_element: size assumed for a string element.

    Returns:
        ``partitioner(shape, dtype) -> [parts per axis]``.
    """
    def _partitioner(shape: Any, dtype: Any, **unused: Any) -> list[int]:
        shape = as_shape(shape)
        _check_axis(shape, axis)
        total = _num_elements(shape) * _element_size(dtype, bytes_per_string_element)
        wanted = int(math.ceil(total / float(min_slice_size)))
        parts = [1] * shape.rank
        parts[axis] = max(1, min(int(shape[axis]), int(max_partitions), wanted))
        return parts

    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes: int, axis: int = 0,
                                   bytes_per_string_element: int = 16,
                                   max_shards: int | None = None) -> Partitioner:
    """A partitioner keeping every part under ``max_shard_bytes`` (TensorFlow's rule: as
    many whole slices of ``axis`` as fit, at least one).

    Args:
        max_shard_bytes: the largest part, in bytes.
        axis: the dimension to split.
        bytes_per_string_element: size assumed for a string element.
        max_shards: optional upper bound on the number of parts.

    Returns:
        ``partitioner(shape, dtype) -> [parts per axis]``.

    Raises:
        ValueError: a non-positive ``max_shard_bytes``, ``bytes_per_string_element`` or
            ``max_shards``.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(
            "Both max_shard_bytes and bytes_per_string_element must be positive. Currently, "
            f"max_shard_bytes is {max_shard_bytes} and bytes_per_string_element is "
            f"{bytes_per_string_element}")
    if max_shards is not None and max_shards < 1:
        raise ValueError(f"max_shards must be positive, got {max_shards}.")

    def _partitioner(shape: Any, dtype: Any, **unused: Any) -> list[int]:
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        _check_axis(shape, axis)
        dtype = dtypes.as_dtype(dtype)
        slice_bytes = _num_elements(shape) / int(shape[axis]) * _element_size(dtype, bytes_per_string_element)
        per_shard = max(1, math.floor(max_shard_bytes / slice_bytes))
        shards = int(math.ceil(int(shape[axis]) / per_shard))
        if max_shards:
            shards = min(int(max_shards), shards)
        parts = [1] * shape.rank
        parts[axis] = shards
        return parts

    return _partitioner


def _check_axis(shape: TensorShape, axis: int) -> None:
    if shape.rank is None or not 0 <= axis < shape.rank:
        raise ValueError(f"Can not partition variable along axis {axis} when shape is only {shape}")
    if shape[axis] is None or int(shape[axis]) < 1:
        raise ValueError(f"Can not partition variable along axis {axis} of unknown or zero size "
                         f"(shape {shape})")


def _num_elements(shape: TensorShape) -> int:
    n = shape.num_elements()
    if n is None:
        raise ValueError(f"Can not partition a variable of partially known shape {shape}")
    return n


def _element_size(dtype: Any, string_size: int) -> int:
    dtype = dtypes.as_dtype(dtype)
    return string_size if dtype == dtypes.string else dtype.size


# --- slice descriptions ----------------------------------------------------------------------
class PartitionInfo:
    """Where a part sits in the full variable (passed to initializers as ``partition_info``).

    Args:
        full_shape: the shape of the whole variable.
        var_offset: the part's offset in every dimension.
    """

    def __init__(self, full_shape: list[int], var_offset: list[int]):
        if len(full_shape) != len(var_offset):
            raise ValueError(f"full_shape {full_shape} and var_offset {var_offset} differ in rank")
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape: list[int]) -> int:
        """The offset along the (only) partitioned dimension."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self.var_offset[dim]

    def single_slice_dim(self, shape: list[int]) -> int | None:
        """The partitioned dimension, or None when the part is the whole variable."""
        dims = [i for i, (n, f) in enumerate(zip(shape, self.full_shape)) if n != f]
        if len(dims) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape {shape} sliced in more than "
                             f"one dimension of {self.full_shape}")
        return dims[0] if dims else None


class SaveSliceInfo:
    """How a part maps into its full variable in a checkpoint (TensorFlow's fields)."""

    def __init__(self, full_name: str, full_shape: list[int], var_offset: list[int],
                 var_shape: list[int]):
        self.full_name = full_name
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)
        self.var_shape = list(var_shape)

    @property
    def spec(self) -> str:
        """The checkpoint ``shape_and_slices`` string, e.g. ``"10 4 0,5:0,4"``."""
        dims = " ".join(str(d) for d in self.full_shape)
        slices = ":".join(f"{o},{n}" for o, n in zip(self.var_offset, self.var_shape))
        return f"{dims} {slices}"

    def __repr__(self) -> str:
        return f"SaveSliceInfo({self.full_name!r}, {self.spec!r})"


def slice_layout(full_shape: list[int], partitions: list[int]) -> tuple[int, list[tuple[list[int], list[int]]]]:
    """The partitioned axis and ``(offset, shape)`` of every part (TensorFlow's layout).

    Raises:
        ValueError: more than one dimension split, or a bad partition list.
    """
    if len(partitions) != len(full_shape):
        raise ValueError(f"Partitioner returned a partition list {partitions} that does not match "
                         f"the variable's rank {len(full_shape)} (shape {full_shape})")
    if any(p < 1 for p in partitions):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {partitions}")
    split = [i for i, p in enumerate(partitions) if p > 1]
    if len(split) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {full_shape}, "
                         f"partitioning: {partitions}")
    axis = split[0] if split else 0
    n = partitions[axis]
    if n > full_shape[axis]:
        raise ValueError(f"Cannot split dimension {axis} of size {full_shape[axis]} into {n} parts "
                         f"(shape {full_shape})")
    base, extra = divmod(full_shape[axis], n)
    layout, offset = [], 0
    for i in range(n):
        size = base + (1 if i < extra else 0)
        start = [0] * len(full_shape)
        start[axis] = offset
        shape = list(full_shape)
        shape[axis] = size
        layout.append((start, shape))
        offset += size
    return axis, layout


# --- the partitioned variable ----------------------------------------------------------------
class PartitionedVariable:
    """A variable stored as several parts (``tf.get_variable`` with a partitioner).

    Iterating yields the parts (ordinary ``tf.Variable`` objects, in order); using it as a
    tensor concatenates them (:meth:`as_tensor`). Optimizers and ``Saver`` expand it with
    :meth:`_get_variable_list`; ``embedding_lookup`` gathers from each part where it lives.

    Args:
        name: the full variable's name (the parts are ``name/part_<i>``).
        shape: the full shape.
        dtype: the element type.
        variable_list: the parts, in order.
        partitions: parts per dimension (exactly one entry may exceed 1).

    Raises:
        ValueError: the parts do not tile ``shape`` along one axis.
    """

    def __init__(self, name: str, shape: Any, dtype: Any, variable_list: list[Any],
                 partitions: list[int]):
        self._name = name
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._variable_list = sorted(variable_list, key=_offset_key)
        self._partitions = list(partitions)
        self._axis, layout = slice_layout(self._shape.as_list(), self._partitions)
        if len(layout) != len(self._variable_list):
            raise ValueError(f"PartitionedVariable {name}: {len(self._variable_list)} variables for "
                             f"partitions {partitions}")

    # --- identity ----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self) -> Any:
        return self._variable_list[0].graph

    @property
    def op(self) -> Operation:
        """The first part's op (TensorFlow gives the concatenation's op in some versions)."""
        return self._variable_list[0].op

    @property
    def device(self) -> str:
        return self._variable_list[0].device

    def __iter__(self) -> Iterator[Any]:
        return iter(self._variable_list)

    def __len__(self) -> int:
        return len(self._variable_list)

    def _get_variable_list(self) -> list[Any]:
        """The parts (what optimizers update and savers save)."""
        return list(self._variable_list)

    def _get_partitions(self) -> list[int]:
        return list(self._partitions)

    @property
    def partition_axis(self) -> int:
        """*(flowmesh)* The dimension the parts split."""
        return self._axis

    # --- values ------------------------------------------------------------------------------
    def _concat(self) -> Tensor:
        graph = get_default_graph()
        with graph.name_scope(self._name + "/ConcatPartitions/"):
            if len(self._variable_list) == 1:
                return array_ops.identity(self._variable_list[0].value(), name="concat")
            return array_ops.concat([v.value() for v in self._variable_list], self._axis, name="concat")

    def as_tensor(self) -> Tensor:
        """The full value: the parts concatenated (outside any control dependencies)."""
        with get_default_graph().control_dependencies(None):
            return self._concat()

    def assign(self, value: Any, use_locking: bool | None = None, name: str | None = None,
               read_value: bool = True) -> Any:
        """Writes ``value`` (the full shape) into the parts; returns their new values
        concatenated (or the grouped op when ``read_value=False``).

        Raises:
            ValueError: ``value`` does not have the variable's shape.
        """

        value = convert_to_tensor(value, dtype=self._dtype)
        if not value.shape.is_compatible_with(self._shape):
            raise ValueError(f"Cannot assign a value of shape {value.shape} to partitioned variable "
                             f"{self._name} of shape {self._shape}")
        sizes = [int(v.get_shape()[self._axis]) for v in self._variable_list]
        pieces = array_ops.split(value, sizes, axis=self._axis) if len(sizes) > 1 else [value]
        updates = [v.assign(p, read_value=read_value) for v, p in zip(self._variable_list, pieces)]
        if not read_value:
            return group(*updates, name=name or f"{self._name}/Assign")
        return array_ops.concat(updates, self._axis) if len(updates) > 1 else updates[0]

    def __repr__(self) -> str:
        return (f"<PartitionedVariable '{self._name}' shape={self._shape} dtype={self._dtype.name} "
                f"parts={len(self._variable_list)}>")


def _offset_key(variable: Any) -> list[int]:
    info = getattr(variable, "_save_slice_info", None)
    return list(info.var_offset) if info is not None else []


register_tensor_conversion_function(
    PartitionedVariable, lambda value, dtype=None, name=None: value.as_tensor())


# --- creation through the variable store ------------------------------------------------------
def get_partitioned_variable(store: Any, name: str, shape: TensorShape, dtype: dtypes.DType,
                             initializer: Any, regularizer: Any, reuse: Any, trainable: bool | None,
                             collections: Any, partitioner: Partitioner, validate_shape: bool,
                             constraint: Any) -> PartitionedVariable:
    """Gets or creates the partitioned variable ``name`` in ``store`` (``get_variable``'s
    path when a partitioner is set).

    Returns:
        The :class:`PartitionedVariable`.

    Raises:
        ValueError: reuse conflicts (exists without reuse, missing with ``reuse=True``,
            different shape, dtype or partitions), a shape that is not fully defined, or a
            bad partition list.
    """
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable ({name}) must be fully defined, but "
                         f"instead was {shape}.")
    partitions = [int(p) for p in partitioner(shape=shape, dtype=dtype)]
    known: dict[str, PartitionedVariable] = store.__dict__.setdefault("partitioned_vars", {})
    found = known.get(name)
    if found is not None:
        return _reuse(found, name, shape, dtype, partitions, reuse)
    if reuse is True:
        raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=False or reuse=tf.AUTO_REUSE "
                         "in VarScope?")
    if name in store.vars:
        raise ValueError(f"A partitioner was set for {name}, but a variable {name} without partitions "
                         "already exists; use another name or drop the partitioner.")
    _, layout = slice_layout(shape.as_list(), partitions)
    full = shape.as_list()
    parts = []
    for i, (offset, part_shape) in enumerate(layout):
        part_name = f"{name}/part_{i}"
        if part_name in store.vars:
            raise ValueError(f"Partitioned variable {name} would create {part_name}, which already "
                             "exists; was the variable created before with different partitions?")
        part = store.get_variable(
            part_name, shape=part_shape, dtype=dtype,
            initializer=_part_initializer(initializer, dtype, full, offset, part_shape),
            regularizer=regularizer, reuse=reuse, trainable=trainable, collections=collections,
            validate_shape=validate_shape, constraint=constraint)
        part._save_slice_info = SaveSliceInfo(name, full, offset, part_shape)
        parts.append(part)
    variable = PartitionedVariable(name, shape, dtype, parts, partitions)
    known[name] = variable
    return variable


def _reuse(found: PartitionedVariable, name: str, shape: TensorShape, dtype: dtypes.DType,
           partitions: list[int], reuse: Any) -> PartitionedVariable:
    if reuse is False or reuse is None:
        raise ValueError(f"Partitioned variable with name {name} already exists. Did you mean to set "
                         "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
    if not shape.is_compatible_with(found.get_shape()):
        raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape {shape} "
                         f"and found shape {found.get_shape()}.")
    if dtype != found.dtype:
        raise ValueError(f"Trying to reuse partitioned variable {name}, but specified dtype "
                         f"{dtype.name} and found dtype {found.dtype.name}.")
    if partitions != found._get_partitions():
        raise ValueError(f"Trying to reuse partitioned variable {name}, but specified partitions "
                         f"{partitions} and found partitions {found._get_partitions()}.")
    return found


def _part_initializer(initializer: Any, dtype: dtypes.DType, full: list[int], offset: list[int],
                      part_shape: list[int]) -> Any:
    """The initializer of one part: a callable told where the part sits, or the matching
    slice of a full-size initial value."""
    if initializer is None:
        initializer = init_ops.glorot_uniform_initializer() if dtype.is_floating else init_ops.zeros_initializer()
    if isinstance(initializer, type) and issubclass(initializer, init_ops.Initializer):
        initializer = initializer(dtype=dtype)
    if not callable(initializer):
        value = convert_to_tensor(initializer, dtype=dtype)
        if not value.shape.is_compatible_with(full):
            raise ValueError(f"The initial value of a partitioned variable must have its full shape "
                             f"{full}, got {value.shape}")
        return manip_ops.slice(value, offset, part_shape)
    info = PartitionInfo(full, offset)
    if not _accepts_partition_info(initializer):
        return initializer
    return lambda shape, dtype=None, partition_info=None: initializer(shape, dtype=dtype, partition_info=info)


def _accepts_partition_info(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "partition_info" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


__all__ = [
    "PartitionInfo",
    "PartitionedVariable",
    "SaveSliceInfo",
    "fixed_size_partitioner",
    "get_partitioned_variable",
    "min_max_variable_partitioner",
    "variable_axis_size_partitioner",
]
