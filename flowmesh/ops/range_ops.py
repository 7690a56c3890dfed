"""Sequences: ``tf.range``, ``tf.linspace`` and ``tf.math.invert_permutation``.

``linspace`` follows TensorFlow 2's ``linspace_nd`` (what ``tf.compat.v1.linspace`` is):
``start`` and ``stop`` may be N-D (broadcast together), the ``num`` samples are laid out
along ``axis``, the last one is exactly ``stop``, and it is differentiable in ``start``
and ``stop``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, broadcast_shapes, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import (
    FLOATS,
    INDEX_TYPES,
    check_dtype,
    constant_value,
    convert_same_dtype,
    make_tensor,
    same_shape,
)
from flowmesh.ops.cast_ops import cast


# --- Range ---------------------------------------------------------------------------------
def _range_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    for name, t in zip(("start", "limit", "delta"), inputs):
        if t.shape.rank not in (None, 0):
            raise InvalidArgumentError(f"{name} must be a scalar, not shape {t.shape}")
    values = [constant_value(t) for t in inputs]
    dtype = inputs[0].dtype
    if all(v is not None for v in values):
        start, limit, delta = (v.item() for v in values)
        if delta == 0:
            raise InvalidArgumentError("Requires delta != 0")
        if (delta > 0 and start > limit) or (delta < 0 and start < limit):
            raise InvalidArgumentError(
                f"Requires start <= limit when delta > 0 (or start >= limit when delta < 0): "
                f"start={start}, limit={limit}, delta={delta}")
        n = builtins.max(0, int(np.ceil((limit - start) / delta)))
        return [(dtype, TensorShape([n]))]
    return [(dtype, TensorShape([None]))]


register_op("Range", _range_shape, not_differentiable=True)

_RANGE_ORDER = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def _inferred_dtype(value: Any) -> dtypes.DType:
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return value.dtype
    if isinstance(value, (np.ndarray, np.generic)):
        return dtypes.as_dtype(np.asarray(value).dtype)
    return dtypes.float32 if isinstance(value, float) else dtypes.int32


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,  # noqa: A001
          name: str = "range") -> Tensor:
    """``tf.range(start, limit, delta)`` or ``tf.range(limit)``.

    Args:
        start, limit, delta: scalars; ``limit`` is exclusive; ``delta`` non-zero.
        dtype: the output dtype (default: the widest of the arguments' dtypes, in the order
            int32 < int64 < float32 < float64).
        name: op name.

    Returns:
        A 1-D tensor ``[start, start + delta, ...]`` stopping before ``limit``.

    Raises:
        InvalidArgumentError: ``delta`` is 0 or points away from ``limit``.
    """
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if dtype is not None:
        target = dtypes.as_dtype(dtype)
    else:
        kinds = [_inferred_dtype(v) for v in values]
        target = builtins.max(kinds, key=lambda d: _RANGE_ORDER.index(d) if d in _RANGE_ORDER else 0)
    with name_scope(name, "Range", [start, limit, delta]) as scope:
        tensors = [cast(convert_to_tensor(v), target) if _inferred_dtype(v) != target or
                   isinstance(v, Tensor) else convert_to_tensor(v, dtype=target) for v in values]
        return make_tensor("Range", tensors, name=scope)


# --- LinSpace ------------------------------------------------------------------------------
def _linspace_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    start, stop, num_t = inputs
    if start.dtype != stop.dtype:
        raise TypeError(f"LinSpace start and stop must share a dtype: {start.dtype.name} vs "
                        f"{stop.dtype.name}")
    if num_t.shape.rank not in (None, 0):
        raise InvalidArgumentError(f"num must be a scalar, not shape {num_t.shape}")
    num = constant_value(num_t)
    if num is not None and int(num) < 0:
        raise InvalidArgumentError(f"Requires num >= 0, got {int(num)}")
    base = broadcast_shapes(start.shape, stop.shape)
    if base.rank is None:
        return [(start.dtype, unknown_shape())]
    dims = base.as_list()
    axis = attrs["axis"]
    if not -len(dims) - 1 <= axis <= len(dims):
        raise InvalidArgumentError(f"axis {axis} out of range [{-len(dims) - 1}, {len(dims)}]")
    axis %= len(dims) + 1
    return [(start.dtype, TensorShape(dims[:axis] + [None if num is None else int(num)] + dims[axis:]))]


register_op("LinSpace", _linspace_shape)  # gradient: math_grad


def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (``tf.linspace``).

    Args:
        start, stop: float tensors (broadcast together).
        num: int32/int64 scalar, the number of values (0 gives an empty result).
        name: op name.
        axis: where the new dimension goes in the output.

    Returns:
        ``start.shape`` with ``num`` inserted at ``axis``.

    Raises:
        TypeError: ``start``/``stop`` are not float16/bfloat16/float32/float64.
        InvalidArgumentError: ``num`` is negative or ``axis`` out of range.
    """
    a, b = convert_same_dtype("LinSpace", [start, stop], ["start", "stop"])
    check_dtype("LinSpace", a, FLOATS, "start")
    num_t = num if isinstance(num, Tensor) else convert_to_tensor(num, dtype=dtypes.int32, name="num")
    check_dtype("LinSpace", num_t, INDEX_TYPES, "num")
    return make_tensor("LinSpace", [a, b, num_t], {"axis": int(axis)}, name=name or "LinSpace")


lin_space = linspace


# --- InvertPermutation -------------------------------------------------------------------
register_op("InvertPermutation", same_shape, not_differentiable=True)


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """The inverse of a permutation vector: ``y[x[i]] = i``.

    Raises:
        TypeError: ``x`` is not int32/int64.
        InvalidArgumentError: ``x`` is not a permutation of ``0..n-1`` (at run time).
    """
    t = convert_to_tensor(x)
    check_dtype("InvertPermutation", t, INDEX_TYPES)
    return make_tensor("InvertPermutation", [t], name=name or "InvertPermutation")
