"""The tensor data plane: framed messages with raw tensor payloads over TCP.

Each server (and each remote client) owns one :class:`DataPlane`: a listening socket
plus one persistent connection (:mod:`flowmesh.distributed.connection`) per peer it talks
to. Frames (see
:mod:`flowmesh.distributed.protocol`) carry a small msgpack meta and the tensors' raw
memory: sends hand the tensors' buffers to ``sendmsg`` without copying them, receives
``recv_into`` freshly allocated torch tensors. Nothing is pickled.

Three kinds of traffic share a connection:

* ``TENSOR``: a one-way push of a cut edge's value to the rendezvous of the task that
  consumes it (the Send op of the producing task pushes as soon as the value exists);
* ``REQUEST`` / ``RESPONSE``: per-step calls that carry tensors (``RunGraph`` from a
  master to a worker, ``RunStep`` from a remote client to a master);
* ``HELLO``: the handshake that opens every connection (:mod:`flowmesh.distributed.auth`:
  the peers prove they share the job's secret, and say which task they are, so that a
  lost connection can abort exactly the steps that were waiting on that peer).

Bad input (wrong magic, oversized or malformed frames) gets an ``ERROR`` frame back and
closes that one connection; the server keeps serving everyone else.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from flowmesh import config as _config
from flowmesh.distributed import protocol as wire
from flowmesh.distributed import shm
from flowmesh.distributed.auth import ClusterAuth, refuse_busy
from flowmesh.distributed.connection import Call, Connection, wait
from flowmesh.distributed.framing import Stats
from flowmesh.distributed.reach import likely_cause
from flowmesh.errors import DataLossError, OpError, UnauthenticatedError, UnavailableError

__all__ = ["Call", "Connection", "DataPlane", "wait"]

log = logging.getLogger("flowmesh.distributed")


TensorHandler = Callable[[int, tuple, Any], None]
RequestHandler = Callable[["Connection", int, str, Any, list], None]
PeerLostHandler = Callable[[str, BaseException], None]


class DataPlane:
    """A listening socket plus a pool of connections to peers.

    Args:
        identity: this endpoint's task name (``/job:ps/replica:0/task:0``) or client id.
        host: interface to listen on (``127.0.0.1`` unless binding elsewhere is explicit).
        listen: open a port of its own (a server's plane shares the task's port instead and
            is handed its connections through :meth:`adopt`; a remote client only dials).
        on_tensor: ``fn(step_id, key_fields, value)`` for pushed tensors.
        on_request: ``fn(connection, call_id, method, args, tensors)``; it must not block
            (answer later with ``connection.reply``).
        on_peer_lost: ``fn(peer identity, error)`` when a connection to a peer breaks.
        max_bytes: the largest frame accepted.
        auth: the job's secret (default: this process's, from ``flowmesh/config.py``).
    """

    def __init__(self, identity: str, host: str = "127.0.0.1", *,
                 on_tensor: TensorHandler | None = None,
                 on_request: RequestHandler | None = None,
                 on_peer_lost: PeerLostHandler | None = None,
                 max_bytes: int = 2048 << 20, listen: bool = True,
                 auth: ClusterAuth | None = None):
        self.identity = identity
        self.auth = auth if auth is not None else ClusterAuth.from_config()
        self.max_connections = _config.MAX_CONNECTIONS.get()
        self.host = host
        self.max_bytes = max_bytes
        self.stats = Stats()
        self._on_tensor = on_tensor
        self._on_request = on_request
        self._on_peer_lost = on_peer_lost
        self._outbound: dict[str, Connection] = {}
        self._inbound: set[Connection] = set()
        self._lock = threading.Lock()
        self._connect_locks: dict[str, threading.Lock] = {}
        self._closed = False
        self._port: Any = None  # the TaskPort this plane listens on, when it has its own
        self.address = ""
        self.shared_memory = bool(_config.SHM_TRANSPORT.get()) and shm.available()
        self._watchdog: threading.Thread | None = None
        self.host_id = shm.host_id()
        if listen:
            self._listen()

    def _listen(self) -> None:
        from flowmesh.distributed.task_port import TaskPort

        self._port = TaskPort(self.host, 0, self.adopt)
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.address = f"{host}:{self._port.port}"

    def adopt(self, sock: socket.socket, addr: tuple) -> None:
        """Serves a connection a peer dialed (the task's port routed it here)."""
        with self._lock:
            if self._closed:
                sock.close()
                return
            busy = len(self._inbound) >= self.max_connections
            if not busy:
                conn = Connection(self, sock, f"{addr[0]}:{addr[1]}", accepted=True)
                self._inbound.add(conn)
        if busy:
            log.warning("refusing a data-plane connection from %s:%s: %d connections "
                        "are open (FLOWMESH_MAX_CONNECTIONS)", addr[0], addr[1],
                        self.max_connections)
            refuse_busy(sock, self.max_connections, f"the data plane of {self.identity}")
            return
        conn.start()

    # --- callbacks used by connections -------------------------------------------------
    def on_tensor(self, step: int, key: tuple, value: Any) -> None:
        if self._on_tensor is None:
            raise DataLossError(None, None, "This endpoint does not accept tensors")
        self._on_tensor(step, key, value)

    def on_request(self, conn: Connection, call_id: int, method: str, args: Any, values: list) -> None:
        if self._on_request is None:
            raise UnavailableError(None, None, f"{self.identity} does not serve requests")
        self._on_request(conn, call_id, method, args, values)

    def hello(self) -> dict[str, Any]:
        """This endpoint's handshake: identity, host and whether it takes shared memory."""
        return {"peer": self.identity, "host": self.host_id, "shm": self.shared_memory}

    def _forget(self, conn: Connection, error: BaseException) -> None:
        with self._lock:
            self._inbound.discard(conn)
            if self._outbound.get(conn.address) is conn:
                del self._outbound[conn.address]
        if conn.peer and self._on_peer_lost is not None and not self._closed:
            try:
                self._on_peer_lost(conn.peer, error)
            except Exception:  # noqa: BLE001 - never let a callback kill the reader
                log.exception("peer-lost handler failed for %s", conn.peer)

    # --- outbound ----------------------------------------------------------------------
    def open_connection(self, address: str) -> Connection | None:
        """The open connection to ``address``, if there is one (never connects)."""
        conn = self._outbound.get(address)
        return conn if conn is not None and not conn.closed else None

    def connection(self, address: str, timeout: float = 20.0) -> Connection:
        """The connection to the data plane at ``address``, connecting if needed.

        Raises:
            UnavailableError: the peer cannot be reached within ``timeout`` seconds.
        """
        conn = self._outbound.get(address)
        if conn is not None and not conn.closed:
            return conn
        with self._lock:
            lock = self._connect_locks.setdefault(address, threading.Lock())
        with lock:
            conn = self._outbound.get(address)
            if conn is not None and not conn.closed:
                return conn
            conn = self._connect(address, timeout)
            with self._lock:
                self._outbound[address] = conn
            return conn

    def _connect(self, address: str, timeout: float) -> Connection:
        from flowmesh.distributed.cluster_spec import split_address

        if self._closed:
            raise UnavailableError(None, None, "The data plane is closed")
        host, port = split_address(address)
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise UnavailableError(
                None, None, f"Cannot connect to the data plane at {address}: "
                f"{exc.strerror or exc}; {likely_cause(address)}") from None
        sock.settimeout(None)
        conn = Connection(self, sock, address)
        try:
            conn.handshake()
        except OpError as exc:
            conn.close()
            if isinstance(exc, UnauthenticatedError):
                raise
            raise UnavailableError(None, None, f"No handshake from the data plane at {address}: "
                                   f"{exc.message}") from None
        except (OSError, ConnectionError) as exc:
            conn.close()
            raise UnavailableError(None, None, f"No handshake from the data plane at {address}: "
                                   f"{exc}") from None
        conn.start()
        return conn

    def _ensure_watchdog(self) -> None:
        if self._watchdog is None and _config.HEARTBEAT_S.get() > 0:
            with self._lock:
                if self._watchdog is None:
                    self._watchdog = threading.Thread(target=self._watch, daemon=True,
                                                      name="flowmesh-dataplane-heartbeat")
                    self._watchdog.start()

    def _watch(self) -> None:
        """Heartbeats every outbound connection that has calls in flight."""
        while not self._closed:
            interval = _config.HEARTBEAT_S.get()
            timeout = max(_config.RPC_DEADLINE_S.get(), 2 * interval)
            time.sleep(interval)
            with self._lock:
                conns = list(self._outbound.values())
            now = time.monotonic()
            for conn in conns:
                try:
                    conn.heartbeat(now, timeout)
                except OpError:
                    pass  # the connection just broke: its calls have failed already

    def send_tensor(self, address: str, step: int, key: tuple, value: Any) -> None:
        """Pushes ``value`` for edge ``key`` of step ``step`` to the task at ``address``."""
        self.connection(address).send_frame(wire.TENSOR, {"step": step, "key": list(key)}, [value])

    def call(self, address: str, method: str, args: Any, tensors: Sequence[Any] = (),
             timeout: float | None = None) -> tuple[Any, list[Any]]:
        """A blocking request; returns ``(result, tensors)``.

        Raises:
            DeadlineExceededError: no answer within ``timeout`` seconds.
            OpError: the error the peer replied with, or UnavailableError.
        """
        self._ensure_watchdog()
        future = self.connection(address).call(method, args, tensors)
        return wait(future, timeout, f"{method} on {address}")

    def call_async(self, address: str, method: str, args: Any, tensors: Sequence[Any] = (),
                   timeout: float = 20.0) -> Future:
        """A request whose peer is heartbeated while it is pending; returns its future."""
        self._ensure_watchdog()
        return self.connection(address, timeout).call(method, args, tensors)

    def close_peer(self, identity: str) -> None:
        """Closes the inbound connections of the peer ``identity`` (e.g. a client whose
        sessions all expired; it reconnects if it comes back)."""
        with self._lock:
            conns = [c for c in self._inbound if c.peer == identity]
        for conn in conns:
            conn.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns = list(self._outbound.values()) + list(self._inbound)
            self._outbound.clear()
            self._inbound.clear()
        if self._port is not None:
            self._port.close()
        for conn in conns:
            conn.close()
