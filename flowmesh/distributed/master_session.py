"""A client session on a master: its graph, and one distributed plan per step signature.

:class:`DistributedPlan` is the distributed counterpart of ``runtime/plan.StepPlan``:
prune the graph to the step, place the ops over the devices of every task the step
needs, cut per-device partitions with Send/Recv on every cut edge
(``runtime/partition.py``), order each partition so a failed step never half-updates
state (:mod:`flowmesh.distributed.ordering`), and register each task's partitions with
its worker. Running a step sends ``RunGraph`` to every remote task involved (with only
the feeds that task consumes), runs the master's own task in the calling thread, and
collects the fetches. When any part fails, every other part is aborted at once.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from flowmesh.core import serialize
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.graph import Graph, Operation, Tensor
from flowmesh.distributed import ordering
from flowmesh.distributed.cluster_view import ClusterView, LocalTask, RemoteTask
from flowmesh.distributed.data_plane import wait
from flowmesh.distributed.graph_exec import task_of
from flowmesh.errors import (
    AbortedError,
    CancelledError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    UnavailableError,
)
from flowmesh.runtime import placer
from flowmesh.runtime.device import Device, DeviceSet
from flowmesh.runtime.partition import Partition, SendItem
from flowmesh.runtime.plan import fetch_sources, gather_fetches, partition_placed, prune


@dataclass
class SessionOptions:
    """The parts of ``ConfigProto`` a master session uses."""

    allow_soft_placement: bool = False
    log_device_placement: bool = False
    device_filters: list[str] = field(default_factory=list)
    operation_timeout_in_ms: int = 0

    @classmethod
    def from_dict(cls, data: Any) -> SessionOptions:
        data = data if isinstance(data, dict) else {}
        filters = data.get("device_filters") or []
        if not isinstance(filters, list) or not all(isinstance(f, str) for f in filters):
            raise InvalidArgumentError(None, None, "device_filters must be a list of strings")
        return cls(bool(data.get("allow_soft_placement")), bool(data.get("log_device_placement")),
                   filters, int(data.get("operation_timeout_in_ms") or 0))


@dataclass
class _TaskPart:
    task: LocalTask | RemoteTask
    handle: str
    feed_index: list[int]
    fetches: list[Tensor]


class DistributedPlan:
    """A step signature placed over the cluster and registered with the workers."""

    def __init__(self, session: MasterSession, fetches: Sequence[Tensor], feeds: Sequence[Tensor],
                 targets: Sequence[Operation]):
        self.session = session
        self.fetches, self.feeds, self.targets = list(fetches), list(feeds), list(targets)
        view = session.view
        ops = prune(self.fetches, self.targets, self.feeds)
        devices = self._device_set(view, ops)
        placement = placer.place(
            ops, devices, default_job=view.local.worker.job, default_task=view.local.worker.task,
            allow_soft_placement=session.options.allow_soft_placement,
        )
        if session.options.log_device_placement:
            placer.log_placement(placement, session.logged)
        parts = {p.device: p for p in partition_placed(ops, placement, self.feeds, self.fetches, devices)}
        ordering.delay_mutations(parts)
        self.parts = self._register(view, parts)
        self.local = next((p for p in self.parts if p.task.is_local), None)
        self.remote = [p for p in self.parts if not p.task.is_local]
        produced = {t: (i, j) for i, p in enumerate(self.parts) for j, t in enumerate(p.fetches)}
        self._fetch_from = fetch_sources(self.fetches, {t: i for i, t in enumerate(self.feeds)}, produced)

    def _device_set(self, view: ClusterView, ops: list[Operation]) -> DeviceSet:
        needed = view.tasks_for_ops(ops)
        filters = [DeviceSpec.from_string(f) for f in self.session.options.device_filters]
        devices: list[Device] = list(view.local.devices())
        for name in sorted(needed - {view.local.name}):
            spec = DeviceSpec.from_string(name)
            if filters and not any(f.is_compatible_with(spec) for f in filters):
                continue
            devices.extend(view.get(name).devices())
        return DeviceSet(devices)

    def _register(self, view: ClusterView, parts: dict[Device, Partition]) -> list[_TaskPart]:
        by_task: dict[str, list[Partition]] = {}
        for device, part in parts.items():
            by_task.setdefault(task_of(device.name), []).append(part)
        feed_pos = {t: i for i, t in enumerate(self.feeds)}
        fetch_set = set(self.fetches)
        out = []
        for name, task_parts in by_task.items():
            task = view.get(name)
            feeds = sorted({t for p in task_parts for t in p.feeds}, key=lambda t: feed_pos[t])
            fetches = list(dict.fromkeys(t for p in task_parts for t in p.fetches if t in fetch_set))
            peers = {dst: view.get(dst).data_address() for dst in self._send_targets(task_parts, name)}
            handle = task.register(self.session.handle, self.session.graph, task_parts,
                                   [t.name for t in feeds], [t.name for t in fetches], peers)
            out.append(_TaskPart(task, handle, [feed_pos[t] for t in feeds], fetches))
        return out

    @staticmethod
    def _send_targets(parts: list[Partition], me: str) -> set[str]:
        return {task_of(i.key.dst_device) for p in parts for i in p.items
                if isinstance(i, SendItem)} - {me}

    # --- running -------------------------------------------------------------------------
    def run(self, feed_values: Sequence[Any], timeout: float | None, trace: list | None = None) -> list[Any]:
        """Runs one step over the cluster; returns the fetched runtime values. With a
        ``trace`` list, every task traces the step and its encoded op timings are appended."""
        step_id = secrets.randbits(63)
        aborted = threading.Event()
        futures: list[tuple[_TaskPart, Future]] = []
        for part in self.remote:
            feeds = [feed_values[i] for i in part.feed_index]
            try:
                future = part.task.run_async(part.handle, step_id, feeds, timeout, trace is not None)
            except OpError as exc:
                self._abort(step_id, exc, aborted)
                raise
            future.add_done_callback(lambda f, s=step_id: self._on_done(f, s, aborted))
            futures.append((part, future))
        results: dict[int, list[Any]] = {}
        errors: list[OpError] = []
        if self.local is not None:
            try:
                feeds = [feed_values[i] for i in self.local.feed_index]
                results[id(self.local)] = self.local.task.worker.run_graph(
                    self.local.handle, step_id, feeds, timeout, trace=trace)
            except OpError as exc:
                errors.append(exc)
                self._abort(step_id, exc, aborted)
        for part, future in futures:
            try:
                stats, results[id(part)] = wait(future, timeout and timeout + 5.0, f"RunGraph on {part.task.name}")
                if trace is not None and stats:
                    trace.extend(stats)
            except OpError as exc:
                errors.append(exc)
                self._abort(step_id, exc, aborted)
        if errors:
            raise _primary(errors)
        return gather_fetches(self._fetch_from, feed_values, [results[id(p)] for p in self.parts])

    def _on_done(self, future: Future, step_id: int, aborted: threading.Event) -> None:
        exc = future.exception()
        if exc is not None:
            self._abort(step_id, exc, aborted)

    def _abort(self, step_id: int, error: BaseException, aborted: threading.Event) -> None:
        if aborted.is_set():
            return
        aborted.set()
        message = f"Step aborted because another part of it failed: {error}"
        for part in self.parts:
            part.task.abort(step_id, message)


def _primary(errors: list[OpError]) -> OpError:
    """The root cause among a step's errors (not the aborts it triggered)."""
    for exc in errors:
        if not isinstance(exc, (CancelledError, AbortedError)) and "Step aborted because" not in exc.message:
            return exc
    return errors[0]


