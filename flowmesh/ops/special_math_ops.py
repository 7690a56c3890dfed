"""Special functions built from graph ops (their gradients come from the composition):
``lbeta``, ``reciprocal_no_nan``, ``xlog1py``, ``polyval``, ``cumulative_logsumexp``, and the
TensorFlow 1.x spellings ``arg_max``, ``arg_min``, ``floor_div``, ``to_complex64/128``."""

from __future__ import annotations

import math
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops
from flowmesh.ops._builders import FLOATS, check_dtype, make_tensor, same_shape
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


def arg_max(input: Any, dimension: Any = None, name: str | None = None,  # noqa: A002
            output_type: Any = dtypes.int64) -> Tensor:
    """TensorFlow 1.x's ``tf.arg_max`` (``dimension`` is the axis)."""
    return reduction_ops.argmax(input, axis=dimension, name=name, output_type=output_type)


def arg_min(input: Any, dimension: Any = None, name: str | None = None,  # noqa: A002
            output_type: Any = dtypes.int64) -> Tensor:
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
