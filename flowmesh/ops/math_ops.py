"""Elementwise math: unary and broadcasting binary ops, division rules, comparisons, logic.

Unary and binary ops are one-line table entries (:func:`_unary` / :func:`_binary`):
registration, gradient and public wrapper in one place. Binary ops broadcast like NumPy;
their gradients are summed back over broadcast dimensions (:func:`reduce_to_shape_of`),
also when shapes are only known at run time. Gradients follow TensorFlow's formulas and
are built from graph ops, so they can be differentiated again.

Related families live next door: ``cast_ops`` (cast, add_n, range), ``select_ops``
(where), ``reduction_ops``, ``linalg_ops``, ``clip_ops``; their public functions are
re-exported here for ``math_ops.<name>`` callers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core import dtypes, op_hooks
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops._builders import (
    FLOATS,
    FLOATS_COMPLEX,
    NUMERIC,
    REAL_NUMERIC,
    broadcast_binary,
    broadcast_compare,
    check_dtype,
    convert_same_dtype,
    make_op,
    make_tensor,
    same_shape,
)
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.dispatch import add_dispatch_support, binary_elementwise_api, unary_elementwise_api


# --- broadcasting gradients (reduction_ops.reduce_to_shape_of uses them) ------------------
def _bga_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(inputs[0].dtype, TensorShape([None])), (inputs[0].dtype, TensorShape([None]))]


register_op("BroadcastGradientArgs", _bga_shape, not_differentiable=True)


def broadcast_gradient_args(s0: Any, s1: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Reduction axes for the gradients of two broadcast operands (run-time shapes)."""
    a, b = convert_same_dtype("BroadcastGradientArgs", [s0, s1], ["s0", "s1"])
    op = make_op("BroadcastGradientArgs", [a, b], name=name or "BroadcastGradientArgs")
    return op.outputs[0], op.outputs[1]


# --- table helpers -------------------------------------------------------------------------
def _register(op_type: str, shape_fn: Any, grad: Any) -> None:
    """``grad``: a gradient, "none" (not differentiable) or None (registered in math_grad)."""
    if grad == "none":
        register_op(op_type, shape_fn, not_differentiable=True)
    else:
        register_op(op_type, shape_fn, grad=grad)


def _unary(op_type: str, default_name: str, grad: Any, allowed: Sequence[dtypes.DType] = NUMERIC,
           shape_fn: Any = same_shape) -> Callable[..., Tensor]:
    _register(op_type, shape_fn, grad)

    def op_fn(x: Any, name: str | None = None) -> Tensor:
        if isinstance(x, Tensor):
            check_dtype(op_type, x, allowed)
            return make_tensor(op_type, [x], name=name or default_name)
        with name_scope(name or default_name, values=[x]) as scope:  # Const "<name>/x"
            t = convert_to_tensor(x, name="x")
            check_dtype(op_type, t, allowed)
            return make_tensor(op_type, [t], name=scope)

    op_fn.__name__ = op_fn.__qualname__ = default_name
    op_fn.__doc__ = (f"Elementwise ``{op_type}`` of ``x`` (dtypes: "
                     f"{', '.join(d.name for d in allowed)}).\n\n"
                     "Raises:\n    TypeError: ``x`` has another dtype.\n")
    return add_dispatch_support(op_fn, "unary")


def _binary(op_type: str, default_name: str, grad: Any, allowed: Sequence[dtypes.DType] = NUMERIC,
            compare: bool = False) -> Callable[..., Tensor]:
    _register(op_type, broadcast_compare if compare else broadcast_binary, grad)

    def op_fn(x: Any, y: Any, name: str | None = None) -> Tensor:
        if isinstance(x, Tensor) and isinstance(y, Tensor):
            a, b = convert_same_dtype(op_type, [x, y], ["x", "y"])
            check_dtype(op_type, a, allowed)
            return make_tensor(op_type, [a, b], name=name or default_name)
        # Converted Python values are named "<name>/x", "<name>/y" as in TensorFlow.
        with name_scope(name or default_name, values=[x, y]) as scope:
            a, b = convert_same_dtype(op_type, [x, y], ["x", "y"])
            check_dtype(op_type, a, allowed)
            return make_tensor(op_type, [a, b], name=scope)

    op_fn.__name__ = op_fn.__qualname__ = default_name
    op_fn.__doc__ = (f"Elementwise ``{op_type}`` of ``x`` and ``y`` with NumPy broadcasting.\n\n"
                     "Raises:\n    TypeError: the dtypes differ or are not allowed.\n"
                     "    InvalidArgumentError: the shapes do not broadcast.\n")
    return add_dispatch_support(op_fn, "binary")


