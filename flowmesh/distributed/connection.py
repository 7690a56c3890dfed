"""One data-plane connection: framing on a TCP socket, calls and replies, and who reads.

A :class:`Connection` carries every frame kind of :mod:`flowmesh.distributed.protocol`
between two endpoints. Its owner, :class:`~flowmesh.distributed.data_plane.DataPlane`,
accepts and dials connections and routes what they receive (pushed tensors, requests,
lost peers).
"""

from __future__ import annotations

import itertools
import logging
import os
import select
import socket
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from flowmesh.distributed import auth as _auth
from flowmesh.distributed import protocol as wire
from flowmesh.distributed import shm
from flowmesh.distributed.framing import FrameReader, send_all
from flowmesh.errors import (
    DataLossError,
    DeadlineExceededError,
    OpError,
    UnauthenticatedError,
    UnavailableError,
)

if TYPE_CHECKING:
    from flowmesh.distributed.data_plane import DataPlane

log = logging.getLogger("flowmesh.distributed")

# The reader thread stays parked this long after the last waiting caller left: a stream of
# calls keeps it asleep, and anything arriving unasked meanwhile waits at most this long.
_LINGER_S = 0.05
_JOIN_BELOW = 64 << 10  # smaller frames are joined into one buffer: cheaper than scatter/gather


class Call(Future):
    """A pending request on a connection; :func:`wait` reads its reply in the waiting thread."""

    def __init__(self, connection: Connection):
        super().__init__()
        self.connection = connection


