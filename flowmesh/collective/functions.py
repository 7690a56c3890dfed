"""Horovod's tensor functions in graph mode: ``allreduce``, ``allgather``, ``broadcast``...

Each builds collective ops on the world group (every process of the job). Ranks must
build the same graph (same op names, same order), as in Horovod, because an op's name
identifies the collective across ranks unless a ``name`` is given.

Example:
    >>> import flowmesh as tf
    >>> import flowmesh.collective as hvd
    >>> hvd.init()
    >>> mean = hvd.allreduce(tf.constant([hvd.rank()], tf.float32))   # [0.5] with 2 ranks
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from flowmesh.collective import context
from flowmesh.collective.backends.base import ReduceOp
from flowmesh.collective.compression import Compression, Compressor
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.ops import collective_ops

Average = ReduceOp.MEAN
Sum = ReduceOp.SUM
Min = ReduceOp.MIN
Max = ReduceOp.MAX
Product = ReduceOp.PRODUCT


def rank() -> int:
    """This process's rank in the job (0 .. size-1)."""
    return context.world_info().rank


def size() -> int:
    """Number of processes in the job."""
    return context.world_info().size


def local_rank() -> int:
    """This process's rank among the processes on its host (use it to pick a GPU)."""
    return context.world_info().local_rank


def local_size() -> int:
    """Number of processes on this host."""
    return context.world_info().local_size


def resolve_op(op: Any = None, average: bool | None = None) -> ReduceOp:
    """Horovod's ``op``/deprecated ``average`` arguments -> a :class:`ReduceOp`.

    Raises:
        ValueError: both given, or an unknown op.
    """
    if average is not None:
        if op is not None:
            raise ValueError("Pass either op or the deprecated average argument, not both")
        return ReduceOp.MEAN if average else ReduceOp.SUM
    return ReduceOp.MEAN if op is None else ReduceOp.parse(op)


def _device_scope(device: str) -> Any:
    return get_default_graph().device(device) if device else contextlib.nullcontext()


def _scope_name(name: str | None, default: str, tensor: Any) -> str:
    if name:
        return name
    base = getattr(tensor, "name", "tensor").split(":")[0].replace("/", "_")
    return f"{default}_{base}"


def allreduce(tensor: Any, average: bool | None = None, device_dense: str = "",
              device_sparse: str = "", compression: type[Compressor] = Compression.none,
              op: Any = None, prescale_factor: float = 1.0, postscale_factor: float = 1.0,
              name: str | None = None) -> Any:
    """Reduces ``tensor`` over all ranks (default: the average).

    Args:
        tensor: a Tensor, or IndexedSlices (then values and indices are all-gathered,
            Horovod's sparse all-reduce).
        average: deprecated; ``True`` means ``op=Average``, ``False`` ``op=Sum``.
        device_dense, device_sparse: device scopes for the collective ops.
        compression: ``Compression.none``, ``.fp16`` or ``.bf16`` (floating tensors only).
        op: ``Average`` (default), ``Sum``, ``Min``, ``Max`` or ``Product``.
        prescale_factor, postscale_factor: multiply before / after the reduction.
        name: identifies the collective across ranks (default: from the tensor's name).

    Returns:
        A tensor (or IndexedSlices) like ``tensor`` holding the reduction.
    """
    reduce_op = resolve_op(op, average)
    if isinstance(tensor, IndexedSlices):
        return _sparse_allreduce(tensor, reduce_op, device_sparse, name)
    tensor = convert_to_tensor(tensor)
    with _device_scope(device_dense):
        return grouped_allreduce([tensor], compression=compression, op=reduce_op,
                                 prescale_factor=prescale_factor,
                                 postscale_factor=postscale_factor,
                                 name=_scope_name(name, "HorovodAllreduce", tensor))[0]


def grouped_allreduce(tensors: Sequence[Any], average: bool | None = None,
                      compression: type[Compressor] = Compression.none, op: Any = None,
                      prescale_factor: float = 1.0, postscale_factor: float = 1.0,
                      name: str | None = None) -> list[Tensor]:
    """All-reduces several dense tensors as one fused collective."""
    from flowmesh.ops import cast_ops

    reduce_op = resolve_op(op, average)
    tensors = [convert_to_tensor(t) for t in tensors]
    if prescale_factor != 1.0:
        tensors = [t * cast_ops.cast(prescale_factor, t.dtype) for t in tensors]
    wire, ctxs = zip(*(compression.compress(t) for t in tensors))
    reduced = collective_ops.grouped_all_reduce(list(wire), merge_op=reduce_op.value,
                                                name=name or "HorovodGroupedAllreduce")
    out = [compression.decompress(r, c) for r, c in zip(reduced, ctxs)]
    if postscale_factor != 1.0:
        out = [t * cast_ops.cast(postscale_factor, t.dtype) for t in out]
    return out


def _sparse_allreduce(slices: IndexedSlices, reduce_op: ReduceOp, device: str,
                      name: str | None) -> IndexedSlices:
    from flowmesh.collective.gradients import ReduceConfig, allreduce_sparse

    base = _scope_name(name, "HorovodAllgather", slices.values)
    with _device_scope(device):
        return allreduce_sparse(slices, ReduceConfig(op=reduce_op), base)


def allgather(tensor: Any, name: str | None = None) -> Tensor:
    """Every rank's ``tensor`` concatenated along dimension 0 (sizes of dim 0 may differ)."""
    tensor = convert_to_tensor(tensor)
    return collective_ops.all_gather(tensor, name=_scope_name(name, "HorovodAllgather", tensor))


def broadcast(tensor: Any, root_rank: int, name: str | None = None) -> Tensor:
    """Rank ``root_rank``'s ``tensor`` on every rank."""
    tensor = convert_to_tensor(tensor)
    return collective_ops.broadcast(tensor, root=root_rank,
                                    name=_scope_name(name, "HorovodBroadcast", tensor))


def reducescatter(tensor: Any, op: Any = None, name: str | None = None) -> Tensor:
    """Reduces over ranks and keeps this rank's share of dimension 0 (default: Average)."""
    reduce_op = resolve_op(op)
    tensor = convert_to_tensor(tensor)
    return collective_ops.reduce_scatter(tensor, merge_op=reduce_op.value,
                                         name=_scope_name(name, "HorovodReducescatter", tensor))


def broadcast_variables(variables: Sequence[Any], root_rank: int) -> Operation:
    """An op assigning rank ``root_rank``'s values to ``variables`` on every rank (one
    fused broadcast for all of them)."""
    from flowmesh.ops import control_flow_ops

    variables = list(variables)
    if not variables:
        return control_flow_ops.no_op(name="broadcast_variables")
    graph = get_default_graph()
    with graph.name_scope("broadcast_variables"):
        values = collective_ops.grouped_broadcast([v.read_value() for v in variables],
                                                  root=root_rank, name="HorovodBroadcast")
        assigns = []
        for var, value in zip(variables, values):
            assigns.append(var.assign(value, read_value=False))
        return control_flow_ops.group(*assigns, name="assign")


def broadcast_global_variables(root_rank: int) -> Operation:
    """An op broadcasting every global variable from ``root_rank`` (run it after init)."""
    from flowmesh.ops.variables import global_variables

    return broadcast_variables(global_variables(), root_rank)