def _x(op: Any) -> Tensor:
    return op.inputs[0]


def _y(op: Any) -> Tensor:
    return op.outputs[0]


def _bool_out(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.bool, inputs[0].shape)]


# --- unary ops (gradients as in TensorFlow's math_grad.py) ---------------------------------
negative = _unary("Neg", "Neg", lambda op, g: [negative(g)])
op_hooks.register("negative", negative)
_real_abs = _unary("Abs", "Abs", lambda op, g: [g * sign(_x(op))], REAL_NUMERIC)


@unary_elementwise_api
def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """``|x|`` elementwise (``ComplexAbs``, a real tensor, for complex ``x``)."""
    t = convert_to_tensor(x)
    if t.dtype.is_complex:
        return make_tensor("ComplexAbs", [t], name=name or "ComplexAbs")
    return _real_abs(t, name=name)
sign = _unary("Sign", "Sign", lambda op, g: [array_ops.zeros_like(_x(op))])
square = _unary("Square", "Square", lambda op, g: [g * (_x(op) + _x(op))])
sqrt = _unary("Sqrt", "Sqrt", lambda op, g: [g * (0.5 * reciprocal(_y(op)))], FLOATS_COMPLEX)
rsqrt = _unary("Rsqrt", "Rsqrt", lambda op, g: [g * (-0.5 * _y(op) * square(_y(op)))], FLOATS_COMPLEX)
exp = _unary("Exp", "Exp", lambda op, g: [g * _y(op)], FLOATS_COMPLEX)
expm1 = _unary("Expm1", "Expm1", lambda op, g: [g * exp(_x(op))], FLOATS_COMPLEX)
log = _unary("Log", "Log", lambda op, g: [g * reciprocal(_x(op))], FLOATS_COMPLEX)
log1p = _unary("Log1p", "Log1p", lambda op, g: [g * reciprocal(1.0 + _x(op))], FLOATS_COMPLEX)
sigmoid = _unary("Sigmoid", "Sigmoid", lambda op, g: [g * (_y(op) * (1.0 - _y(op)))], FLOATS_COMPLEX)
tanh = _unary("Tanh", "Tanh", lambda op, g: [g * (1.0 - square(_y(op)))], FLOATS_COMPLEX)
sin = _unary("Sin", "Sin", lambda op, g: [g * cos(_x(op))], FLOATS_COMPLEX)
cos = _unary("Cos", "Cos", lambda op, g: [negative(g * sin(_x(op)))], FLOATS_COMPLEX)
tan = _unary("Tan", "Tan", lambda op, g: [g * square(reciprocal(cos(_x(op))))], FLOATS_COMPLEX)
asin = _unary("Asin", "Asin", lambda op, g: [g * rsqrt(1.0 - square(_x(op)))], FLOATS_COMPLEX)
acos = _unary("Acos", "Acos", lambda op, g: [negative(g * rsqrt(1.0 - square(_x(op))))], FLOATS_COMPLEX)
atan = _unary("Atan", "Atan", lambda op, g: [g * reciprocal(1.0 + square(_x(op)))], FLOATS_COMPLEX)
sinh = _unary("Sinh", "Sinh", lambda op, g: [g * cosh(_x(op))], FLOATS_COMPLEX)
cosh = _unary("Cosh", "Cosh", lambda op, g: [g * sinh(_x(op))], FLOATS_COMPLEX)
asinh = _unary("Asinh", "Asinh", lambda op, g: [g * reciprocal(cosh(_y(op)))], FLOATS_COMPLEX)
acosh = _unary("Acosh", "Acosh", lambda op, g: [g * reciprocal(sinh(_y(op)))], FLOATS_COMPLEX)
atanh = _unary("Atanh", "Atanh", lambda op, g: [g * reciprocal(1.0 - square(_x(op)))], FLOATS_COMPLEX)
erf = _unary("Erf", "Erf", lambda op, g: [g * ((2.0 / math.sqrt(math.pi)) * exp(negative(square(_x(op)))))],
             FLOATS)
erfc = _unary("Erfc", "Erfc",
              lambda op, g: [g * ((-2.0 / math.sqrt(math.pi)) * exp(negative(square(_x(op)))))], FLOATS)
