"""What a peer can cost a server: bounded fan-out calls, memory, shutdown (real processes)."""

from __future__ import annotations

import signal
import socket
import threading
import time

import numpy as np
import pytest
import torch

import flowmesh as tf
from flowmesh.distributed import auth
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.auth import ClusterAuth
from flowmesh.distributed.data_plane import DataPlane
from flowmesh.distributed.framing import FrameReader
from flowmesh.distributed.rpc import RpcClient
from flowmesh.errors import OpError, ResourceExhaustedError
from flowmesh.testing.cluster import LocalCluster

pytestmark = [pytest.mark.multiprocess]


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        line = next(line for line in f if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.mark.timeout(120)
def test_fan_out_calls_to_a_dead_task_do_not_starve_control_calls_and_sigterm_is_prompt():
    # the worker task is never started: every ListDevices has a dead task to ask
    with LocalCluster({"ps": 1, "worker": 1}, start=[("ps", 0)]) as cluster:
        address = cluster.address("ps", 0)
        clients = [RpcClient(address, f"client {i}") for i in range(32)]
        for client in clients:  # connected: the 32 calls reach the server at once
            client.wait_ready(30)
        done: list[float] = []

        def list_devices(rpc: RpcClient) -> None:
            started = time.monotonic()
            try:
                rpc.call("ListDevices", None, timeout=60)
            except OpError:
                pass  # refused while too many fan-out calls run: fine, it did not block
            done.append(time.monotonic() - started)

        threads = [threading.Thread(target=list_devices, args=(c,), daemon=True) for c in clients]
        for thread in threads:
            thread.start()
        time.sleep(1.0)  # the fan-out calls are in flight
        control = RpcClient(address, "control")
        started = time.monotonic()
        reply = control.call("CreateSession", {"graph": None, "config": {}}, timeout=10)
        create_s = time.monotonic() - started
        assert reply["session"] and create_s < 5, create_s
        for thread in threads:
            thread.join(30)
        assert len(done) == 32 and max(done) < 15, sorted(done)[-3:]
        # SIGTERM while fan-out calls are in flight stops the server within 5 s
        for c in clients:
            threading.Thread(target=list_devices, args=(c,), daemon=True).start()
        time.sleep(0.3)
        child = cluster.children[("ps", 0)]
        started = time.monotonic()
        child.proc.send_signal(signal.SIGTERM)
        child.proc.wait(10)
        stop_s = time.monotonic() - started
        print(f"CreateSession {create_s:.2f} s during 32 ListDevices; SIGTERM -> exit {stop_s:.2f} s")
        assert stop_s < 5, stop_s
        for c in clients + [control]:
            c.close()


@pytest.mark.timeout(120)
def test_unauthenticated_peers_cannot_pin_memory(tmp_path):
    path = tmp_path / "secret"
    path.write_text("s" * 64)
    path.chmod(0o600)
    with LocalCluster({"ps": 1}, env={"FLOWMESH_CLUSTER_SECRET_FILE": str(path)}) as cluster:
        pid = cluster.children[("ps", 0)].pid
        rpc = RpcClient(cluster.address("ps", 0), "ps", auth=ClusterAuth(b"s" * 64))
        data = f"127.0.0.1:{rpc.call('GetStatus', None, timeout=10)['data_port']}"
        rpc.close()
        before = _rss_mb(pid)
        socks = []
        for _ in range(16):  # each announces a 64 MB meta block, then waits
            host, port = data.rsplit(":", 1)
            sock = socket.create_connection((host, int(port)), timeout=10)
            auth._send(sock, wire.HELLO, {"v": 1})  # a dialer opens the handshake
            auth._read_hello(FrameReader(sock), data)
            sock.sendall(wire.encode_header(wire.HELLO, 64 << 20, 0) + b"x" * 4096)
            socks.append(sock)
        time.sleep(1.0)
        during = _rss_mb(pid)
        for sock in socks:
            sock.close()
        print(f"ps RSS {before:.0f} MB -> {during:.0f} MB with 16 connections announcing 64 MB")
        assert during - before < 64, (before, during)


def _push_orphans(plane: DataPlane, rpc: RpcClient, data: str, pid: int,
                  first_step: int) -> tuple[float, float]:
    """Pushes 8 x 32 MB for steps the server never runs; waits until it dropped them all
    (FLOWMESH_ORPHAN_TENSOR_S). Returns the server's (peak, final) RSS in MB."""
    key = ("x:0", "/job:worker/replica:0/task:0/device:CPU:0",
           "/job:ps/replica:0/task:0/device:CPU:0", False)
    for step in range(8):
        plane.send_tensor(data, first_step + step, key, torch.ones(8 << 20))
    peak, deadline = _rss_mb(pid), time.monotonic() + 15
    while rpc.call("GetStatus", None, timeout=10)["active_steps"] and time.monotonic() < deadline:
        peak = max(peak, _rss_mb(pid))
        time.sleep(0.05)
    assert rpc.call("GetStatus", None, timeout=10)["active_steps"] == 0  # dropped in time
    return peak, _rss_mb(pid)


@pytest.mark.timeout(120)
def test_orphaned_pushed_tensors_are_dropped_and_large_rpcs_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWMESH_SHM_TRANSPORT", "0")  # the tensors cross the socket
    path = tmp_path / "secret"
    path.write_text("s" * 64)
    path.chmod(0o600)
    env = {"FLOWMESH_CLUSTER_SECRET_FILE": str(path), "FLOWMESH_ORPHAN_TENSOR_S": "1"}
    with LocalCluster({"ps": 1}, env=env) as cluster:
        pid = cluster.children[("ps", 0)].pid
        job = ClusterAuth(b"s" * 64)
        rpc = RpcClient(cluster.address("ps", 0), "ps", auth=job)
        data = f"127.0.0.1:{rpc.call('GetStatus', None, timeout=10)['data_port']}"
        plane = DataPlane("/job:worker/replica:0/task:0", listen=False, auth=job)
        try:  # a member of the job pushes 8 x 32 MB for steps nobody runs, 3 times
            before = _rss_mb(pid)
            rounds = [_push_orphans(plane, rpc, data, pid, 1000 * r) for r in (1, 2, 3)]
            figures = ", ".join(f"peak {p:.0f} MB, {f:.0f} MB once dropped" for p, f in rounds)
            print(f"ps RSS {before:.0f} MB; 3 rounds of 8 x 32 MB for steps nobody runs: "
                  f"{figures} (bound: {before:.0f} + 256 + 64 MB: one round's tensors, whose "
                  "buffers are reused: protocol.POOL / FLOWMESH_KEEP_FREED_MB)")
            # 768 MB pushed in all; what is held never exceeds one round's worth
            assert max(peak for peak, _ in rounds) - before < 256 + 64, (before, rounds)
        finally:
            plane.close()
        with pytest.raises(ResourceExhaustedError, match="FLOWMESH_MAX_RPC_MB"):
            rpc.call("GetStatus", {"junk": b"\0" * (300 << 20)}, timeout=30)
        assert rpc.call("GetStatus", None, timeout=10)["task"] == "/job:ps/replica:0/task:0"
        rpc.close()


@pytest.mark.timeout(60)
def test_sessions_unused_past_session_gc_seconds_are_closed(monkeypatch):
    monkeypatch.setenv("FLOWMESH_SESSION_GC_S", "0.5")
    server = tf.train.Server.create_local_server()
    rpc = RpcClient(server.target[len("grpc://"):], "master")
    try:
        leaked = [rpc.call("CreateSession", {"graph": None, "config": {}}, timeout=10)["session"]
                  for _ in range(20)]  # clients that never close their sessions
        kept = rpc.call("CreateSession", {"graph": None, "config": {}}, timeout=10)["session"]
        time.sleep(0.6)
        rpc.call("MakeCallable", {"session": kept, "fetches": [], "feeds": [], "targets": []},
                 timeout=10)  # used: kept alive
        time.sleep(0.2)
        rpc.call("CreateSession", {"graph": None, "config": {}}, timeout=10)
        assert len(server.master._sessions) == 2
        with pytest.raises(tf.errors.AbortedError, match="FLOWMESH_SESSION_GC_S"):
            rpc.call("ExtendSession", {"session": leaked[0], "graph": b""}, timeout=10)
    finally:
        rpc.close()
        server.stop()


def _leaky_graph() -> tuple[tf.Graph, object, object]:
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 256], name="x")
        w = tf.constant(1e-3, shape=[256, 256], name="w")
        y = x
        for _ in range(20):  # a graph each session registers, partitions and runs
            y = tf.nn.relu(tf.matmul(y, w))
        total = tf.reduce_sum(y)
    return g, x, total


