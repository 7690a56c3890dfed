"""The collective rendezvous store: a key-value server that lets only the job's tasks in.

torch's ``TCPStore`` would do the job (gloo and NCCL groups exchange their addresses
through it, members write heartbeats, the elastic launcher closes rounds in it) but has
no authentication: any process that reaches its port may read and write every key. This
store keeps ``TCPStore``'s interface (it is a ``torch.distributed.Store``, so process
groups are built on it directly) and its semantics (``get`` waits for the key, ``add``
counts in ASCII decimal, ``compare_set``), and speaks the data plane's framing:

* A connection opens with the data plane's challenge-response (``flowmesh.distributed.
  auth``) under the job's cluster secret. Until it succeeded the server reads nothing but
  handshake frames of at most 4 KB (``FLOWMESH_HANDSHAKE_TIMEOUT_S`` to complete it), so
  a peer without the secret can neither read nor write a key, nor learn whether one
  exists.
* Then each request is one ``REQUEST`` frame ``{"id", "m": op, "a": [args]}`` (msgpack,
  no pickle), answered by one ``RESPONSE`` frame ``{"id", "r": result, "e": error}``.
  Blocking calls (``get``, ``wait``) wait on the server, bounded by the client's timeout.
* The server listens on the address given only (never ``*:port``) and accepts at most
  ``FLOWMESH_MAX_CONNECTIONS`` connections at once.

Without a secret (a ``TF_CONFIG`` job started by hand without one) the same handshake runs
without proofs, as on the data plane; a side that has a secret refuses a side that has none.
"""

from __future__ import annotations

import datetime
import socket
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

import torch.distributed as dist

from flowmesh import config as _config
from flowmesh.distributed import auth as _auth
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.auth import ClusterAuth
from flowmesh.distributed.framing import FrameReader
from flowmesh.errors import (
    DataLossError,
    DeadlineExceededError,
    InvalidArgumentError,
    OpError,
)

_SERVER_PEER = "rendezvous-store"
_CLIENT_PEER = "rendezvous-client"
_MAX_REQUEST_BYTES = wire.MAX_META_BYTES  # keys and values ride in the request's meta
_CONNECT_RETRY_S = (0.02, 0.5)  # first and largest pause between connection attempts


