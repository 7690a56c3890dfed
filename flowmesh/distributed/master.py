"""The master service of a server: client sessions over the whole cluster.

A client (``tf.Session("grpc://host:port")``) creates a session from its serialized
graph, extends it as the graph grows, registers step signatures ("callables") and runs
them. Session lifecycle calls arrive over gRPC (or directly from a client in the same
process); ``RunCallable`` arrives on the data plane because it carries the feeds and
fetches, which thereby cross the wire exactly once per step.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from flowmesh import config as _config
from flowmesh.core.graph import Graph
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.cluster_view import ClusterView, RemoteTask
from flowmesh.distributed.data_plane import Connection
from flowmesh.distributed.master_session import MasterSession, SessionOptions
from flowmesh.errors import (
    AbortedError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    UnavailableError,
)

log = logging.getLogger("flowmesh.distributed")


class MasterService:
    """Sessions of the clients of one server."""

    def __init__(self, view: ClusterView):
        self.view = view
        self._sessions: dict[str, MasterSession] = {}
        self._owners: dict[str, set[str]] = {}  # client id -> its session handles
        self._reset_handles: collections.deque[str] = collections.deque(maxlen=4096)
        self._used: dict[str, float] = {}  # handle -> last use (session_gc_seconds)
        self._expired: collections.deque[str] = collections.deque(maxlen=4096)
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="flowmesh-master")
        # calls that ask every task (ListDevices, ResetContainers) hold a gRPC thread while
        # they wait on others: at most this many at once, so session calls always find one
        self._fan_out = threading.BoundedSemaphore(max(1, _config.FANOUT_CALLS.get()))
        # called with a remote client's id once session expiry closed all its sessions (the
        # server closes that client's data-plane connection: a leaked client costs nothing)
        self.on_client_idle: Callable[[str], None] | None = None

    # --- sessions ------------------------------------------------------------------------
    def create_session(self, graph_bytes: bytes | None, config: Any = None, client: str = "",
                       graph: Graph | None = None) -> str:
        """Creates a session; returns its handle.

        Args:
            graph_bytes: an initial serialized graph (remote clients extend it later).
            config: the session options (``SessionOptions.from_dict``).
            client: the remote client's id (its sessions close if it disconnects).
            graph: a client Graph of this very process, used as is (nothing serialized,
                so ops that cannot leave the process, like ``py_func``, run on this task).
        """
        self._collect_idle()
        session = MasterSession(self.view, SessionOptions.from_dict(config), graph)
        if graph_bytes:
            session.extend(graph_bytes)
        with self._lock:
            self._sessions[session.handle] = session
            self._used[session.handle] = time.monotonic()
            if client:
                self._owners.setdefault(client, set()).add(session.handle)
        return session.handle

    def session(self, handle: Any) -> MasterSession:
        """The session ``handle`` names.

        Raises:
            NotFoundError: no such session (closed, or the server restarted).
        """
        found = self._sessions.get(handle) if isinstance(handle, str) else None
        if found is not None:
            self._used[handle] = time.monotonic()
        else:
            if handle in self._expired:
                raise AbortedError(
                    None, None,
                    f"Session {handle!r} on {self.view.local.name} was closed after "
                    f"{_config.SESSION_GC_S.get():g} s unused (FLOWMESH_SESSION_GC_S). Create a "
                    "new tf.Session.",
                )
            if handle in self._reset_handles:
                raise AbortedError(
                    None, None,
                    f"Session {handle!r} on {self.view.local.name} was closed by "
                    "tf.Session.reset (its variables were cleared). Create a new tf.Session.",
                )
            raise NotFoundError(
                None, None,
                f"Session {handle!r} is not open on {self.view.local.name}: it was closed, or "
                "the server restarted. Create a new tf.Session.",
            )
        return found

    def close_session(self, handle: str) -> None:
        with self._lock:
            session = self._sessions.pop(handle, None)
            self._used.pop(handle, None)
        if session is not None:
            session.close()

    def _collect_idle(self) -> None:
        """Closes sessions unused for ``FLOWMESH_SESSION_GC_S`` (TensorFlow's master
        ``session_gc_seconds``; 0, the default, keeps them until closed)."""
        limit = _config.SESSION_GC_S.get()
        if limit <= 0:
            return
        cutoff = time.monotonic() - limit
        with self._lock:
            idle = [h for h, used in self._used.items() if used < cutoff]
            self._expired.extend(idle)
        for handle in idle:
            self.close_session(handle)
        if idle:
            log.warning("%s: closed %d session(s) unused for %g s (FLOWMESH_SESSION_GC_S)",
                        self.view.local.name, len(idle), limit)
            self._forget_owners(set(idle))

    def _forget_owners(self, closed: set[str]) -> None:
        """Drops ``closed`` from their clients; a client left without sessions is idle."""
        with self._lock:
            idle_clients = []
            for client, handles in list(self._owners.items()):
                handles -= closed
                if not handles:
                    del self._owners[client]
                    idle_clients.append(client)
        if self.on_client_idle is not None:
            for client in idle_clients:
                self.on_client_idle(client)

    def reset(self, containers: list[str] | None) -> None:
        """Clears resource containers on every task of the cluster and closes every
        session of this master, as TensorFlow does (a later step on one of them is an
        ``AbortedError``).

        Raises:
            UnavailableError: listing the tasks that could not be reset.
        """
        with self._lock:
            sessions = list(self._sessions.items())
            self._sessions.clear()
            self._used.clear()
            self._owners.clear()
            self._reset_handles.extend(handle for handle, _ in sessions)
        for _, session in sessions:
            session.close()
        failed = []
        with self._fanning_out("ResetContainers"):
            for task in self.view.tasks.values():
                try:
                    task.reset(list(containers or []))
                except OpError as exc:
                    failed.append(f"{task.name} ({exc.message})")
        if failed:
            raise UnavailableError(None, None, f"Could not reset containers on: {'; '.join(failed)}")

    def list_devices(self) -> list[list[str]]:
        """``[name, type]`` of the devices of every task that answers within
        ``FLOWMESH_FANOUT_TIMEOUT_S`` (all tasks together).

        Raises:
            UnavailableError: too many fan-out calls are running already.
        """
        out = [[d.name, d.device_type] for d in self.view.local.devices()]
        deadline = time.monotonic() + _config.FANOUT_TIMEOUT_S.get()
        with self._fanning_out("ListDevices"):
            for task in self.view.tasks.values():
                if isinstance(task, RemoteTask):
                    try:
                        devices = task.devices(timeout=max(0.01, deadline - time.monotonic()))
                    except OpError:
                        continue
                    out += [[d.name, d.device_type] for d in devices]
        return out

    @contextlib.contextmanager
    def _fanning_out(self, what: str) -> Iterator[None]:
        if not self._fan_out.acquire(blocking=False):
            raise UnavailableError(
                None, None, f"{what}: {_config.FANOUT_CALLS.get()} calls that contact every task "
                f"are running on {self.view.local.name} already (FLOWMESH_FANOUT_CALLS); retry later")
        try:
            yield
        finally:
            self._fan_out.release()

    def client_lost(self, client: str) -> None:
        """Closes the sessions of a remote client whose connection went away."""
        with self._lock:
            handles = self._owners.pop(client, set())
        for handle in handles:
            self.close_session(handle)

    # --- transport adapters --------------------------------------------------------------
    def rpc_handlers(self) -> dict[str, Any]:
        """gRPC handlers of the master's session calls (args and results are msgpack maps)."""
        return {
            "CreateSession": lambda a: {
                "session": self.create_session(wire.request_field(a, "graph", bytes, True), a.get("config"),
                                               str(a.get("client", ""))),
                "data_address": self.view.local.data_address(),
            },
            "ExtendSession": lambda a: self.session(wire.request_field(a, "session", str)).extend(wire.request_field(a, "graph", bytes)),
            "MakeCallable": lambda a: self.session(wire.request_field(a, "session", str)).make_callable(
                wire.request_field(a, "fetches", list), wire.request_field(a, "feeds", list), wire.request_field(a, "targets", list)),
            "CloseSession": lambda a: self.close_session(wire.request_field(a, "session", str)),
            "ResetContainers": lambda a: self.reset(a.get("containers") if isinstance(a, dict) else None),
            "ListDevices": lambda a: self.list_devices(),
        }

    def on_request(self, conn: Connection, call_id: int, args: Any, tensors: list) -> None:
        """``RunCallable`` from a remote client (runs on the master's pool)."""
        if not isinstance(args, list) or len(args) not in (3, 4):
            raise InvalidArgumentError(None, None, "RunCallable expects [session, callable, timeout(, trace)]")
        self._pool.submit(self._serve_run, conn, call_id, args, tensors)

    def _serve_run(self, conn: Connection, call_id: int, args: list, feeds: list) -> None:
        handle, callable_id, timeout = args[:3]
        trace = [] if len(args) > 3 and args[3] else None
        try:
            results = self.session(handle).run_callable(callable_id, feeds, timeout, trace)
        except Exception as exc:  # noqa: BLE001 - every failure becomes the reply
            conn.reply_error(call_id, exc)
            return
        conn.reply(call_id, trace, results)

    def close(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            session.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
