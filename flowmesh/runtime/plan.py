"""Step plans: what one ``Session.run`` signature executes, built once and cached.

:class:`StepPlan` prunes the graph to what the fetches and targets need (stopping at fed
tensors), places the ops, splits them into per-device partitions and hands them to a
:class:`~flowmesh.runtime.partition_runner.PartitionRunner`, which lowers each into an
executor program and runs them together (the same runner serves a distributed worker's
share of a step). ``prune``, ``partition_placed`` and the fetch helpers are shared with
the distributed master's plans (``distributed/master_session.py``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core.graph import Operation, Tensor
from flowmesh.errors import OpError
from flowmesh.kernels.contract.kernel_cache import KernelCache, register_function_compiler
from flowmesh.kernels.contract.step import StepContext
from flowmesh.runtime import placer
from flowmesh.runtime.device import Device, DeviceSet
from flowmesh.runtime.executor import Program
from flowmesh.runtime.partition import OpItem, Partition, partition
from flowmesh.runtime.partition_runner import PartitionRunner, lower_partition


def prune(fetches: Sequence[Tensor], targets: Sequence[Operation], feeds: Sequence[Tensor]) -> list[Operation]:
    """The ops needed for ``fetches`` and ``targets``, in topological (creation) order."""
    fed = set(feeds)
    needed: set[Operation] = set()
    stack = [t.op for t in fetches if t not in fed] + list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in op.inputs:
            if t not in fed and t.op not in needed:
                stack.append(t.op)
        for c in op.control_inputs:
            if c not in needed and not _fully_fed(c, fed):
                stack.append(c)
    return _topological_order(needed, fed)


def _fully_fed(op: Operation, fed: set[Tensor]) -> bool:
    """True when every output of ``op`` is fed: as in TensorFlow, a control dependency on
    such an op (``control_dependencies([placeholder])``) is satisfied by the feed."""
    return bool(op.outputs) and all(t in fed for t in op.outputs)


def _topological_order(ops: set[Operation], fed: set[Tensor]) -> list[Operation]:
    """Kahn's algorithm, always taking the oldest ready op (creation order when possible).

    Ops with the attr ``_schedule_early`` (e.g. the start of an asynchronous all-reduce)
    run as soon as their inputs exist, so their work overlaps the ops that follow.
    """
    pending: dict[Operation, int] = {}
    consumers: dict[Operation, list[Operation]] = {}
    for op in ops:
        deps = {t.op for t in op.inputs if t not in fed and t.op in ops}
        deps.update(c for c in op.control_inputs if c in ops)
        pending[op] = len(deps)
        for dep in deps:
            consumers.setdefault(dep, []).append(op)
    ready = [(_priority(op), op._id, op) for op, n in pending.items() if n == 0]
    heapq.heapify(ready)
    order: list[Operation] = []
    while ready:
        _, _, op = heapq.heappop(ready)
        order.append(op)
        for consumer in consumers.get(op, ()):
            pending[consumer] -= 1
            if pending[consumer] == 0:
                heapq.heappush(ready, (_priority(consumer), consumer._id, consumer))
    if len(order) != len(ops):
        cycle = sorted((op for op, n in pending.items() if n > 0), key=lambda o: o._id)
        raise OpError(None, None, f"Graph has a cycle through {[op.name for op in cycle[:5]]}")
    return order


def _priority(op: Operation) -> int:
    return 0 if op.attrs.get("_schedule_early") else 1


class StepPlan:
    """A compiled step for one (fetches, feeds, targets) signature."""

    def __init__(
        self,
        fetches: Sequence[Tensor],
        feeds: Sequence[Tensor],
        targets: Sequence[Operation],
        devices: DeviceSet,
        kernels: KernelCache,
        *,
        default_job: str = "localhost",
        default_task: int = 0,
        allow_soft_placement: bool = False,
        log_device_placement: Callable[[dict[Operation, Device]], None] | None = None,
        pinned: dict[Operation, Device] | None = None,
    ):
        self.fetches = list(fetches)
        self.feeds = list(feeds)
        self.targets = list(targets)
        ops = prune(self.fetches, self.targets, self.feeds)
        self.placement = placer.place(
            ops, devices, default_job=default_job, default_task=default_task,
            allow_soft_placement=allow_soft_placement, pinned=pinned,
        )
        if log_device_placement is not None:
            log_device_placement(self.placement)
        self.partitions = partition_placed(ops, self.placement, self.feeds, self.fetches, devices)
        feed_position = {t: i for i, t in enumerate(self.feeds)}
        self.runner = PartitionRunner(self.partitions, kernels, feed_position)
        self.programs = self.runner.programs
        self._fetch_sources = fetch_sources(self.fetches, feed_position, self.runner.produced)

    @property
    def num_ops(self) -> int:
        return len(self.placement)

    def run(self, feed_values: Sequence[Any], step: StepContext) -> list[Any]:
        """Runs every partition; returns fetched runtime values in fetch order."""
        return gather_fetches(self._fetch_sources, feed_values, self.runner.run(feed_values, step))


def partition_placed(ops: Sequence[Operation], placement: dict[Operation, Device],
                     feeds: Sequence[Tensor], fetches: Sequence[Tensor],
                     devices: DeviceSet) -> list[Partition]:
    """The per-device partitions of placed ops (one empty partition on the first device
    when only fed tensors are fetched)."""
    parts = partition(list(ops), placement, list(feeds), list(fetches))
    if not parts:
        first = devices.devices[0]
        parts = {first: Partition(first)}
    return list(parts.values())


FetchSource = tuple[str, Any]


def fetch_sources(fetches: Sequence[Tensor], feed_position: dict[Tensor, int],
                  produced: dict[Tensor, Any]) -> list[FetchSource]:
    """Where each fetch comes from: ``("feed", index)`` or ``("part", where)``."""
    return [("feed", feed_position[t]) if t in feed_position else ("part", produced[t])
            for t in fetches]


def gather_fetches(sources: Sequence[FetchSource], feed_values: Sequence[Any],
                   results: Sequence[Sequence[Any]]) -> list[Any]:
    """The fetched values in fetch order; ``where`` of a part source is (part, index)."""
    out = []
    for kind, where in sources:
        if kind == "feed":
            out.append(feed_values[where])
        else:
            out.append(results[where[0]][where[1]])
    return out


def compile_function(kernels: KernelCache, device: Device, fetches: Sequence[Tensor],
                     feeds: Sequence[Tensor]) -> Program:
    """A function graph (``If`` branch, ``While`` body) as one program on ``device``."""
    ops = prune(fetches, [], feeds)
    return lower_partition(Partition(device, [OpItem(op) for op in ops], list(feeds), list(fetches)),
                           kernels)


register_function_compiler(compile_function)
