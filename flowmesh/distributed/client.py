"""The client side of ``tf.Session("grpc://host:port")``.

``runtime/session.py`` hands ``grpc://`` targets to :class:`GrpcBackend`. The backend
ships the graph to the target's master (only the ops a step needs, once), registers each
step signature once as a *callable*, and then sends just the feed values per step.

When the target is a server running in this process (the usual between-graph setup:
``server = tf.train.Server(...); tf.Session(server.target)``), the backend calls the
master directly and the master works on the client's Graph itself: no sockets, no copies
of feeds and fetches, and ops that cannot be serialized (``py_func``) run when they are
placed on this task. Otherwise it uses gRPC for session calls and the master's data
plane for steps; only ops other tasks run are ever serialized.

Limitation: the graph is shipped op by op as steps first need them; control inputs
added to an op after it was shipped are not sent again.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from typing import Any

import torch

from flowmesh import config as _config
from flowmesh.core import serialize
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.graph import Graph, Operation, Tensor
from flowmesh.distributed import step_stats
from flowmesh.distributed.data_plane import DataPlane
from flowmesh.distributed.server import local_server_for
from flowmesh.errors import OpError
from flowmesh.kernels.contract.step import StepContext
from flowmesh.runtime.device import Device
from flowmesh.runtime.options import ConfigProto
from flowmesh.runtime.session import register_session_target


def _closure(fetches: Sequence[Tensor], targets: Sequence[Operation]) -> set[Operation]:
    """Every op the step may need (feeds do not cut the closure: a fed tensor's producer
    must still exist on the master for its consumers to name it)."""
    needed: set[Operation] = set()
    stack = [t.op for t in fetches] + list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return needed


class _InProcessMaster:
    """The master of a server running in this process, called directly: it works on the
    client's Graph itself, so nothing is serialized or copied."""

    shares_graph = True  # the master reads the client's Graph: nothing to ship

    def __init__(self, master: Any):
        self._master = master

    def create_session(self, config: dict[str, Any], graph: Graph) -> str:
        return self._master.create_session(None, config, graph=graph)

    def extend(self, session: str, graph_bytes: bytes) -> None:
        self._master.session(session).extend(graph_bytes)

    def make_callable(self, session: str, fetches: list[str], feeds: list[str], targets: list[str]) -> int:
        return self._master.session(session).make_callable(fetches, feeds, targets)

    def run(self, session: str, callable_id: int, feeds: list[Any], timeout: float | None,
            trace: list | None = None) -> list[Any]:
        return self._master.session(session).run_callable(callable_id, feeds, timeout, trace)

    def list_devices(self) -> list[list[str]]:
        return self._master.list_devices()

    def close(self, session: str) -> None:
        self._master.close_session(session)


class _RemoteMaster:
    """The master of another process: session calls over gRPC, steps over its data plane
    (both on the task's one port)."""

    shares_graph = False  # ops are shipped (serialized) as steps first need them

    def __init__(self, target: str):
        from flowmesh.distributed.rpc import RpcClient

        self._address = target[len("grpc://"):]
        self._client_id = f"client:{secrets.token_hex(8)}"
        self._rpc = RpcClient(self._address, f"master at {target}")
        self._rpc.wait_ready(_config.CONNECT_TIMEOUT_S.get())
        self._plane: DataPlane | None = None

    def create_session(self, config: dict[str, Any], graph: Graph) -> str:
        reply = self._rpc.call("CreateSession", {"graph": None, "config": config, "client": self._client_id})
        self._plane = DataPlane(self._client_id, listen=False)
        return reply["session"]

    def extend(self, session: str, graph_bytes: bytes) -> None:
        self._rpc.call("ExtendSession", {"session": session, "graph": graph_bytes})

    def make_callable(self, session: str, fetches: list[str], feeds: list[str], targets: list[str]) -> int:
        return self._rpc.call("MakeCallable", {"session": session, "fetches": fetches,
                                               "feeds": feeds, "targets": targets})

    def run(self, session: str, callable_id: int, feeds: list[Any], timeout: float | None,
            trace: list | None = None) -> list[Any]:
        assert self._plane is not None, "create_session comes first"
        wait = None if timeout is None else timeout + 10.0
        args = [session, callable_id, timeout] + ([True] if trace is not None else [])
        stats, values = self._plane.call(self._address, "RunCallable", args, feeds, timeout=wait)
        if trace is not None and stats:
            trace.extend(stats)
        return values

    def list_devices(self) -> list[list[str]]:
        return self._rpc.call("ListDevices", None)

    def close(self, session: str) -> None:
        try:
            self._rpc.call("CloseMasterSession", {"session": session}, timeout=5.0)
        except OpError:
            pass  # the master is gone: its sessions went with it
        finally:
            if self._plane is not None:
                self._plane.close()
            self._rpc.close()


