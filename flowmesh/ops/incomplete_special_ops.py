"""Special functions of several arguments: the regularized incomplete gamma functions
``Igamma`` (``P(a, x)``) and ``Igammac`` (``Q(a, x) = 1 - P``), the regularized incomplete
beta function ``Betainc`` (``I_x(a, b)``), the Hurwitz zeta function ``Zeta`` and
``NextAfter`` (TensorFlow's op types, broadcasting like binary ops).

Gradients are TensorFlow's (``math_grad.py``)::

    dP/dx = exp(-x) x^(a-1) / Gamma(a)          dP/da = IgammaGradA(a, x)     dQ = -dP
    dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b)        (none for a and b, as in TensorFlow)
    dZeta(x, q)/dq = -x Zeta(x+1, q)             (none for x, as in TensorFlow)
    d nextafter(x1, x2) = (1, 0)                 (TensorFlow's straight-through choice)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import math_ops
from flowmesh.ops._builders import broadcast_binary, check_dtype, convert_same_dtype, make_tensor
from flowmesh.ops.reduction_ops import reduce_to_shape_of
from flowmesh.ops.special_math_ops import xlog1py

_REAL = (dtypes.float32, dtypes.float64)


def _log_density(a: Tensor, x: Tensor) -> Tensor:
    """``log(exp(-x) x^(a-1) / Gamma(a))``, the derivative of ``P(a, x)`` in ``x``."""
    return -x + math_ops.xlogy(a - 1.0, x) - math_ops.lgamma(a)


def _igamma_grad(sign: float):
    def grad(op: Any, g: Tensor) -> list:
        a, x = op.inputs
        da = sign * g * make_tensor("IgammaGradA", [a, x])
        dx = sign * g * math_ops.exp(_log_density(a, x))
        return [reduce_to_shape_of(da, a), reduce_to_shape_of(dx, x)]

    return grad


register_op("Igamma", broadcast_binary, grad=_igamma_grad(1.0))
register_op("Igammac", broadcast_binary, grad=_igamma_grad(-1.0))
register_op("IgammaGradA", broadcast_binary, not_differentiable=True)


def _betainc_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    """Like TensorFlow, ``a``, ``b`` and ``x`` are scalars or share one shape (no broadcasting)."""
    shape = TensorShape(None)
    for t in inputs:
        if t.shape.rank == 0:
            continue
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"Betainc: a, b and x must be scalars or have one shape, got shapes "
                             f"{[str(i.shape) for i in inputs]}")
        shape = shape.merge_with(t.shape)
    return [(inputs[2].dtype, shape if shape.rank is not None or
             any(t.shape.rank is None for t in inputs) else TensorShape([]))]


def _betainc_grad(op: Any, g: Tensor) -> list:
    a, b, x = op.inputs
    log_beta = math_ops.lgamma(a) + math_ops.lgamma(b) - math_ops.lgamma(a + b)
    density = math_ops.exp(xlog1py(b - 1.0, -x) + math_ops.xlogy(a - 1.0, x) - log_beta)
    return [None, None, reduce_to_shape_of(g * density, x)]


register_op("Betainc", _betainc_shape, grad=_betainc_grad)


def _zeta_grad(op: Any, g: Tensor) -> list:
    x, q = op.inputs
    return [None, reduce_to_shape_of(g * -x * zeta(x + 1.0, q), q)]


register_op("Zeta", broadcast_binary, grad=_zeta_grad)
register_op("NextAfter", broadcast_binary, grad=lambda op, g: [
    reduce_to_shape_of(g, op.inputs[0]), reduce_to_shape_of(g * 0.0, op.inputs[1])])


def _binary(op_type: str, values: list, names: list, name: str | None) -> Tensor:
    tensors = convert_same_dtype(op_type, values, names)
    for t, arg in zip(tensors, names):
        check_dtype(op_type, t, _REAL, arg)
    return make_tensor(op_type, tensors, name=name or op_type)


def igamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The lower regularized incomplete gamma function ``P(a, x)``."""
    return _binary("Igamma", [a, x], ["a", "x"], name)


def igammac(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The upper regularized incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    return _binary("Igammac", [a, x], ["a", "x"], name)


def betainc(a: Any, b: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized incomplete beta function ``I_x(a, b)`` (``a, b > 0``, ``0 <= x <= 1``;
    NaN elsewhere, as in TensorFlow)."""
    return _binary("Betainc", [a, b, x], ["a", "b", "x"], name)


def zeta(x: Any, q: Any, name: str | None = None) -> Tensor:
    """The Hurwitz zeta function ``sum_n (q + n)^-x`` (``x > 1``, ``q > 0``)."""
    return _binary("Zeta", [x, q], ["x", "q"], name)


def nextafter(x1: Any, x2: Any, name: str | None = None) -> Tensor:
    """The next representable value after ``x1`` in the direction of ``x2``, elementwise."""
    return _binary("NextAfter", [x1, x2], ["x1", "x2"], name)


__all__ = ["betainc", "igamma", "igammac", "nextafter", "zeta"]
