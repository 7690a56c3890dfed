"""Lowering and running the partitions of a step: one path for local and distributed steps.

:func:`lower_partition` turns a :class:`~flowmesh.runtime.partition.Partition` into an
:class:`~flowmesh.runtime.executor.Program` for its device; :class:`PartitionRunner` runs
the programs of one step signature. The local session (``runtime/plan.py``) and a
distributed worker (``distributed/graph_exec.py``) both use them; the only part a
caller plugs in is where a Send whose destination the step's rendezvous does not serve
delivers its value (:data:`RemoteSends`, another task's data plane).

Every Recv reads the step's rendezvous and moves the value to its partition's device
with :func:`~flowmesh.runtime.device.copy_to_device` (a device-to-host copy waits for its
data). Several partitions run concurrently, one pool thread each (torch kernels release
the GIL); partitions on host-backed devices split the caller's intra-op threads between
them, so two partitions on two cores do not oversubscribe them. The first failure, or an
interrupt of the caller, aborts the step's rendezvous so no partition waits on a Recv.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.errors import CancelledError
from flowmesh.kernels.contract.convert import to_torch
from flowmesh.kernels.contract.step import StepContext
from flowmesh.runtime.device import Device, copy_to_device, intra_op_shares, use_intra_op_threads
from flowmesh.runtime.executor import ExecNode, Program
from flowmesh.runtime.partition import EdgeKey, OpItem, Partition, RecvItem, SendItem

RemoteSends = Callable[[EdgeKey], "Callable[[int, Any], None] | None"]
"""``remote(key)``: for a Send the step's rendezvous does not serve, a function
``deliver(step_id, value)``; ``None`` for a Send to the local rendezvous."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def lower_partition(part: Partition, kernels: Any, remote: RemoteSends | None = None) -> Program:
    """Compiles a partition for its device.

    Args:
        part: the partition (op, Send and Recv items in execution order).
        kernels: the session's ``KernelCache`` (``get(op, device) -> (fn, needs_step)``).
        remote: where Sends that leave the step's rendezvous go (None: all are local).
    """
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
            deliver = remote(item.key) if remote is not None else None
            nodes.append(ExecNode(f"_send/{item.key}", "_Send", _send(item.key, bool(inputs), deliver),
                                  inputs, [], True))
        elif isinstance(item, RecvItem):
            nodes.append(ExecNode(f"_recv/{item.key}", "_Recv", _recv(item.key, device),
                                  [], [item.value], True))
        else:  # pragma: no cover - partition() only makes the three kinds above
            raise TypeError(f"unknown partition item {item!r}")
    return Program(nodes, part.feeds, part.fetches, name=device.name)


def _send(key: EdgeKey, has_value: bool,
          deliver: Callable[[int, Any], None] | None) -> Callable[..., None]:
    if deliver is None:
        if has_value:
            return lambda step, value: step.rendezvous.send(key, value)
        return lambda step: step.rendezvous.send(key, None)
    if has_value:
        return lambda step, value: deliver(step.step_id, value)
    return lambda step: deliver(step.step_id, None)


def _recv(key: EdgeKey, device: Device) -> Callable[..., Any]:
    target = device.torch_device

    def recv(step: StepContext) -> Any:
        return copy_to_device(step.rendezvous.recv(key, step.timeout), target)

    return recv


class PartitionRunner:
    """The lowered partitions of one step signature, run together.

    Args:
        parts: the partitions (at least one).
        kernels: the session's ``KernelCache``.
        feed_position: the index in the step's feed values of each partition feed.
        remote: see :func:`lower_partition`.
        pool: threads for the partitions after the first (default: one shared pool).
    """

    def __init__(self, parts: Sequence[Partition], kernels: Any,
                 feed_position: Mapping[Tensor, int], remote: RemoteSends | None = None,
                 pool: ThreadPoolExecutor | None = None):
        self.partitions = list(parts)
        self.programs = [lower_partition(p, kernels, remote) for p in self.partitions]
        self.devices = [p.device for p in self.partitions]
        self._program_feeds = [
            [(feed_position[t], t.dtype, p.device.torch_device) for t in p.feeds]
            for p in self.partitions
        ]
        self.produced: dict[Tensor, tuple[int, int]] = {}
        for pi, p in enumerate(self.partitions):
            for fi, t in enumerate(p.fetches):
                self.produced.setdefault(t, (pi, fi))
        self._pool = pool

    def run(self, feed_values: Sequence[Any], step: StepContext) -> list[list[Any]]:
        """Runs every partition; returns each partition's fetched values."""
        inputs = [[to_torch(feed_values[i], dtype, device) for i, dtype, device in feeds]
                  for feeds in self._program_feeds]
        if len(self.programs) == 1:
            return [self.programs[0](step, inputs[0])]
        return self._run_concurrently(inputs, step)

    def _run_concurrently(self, inputs: list[list[Any]], step: StepContext) -> list[list[Any]]:
        """Runs the partitions on pool threads (the first one in the calling thread when its
        share of intra-op threads is the caller's own); the first failure aborts the step's
        rendezvous so no partition is left waiting on a Recv."""
        pool = self._pool or _shared_pool()
        results: list[Any] = [None] * len(self.programs)
        errors: list[BaseException] = []
        threads, caller_threads = intra_op_shares(self.devices)
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


def _shared_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="flowmesh-partition")
        return _pool
