"""``tf.where``: elementwise selection (``SelectV2``) and coordinates of true elements.

TensorFlow 1.x ``tf.where(condition, x, y)`` requires ``x`` and ``y`` of one shape and a
``condition`` of that shape or a vector selecting whole rows (its length is ``x``'s first
dimension). ``tf.where_v2`` (TF 2) broadcasts all three. Both lower to ``SelectV2``;
the rank-1 TF1 condition is reshaped to broadcast along the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, broadcast_shapes
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops._builders import convert_same_dtype, make_tensor


def _select_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    cond, x, y = inputs
    if cond.dtype != dtypes.bool:
        raise TypeError(f"SelectV2 condition must be bool, got {cond.dtype.name}")
    if x.dtype != y.dtype:
        raise TypeError(f"SelectV2 x and y must share a dtype: {x.dtype.name} vs {y.dtype.name}")
    return [(x.dtype, broadcast_shapes(broadcast_shapes(cond.shape, x.shape), y.shape))]


def _where_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.int64, TensorShape([None, inputs[0].shape.rank]))]


register_op("SelectV2", _select_shape)  # gradient: math_grad
register_op("Where", _where_shape, not_differentiable=True)


def _coordinates(condition: Any, name: str | None) -> Tensor:
    cond = convert_to_tensor(condition)
    if cond.dtype != dtypes.bool:
        cond = math_ops.not_equal(cond, convert_to_tensor(0, dtype=cond.dtype))
    return make_tensor("Where", [cond], name=name or "Where")


def _check_v1_shapes(cond: Tensor, x: Tensor, y: Tensor) -> None:
    if not x.shape.is_compatible_with(y.shape):
        raise InvalidArgumentError(
            f"tf.where (TF1) needs x and y of the same shape, got {x.shape} and {y.shape}; "
            "use tf.where_v2 to broadcast them")
    shape = x.shape.merge_with(y.shape)
    if cond.shape.rank is None or shape.rank is None or cond.shape.is_compatible_with(shape):
        return
    if cond.shape.rank == 1 and shape.rank >= 1 and cond.shape[:1].is_compatible_with(shape[:1]):
        return
    raise InvalidArgumentError(
        f"tf.where (TF1) condition of shape {cond.shape} must have the shape of x {shape} or be "
        "a vector of its first dimension; use tf.where_v2 to broadcast")


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """``tf.where`` (TensorFlow 1.x).

    Args:
        condition: a bool tensor.
        x, y: tensors of one shape and dtype, or both None.
        name: op name.

    Returns:
        With x and y: ``x`` where ``condition`` is true, else ``y`` (a rank-1 condition picks
        whole rows). Without: the int64 ``[num_true, rank]`` coordinates of true elements.

    Raises:
        ValueError: only one of x and y is given.
        InvalidArgumentError: the shapes do not follow the TF1 rules above.
        TypeError: x and y differ in dtype or the condition is not bool.
    """
    if x is None and y is None:
        return _coordinates(condition, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    cond = convert_to_tensor(condition)
    if cond.dtype != dtypes.bool:
        raise TypeError(f"tf.where condition must be bool, got {cond.dtype.name}")
    a, b = convert_same_dtype("Select", [x, y], ["x", "y"])
    _check_v1_shapes(cond, a, b)
    rank = a.shape.rank if a.shape.rank is not None else b.shape.rank
    if cond.shape.rank == 1 and rank is not None and rank > 1:
        cond = array_ops.reshape(cond, [-1] + [1] * (rank - 1))
    return make_tensor("SelectV2", [cond, a, b], name=name or "Select")


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """``tf.where`` (TensorFlow 2): like :func:`where` but condition, x and y broadcast.

    Raises:
        InvalidArgumentError: the three shapes do not broadcast.
    """
    if x is None and y is None:
        return _coordinates(condition, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    cond = convert_to_tensor(condition, dtype=dtypes.bool)
    a, b = convert_same_dtype("SelectV2", [x, y], ["x", "y"])
    return make_tensor("SelectV2", [cond, a, b], name=name or "SelectV2")
