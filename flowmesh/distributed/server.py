"""``tf.train.Server``: one task of a cluster, hosting a master and a worker service.

Example (one process per task; the seeds' two-task "local" cluster):
    >>> cluster = tf.train.ClusterSpec({"local": ["localhost:2222", "localhost:2223"]})
    >>> server = tf.train.Server(cluster, job_name="local", task_index=0)
    >>> with tf.device("/job:local/task:1"):
    ...     c = tf.constant("Hello, distributed TensorFlow!")
    >>> with tf.Session(server.target) as sess:
    ...     sess.run(c)

A server listens on the one port its cluster spec lists: control calls (gRPC) and tensors
(the data plane) share it (:mod:`flowmesh.distributed.task_port`), and peers dial exactly
the listed address. A task listed at a loopback address listens on loopback; any other
listens on every interface, as TensorFlow's servers do (``bind_address`` or
``FLOWMESH_BIND_ADDRESS`` choose the interface). With a cluster secret
(``FLOWMESH_CLUSTER_SECRET_FILE``; the launchers create one per job) both planes refuse
every peer that does not know it (``docs/security.md``); without one, a server that other
hosts can reach says so in one warning. Variables placed on the task live in its worker's
resource stores for as long as the server runs.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from flowmesh import config as _config
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.auth import ClusterAuth
from flowmesh.distributed.cluster_spec import (
    ClusterDef,
    ClusterSpec,
    default_bind_address,
    is_loopback,
    join_address,
    split_address,
)
from flowmesh.distributed.cluster_view import ClusterView
from flowmesh.distributed.data_plane import Connection, DataPlane
from flowmesh.distributed.master import MasterService
from flowmesh.distributed.task_port import TaskPort
from flowmesh.distributed.worker import WorkerService
from flowmesh.errors import InvalidArgumentError
from flowmesh.runtime.options import ConfigProto

log = logging.getLogger("flowmesh.distributed")
_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "::", ""}


@dataclass
class ServerDef:
    """TensorFlow's ``ServerDef``: which task of which cluster a server is."""

    cluster: ClusterDef = field(default_factory=ClusterDef)
    job_name: str = ""
    task_index: int = 0
    protocol: str = "grpc"
    default_session_config: ConfigProto | None = None


