"""Special functions.

Built from graph ops (their gradients come from the composition): ``lbeta``,
``reciprocal_no_nan``, ``xlog1py``, ``polyval``, ``cumulative_logsumexp``, and the TensorFlow
1.x spellings ``arg_max``, ``arg_min``, ``floor_div``, ``to_complex64/128``.

Ops of several arguments (TensorFlow's op types, broadcasting like binary ops): the
regularized incomplete gamma functions ``Igamma`` (``P(a, x)``) and ``Igammac``
(``Q(a, x) = 1 - P``), the regularized incomplete beta function ``Betainc`` (``I_x(a, b)``),
the Hurwitz zeta function ``Zeta`` and ``NextAfter``. Their gradients are TensorFlow's
(``math_grad.py``)::

    dP/dx = exp(-x) x^(a-1) / Gamma(a)          dP/da = IgammaGradA(a, x)     dQ = -dP
    dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b)        (none for a and b, as in TensorFlow)
    dZeta(x, q)/dq = -x Zeta(x+1, q)             (none for x, as in TensorFlow)
    d nextafter(x1, x2) = (1, 0)                 (TensorFlow's straight-through choice)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops
from flowmesh.ops._builders import (
    FLOATS,
    broadcast_binary,
    check_dtype,
    convert_same_dtype,
    make_tensor,
    same_shape,
)
from flowmesh.ops.reduction_ops import reduce_to_shape_of
from flowmesh.ops.select_ops import where


def lbeta(x: Any, name: str | None = None) -> Tensor:
    """``log(|Beta(x)|)`` over the last dimension: ``sum(lgamma(x)) - lgamma(sum(x))``."""
    with name_scope(name, "lbeta", [x]):
        t = convert_to_tensor(x)
        return (reduction_ops.reduce_sum(math_ops.lgamma(t), axis=-1)
                - math_ops.lgamma(reduction_ops.reduce_sum(t, axis=-1)))


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """``1 / x``, and 0 where ``x`` is 0."""
    with name_scope(name, "reciprocal_no_nan", [x]):
        t = convert_to_tensor(x)
        return math_ops.div_no_nan(array_ops.ones_like(t), t)


def xlog1py(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * log1p(y)``, and 0 where ``x`` is 0."""
    with name_scope(name, "xlog1py", [x, y]):
        a = convert_to_tensor(x)
        b = convert_to_tensor(y, dtype=a.dtype)
        zero = array_ops.zeros_like(a * b)
        safe_y = where(math_ops.equal(a + zero, zero), zero, b + zero)
        return where(math_ops.equal(a + zero, zero), zero, a * math_ops.log1p(safe_y))


def polyval(coeffs: Any, x: Any, name: str | None = None) -> Tensor:
    """``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule (``coeffs`` a list)."""
    with name_scope(name, "polyval", [x]):
        t = convert_to_tensor(x)
        if not coeffs:
            return array_ops.zeros_like(t)
        result = convert_to_tensor(coeffs[0], dtype=t.dtype) + array_ops.zeros_like(t)
        for c in coeffs[1:]:
            result = result * t + convert_to_tensor(c, dtype=t.dtype)
        return result


def cumulative_logsumexp(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
                         name: str | None = None) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``axis``, stabilized by the maximum along ``axis``."""
    with name_scope(name, "CumulativeLogsumexp", [x]):
        t = convert_to_tensor(x)
        peak = array_ops.stop_gradient(reduction_ops.reduce_max(t, axis=axis, keepdims=True))
        total = reduction_ops.cumsum(math_ops.exp(t - peak), axis=axis, exclusive=exclusive, reverse=reverse)
        return math_ops.log(total) + peak


def arg_max(input: Any, dimension: Any = None, output_type: Any = dtypes.int64,  # noqa: A002
            name: str | None = None) -> Tensor:
    """TensorFlow 1.x's ``tf.arg_max`` (``dimension`` is the axis)."""
    return reduction_ops.argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input: Any, dimension: Any = None, output_type: Any = dtypes.int64,  # noqa: A002
            name: str | None = None) -> Tensor:
    """TensorFlow 1.x's ``tf.arg_min`` (``dimension`` is the axis)."""
    return reduction_ops.argmin(input, axis=dimension, name=name, output_type=output_type)


def floor_div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.floor_div``: ``floordiv``."""
    return math_ops.floordiv(x, y, name=name)


def to_complex64(x: Any, name: str = "ToComplex64") -> Tensor:
    return cast_ops.cast(x, dtypes.complex64, name=name)


def to_complex128(x: Any, name: str = "ToComplex128") -> Tensor:
    return cast_ops.cast(x, dtypes.complex128, name=name)




register_op("Erfinv", same_shape, grad=lambda op, g: [
    g * (math.sqrt(math.pi) / 2.0) * math_ops.exp(math_ops.square(op.outputs[0]))])
register_op("Ndtri", same_shape, grad=lambda op, g: [
    g * math.sqrt(2.0 * math.pi) * math_ops.exp(math_ops.square(op.outputs[0]) / 2.0)])


def _special(op_type: str, x: Any, name: str | None) -> Tensor:
    t = convert_to_tensor(x)
    check_dtype(op_type, t, FLOATS)
    return make_tensor(op_type, [t], name=name or op_type)


def erfinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse error function on ``(-1, 1)``."""
    return _special("Erfinv", x, name)


def ndtri(x: Any, name: str | None = None) -> Tensor:
    """The inverse of the standard normal CDF on ``(0, 1)``."""
    return _special("Ndtri", x, name)


def erfcinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse complementary error function on ``(0, 2)``: ``-ndtri(x / 2) / sqrt(2)``."""
    with name_scope(name, "erfcinv", [x]):
        t = convert_to_tensor(x)
        return -ndtri(0.5 * t) * math.sqrt(0.5)


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
