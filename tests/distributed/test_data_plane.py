"""The tensor data plane: framing, dtypes, bad input, lost peers (in-process, real sockets)."""

from __future__ import annotations

import gc
import os
import socket
import threading
import time

import ml_dtypes
import numpy as np
import pytest
import torch

from flowmesh.distributed import auth, protocol, shm
from flowmesh.distributed.data_plane import DataPlane
from flowmesh.distributed.framing import FrameReader
from flowmesh.errors import DataLossError, InvalidArgumentError, UnavailableError


class Echo:
    """A data plane that answers 'echo' requests and records pushed tensors."""

    def __init__(self, **kwargs):
        self.tensors: list = []
        self.lost: list[str] = []
        self.got = threading.Event()
        self.plane = DataPlane("/job:echo/replica:0/task:0", on_tensor=self._tensor,
                               on_request=self._request, on_peer_lost=self._lost, **kwargs)

    def _tensor(self, step, key, value):
        self.tensors.append((step, key, value))
        self.got.set()

    def _request(self, conn, call_id, method, args, tensors):
        if method == "echo":
            conn.reply(call_id, args, tensors)
        elif method == "fail":
            raise InvalidArgumentError(None, None, "bad argument, as asked")
        else:
            raise ValueError(f"unknown method {method}")

    def _lost(self, peer, error):
        self.lost.append(peer)


@pytest.fixture
def planes():
    server = Echo(max_bytes=1 << 20)
    client = DataPlane("client:test", listen=False)
    yield server, client
    client.close()
    server.plane.close()


VALUES = [
    torch.arange(12, dtype=torch.float32).reshape(3, 4),
    torch.tensor(3.5, dtype=torch.float64),
    torch.tensor([True, False]),
    torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
    torch.zeros((0, 7), dtype=torch.int64),
    torch.arange(6, dtype=torch.int32).reshape(2, 3).t(),  # non-contiguous
    np.array([b"ab", b"", b"\xff"], dtype=object),
    np.array([[1, 2]], dtype=np.uint8),
    np.array([0.25], dtype=ml_dtypes.bfloat16),
    None,
]


def test_request_roundtrip_keeps_every_dtype(planes):
    server, client = planes
    result, values = client.call(server.plane.address, "echo", {"k": [1, "x"]}, VALUES, timeout=10)
    assert result == {"k": [1, "x"]}
    for sent, got in zip(VALUES, values):
        if sent is None:
            assert got is None
        elif isinstance(sent, np.ndarray) and sent.dtype == object:
            assert got.tolist() == sent.tolist()
        else:
            expected = torch.as_tensor(np.asarray(sent, dtype=np.float32)) if isinstance(sent, np.ndarray) \
                and sent.dtype == ml_dtypes.bfloat16 else torch.as_tensor(sent)
            assert tuple(got.shape) == tuple(expected.shape)
            assert torch.equal(got.to(expected.dtype), expected)


def test_errors_keep_their_type(planes):
    server, client = planes
    with pytest.raises(InvalidArgumentError, match="as asked"):
        client.call(server.plane.address, "fail", None, timeout=10)
    with pytest.raises(Exception, match="unknown method"):
        client.call(server.plane.address, "nope", None, timeout=10)
    assert client.call(server.plane.address, "echo", 1, timeout=10)[0] == 1


def test_pushed_tensors_arrive_with_step_and_key(planes):
    server, client = planes
    client.send_tensor(server.plane.address, 42, ("w/read:0", "/a", "/b", False), torch.ones(3))
    assert server.got.wait(10)
    step, key, value = server.tensors[0]
    assert step == 42 and key == ("w/read:0", "/a", "/b", False) and value.tolist() == [1, 1, 1]
    assert server.plane.stats.snapshot()["tensor_bytes_received"] == 12


def test_oversized_tensor_is_refused_and_server_keeps_serving(planes):
    server, client = planes
    with pytest.raises((UnavailableError, DataLossError, Exception)):
        client.call(server.plane.address, "echo", None, [torch.zeros(1 << 19)], timeout=10)
    other = DataPlane("client:other", listen=False)
    try:
        assert other.call(server.plane.address, "echo", "still here", timeout=10)[0] == "still here"
    finally:
        other.close()


def _raw(address: str) -> socket.socket:
    """A raw socket past the (secret-less) handshake: what follows is parsed as frames."""
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    hello = {"peer": "raw", "host": "", "shm": False}
    auth.dial(sock, FrameReader(sock), auth.ClusterAuth(None), hello, address)
    return sock


