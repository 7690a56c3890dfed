"""A job with a secret lets only its own tasks in, on both planes (real server process)."""

from __future__ import annotations

import os
import secrets
import socket

import pytest

import flowmesh as tf
from flowmesh.distributed import auth
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.auth import ClusterAuth
from flowmesh.distributed.framing import FrameReader
from flowmesh.distributed.rpc import RpcClient
from flowmesh.errors import UnauthenticatedError
from flowmesh.ops.io_ops import save_v2
from flowmesh.testing.cluster import LocalCluster

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(90)]
SECRET = secrets.token_hex(32).encode()


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("job") / "secret"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, SECRET)
    os.close(fd)
    return str(path)


@pytest.fixture(scope="module")
def ps(secret_file):
    """A ps server process of a job with a secret."""
    with LocalCluster({"ps": 1, "worker": 1}, start=[("ps", 0)],
                      env={"FLOWMESH_CLUSTER_SECRET_FILE": secret_file}) as cluster:
        yield cluster


@pytest.fixture
def no_secret(monkeypatch):
    monkeypatch.delenv("FLOWMESH_CLUSTER_SECRET", raising=False)
    monkeypatch.delenv("FLOWMESH_CLUSTER_SECRET_FILE", raising=False)


def _data_address(cluster: LocalCluster) -> str:
    rpc = RpcClient(cluster.address("ps", 0), "ps", auth=ClusterAuth(SECRET))
    try:
        port = rpc.call("GetStatus", None, timeout=10)["data_port"]
    finally:
        rpc.close()
    return f"127.0.0.1:{port}"


def _steps(target: str, checkpoint: str) -> tuple[tf.Graph, object, object]:
    g = tf.Graph()
    with g.as_default(), tf.device("/job:ps/task:0"):
        v = tf.Variable(7.0, name="v")
        save = save_v2(checkpoint, ["v"], [""], [v.value()])
    return g, v, save


def test_a_client_without_the_secret_learns_nothing_and_writes_nothing(ps, no_secret, tmp_path,
                                                                        monkeypatch, secret_file):
    checkpoint = str(tmp_path / "stolen")
    g, v, save = _steps(ps.target("ps", 0), checkpoint)
    for secret in (None, secrets.token_hex(32)):  # none, or another job's
        if secret is not None:
            monkeypatch.setenv("FLOWMESH_CLUSTER_SECRET", secret)
        with pytest.raises(UnauthenticatedError, match="cluster secret"):
            with tf.Session(ps.target("ps", 0), graph=g) as sess:
                sess.run(save)
        rpc = RpcClient(ps.address("ps", 0), "ps")
        try:
            for method in ("GetStatus", "Reset", "RegisterGraph", "ListDevices"):
                with pytest.raises(UnauthenticatedError):
                    rpc.call(method, {"containers": []}, timeout=10)
        finally:
            rpc.close()
    assert not any(p.name.startswith("stolen") for p in tmp_path.iterdir())
    # the job's own client: the same steps work, the server kept serving
    monkeypatch.delenv("FLOWMESH_CLUSTER_SECRET")
    monkeypatch.setenv("FLOWMESH_CLUSTER_SECRET_FILE", secret_file)
    with tf.Session(ps.target("ps", 0), graph=g) as sess:
        sess.run(v.initializer)
        sess.run(save)
        assert sess.run(v) == 7.0
    assert any(p.name.startswith("stolen") for p in tmp_path.iterdir())


def _connect(address: str) -> tuple[socket.socket, FrameReader]:
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock, FrameReader(sock)


def _send(sock: socket.socket, meta: dict) -> None:
    body = wire.pack(meta)
    sock.sendall(wire.encode_header(wire.HELLO, len(body), 0) + body)


def _challenge(sock: socket.socket, reader: FrameReader, address: str) -> dict:
    """Opens the handshake as a dialer does; returns the server's challenge."""
    _send(sock, {"v": 1})
    return auth._read_hello(reader, address)


def _refusal(reader: FrameReader) -> str:
    kind, meta_len, _ = wire.decode_header(reader.read(wire.HEADER.size), 1 << 16)
    assert kind == wire.ERROR
    return wire.unpack(reader.read(meta_len))["e"]["message"]


def test_data_plane_refuses_missing_wrong_spoofed_and_replayed_proofs(ps):
    address = _data_address(ps)
    hello = {"peer": "/job:ps/replica:0/task:0", "host": "", "shm": False}
    sock, reader = _connect(address)  # no secret: the dialer is told before it sends
    with pytest.raises(UnauthenticatedError, match="has none"):
        auth.dial(sock, reader, ClusterAuth(None), hello, address)
    sock.close()
    sock, reader = _connect(address)  # another job's secret
    with pytest.raises(UnauthenticatedError, match="refused the connection"):
        auth.dial(sock, reader, ClusterAuth(b"x" * 32), hello, address)
    sock.close()
    sock, reader = _connect(address)  # a spoofed HELLO naming the ps, with a made-up proof
    _challenge(sock, reader, address)
    _send(sock, dict(hello, nonce=os.urandom(16), mac=os.urandom(32)))
    assert "cluster secret" in _refusal(reader)
    sock.close()
    # a recorded genuine proof replayed on a new connection (the server's nonce differs)
    sock, reader = _connect(address)
    challenge = _challenge(sock, reader, address)
    nonce_b = os.urandom(16)
    mac = ClusterAuth(SECRET).mac(b"dial", challenge["nonce"], nonce_b, hello["peer"])
    _send(sock, dict(hello, nonce=nonce_b, mac=mac))
    assert auth._read_hello(reader, address)["peer"] == "/job:ps/replica:0/task:0"
    sock.close()
    sock, reader = _connect(address)
    _challenge(sock, reader, address)
    _send(sock, dict(hello, nonce=nonce_b, mac=mac))
    assert "cluster secret" in _refusal(reader)
    sock.close()
    # frames before the handshake are refused before anything is allocated for them
    sock, reader = _connect(address)
    _challenge(sock, reader, address)
    sock.sendall(wire.encode_header(wire.TENSOR, 60 << 20, 1 << 30))
    assert "exceeds" in _refusal(reader)
    sock.close()
