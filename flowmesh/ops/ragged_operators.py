"""Indexing and elementwise operators of ``tf.RaggedTensor`` (``rt[i]``, ``rt[a:b]``,
``rt + 1``, ``-rt`` ...), installed on the class when this module is imported (as
TensorFlow's ``ragged_getitem.py`` and ``ragged_operators.py`` do). Operators act on the
flat values: the other operand is a RaggedTensor with the same row splits (checked at run
time) or a value that broadcasts against the uniform inner dimensions only."""

from __future__ import annotations

from collections.abc import Callable
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


def _binary_operator(name: str, fn: Callable[[Any, Any], Any],
                     reverse: bool = False) -> Callable[[RaggedTensor, Any], RaggedTensor]:
    """The method ``name`` that applies ``fn`` to the flat values (``other`` first when
    ``reverse``: the reflected operator)."""
    def operator(self: RaggedTensor, other: Any) -> RaggedTensor:
        return _elementwise(self, other, fn, reverse=reverse)

    operator.__name__ = operator.__qualname__ = name
    return operator


def _unary_operator(name: str, fn: Callable[[Any], Any]) -> Callable[[RaggedTensor], RaggedTensor]:
    """The method ``name`` that applies ``fn`` to the flat values."""
    def operator(self: RaggedTensor) -> RaggedTensor:
        return self.with_flat_values(fn(self.flat_values))

    operator.__name__ = operator.__qualname__ = name
    return operator


# operator -> op on the flat values; the reflected form (``1 + rt``) where the table says so
_BINARY_OPERATORS: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {
    "add": (math_ops.add, True),
    "sub": (math_ops.subtract, True),
    "mul": (math_ops.multiply, True),
    "truediv": (math_ops.truediv, True),
    "floordiv": (math_ops.floordiv, False),
    "mod": (math_ops.floormod, False),
    "pow": (math_ops.pow, False),
    "lt": (math_ops.less, False),
    "le": (math_ops.less_equal, False),
    "gt": (math_ops.greater, False),
    "ge": (math_ops.greater_equal, False),
    "and": (math_ops.logical_and, False),
    "or": (math_ops.logical_or, False),
}
_UNARY_OPERATORS: dict[str, Callable[[Any], Any]] = {
    "neg": math_ops.negative,
    "abs": math_ops.abs,
    "invert": math_ops.logical_not,
}

def _install_operators() -> None:
    """Puts indexing and the operators of the tables on ``RaggedTensor``."""
    RaggedTensor.__getitem__ = ragged_getitem  # type: ignore[method-assign]
    for name, (fn, reflected) in _BINARY_OPERATORS.items():
        setattr(RaggedTensor, f"__{name}__", _binary_operator(f"__{name}__", fn))
        if reflected:
            setattr(RaggedTensor, f"__r{name}__", _binary_operator(f"__r{name}__", fn, reverse=True))
    for name, unary in _UNARY_OPERATORS.items():
        setattr(RaggedTensor, f"__{name}__", _unary_operator(f"__{name}__", unary))


_install_operators()