class Server:
    """An in-process server for one task of a cluster (``tf.train.Server``).

    Args:
        server_or_cluster_def: a ``ClusterSpec``, a dict for one, a ``ClusterDef`` or a
            ``ServerDef``.
        job_name: this task's job (optional when the cluster has a single job).
        task_index: this task's index (optional when the job has a single task).
        protocol: only ``"grpc"`` is supported.
        config: ``ConfigProto`` defaults for sessions and the task's devices
            (``device_count``).
        start: start serving immediately.
        bind_address: *(flowmesh)* interface to listen on (default ``FLOWMESH_BIND_ADDRESS``,
            else by the task's listed host: loopback for a loopback address, all
            interfaces otherwise).

    Raises:
        ValueError: job or task missing/unknown in the cluster.
        UnavailableError: the port is already in use.
    """

    def __init__(self, server_or_cluster_def: Any, job_name: str | None = None,
                 task_index: int | None = None, protocol: str | None = None,
                 config: ConfigProto | None = None, start: bool = True, *,
                 bind_address: str | None = None):
        self._server_def = _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config)
        self._cluster = ClusterSpec(self._server_def.cluster)
        self._job = self._server_def.job_name
        self._task = self._server_def.task_index
        self._bind = bind_address or _config.BIND_ADDRESS.get()  # "": by the task's address
        self._config = config or self._server_def.default_session_config or ConfigProto()
        self._started = False
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self.worker: WorkerService | None = None
        self.master: MasterService | None = None
        self.plane: DataPlane | None = None
        self._rpc: Any = None
        self._port: TaskPort | None = None
        self._listen_host = ""
        if start:
            self.start()

    # --- TensorFlow API ------------------------------------------------------------------
    @staticmethod
    def create_local_server(config: ConfigProto | None = None, start: bool = True) -> Server:
        """A single-task server on a free port of ``localhost`` (job ``localhost``)."""
        return Server({"localhost": ["localhost:0"]}, job_name="localhost", task_index=0,
                      protocol="grpc", config=config, start=start)

    @property
    def server_def(self) -> ServerDef:
        return self._server_def

    @property
    def target(self) -> str:
        """``grpc://host:port``: pass it to ``tf.Session``."""
        return "grpc://" + self._cluster.task_address(self._job, self._task)

    def start(self) -> None:
        """Starts serving (idempotent)."""
        with self._lock:
            if self._started:
                return
            self._start_services()
            self._started = True

    def join(self) -> None:
        """Blocks until the server stops (``stop()``, or the process is signalled)."""
        while not self._stopped.wait(0.5):
            pass

    # --- flowmesh additions --------------------------------------------------------------
    def stop(self, grace: float = 0.0) -> None:
        """*(flowmesh)* Stops serving and frees the ports; variables are dropped."""
        with self._lock:
            if not self._started or self._stopped.is_set():
                self._stopped.set()
                return
            self._stopped.set()
        _unregister(self)
        if self._port is not None:
            self._port.close()
        if self._rpc is not None:
            self._rpc.stop(grace).wait(5.0)
        if self.master is not None:
            self.master.close()
        if self.plane is not None:
            self.plane.close()
        if self.worker is not None:
            self.worker.close()

    @property
    def task_name(self) -> str:
        return f"/job:{self._job}/replica:0/task:{self._task}"

    @property
    def cluster_spec(self) -> ClusterSpec:
        return self._cluster

    def stats(self) -> dict[str, int]:
        """*(flowmesh)* Data-plane counters: bytes/tensor bytes/frames sent and received."""
        return self.plane.stats.snapshot() if self.plane is not None else {}

    # --- internals -----------------------------------------------------------------------
    def _start_services(self) -> None:
        host, port = split_address(self._cluster.task_address(self._job, self._task))
        bind = self._listen_host = self._bind or default_bind_address(host)
        from flowmesh.distributed.rpc import RpcServer  # grpc is imported when first needed

        auth = ClusterAuth.from_config()
        self.worker = WorkerService(self._job, self._task, self._config.device_count,
                                    self._config.intra_op_parallelism_threads)
        self.plane = DataPlane(self.task_name, bind, on_tensor=self.worker.on_tensor,
                               on_request=self._on_request, on_peer_lost=self._on_peer_lost,
                               max_bytes=_config.MAX_MESSAGE_MB.get() << 20, listen=False, auth=auth)
        self.worker.plane = self.plane
        try:
            self._port = TaskPort(bind, port, self.plane.adopt, grpc=True)
            assert self._port.grpc_target is not None
            self._rpc = RpcServer(self._port.grpc_target, self._rpc_handlers(),
                                  _config.max_rpc_bytes(), auth)
        except Exception:
            if self._port is not None:
                self._port.close()
            self.plane.close()
            self.worker.close()
            raise
        if port == 0:  # the OS picked the port: the cluster (and target) say which
            jobs = {j: dict(t) for j, t in self._cluster._jobs.items()}
            jobs[self._job][self._task] = join_address(host, self._port.port)
            self._cluster = ClusterSpec(jobs)
            self._server_def.cluster = self._cluster.as_cluster_def()
        self.plane.address = self._cluster.task_address(self._job, self._task)
        view = ClusterView(self._cluster, self._job, self._task, self.worker, self.plane)
        self.master = MasterService(view)
        self.master.on_client_idle = self.plane.close_peer
        self._rpc.start()
        _register(self)
        self._warn_about_reach(host, bind, auth)
        _config.debug(1, f"server {self.task_name} listening on {join_address(bind, self._port.port)} "
                         f"(gRPC and data plane), reached at {self.plane.address}")

    def _warn_about_reach(self, host: str, bind: str, auth: ClusterAuth) -> None:
        """One line when other hosts cannot reach the task, or can without a secret."""
        listed = self._cluster.task_address(self._job, self._task)
        if not is_loopback(host) and is_loopback(bind):
            log.warning("%s is listed as %s but listens on %s only, so other hosts cannot reach "
                        "it: unset FLOWMESH_BIND_ADDRESS (or pass bind_address='0.0.0.0')",
                        self.task_name, listed, bind)
        elif not is_loopback(bind) and not auth.enabled:
            log.warning("%s serves other hosts at %s without a cluster secret: anyone who can reach "
                        "port %d can read and change its variables (as with TensorFlow's servers). "
                        "Set FLOWMESH_CLUSTER_SECRET_FILE on every task to require one "
                        "(docs/security.md)", self.task_name, listed, self._port.port)

    def _rpc_handlers(self) -> dict[str, Any]:
        worker = self.worker
        assert worker is not None

        def master_handlers() -> dict[str, Any]:
            assert self.master is not None
            return self.master.rpc_handlers()

        handlers: dict[str, Any] = {
            "GetStatus": lambda a: worker.status(),
            "RegisterGraph": lambda a: worker.register_graph(
                wire.request_field(a, "session", str), wire.request_field(a, "partitions", list), wire.request_field(a, "feeds", list),
                wire.request_field(a, "fetches", list), wire.request_field(a, "peers", dict), graph_bytes=wire.request_field(a, "graph", bytes)),
            "CloseSession": lambda a: worker.close_session(wire.request_field(a, "session", str)),
            "Reset": lambda a: worker.reset(wire.request_field(a, "containers", list, optional=True)),
        }
        for name in ("CreateSession", "ExtendSession", "MakeCallable", "CloseMasterSession",
                     "ResetContainers", "ListDevices"):
            handlers[name] = _late(master_handlers, name)
        return handlers

    def _on_request(self, conn: Connection, call_id: int, method: str, args: Any, tensors: list) -> None:
        if method == "RunCallable":
            assert self.master is not None
            self.master.on_request(conn, call_id, args, tensors)
        else:
            assert self.worker is not None
            self.worker.on_request(conn, call_id, method, args, tensors)

    def _on_peer_lost(self, peer: str, error: BaseException) -> None:
        if self.worker is not None:
            self.worker.on_peer_lost(peer, error)
        if peer.startswith("client:") and self.master is not None:
            self.master.client_lost(peer)

    def __repr__(self) -> str:
        return f"<flowmesh Server {self.task_name} target={self.target}>"


