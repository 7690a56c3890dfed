"""Who may talk to a job's servers: the cluster secret on both planes.

Every task of a job shares one secret (``FLOWMESH_CLUSTER_SECRET`` or the 0600 file
``FLOWMESH_CLUSTER_SECRET_FILE``; the launchers create one per job). With a secret:

* **gRPC** (control plane): every call carries the metadata ``flowmesh-token``, an HMAC
  of a fixed label under the secret; a server interceptor compares it in constant time
  and refuses the call (``UNAUTHENTICATED``) before its handler runs.
* **Data plane**: a connection starts with a challenge-response in ``HELLO`` frames,
  before any other frame is read (so before any tensor buffer is allocated). The dialer
  speaks first, so that the task's port can tell a data-plane connection from a gRPC one
  (:mod:`flowmesh.distributed.task_port`)::

      dialer -> acceptor   HELLO {"v": 1}
      acceptor -> dialer   HELLO {"v": 1, "nonce": nA, "auth": bool}
      dialer -> acceptor   HELLO {peer, host, shm, "nonce": nB,
                                  "mac": HMAC(secret, "dial" nA nB peer)}
      acceptor -> dialer   HELLO {peer, host, shm, "mac": HMAC(secret, "accept" nA nB peer)}

  Fresh nonces on both sides make a recorded handshake useless on another connection;
  each side proves it knows the secret. Handshake frames are at most
  :data:`HANDSHAKE_LIMIT` bytes and carry no tensors.

Without a secret (servers started by hand on loopback, as before) the same handshake
runs without MACs; a side that has a secret refuses a peer that has none. See
``docs/security.md`` for what this protects and what it does not.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import socket
import time
from collections.abc import Iterator
from typing import Any

from flowmesh import config as _config
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.framing import FrameReader
from flowmesh.errors import DataLossError, OpError, ResourceExhaustedError, UnauthenticatedError

TOKEN_METADATA = "flowmesh-token"
HANDSHAKE_LIMIT = 4096  # bytes of meta a handshake frame may announce
_NONCE_BYTES = 16
_TOKEN_LABEL = b"flowmesh grpc token v1"


class ClusterAuth:
    """The secret of a job (or its absence) and the proofs derived from it.

    Args:
        secret: the shared secret, or None for a job without one.
    """

    def __init__(self, secret: bytes | None):
        self._secret = secret or None
        self.token = self._hmac(_TOKEN_LABEL).hex() if self._secret else None

    @classmethod
    def from_config(cls) -> ClusterAuth:
        """The secret of this process's job (``flowmesh/config.py``)."""
        return cls(_config.cluster_secret())

    @property
    def enabled(self) -> bool:
        return self._secret is not None

    def _hmac(self, *parts: bytes) -> bytes:
        assert self._secret is not None
        mac = hmac.new(self._secret, digestmod=hashlib.sha256)
        for part in parts:
            mac.update(len(part).to_bytes(4, "little"))
            mac.update(part)
        return mac.digest()

    def check_token(self, token: Any) -> bool:
        """Whether a gRPC call's token is this job's (constant time)."""
        if self.token is None:
            return True
        if not isinstance(token, str):
            return False
        return hmac.compare_digest(token.encode(), self.token.encode())

    def mac(self, role: bytes, nonce_a: bytes, nonce_b: bytes, peer: str) -> bytes:
        return self._hmac(role, nonce_a, nonce_b, peer.encode())

    def verify(self, mac: Any, role: bytes, nonce_a: bytes, nonce_b: bytes, peer: str) -> bool:
        if not isinstance(mac, bytes):
            return False
        return hmac.compare_digest(mac, self.mac(role, nonce_a, nonce_b, peer))


# --- the data-plane handshake --------------------------------------------------------------
def _send(sock: socket.socket, kind: int, meta: dict[str, Any]) -> None:
    body = wire.pack(meta)
    sock.sendall(wire.encode_header(kind, len(body), 0) + body)


def _read_hello(reader: FrameReader, what: str) -> dict[str, Any]:
    """One handshake frame (small, no payload); an ERROR frame raises its error."""
    kind, meta_len, payload_len = wire.decode_header(reader.read(wire.HEADER.size), HANDSHAKE_LIMIT)
    if kind not in (wire.HELLO, wire.ERROR) or payload_len:
        raise DataLossError(None, None, f"Expected a HELLO from {what} (data-plane handshake)")
    meta = wire.unpack(reader.read(meta_len), "handshake")
    if not isinstance(meta, dict):
        raise DataLossError(None, None, f"Malformed handshake from {what}")
    if kind == wire.ERROR:
        raise wire.decode_error(meta.get("e"), f"{what} refused the connection: ")
    return meta


def _nonce(meta: dict[str, Any], what: str) -> bytes:
    nonce = meta.get("nonce")
    if not isinstance(nonce, bytes) or len(nonce) != _NONCE_BYTES:
        raise DataLossError(None, None, f"Malformed handshake nonce from {what}")
    return nonce


def _refuse(sock: socket.socket, exc: OpError) -> None:
    try:
        _send(sock, wire.ERROR, {"e": wire.encode_error(exc)})
    except OSError:
        pass


def handshake_timeout_s() -> float:
    """Seconds a connection has to complete its handshake (``FLOWMESH_HANDSHAKE_TIMEOUT_S``)."""
    return _config.HANDSHAKE_TIMEOUT_S.get()


