"""A master's view of the cluster: one client per task, connected lazily.

The master contacts a task only when a step needs it (an op requests one of its
devices), so a session never waits on a dead task it does not use. Contacting a task
retries for at most ``FLOWMESH_CONNECT_TIMEOUT_S`` seconds and then raises an
``UnavailableError`` naming the task.

:class:`LocalTask` calls the worker service of the master's own server directly;
:class:`RemoteTask` uses gRPC for control calls and the data plane for ``RunGraph``.
"""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import Future
from typing import Any

import torch

from flowmesh import config as _config
from flowmesh.core import serialize
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.graph import Graph, Operation
from flowmesh.distributed import graph_exec
from flowmesh.distributed.cluster_spec import ClusterSpec
from flowmesh.distributed.data_plane import DataPlane
from flowmesh.distributed.worker import WorkerService
from flowmesh.errors import DeadlineExceededError, UnavailableError
from flowmesh.runtime.device import Device
from flowmesh.runtime.partition import OpItem, Partition


def task_name(job: str, index: int) -> str:
    return f"/job:{job}/replica:0/task:{index}"


class LocalTask:
    """The master's own task: calls its worker service in-process."""

    is_local = True

    def __init__(self, worker: WorkerService):
        self.worker = worker
        self.name = worker.task_name

    def devices(self) -> list[Device]:
        return list(self.worker.devices)

    def data_address(self) -> str:
        """This task's listed address, which peers dial for its data plane."""
        return self.worker.plane.address if self.worker.plane else ""

    def register(self, session: str, graph: Graph, parts: list[Partition], feeds: list[str],
                 fetches: list[str], peers: dict[str, str]) -> str:
        return self.worker.register_graph(session, parts, feeds, fetches, peers, graph=graph)

    def close_session(self, session: str) -> None:
        self.worker.close_session(session)

    def abort(self, step_id: int, message: str) -> None:
        self.worker.abort_step(step_id, message)

    def reset(self, containers: list[str]) -> None:
        self.worker.reset(containers)

    def status(self) -> dict[str, Any]:
        return self.worker.status()


