"""N-d indexing: ``gather_nd``, ``scatter_nd``, ``tensor_scatter_nd_*``,
(``dynamic_partition`` / ``dynamic_stitch`` live in ``embedding_ops``).

``indices[..., :D]`` address the first ``D`` dimensions of ``params`` (or of the scatter
target); out-of-range indices are run-time ``InvalidArgumentError``s naming the node.
Gradients follow TensorFlow: ``gather_nd``'s is a ``scatter_nd`` (``IndexedSlices`` when
the indices address rows, i.e. ``indices`` is ``[N, 1]``), ``scatter_nd``'s is a
``gather_nd``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops._builders import (
    INDEX_TYPES,
    convert_same_dtype,
    make_tensor,
    shape_from_tensor,
)


def _indexed_shape(indices: TensorShape, params: TensorShape) -> TensorShape:
    """``indices.shape[:-1] + params.shape[indices.shape[-1]:]``."""
    if indices.rank is None or params.rank is None:
        return unknown_shape()
    if indices.rank < 1:
        raise InvalidArgumentError(f"indices must be at least a vector, got shape {indices}")
    depth = indices.as_list()[-1]
    if depth is None:
        return unknown_shape()
    if depth > params.rank:
        raise InvalidArgumentError(f"index innermost dimension length must be <= params rank; saw: "
                                   f"{depth} vs. {params.rank}")
    return TensorShape(indices.as_list()[:-1] + params.as_list()[depth:])


# --- GatherNd --------------------------------------------------------------------------------
def _gather_nd_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    params, indices = inputs
    if indices.dtype not in INDEX_TYPES:
        raise TypeError(f"GatherNd indices must be int32 or int64, got {indices.dtype.name}")
    return [(params.dtype, _indexed_shape(indices.shape, params.shape))]


def _gather_nd_grad(op: Any, grad: Tensor) -> list:
    params, indices = op.inputs
    ref_shape = array_ops.shape(params, out_type=indices.dtype)
    if indices.shape.rank == 2 and indices.shape.as_list()[-1] == 1:
        return [IndexedSlices(grad, array_ops.squeeze(indices, axis=[-1]), ref_shape), None]
    return [scatter_nd(indices, grad, ref_shape), None]


register_op("GatherNd", _gather_nd_shape, grad=_gather_nd_grad)


def gather_nd(params: Any, indices: Any, name: str | None = None, batch_dims: int = 0) -> Tensor:
    """Gathers slices ``params[indices[i, :D]]`` (``tf.gather_nd``).

    Args:
        params: the tensor to gather from.
        indices: int32/int64, ``[..., D]`` with ``D <= rank(params)``.
        name: op name.
        batch_dims: only 0 is supported.

    Returns:
        ``indices.shape[:-1] + params.shape[D:]``.

    Raises:
        InvalidArgumentError: ``D > rank(params)`` or an index out of range (at run time).
        NotImplementedError: ``batch_dims > 0``.
    """
    if batch_dims:
        raise NotImplementedError("gather_nd with batch_dims > 0 is not supported; fold the batch "
                                  "coordinates into indices instead")
    p = convert_to_tensor(params, name="params")
    idx = convert_to_tensor(indices, name="indices")
    return make_tensor("GatherNd", [p, idx], name=name or "GatherNd")


# --- ScatterNd / TensorScatter* ------------------------------------------------------------
def _check_updates(indices: Tensor, updates: Tensor, target: TensorShape, op_type: str) -> None:
    if indices.dtype not in INDEX_TYPES:
        raise TypeError(f"{op_type} indices must be int32 or int64, got {indices.dtype.name}")
    expected = _indexed_shape(indices.shape, target)
    if not expected.is_compatible_with(updates.shape):
        raise InvalidArgumentError(
            f"{op_type}: updates of shape {updates.shape} must have shape indices.shape[:-1] + "
            f"shape[indices.shape[-1]:] = {expected} (indices {indices.shape}, shape {target})")


def _scatter_nd_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    indices, updates, shape_t = inputs
    target = shape_from_tensor(shape_t)
    _check_updates(indices, updates, target, "ScatterNd")
    return [(updates.dtype, target)]


def _tensor_scatter_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    tensor, indices, updates = inputs
    if tensor.dtype != updates.dtype:
        raise TypeError(f"tensor_scatter_nd: tensor dtype {tensor.dtype.name} != updates dtype "
                        f"{updates.dtype.name}")
    _check_updates(indices, updates, tensor.shape, "TensorScatter")
    return [(tensor.dtype, tensor.shape)]


register_op("ScatterNd", _scatter_nd_shape,
            grad=lambda op, g: [None, gather_nd(g, op.inputs[0]), None])
register_op("TensorScatterUpdate", _tensor_scatter_shape, grad=lambda op, g: [
    tensor_scatter_nd_update(g, op.inputs[1], array_ops.zeros_like(op.inputs[2])), None,
    gather_nd(g, op.inputs[1])])
register_op("TensorScatterAdd", _tensor_scatter_shape,
            grad=lambda op, g: [g, None, gather_nd(g, op.inputs[1])])
register_op("TensorScatterSub", _tensor_scatter_shape,
            grad=lambda op, g: [g, None, math_ops.negative(gather_nd(g, op.inputs[1]))])



def _tensor_scatter_extremum_grad(op: Any, grad: Tensor) -> list:
    """TensorFlow's rule: the gradient is split evenly between the tied maxima (minima) of
    ``tensor`` and ``updates`` that produced each output element."""
    x, indices, y = op.inputs
    out = op.outputs[0]
    x_ind = cast_ops.cast(math_ops.equal(x, out), grad.dtype)
    y_ind = cast_ops.cast(math_ops.equal(y, gather_nd(out, indices)), grad.dtype)
    count = x_ind + scatter_nd(indices, y_ind, array_ops.shape(x, out_type=indices.dtype))
    return [grad * x_ind / count, None, gather_nd(grad / count, indices) * y_ind]


register_op("TensorScatterMax", _tensor_scatter_shape, grad=_tensor_scatter_extremum_grad)
register_op("TensorScatterMin", _tensor_scatter_shape, grad=_tensor_scatter_extremum_grad)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of ``shape`` with ``updates`` added at ``indices`` (``tf.scatter_nd``);
    repeated indices accumulate.

    Raises:
        InvalidArgumentError: updates of the wrong shape, or an index out of range (at run
            time).
    """
    idx = convert_to_tensor(indices, name="indices")
    upd = convert_to_tensor(updates, name="updates")
    shape_t = shape if isinstance(shape, Tensor) else convert_to_tensor(shape, dtype=idx.dtype, name="shape")
    if shape_t.dtype != idx.dtype:
        shape_t = cast_ops.cast(shape_t, idx.dtype)
    return make_tensor("ScatterNd", [idx, upd, shape_t], name=name or "ScatterNd")