def refuse_busy(sock: socket.socket, limit: int, what: str) -> None:
    """Closes a connection accepted beyond the connection limit, first telling the dialer
    why in one small ``ERROR`` frame (sent without blocking: a dialer that does not read
    costs nothing)."""
    exc = ResourceExhaustedError(
        None, None, f"{what} already has {limit} connections open, its limit "
        "(FLOWMESH_MAX_CONNECTIONS on that server); retry later, or raise the limit there")
    body = wire.pack({"e": wire.encode_error(exc)})
    try:
        sock.setblocking(False)
        sock.send(wire.encode_header(wire.ERROR, len(body), 0) + body)
    except OSError:
        pass
    finally:
        sock.close()


def _accept(sock: socket.socket, reader: FrameReader, auth: ClusterAuth, hello: dict[str, Any],
            what: str) -> dict[str, Any]:
    """The accepting side: challenge, check the dialer's proof, prove ourselves.

    Returns:
        The dialer's HELLO meta (``peer``, ``host``, ``shm``).

    Raises:
        UnauthenticatedError: the dialer does not know the secret (it was told so).
        DataLossError / OSError: a malformed handshake or a broken connection.
    """
    opening = _read_hello(reader, what)
    if opening.get("v") != 1:
        raise DataLossError(None, None, f"{what} speaks data-plane handshake version "
                            f"{opening.get('v')!r}; this server speaks 1 (mixed flowmesh versions?)")
    nonce_a = secrets.token_bytes(_NONCE_BYTES)
    _send(sock, wire.HELLO, {"v": 1, "nonce": nonce_a, "auth": auth.enabled})
    peer_hello = _read_hello(reader, what)
    nonce_b = _nonce(peer_hello, what)
    peer = peer_hello.get("peer")
    if not isinstance(peer, str):
        raise DataLossError(None, None, f"Handshake from {what} names no peer")
    if auth.enabled and not auth.verify(peer_hello.get("mac"), b"dial", nonce_a, nonce_b, peer):
        exc = UnauthenticatedError(
            None, None, "this data plane requires the job's cluster secret (FLOWMESH_CLUSTER_SECRET"
            "_FILE or FLOWMESH_CLUSTER_SECRET); the connection did not prove it")
        _refuse(sock, exc)
        raise exc
    reply = dict(hello)
    if auth.enabled:
        reply["mac"] = auth.mac(b"accept", nonce_a, nonce_b, str(hello["peer"]))
    _send(sock, wire.HELLO, reply)
    return peer_hello


def _dial(sock: socket.socket, reader: FrameReader, auth: ClusterAuth, hello: dict[str, Any],
          what: str) -> dict[str, Any]:
    """The dialing side: answer the challenge, check the acceptor's proof.

    Returns:
        The acceptor's HELLO meta (``peer``, ``host``, ``shm``).

    Raises:
        UnauthenticatedError: one side has the secret and the other does not (or a
            different one).
    """
    _send(sock, wire.HELLO, {"v": 1})
    challenge = _read_hello(reader, what)
    nonce_a = _nonce(challenge, what)
    if challenge.get("auth") and not auth.enabled:
        raise UnauthenticatedError(
            None, None, f"The data plane at {what} belongs to a job with a cluster secret; this "
            "process has none (set FLOWMESH_CLUSTER_SECRET_FILE or FLOWMESH_CLUSTER_SECRET)")
    nonce_b = secrets.token_bytes(_NONCE_BYTES)
    meta = dict(hello, nonce=nonce_b)
    if auth.enabled:
        meta["mac"] = auth.mac(b"dial", nonce_a, nonce_b, str(hello["peer"]))
    _send(sock, wire.HELLO, meta)
    reply = _read_hello(reader, what)
    peer = reply.get("peer")
    if not isinstance(peer, str):
        raise DataLossError(None, None, f"Handshake from {what} names no peer")
    if auth.enabled and not auth.verify(reply.get("mac"), b"accept", nonce_a, nonce_b, peer):
        raise UnauthenticatedError(
            None, None, f"The data plane at {what} did not prove it knows this job's cluster "
            "secret (a server of another job, or one started without the secret)")
    return reply


def accept(sock: socket.socket, reader: FrameReader, auth: ClusterAuth, hello: dict[str, Any],
           what: str) -> dict[str, Any]:
    """The accepting side of the handshake (:func:`_accept`), all of it within
    ``FLOWMESH_HANDSHAKE_TIMEOUT_S`` (a peer that dribbles bytes gets ``TimeoutError``).

    Returns:
        The dialer's HELLO meta (``peer``, ``host``, ``shm``).
    """
    with _deadline(reader):
        return _accept(sock, reader, auth, hello, what)


def dial(sock: socket.socket, reader: FrameReader, auth: ClusterAuth, hello: dict[str, Any],
         what: str) -> dict[str, Any]:
    """The dialing side of the handshake (:func:`_dial`), within the same deadline.

    Returns:
        The acceptor's HELLO meta (``peer``, ``host``, ``shm``).
    """
    with _deadline(reader):
        return _dial(sock, reader, auth, hello, what)


@contextlib.contextmanager
def _deadline(reader: FrameReader) -> Iterator[None]:
    reader.deadline = time.monotonic() + handshake_timeout_s()
    try:
        yield
    finally:
        reader.deadline = None
