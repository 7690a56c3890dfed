"""What a peer can cost a server: bounded fan-out calls, memory, shutdown (real processes)."""

from __future__ import annotations

import signal
import socket
import threading
import time

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
            auth._read_hello(FrameReader(sock), data)
            sock.sendall(wire.encode_header(wire.HELLO, 64 << 20, 0) + b"x" * 4096)
            socks.append(sock)
        time.sleep(1.0)
        during = _rss_mb(pid)
        for sock in socks:
            sock.close()
        print(f"ps RSS {before:.0f} MB -> {during:.0f} MB with 16 connections announcing 64 MB")
        assert during - before < 64, (before, during)


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
        before = _rss_mb(pid)
        plane = DataPlane("/job:worker/replica:0/task:0", listen=False, auth=job)
        try:  # a member of the job pushes 8 x 32 MB for steps nobody runs
            for step in range(8):
                key = ("x:0", "/job:worker/replica:0/task:0/device:CPU:0",
                       "/job:ps/replica:0/task:0/device:CPU:0", False)
                plane.send_tensor(data, 1000 + step, key, torch.ones(8 << 20))
            held = rpc.call("GetStatus", None, timeout=10)["active_steps"]
            peak = _rss_mb(pid)
            deadline = time.monotonic() + 10
            while rpc.call("GetStatus", None, timeout=10)["active_steps"] and time.monotonic() < deadline:
                time.sleep(0.1)
            assert rpc.call("GetStatus", None, timeout=10)["active_steps"] == 0
            print(f"ps RSS {before:.0f} MB -> {peak:.0f} MB holding {held} orphaned steps "
                  f"(8 x 32 MB) -> {_rss_mb(pid):.0f} MB after they were dropped (malloc keeps "
                  "freed memory for reuse: FLOWMESH_KEEP_FREED_MB)")
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
