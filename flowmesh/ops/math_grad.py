"""Gradients of the elementwise math ops that need ops from other families.

As TensorFlow's ``math_grad.py``: the op wrappers (``math_ops``, ``select_ops``,
``range_ops``) register their ops, and this module, imported once by ``flowmesh.ops``,
registers the gradients that call wrappers above them (reductions, ``where``). Binary
gradients follow TensorFlow's formulas and are summed back over broadcast dimensions
(:func:`reduction_ops.reduce_to_shape_of`); they are built from graph ops, so they can be
differentiated again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_gradient
from flowmesh.ops import array_ops, math_ops, range_ops
from flowmesh.ops._builders import make_tensor
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.reduction_ops import reduce_sum, reduce_to_shape_of
from flowmesh.ops.select_ops import where_v2


def _reduced(fn: Callable[[Any, Tensor], tuple[Any, Any]]) -> Callable[..., list]:
    """Wraps a binary gradient so each result is summed back to its operand's shape."""

    def grad(op: Any, g: Tensor) -> list:
        x, y = op.inputs
        gx, gy = fn(op, g)
        return [None if gx is None else reduce_to_shape_of(gx, x),
                None if gy is None else reduce_to_shape_of(gy, y)]

    return grad


def _conj(t: Tensor) -> Tensor:
    """The conjugate of a complex tensor (TensorFlow's complex gradients use it), else ``t``."""
    return make_tensor("Conj", [t]) if t.dtype.is_complex else t


def _select_grads(mask: Tensor, g: Tensor) -> tuple[Tensor, Tensor]:
    zeros = array_ops.zeros_like(g)
    return where_v2(mask, g, zeros), where_v2(mask, zeros, g)


def _nonzero(t: Tensor) -> Tensor:
    return cast(math_ops.not_equal(t, array_ops.zeros_like(t)), t.dtype)


def _sqdiff(op: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    x, y = op.inputs
    gx = g * (2.0 * (x - y))
    return gx, math_ops.negative(gx)


def _realdiv(op: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    x, y = (_conj(t) for t in op.inputs)
    return g / y, g * (math_ops.negative(x) / y / y)


def _atan2(op: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    y, x = op.inputs
    scale = g * math_ops.reciprocal(math_ops.square(x) + math_ops.square(y))
    return scale * x, math_ops.negative(scale * y)


def _xlogy(op: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    x, y = op.inputs
    return g * math_ops.xlogy(_nonzero(x), y), g * math_ops.xdivy(x, y)


def _xdivy(op: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    x, y = op.inputs
    return (g * math_ops.xdivy(_nonzero(x), y),
            g * math_ops.xdivy(math_ops.negative(x), math_ops.square(y)))


def _div_no_nan(op: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    x, y = op.inputs
    div = math_ops.div_no_nan
    return div(g, y), g * div(div(math_ops.negative(x), y), y)


_BINARY: dict[str, Callable[[Any, Tensor], tuple[Any, Any]]] = {
    "AddV2": lambda op, g: (g, g),
    "Sub": lambda op, g: (g, math_ops.negative(g)),
    "Mul": lambda op, g: (g * _conj(op.inputs[1]), _conj(op.inputs[0]) * g),
    "RealDiv": _realdiv,
    "FloorDiv": lambda op, g: (None, None),
    "FloorMod": lambda op, g: (g, math_ops.negative(g) * math_ops.floordiv(*op.inputs)),
    "Maximum": lambda op, g: _select_grads(math_ops.greater_equal(*op.inputs), g),
    "Minimum": lambda op, g: _select_grads(math_ops.less_equal(*op.inputs), g),
    "SquaredDifference": _sqdiff,
    "Atan2": _atan2,
    "Xlogy": _xlogy,
    "Xdivy": _xdivy,
    "DivNoNan": _div_no_nan,
    "MulNoNan": lambda op, g: (math_ops.multiply_no_nan(g, op.inputs[1]),
                               math_ops.multiply_no_nan(op.inputs[0], g)),
    "Polygamma": lambda op, g: (None, g * math_ops.polygamma(op.inputs[0] + 1.0, op.inputs[1])),
}
for _op_type, _fn in _BINARY.items():
    register_gradient(_op_type)(_reduced(_fn))


@register_gradient("Pow")
def _pow_grad(op: Any, g: Tensor) -> list:
    x, y = op.inputs
    gx = g * y * math_ops.pow(x, y - array_ops.ones_like(y))
    gy = None
    if x.dtype.is_floating or x.dtype.is_complex:
        zeros = array_ops.zeros_like(x)
        positive = math_ops.greater(x, zeros) if x.dtype.is_floating else \
            math_ops.not_equal(x, zeros)
        safe_log = where_v2(positive, math_ops.log(where_v2(positive, x, array_ops.ones_like(x))),
                            array_ops.zeros_like(x))
        gy = g * op.outputs[0] * safe_log
    return [reduce_to_shape_of(gx, x), None if gy is None else reduce_to_shape_of(gy, y)]


@register_gradient("SelectV2")
def _select_grad(op: Any, g: Tensor) -> list:
    cond, x, y = op.inputs
    zeros = array_ops.zeros_like(g)
    return [None, reduce_to_shape_of(where_v2(cond, g, zeros), x),
            reduce_to_shape_of(where_v2(cond, zeros, g), y)]


@register_gradient("LinSpace")
def _linspace_grad(op: Any, g: Tensor) -> list:
    start, stop, num_t = op.inputs
    rank = g.shape.rank
    if rank is None:
        raise LookupError(f"The gradient of LinSpace '{op.name}' needs a known output rank")
    axis = op.attrs["axis"] % rank
    steps = math_ops.maximum(num_t - 1, 1)
    fraction = cast(range_ops.range(num_t), g.dtype) / cast(steps, g.dtype)
    fraction = array_ops.reshape(fraction, [1] * axis + [-1] + [1] * (rank - axis - 1))
    g_start = reduce_sum(g * (1.0 - fraction), axis)
    g_stop = reduce_sum(g * fraction, axis)
    return [reduce_to_shape_of(g_start, start), reduce_to_shape_of(g_stop, stop), None]
