"""A task's one port: data-plane dialers, gRPC clients and strangers on the same port."""

from __future__ import annotations

import socket
import time

import pytest

import flowmesh as tf
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.rpc import RpcClient
from flowmesh.distributed.task_port import TaskPort


@pytest.fixture
def server():
    server = tf.train.Server({"ps": ["localhost:0"]}, job_name="ps", task_index=0)
    yield server
    server.stop()


def _closed_without_answer(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        return sock.recv(64) == b""
    except ConnectionResetError:
        return True


def test_grpc_and_tensors_share_the_listed_port(server):
    address = server.target[len("grpc://"):]
    rpc = RpcClient(address, server.task_name)
    try:
        status = rpc.call("GetStatus", None, timeout=10)
    finally:
        rpc.close()
    assert status["data_port"] == int(address.rsplit(":", 1)[1])  # one port for both planes
    with tf.device("/job:ps/task:0"):
        total = tf.reduce_sum(tf.ones([1 << 20]))  # a step: RunCallable on the data plane
    with tf.Session(server.target) as sess:
        assert sess.run(total) == float(1 << 20)


@pytest.mark.parametrize("first_bytes", [b"GET / HTTP/1.1\r\n\r\n", b"FM"])
def test_strangers_and_silent_peers_are_closed_and_the_port_keeps_serving(server, first_bytes,
                                                                            monkeypatch):
    monkeypatch.setenv("FLOWMESH_HANDSHAKE_TIMEOUT_S", "1")
    host, port = server.target[len("grpc://"):].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.sendall(first_bytes)  # neither gRPC nor the data plane; or too few bytes to tell
    started = time.monotonic()
    assert _closed_without_answer(sock)
    assert time.monotonic() - started < 15  # the server's handshake timeout (10 s) at most
    sock.close()
    with tf.Session(server.target) as sess:
        assert sess.run(tf.constant(3.0)) == 3.0


def test_a_port_in_use_says_so():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(tf.errors.UnavailableError, match=f"127.0.0.1:{port}.*another process holds"):
            TaskPort("127.0.0.1", port, lambda sock, addr: sock.close())


def test_a_data_plane_dialer_is_handed_to_the_plane():
    handed = []
    port = TaskPort("127.0.0.1", 0, lambda sock, addr: handed.append(sock))
    try:
        sock = socket.create_connection(("127.0.0.1", port.port), timeout=5)
        sock.sendall(wire.MAGIC + b"....")
        deadline = time.monotonic() + 5
        while not handed and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(handed) == 1 and handed[0].recv(4, socket.MSG_PEEK) == wire.MAGIC  # unread
        handed[0].close()
        sock.close()
    finally:
        port.close()
