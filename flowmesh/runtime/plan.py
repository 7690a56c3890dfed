"""Step plans: what one ``Session.run`` signature executes, built once and cached.

``build_plan`` prunes the graph to what the fetches and targets need (stopping at fed
tensors), places the ops, splits them into per-device partitions, and compiles each
partition into a :class:`~flowmesh.runtime.executor.Program`. ``StepPlan.run`` executes
a single partition in the calling thread; several run concurrently, one pool thread each
(torch kernels release the GIL), joined by a per-step rendezvous. Partitions on
host-backed devices (CPUs, simulated GPUs) split the process's intra-op threads between
them, so two partitions on two cores do not oversubscribe them.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from flowmesh.core.graph import Operation, Tensor
from flowmesh.errors import CancelledError, OpError
from flowmesh.kernels.convert import to_torch
from flowmesh.kernels.registry import KernelContext, get_kernel
from flowmesh.runtime import placer
from flowmesh.runtime.device import (
    Device,
    DeviceSet,
    copy_to_device,
    intra_op_shares,
    use_intra_op_threads,
)
from flowmesh.runtime.executor import ExecNode, Program
from flowmesh.runtime.partition import (
    OpItem,
    Partition,
    RecvItem,
    SendItem,
    partition,
)
from flowmesh.runtime.step import StepContext


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


class KernelCache:
    """Kernel instances of a session, one per (op, device): stateful kernels (random
    generators, variable handles) keep their state across plans and steps."""

    def __init__(self, session_state: Any = None):
        # Keyed by output count too: If/While ops gain outputs when their gradient is built,
        # and plans compiled earlier keep the kernel instance of the old arity.
        self._kernels: dict[tuple[Operation, str, int], tuple[Callable[..., Any], bool]] = {}
        self._lock = threading.Lock()
        self.session_state = session_state

    def get(self, op: Operation, device: Device) -> tuple[Callable[..., Any], bool]:
        key = (op, device.name, len(op.outputs))
        found = self._kernels.get(key)
        if found is None:
            kernel_def = get_kernel(op.type)
            fn = kernel_def.factory(KernelContext(op, device, self.session_state))
            found = (fn, kernel_def.needs_step)
            with self._lock:
                found = self._kernels.setdefault(key, found)
        return found


def lower_partition(part: Partition, kernels: KernelCache) -> Program:
    """Turns a partition description into a compiled program for its local device."""
    nodes: list[ExecNode] = []
    device = part.device
    for item in part.items:
        if isinstance(item, OpItem):
            op = item.op
            fn, needs_step = kernels.get(op, device)
            nodes.append(ExecNode(op.name, op.type, fn, list(op.inputs), list(op.outputs),
                                  needs_step, op))
        elif isinstance(item, SendItem):
            inputs = [item.value] if isinstance(item.value, Tensor) else []
            nodes.append(ExecNode(f"_send/{item.key}", "_Send", _local_send(item.key, bool(inputs)),
                                  inputs, [], True))
        elif isinstance(item, RecvItem):
            out = item.value
            nodes.append(ExecNode(f"_recv/{item.key}", "_Recv", _local_recv(item.key, device),
                                  [], [out], True))
        else:  # pragma: no cover - partition() only makes the three kinds above
            raise TypeError(f"unknown partition item {item!r}")
    return Program(nodes, part.feeds, part.fetches, name=device.name)


def _local_send(key: Any, has_value: bool) -> Callable[..., None]:
    if has_value:
        def send(step: StepContext, value: Any) -> None:
            step.rendezvous.send(key, value)
    else:
        def send(step: StepContext) -> None:  # type: ignore[misc]
            step.rendezvous.send(key, None)
    return send


def _local_recv(key: Any, device: Device) -> Callable[..., Any]:
    target = device.torch_device

    def recv(step: StepContext) -> Any:
        return copy_to_device(step.rendezvous.recv(key, step.timeout), target)

    return recv


class StepPlan:
    """A compiled step for one (fetches, feeds, targets) signature."""

    _pool: ThreadPoolExecutor | None = None
    _pool_lock = threading.Lock()

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
        parts = partition(ops, self.placement, self.feeds, self.fetches)
        if not parts:  # nothing to run: only fed tensors are fetched
            parts = {devices.devices[0]: Partition(devices.devices[0])}
        self.partitions = list(parts.values())
        self.programs = [lower_partition(p, kernels) for p in self.partitions]
        self._feed_index = {t: i for i, t in enumerate(self.feeds)}
        self._program_feeds = [
            [(self._feed_index[t], t.dtype, p.device.torch_device) for t in p.feeds]
            for p in self.partitions
        ]
        fetch_from: dict[Tensor, tuple[int, int]] = {}
        for pi, p in enumerate(self.partitions):
            for fi, t in enumerate(p.fetches):
                fetch_from[t] = (pi, fi)
        self._fetch_sources = [
            ("feed", self._feed_index[t]) if t in self._feed_index else ("part", fetch_from[t])
            for t in self.fetches
        ]

    @property
    def num_ops(self) -> int:
        return len(self.placement)

    def run(self, feed_values: Sequence[Any], step: StepContext) -> list[Any]:
        """Runs every partition; returns fetched runtime values in fetch order."""
        inputs = [
            [to_torch(feed_values[i], dtype, device) for i, dtype, device in feeds]
            for feeds in self._program_feeds
        ]
        if len(self.programs) == 1:
            results = [self.programs[0](step, inputs[0])]
        else:
            results = self._run_concurrently(inputs, step)
        out = []
        for kind, where in self._fetch_sources:
            if kind == "feed":
                out.append(feed_values[where])
            else:
                pi, fi = where
                out.append(results[pi][fi])
        return out

    def _run_concurrently(self, inputs: list[list[Any]], step: StepContext) -> list[list[Any]]:
        """Runs the partitions on pool threads (the first one in the calling thread when its
        share of intra-op threads is the caller's own); the first failure aborts the step's
        rendezvous so no partition is left waiting on a Recv."""
        pool = self._thread_pool()
        results: list[Any] = [None] * len(self.programs)
        errors: list[BaseException] = []
        threads, caller_threads = intra_op_shares([p.device for p in self.partitions])
        first = 1 if threads[0] == caller_threads else 0

        def run_partition(index: int) -> None:
            try:
                results[index] = self.programs[index](step, inputs[index])
            except BaseException as exc:  # noqa: BLE001 - first error is re-raised below
                errors.append(exc)
                step.rendezvous.abort(exc)

        def run_one(index: int) -> None:
            use_intra_op_threads(threads[index])
            run_partition(index)

        futures = [pool.submit(run_one, i) for i in range(first, len(self.programs))]
        try:
            if first:
                run_partition(0)
            for f in futures:
                f.result()
        except BaseException as exc:  # e.g. KeyboardInterrupt: wake every waiting Recv
            step.rendezvous.abort(CancelledError(None, None, f"Step interrupted: {exc!r}"))
            raise
        if errors:
            primary = [e for e in errors if not isinstance(e, CancelledError)]
            raise (primary or errors)[0]
        return results

    @classmethod
    def _thread_pool(cls) -> ThreadPoolExecutor:
        with cls._pool_lock:
            if cls._pool is None:
                cls._pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="flowmesh-partition")
            return cls._pool
