"""A task's one listening port, shared by its two planes (as TensorFlow's one gRPC port).

A flowmesh task speaks gRPC for control calls and its own framed protocol for tensors
(:mod:`flowmesh.distributed.data_plane`). Both arrive on the port the cluster spec lists
for the task, so a firewall or a container's port map needs that one port open, and the
address peers dial is always the one in the cluster spec.

The first bytes a dialer sends say which plane it wants:

* ``FMDP`` (the data plane's frame magic: a dialer opens with a ``HELLO`` frame): the
  socket is handed to the data plane;
* ``PRI `` (HTTP/2's connection preface) or ``0x16`` (a TLS handshake record): the bytes
  are relayed to and from the task's gRPC server, which listens on an abstract Unix
  socket of its own (it leaves no file behind, even when the process is killed; the
  cluster secret is checked by gRPC itself, whichever way a call arrives);
* anything else, or nothing within ``FLOWMESH_HANDSHAKE_TIMEOUT_S``: the connection is
  closed.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable

from flowmesh import config as _config
from flowmesh.distributed import protocol as wire
from flowmesh.errors import UnavailableError

log = logging.getLogger("flowmesh.distributed")

_GRPC_PREFACES = (b"PRI ",)  # HTTP/2's client connection preface
_TLS_RECORD = 0x16  # a TLS handshake record: gRPC over TLS
_RELAY_CHUNK = 256 << 10

DataHandler = Callable[[socket.socket, tuple], None]


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one).

    Raises:
        UnavailableError: the address is in use or not an address of this host.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        shown = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
        hint = " (another process holds the port)" if exc.errno == 98 else ""
        raise UnavailableError(None, None, f"Cannot listen on {shown}: {exc.strerror or exc}{hint}") from None
    sock.listen(128)
    return sock


def keep_alive(sock: socket.socket, idle_s: int = 30, interval_s: int = 10, count: int = 3) -> None:
    """TCP keepalive on ``sock``: a peer whose host vanished (no reset) is found dead
    after ``idle_s + interval_s * count`` seconds of silence instead of never."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", idle_s), ("TCP_KEEPINTVL", interval_s), ("TCP_KEEPCNT", count)):
        if hasattr(socket, name):
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)


class TaskPort:
    """Accepts on ``host:port`` and routes each connection to its plane.

    Args:
        host / port: where to listen (port 0: a free port, see :attr:`port`).
        on_data: ``fn(socket, peer address)`` for data-plane connections.
        grpc: serve gRPC too: :attr:`grpc_target` is the (abstract) Unix socket the gRPC
            server must listen on; connections are relayed to it.
    """

    def __init__(self, host: str, port: int, on_data: DataHandler, grpc: bool = False):
        self._on_data = on_data
        self._listener = listen_socket(host, port)
        self.port: int = self._listener.getsockname()[1]
        self._grpc_name = f"flowmesh-grpc-{os.getpid()}-{secrets.token_hex(8)}" if grpc else None
        self.grpc_target = f"unix-abstract:{self._grpc_name}" if self._grpc_name else None
        self._closed = False
        self._relays: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept_loop, daemon=True, name=f"flowmesh-port-{self.port}").start()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                sock, addr = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._route, args=(sock, addr), daemon=True,
                             name=f"flowmesh-port-{self.port}-route").start()

    def _route(self, sock: socket.socket, addr: tuple) -> None:
        kind = _first_bytes(sock, _config.HANDSHAKE_TIMEOUT_S.get())
        if kind == wire.MAGIC:
            self._on_data(sock, addr)
        elif kind and self.grpc_target and (kind in _GRPC_PREFACES or kind[0] == _TLS_RECORD):
            self._relay(sock)
        else:
            log.debug("closed a connection from %s:%s to port %d that spoke neither gRPC nor "
                      "the data plane (first bytes %r)", addr[0], addr[1], self.port, kind)
            sock.close()

    # --- the gRPC relay ----------------------------------------------------------------------
    def _relay(self, outer: socket.socket) -> None:
        """Pumps bytes between ``outer`` and a fresh connection to the gRPC server, one
        thread per direction; each direction's end is passed on as a half close."""
        assert self._grpc_name is not None
        inner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            inner.connect("\0" + self._grpc_name)
        except OSError as exc:
            log.warning("port %d: the gRPC server does not answer (%s); closing a connection",
                        self.port, exc)
            inner.close()
            outer.close()
            return
        outer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        keep_alive(outer)
        with self._lock:
            if self._closed:
                inner.close()
                outer.close()
                return
            self._relays.update((outer, inner))
        back = threading.Thread(target=_pump, args=(inner, outer), daemon=True,
                                name=f"flowmesh-port-{self.port}-relay")
        back.start()
        _pump(outer, inner)
        back.join()
        with self._lock:
            self._relays.difference_update((outer, inner))
        outer.close()
        inner.close()

    def close(self) -> None:
        """Stops accepting and cuts every relayed connection."""
        with self._lock:
            self._closed = True
            relays = list(self._relays)
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        for sock in relays:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _first_bytes(sock: socket.socket, timeout: float) -> bytes:
    """The connection's first 4 bytes, left unread (empty: none came in time)."""
    sock.settimeout(timeout)
    try:
        data = sock.recv(4, socket.MSG_PEEK | socket.MSG_WAITALL)
    except OSError:
        return b""
    finally:
        try:
            sock.settimeout(None)
        except OSError:
            pass
    return data if len(data) == 4 or (data[:1] == bytes([_TLS_RECORD])) else b""


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copies ``source`` to ``sink`` until ``source`` ends, then half-closes ``sink``; a
    broken socket cuts both directions."""
    buf = bytearray(_RELAY_CHUNK)
    view = memoryview(buf)
    how = socket.SHUT_WR
    try:
        while True:
            n = source.recv_into(buf)
            if not n:
                break
            sink.sendall(view[:n])
    except OSError:
        how = socket.SHUT_RDWR
        try:
            source.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    try:
        sink.shutdown(how)
    except OSError:
        pass