class RemoteTask:
    """Another task of the cluster, reached over gRPC (control) and the data plane (steps)."""

    is_local = False

    def __init__(self, job: str, index: int, address: str, plane: DataPlane):
        self.name = task_name(job, index)
        self.address = address
        self.plane = plane
        self._rpc: Any = None
        self._status: dict[str, Any] | None = None
        self._devices: list[Device] | None = None
        self._lock = threading.Lock()
        # master session -> (its session key on the worker, ops sent, stubs sent)
        self._sent: dict[str, tuple[str, set[str], set[str]]] = {}
        # worker-side keys dropped by forget(): the task may still hold them (it was only
        # paused), so the next registration uses a fresh key and closes the stale one
        self._stale: dict[str, list[str]] = {}
        self._copies = itertools.count(1)  # unique names for fresh worker-side graph copies

    @property
    def rpc(self) -> Any:
        """The gRPC client of this task (created on first use; imports grpc lazily)."""
        if self._rpc is None:
            from flowmesh.distributed.rpc import RpcClient

            self._rpc = RpcClient(self.address, self.name)
        return self._rpc

    def status(self, refresh: bool = False, timeout: float | None = None) -> dict[str, Any]:
        """The task's status (devices, data port, incarnation); cached after first contact.

        Args:
            refresh: ask again even when cached.
            timeout: seconds to wait at most (default ``FLOWMESH_CONNECT_TIMEOUT_S``),
                including the wait for another thread already asking.

        Raises:
            UnavailableError: the task did not answer within the timeout.
        """
        timeout = _config.CONNECT_TIMEOUT_S.get() if timeout is None else timeout
        if not self._lock.acquire(timeout=timeout):
            raise UnavailableError(None, None, f"Task {self.name} at {self.address} did not answer "
                                   f"within {timeout:g} s (another call is still waiting for it)")
        try:
            if self._status is None or refresh:
                try:
                    self._status = self.rpc.call("GetStatus", None, timeout=timeout)
                except DeadlineExceededError as exc:  # connected, but the task does not answer
                    raise UnavailableError(
                        None, None, f"Task {self.name} at {self.address} did not answer within "
                        f"{timeout:g} s (FLOWMESH_CONNECT_TIMEOUT_S) on a connection that was open: "
                        f"it is hung or overloaded, or its host is cut off. {exc.message}") from None
                self._devices = None
            return self._status
        finally:
            self._lock.release()

    def devices(self, timeout: float | None = None) -> list[Device]:
        status = self.status(timeout=timeout)
        with self._lock:
            if self._devices is None:
                self._devices = [Device(DeviceSpec.from_string(name), torch.device("cpu"))
                                 for name, _ in status["devices"]]
            return self._devices

    def data_address(self) -> str:
        """Where the task's data plane is: its listed address (one port for both planes)."""
        return self.address

    def register(self, session: str, graph: Graph, parts: list[Partition], feeds: list[str],
                 fetches: list[str], peers: dict[str, str]) -> str:
        ops = [item.op for p in parts for item in p.items if isinstance(item, OpItem)]
        sent = self._sent.get(session)
        if sent is None:
            self._close_stale(session)
            sent = (session if session not in self._stale else self._new_copy(session), set(), set())
        worker_session, real, stubs = sent
        if any(op.name in stubs for op in ops):  # a stub became real: start a fresh copy
            worker_session, real, stubs = self._new_copy(session), set(), set()
        new_ops = [op for op in ops if op.name not in real]
        data = serialize.graph_to_dict(graph, new_ops, external="stub")
        handle = self.rpc.call("RegisterGraph", {
            "session": worker_session, "graph": serialize.encode_value(data),
            "partitions": [graph_exec.describe_partition(p) for p in parts],
            "feeds": feeds, "fetches": fetches, "peers": peers,
        })
        real.update(op.name for op in new_ops)
        stubs.update(n["name"] for n in data["nodes"] if n["op"] == serialize.STUB_OP)
        self._sent[session] = (worker_session, real, stubs)
        return handle

    def _new_copy(self, session: str) -> str:
        """A new key for the worker's copy of a session's graph."""
        return f"{session}.{next(self._copies)}"

    def _close_stale(self, session: str) -> None:
        """Closes (best effort) the worker-side copies :meth:`forget` dropped: a task that
        was only paused still holds them; a restarted one never heard of them."""
        for key in self._stale.get(session, ()):
            try:
                self.rpc.call("CloseSession", {"session": key}, timeout=2.0)
            except Exception:  # noqa: BLE001 - the session expires on the task anyway
                pass
        if session in self._stale:
            self._stale[session] = []

    def run_async(self, handle: str, step_id: int, feeds: list[Any], timeout: float | None,
                  trace: bool = False) -> Future:
        """Sends ``RunGraph``; the future's result is ``(encoded step stats or None, fetches)``."""
        args = [handle, step_id, timeout] + ([True] if trace else [])
        try:
            return self.plane.call_async(self.data_address(), "RunGraph", args, feeds,
                                         _config.CONNECT_TIMEOUT_S.get())
        except UnavailableError as exc:
            raise UnavailableError(None, None, f"Task {self.name} at {self.address}: {exc.message}") from None

    def abort(self, step_id: int, message: str) -> None:
        """Best effort, without waiting for the answer or connecting: a task that ran the
        step has a connection; without one it runs nothing of the step (and a hung task
        would have blocked the caller, maybe the heartbeat thread, for the connect timeout)."""
        try:
            if self._status is None:  # never contacted (or forgotten): nothing to abort there
                return
            conn = self.plane.open_connection(self.data_address())
            if conn is not None:
                conn.call("AbortStep", [step_id, message])
        except Exception:  # noqa: BLE001 - the task may be the one that died
            pass

    def close_session(self, session: str) -> None:
        self._close_stale(session)
        self._stale.pop(session, None)
        sent = self._sent.pop(session, None)
        if sent is None:
            return
        try:
            self.rpc.call("CloseSession", {"session": sent[0]}, timeout=5.0)
        except Exception:  # noqa: BLE001 - closing is best effort
            pass

    def reset(self, containers: list[str]) -> None:
        self.rpc.call("Reset", {"containers": containers})

    def forget(self) -> None:
        """Drops cached state (the task failed or restarted): rediscover and register
        afresh, under new worker-side session keys, on next use."""
        with self._lock:
            self._status = None
            self._devices = None
            for session, (key, _, _) in self._sent.items():
                self._stale.setdefault(session, []).append(key)
            self._sent.clear()


class ClusterView:
    """Every task of a cluster, as seen from the master of ``job``/``index``."""

    def __init__(self, cluster: ClusterSpec, job: str, index: int, worker: WorkerService, plane: DataPlane):
        self.cluster = cluster
        self.local = LocalTask(worker)
        self.tasks: dict[str, LocalTask | RemoteTask] = {}
        for j, i, address in cluster.tasks():
            name = task_name(j, i)
            self.tasks[name] = self.local if (j, i) == (job, index) else RemoteTask(j, i, address, plane)

    def tasks_matching(self, spec: DeviceSpec) -> list[str]:
        """Names of the tasks a (partial) device spec may refer to."""
        return [name for name in self.tasks
                if spec.is_compatible_with(DeviceSpec.from_string(name).replace(replica=None))]

    def get(self, name: str) -> LocalTask | RemoteTask:
        try:
            return self.tasks[name]
        except KeyError:
            raise UnavailableError(None, None, f"Task {name} is not part of the cluster {self.cluster}") from None

    def tasks_for_ops(self, ops: list[Operation]) -> set[str]:
        """The tasks whose devices the ops request (plus the master's own task)."""
        needed = {self.local.name}
        seen: set[str] = set()
        for op in ops:
            if not op.device or op.device in seen:
                continue
            seen.add(op.device)
            spec = DeviceSpec.from_string(op.device)
            if spec.job is not None:
                needed.update(self.tasks_matching(DeviceSpec(job=spec.job, task=spec.task)))
        return needed