class Connection:
    """One TCP connection to a peer; both ends may send any frame kind on it.

    Reading the socket is a role that one thread holds at a time. The connection's reader
    thread takes it for whatever arrives unasked (requests, pushed tensors, releases). A
    thread that blocks on a reply (:meth:`wait`) reads the socket itself and the reader
    thread stays parked meanwhile, so a reply wakes one thread instead of two (the reader,
    then the waiter): on a small VM each wake-up costs 100-200 us, more than the rest of a
    small round trip.

    The side that dialed a connection sends its requests and pushed tensors; the other
    side only answers (responses, heartbeat replies, shared-memory releases). So what
    arrives unasked on a connection that callers read is never on anyone's critical path,
    and the reader thread may linger parked between calls.
    """

    def __init__(self, plane: DataPlane, sock: socket.socket, address: str, accepted: bool = False):
        self.plane = plane
        self.accepted = accepted  # the other side dialed: the handshake runs in start()
        self.sock = sock
        self.address = address
        self.peer = ""
        self._send_lock = threading.Lock()
        self._pending: dict[int, Future] = {}
        self._pending_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed: BaseException | None = None
        self.hello = threading.Event()
        self.shared_memory = False  # set by the handshake: same host, both sides willing
        self._ping: tuple[float, Future] | None = None  # the heartbeat in flight
        self._arena: shm.Arena | None = None
        self._mapper: shm.Mapper | None = None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._frames = FrameReader(sock)
        self._lock = threading.Lock()  # guards the read role's fields below
        self._role_free = threading.Condition(self._lock)  # callers wait here for the role
        self._park = threading.Condition(self._lock)  # the reader thread waits here
        self._reading = False  # a thread holds the read role
        self._callers = 0  # threads in wait(): they read, the reader thread parks
        self._callers_seen = False  # a thread has waited on a reply here
        self._last_wait_end = -_LINGER_S
        self._polling = False  # the reader thread is blocked in poll()
        self._kick = os.eventfd(0, os.EFD_NONBLOCK)  # wakes the reader thread out of poll()
        self._reader = threading.Thread(target=self._run, daemon=True,
                                        name=f"flowmesh-dataplane-{address}")

    def start(self) -> None:
        self._reader.start()

    def handshake(self) -> None:
        """Authenticates the peer (:mod:`flowmesh.distributed.auth`) before any other frame
        is read; the dialing side calls it before :meth:`start`, the accepting side's
        reader thread runs it first.

        Raises:
            UnauthenticatedError / DataLossError / OSError: the peer was refused.
        """
        step = _auth.accept if self.accepted else _auth.dial
        self.sock.settimeout(_auth.handshake_timeout_s())
        try:
            meta = step(self.sock, self._frames, self.plane.auth, self.plane.hello(), self.address)
        except TimeoutError:
            raise ConnectionError("no data-plane handshake within "
                                  f"{_auth.handshake_timeout_s():g} s") from None
        finally:
            if self._closed is None:
                self.sock.settimeout(None)
        self.peer = str(meta.get("peer", ""))
        self.shared_memory = bool(meta.get("shm")) and meta.get("host") == self.plane.host_id \
            and self.plane.shared_memory
        self.hello.set()

    def _run(self) -> None:
        if self.accepted:
            try:
                self.handshake()
            except (OpError, OSError, ConnectionError) as exc:
                message = exc.message if isinstance(exc, OpError) else str(exc)
                log.warning("refused a data-plane connection from %s: %s", self.address, message)
                if isinstance(exc, OpError) and not isinstance(exc, UnauthenticatedError):
                    try:  # malformed input: say why (a refused secret was said already)
                        self.send_frame(wire.ERROR, {"e": wire.encode_error(exc)})
                    except OpError:
                        pass
                self._close(exc)
                self._drop_kick()
                return
        self._read_loop()

    def _drop_kick(self) -> None:
        with self._lock:
            if self._kick >= 0:
                os.close(self._kick)
                self._kick = -1

    @property
    def closed(self) -> bool:
        return self._closed is not None

    # --- sending -----------------------------------------------------------------------
    def send_frame(self, kind: int, meta: dict[str, Any], tensors: Sequence[Any] = ()) -> None:
        """Sends one frame; ``tensors`` are runtime values described in ``meta["t"]``.

        Raises:
            UnavailableError: the connection is closed or broke while sending.
        """
        descs, buffers, payload = [], [], 0
        for value in tensors:
            desc, raw = wire.tensor_desc(value)
            descs.append(desc)
            if raw is not None and raw.nbytes:
                name = self._to_shared_memory(raw) if raw.nbytes >= shm.MIN_BYTES else None
                if name is not None:
                    desc.append(name)
                    continue
                buffers.append(raw)
                payload += raw.nbytes
        if tensors:
            meta["t"] = descs
        meta_bytes = wire.pack(meta)
        header = wire.encode_header(kind, len(meta_bytes), payload)
        with self._send_lock:
            if self._closed is not None:
                raise UnavailableError(None, None, f"Connection to {self.describe()} is closed: {self._closed}")
            try:
                if payload < _JOIN_BELOW:
                    self.sock.sendall(b"".join((header, meta_bytes, *buffers)))
                else:
                    send_all(self.sock, [header, meta_bytes, *buffers])
            except OSError as exc:
                self._close(exc)
                raise UnavailableError(
                    None, None, f"Lost connection to {self.describe()} while sending: {exc}"
                ) from None
        self.plane.stats.sent(len(header) + len(meta_bytes) + payload, payload)

    def heartbeat(self, now: float, timeout: float) -> None:
        """Pings the peer while calls to it are pending; closes the connection (failing
        those calls with UnavailableError) when a ping stays unanswered for ``timeout``."""
        with self._pending_lock:
            waiting = any(f is not (self._ping[1] if self._ping else None) for f in self._pending.values())
        ping = self._ping
        if ping is not None and not ping[1].done():
            if now - ping[0] > timeout:
                self._close(ConnectionError(
                    f"no heartbeat from {self.describe()} for {timeout:g} s (FLOWMESH_RPC_DEADLINE_S); "
                    "the process is hung or the network is partitioned"))
            return
        self._ping = (now, self.call("Ping", None)) if waiting else None

    def _to_shared_memory(self, raw: memoryview) -> str | None:
        if not self.shared_memory:
            return None
        if self._arena is None:
            self._arena = shm.Arena()
        return self._arena.write(raw)

    def call(self, method: str, args: Any, tensors: Sequence[Any] = ()) -> Future:
        """Sends a REQUEST; the future resolves to ``(result, tensors)`` or an OpError."""
        call_id = next(self._ids)
        future = Call(self)
        with self._pending_lock:
            if self._closed is not None:
                future.set_exception(UnavailableError(
                    None, None, f"Connection to {self.describe()} is closed: {self._closed}"))
                return future
            self._pending[call_id] = future
        try:
            self.send_frame(wire.REQUEST, {"id": call_id, "m": method, "a": args}, tensors)
        except BaseException as exc:
            with self._pending_lock:
                self._pending.pop(call_id, None)
            if not future.done():
                future.set_exception(exc)
        return future

    def reply(self, call_id: int, result: Any, tensors: Sequence[Any] = ()) -> None:
        """Answers a REQUEST (best effort: a closed connection drops the reply)."""
        try:
            self.send_frame(wire.RESPONSE, {"id": call_id, "r": result, "e": None}, tensors)
        except OpError as exc:
            try:
                self.send_frame(wire.RESPONSE, {"id": call_id, "r": None, "e": wire.encode_error(exc)})
            except OpError:
                log.debug("dropping reply %s to %s: %s", call_id, self.describe(), exc)

    def reply_error(self, call_id: int, exc: BaseException) -> None:
        try:
            self.send_frame(wire.RESPONSE, {"id": call_id, "r": None, "e": wire.encode_error(exc)})
        except OpError:
            log.debug("dropping error reply %s to %s", call_id, self.describe())

    # --- receiving ---------------------------------------------------------------------
    def wait(self, future: Future, timeout: float | None) -> None:
        """Blocks until ``future`` (a call on this connection) resolves or ``timeout``
        seconds pass, reading the socket in this thread whenever no other thread does."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._callers += 1
            self._callers_seen = True
            if self._polling:
                self._kick_reader()
        try:
            while not future.done():
                with self._lock:
                    while self._reading and not future.done():
                        if not self._role_free.wait(_remaining(deadline)):
                            return
                    if future.done() or self._closed is not None:
                        return
                    self._reading = True
                try:
                    while not future.done():
                        if deadline is not None and not self._frames.buffered() \
                                and not _readable_within(self.sock, deadline):
                            return
                        if not self._read_one():
                            return
                finally:
                    self._give_back_role()
        finally:
            with self._lock:
                self._callers -= 1
                self._last_wait_end = time.monotonic()

    def _read_loop(self) -> None:
        """The reader thread: reads what arrives while no caller is waiting on a reply.

        Until a caller first waits on this connection (most connections only ever serve
        requests) it simply blocks in ``recv``, holding the role; from then on it waits in
        ``poll()`` without the role, so that callers can take it."""
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        poller.register(self._kick, select.POLLIN)
        try:
            while self._await_turn(poller):
                try:
                    while self._read_one() and not self._callers \
                            and (not self._callers_seen or self._frames.buffered()):
                        pass
                finally:
                    self._give_back_role()
        finally:
            self._drop_kick()

    def _await_turn(self, poller: select.poll) -> bool:
        """Returns holding the read role, with input waiting once callers read this
        connection; False once the connection is closed."""
        with self._lock:
            if self._closed is not None:
                return False
            if not self._callers_seen and not self._reading:
                self._reading = True
                return True
        return self._await_input(poller)

    def _await_input(self, poller: select.poll) -> bool:
        """Parks while callers read (and for ``_LINGER_S`` after, so that back-to-back
        calls do not wake it), polls while nothing has arrived; returns holding the read
        role with input waiting, or False once the connection is closed."""
        readable = False  # poll() saw input on the socket (or EOF, or an error)
        while True:
            with self._lock:
                while self._closed is None and self._callers_active():
                    readable = False  # a caller may have read it meanwhile
                    self._park.wait(_LINGER_S)
                if self._closed is not None:
                    return False
                if readable or self._frames.buffered():
                    self._reading = True
                    return True
                self._polling = True
            events = poller.poll()
            with self._lock:
                self._polling = False
            readable = False
            for fd, _ in events:
                if fd == self._kick:
                    os.eventfd_read(self._kick)
                else:
                    readable = True

    def _callers_active(self) -> bool:
        return self._reading or self._callers > 0 or time.monotonic() - self._last_wait_end < _LINGER_S

    def _kick_reader(self) -> None:
        if self._kick >= 0:
            os.eventfd_write(self._kick, 1)

    def _give_back_role(self) -> None:
        with self._lock:
            self._reading = False
            self._role_free.notify_all()

    def _read_one(self) -> bool:
        """Reads and dispatches one frame (the caller holds the read role); False once the
        connection is closed, by this read or before it."""
        if self._closed is not None:
            return False
        try:
            self._read_frame()
            return True
        except (OSError, ConnectionError) as exc:
            error: BaseException = exc
        except OpError as exc:  # malformed or oversized input: tell the peer, then close
            error = exc
            log.warning("closing data-plane connection from %s: %s", self.describe(), exc.message)
            try:
                self.send_frame(wire.ERROR, {"e": wire.encode_error(exc)})
            except OpError:
                pass
        except Exception as exc:  # noqa: BLE001 - a handler bug must not kill the server
            error = exc
            log.exception("data-plane reader for %s failed", self.describe())
        self._close(error)
        return False

    def _read_frame(self) -> None:
        reader = self._frames
        limit = self.plane.max_bytes
        kind, meta_len, payload_len = wire.decode_header(reader.read(wire.HEADER.size), limit)
        meta = wire.unpack(reader.read(meta_len), "data-plane frame meta")
        if not isinstance(meta, dict):
            raise DataLossError(None, None, "Data-plane frame meta is not a map")
        values = self._read_tensors(meta.get("t"), payload_len)
        self.plane.stats.received(wire.HEADER.size + meta_len + payload_len, payload_len)
        self._dispatch(kind, meta, values)

    def _read_tensors(self, descs: Any, payload_len: int) -> list[Any]:
        if descs is None:
            descs = []
        if not isinstance(descs, list):
            raise DataLossError(None, None, "Tensor descriptors must be a list")
        for desc in descs:
            wire.check_desc(desc, self.plane.max_bytes)
        if sum(wire.payload_size(d) for d in descs) != payload_len:
            raise DataLossError(None, None, "Frame payload length does not match its tensors")
        values = []
        for desc in descs:
            if desc is not None and len(desc) == 4:
                values.append(self._attach(desc))
                continue
            value, target = wire.allocate(desc)
            if target is not None:
                self._frames.read_into(target)
            values.append(value)
        return values

    def _attach(self, desc: list[Any]) -> Any:
        if self._mapper is None:
            if not shm.available():
                raise DataLossError(None, None, "Peer sent a shared-memory tensor, but this host has no /dev/shm")
            self._mapper = shm.Mapper(lambda names: self.send_frame(wire.RELEASE, {"names": names}))
        name, shape, nbytes, segment = desc
        return self._mapper.attach(segment, nbytes, wire.torch_dtype_of(name), shape)

    def _dispatch(self, kind: int, meta: dict[str, Any], values: list[Any]) -> None:
        if kind == wire.TENSOR:
            step, key = meta.get("step"), meta.get("key")
            if not isinstance(step, int) or not isinstance(key, list) or len(values) != 1:
                raise DataLossError(None, None, "Malformed TENSOR frame")
            self.plane.on_tensor(step, tuple(key), values[0])
        elif kind == wire.REQUEST:
            call_id, method = meta.get("id"), meta.get("m")
            if not isinstance(call_id, int) or not isinstance(method, str):
                raise DataLossError(None, None, "Malformed REQUEST frame")
            if method == "Ping":  # heartbeats are answered by the reader itself
                self.reply(call_id, None)
                return
            try:
                self.plane.on_request(self, call_id, method, meta.get("a"), values)
            except Exception as exc:  # noqa: BLE001 - becomes the error reply
                self.reply_error(call_id, exc)
        elif kind == wire.RESPONSE:
            self._resolve(meta, values)
        elif kind == wire.HELLO:  # only the handshake says who a peer is
            raise DataLossError(None, None, "Unexpected HELLO after the data-plane handshake")
        elif kind == wire.RELEASE:
            names = meta.get("names")
            if self._arena is not None and isinstance(names, list):
                self._arena.release(names)
        elif kind == wire.ERROR:
            raise ConnectionError(f"peer reported: {wire.decode_error(meta.get('e')).message}")

    def _resolve(self, meta: dict[str, Any], values: list[Any]) -> None:
        with self._pending_lock:
            future = self._pending.pop(meta.get("id"), None)
        if future is None or future.done():
            return
        if meta.get("e") is not None:
            future.set_exception(wire.decode_error(meta["e"]))
        else:
            future.set_result((meta.get("r"), values))
        if self._callers:  # a caller may be waiting for the role, or for exactly this reply
            with self._lock:
                self._role_free.notify_all()

    # --- lifecycle ---------------------------------------------------------------------
    def describe(self) -> str:
        return f"{self.peer} at {self.address}" if self.peer else self.address

    def _close(self, error: BaseException) -> None:
        with self._pending_lock:
            if self._closed is not None:
                return
            self._closed = error
            pending, self._pending = self._pending, {}
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        if self._arena is not None:
            self._arena.close()
        if self._mapper is not None:
            self._mapper.close()
        lost = UnavailableError(None, None, f"Connection to {self.describe()} was lost: {error}")
        for future in pending.values():
            if not future.done():
                future.set_exception(lost)
        self.hello.set()
        with self._lock:
            self._role_free.notify_all()
            self._park.notify_all()
        if self._reader.ident is None:  # never started: no reader thread will close it
            self._drop_kick()
        self.plane._forget(self, lost)

    def close(self) -> None:
        self._close(ConnectionError("closed locally"))


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _readable_within(sock: socket.socket, deadline: float) -> bool:
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(max(0.0, deadline - time.monotonic()) * 1000))


def wait(future: Future, timeout: float | None, what: str) -> tuple[Any, list[Any]]:
    """The result of a call future, mapping a timeout to ``DeadlineExceededError``."""
    if isinstance(future, Call):
        future.connection.wait(future, timeout)
        timeout = 0
    try:
        return future.result(timeout)
    except TimeoutError:
        raise DeadlineExceededError(None, None, f"{what} did not answer within {timeout:.1f} s") from None
