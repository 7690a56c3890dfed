"""Tensor transport between two processes: bandwidth for 64 MB, latency for 4 bytes.

    python -m benchmarks.transport [--repeats 5] [--steps 10] [--threads 1]

1. **Data plane** (flowmesh's transport itself). A child process serves flowmesh's
   data plane; this process pushes 64 MB float32 tensors to it (each acknowledged) and
   makes 4-byte request/response round trips. A raw Python TCP socket doing the same
   (``sendall`` / ``recv_into`` a preallocated buffer) is the practical limit on this
   machine and is reported alongside.
2. **Sessions** (flowmesh vs TensorFlow's own gRPC runtime, same graph, same run). A
   two-task cluster: task 1 is a server in a child process, task 0 is a server in this
   process whose session drives the steps.
   * ``64MB``: a 64 MB variable on task 1, ``x[0]`` computed on task 0 (the whole
     tensor must cross; nothing else is computed). GB/s = 64 MiB / step time.
   * ``4B round trip``: a scalar on task 0 -> identity on task 1 -> identity on task 0.

Targets (issue 5): 64 MB at >= 1.5 GB/s (goal 3), 4-byte round trip <= 300 us.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

from benchmarks.harness import Contender, Result, Settings, import_tensorflow, measure, parse_settings

MB64 = 64 << 20
PEERS = ("tensorflow",)


# --- child processes -----------------------------------------------------------------------
def _child(role: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.transport", "--role", role, *args],
                            stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True, env=env,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    line = proc.stdout.readline()
    if not line.startswith("ready"):
        proc.kill()
        raise RuntimeError(f"{role} child failed to start: {line!r}")
    proc.ready_line = line.split()[1:]  # type: ignore[attr-defined]
    return proc


def _stop(proc: subprocess.Popen) -> None:
    try:
        proc.stdin.close()  # children exit when stdin closes
        proc.wait(10)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()


def serve_data_plane() -> None:
    from flowmesh.distributed.data_plane import DataPlane

    def on_request(conn: Any, call_id: int, method: str, args: Any, tensors: list) -> None:
        conn.reply(call_id, len(tensors), tensors if method == "echo" else [])

    plane = DataPlane("/job:bench/replica:0/task:1", on_request=on_request)
    print("ready", plane.address, flush=True)
    sys.stdin.read()
    plane.close()


def serve_raw_socket() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    print("ready", listener.getsockname()[1], flush=True)
    conn, _ = listener.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = memoryview(bytearray(MB64))
    while True:
        header = conn.recv(8, socket.MSG_WAITALL)
        if len(header) < 8:
            return
        n = int.from_bytes(header, "little")
        pos = 0
        while pos < n:
            pos += conn.recv_into(buf[pos:n])
        conn.sendall(buf[:min(n, 4)] if n <= 4 else b"k")


def serve_cluster_task(system: str, cluster_json: str) -> None:
    cluster = json.loads(cluster_json)
    if system == "tensorflow":
        tf1 = import_tensorflow()
        server = tf1.train.Server(tf1.train.ClusterSpec(cluster), job_name="local", task_index=1,
                                  config=tf1.ConfigProto(intra_op_parallelism_threads=1))
    else:
        import flowmesh as fm

        server = fm.train.Server(cluster, job_name="local", task_index=1)
    print("ready", flush=True)
    sys.stdin.read()
    del server


# --- 1. raw data plane ------------------------------------------------------------------------
def _rates(fn: Any, settings: Settings) -> list[float]:
    for _ in range(max(1, settings.warmup // 5)):
        fn()
    return [fn() for _ in range(settings.repeats)]


def data_plane(settings: Settings) -> list[dict[str, Any]]:
    import torch

    from flowmesh.distributed.data_plane import DataPlane

    child = _child("data-plane")
    raw = _child("raw-socket")
    plane = DataPlane("client:bench", listen=False)
    address = child.ready_line[0]
    sock = socket.create_connection(("127.0.0.1", int(raw.ready_line[0])))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    big = torch.randn(MB64 // 4)
    raw_big = memoryview(big.numpy()).cast("B")
    tiny = torch.tensor([1.0])

    def fm_bandwidth() -> float:
        start = time.perf_counter()
        for _ in range(settings.steps):
            plane.call(address, "ack", None, [big])
        return settings.steps * MB64 / (time.perf_counter() - start) / 1e9

    def raw_bandwidth() -> float:
        start = time.perf_counter()
        for _ in range(settings.steps):
            sock.sendall(MB64.to_bytes(8, "little"))
            sock.sendall(raw_big)
            sock.recv(1)
        return settings.steps * MB64 / (time.perf_counter() - start) / 1e9

    def fm_rtt() -> float:
        n = settings.steps * 100
        start = time.perf_counter()
        for _ in range(n):
            plane.call(address, "echo", None, [tiny])
        return (time.perf_counter() - start) / n * 1e6

    def raw_rtt() -> float:
        n = settings.steps * 100
        start = time.perf_counter()
        for _ in range(n):
            sock.sendall((4).to_bytes(8, "little") + b"abcd")
            sock.recv(4)
        return (time.perf_counter() - start) / n * 1e6

    rows = {}
    for name, fm_fn, raw_fn in (("64MB GB/s", fm_bandwidth, raw_bandwidth), ("4B RTT us", fm_rtt, raw_rtt)):
        fm_vals, raw_vals = [], []
        for i in range(settings.repeats):  # alternate, so drift hits both alike
            pair = (fm_fn, raw_fn) if i % 2 == 0 else (raw_fn, fm_fn)
            for fn in pair:
                (fm_vals if fn is fm_fn else raw_vals).append(fn())
        rows[name] = (fm_vals, raw_vals)
    plane.close()
    sock.close()
    _stop(child)
    _stop(raw)
    return _print_data_plane(rows)


def _print_data_plane(rows: dict[str, tuple[list[float], list[float]]]) -> list[dict[str, Any]]:
    print("\ntransport/data-plane: flowmesh data plane vs a raw Python TCP socket (the limit here)")
    print(f"{'metric':<14}{'flowmesh median':>18}{'best':>10}{'raw socket':>14}{'fm/raw':>9}")
    records = []
    for name, (fm_vals, raw_vals) in rows.items():
        higher_better = "GB/s" in name
        best = max(fm_vals) if higher_better else min(fm_vals)
        fm_med, raw_med = statistics.median(fm_vals), statistics.median(raw_vals)
        print(f"{name:<14}{fm_med:>18.2f}{best:>10.2f}{raw_med:>14.2f}{fm_med / raw_med:>9.2f}")
        record = {"bench": "transport/data-plane", "config": name, "flowmesh": round(fm_med, 3),
                  "flowmesh_best": round(best, 3), "peer": "raw-tcp-socket",
                  "peer_value": round(raw_med, 3), "ratio": round(fm_med / raw_med, 3)}
        print(json.dumps(record))
        records.append(record)
    return records


# --- 2. sessions: flowmesh vs TensorFlow -------------------------------------------------------
def _cluster() -> dict[str, list[str]]:
    from flowmesh.distributed.ports import free_ports

    return {"local": [f"localhost:{p}" for p in free_ports(2)]}


def _graph(tf: Any, kind: str) -> Any:
    if kind == "64MB":
        with tf.device("/job:local/task:1"):
            x = tf.Variable(np.ones(MB64 // 4, np.float32), name="x")
        with tf.device("/job:local/task:0"):
            return x.initializer, x.value()[0]
    with tf.device("/job:local/task:0"):
        a = tf.placeholder_with_default(np.float32(1.0), [], name="a")
    with tf.device("/job:local/task:1"):
        b = tf.identity(a)
    with tf.device("/job:local/task:0"):
        return None, tf.identity(b) + 0.0


def _session_contender(system: str, kind: str, cleanup: list) -> Contender:
    def setup(settings: Settings) -> Any:
        cluster = _cluster()
        child = _child(f"task-{system}", json.dumps(cluster))
        cleanup.append(lambda: _stop(child))
        if system == "tensorflow":
            tf = import_tensorflow()
            server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="local", task_index=0,
                                     config=tf.ConfigProto(intra_op_parallelism_threads=settings.threads))
            graph = tf.Graph()
        else:
            import flowmesh as tf

            server = tf.train.Server(cluster, job_name="local", task_index=0)
            cleanup.append(server.stop)
            graph = tf.Graph()
        with graph.as_default():
            init, fetch = _graph(tf, kind)
        sess = tf.Session(server.target, graph=graph)
        cleanup.append(sess.close)
        if init is not None:
            sess.run(init)
        return lambda: sess.run(fetch)

    return Contender(system, setup)


def sessions(settings: Settings) -> list[dict[str, Any]]:
    records = []
    for kind, steps in (("64MB", settings.steps), ("4B round trip", settings.steps * 20)):
        cleanup: list = []
        contenders = [_session_contender("flowmesh", kind, cleanup)]
        if "tensorflow" in settings.peers and import_tensorflow() is not None:
            contenders.append(_session_contender("tensorflow", kind, cleanup))
        run = Settings(settings.threads, settings.repeats, steps, settings.warmup, settings.peers, True)
        try:
            results = measure(contenders, run)
        finally:
            for fn in reversed(cleanup):
                fn()
        records += _report_sessions(kind, results, run)
    return records


def _report_sessions(kind: str, results: list[Result], settings: Settings) -> list[dict[str, Any]]:
    if kind == "64MB":
        scale, unit = MB64 / 1e9, "GB/s"
    else:
        unit = "us/step"
    print(f"\ntransport/session: {kind} between two tasks (flowmesh vs tensorflow gRPC runtime)")
    print(f"{'system':<14}{'median ' + unit:>18}{'best':>12}")
    values = {}
    for r in results:
        if kind == "64MB":
            med, best = r.median * scale, r.best * scale
        else:
            med, best = 1e6 / r.median, 1e6 / r.best
        values[r.name] = (med, best)
        print(f"{r.name:<14}{med:>18.2f}{best:>12.2f}")
    fm = values["flowmesh"]
    records = []
    for peer in [n for n in values if n != "flowmesh"] or [None]:
        pv = values.get(peer) if peer else None
        record = {"bench": "transport/session", "config": f"{kind} ({unit})", "threads": settings.threads,
                  "flowmesh": round(fm[0], 3), "flowmesh_best": round(fm[1], 3), "peer": peer,
                  "peer_value": None if pv is None else round(pv[0], 3),
                  "ratio": None if pv is None else round(fm[0] / pv[0], 3)}
        print(json.dumps(record))
        records.append(record)
    return records


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--role"]:
        role, rest = argv[1], argv[2:]
        if role == "data-plane":
            serve_data_plane()
        elif role == "raw-socket":
            serve_raw_socket()
        else:
            serve_cluster_task(role[len("task-"):], rest[0])
        return
    settings = parse_settings(__doc__.splitlines()[0], PEERS, argv, steps=10, repeats=5, warmup=5)
    print(time.strftime("%Y-%m-%d %H:%M"), f"cpus={os.cpu_count()}")
    data_plane(settings)
    sessions(settings)


if __name__ == "__main__":
    main()
