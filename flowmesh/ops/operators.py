"""Python operator overloading for Tensors (``+ - * / // % ** @``, comparisons, ``[]``).

TensorFlow 1.x semantics: ``==`` and ``!=`` compare identity (use ``tf.equal``),
``/`` is true division, ``&  |  ^  ~`` are logical ops on bool tensors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.ops import linalg_ops, math_ops, strided_slice_ops


def _binary(fn: Callable[..., Tensor], name: str) -> tuple[Callable, Callable]:
    def forward(self: Any, other: Any) -> Tensor:
        return fn(self, other, name=name)

    def reflected(self: Any, other: Any) -> Tensor:
        return fn(other, self, name=name)

    return forward, reflected


OPERATORS: dict[str, Callable[..., Any]] = {}
for _dunder, _fn, _name in [
    ("add", math_ops.add, "add"),
    ("sub", math_ops.subtract, "sub"),
    ("mul", math_ops.multiply, "mul"),
    ("truediv", math_ops.truediv, "truediv"),
    ("floordiv", math_ops.floordiv, "floordiv"),
    ("mod", math_ops.floormod, "mod"),
    ("pow", math_ops.pow, "pow"),
    ("matmul", linalg_ops.matmul, "matmul"),
    ("and", math_ops.logical_and, "and"),
    ("or", math_ops.logical_or, "or"),
    ("xor", math_ops.logical_xor, "xor"),
]:
    _forward, _reflected = _binary(_fn, _name)
    OPERATORS[f"__{_dunder}__"] = _forward
    OPERATORS[f"__r{_dunder}__"] = _reflected

OPERATORS.update({
    "__lt__": lambda self, other: math_ops.less(self, other),
    "__le__": lambda self, other: math_ops.less_equal(self, other),
    "__gt__": lambda self, other: math_ops.greater(self, other),
    "__ge__": lambda self, other: math_ops.greater_equal(self, other),
    "__neg__": lambda self: math_ops.negative(self),
    "__abs__": lambda self: math_ops.abs(self),
    "__invert__": lambda self: math_ops.logical_not(self),
    "__getitem__": strided_slice_ops.getitem,
    "__pos__": lambda self: self,
})


def install(cls: type) -> None:
    """Installs the overloads on ``cls`` (Tensor here; Variable reuses them)."""
    for name, fn in OPERATORS.items():
        setattr(cls, name, fn)


install(Tensor)
Tensor.OVERLOADABLE_OPERATORS = frozenset(OPERATORS)
