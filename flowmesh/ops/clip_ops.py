"""Clipping: ``clip_by_value`` (the ``ClipByValue`` op) and the norm-based clips built from
it and other ops: ``clip_by_norm``, ``global_norm``, ``clip_by_global_norm``,
``clip_by_average_norm``. Formulas follow TensorFlow's ``clip_ops.py`` (including the NaN
propagation of ``clip_by_global_norm`` and the zero-norm guard of ``clip_by_norm``), and
:class:`IndexedSlices` gradients are clipped value-wise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import broadcast_shapes
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops, select_ops
from flowmesh.ops._builders import REAL_NUMERIC, check_dtype, make_tensor
from flowmesh.ops.select_ops import where_v2


def _is_sparse(value: Any) -> bool:
    return isinstance(value, IndexedSlices)


# --- ClipByValue ---------------------------------------------------------------------------
def _clip_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x, lo, hi = inputs
    for name, bound in (("clip_value_min", lo), ("clip_value_max", hi)):
        if bound.dtype != x.dtype:
            raise TypeError(f"ClipByValue {name} has dtype {bound.dtype.name} but t has "
                            f"{x.dtype.name}")
        out = broadcast_shapes(x.shape, bound.shape)
        if out.rank is not None and x.shape.rank is not None and not out.is_compatible_with(x.shape):
            raise InvalidArgumentError(
                f"ClipByValue {name} of shape {bound.shape} would broadcast t of shape "
                f"{x.shape} to {out}; clip bounds must broadcast to t's shape")
    return [(x.dtype, x.shape)]


def _clip_grad(op: Any, g: Tensor) -> list:
    x, lo, hi = op.inputs
    zeros = array_ops.zeros_like(g)
    below, above = math_ops.less(x, lo), math_ops.greater(x, hi)
    gx = where_v2(math_ops.logical_or(below, above), zeros, g)
    glo = reduction_ops.reduce_to_shape_of(where_v2(below, g, zeros), lo)
    ghi = reduction_ops.reduce_to_shape_of(where_v2(above, g, zeros), hi)
    return [gx, glo, ghi]


register_op("ClipByValue", _clip_shape, grad=_clip_grad)


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Any:
    """Clamps ``t`` elementwise to ``[clip_value_min, clip_value_max]``.

    Args:
        t: a Tensor or IndexedSlices.
        clip_value_min, clip_value_max: bounds broadcastable to ``t``'s shape.
        name: op name.

    Returns:
        The clipped values, of ``t``'s shape and type (IndexedSlices stay sparse).

    Raises:
        InvalidArgumentError: a bound would broadcast ``t`` to a bigger shape.
        TypeError: the bounds' dtype differs from ``t``'s.
    """
    if _is_sparse(t):
        return IndexedSlices(clip_by_value(t.values, clip_value_min, clip_value_max, name),
                             t.indices, t.dense_shape)
    x = convert_to_tensor(t, name="t")
    check_dtype("ClipByValue", x, REAL_NUMERIC, "t")
    lo = convert_to_tensor(clip_value_min, dtype=x.dtype, name="clip_value_min")
    hi = convert_to_tensor(clip_value_max, dtype=x.dtype, name="clip_value_max")
    return make_tensor("ClipByValue", [x, lo, hi], name=name or "clip_by_value")


# --- norm-based clipping -----------------------------------------------------------------
def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """Scales ``t`` so that its L2 norm (over ``axes``, default all) is at most ``clip_norm``:
    ``t * clip_norm / max(l2norm(t), clip_norm)``.

    Args:
        t: a float Tensor or IndexedSlices.
        clip_norm: a positive scalar (or a tensor broadcastable to the reduced shape).
        axes: dimensions to compute the norm over (default: all).
        name: op name.

    Returns:
        The clipped tensor (IndexedSlices stay sparse).
    """

    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = convert_to_tensor(t.values if _is_sparse(t) else t, name="t")
        clip = convert_to_tensor(clip_norm, dtype=values.dtype, name="clip_norm")
        l2sum = reduction_ops.reduce_sum(values * values, axes, keepdims=True)
        positive = math_ops.greater(l2sum, array_ops.zeros_like(l2sum))
        safe = select_ops.where_v2(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = select_ops.where_v2(positive, math_ops.sqrt(safe), l2sum)
        clipped = math_ops.truediv(values * clip, math_ops.maximum(l2norm, clip))
        if _is_sparse(t):
            return IndexedSlices(array_ops.identity(clipped, name=scope), t.indices, t.dense_shape)
        return array_ops.identity(clipped, name=scope)


def _as_list(t_list: Any, what: str) -> list[Any]:
    if isinstance(t_list, (Tensor, IndexedSlices, str)) or not isinstance(t_list, Sequence):
        raise TypeError(f"{what} should be a sequence of tensors, got {type(t_list).__name__}")
    return list(t_list)


def global_norm(t_list: Sequence[Any], name: str | None = None) -> Tensor:
    """``sqrt(sum(||t||^2 for t in t_list))``; ``None`` entries are ignored.

    Raises:
        TypeError: ``t_list`` is not a sequence, or its tensors differ in dtype.
    """

    items = [t for t in _as_list(t_list, "t_list") if t is not None]
    with name_scope(name, "global_norm", items) as scope:
        if not items:
            return convert_to_tensor(0.0, name=scope)
        values = [convert_to_tensor(t.values if _is_sparse(t) else t) for t in items]
        squared = [reduction_ops.reduce_sum(math_ops.square(v)) for v in values]
        total = reduction_ops.reduce_sum(array_ops.stack(squared))
        return math_ops.sqrt(total, name=scope)


def clip_by_global_norm(t_list: Sequence[Any], clip_norm: Any, use_norm: Any = None,
                        name: str | None = None) -> tuple[list[Any], Tensor]:
    """Scales every tensor by ``clip_norm / max(global_norm, clip_norm)``.

    Args:
        t_list: tensors / IndexedSlices / None (passed through).
        clip_norm: a positive scalar.
        use_norm: a precomputed global norm (default: :func:`global_norm` of ``t_list``).
        name: op name.

    Returns:
        ``(clipped list, global norm)``. A NaN or infinite norm makes every value NaN, as in
        TensorFlow.

    Raises:
        TypeError: ``t_list`` is not a sequence.
    """

    items = _as_list(t_list, "t_list")
    with name_scope(name, "clip_by_global_norm", [t for t in items if t is not None]):
        norm = global_norm(items) if use_norm is None else convert_to_tensor(use_norm)
        clip = convert_to_tensor(clip_norm, dtype=norm.dtype, name="clip_norm")
        one = convert_to_tensor(1.0, dtype=norm.dtype)
        scale = clip * math_ops.minimum(math_ops.truediv(one, norm), math_ops.truediv(one, clip))
        scale = scale + (norm - norm)  # NaN/inf norms poison the scale, as in TensorFlow
        clipped: list[Any] = []
        for t in items:
            if t is None:
                clipped.append(None)
                continue
            values = convert_to_tensor(t.values if _is_sparse(t) else t)
            out = array_ops.identity(values * cast_ops.cast(scale, values.dtype))
            clipped.append(IndexedSlices(out, t.indices, t.dense_shape) if _is_sparse(t) else out)
        return clipped, norm


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Tensor:
    """Scales ``t`` so that ``l2norm(t) / size(t)`` is at most ``clip_norm`` (deprecated TF)."""

    with name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        x = convert_to_tensor(t, name="t")
        clip = convert_to_tensor(clip_norm, dtype=x.dtype, name="clip_norm")
        count = cast_ops.cast(array_ops.size(x), x.dtype)
        inverse_norm = math_ops.rsqrt(reduction_ops.reduce_sum(x * x))
        factor = math_ops.minimum(inverse_norm * count, math_ops.truediv(
            convert_to_tensor(1.0, dtype=x.dtype), clip))
        return array_ops.identity(x * clip * factor, name=scope)


