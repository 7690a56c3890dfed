"""Byte-level pieces of the data plane: exact buffered reads, scatter/gather writes,
and the per-plane byte counters."""

from __future__ import annotations

import socket
import threading
import time

RECV_CHUNK = 256 * 1024
_IOV_MAX = 512


class Stats:
    """Byte and message counters of one data plane (thread safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent = [0, 0, 0]  # bytes, tensor bytes, frames
        self._received = [0, 0, 0]

    def sent(self, nbytes: int, tensor_bytes: int) -> None:
        self._count(self._sent, nbytes, tensor_bytes)

    def received(self, nbytes: int, tensor_bytes: int) -> None:
        self._count(self._received, nbytes, tensor_bytes)

    def _count(self, counts: list[int], nbytes: int, tensor_bytes: int) -> None:
        with self._lock:
            counts[0] += nbytes
            counts[1] += tensor_bytes
            counts[2] += 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            (bs, ts, fs), (br, tr, fr) = self._sent, self._received
        return {"bytes_sent": bs, "bytes_received": br, "tensor_bytes_sent": ts,
                "tensor_bytes_received": tr, "frames_sent": fs, "frames_received": fr}


class FrameReader:
    """Buffered exact reads from a socket; large payloads go straight into their tensors."""

    def __init__(self, sock: socket.socket):
        self._sock = sock
        # a monotonic time by which every read must be done (handshakes: a peer that
        # dribbles bytes cannot hold the connection past it); None: no deadline
        self.deadline: float | None = None
        self._buf = bytearray(RECV_CHUNK)
        self._view = memoryview(self._buf)
        self._start = 0
        self._end = 0

    def _recv_into(self, view: memoryview) -> int:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the read's deadline passed")
            self._sock.settimeout(left)
        return self._sock.recv_into(view)

    def buffered(self) -> int:
        """Bytes already received but not yet consumed."""
        return self._end - self._start

    def _fill(self) -> None:
        if self._start == self._end:
            self._start = self._end = 0
        elif self._start > RECV_CHUNK // 2:
            n = self._end - self._start
            self._buf[:n] = self._buf[self._start:self._end]
            self._start, self._end = 0, n
        got = self._recv_into(self._view[self._end:])
        if got == 0:
            raise ConnectionError("peer closed the connection")
        self._end += got

    def read(self, n: int) -> bytes:
        if n > RECV_CHUNK // 2:  # memory grows with what arrives, not with what is announced
            out = bytearray()
            while len(out) < n:
                chunk = bytearray(min(n - len(out), 1 << 20))
                self.read_into(memoryview(chunk))
                out += chunk
            return bytes(out)
        while self._end - self._start < n:
            self._fill()
        out = bytes(self._view[self._start:self._start + n])
        self._start += n
        return out

    def read_into(self, target: memoryview) -> None:
        n = len(target)
        have = min(n, self._end - self._start)
        if have:
            target[:have] = self._view[self._start:self._start + have]
            self._start += have
        pos = have
        while pos < n:
            got = self._recv_into(target[pos:])
            if got == 0:
                raise ConnectionError("peer closed the connection")
            pos += got

    def skip(self, n: int) -> None:
        scratch = memoryview(bytearray(min(n, 1 << 20) or 1))
        while n > 0:
            chunk = scratch[:min(n, len(scratch))]
            self.read_into(chunk)
            n -= len(chunk)


def send_all(sock: socket.socket, buffers: list[memoryview | bytes]) -> None:
    """Writes every buffer with ``sendmsg`` (scatter/gather, no concatenation)."""
    pending = [memoryview(b).cast("B") if not isinstance(b, bytes) else memoryview(b)
               for b in buffers if len(b)]
    while pending:
        sent = sock.sendmsg(pending[:_IOV_MAX])
        while sent:
            head = pending[0]
            if sent >= len(head):
                sent -= len(head)
                pending.pop(0)
            else:
                pending[0] = head[sent:]
                sent = 0