def _read_error(sock: socket.socket) -> str:
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    header = protocol.HEADER.unpack(data[:protocol.HEADER.size])
    assert header[2] == protocol.ERROR
    meta = protocol.unpack(data[protocol.HEADER.size:protocol.HEADER.size + header[4]])
    return meta["e"]["message"]


@pytest.mark.parametrize("frame, text", [
    (b"GARBAGE-GARBAGE-GARBAGE", "magic"),
    (protocol.encode_header(protocol.REQUEST, 4, 0) + b"\xc1\xc1\xc1\xc1", "Malformed"),
    (protocol.encode_header(protocol.REQUEST, 10, 1 << 30), "exceeds"),
    (protocol.encode_header(protocol.TENSOR, len(protocol.pack({"t": [["float32", [4], 99]]})), 99)
     + protocol.pack({"t": [["float32", [4], 99]]}), "expected 16"),
])
def test_malformed_frames_get_an_error_and_the_server_survives(planes, frame, text):
    server, client = planes
    sock = _raw(server.plane.address)
    sock.sendall(frame)
    assert text in _read_error(sock)
    sock.close()
    assert client.call(server.plane.address, "echo", "alive", timeout=10)[0] == "alive"


def test_lost_peer_fails_pending_calls_and_is_reported():
    slow = threading.Event()
    server = Echo()
    server.plane._on_request = lambda conn, cid, m, a, t: slow.wait(5)  # never answers
    client = DataPlane("/job:client/replica:0/task:0", listen=False)
    try:
        future = client.connection(server.plane.address).call("hang", None)
        time.sleep(0.2)
        server.plane.close()
        with pytest.raises(UnavailableError, match="lost"):
            future.result(10)
    finally:
        slow.set()
        client.close()


def test_peer_lost_callback_names_the_peer():
    server = Echo()
    client = DataPlane("/job:worker/replica:0/task:3", listen=False)
    try:
        client.call(server.plane.address, "echo", 1, timeout=10)
        client.close()
        deadline = time.monotonic() + 5
        while not server.lost and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.lost == ["/job:worker/replica:0/task:3"]
    finally:
        server.plane.close()


def test_unreachable_address_is_unavailable():
    client = DataPlane("client:x", listen=False)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(UnavailableError, match="Cannot connect"):
        client.call(f"127.0.0.1:{port}", "echo", None, timeout=2)


def _shm_files() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith(f"flowmesh-{os.getpid()}-")}


def _wait_until_released(conn, timeout: float = 5.0) -> None:
    """Until the peer has given back every segment this side lent it (its receiver's
    tensor died, a background thread sent RELEASE)."""
    deadline = time.monotonic() + timeout
    while conn._arena is not None and conn._arena._lent and time.monotonic() < deadline:
        time.sleep(0.005)


@pytest.mark.skipif(not shm.available(), reason="no /dev/shm")
def test_large_tensors_to_same_host_peers_use_shared_memory(planes):
    server, client = planes
    server.plane.max_bytes = 64 << 20
    big = torch.arange(1 << 20, dtype=torch.float32)  # 4 MB
    for _ in range(3):
        _, (echoed,) = client.call(server.plane.address, "echo", None, [big], timeout=10)
        assert torch.equal(echoed, big)
        del echoed
        _wait_until_released(client.connection(server.plane.address))
    stats = server.plane.stats.snapshot()
    assert stats["tensor_bytes_received"] < 1 << 20  # the 4 MB never went through the socket
    gc.collect()
    deadline = time.monotonic() + 5
    while _shm_files() and time.monotonic() < deadline:  # receivers unlink what they mapped
        time.sleep(0.02)
    assert not _shm_files()
    conn = client.connection(server.plane.address)
    assert conn.shared_memory and conn._arena is not None
    assert conn._arena._total == 4 << 20  # one segment, released and reused by every call


def test_shared_memory_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("FLOWMESH_SHM_TRANSPORT", "0")
    server = Echo()
    client = DataPlane("client:tcp", listen=False)
    try:
        big = torch.ones(1 << 20)
        _, (echoed,) = client.call(server.plane.address, "echo", None, [big], timeout=10)
        assert torch.equal(echoed, big)
        assert server.plane.stats.snapshot()["tensor_bytes_received"] == 4 << 20
    finally:
        client.close()
        server.plane.close()
