"""The common shape of the elementwise special functions of ``tf.math.special`` (Bessel
functions, special integrals): one floating-point input, an output of the same shape, the
op's gradient registered beside it, and a wrapper ``fn(x, name=None)``. A new function is
one :func:`special_function` call; its kernel sits under the same op type in ``kernels/``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops._builders import FLOATS, check_dtype, make_tensor, same_shape
from flowmesh.ops.select_ops import where

GradientFn = Callable[[Any, Tensor], list]


def special_function_tensor(op_type: str, x: Any, name: str | None) -> Tensor:
    """The output of a new ``op_type`` node on ``x`` (converted as input ``x``).

    Raises:
        TypeError: ``x`` is not a floating-point tensor.
    """
    t = convert_to_tensor(x, name="x")
    check_dtype(op_type, t, FLOATS)
    return make_tensor(op_type, [t], name=name or op_type)


def special_function(op_type: str, name: str, grad: GradientFn,
                     doc: str) -> Callable[..., Tensor]:
    """Registers the elementwise op ``op_type`` with its gradient and returns its wrapper.

    Args:
        op_type: TensorFlow's op type (``"BesselJ0"``).
        name: the wrapper's name (``"bessel_j0"``).
        grad: ``grad(op, out_grad) -> [in_grad]``.
        doc: the wrapper's docstring.

    Returns:
        ``fn(x, name=None) -> Tensor``; ``x`` must be a floating-point tensor.
    """
    register_op(op_type, same_shape, grad=grad)

    def wrapper(x: Any, name: str | None = None) -> Tensor:
        return special_function_tensor(op_type, x, name)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = doc
    return wrapper


def at_zero_half(x: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """``fn(safe_x)`` where ``x != 0`` and 1/2 at 0, with no NaN reaching either branch (the
    derivative of the order-1 Bessel functions, whose formula divides by ``x``)."""
    zero = math_ops.equal(x, array_ops.zeros_like(x))
    safe = where(zero, array_ops.ones_like(x), x)
    return where(zero, 0.5 * array_ops.ones_like(x), fn(safe))