def _connect_master(target: str) -> _InProcessMaster | _RemoteMaster:
    """The master of ``target``: this process's own server's, else a remote one."""
    server = local_server_for(target)
    return _InProcessMaster(server.master) if server is not None else _RemoteMaster(target)


class GrpcBackend:
    """The session backend for ``grpc://host:port`` targets.

    Raises (from the constructor):
        UnavailableError: the target does not answer within ``FLOWMESH_CONNECT_TIMEOUT_S``.
    """

    def __init__(self, target: str, graph: Graph, config: ConfigProto):
        self.target = target
        self.graph = graph
        self.config = config
        self._master = _connect_master(target)
        self._session = self._master.create_session({
            "allow_soft_placement": config.allow_soft_placement,
            "log_device_placement": config.log_device_placement,
            "device_filters": list(config.device_filters),
            "operation_timeout_in_ms": config.operation_timeout_in_ms,
        }, graph)
        self._sent: set[Operation] = set()
        self._callables: dict[tuple, int] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def devices(self) -> list[Device]:
        """The devices of every task of the cluster that answers (``Session.list_devices``)."""
        return [Device(DeviceSpec.from_string(name), torch.device("cpu"))
                for name, _ in self._master.list_devices()]

    def run(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor], feed_values: Sequence[Any],
            targets: Sequence[Operation], step: StepContext) -> list[Any]:
        """Runs one step on the cluster; returns the fetched runtime values."""
        key = (tuple(fetches), tuple(feeds), tuple(targets))
        callable_id = self._callables.get(key)
        if callable_id is None:
            callable_id = self._make_callable(fetches, feeds, targets)
        if step.trace is None:
            return self._master.run(self._session, callable_id, list(feed_values), step.timeout)
        trace: list = []  # every task's op timings (RunOptions.trace_level)
        values = self._master.run(self._session, callable_id, list(feed_values), step.timeout, trace)
        step.remote_stats = step_stats.decode(trace, f"the master at {self.target}")
        return values

    def _make_callable(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor],
                       targets: Sequence[Operation]) -> int:
        with self._lock:
            needed = _closure(fetches, targets) | {t.op for t in feeds}
            new_ops = set() if self._master.shares_graph else needed - self._sent
            if new_ops:
                data = serialize.graph_to_bytes(self.graph, new_ops, external="reference")
                self._master.extend(self._session, data)
                self._sent |= new_ops
            callable_id = self._master.make_callable(
                self._session, [t.name for t in fetches], [t.name for t in feeds],
                [op.name for op in targets])
            self._callables[(tuple(fetches), tuple(feeds), tuple(targets))] = callable_id
            return callable_id

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._master.close(self._session)


def reset_target(target: str, containers: Sequence[str] | None = None) -> None:
    """``tf.Session.reset(target, containers)``: clears resource containers cluster-wide.

    Raises:
        UnavailableError: the target, or a task of its cluster, is unreachable.
    """
    server = local_server_for(target)
    if server is not None and server.master is not None:
        server.master.reset(list(containers or []))
        return
    from flowmesh.distributed.rpc import RpcClient

    rpc = RpcClient(target[len("grpc://"):], f"master at {target}")
    try:
        rpc.call("ResetContainers", {"containers": list(containers or [])})
    finally:
        rpc.close()


register_session_target("grpc://", GrpcBackend, reset_target)
