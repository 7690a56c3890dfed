"""All-reducing a list of gradients with tensor fusion and overlap.

Shared by ``hvd.DistributedOptimizer`` and the ``tf.distribute`` strategies. Dense
gradients are ordered as backprop produces them (the creation order of the ops computing
them: last layer first), compressed, grouped by dtype and packed into buckets of at most
``FLOWMESH_BUCKET_MB``. Each bucket is one ``CollectiveAllReduceStart`` (scheduled as soon
as its last gradient exists, so the transfer overlaps the rest of backprop) and one
``CollectiveWait`` (scheduled as late as possible); the engine still fuses buckets that
are ready together into transfers of up to ``FLOWMESH_FUSION_THRESHOLD_MB``.
IndexedSlices gradients are all-gathered (values and indices), unless ``sparse_as_dense``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flowmesh.collective.backends.base import ReduceOp
from flowmesh.collective.compression import Compression, Compressor
from flowmesh.collective.fusion import bucket_bytes, plan_buckets
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.ops import collective_ops


@dataclass(frozen=True)
class ReduceConfig:
    """How to reduce gradients.

    Attributes:
        op: ``ReduceOp.MEAN`` or ``ReduceOp.SUM``.
        group_size: members of the group (for the predivide factor).
        group_key, member: the collective group (0 = every process; or a local group and
            this replica's index in it).
        compression: a :class:`Compressor` class.
        threshold: bucket size in bytes (None: ``FLOWMESH_BUCKET_MB``).
        predivide: with MEAN, divide by this before the sum and by ``size/predivide`` after.
        sparse_as_dense: densify IndexedSlices instead of all-gathering them.
        device_dense, device_sparse: device scopes for the collective ops.
        instance_keys: returns a fresh instance key per collective (replicas built in one
            graph must agree on keys, since their op names differ); None: the op names.
    """

    op: ReduceOp = ReduceOp.MEAN
    group_size: int = 1
    group_key: int = 0
    member: int = -1
    compression: type[Compressor] = Compression.none
    threshold: int | None = None
    predivide: float = 1.0
    sparse_as_dense: bool = False
    device_dense: str = ""
    device_sparse: str = ""
    instance_keys: Callable[[], int] | None = None

    def key(self) -> int | None:
        return None if self.instance_keys is None else self.instance_keys()


def allreduce_gradients(gradients: Sequence[tuple[Any, Any]], config: ReduceConfig,
                        scale: float = 1.0, name: str = "Allreduce") -> list[tuple[Any, Any]]:
    """``(gradient, variable)`` pairs with every non-None gradient reduced over the group.

    Args:
        gradients: pairs as returned by ``Optimizer.compute_gradients``.
        config: the reduction.
        scale: multiply the gradients by this first (e.g. ``1/k`` after accumulation).
        name: name scope of the reduction ops.
    """
    gradients = list(gradients)
    reduced: dict[int, Any] = {}
    dense: list[tuple[int, Tensor]] = []
    with get_default_graph().name_scope(name):
        for i, (g, v) in enumerate(gradients):
            if g is None:
                continue
            if isinstance(g, IndexedSlices) and not config.sparse_as_dense:
                with _device(config.device_sparse):
                    reduced[i] = allreduce_sparse(_scaled(g, scale), config, f"sparse_{i}")
                continue
            g = _scaled(convert_to_tensor(g), scale)
            shape = getattr(v, "shape", None)
            if shape is not None and shape.is_fully_defined() and not g.shape.is_fully_defined():
                g.set_shape(shape)  # a dense gradient has its variable's shape (sizes buckets)
            dense.append((i, g))
        reduced.update(_dense(dense, config))
    return [(reduced.get(i, g), v) for i, (g, v) in enumerate(gradients)]


def _dense(dense: list[tuple[int, Tensor]], config: ReduceConfig) -> dict[int, Tensor]:
    from flowmesh.ops import cast_ops

    op, pre, post = config.op, 1.0, 1.0
    if config.op is ReduceOp.MEAN and config.predivide != 1.0:
        op, pre, post = ReduceOp.SUM, 1.0 / config.predivide, config.predivide / config.group_size
    dense = sorted(dense, key=lambda item: item[1].op._id)  # the order backprop computes them
    wire: dict[int, tuple[Tensor, Any]] = {}
    for i, g in dense:
        if pre != 1.0:
            g = g * cast_ops.cast(pre, g.dtype)
        wire[i] = config.compression.compress(g)
    out: dict[int, Tensor] = {}
    threshold = bucket_bytes() if config.threshold is None else config.threshold
    for k, bucket in enumerate(_buckets([(i, wire[i][0]) for i, _ in dense], threshold)):
        with _device(config.device_dense):
            handle = collective_ops.all_reduce_start(
                [wire[i][0] for i in bucket], merge_op=op.value, group_key=config.group_key,
                instance_key=config.key(), member=config.member, name=f"bucket_{k}")
            results = collective_ops.all_reduce_wait(handle, name=f"bucket_{k}_wait")
        for i, value in zip(bucket, results):
            value = config.compression.decompress(value, wire[i][1])
            out[i] = value * cast_ops.cast(post, value.dtype) if post != 1.0 else value
    return out


def allreduce_sparse(slices: IndexedSlices, config: ReduceConfig, name: str) -> IndexedSlices:
    """Horovod's sparse all-reduce: every member's values and indices, all-gathered (a
    mean divides the values by the group size).

    Raises:
        ValueError: a reduction other than SUM or MEAN.
    """
    from flowmesh.ops import cast_ops

    if config.op not in (ReduceOp.SUM, ReduceOp.MEAN):
        raise ValueError(f"Sparse (IndexedSlices) all-reduce supports Sum and Average, not "
                         f"{config.op.value}; densify the gradient first")

    values, indices = collective_ops.grouped_all_gather(
        [slices.values, slices.indices], group_key=config.group_key, member=config.member,
        instance_key=config.key(), name=name)
    if config.op is ReduceOp.MEAN:
        size = collective_ops.group_size(group_key=config.group_key, member=config.member)
        values = values / cast_ops.cast(size, values.dtype)
    return IndexedSlices(values, indices, slices.dense_shape)


def _buckets(items: list[tuple[int, Tensor]], threshold: int) -> list[list[int]]:
    by_dtype: dict[Any, list[tuple[int, Tensor]]] = {}
    for i, t in items:
        by_dtype.setdefault(t.dtype, []).append((i, t))
    buckets: list[list[int]] = []
    for group in by_dtype.values():
        sizes = [_nbytes(t, threshold) for _, t in group]
        buckets += [[group[j][0] for j in b] for b in plan_buckets(sizes, threshold)]
    position = {i: pos for pos, (i, _) in enumerate(items)}
    return sorted(buckets, key=lambda b: min(position[i] for i in b))


def _nbytes(t: Tensor, threshold: int) -> int:
    if t.shape.rank is None or not t.shape.is_fully_defined():
        return max(threshold, 1)
    return t.shape.num_elements() * t.dtype.size


def _scaled(g: Any, scale: float) -> Any:
    if scale == 1.0:
        return g
    from flowmesh.ops import cast_ops

    if isinstance(g, IndexedSlices):
        return IndexedSlices(g.values * cast_ops.cast(scale, g.values.dtype), g.indices, g.dense_shape)
    return g * cast_ops.cast(scale, g.dtype)


def _device(device: str) -> Any:
    return get_default_graph().device(device) if device else contextlib.nullcontext()
