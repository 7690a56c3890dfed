"""Indexing and elementwise operators of ``tf.RaggedTensor`` (``rt[i]``, ``rt[a:b]``,
``rt + 1``, ``-rt`` ...), installed on the class when this module is imported (as
TensorFlow's ``ragged_getitem.py`` and ``ragged_operators.py`` do). Operators act on the
flat values: the other operand is a RaggedTensor with the same row splits (checked at run
time) or a value that broadcasts against the uniform inner dimensions only."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, cast_ops, check_ops, gather_ops, math_ops
from flowmesh.ops.ragged_tensor import RaggedTensor
from flowmesh.ops.select_ops import where_v2


def ragged_getitem(self: RaggedTensor, key: Any) -> Any:
    """Row ``key`` (an int: a Tensor, or a RaggedTensor when more dimensions are ragged) or
    rows ``start:stop`` (a slice with step 1: a RaggedTensor).

    Raises:
        TypeError: another kind of index (index the dense ``to_tensor()`` for those).
    """
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    splits = self.row_splits
    nrows = self.nrows()
    if isinstance(key, (int, Tensor)) and not isinstance(key, bool):
        index = cast_ops.cast(convert_to_tensor(key, name="index"), splits.dtype)
        index = where_v2(index < 0, index + nrows, index)
        check = check_ops.assert_less(index, nrows, message="RaggedTensor row index out of range")
        with control_dependencies([check]):
            start = array_ops.identity(gather_ops.gather(splits, index))
        return _rows_between(self.values, start, gather_ops.gather(splits, index + 1))
    if isinstance(key, slice) and key.step in (None, 1):
        start, stop = (_bound(b, nrows, default) for b, default in ((key.start, 0), (key.stop, nrows)))
        stop = math_ops.maximum(stop, start)
        new_splits = splits[start:stop + 1] - gather_ops.gather(splits, start)
        values = _rows_between(self.values, gather_ops.gather(splits, start), gather_ops.gather(splits, stop))
        return RaggedTensor.from_row_splits(values, new_splits, validate=False)
    raise TypeError(f"RaggedTensor indices must be an int or a slice of rows with step 1, got {key!r}; "
                    "for other indexing convert with to_tensor() first")


def _elementwise(self: RaggedTensor, other: Any, fn: Any, reverse: bool = False) -> RaggedTensor:
    flat = self.flat_values
    if isinstance(other, RaggedTensor):
        if other.ragged_rank != self.ragged_rank:
            raise ValueError(f"Ragged operands need the same ragged_rank ({self.ragged_rank} vs "
                             f"{other.ragged_rank})")
        checks = [check_ops.assert_equal(a, b, message="Inputs must have identical ragged splits")
                  for a, b in zip(self.nested_row_splits, other.nested_row_splits) if a is not b]
        with control_dependencies(checks):
            operand = array_ops.identity(other.flat_values)
    else:
        operand = other
        rank = getattr(operand, "shape", None)
        rank = rank.rank if isinstance(rank, TensorShape) else None
        inner = flat.shape.rank
        if rank is not None and inner is not None and rank > inner - 1:
            raise ValueError(f"A dense operand of shape {operand.shape} cannot broadcast against the ragged "
                             f"dimensions of {self.shape}; convert it with tf.RaggedTensor.from_tensor")
    return self.with_flat_values(fn(operand, flat) if reverse else fn(flat, operand))


def _op_add(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.add)


def _op_radd(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.add, reverse=True)


def _op_sub(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.subtract)


def _op_rsub(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.subtract, reverse=True)


def _op_mul(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.multiply)


def _op_rmul(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.multiply, reverse=True)


def _op_truediv(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.truediv)


def _op_rtruediv(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.truediv, reverse=True)


def _op_floordiv(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.floordiv)


def _op_mod(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.floormod)


def _op_pow(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.pow)


def _op_lt(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.less)


def _op_le(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.less_equal)


def _op_gt(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.greater)


def _op_ge(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.greater_equal)


def _op_and(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.logical_and)


def _op_or(self: RaggedTensor, other: Any) -> RaggedTensor:
    return _elementwise(self, other, math_ops.logical_or)


def _op_neg(self: RaggedTensor) -> RaggedTensor:
    return self.with_flat_values(math_ops.negative(self.flat_values))


def _op_abs(self: RaggedTensor) -> RaggedTensor:
    return self.with_flat_values(math_ops.abs(self.flat_values))


def _op_invert(self: RaggedTensor) -> RaggedTensor:
    return self.with_flat_values(math_ops.logical_not(self.flat_values))


def _bound(value: Any, nrows: Tensor, default: Any) -> Tensor:
    """A slice bound as a row index clipped to ``[0, nrows]`` (negative counts from the end)."""
    if value is None:
        return default if isinstance(default, Tensor) else array_ops.zeros([], nrows.dtype)
    bound = cast_ops.cast(convert_to_tensor(value, name="bound"), nrows.dtype)
    bound = where_v2(bound < 0, bound + nrows, bound)
    return math_ops.minimum(math_ops.maximum(bound, array_ops.zeros([], nrows.dtype)), nrows)


def _rows_between(values: Any, start: Tensor, stop: Tensor) -> Any:
    """``values[start:stop]`` along the first dimension (rows of a RaggedTensor too)."""
    if isinstance(values, RaggedTensor):
        splits = values.row_splits
        inner = _rows_between(values.values, gather_ops.gather(splits, start), gather_ops.gather(splits, stop))
        return RaggedTensor.from_row_splits(inner, splits[start:stop + 1] - gather_ops.gather(splits, start),
                                            validate=False)
    return values[start:stop]


RaggedTensor.__getitem__ = ragged_getitem  # type: ignore[method-assign]
RaggedTensor.__add__ = _op_add  # type: ignore[method-assign,assignment]
RaggedTensor.__radd__ = _op_radd  # type: ignore[method-assign,assignment]
RaggedTensor.__sub__ = _op_sub  # type: ignore[method-assign,assignment]
RaggedTensor.__rsub__ = _op_rsub  # type: ignore[method-assign,assignment]
RaggedTensor.__mul__ = _op_mul  # type: ignore[method-assign,assignment]
RaggedTensor.__rmul__ = _op_rmul  # type: ignore[method-assign,assignment]
RaggedTensor.__truediv__ = _op_truediv  # type: ignore[method-assign,assignment]
RaggedTensor.__rtruediv__ = _op_rtruediv  # type: ignore[method-assign,assignment]
RaggedTensor.__floordiv__ = _op_floordiv  # type: ignore[method-assign,assignment]
RaggedTensor.__mod__ = _op_mod  # type: ignore[method-assign,assignment]
RaggedTensor.__pow__ = _op_pow  # type: ignore[method-assign,assignment]
RaggedTensor.__lt__ = _op_lt  # type: ignore[method-assign,assignment]
RaggedTensor.__le__ = _op_le  # type: ignore[method-assign,assignment]
RaggedTensor.__gt__ = _op_gt  # type: ignore[method-assign,assignment]
RaggedTensor.__ge__ = _op_ge  # type: ignore[method-assign,assignment]
RaggedTensor.__and__ = _op_and  # type: ignore[method-assign,assignment]
RaggedTensor.__or__ = _op_or  # type: ignore[method-assign,assignment]
RaggedTensor.__neg__ = _op_neg  # type: ignore[method-assign,assignment]
RaggedTensor.__abs__ = _op_abs  # type: ignore[method-assign,assignment]
RaggedTensor.__invert__ = _op_invert  # type: ignore[method-assign,assignment]