class MasterSession:
    """One client session: the client's graph (as shipped, or the client's own Graph
    when the client lives in this process) and its plans."""

    def __init__(self, view: ClusterView, options: SessionOptions, graph: Graph | None = None):
        self.handle = secrets.token_hex(8)
        self.view = view
        self.options = options
        self.graph = graph if graph is not None else Graph()
        self.logged: set[Operation] = set()
        self._plans: dict[int, DistributedPlan] = {}
        self._signatures: dict[tuple, int] = {}
        self._lock = threading.Lock()

    def extend(self, graph_bytes: bytes) -> int:
        """Adds the ops in ``graph_bytes`` to the session's graph; returns how many."""
        with self._lock:
            return len(serialize.graph_from_bytes(graph_bytes, self.graph)[1])

    def make_callable(self, fetches: list[str], feeds: list[str], targets: list[str]) -> int:
        """Registers a step signature (by names); returns its id. Planning is lazy."""
        signature = (tuple(fetches), tuple(feeds), tuple(targets))
        with self._lock:
            found = self._signatures.get(signature)
            if found is None:
                found = self._signatures[signature] = len(self._signatures) + 1
            return found

    def run_callable(self, callable_id: int, feed_values: Sequence[Any], timeout: float | None,
                     trace: list | None = None) -> list[Any]:
        """Runs a registered step; ``trace`` collects every task's encoded op timings."""
        plan = self._plans.get(callable_id)
        if plan is None:
            plan = self._plan(callable_id)
        if timeout is None and self.options.operation_timeout_in_ms > 0:
            timeout = self.options.operation_timeout_in_ms / 1000.0
        try:
            return plan.run(feed_values, timeout, trace)
        except NotFoundError as exc:
            if "is not registered on" not in exc.message:
                raise
            self._forget_plans(plan)  # a task restarted: register again and retry once
            if trace is not None:
                trace.clear()
            return self._plan(callable_id).run(feed_values, timeout, trace)
        except UnavailableError:
            self._forget_plans(plan)  # a task died: rediscover and re-register next time
            raise

    def _plan(self, callable_id: int) -> DistributedPlan:
        with self._lock:
            plan = self._plans.get(callable_id)
            if plan is not None:
                return plan
            names = next((s for s, i in self._signatures.items() if i == callable_id), None)
            if names is None:
                raise InvalidArgumentError(None, None, f"Unknown callable {callable_id} in session {self.handle}")
            fetches = [self._element(n, tensor=True) for n in names[0]]
            feeds = [self._element(n, tensor=True) for n in names[1]]
            targets = [self._element(n, tensor=False) for n in names[2]]
            plan = self._plans[callable_id] = DistributedPlan(self, fetches, feeds, targets)
            return plan

    def _element(self, name: str, tensor: bool) -> Any:
        try:
            if tensor:
                return self.graph.get_tensor_by_name(name)
            return self.graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            raise InvalidArgumentError(
                None, None, f"{'Tensor' if tensor else 'Operation'} {name!r} is not in the session's graph"
            ) from None

    def _forget_plans(self, failed: DistributedPlan) -> None:
        """Drops every plan and the cached state of the remote tasks ``failed`` used."""
        with self._lock:
            self._plans.clear()
        for part in failed.remote:
            if isinstance(part.task, RemoteTask):
                part.task.forget()

    def close(self) -> None:
        for task in self.view.tasks.values():
            task.close_session(self.handle)
        self._plans.clear()
