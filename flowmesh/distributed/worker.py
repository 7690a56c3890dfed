"""The worker service of a server: the task's devices, variables and registered graphs.

A worker owns its task's devices (``runtime/device.py``) and their resource stores, so
variables live as long as the server and are shared by every session of every client
(between-graph replication). Masters register graph partitions with it (once per step
signature) and then run them per step id; tensors other tasks push for a step wait in
that step's rendezvous (:mod:`flowmesh.distributed.steps`).

Control calls (status, register/deregister, reset) arrive over gRPC or directly from the
master in the same server; ``RunGraph`` and ``AbortStep`` arrive on the data plane.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from flowmesh.core import serialize
from flowmesh.core.graph import Graph
from flowmesh.distributed import graph_exec, step_stats
from flowmesh.distributed.data_plane import Connection, DataPlane
from flowmesh.errors import (
    AbortedError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    UnavailableError,
)
from flowmesh.kernels.contract.kernel_cache import KernelCache
from flowmesh.kernels.contract.step import StepContext
from flowmesh.runtime import host_memory
from flowmesh.runtime.cpu_policy import CpuPolicy
from flowmesh.runtime.device import DeviceSet, local_devices
from flowmesh.runtime.partition import Partition

log = logging.getLogger("flowmesh.distributed")


class SessionState:
    """What a worker keeps per master session: its copy of the graph and kernel instances.

    It is the ``session_state`` kernels see (``KernelContext.session_state``), like the
    local session backend: ``graph``, ``devices``, ``kernels``.
    """

    def __init__(self, devices: DeviceSet, graph: Graph | None = None):
        self.graph = graph if graph is not None else Graph()
        self.devices = devices
        self.kernels = KernelCache(session_state=self)
        self.handles: set[str] = set()
        self.lock = threading.Lock()
        host_memory.keep_freed_memory()


class WorkerService:
    """The worker half of a server (one per task).

    Args:
        job / task: this task's name in the cluster.
        device_count: ``ConfigProto.device_count`` for the local devices.
        intra_op_threads: the server's ``ConfigProto.intra_op_parallelism_threads`` (0: the
            thread tuner chooses per registered graph, as a local session's steps do).
    """

    def __init__(self, job: str, task: int, device_count: dict[str, int] | None = None,
                 intra_op_threads: int = 0):
        from flowmesh.distributed.steps import StepTable

        self.job = job
        self.task = task
        self.task_name = f"/job:{job}/replica:0/task:{task}"
        self.devices = DeviceSet(local_devices(job, task, device_count=device_count))
        self.incarnation = secrets.randbits(62)
        self.cpu = CpuPolicy(intra_op_threads)
        self.steps = StepTable()
        self.plane: DataPlane | None = None
        self._sessions: dict[str, SessionState] = {}
        self._graphs: dict[str, graph_exec.TaskGraph] = {}
        self._peers: dict[str, str] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix=f"flowmesh-{job}{task}")
        self._part_pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix=f"flowmesh-{job}{task}-part")

    # --- control ---------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Devices, data-plane port, incarnation and traffic counters of this task."""
        port = int(self.plane.address.rpartition(":")[2]) if self.plane and self.plane.address else 0
        return {
            "task": self.task_name,
            "devices": [[d.name, d.device_type] for d in self.devices],
            "data_port": port,
            "incarnation": self.incarnation,
            "stats": self.plane.stats.snapshot() if self.plane else {},
            "active_steps": self.steps.active_steps(),
        }

    def register_graph(self, session: str, partitions: list[Any], feeds: list[str],
                       fetches: list[str], peers: dict[str, str], graph_bytes: bytes | None = None,
                       graph: Graph | None = None) -> str:
        """Registers this task's partitions of one step signature; returns a handle.

        ``partitions`` are :class:`Partition` objects over ``graph`` (same process) or
        wire descriptions over ops in ``graph_bytes`` (merged into the session's graph).

        Raises:
            InvalidArgumentError / NotFoundError / DataLossError: a bad registration.
        """
        state = self._session(session, graph)
        with state.lock:
            if graph_bytes is not None:
                serialize.graph_from_bytes(graph_bytes, state.graph)
            parts = [p if isinstance(p, Partition)
                     else graph_exec.rebuild_partition(p, state.graph, self.devices)
                     for p in partitions]
        task_graph = graph_exec.TaskGraph(parts, state.kernels, self.task_name, self._send_remote,
                                          list(feeds), list(fetches), self._part_pool)
        handle = f"{session}/{secrets.token_hex(6)}"
        with self._lock:
            self._peers.update(peers)
            self._graphs[handle] = task_graph
            state.handles.add(handle)
        return handle

    def _session(self, session: str, graph: Graph | None) -> SessionState:
        with self._lock:
            state = self._sessions.get(session)
            if state is None:
                state = self._sessions[session] = SessionState(self.devices, graph)
            return state

    def deregister_graph(self, handle: str) -> None:
        with self._lock:
            self._graphs.pop(handle, None)
        self.cpu.forget(handle)

    def close_session(self, session: str) -> None:
        """Drops a master session's graphs (its variables stay in the resource stores)."""
        with self._lock:
            state = self._sessions.pop(session, None)
            for handle in state.handles if state else ():
                self._graphs.pop(handle, None)
                self.cpu.forget(handle)

    def reset(self, containers: list[str] | None) -> None:
        """Clears resource containers (all of them when ``containers`` is empty)."""
        for device in self.devices:
            if not containers:
                device.resources.clear()
            else:
                for container in containers:
                    device.resources.clear(container)

    # --- steps -------------------------------------------------------------------------------
    def run_graph(self, handle: str, step_id: int, feeds: list[Any], timeout: float | None,
                  requester: str = "", requested_at: float | None = None,
                  trace: list | None = None) -> list[Any]:
        """Runs a registered graph for one step; returns its fetches. With a ``trace`` list,
        the step is traced and its per-device op timings are appended to it (encoded as in
        :mod:`flowmesh.distributed.step_stats`).

        Raises:
            NotFoundError: unknown handle (e.g. this task restarted since registration).
            OpError: a kernel failed, or the step was aborted.
        """
        task_graph = self._graphs.get(handle)
        if task_graph is None:
            raise NotFoundError(
                None, None,
                f"Graph handle {handle!r} is not registered on {self.task_name} (incarnation "
                f"{self.incarnation}); the task may have restarted.",
            )
        if len(feeds) != len(task_graph.feed_names):
            raise InvalidArgumentError(
                None, None, f"RunGraph expects {len(task_graph.feed_names)} feeds, got {len(feeds)}"
            )
        peers = set(task_graph.peers)
        if requester:
            peers.add(requester)
        rendezvous = self.steps.begin(step_id, peers, requested_at)
        step = StepContext(step_id=step_id, rendezvous=rendezvous, timeout=timeout,
                           trace=[] if trace is not None else None)
        try:
            results = self.cpu.run(handle, lambda: task_graph.run(step, feeds))
        finally:
            self.steps.end(step_id)
        if trace is not None:
            trace.extend(step_stats.encode_trace(step.trace))
        return results

    def abort_step(self, step_id: int, message: str) -> None:
        self.steps.abort(step_id, AbortedError(None, None, message))

    def on_tensor(self, step_id: int, key: tuple, value: Any) -> None:
        """A tensor pushed by another task for one of our Recvs."""
        edge = graph_exec.key_from_fields(key)
        self.steps.deliver(step_id, edge, value, sender=graph_exec.task_of(edge.src_device))

    def on_peer_lost(self, peer: str, error: BaseException) -> None:
        count = self.steps.abort_peer(
            peer, UnavailableError(None, None, f"Task {peer} became unreachable during the step: {error}")
        )
        if count:
            log.warning("%s: aborted %d step(s) after losing %s", self.task_name, count, peer)

    def on_request(self, conn: Connection, call_id: int, method: str, args: Any, tensors: list) -> None:
        """Data-plane requests: ``RunGraph`` runs on the pool, ``AbortStep`` inline."""
        if method == "RunGraph":
            if not isinstance(args, list) or len(args) not in (3, 4):
                raise InvalidArgumentError(None, None, "RunGraph expects [handle, step_id, timeout(, trace)]")
            self._pool.submit(self._serve_run_graph, conn, call_id, args, tensors, time.monotonic())
        elif method == "AbortStep":
            step_id, message = args
            self.abort_step(int(step_id), str(message))
            conn.reply(call_id, None)
        else:
            raise InvalidArgumentError(None, None, f"Unknown data-plane method {method!r}")

    def _serve_run_graph(self, conn: Connection, call_id: int, args: list, feeds: list,
                         requested_at: float) -> None:
        handle, step_id, timeout = args[:3]
        trace = [] if len(args) > 3 and args[3] else None
        try:
            if not isinstance(handle, str) or not isinstance(step_id, int):
                raise InvalidArgumentError(None, None, "RunGraph: malformed handle or step id")
            results = self.run_graph(handle, step_id, feeds, timeout, conn.peer, requested_at, trace)
        except OpError as exc:
            conn.reply_error(call_id, exc)
            return
        except Exception as exc:  # noqa: BLE001 - reported to the master, server keeps going
            log.exception("RunGraph %s failed", handle)
            conn.reply_error(call_id, exc)
            return
        conn.reply(call_id, trace, results)

    def _send_remote(self, task: str, step_id: int, key: Any, value: Any) -> None:
        address = self._peers.get(task)
        if address is None or self.plane is None:
            raise UnavailableError(None, None, f"{self.task_name} does not know where {task} is")
        try:
            self.plane.send_tensor(address, step_id, graph_exec.key_fields(key), value)
        except UnavailableError as exc:
            raise UnavailableError(None, None, f"Cannot send {key.tensor_name} to {task}: {exc.message}") from None

    def close(self) -> None:
        self.steps.close()
        self.cpu.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._part_pool.shutdown(wait=False, cancel_futures=True)

