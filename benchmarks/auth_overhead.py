"""What the cluster secret costs: the same transport with and without it, in one run.

    python -m benchmarks.auth_overhead [--repeats 7] [--steps 10]

Two contenders, built side by side and timed in alternating rounds (``harness.measure``):
``secret`` (a job with ``FLOWMESH_CLUSTER_SECRET``: authenticated gRPC calls, data-plane
connections opened by the HMAC challenge-response) and ``no secret`` (servers started by
hand: the handshake without MACs). The data plane's per-frame path is the same code in
both; what differs is the handshake per connection and the gRPC token per call.

1. **Data plane**: a child process serves two data planes (one per contender); this
   process pushes 64 MB tensors (acknowledged) and makes 4-byte round trips.
2. **Session**: two two-task clusters (task 1 a child server, task 0 a server in this
   process); a 4-byte round trip task 0 -> task 1 -> task 0 per step, as in
   ``benchmarks/transport.py``.

The ratio is ``secret / no secret`` (>1: the secret is slower for times, faster for GB/s).
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import flowmesh  # noqa: F401  (before torch: flowmesh sets OpenMP's wait policy)
from benchmarks.harness import Contender, Result, Settings, measure, parse_settings
from benchmarks.transport import MB64, _child, _cluster, _graph, _stop

SECRET = secrets.token_hex(32)
_VAR = "FLOWMESH_CLUSTER_SECRET"


@contextmanager
def _secret(enabled: bool) -> Iterator[None]:
    """This process's (and its children's) secret while a contender is built."""
    saved = os.environ.pop(_VAR, None)
    if enabled:
        os.environ[_VAR] = SECRET
    try:
        yield
    finally:
        os.environ.pop(_VAR, None)
        if saved is not None:
            os.environ[_VAR] = saved


def _plane_contender(enabled: bool, kind: str, cleanup: list) -> Contender:
    def setup(run: Settings) -> Callable[[], Any]:
        import torch

        from flowmesh.distributed.auth import ClusterAuth
        from flowmesh.distributed.data_plane import DataPlane

        with _secret(enabled):
            child = _child("data-plane")
            plane = DataPlane("client:bench", listen=False,
                              auth=ClusterAuth(SECRET.encode() if enabled else None))
        cleanup.extend([lambda: _stop(child), plane.close])
        address = child.ready_line[0]
        value = torch.randn(MB64 // 4) if kind == "64MB" else torch.tensor([1.0])
        method = "ack" if kind == "64MB" else "echo"
        return lambda: plane.call(address, method, None, [value])

    return Contender("secret" if enabled else "no secret", setup)


def _session_contender(enabled: bool, cleanup: list) -> Contender:
    def setup(run: Settings) -> Callable[[], Any]:
        import flowmesh as tf

        with _secret(enabled):
            cluster = _cluster()
            child = _child("task-flowmesh", json.dumps(cluster))
            server = tf.train.Server(cluster, job_name="local", task_index=0)
            graph = tf.Graph()
            with graph.as_default():
                _, fetch = _graph(tf, "4B")
            sess = tf.Session(server.target, graph=graph)
            sess.run(fetch)  # connects (gRPC client and data plane) while the secret is set
        cleanup.extend([lambda: _stop(child), server.stop, sess.close])
        return lambda: sess.run(fetch)

    return Contender("secret" if enabled else "no secret", setup)


def _report(bench: str, config: str, results: list[Result], scale: Callable[[float], float],
            unit: str) -> dict[str, Any]:
    with_secret, without = (scale(r.median) for r in results)
    best = [scale(r.best) for r in results]
    print(f"{config:<22}{with_secret:>12.2f}{without:>12.2f}{with_secret / without:>9.3f}  {unit}")
    record = {"bench": bench, "config": config, "flowmesh": round(with_secret, 3),
              "flowmesh_best": round(best[0], 3), "peer": "no-secret",
              "peer_value": round(without, 3), "ratio": round(with_secret / without, 3),
              "rounds": [[round(scale(v), 1) for v in r.rates] for r in results]}
    print(json.dumps(record))
    return record


def main(argv: list[str] | None = None) -> None:
    settings = parse_settings(__doc__.splitlines()[0], (), argv, steps=10, repeats=7, warmup=5)
    print(time.strftime("%Y-%m-%d %H:%M"), f"cpus={os.cpu_count()}",
          "(shared machine: medians of alternating rounds)")
    print(f"{'':<22}{'secret':>12}{'no secret':>12}{'ratio':>9}")
    both = (True, False)
    cases = [
        ("auth/data-plane", "64MB GB/s", settings.steps,
         lambda c: [_plane_contender(e, "64MB", c) for e in both], lambda r: r * MB64 / 1e9, "GB/s"),
        ("auth/data-plane", "4B RTT us", settings.steps * 100,
         lambda c: [_plane_contender(e, "4B", c) for e in both], lambda r: 1e6 / r, "us"),
        ("auth/session", "4B round trip us", settings.steps * 20,
         lambda c: [_session_contender(e, c) for e in both], lambda r: 1e6 / r, "us/step"),
    ]
    for bench, config, steps, build, scale, unit in cases:
        cleanup: list = []
        run = dataclasses.replace(settings, steps=steps, quiet=True)
        try:
            results = measure(build(cleanup), run)
        finally:
            for fn in reversed(cleanup):
                fn()
        _report(bench, config, results, scale, unit)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
