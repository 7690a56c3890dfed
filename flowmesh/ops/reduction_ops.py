"""Reductions (``reduce_sum`` ... ``reduce_all``), arg-max/min, segment sums, cumsum,
``broadcast_to`` and ``matmul``.

Reductions take ``axis`` as an int32 tensor input (all axes when None) and a
``keep_dims`` attr. Their gradients broadcast the upstream gradient back with
:func:`_restore_reduced`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, range_ops, select_ops
from flowmesh.ops._builders import (
    FLOATS_COMPLEX,
    NUMERIC,
    check_dtype,
    constant_value,
    make_tensor,
    shape_from_tensor,
)
from flowmesh.ops.constant_op import constant


# --- reductions --------------------------------------------------------------------------
def _normalized_axes(axis_value: Any, rank: int) -> list[int]:
    axes = [int(a) for a in np.asarray(axis_value).reshape(-1)]
    out = []
    for a in axes:
        if not -rank <= a < max(rank, 1):
            raise InvalidArgumentError(f"Invalid reduction dimension {a} for input with {rank} dimensions")
        out.append(a % rank if rank else 0)
    return out


def _reduction_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, axis_t = inputs
    keep = attrs["keep_dims"]
    out_dtype = attrs.get("out_dtype", x.dtype)
    axis_value = constant_value(axis_t)
    if x.shape.rank is None:
        return [(out_dtype, unknown_shape())]
    if axis_value is None:
        return [(out_dtype, unknown_shape(x.shape.rank if keep else None))]
    dims = x.shape.as_list()
    axes = set(_normalized_axes(axis_value, len(dims)))
    if keep:
        out = [1 if i in axes else d for i, d in enumerate(dims)]
    else:
        out = [d for i, d in enumerate(dims) if i not in axes]
    return [(out_dtype, TensorShape(out))]


def _kept_shape(op: Any) -> Any:
    """The output shape with reduced axes kept as 1 (static list or a shape tensor)."""
    x, axis_t = op.inputs
    axis_value = constant_value(axis_t)
    if x.shape.rank is not None and axis_value is not None:
        # Static when every kept axis is known (e.g. a sum over the unknown batch axis).
        dims = x.shape.as_list()
        axes = set(_normalized_axes(axis_value, len(dims)))
        kept = [1 if i in axes else d for i, d in enumerate(dims)]
        if all(d is not None for d in kept):
            return kept
    input_shape = array_ops.shape(x)
    rank_ = array_ops.size(input_shape)
    axes = math_ops.floormod(cast_ops.cast(axis_t, dtypes.int32) + rank_, rank_)
    positions = range_ops.range(rank_)
    is_reduced = reduce_any(math_ops.equal(array_ops.expand_dims(positions, 1),
                                     array_ops.reshape(axes, [1, -1])), axis=1)
    return select_ops.where(is_reduced, array_ops.ones_like(input_shape), input_shape)


def _restore_reduced(op: Any, grad: Tensor) -> Tensor:
    """Broadcasts a reduction's gradient back to the input's shape."""
    x = op.inputs[0]
    if not op.attrs["keep_dims"]:
        grad = array_ops.reshape(grad, _kept_shape(op))
    if x.shape.is_fully_defined():
        return broadcast_to(grad, x.shape.as_list())
    return broadcast_to(grad, array_ops.shape(x))


def _sum_grad(op: Any, grad: Tensor) -> list:
    return [_restore_reduced(op, grad), None]


def _mean_grad(op: Any, grad: Tensor) -> list:
    x = op.inputs[0]
    y = op.outputs[0]
    expanded = _restore_reduced(op, grad)
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count = max(1, x.shape.num_elements() // max(1, y.shape.num_elements()))
        return [math_ops.truediv(expanded, cast_ops.cast(count, expanded.dtype)), None]
    count = cast_ops.cast(array_ops.size(x), expanded.dtype) / cast_ops.cast(
        math_ops.maximum(array_ops.size(y), 1), expanded.dtype)
    return [math_ops.truediv(expanded, count), None]


def _min_max_grad(op: Any, grad: Tensor) -> list:
    """Splits the gradient evenly between the elements equal to the extremum."""
    x = op.inputs[0]
    indicators = cast_ops.cast(math_ops.equal(_restore_reduced_value(op), x), grad.dtype)
    num_selected = reduce_sum(indicators, op.inputs[1], keepdims=True)
    return [math_ops.truediv(indicators, num_selected) * _restore_reduced(op, grad), None]


def _restore_reduced_value(op: Any) -> Tensor:
    y = op.outputs[0]
    if not op.attrs["keep_dims"]:
        y = array_ops.reshape(y, _kept_shape(op))
    return y


def _prod_grad(op: Any, grad: Tensor) -> list:
    # Products of all other elements, exact with zeros: exclusive cumprods both ways.
    x, axis_t = op.inputs
    axis_value = constant_value(axis_t)
    if x.shape.rank is None or axis_value is None:
        return [_dynamic_prod_grad(op, grad), None]
    rank_ = x.shape.rank
    axes = sorted(set(_normalized_axes(axis_value, rank_)))
    other = [i for i in range(rank_) if i not in axes]
    perm = axes + other
    moved = array_ops.transpose(x, perm)
    moved_shape = array_ops.shape(moved)
    reduced_count = reduce_prod(gather_ops.gather(array_ops.shape(x), axes))
    flat = array_ops.reshape(moved, array_ops.stack([reduced_count, -1]))
    left = cumprod(flat, axis=0, exclusive=True)
    right = cumprod(flat, axis=0, exclusive=True, reverse=True)
    others = array_ops.reshape(left * right, moved_shape)
    inverse = [perm.index(i) for i in range(rank_)]
    return [_restore_reduced(op, grad) * array_ops.transpose(others, inverse), None]


def _dynamic_prod_grad(op: Any, grad: Tensor) -> Tensor:
    """``_prod_grad`` with the rank or the axes known only at run time (TensorFlow's
    ``_ProdGrad``: the permutation that moves the reduced axes first is computed in-graph)."""
    x, axis_t = op.inputs
    input_shape = array_ops.shape(x)
    rank_ = array_ops.size(input_shape)
    positions = range_ops.range(rank_)
    axes = math_ops.floormod(cast_ops.cast(array_ops.reshape(axis_t, [-1]), dtypes.int32) + rank_, rank_)
    is_reduced = reduce_any(math_ops.equal(array_ops.expand_dims(positions, 1),
                                           array_ops.reshape(axes, [1, -1])), axis=1)
    reduced = gather_ops.boolean_mask(positions, is_reduced)
    other = gather_ops.boolean_mask(positions, math_ops.logical_not(is_reduced))
    perm = array_ops.concat([reduced, other], 0)
    moved = array_ops.transpose(x, perm)
    reduced_count = reduce_prod(gather_ops.gather(input_shape, reduced))
    flat = array_ops.reshape(moved, array_ops.stack([reduced_count, -1]))
    left = cumprod(flat, axis=0, exclusive=True)
    right = cumprod(flat, axis=0, exclusive=True, reverse=True)
    others = array_ops.reshape(left * right, array_ops.shape(moved))
    others = array_ops.transpose(others, range_ops.invert_permutation(perm))
    return _restore_reduced(op, grad) * others


register_op("Sum", _reduction_shape, grad=_sum_grad)
register_op("Mean", _reduction_shape, grad=_mean_grad)
register_op("Max", _reduction_shape, grad=_min_max_grad)
register_op("Min", _reduction_shape, grad=_min_max_grad)
register_op("Prod", _reduction_shape, grad=_prod_grad)
register_op("Any", _reduction_shape, not_differentiable=True)
register_op("All", _reduction_shape, not_differentiable=True)


def _reduce(op_type: str, default_name: str, input_tensor: Any, axis: Any, keepdims: Any,
            name: str | None, reduction_indices: Any, keep_dims: Any,
            allowed: Sequence[dtypes.DType] = NUMERIC) -> Tensor:
    if axis is None:
        axis = reduction_indices
    if keepdims is None:
        keepdims = bool(keep_dims) if keep_dims is not None else False
    x = convert_to_tensor(input_tensor)
    check_dtype(op_type, x, allowed, "input_tensor")
    with name_scope(name, default_name, [x]) as scope:
        if axis is None:
            if x.shape.rank is not None:
                axis_t = constant(list(range(x.shape.rank)), dtype=dtypes.int32, name="Const")
            else:
                axis_t = range_ops.range(array_ops.rank(x))
        elif isinstance(axis, Tensor):
            axis_t = axis
        else:
            axis_t = constant(axis, dtype=dtypes.int32, name="Const")
        return make_tensor(op_type, [x, axis_t], {"keep_dims": bool(keepdims)}, name=scope)


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
    """Sum over ``axis`` (all axes when None)."""
    return _reduce("Sum", "Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
                reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
    """Mean over ``axis`` (integer inputs use integer division, as in TensorFlow)."""
    return _reduce("Mean", "Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
    """Maximum over ``axis``."""
    return _reduce("Max", "Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
    """Minimum over ``axis``."""
    return _reduce("Min", "Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
                reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
    """Product over ``axis``."""
    return _reduce("Prod", "Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
    """Logical or over ``axis``."""
    return _reduce("Any", "Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims,
                   [dtypes.bool])


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
    """Logical and over ``axis``."""
    return _reduce("All", "All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims,
                   [dtypes.bool])


# --- composite reductions (as TensorFlow builds them) ---------------------------------------
def _keep(keepdims: Any, keep_dims: Any) -> bool:
    return bool(keepdims) if keepdims is not None else bool(keep_dims)


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: str | None = None,
                     reduction_indices: Any = None, keep_dims: Any = None) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably by subtracting the (finite) max."""
    axis = reduction_indices if axis is None else axis
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        check_dtype("ReduceLogSumExp", x, FLOATS_COMPLEX, "input_tensor")
        raw_max = reduce_max(x, axis, keepdims=True)
        finite = math_ops.is_finite(raw_max)
        shift = array_ops.stop_gradient(select_ops.where_v2(finite, raw_max, array_ops.zeros_like(raw_max)))
        result = math_ops.log(reduce_sum(math_ops.exp(x - shift), axis, keepdims=True)) + shift
        if _keep(keepdims, keep_dims):
            return array_ops.identity(result, name=scope)
        return reduce_sum(result, axis, name=scope)  # drops the size-1 reduced dimensions


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                    name: str | None = None) -> Tensor:
    """Population variance over ``axis``: ``mean((x - mean(x))**2)``."""
    with name_scope(name, "reduce_variance", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        check_dtype("reduce_variance", x, FLOATS_COMPLEX, "input_tensor")
        means = reduce_mean(x, axis, keepdims=True)
        return reduce_mean(math_ops.square(x - means), axis, keepdims=keepdims, name=scope)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """Population standard deviation over ``axis``."""
    with name_scope(name, "reduce_std", [input_tensor]) as scope:
        return math_ops.sqrt(reduce_variance(input_tensor, axis, keepdims), name=scope)


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: str | None = None) -> Tensor:
    """``sqrt(sum(x**2))`` over ``axis``."""
    with name_scope(name, "EuclideanNorm", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        return math_ops.sqrt(reduce_sum(math_ops.square(x), axis, keepdims=keepdims), name=scope)


def count_nonzero(input_tensor: Any = None, axis: Any = None, keepdims: Any = None,
                  dtype: Any = dtypes.int64, name: str | None = None, reduction_indices: Any = None,
                  keep_dims: Any = None, input: Any = None) -> Tensor:  # noqa: A002
    """The number of non-zero elements (``True`` for bool, non-empty for strings) over ``axis``."""
    x_in = input if input_tensor is None else input_tensor
    axis = reduction_indices if axis is None else axis
    with name_scope(name, "count_nonzero", [x_in]) as scope:
        x = convert_to_tensor(x_in)
        zero = convert_to_tensor(b"" if x.dtype == dtypes.string else 0, dtype=x.dtype)
        nonzero = cast_ops.cast(math_ops.not_equal(x, zero), dtypes.int64)
        counted = reduce_sum(nonzero, axis, keepdims=_keep(keepdims, keep_dims))
        return cast_ops.cast(counted, dtype, name=scope)


# --- ArgMax / ArgMin ---------------------------------------------------------------------
def _arg_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, axis_t = inputs
    axis_value = constant_value(axis_t)
    if x.shape.rank is None or axis_value is None:
        return [(attrs["output_type"], unknown_shape())]
    dims = x.shape.as_list()
    axis = _normalized_axes(axis_value, len(dims))[0]
    return [(attrs["output_type"], TensorShape(dims[:axis] + dims[axis + 1:]))]


register_op("ArgMax", _arg_shape, not_differentiable=True)
register_op("ArgMin", _arg_shape, not_differentiable=True)


def _arg(op_type: str, input: Any, axis: Any, name: Any, dimension: Any, output_type: Any) -> Tensor:  # noqa: A002
    if axis is None:
        axis = dimension if dimension is not None else 0
    x = convert_to_tensor(input)
    axis_t = axis if isinstance(axis, Tensor) else constant(axis, dtype=dtypes.int32)
    return make_tensor(op_type, [x, axis_t], {"output_type": dtypes.as_dtype(output_type)},
                       name=name or op_type)


def argmax(input: Any, axis: Any = None, name: str | None = None, dimension: Any = None,  # noqa: A002
           output_type: Any = dtypes.int64) -> Tensor:
    """Index of the largest value along ``axis`` (default 0)."""
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(input: Any, axis: Any = None, name: str | None = None, dimension: Any = None,  # noqa: A002
           output_type: Any = dtypes.int64) -> Tensor:
    """Index of the smallest value along ``axis`` (default 0)."""
    return _arg("ArgMin", input, axis, name, dimension, output_type)


# --- Cumsum / Cumprod ----------------------------------------------------------------------
def _cumsum_grad(op: Any, grad: Tensor) -> list:
    return [cumsum(grad, op.inputs[1], exclusive=op.attrs["exclusive"],
                   reverse=not op.attrs["reverse"]), None]


def _cumprod_grad(op: Any, grad: Tensor) -> list:
    x, axis = op.inputs
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    prod = op.outputs[0]
    out = cumsum(prod * grad, axis, exclusive=exclusive, reverse=not reverse)
    return [math_ops.div_no_nan(out, x), None]


register_op("Cumsum", lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)], grad=_cumsum_grad)
register_op("Cumprod", lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)], grad=_cumprod_grad)


def cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    """Cumulative sum along ``axis``."""
    t = convert_to_tensor(x)
    axis_t = axis if isinstance(axis, Tensor) else constant(axis, dtype=dtypes.int32)
    return make_tensor("Cumsum", [t, axis_t], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                       name=name or "Cumsum")


def cumprod(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
            name: str | None = None) -> Tensor:
    """Cumulative product along ``axis``."""
    t = convert_to_tensor(x)
    axis_t = axis if isinstance(axis, Tensor) else constant(axis, dtype=dtypes.int32)
    return make_tensor("Cumprod", [t, axis_t], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                       name=name or "Cumprod")


# --- broadcasting gradients -------------------------------------------------------------------
def _static_reduction_axes(grad_shape: TensorShape, target_shape: TensorShape) -> list[int] | None:
    if not (grad_shape.is_fully_defined() and target_shape.is_fully_defined()):
        return None
    g, t = grad_shape.as_list(), target_shape.as_list()
    lead = len(g) - len(t)
    axes = list(range(lead))
    for i, d in enumerate(t):
        if d == 1 and g[lead + i] != 1:
            axes.append(lead + i)
    return axes


def reduce_to_shape_of(grad: Tensor, target: Tensor) -> Tensor:
    """Sums ``grad`` over the dimensions along which ``target`` was broadcast.

    Uses static shapes when both are fully known, else ``BroadcastGradientArgs`` on the
    run-time shapes.
    """
    if grad.shape.is_fully_defined() and grad.shape == target.shape:
        return grad
    axes = _static_reduction_axes(grad.shape, target.shape)
    if axes is not None:
        summed = reduce_sum(grad, axes) if axes else grad
        if summed.shape != target.shape:
            summed = array_ops.reshape(summed, target.shape.as_list())
        return summed
    target_shape = array_ops.shape(target)
    axes_t, _ = math_ops.broadcast_gradient_args(target_shape, array_ops.shape(grad))
    return array_ops.reshape(reduce_sum(grad, axes_t), target_shape)



# --- BroadcastTo -----------------------------------------------------------------------------
def _broadcast_to_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    from flowmesh.core.shapes import broadcast_shapes

    x, shape_t = inputs
    target = shape_from_tensor(shape_t)
    if target.rank is not None and x.shape.rank is not None:
        if x.shape.rank > target.rank:
            raise InvalidArgumentError(f"Rank of input ({x.shape.rank}) must be no greater than rank of output shape ({target.rank})")
        broadcast_shapes(x.shape, target)
    return [(x.dtype, target)]


register_op("BroadcastTo", _broadcast_to_shape,
            grad=lambda op, grad: [reduce_to_shape_of(grad, op.inputs[0]), None])


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Broadcasts ``input`` to ``shape`` (NumPy rules)."""
    x = convert_to_tensor(input)
    s = shape if isinstance(shape, Tensor) else constant([int(d) for d in shape], dtype=dtypes.int32)
    target = shape_from_tensor(s)
    if x.shape.is_fully_defined() and target.rank is not None and x.shape.as_list() == target.as_list():
        return x
    return make_tensor("BroadcastTo", [x, s], name=name or "BroadcastTo")