def _late(get: Any, name: str) -> Any:
    key = "CloseSession" if name == "CloseMasterSession" else name
    return lambda args: get()[key](args)


def _make_server_def(value: Any, job_name: str | None, task_index: int | None,
                     protocol: str | None, config: ConfigProto | None) -> ServerDef:
    if isinstance(value, ServerDef):
        server_def = ServerDef(value.cluster, job_name or value.job_name,
                               value.task_index if task_index is None else task_index,
                               protocol or value.protocol, config or value.default_session_config)
    else:
        cluster = ClusterSpec(value)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError(
                    f"Must specify an explicit `job_name`: the cluster has jobs {cluster.jobs}"
                )
            job_name = cluster.jobs[0]
        if job_name not in cluster.jobs:
            raise ValueError(f"Job '{job_name}' is not in the cluster (jobs: {cluster.jobs})")
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError(
                    f"Must specify an explicit `task_index`: job '{job_name}' has tasks {indices}"
                )
            task_index = indices[0]
        server_def = ServerDef(cluster.as_cluster_def(), job_name, int(task_index),
                               protocol or "grpc", config)
    if server_def.protocol != "grpc":
        raise InvalidArgumentError(
            None, None, f"Unsupported protocol {server_def.protocol!r}: flowmesh servers speak 'grpc'"
        )
    cluster = ClusterSpec(server_def.cluster)
    if server_def.job_name not in cluster.jobs:
        raise ValueError(f"Job '{server_def.job_name}' is not in the cluster (jobs: {cluster.jobs})")
    if not cluster.has_task(server_def.job_name, server_def.task_index):
        raise ValueError(
            f"Task {server_def.task_index} is not in job '{server_def.job_name}' (tasks: "
            f"{cluster.task_indices(server_def.job_name)})"
        )
    return server_def


# --- servers of this process (a client in the same process talks to them directly) --------
_servers: dict[int, Server] = {}
_servers_lock = threading.Lock()


def _register(server: Server) -> None:
    with _servers_lock:
        _servers[id(server)] = server


def _unregister(server: Server) -> None:
    with _servers_lock:
        _servers.pop(id(server), None)


def local_server_for(target: str) -> Server | None:
    """The running server of this process that ``grpc://host:port`` names, if any."""
    address = target[len("grpc://"):] if target.startswith("grpc://") else target
    try:
        host, port = split_address(address)
    except ValueError:
        return None
    with _servers_lock:
        servers = list(_servers.values())
    for server in servers:
        if server._port is None or server._port.port != port:
            continue
        mine = split_address(server._cluster.task_address(server._job, server._task))[0]
        on_loopback = is_loopback(mine) or server._listen_host in ("0.0.0.0", "::")
        if host == mine or ((host in _LOOPBACK or is_loopback(host)) and on_loopback):
            return server
    return None