lgamma = _unary("Lgamma", "Lgamma", lambda op, g: [g * digamma(_x(op))], FLOATS)
digamma = _unary("Digamma", "Digamma", lambda op, g: [g * polygamma(1.0, _x(op))], FLOATS)
reciprocal = _unary("Reciprocal", "Reciprocal", lambda op, g: [negative(g * square(_y(op)))], NUMERIC)
floor = _unary("Floor", "Floor", lambda op, g: [None], FLOATS)
ceil = _unary("Ceil", "Ceil", lambda op, g: [None], FLOATS)
round = _unary("Round", "Round", lambda op, g: [None], NUMERIC)  # noqa: A001
rint = _unary("Rint", "Rint", lambda op, g: [None], FLOATS)
logical_not = _unary("LogicalNot", "LogicalNot", "none", [dtypes.bool])
is_nan = _unary("IsNan", "IsNan", "none", FLOATS, shape_fn=_bool_out)
is_inf = _unary("IsInf", "IsInf", "none", FLOATS, shape_fn=_bool_out)
is_finite = _unary("IsFinite", "IsFinite", "none", FLOATS, shape_fn=_bool_out)
reciprocal.__doc__ = "Elementwise ``1 / x``."
inv = reciprocal


# --- Polygamma -----------------------------------------------------------------------------
register_op("Polygamma", broadcast_binary)  # gradient: math_grad


def polygamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The ``a``-th derivative of the digamma function at ``x`` (``a`` a non-negative integer
    value of ``x``'s float dtype)."""
    x_t = convert_to_tensor(x, name="x")
    check_dtype("Polygamma", x_t, (dtypes.float32, dtypes.float64), "x")
    a_t, x_t = convert_same_dtype("Polygamma", [a, x_t], ["a", "x"])
    return make_tensor("Polygamma", [a_t, x_t], name=name or "Polygamma")


# --- binary ops (gradients in math_grad.py: they sum back over broadcast dimensions) ------
add = _binary("AddV2", "Add", None, NUMERIC + (dtypes.string,))
subtract = _binary("Sub", "Sub", None)
multiply = _binary("Mul", "Mul", None)
realdiv = _binary("RealDiv", "RealDiv", None)
floordiv = _binary("FloorDiv", "FloorDiv", None)
floormod = _binary("FloorMod", "FloorMod", None, REAL_NUMERIC)
truncatediv = _binary("TruncateDiv", "TruncateDiv", "none", REAL_NUMERIC)
truncatemod = _binary("TruncateMod", "TruncateMod", "none", REAL_NUMERIC)
maximum = _binary("Maximum", "Maximum", None, REAL_NUMERIC)
minimum = _binary("Minimum", "Minimum", None, REAL_NUMERIC)
squared_difference = _binary("SquaredDifference", "SquaredDifference", None)
_atan2 = _binary("Atan2", "Atan2", None, FLOATS)
xlogy = _binary("Xlogy", "Xlogy", None, FLOATS_COMPLEX)
xdivy = _binary("Xdivy", "Xdivy", None, FLOATS_COMPLEX)
div_no_nan = _binary("DivNoNan", "div_no_nan", None, FLOATS_COMPLEX)
multiply_no_nan = _binary("MulNoNan", "MulNoNan", None, FLOATS_COMPLEX)
equal = _binary("Equal", "Equal", "none", NUMERIC + (dtypes.bool, dtypes.string), compare=True)
not_equal = _binary("NotEqual", "NotEqual", "none", NUMERIC + (dtypes.bool, dtypes.string), compare=True)
less = _binary("Less", "Less", "none", REAL_NUMERIC, compare=True)
less_equal = _binary("LessEqual", "LessEqual", "none", REAL_NUMERIC, compare=True)
greater = _binary("Greater", "Greater", "none", REAL_NUMERIC, compare=True)
greater_equal = _binary("GreaterEqual", "GreaterEqual", "none", REAL_NUMERIC, compare=True)
logical_and = _binary("LogicalAnd", "LogicalAnd", "none", [dtypes.bool], compare=True)
logical_or = _binary("LogicalOr", "LogicalOr", "none", [dtypes.bool], compare=True)
divide_no_nan = div_no_nan
real_div = realdiv


@binary_elementwise_api
def atan2(y: Any, x: Any, name: str | None = None) -> Tensor:
    """Elementwise angle of the point ``(x, y)``: ``atan(y / x)`` in the right quadrant."""
    return _atan2(y, x, name=name or "Atan2")


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Any:
    """``scalar * x`` for a scalar and a Tensor or IndexedSlices.

    Raises:
        ValueError: ``scalar`` is not a scalar.
    """
    s = convert_to_tensor(scalar, dtype=x.dtype if hasattr(x, "dtype") else None, name="scalar")
    if s.shape.rank not in (None, 0):
        raise ValueError(f"Only scalar multiply works, got shape {s.shape}")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(multiply(s, x.values, name=name or "scalar_mul"), x.indices, x.dense_shape)
    return multiply(s, x, name=name or "scalar_mul")


register_op("Pow", broadcast_binary)  # gradient: math_grad


@binary_elementwise_api
def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """Elementwise ``x ** y`` (integer ``x`` to a negative integer power is an error)."""
    a, b = convert_same_dtype("Pow", [x, y], ["x", "y"])
    check_dtype("Pow", a, NUMERIC)
    return make_tensor("Pow", [a, b], name=name or "Pow")


@binary_elementwise_api
def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Tensor:
    """Elementwise exclusive or of two bool tensors."""
    with name_scope(name):
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


# --- division with TensorFlow's Python-2 / Python-3 rules ----------------------------------
_TRUEDIV_TABLE = {
    dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32, dtypes.uint8: dtypes.float32,
    dtypes.uint16: dtypes.float32, dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64,
    dtypes.uint32: dtypes.float64, dtypes.uint64: dtypes.float64,
}


@binary_elementwise_api
def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y`` with Python 3 semantics: integer operands are cast to float first
    (int8/16 and uint8/16 to float32, int32/64 and uint32/64 to float64).

    Raises:
        TypeError: ``x`` and ``y`` have different dtypes, or a non-numeric dtype.
    """
    with name_scope(name, "truediv", [x, y]) as scope:
        a, b = convert_same_dtype("RealDiv", [x, y], ["x", "y"])
        check_dtype("RealDiv", a, NUMERIC)
        target = _TRUEDIV_TABLE.get(a.dtype)
        if target is not None:
            a, b = cast(a, target), cast(b, target)
        return make_tensor("RealDiv", [a, b], name=scope)


@binary_elementwise_api
def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.divide``: ``x / y`` with Python 3 semantics (see :func:`truediv`)."""
    return truediv(x, y, name=name or "truediv")


@binary_elementwise_api
def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.div`` (TF 1.x): Python 2 semantics - floor division for integers, true
    division for floats."""
    a, b = convert_same_dtype("Div", [x, y], ["x", "y"])
    if a.dtype.is_integer:
        return floordiv(a, b, name=name or "div")
    return realdiv(a, b, name=name or "div")


@binary_elementwise_api
def mod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Elementwise ``x % y`` with Python's sign convention (``FloorMod``)."""
    return floormod(x, y, name=name or "mod")


# --- AddN ------------------------------------------------------------------------------------
def _add_n_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    shape = inputs[0].shape
    for i, t in enumerate(inputs[1:], 1):
        if t.dtype != inputs[0].dtype:
            raise TypeError(f"AddN inputs must share a dtype: inputs[0] is {inputs[0].dtype.name} "
                            f"but inputs[{i}] is {t.dtype.name}")
        if not shape.is_compatible_with(t.shape):
            raise InvalidArgumentError(f"AddN inputs must have the same shape: {shape} vs "
                                       f"inputs[{i}] {t.shape}")
        shape = shape.merge_with(t.shape)
    return [(inputs[0].dtype, shape)]


register_op("AddN", _add_n_shape, grad=lambda op, g: [g] * len(op.inputs))


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sums a list of tensors (or IndexedSlices) of the same shape and dtype.

    Raises:
        ValueError: ``inputs`` is not a non-empty list.
        TypeError / InvalidArgumentError: the dtypes / shapes differ.
    """
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a non-empty list of at least one Tensor/IndexedSlices "
                         "with the same dtype and shape")
    tensors = [convert_to_tensor(t) for t in inputs]
    if len(tensors) == 1:
        return array_ops.identity(tensors[0], name=name or "AddN")
    return make_tensor("AddN", tensors, {"N": len(tensors)}, name=name or "AddN")


def accumulate_n(inputs: Sequence[Any], shape: Any = None, tensor_dtype: Any = None,
                 name: str | None = None) -> Tensor:
    """``tf.math.accumulate_n``: the same sum as :func:`add_n`."""
    return add_n(inputs, name=name or "AccumulateN")