def _tensor_scatter(op_type: str, default_name: str, doc: str):
    def op_fn(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        t, upd = convert_same_dtype(op_type, [tensor, updates], ["tensor", "updates"])
        idx = convert_to_tensor(indices, name="indices")
        return make_tensor(op_type, [t, idx, upd], name=name or default_name)

    op_fn.__name__ = default_name
    op_fn.__doc__ = doc + ("\n\nRaises:\n    InvalidArgumentError: updates of the wrong shape or an "
                           "index out of range (at run time).\n")
    return op_fn


tensor_scatter_nd_update = _tensor_scatter(
    "TensorScatterUpdate", "tensor_scatter_nd_update", "A copy of ``tensor`` with ``updates`` written at ``indices``.")
tensor_scatter_nd_add = _tensor_scatter(
    "TensorScatterAdd", "tensor_scatter_nd_add", "A copy of ``tensor`` with ``updates`` added at ``indices``.")
tensor_scatter_nd_sub = _tensor_scatter(
    "TensorScatterSub", "tensor_scatter_nd_sub", "A copy of ``tensor`` with ``updates`` subtracted at ``indices``.")
tensor_scatter_nd_max = _tensor_scatter(
    "TensorScatterMax", "tensor_scatter_nd_max",
    "A copy of ``tensor`` where each element at ``indices`` is the maximum of itself and ``updates``.")
tensor_scatter_nd_min = _tensor_scatter(
    "TensorScatterMin", "tensor_scatter_nd_min",
    "A copy of ``tensor`` where each element at ``indices`` is the minimum of itself and ``updates``.")
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
