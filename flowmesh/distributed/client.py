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
from flowmesh.kernels.step import StepContext
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


class _Master:
    """Calls a master: directly (same process) or over gRPC + data plane."""

    def __init__(self, target: str):
        self.target = target
        server = local_server_for(target)
        self.local = server.master if server is not None else None
        self.client_id = f"client:{secrets.token_hex(8)}"
        self._rpc: Any = None
        self._plane: DataPlane | None = None
        self._data_address = ""
        if self.local is None:
            from flowmesh.distributed.rpc import RpcClient

            address = target[len("grpc://"):]
            self._rpc = RpcClient(address, f"master at {target}")
            self._rpc.wait_ready(_config.CONNECT_TIMEOUT_S.get())

    def create_session(self, config: dict[str, Any], graph: Graph) -> str:
        if self.local is not None:
            return self.local.create_session(None, config, graph=graph)
        assert self._rpc is not None
        reply = self._rpc.call("CreateSession", {"graph": None, "config": config, "client": self.client_id})
        self._data_address = self.target[len("grpc://"):]  # one port serves both planes
        self._plane = DataPlane(self.client_id, listen=False)
        return reply["session"]

    def extend(self, session: str, graph_bytes: bytes) -> None:
        if self.local is not None:
            self.local.session(session).extend(graph_bytes)
        else:
            assert self._rpc is not None
            self._rpc.call("ExtendSession", {"session": session, "graph": graph_bytes})

    def make_callable(self, session: str, fetches: list[str], feeds: list[str], targets: list[str]) -> int:
        if self.local is not None:
            return self.local.session(session).make_callable(fetches, feeds, targets)
        assert self._rpc is not None
        return self._rpc.call("MakeCallable", {"session": session, "fetches": fetches,
                                               "feeds": feeds, "targets": targets})

    def run(self, session: str, callable_id: int, feeds: list[Any], timeout: float | None,
            trace: list | None = None) -> list[Any]:
        if self.local is not None:
            return self.local.session(session).run_callable(callable_id, feeds, timeout, trace)
        assert self._plane is not None
        wait = None if timeout is None else timeout + 10.0
        args = [session, callable_id, timeout] + ([True] if trace is not None else [])
        stats, values = self._plane.call(self._data_address, "RunCallable", args, feeds, timeout=wait)
        if trace is not None and stats:
            trace.extend(stats)
        return values

    def list_devices(self) -> list[list[str]]:
        if self.local is not None:
            return self.local.list_devices()
        assert self._rpc is not None
        return self._rpc.call("ListDevices", None)

    def close(self, session: str) -> None:
        if self.local is not None:
            self.local.close_session(session)
        else:
            assert self._rpc is not None
            try:
                self._rpc.call("CloseMasterSession", {"session": session}, timeout=5.0)
            except OpError:
                pass  # the master is gone: its sessions went with it
            finally:
                if self._plane is not None:
                    self._plane.close()
                self._rpc.close()


class GrpcBackend:
    """The session backend for ``grpc://host:port`` targets.

    Raises (from the constructor):
        UnavailableError: the target does not answer within ``FLOWMESH_CONNECT_TIMEOUT_S``.
    """

    def __init__(self, target: str, graph: Graph, config: ConfigProto):
        self.target = target
        self.graph = graph
        self.config = config
        self._master = _Master(target)
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
        step.extra["dev_stats"] = step_stats.decode(trace, f"the master at {self.target}")
        return values

    def _make_callable(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor],
                       targets: Sequence[Operation]) -> int:
        with self._lock:
            needed = _closure(fetches, targets) | {t.op for t in feeds}
            new_ops = needed - self._sent if self._master.local is None else set()
            if new_ops:  # a master in this process uses the Graph itself
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
