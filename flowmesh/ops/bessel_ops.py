"""Modified Bessel functions of the first kind: ``BesselI0 BesselI0e BesselI1 BesselI1e``
(TensorFlow's op types; ``e`` = exponentially scaled, ``i0e(x) = exp(-|x|) i0(x)``).

Gradients are TensorFlow's (``special_math_grad.py``)::

    d i0  = i1                     d i0e = i1e - sign(x) i0e
    d i1  = i0 - i1 / x            d i1e = i0e - i1e (sign(x) + 1 / x)     (both 1/2 at x = 0)
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops._builders import FLOATS, check_dtype, make_tensor, same_shape
from flowmesh.ops.select_ops import where


def _at_zero_half(x: Tensor, fn: Any) -> Tensor:
    """``fn(safe_x)`` where ``x != 0`` and 1/2 at 0, with no NaN reaching either branch."""
    zero = math_ops.equal(x, array_ops.zeros_like(x))
    safe = where(zero, array_ops.ones_like(x), x)
    return where(zero, 0.5 * array_ops.ones_like(x), fn(safe))


def _i1_grad(op: Any, grad: Tensor) -> list:
    x = op.inputs[0]
    return [grad * _at_zero_half(x, lambda s: bessel_i0(s) - bessel_i1(s) / s)]


def _i1e_grad(op: Any, grad: Tensor) -> list:
    x = op.inputs[0]
    return [grad * _at_zero_half(x, lambda s: bessel_i0e(s) - bessel_i1e(s) * (math_ops.sign(s) + 1.0 / s))]


register_op("BesselI0", same_shape, grad=lambda op, g: [g * bessel_i1(op.inputs[0])])
register_op("BesselI0e", same_shape, grad=lambda op, g: [
    g * (bessel_i1e(op.inputs[0]) - math_ops.sign(op.inputs[0]) * op.outputs[0])])
register_op("BesselI1", same_shape, grad=_i1_grad)
register_op("BesselI1e", same_shape, grad=_i1e_grad)


def _bessel(op_type: str, x: Any, name: str | None) -> Tensor:
    t = convert_to_tensor(x, name="x")
    check_dtype(op_type, t, FLOATS)
    return make_tensor(op_type, [t], name=name or op_type)


def bessel_i0(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 0, elementwise."""
    return _bessel("BesselI0", x, name)


def bessel_i0e(x: Any, name: str | None = None) -> Tensor:
    """``exp(-|x|) * bessel_i0(x)``, elementwise (no overflow for large ``|x|``)."""
    return _bessel("BesselI0e", x, name)


def bessel_i1(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the first kind of order 1, elementwise."""
    return _bessel("BesselI1", x, name)


def bessel_i1e(x: Any, name: str | None = None) -> Tensor:
    """``exp(-|x|) * bessel_i1(x)``, elementwise."""
    return _bessel("BesselI1e", x, name)