@pytest.mark.timeout(120)
def test_400_leaked_sessions_are_reclaimed_by_session_expiry():
    # clients that create sessions and never close them (each a real tf.Session with its
    # own connections, kept referenced): without FLOWMESH_SESSION_GC_S a server kept each
    # (~0.75 MB apiece: +225 MB for 300); with it they are closed, and so are the idle
    # clients' data-plane connections. Malloc keeps no freed memory here
    # (FLOWMESH_KEEP_FREED_MB=0), so RSS follows what the server holds.
    bound_mb = 64
    env = {"FLOWMESH_SESSION_GC_S": "0.3", "FLOWMESH_KEEP_FREED_MB": "0"}
    with LocalCluster({"ps": 1}, env=env) as cluster:
        pid, target = cluster.children[("ps", 0)].pid, cluster.target("ps", 0)
        g, x, total = _leaky_graph()
        feed = {x: np.ones((4, 256), np.float32)}
        leaked = []
        for i in range(400):
            if i == 100:  # warmed up: thread pools and allocator arenas exist
                before, started = _rss_mb(pid), time.monotonic()
            sess = tf.Session(target, graph=g)
            sess.run(total, feed)
            leaked.append(sess)
        after, seconds = _rss_mb(pid), time.monotonic() - started
        print(f"ps RSS {before:.0f} MB -> {after:.0f} MB ({after - before:+.0f} MB, bound "
              f"+{bound_mb} MB) from the 100th to the 400th leaked session ({seconds:.1f} s)")
        assert after - before < bound_mb, (before, after)
        with pytest.raises(tf.errors.AbortedError, match="FLOWMESH_SESSION_GC_S"):
            leaked[0].run(total, feed)  # an expired session says why
        assert leaked[-1].run(total, feed) == pytest.approx(0.0, abs=1.0)  # a recent one runs
        for sess in leaked:
            sess.close()


