"""Ragged tensors from Python lists and placeholders: ``tf.ragged.constant``,
``tf.ragged.constant_value`` (a NumPy ``RaggedTensorValue``) and ``tf.ragged.placeholder``.

A nested list whose scalars all sit at depth ``K`` becomes a rank-``K`` ragged tensor with
``ragged_rank`` ragged dimensions (default ``K - 1``) around dense ``inner_shape`` values,
by TensorFlow's rules (empty lists count for the depth only when there are no scalars).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.graph import name_scope
from flowmesh.core.ragged_tensor_value import RaggedTensorValue
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops import constant_op
from flowmesh.ops.ragged_tensor import RaggedTensor


def constant(pylist: Any, dtype: Any = None, ragged_rank: int | None = None, inner_shape: Any = None,
             name: str | None = None, row_splits_dtype: Any = dtypes.int64) -> Any:
    """A constant ``RaggedTensor`` holding the nested list ``pylist``.

    Args:
        pylist: a nested list, tuple or NumPy array; its scalars must share one depth ``K``.
        dtype: the element dtype (default: inferred; ``float32`` with no scalars).
        ragged_rank: the number of ragged dimensions (default ``K - 1 - len(inner_shape)``).
        inner_shape: the shape of the dense values inside the ragged dimensions.
        name: a name prefix.
        row_splits_dtype: ``int32`` or ``int64``.

    Returns:
        A ``RaggedTensor`` (a plain Tensor when ``ragged_rank`` is 0 or the list is flat).

    Raises:
        ValueError: inconsistent scalar depths, or a ``ragged_rank``/``inner_shape`` that
            does not fit ``pylist``.
    """
    splits_dtype = dtypes.as_dtype(row_splits_dtype)

    def ragged_factory(values: Any, row_splits: list[int]) -> RaggedTensor:
        splits = constant_op.constant(row_splits, dtype=splits_dtype)
        return RaggedTensor.from_row_splits(values, splits, validate=False)

    def inner_factory(values: Any, dtype: Any, shape: tuple[int, ...], name: str = "Const") -> Any:
        return constant_op.constant(values, dtype=dtype, shape=shape, name=name)

    with name_scope(name, "RaggedConstant"):
        return _from_pylist(ragged_factory, inner_factory, pylist, dtype, ragged_rank, inner_shape)


def constant_value(pylist: Any, dtype: Any = None, ragged_rank: int | None = None, inner_shape: Any = None,
                   row_splits_dtype: Any = "int64") -> Any:
    """A ``RaggedTensorValue`` (NumPy arrays) holding the nested list ``pylist``; the
    arguments are those of :func:`constant` (``dtype`` a NumPy or flowmesh dtype).

    Returns:
        A ``RaggedTensorValue``, or a NumPy array when ``ragged_rank`` is 0.

    Raises:
        ValueError: as :func:`constant`.
    """
    if isinstance(dtype, dtypes.DType):
        dtype = dtype.as_numpy_dtype
    splits_np = dtypes.as_dtype(row_splits_dtype).as_numpy_dtype

    def ragged_factory(values: Any, row_splits: list[int]) -> RaggedTensorValue:
        return RaggedTensorValue(values, np.array(row_splits, dtype=splits_np))

    def inner_factory(values: Any, dtype: Any, shape: tuple[int, ...], name: str = "") -> np.ndarray:
        array = np.array(values, dtype=dtype) if dtype in (None, object) else np.array(values).astype(dtype)
        return array.reshape(shape) if shape is not None else array

    return _from_pylist(ragged_factory, inner_factory, pylist, dtype, ragged_rank, inner_shape)


def placeholder(dtype: Any, ragged_rank: int, value_shape: Any = None, name: str | None = None) -> Any:
    """A ``RaggedTensor`` fed from a ``RaggedTensorValue`` (``tf.compat.v1.ragged.placeholder``):
    an int64 ``row_splits_<i>`` placeholder per ragged dimension around a ``flat_values``
    placeholder of shape ``[None] + value_shape``.

    Raises:
        ValueError: ``ragged_rank`` is negative.
    """
    if ragged_rank < 0:
        raise ValueError(f"ragged_rank must be non-negative, got {ragged_rank}")
    if ragged_rank == 0:
        return constant_op.placeholder(dtype, value_shape, name)
    with name_scope(name, "RaggedPlaceholder", []):
        flat_shape = TensorShape([None]).concatenate(as_shape(value_shape if value_shape is not None else []))
        result = constant_op.placeholder(dtype, flat_shape, "flat_values")
        for i in reversed(range(ragged_rank)):
            splits = constant_op.placeholder(dtypes.int64, [None], f"row_splits_{i}")
            result = RaggedTensor.from_row_splits(result, splits, validate=False)
        return result


# --- the nested-list rules (TensorFlow's ragged_factory_ops._constant_value) ------------------
def _is_scalar(item: Any) -> bool:
    return not isinstance(item, (list, tuple)) and np.ndim(item) == 0


def _depths(pylist: Any) -> tuple[int | None, int]:
    """``(depth of the scalars or None, max depth including empty lists)``.

    Raises:
        ValueError: scalars at different depths.
    """
    if _is_scalar(pylist):
        return 0, 0
    scalar_depth, max_depth = None, 1
    for child in pylist:
        child_scalar, child_max = _depths(child)
        if child_scalar is not None:
            if scalar_depth is not None and scalar_depth != child_scalar + 1:
                raise ValueError("all scalar values must have the same nesting depth")
            scalar_depth = child_scalar + 1
        max_depth = max(max_depth, child_max + 1)
    return scalar_depth, max_depth


def _default_inner_shape(pylist: Any, ragged_rank: int) -> tuple[int, ...]:
    flat = list(pylist)
    for dim in range(ragged_rank):
        if any(_is_scalar(v) for v in flat):
            raise ValueError(f"pylist has scalar values depth {dim + 1}, but ragged_rank={ragged_rank} "
                             f"requires scalar value depth greater than {ragged_rank}")
        flat = [x for v in flat for x in v]

    def shape_of(item: Any) -> tuple[int, ...]:
        if _is_scalar(item):
            return ()
        return (len(item),) + shape_of(item[0]) if len(item) else (0,)

    def check(item: Any, shape: tuple[int, ...]) -> None:
        if (not _is_scalar(item)) != bool(shape) or (shape and shape[0] != len(item)):
            raise ValueError("inner values have inconsistent shape")
        for child in ([] if _is_scalar(item) else item):
            check(child, shape[1:])

    shape = shape_of(flat)
    check(flat, shape)
    return shape[1:]


def _check_ranks(pylist: Any, ragged_rank: int | None, inner_shape: tuple[int, ...] | None,
                 scalar_depth: int | None, max_depth: int) -> None:
    if ragged_rank is not None and ragged_rank < 0:
        raise ValueError(f"Invalid ragged_rank={ragged_rank!r}: must be nonnegative")
    if scalar_depth is not None:
        if max_depth > scalar_depth:
            raise ValueError(f"Invalid pylist={pylist!r}: empty list nesting is greater than scalar value nesting")
        if ragged_rank is not None and max_depth < ragged_rank:
            raise ValueError(f"Invalid pylist={pylist}, max depth smaller than ragged_rank={ragged_rank}")
    if inner_shape is not None and ragged_rank is not None:
        expected = ragged_rank + len(inner_shape) + 1
        if (scalar_depth is not None and expected != scalar_depth) or (scalar_depth is None and expected < max_depth):
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank} "
                             f"and dim(inner_shape)={len(inner_shape)}")


def _from_pylist(ragged_factory: Callable[..., Any], inner_factory: Callable[..., Any], pylist: Any,
                 dtype: Any, ragged_rank: int | None, inner_shape: Any) -> Any:
    if isinstance(pylist, (RaggedTensor, RaggedTensorValue)):
        raise TypeError("pylist may not be a RaggedTensor or RaggedTensorValue.")
    inner_shape = None if inner_shape is None else tuple(inner_shape)
    if _is_scalar(pylist):
        if ragged_rank not in (None, 0):
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank}")
        if inner_shape:
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with dim(inner_shape)={len(inner_shape)}")
        return inner_factory(pylist, dtype, ())
    scalar_depth, max_depth = _depths(pylist)
    _check_ranks(pylist, ragged_rank, inner_shape, scalar_depth, max_depth)
    if ragged_rank == 0 or (ragged_rank is None and (
            max_depth < 2 or (inner_shape is not None and max_depth - len(inner_shape) < 2))):
        return inner_factory(pylist, dtype, inner_shape)
    if inner_shape is None:
        inner_shape = () if ragged_rank is None else _default_inner_shape(pylist, ragged_rank)
    if ragged_rank is None:
        ragged_rank = max(1, (max_depth if scalar_depth is None else scalar_depth - len(inner_shape)) - 1)
    nested_splits: list[list[int]] = []
    values = list(pylist)
    for _ in range(ragged_rank):
        splits, joined = [0], []
        for row in values:
            splits.append(splits[-1] + len(row))
            joined.extend(row)
        nested_splits.append(splits)
        values = joined
    result = inner_factory(values, dtype, (len(values),) + inner_shape, name="values")
    for splits in reversed(nested_splits):
        result = ragged_factory(result, splits)
    return result
