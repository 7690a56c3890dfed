"""Collective ops: all-reduce, all-gather, broadcast and reduce-scatter across a group.

Every op takes a list of tensors (a *grouped* collective: one negotiation, fused
transfers) and is keyed by ``group_key`` (0 = every process of the job, see
:mod:`flowmesh.collective.context`) and ``instance_key`` (which collective this is; equal
on every member). Without an ``instance_key`` the op's node name is the key, which is
equal on every rank when each rank builds the same graph (between-graph replication).
The kernels run on torch.distributed (gloo for CPU, NCCL for CUDA tensors) through the
collective engine.

Gradients (sum over members of each member's loss): all-reduce's is an all-reduce of
the upstream gradients; all-gather's is a reduce-scatter (rows come back to the member
that contributed them); broadcast's is an all-reduce kept on the root only;
reduce-scatter's is an all-gather. ``max``/``min`` all-reduce send the gradient to the
members holding the extreme value (split evenly between ties).

``all_reduce_start``/``all_reduce_wait`` split an all-reduce in two: the start op only
submits the transfer, so backprop continues while it runs; the wait op (scheduled as
late as possible) delivers the result. They are not differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops._builders import REAL_NUMERIC, check_dtype, make_op

WORLD = 0
_MERGE_OPS = {"add": "sum", "sum": "sum", "mul": "product", "product": "product",
              "max": "max", "min": "min", "mean": "mean", "average": "mean"}
_GATHERABLE = REAL_NUMERIC + (dtypes.bool,)


# --- shape rules -------------------------------------------------------------------------------
def _same_specs(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(t.dtype, t.shape) for t in inputs]


def _rows_unknown(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    specs = []
    num_rows = attrs.get("num_rows", 0)
    for t in inputs[:len(inputs) - num_rows]:
        if t.shape.rank == 0:
            raise ValueError(f"{attrs.get('_kind', 'collective')} needs tensors of rank >= 1, "
                             f"got a scalar {t.name}")
        rest = t.shape.as_list()[1:] if t.shape.rank is not None else None
        specs.append((t.dtype, TensorShape([None] + rest) if rest is not None else unknown_shape()))
    return specs


def _handle_spec(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.variant, TensorShape([]))]


def _wait_specs(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.as_dtype(d), as_shape(s)) for d, s in zip(attrs["T"], attrs["shapes"])]


def _rank_spec(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.int32, TensorShape([]))]


# --- gradients ---------------------------------------------------------------------------------
def _grad_attrs(op: Operation) -> dict[str, Any]:
    return {"group_key": op.attrs["group_key"], "group_size": op.attrs["group_size"],
            "member": op.attrs["member"]}


def _all_reduce_grad(op: Operation, *grads: Tensor) -> list[Any]:
    merge = op.attrs["merge_op"]
    keys = _grad_attrs(op)
    if merge in ("sum", "mean"):
        return grouped_all_reduce(list(grads), merge_op=merge, name="AllReduceGrad", **keys)
    summed = grouped_all_reduce(list(grads), merge_op="sum", name="AllReduceGrad", **keys)
    if merge == "product":
        return [s * y / x for s, x, y in zip(summed, op.inputs, op.outputs)]
    masks = [cast_ops.cast(math_ops.equal(x, y), x.dtype) for x, y in zip(op.inputs, op.outputs)]
    counts = grouped_all_reduce(masks, merge_op="sum", name="AllReduceTies", **keys)
    return [s * m / c for s, m, c in zip(summed, masks, counts)]


def _all_gather_grad(op: Operation, *grads: Tensor) -> list[Any]:
    rows = [array_ops.shape(x, out_type=dtypes.int32)[0] for x in op.inputs]
    return grouped_reduce_scatter(list(grads), merge_op="sum", rows=rows, name="AllGatherGrad",
                                  **_grad_attrs(op))


def _broadcast_grad(op: Operation, *grads: Tensor) -> list[Any]:
    keys = _grad_attrs(op)
    summed = grouped_all_reduce(list(grads), merge_op="sum", name="BroadcastGrad", **keys)
    is_root = math_ops.equal(group_rank(**keys), op.attrs["root"])
    return [s * cast_ops.cast(is_root, s.dtype) for s in summed]


def _reduce_scatter_grad(op: Operation, *grads: Tensor) -> list[Any]:
    keys = _grad_attrs(op)
    no_rows: list[Any] = [None] * op.attrs.get("num_rows", 0)
    gathered = grouped_all_gather(list(grads), name="ReduceScatterGrad", **keys)
    if op.attrs["merge_op"] == "mean":
        from flowmesh.ops import cast_ops

        size = group_size(**keys)
        return [g / cast_ops.cast(size, g.dtype) for g in gathered] + no_rows
    if op.attrs["merge_op"] != "sum":
        raise LookupError(f"No gradient for reduce-scatter with merge_op "
                          f"{op.attrs['merge_op']!r} (op '{op.name}'); use sum or mean")
    return gathered + no_rows


register_op("CollectiveAllReduce", _same_specs, grad=_all_reduce_grad, stateful=True)
register_op("CollectiveAllGather", _rows_unknown, grad=_all_gather_grad, stateful=True)
register_op("CollectiveBroadcast", _same_specs, grad=_broadcast_grad, stateful=True)
register_op("CollectiveReduceScatter", _rows_unknown, grad=_reduce_scatter_grad, stateful=True)
register_op("CollectiveAllReduceStart", _handle_spec, not_differentiable=True, stateful=True)
register_op("CollectiveWait", _wait_specs, not_differentiable=True, stateful=True)
register_op("CollectiveGroupRank", _rank_spec, not_differentiable=True, stateful=True)
register_op("CollectiveGroupSize", _rank_spec, not_differentiable=True, stateful=True)


# --- public wrappers ---------------------------------------------------------------------------
def merge_op_name(merge_op: str, final_op: str = "Id") -> str:
    """TensorFlow's ``(merge_op, final_op)`` or a plain name -> ``sum mean max min product``.

    Raises:
        ValueError: an unknown reduction, listing the accepted names.
    """
    merge = _MERGE_OPS.get(str(merge_op).lower())
    if merge is None:
        raise ValueError(f"Unknown merge_op {merge_op!r}; use 'Add', 'Mul', 'Max', 'Min' (or "
                         "'sum', 'mean', 'max', 'min', 'product')")
    final = str(final_op).lower()
    if final == "div":
        if merge != "sum":
            raise ValueError(f"final_op='Div' only makes sense with merge_op='Add', got {merge_op!r}")
        return "mean"
    if final != "id":
        raise ValueError(f"Unknown final_op {final_op!r}; use 'Id' or 'Div'")
    return merge


def _attrs(group_size: int | None, group_key: int, instance_key: int | None,
           member: int | None) -> dict[str, Any]:
    return {"group_key": int(group_key), "group_size": -1 if group_size is None else int(group_size),
            "instance_key": None if instance_key is None else int(instance_key),
            "member": -1 if member is None else int(member)}


def _convert(values: Sequence[Any], op_type: str, allowed: Sequence[dtypes.DType]) -> list[Tensor]:
    if not values:
        raise ValueError(f"{op_type} needs at least one tensor")
    tensors = [convert_to_tensor(v) for v in values]
    for i, t in enumerate(tensors):
        check_dtype(op_type, t, allowed, arg=f"t[{i}]")
    return tensors


def _outputs(op: Operation) -> list[Tensor]:
    return list(op.outputs)


def grouped_all_reduce(tensors: Sequence[Any], group_size: int | None = None, group_key: int = WORLD,
                       instance_key: int | None = None, merge_op: str = "Add", final_op: str = "Id",
                       member: int | None = None, name: str | None = None) -> list[Tensor]:
    """All-reduces several tensors in one collective (fused on the wire).

    Args:
        tensors: tensors of numeric dtypes (each member passes the same shapes and dtypes).
        group_size: members expected in the group (default: the whole group).
        group_key: 0 for every process of the job, or a registered local group.
        instance_key: identifies this collective across members (default: node name).
        merge_op: ``'Add' 'Mul' 'Max' 'Min'`` (or ``'sum' 'mean' ...``).
        final_op: ``'Id'`` or ``'Div'`` (divide by the group size: a mean).
        member: this replica's index in a local group (ignored for group 0).

    Returns:
        One reduced tensor per input.
    """
    merge = merge_op_name(merge_op, final_op)
    inputs = _convert(tensors, "CollectiveAllReduce", REAL_NUMERIC)
    attrs = _attrs(group_size, group_key, instance_key, member)
    attrs["merge_op"] = merge
    return _outputs(make_op("CollectiveAllReduce", inputs, attrs, name=name or "AllReduce"))


def all_reduce(t: Any, group_size: int | None = None, group_key: int = WORLD,
               instance_key: int | None = None, merge_op: str = "Add", final_op: str = "Id",
               member: int | None = None, name: str | None = None) -> Tensor:
    """All-reduces ``t`` across the group (``tf.raw_ops.CollectiveReduce``'s semantics).

    Example:
        >>> mean = all_reduce(x, merge_op="Add", final_op="Div")
    """
    return grouped_all_reduce([t], group_size, group_key, instance_key, merge_op, final_op,
                              member, name)[0]


def grouped_all_gather(tensors: Sequence[Any], group_size: int | None = None, group_key: int = WORLD,
                       instance_key: int | None = None, member: int | None = None,
                       name: str | None = None) -> list[Tensor]:
    """Concatenates every member's tensors along dimension 0, in member order.

    Members may pass different sizes of dimension 0 (the other dimensions must agree),
    so the static first dimension of the outputs is unknown.
    """
    inputs = _convert(tensors, "CollectiveAllGather", _GATHERABLE)
    attrs = _attrs(group_size, group_key, instance_key, member)
    attrs["_kind"] = "all_gather"
    return _outputs(make_op("CollectiveAllGather", inputs, attrs, name=name or "AllGather"))


def all_gather(t: Any, group_size: int | None = None, group_key: int = WORLD,
               instance_key: int | None = None, member: int | None = None,
               name: str | None = None) -> Tensor:
    """``t`` of every member, concatenated along dimension 0."""
    return grouped_all_gather([t], group_size, group_key, instance_key, member, name)[0]


def grouped_broadcast(tensors: Sequence[Any], root: int = 0, group_size: int | None = None,
                      group_key: int = WORLD, instance_key: int | None = None,
                      member: int | None = None, name: str | None = None) -> list[Tensor]:
    """Member ``root``'s tensors, delivered to every member."""
    inputs = _convert(tensors, "CollectiveBroadcast", _GATHERABLE)
    attrs = _attrs(group_size, group_key, instance_key, member)
    attrs["root"] = int(root)
    return _outputs(make_op("CollectiveBroadcast", inputs, attrs, name=name or "Broadcast"))


def broadcast(t: Any, root: int = 0, group_size: int | None = None, group_key: int = WORLD,
              instance_key: int | None = None, member: int | None = None,
              name: str | None = None) -> Tensor:
    """Member ``root``'s ``t`` on every member."""
    return grouped_broadcast([t], root, group_size, group_key, instance_key, member, name)[0]


def grouped_reduce_scatter(tensors: Sequence[Any], group_size: int | None = None,
                           group_key: int = WORLD, instance_key: int | None = None,
                           merge_op: str = "Add", final_op: str = "Id", member: int | None = None,
                           rows: Sequence[Any] | None = None, name: str | None = None) -> list[Tensor]:
    """Reduces across members and gives member ``r`` its share of dimension 0.

    Args:
        rows: optional int32 scalars, one per tensor: the rows this member wants (every
            member passes them and they add up to dimension 0). By default rows are split
            like ``numpy.array_split``: with ``n`` rows and ``k`` members, the first
            ``n % k`` members get one extra row.
    """
    merge = merge_op_name(merge_op, final_op)
    inputs = _convert(tensors, "CollectiveReduceScatter", REAL_NUMERIC)
    attrs = _attrs(group_size, group_key, instance_key, member)
    attrs.update(merge_op=merge, _kind="reduce_scatter")
    if rows is not None:
        if len(rows) != len(inputs):
            raise ValueError(f"reduce_scatter got {len(rows)} row counts for {len(inputs)} tensors")
        counts = [convert_to_tensor(r, dtype=dtypes.int32) for r in rows]
        attrs["num_rows"] = len(counts)
        inputs = inputs + counts
    return _outputs(make_op("CollectiveReduceScatter", inputs, attrs, name=name or "ReduceScatter"))


def reduce_scatter(t: Any, group_size: int | None = None, group_key: int = WORLD,
                   instance_key: int | None = None, merge_op: str = "Add", final_op: str = "Id",
                   member: int | None = None, name: str | None = None) -> Tensor:
    """This member's rows of the reduction of ``t`` over the group."""
    return grouped_reduce_scatter([t], group_size, group_key, instance_key, merge_op, final_op,
                                  member, name=name)[0]


def all_reduce_start(tensors: Sequence[Any], group_size: int | None = None, group_key: int = WORLD,
                     instance_key: int | None = None, merge_op: str = "Add", final_op: str = "Id",
                     member: int | None = None, name: str | None = None) -> Tensor:
    """Submits a grouped all-reduce and returns a handle (dtype ``variant``) at once.

    The op is scheduled as soon as its inputs exist, so the transfer overlaps whatever
    runs next; pass the handle to :func:`all_reduce_wait` for the results.
    """
    merge = merge_op_name(merge_op, final_op)
    inputs = _convert(tensors, "CollectiveAllReduceStart", REAL_NUMERIC)
    attrs = _attrs(group_size, group_key, instance_key, member)
    attrs.update(merge_op=merge, _schedule_early=True)
    return make_op("CollectiveAllReduceStart", inputs, attrs, name=name or "AllReduceStart").outputs[0]


def all_reduce_wait(handle: Tensor, name: str | None = None) -> list[Tensor]:
    """The results of the all-reduce started by ``handle``'s op, one per input."""
    start = handle.op
    if start.type != "CollectiveAllReduceStart":
        raise TypeError(f"all_reduce_wait needs the handle of all_reduce_start, got {handle.name} "
                        f"from a {start.type} op")
    attrs = {"T": [t.dtype for t in start.inputs], "shapes": [t.shape for t in start.inputs]}
    graph = get_default_graph()
    with graph.colocate_with(start):
        return _outputs(make_op("CollectiveWait", [handle], attrs, name=name or "AllReduceWait"))


def group_rank(group_key: int = WORLD, group_size: int = -1, member: int = -1,
               name: str | None = None) -> Tensor:
    """This member's rank in the group, as an int32 scalar computed at run time."""
    attrs = {"group_key": int(group_key), "group_size": int(group_size), "member": int(member)}
    return make_op("CollectiveGroupRank", [], attrs, name=name or "GroupRank").outputs[0]


def group_size(group_key: int = WORLD, group_size: int = -1, member: int = -1,
               name: str | None = None) -> Tensor:
    """The number of members of the group, as an int32 scalar computed at run time."""
    attrs = {"group_key": int(group_key), "group_size": int(group_size), "member": int(member)}
    return make_op("CollectiveGroupSize", [], attrs, name=name or "GroupSize").outputs[0]