@pytest.mark.timeout(60)
def test_connections_past_the_cap_are_refused_and_dribbling_peers_are_cut_at_the_deadline(
        tmp_path):
    path = tmp_path / "secret"
    path.write_text("s" * 64)
    path.chmod(0o600)
    env = {"FLOWMESH_CLUSTER_SECRET_FILE": str(path), "FLOWMESH_MAX_CONNECTIONS": "4",
           "FLOWMESH_HANDSHAKE_TIMEOUT_S": "1"}
    with LocalCluster({"ps": 1}, env=env) as cluster:
        job = ClusterAuth(b"s" * 64)
        rpc = RpcClient(cluster.address("ps", 0), "ps", auth=job)
        data = f"127.0.0.1:{rpc.call('GetStatus', None, timeout=10)['data_port']}"
        rpc.close()
        host, port = data.rsplit(":", 1)
        idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(4)]
        for sock in idle:  # accepted: each opened the handshake and got its challenge
            auth._send(sock, wire.HELLO, {"v": 1})
            auth._read_hello(FrameReader(sock), data)
        plane = DataPlane("/job:worker/replica:0/task:0", listen=False, auth=job)
        try:
            with pytest.raises(tf.errors.UnavailableError, match="4 connections open.*"
                               "FLOWMESH_MAX_CONNECTIONS"):
                plane.connection(data, timeout=10)
            # peers without the secret that dribble a byte of their header every 0.5 s (no
            # single read waits 1 s; the header would take 10 s) lose the connection at
            # the handshake's deadline
            held_s = _dribble_until_closed(idle)
            print(f"4 dribbling peers cut after {max(held_s):.1f} s (deadline 1 s)")
            assert max(held_s) < 1 + 3, held_s
            deadline = time.monotonic() + 10
            while True:  # the slots are free again: a member gets in
                try:
                    plane.connection(data, timeout=10)
                    break
                except tf.errors.UnavailableError:
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
        finally:
            plane.close()
            for sock in idle:
                sock.close()


def _dribble_until_closed(socks: list[socket.socket], limit_s: float = 15.0) -> list[float]:
    """Sends one header byte per socket every 0.5 s until the server closed each one;
    returns how long each stayed open."""
    for sock in socks:
        sock.setblocking(False)
    started = time.monotonic()
    held: dict[int, float] = {}
    sent = 0
    while len(held) < len(socks) and time.monotonic() - started < limit_s:
        for i, sock in enumerate(socks):
            if i in held:
                continue
            try:
                if sock.recv(64) == b"":
                    held[i] = time.monotonic() - started  # closed by the server
                    continue
            except BlockingIOError:
                pass
            except OSError:
                held[i] = time.monotonic() - started
                continue
            if sent < wire.HEADER.size - 1:  # the header never completes
                sock.send(wire.MAGIC[sent % 4:sent % 4 + 1])
        sent += 1
        time.sleep(0.5)
    return [held.get(i, limit_s) for i in range(len(socks))]
