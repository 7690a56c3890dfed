"""Gathers: ``tf.gather`` (GatherV2, with its sparse gradient), ``batch_gather``,
``boolean_mask``, and the conversion of ``IndexedSlices`` to a dense tensor.

Kernels live under the same names in ``flowmesh/kernels/gather_ops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import constant_value, make_tensor
from flowmesh.ops.array_ops import _int_attr_tensor, concat, reshape, shape, squeeze
from flowmesh.ops.select_ops import where


# --- GatherV2 ------------------------------------------------------------------------------
def _gather_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    params, indices, axis_t = inputs
    if not indices.dtype.is_integer:
        raise TypeError(f"GatherV2 indices must be int32 or int64, got {indices.dtype.name}")
    if params.dtype == dtypes.resource:
        return [(attrs["dtype"], unknown_shape())]
    axis = constant_value(axis_t)
    batch_dims = attrs.get("batch_dims", 0)
    if params.shape.rank is None or indices.shape.rank is None or axis is None:
        return [(params.dtype, unknown_shape())]
    p, i = params.shape.as_list(), indices.shape.as_list()
    axis = _check_gather_axes(int(axis), batch_dims, len(p), len(i))
    for d in range(batch_dims):
        if p[d] is not None and i[d] is not None and p[d] != i[d]:
            raise InvalidArgumentError(
                f"params.shape[{d}]: {p[d]} should be equal to indices.shape[{d}]: {i[d]} "
                f"(batch_dims={batch_dims})")
    return [(params.dtype, TensorShape(p[:axis] + i[batch_dims:] + p[axis + 1:]))]


def _check_gather_axes(axis: int, batch_dims: int, params_rank: int, indices_rank: int) -> int:
    if not -params_rank <= axis < max(params_rank, 1):
        raise InvalidArgumentError(f"Expected axis in the range [{-params_rank}, {params_rank}), "
                                   f"but got {axis}")
    axis %= max(params_rank, 1)
    if not 0 <= batch_dims <= indices_rank or batch_dims > axis:
        raise InvalidArgumentError(
            f"batch_dims ({batch_dims}) must be in [0, rank(indices)={indices_rank}] and <= "
            f"axis ({axis})")
    return axis


register_op("GatherV2", _gather_shape)  # gradient: array_grad


def gather(params: Any, indices: Any, validate_indices: Any = None, name: str | None = None,
           axis: Any = None, batch_dims: int = 0) -> Tensor:
    """Gathers slices of ``params`` at ``indices`` along ``axis`` (``tf.gather``).

    Args:
        params: the tensor (or variable) to gather from.
        indices: int32/int64 indices into ``params``' dimension ``axis``.
        validate_indices: ignored (indices are always validated on CPU).
        name: op name.
        axis: the dimension to gather from (default 0; negative counts from the end).
        batch_dims: number of leading batch dimensions shared by params and indices.

    Returns:
        ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.

    Raises:
        TypeError: indices are not integers.
        InvalidArgumentError: an index is outside ``[0, params.shape[axis])`` (at run time,
            naming the node), or axis/batch_dims are out of range.

    The gradient with respect to ``params`` is an :class:`IndexedSlices` when axis is 0
    and batch_dims is 0, else a dense tensor (as in TensorFlow).
    """
    sparse_read = getattr(params, "sparse_read", None)
    if sparse_read is not None and (axis is None or axis == 0) and batch_dims == 0:
        return sparse_read(indices, name=name)
    p = convert_to_tensor(params)
    idx = convert_to_tensor(indices)
    if not idx.dtype.is_integer:
        raise TypeError(f"Value passed to parameter 'indices' has DataType {idx.dtype.name} not in "
                        "list of allowed values: int32, int64 (op GatherV2)")
    axis_t = _int_attr_tensor(0 if axis is None else axis, "axis", dtype=idx.dtype)
    return make_tensor("GatherV2", [p, idx, axis_t], {"batch_dims": int(batch_dims)},
                       name=name or "GatherV2")


def batch_gather(params: Any, indices: Any, name: str | None = None) -> Tensor:
    """``tf.batch_gather`` (deprecated): ``gather`` along the last axis of ``indices`` with
    all the leading dimensions as batch dimensions."""
    idx = convert_to_tensor(indices)
    if idx.shape.rank is None:
        raise InvalidArgumentError("batch_gather needs indices of known rank")
    batch = idx.shape.rank - 1
    return gather(params, idx, axis=batch, batch_dims=batch, name=name or "batch_gather")




# --- boolean_mask ------------------------------------------------------------------------
def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None) -> Tensor:
    """The elements (or slices) of ``tensor`` where ``mask`` is true, flattened along the
    masked dimensions (``axis`` .. ``axis + rank(mask)``)."""
    with name_scope(name) as scope:
        x = convert_to_tensor(tensor)
        m = convert_to_tensor(mask, dtype=dtypes.bool)
        k = m.shape.rank
        if k is None:
            raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.")
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        axis = 0 if axis is None else int(axis)
        if x.shape.rank is not None:
            x.shape[axis:axis + k].assert_is_compatible_with(m.shape)
        leading = shape(x)  # TensorFlow always flattens the masked dims (dense gradients)
        x = reshape(x, concat([leading[:axis], [-1], leading[axis + k:]], 0))
        m = reshape(m, [-1])
        indices = squeeze(where(m), axis=[1])
        return gather(x, indices, axis=axis, name=scope)
