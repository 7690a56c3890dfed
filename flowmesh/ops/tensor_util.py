"""Small framework helpers of the TensorFlow 1.x top level: ``identity_n``,
``get_static_value``, ``dimension_value``, ``dimension_at_index``, ``is_tensor`` and the
deprecated initializer spellings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core.deprecation import deprecated
from flowmesh.core.graph import Operation, Tensor, name_scope
from flowmesh.core.shapes import Dimension, TensorShape
from flowmesh.ops import array_ops
from flowmesh.ops._builders import constant_value
from flowmesh.ops.lookup_ops import tables_initializer
from flowmesh.ops.variables import (
    local_variables_initializer,
    variables_initializer,
)


def identity_n(input: Sequence[Any], name: str | None = None) -> list[Tensor]:  # noqa: A002
    """An ``identity`` of each input."""
    with name_scope(name, "IdentityN", list(input)):
        return [array_ops.identity(x) for x in input]


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The value of ``tensor`` when it is known at graph-construction time, else None."""
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor)
    value = constant_value(tensor)
    return None if value is None else np.asarray(value)


def dimension_value(dimension: Any) -> int | None:
    """The int (or None) of a ``Dimension`` or int."""
    if isinstance(dimension, Dimension):
        return dimension.value
    return dimension


def dimension_at_index(shape: Any, index: int) -> Dimension:
    """``shape[index]`` as a ``Dimension`` (unknown for an unknown-rank shape)."""
    shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    if shape.rank is None:
        return Dimension(None)
    value = shape.as_list()[index]
    return Dimension(value)


def is_tensor(x: Any) -> bool:
    """True for graph tensors, sparse tensors and variables (``tf.is_tensor``)."""
    return isinstance(x, Tensor) or type(x).__name__ in (
        "SparseTensor", "IndexedSlices", "Variable", "PartitionedVariable")


@deprecated("2017-03-02", "Use `tf.local_variables_initializer` instead.")
def initialize_local_variables() -> Operation:
    """Deprecated: ``local_variables_initializer``."""
    return local_variables_initializer()


@deprecated("2017-03-02", "Use `tf.variables_initializer` instead.")
def initialize_variables(var_list: list[Any], name: str = "init") -> Operation:
    """Deprecated: ``variables_initializer``."""
    return variables_initializer(var_list, name=name)


@deprecated(None, "Use `tf.tables_initializer` instead.")
def initialize_all_tables(name: str = "init_all_tables") -> Operation:
    """Deprecated: ``tables_initializer``."""
    return tables_initializer(name=name)


def is_symbolic_tensor(tensor: Any) -> bool:
    """True for graph tensors (``tf.is_symbolic_tensor``): every flowmesh ``Tensor``."""
    return isinstance(tensor, Tensor)


def convert_to_tensor_or_indexed_slices(value: Any, dtype: Any = None, name: str | None = None) -> Any:
    """``value`` itself when it is an ``IndexedSlices`` (checking ``dtype``), else
    ``convert_to_tensor(value, dtype, name)``.

    Raises:
        ValueError: an ``IndexedSlices`` whose dtype is not ``dtype``.
    """
    from flowmesh.core import dtypes
    from flowmesh.core.convert import convert_to_tensor
    from flowmesh.core.indexed_slices import IndexedSlices

    if isinstance(value, IndexedSlices):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
                             f"IndexedSlices with dtype {value.dtype.name}: {value}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
