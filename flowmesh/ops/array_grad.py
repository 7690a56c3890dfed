"""Gradients of the array ops that need ops from other families.

As TensorFlow's ``array_grad.py``: ``array_ops`` and ``gather_ops`` register their ops, and
this module, imported once by ``flowmesh.ops``, registers the gradients that call wrappers
built on top of them (gathers, segment sums, reductions).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_gradient
from flowmesh.ops import math_ops, range_ops
from flowmesh.ops._builders import constant_value
from flowmesh.ops.array_ops import concat, expand_dims, reshape, shape, split, stack, transpose
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.gather_ops import gather
from flowmesh.ops.reduction_ops import reduce_prod, reduce_sum
from flowmesh.ops.segment_ops import unsorted_segment_sum


@register_gradient("Fill")
def _fill_grad(op: Any, grad: Tensor) -> list:
    return [None, reduce_sum(grad)]


@register_gradient("ConcatV2")
def _concat_grad(op: Any, grad: Tensor) -> list:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    if len(values) == 1:
        return [grad, None]
    sizes = [shape(v) for v in values]
    axis_value = constant_value(axis_t)
    static = [v.shape.as_list()[int(axis_value)] if axis_value is not None and v.shape.rank is not None
              else None for v in values]
    if all(s is not None for s in static):
        parts = split(grad, static, axis=axis_t)
    else:
        axis_sizes = [gather(s, axis_t) if axis_value is None else s[int(axis_value)] for s in sizes]
        parts = split(grad, stack(axis_sizes), axis=axis_t)
    return list(parts) + [None]


@register_gradient("GatherV2")
def _gather_grad(op: Any, grad: Tensor) -> list:
    """IndexedSlices for axis 0; otherwise a dense segment sum (as TensorFlow)."""
    params, indices, axis_t = op.inputs
    axis, batch_dims = constant_value(axis_t), op.attrs.get("batch_dims", 0)
    index_type = dtypes.int64 if indices.dtype == dtypes.int64 else dtypes.int32
    params_shape = shape(params, out_type=index_type)
    if axis is not None and int(axis) == 0 and batch_dims == 0:
        values_shape = concat([[-1], params_shape[1:]], 0)
        values = reshape(grad, values_shape)
        return [IndexedSlices(values, reshape(indices, [-1]), params_shape), None, None]
    if axis is None or params.shape.rank is None or indices.shape.rank is None:
        raise LookupError(
            f"The gradient of GatherV2 '{op.name}' with axis != 0 needs a constant axis and "
            f"known ranks (got axis={axis}, params {params.shape}, indices {indices.shape})")
    rank_ = params.shape.rank
    axis = int(axis) % rank_
    return [_dense_gather_grad(grad, indices, params_shape, axis, batch_dims, rank_), None, None]


def _dense_gather_grad(grad: Tensor, indices: Tensor, params_shape: Tensor, axis: int,
                       batch_dims: int, rank_: int) -> Tensor:
    # values: [batch..., outer..., N, inner...] with N = number of gathered indices per batch.
    batch_shape = params_shape[:batch_dims]
    flat_indices = reshape(indices, concat([batch_shape, [-1]], 0))
    values = reshape(grad, concat([params_shape[:axis], [-1], params_shape[axis + 1:]], 0))
    # Move N next to the batch dims, then fold the batch into the segment ids.
    perm = list(range(batch_dims)) + [axis] + [d for d in range(batch_dims, rank_) if d != axis]
    moved = transpose(values, perm)
    dim_size = params_shape[axis]
    if batch_dims:
        batch_size = reduce_prod(batch_shape)
        offsets = math_ops.multiply(range_ops.range(batch_size, dtype=flat_indices.dtype),
                                    cast(dim_size, flat_indices.dtype))
        flat_indices = math_ops.add(reshape(flat_indices, [batch_size, -1]), expand_dims(offsets, 1))
        dim_size = math_ops.multiply(batch_size, dim_size)
    moved_shape = shape(moved, out_type=params_shape.dtype)
    flat_values = reshape(moved, concat([[-1], moved_shape[batch_dims + 1:]], 0))
    summed = unsorted_segment_sum(flat_values, reshape(flat_indices, [-1]), dim_size)
    summed = reshape(summed, concat([batch_shape, [params_shape[axis]], moved_shape[batch_dims + 1:]], 0))
    inverse = [perm.index(d) for d in range(rank_)]
    return transpose(summed, inverse)
