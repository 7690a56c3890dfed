"""``embedding_lookup`` over one or several (partitioned) parameter tensors or variables,
and the ops it is built from: ``DynamicPartition`` and ``DynamicStitch``.

With several params, ids are assigned to partitions by ``partition_strategy``:

=========  ==================================================================================
``mod``    id ``i`` lives in partition ``i % n`` at row ``i // n``
``div``    ids are split into ``n`` contiguous ranges; the first ``total % n`` partitions
           hold one extra id (``total`` is the sum of the params' first dimensions)
=========  ==================================================================================

Each partition's rows are gathered next to the params (a variable is read with
``Variable.sparse_read``, on the device it lives on, so only the requested rows travel) and
stitched back in the order of ``ids``. The gradient with respect to each param is an
:class:`~flowmesh.core.indexed_slices.IndexedSlices` holding only the looked-up rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph, name_scope
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, range_ops, select_ops
from flowmesh.ops._builders import make_op, make_tensor
from flowmesh.ops.reduction_ops import reduce_prod, reduce_sum


# --- DynamicPartition ------------------------------------------------------------------------
def _partition_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    data, partitions = inputs
    n = attrs["num_partitions"]
    if partitions.dtype != dtypes.int32:
        raise TypeError(f"DynamicPartition partitions must be int32, got {partitions.dtype.name}")
    if data.shape.rank is None or partitions.shape.rank is None:
        return [(data.dtype, unknown_shape())] * n
    prefix = partitions.shape.rank
    if not data.shape[:prefix].is_compatible_with(partitions.shape):
        raise InvalidArgumentError(
            f"data.shape must start with partitions.shape, got data.shape = {data.shape}, "
            f"partitions.shape = {partitions.shape}")
    return [(data.dtype, TensorShape([None]).concatenate(data.shape[prefix:]))] * n


def _partition_grad(op: Any, *grads: Tensor) -> list:
    data, partitions = op.inputs

    prefix_shape = array_ops.shape(partitions)
    original = array_ops.reshape(range_ops.range(reduce_prod(prefix_shape)), prefix_shape)
    pieces = dynamic_partition(original, partitions, op.attrs["num_partitions"])
    filled = [array_ops.zeros_like(t) if g is None else g for g, t in zip(grads, op.outputs)]
    stitched = dynamic_stitch(pieces, filled)
    return [array_ops.reshape(stitched, array_ops.shape(data)), None]


register_op("DynamicPartition", _partition_shape, grad=_partition_grad)


def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: str | None = None) -> list[Tensor]:
    """Splits ``data`` into ``num_partitions`` tensors by the int32 ``partitions`` index.

    ``outputs[i]`` holds, in order, the slices ``data[j]`` with ``partitions[j] == i``
    (``partitions.shape`` must be a prefix of ``data.shape``).

    Raises:
        InvalidArgumentError: (at run time) a partition index outside ``[0, num_partitions)``.
    """
    if int(num_partitions) < 1:
        raise InvalidArgumentError(f"DynamicPartition: num_partitions must be >= 1, got {num_partitions}")
    d = convert_to_tensor(data, name="data")
    p = convert_to_tensor(partitions, dtype=dtypes.int32, name="partitions")
    op = make_op("DynamicPartition", [d, p], {"num_partitions": int(num_partitions)},
                 name=name or "DynamicPartition")
    return list(op.outputs)


# --- DynamicStitch ---------------------------------------------------------------------------
def _stitch_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    n = attrs["N"]
    indices, data = inputs[:n], inputs[n:]
    for i, d in zip(indices, data):
        if d.dtype != data[0].dtype:
            raise TypeError(f"DynamicStitch data dtypes differ: {data[0].dtype.name} vs {d.dtype.name}")
        if i.shape.rank is not None and d.shape.rank is not None and \
                not d.shape[:i.shape.rank].is_compatible_with(i.shape):
            raise InvalidArgumentError(
                f"DynamicStitch: data shape {d.shape} must start with indices shape {i.shape}")
    first_i, first_d = indices[0], data[0]
    if first_i.shape.rank is None or first_d.shape.rank is None:
        return [(first_d.dtype, unknown_shape())]
    return [(first_d.dtype, TensorShape([None]).concatenate(first_d.shape[first_i.shape.rank:]))]


def _stitch_grad(op: Any, grad: Any) -> list:
    n = op.attrs["N"]
    if isinstance(grad, IndexedSlices):
        from flowmesh.ops.segment_ops import unsorted_segment_sum

        rows = array_ops.shape(op.outputs[0])[0]
        grad = unsorted_segment_sum(grad.values, grad.indices, rows)
    indices = [cast_ops.cast(t, dtypes.int32) for t in op.inputs[:n]]
    return [None] * n + [gather_ops.gather(grad, i) for i in indices]


register_op("DynamicStitch", _stitch_shape, grad=_stitch_grad)


def dynamic_stitch(indices: Sequence[Any], data: Sequence[Any], name: str | None = None) -> Tensor:
    """Interleaves ``data`` tensors: ``merged[indices[m][i]] = data[m][i]`` (later m win).

    The result has ``max(indices) + 1`` rows.
    """
    if len(indices) != len(data) or not indices:
        raise ValueError(f"dynamic_stitch needs as many indices as data tensors (>= 1), got "
                         f"{len(indices)} and {len(data)}")
    idx = [convert_to_tensor(i, dtype=dtypes.int32, name="indices") for i in indices]
    values = [convert_to_tensor(d, name="data") for d in data]
    return make_tensor("DynamicStitch", idx + values, {"N": len(idx)}, name=name or "DynamicStitch")


parallel_dynamic_stitch = dynamic_stitch


# --- embedding_lookup ------------------------------------------------------------------------
def _as_param_list(params: Any) -> list[Any]:
    if params is None:
        raise ValueError("params must be specified")
    if hasattr(params, "_get_variable_list"):
        params = params._get_variable_list()
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Length of params is currently 0. Need at least one param.")
        return list(params)
    return [params]


def _colocated_gather(param: Any, ids: Tensor) -> Tensor:
    """Rows ``ids`` of ``param``, read next to it (``sparse_read`` for variables)."""
    anchor = getattr(param, "handle", None)
    target = anchor.op if anchor is not None else param.op
    with get_default_graph().colocate_with(target):
        return gather_ops.gather(param, ids)


def _clip_rows(values: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """Rescales each embedding whose L2 norm exceeds ``max_norm`` (``clip_by_norm``)."""
    if max_norm is None:
        return values

    if ids.shape.rank is not None and values.shape.rank is not None:
        axes: Any = list(range(ids.shape.rank, values.shape.rank))
    else:
        axes = range_ops.range(array_ops.rank(ids), array_ops.rank(values))
    clip = convert_to_tensor(max_norm, dtype=values.dtype, name="max_norm")
    l2sum = reduce_sum(values * values, axes, keepdims=True)
    positive = math_ops.greater(l2sum, 0.0)
    safe = select_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
    l2norm = select_ops.where(positive, math_ops.sqrt(safe), l2sum)
    return array_ops.identity(values * clip / math_ops.maximum(l2norm, clip))


def _div_assignments(flat_ids: Tensor, params: list[Any]) -> tuple[Tensor, Tensor]:
    n = len(params)
    sizes = [p.shape.as_list()[0] if p.shape.rank else None for p in params]
    if all(s is not None for s in sizes):
        total = convert_to_tensor(sum(sizes), dtype=flat_ids.dtype)
    else:
        from flowmesh.ops.reduction_ops import reduce_sum

        rows = [cast_ops.cast(array_ops.shape(p)[0], flat_ids.dtype) for p in params]
        total = reduce_sum(array_ops.stack(rows))
    per = math_ops.floordiv(total, n)
    extras = math_ops.floormod(total, n)
    assign = math_ops.maximum(math_ops.floordiv(flat_ids, per + 1), math_ops.floordiv(flat_ids - extras, per))
    in_extras = cast_ops.cast(math_ops.less(assign, extras), flat_ids.dtype)
    new_ids = (in_extras * math_ops.floormod(flat_ids, per + 1)
               + (1 - in_extras) * math_ops.floormod(flat_ids - extras, per))
    return assign, new_ids


def _element_shape(params: list[Any]) -> TensorShape:
    shape = unknown_shape()
    for p in params:
        if p.shape.rank is not None:
            shape = shape.merge_with(p.shape[1:]) if shape.rank is not None else p.shape[1:]
    return shape


def _partitioned_lookup(params: list[Any], ids: Tensor, strategy: str, name: str) -> Tensor:
    n = len(params)
    flat_ids = array_ops.reshape(ids, [-1])
    original = range_ops.range(array_ops.size(flat_ids))
    if strategy == "mod":
        assign, new_ids = math_ops.floormod(flat_ids, n), math_ops.floordiv(flat_ids, n)
    else:
        assign, new_ids = _div_assignments(flat_ids, params)
    assign = cast_ops.cast(assign, dtypes.int32)
    gather_ids = dynamic_partition(new_ids, assign, n)
    positions = dynamic_partition(original, assign, n)
    rows = [_colocated_gather(p, pids) for p, pids in zip(params, gather_ids)]
    stitched = dynamic_stitch(positions, rows, name=name)
    element = _element_shape(params)
    tail = element.as_list() if element.is_fully_defined() else array_ops.shape(rows[0])[1:]
    result = array_ops.reshape(stitched, array_ops.concat([array_ops.shape(ids), tail], 0))
    if element.rank is not None:
        result.set_shape(ids.shape.concatenate(element))
    return result


def embedding_lookup(params: Any, ids: Any, partition_strategy: str = "mod", name: str | None = None,
                     validate_indices: bool = True, max_norm: Any = None) -> Tensor:
    """Looks up rows ``ids`` in ``params`` (a tensor, a variable, or a list of partitions).

    Args:
        params: one tensor/variable of shape ``[rows, ...]``, or a list of them (or a
            partitioned variable) sharing the trailing shape.
        ids: int32/int64 tensor of any shape.
        partition_strategy: ``"mod"`` or ``"div"`` (see the module docstring); only used
            when there is more than one param.
        validate_indices: ignored (out-of-range ids are always an error).
        max_norm: if set, each embedding with a larger L2 norm is scaled down to it.

    Returns:
        ``ids.shape + params.shape[1:]``; its gradient w.r.t. each param is IndexedSlices.

    Raises:
        ValueError: empty ``params`` or an unknown ``partition_strategy``.
        InvalidArgumentError: (at run time) an id outside the params' rows.
    """
    param_list = _as_param_list(params)
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy!r}. Must be one of "
                         "either `mod` or `div`.")
    with name_scope(name, "embedding_lookup", [ids]) as scope:
        param_list = [p if hasattr(p, "sparse_read") else convert_to_tensor(p, name="params")
                      for p in param_list]
        ids_t = convert_to_tensor(ids, name="ids")
        if not ids_t.dtype.is_integer:
            raise TypeError(f"embedding_lookup ids must be int32 or int64, got {ids_t.dtype.name}")
        if len(param_list) == 1:
            result = _clip_rows(_colocated_gather(param_list[0], ids_t), ids_t, max_norm)
            return array_ops.identity(result, name=scope)
        result = _partitioned_lookup(param_list, ids_t, partition_strategy, "stitch")
        return array_ops.identity(_clip_rows(result, ids_t, max_norm), name=scope)


__all__ = ["dynamic_partition", "dynamic_stitch", "embedding_lookup", "parallel_dynamic_stitch"]