def _text(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def _seconds(timeout: Any, default: float) -> float:
    if timeout is None:
        return default
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` only (``port`` 0: a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    return sock


class _Keys:
    """The key-value table with ``TCPStore``'s semantics; ``get``/``wait`` block."""

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}
        self._cond = threading.Condition()
        self.closed = False

    def _wait_for(self, keys: Sequence[str], timeout_s: float) -> None:
        if not self._cond.wait_for(lambda: self.closed or all(k in self._data for k in keys),
                                   max(timeout_s, 0.0)):
            raise DeadlineExceededError(None, None, f"wait timeout after {timeout_s:.1f} s "
                                        f"for key(s) {list(keys)[:4]} in the rendezvous store")
        if self.closed:
            raise DataLossError(None, None, "the rendezvous store is shutting down")

    def call(self, op: str, args: list[Any]) -> Any:
        """Runs one request; raises :class:`InvalidArgumentError` on a malformed one."""
        with self._cond:
            if op == "set":
                self._data[str(args[0])] = _text(args[1])
                self._cond.notify_all()
                return None
            if op == "get":
                self._wait_for([str(args[0])], float(args[1]))
                return self._data.get(str(args[0]), b"")
            if op == "add":
                value = int(self._data.get(str(args[0]), b"0")) + int(args[1])
                self._data[str(args[0])] = str(value).encode()
                self._cond.notify_all()
                return value
            if op == "compare_set":
                return self._compare_set(str(args[0]), _text(args[1]), _text(args[2]))
            if op == "check":
                return all(str(k) in self._data for k in args[0])
            if op == "wait":
                self._wait_for([str(k) for k in args[0]], float(args[1]))
                return None
            if op == "delete_key":
                return self._data.pop(str(args[0]), None) is not None
            if op == "num_keys":
                return len(self._data)
        raise InvalidArgumentError(None, None, f"unknown rendezvous store operation {op!r:.40}")

    def _compare_set(self, key: str, expected: bytes, desired: bytes) -> bytes:
        current = self._data.get(key)
        if (current is None and not expected) or (current is not None and current == expected):
            self._data[key] = desired
            self._cond.notify_all()
            return desired
        return expected if current is None else current

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()


class StoreServer:
    """Serves a :class:`_Keys` table on ``host:port`` to clients that prove ``auth``.

    Args:
        host, port: the address to listen on (``port`` 0: a free one, see :attr:`port`).
        auth: the job's secret (or its absence).
    """

    def __init__(self, host: str, port: int, auth: ClusterAuth):
        self._listener = listen(host, port)
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self._auth = auth
        self._keys = _Keys()
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._max_conns = _config.MAX_CONNECTIONS.get()
        threading.Thread(target=self._accept_loop, name=f"flowmesh-store-{self.port}",
                         daemon=True).start()

    def _accept_loop(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                if self._keys.closed:
                    conn.close()
                    continue
                busy = len(self._conns) >= self._max_conns
                if not busy:
                    self._conns.add(conn)
            if busy:
                _auth.refuse_busy(conn, self._max_conns,
                                  f"the rendezvous store at {self.host}:{self.port}")
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name="flowmesh-store-conn").start()

    def _serve(self, conn: socket.socket) -> None:
        what = f"a rendezvous store client of {self.host}:{self.port}"
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(_auth.handshake_timeout_s())
            reader = FrameReader(conn)
            _auth.accept(conn, reader, self._auth, {"peer": _SERVER_PEER}, what)
            conn.settimeout(None)
            while True:
                kind, meta_len, payload_len = wire.decode_header(
                    reader.read(wire.HEADER.size), _MAX_REQUEST_BYTES)
                if kind != wire.REQUEST or payload_len:
                    raise DataLossError(None, None, "expected a rendezvous store request")
                request = wire.unpack(reader.read(meta_len), "rendezvous store request")
                _send(conn, wire.RESPONSE, self._answer(request))
        except (OSError, ConnectionError, OpError):
            pass  # refused, malformed or gone: the connection ends here
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def _answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("a"), list):
            raise DataLossError(None, None, "malformed rendezvous store request")
        try:
            return {"id": request.get("id"), "r": self._keys.call(str(request.get("m")),
                                                                  request["a"]), "e": None}
        except OpError as exc:
            return {"id": request.get("id"), "r": None, "e": wire.encode_error(exc)}
        except (IndexError, TypeError, ValueError) as exc:
            bad = InvalidArgumentError(None, None, f"malformed rendezvous store request: {exc}")
            return {"id": request.get("id"), "r": None, "e": wire.encode_error(bad)}

    def close(self) -> None:
        """Stops serving: the port is released and every connection closed."""
        self._keys.close()
        self._listener.close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _send(sock: socket.socket, kind: int, meta: dict[str, Any]) -> None:
    body = wire.pack(meta)
    sock.sendall(wire.encode_header(kind, len(body), 0) + body)


def _connect(host: str, port: int, timeout_s: float) -> socket.socket:
    """Connects, retrying while nobody listens yet (ranks may start before the store)."""
    deadline = time.monotonic() + timeout_s
    pause = _CONNECT_RETRY_S[0]
    while True:
        try:
            return socket.create_connection((host, port), timeout=max(timeout_s, 1.0))
        except (TimeoutError, ConnectionRefusedError):
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, _CONNECT_RETRY_S[1])


class StoreClient(dist.Store):
    """A connection to a :class:`StoreServer`, usable wherever torch takes a ``Store``.

    Args:
        host, port: the server's address.
        auth: the job's secret (or its absence); it must match the server's.
        timeout_s: how long to try to connect, and the default bound of ``get``/``wait``.
        server: a server this client owns (closed when the client is collected or closed).

    Keep a reference to the client while torch objects built on it (``PrefixStore``,
    process groups) are in use: torch calls back into this Python object.

    Raises:
        UnauthenticatedError: one side has the secret and the other does not (or another).
        OSError: nobody accepted the connection within ``timeout_s``.
    """

    def __init__(self, host: str, port: int, auth: ClusterAuth, timeout_s: float,
                 server: StoreServer | None = None):
        super().__init__()
        self.host, self.port = host, port
        self._auth = auth
        self._timeout_s = timeout_s
        self._server = server
        self._lock = threading.Lock()
        self._next_id = 0
        self._sock = _connect(host, port, timeout_s)
        self._finalizer = weakref.finalize(self, _close, self._sock, server)
        try:
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sock.settimeout(max(timeout_s, _auth.handshake_timeout_s()))
            self._reader = FrameReader(self._sock)
            _auth.dial(self._sock, self._reader, auth, {"peer": _CLIENT_PEER},
                       f"the rendezvous store at {host}:{port}")
        except BaseException:
            self.close()
            raise

    @property
    def local_address(self) -> str:
        """This host's address on the route to the store (an address the store's other
        clients can reach this host at, when they reach the store the same way)."""
        return self._sock.getsockname()[0]

    def _call(self, op: str, *args: Any, wait_s: float = 0.0) -> Any:
        """One request and its answer; a server-side error raises ``DistStoreError``."""
        with self._lock:
            self._next_id += 1
            try:
                self._sock.settimeout(wait_s + max(self._timeout_s, 5.0))
                _send(self._sock, wire.REQUEST, {"id": self._next_id, "m": op, "a": list(args)})
                kind, meta_len, payload_len = wire.decode_header(
                    self._reader.read(wire.HEADER.size), _MAX_REQUEST_BYTES)
                reply = wire.unpack(self._reader.read(meta_len), "rendezvous store reply")
            except (OSError, ConnectionError, OpError) as exc:
                self._sock.close()  # out of step with the server: no later call may use it
                raise dist.DistStoreError(f"rendezvous store at {self.host}:{self.port}: {op} "
                                          f"failed ({exc})") from None
        if kind != wire.RESPONSE or payload_len or not isinstance(reply, dict):
            raise dist.DistStoreError(f"malformed reply from the rendezvous store at "
                                      f"{self.host}:{self.port}")
        if reply.get("e") is not None:
            error = wire.decode_error(reply["e"])
            raise dist.DistStoreError(f"rendezvous store {op}: {error.message}")
        return reply.get("r")

    def _wait_s(self, timeout: Any = None) -> float:
        return _seconds(timeout, self._timeout_s)

    # --- torch.distributed.Store -------------------------------------------------------------
    def set(self, key: str, value: Any) -> None:
        self._call("set", key, _text(value))

    def get(self, key: str) -> bytes:
        wait_s = self._wait_s()
        return bytes(self._call("get", key, wait_s, wait_s=wait_s))

    def add(self, key: str, amount: int) -> int:
        return int(self._call("add", key, int(amount)))

    def compare_set(self, key: str, expected: Any, desired: Any) -> bytes:
        return bytes(self._call("compare_set", key, _text(expected), _text(desired)))

    def check(self, keys: Sequence[str]) -> bool:
        return bool(self._call("check", [str(k) for k in keys]))

    def wait(self, keys: Sequence[str], timeout: Any = None) -> None:
        wait_s = self._wait_s(timeout)
        self._call("wait", [str(k) for k in keys], wait_s, wait_s=wait_s)

    def delete_key(self, key: str) -> bool:
        return bool(self._call("delete_key", key))

    def num_keys(self) -> int:
        return int(self._call("num_keys"))

    def clone(self) -> StoreClient:
        """A new connection to the same server (torch clones stores for its threads)."""
        return StoreClient(self.host, self.port, self._auth, self._timeout_s)

    def close(self) -> None:
        """Closes the connection (and the server, when this client owns it)."""
        self._finalizer()


def _close(sock: socket.socket, server: StoreServer | None) -> None:
    try:
        sock.close()
    finally:
        if server is not None:
            server.close()
