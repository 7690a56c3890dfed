"""flowmesh's authenticated rendezvous store against torch's ``TCPStore``, in one run.

    python -m benchmarks.rendezvous_store [--repeats 7] [--steps 200]

Both servers run in this process on loopback, each with one client, built side by side
and timed in alternating rounds (``harness.measure``):

1. **Round trip**: one ``set`` then one ``get`` of a 16-byte value (what heartbeats and
   the elastic coordinator do), in microseconds per operation.
2. **Connect**: a new client (flowmesh's: TCP connect plus the HMAC challenge-response
   under the job's secret), in milliseconds per connection (every rank and every
   communicator opens two).
3. **Gloo group**: two members (threads) form a ``ProcessGroupGloo`` on the store and
   run one 4-byte all-reduce, in milliseconds per group (elastic re-forms one per round).

The ratio is ``flowmesh / TCPStore`` (>1: flowmesh's store is slower).
"""

from __future__ import annotations

import datetime
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import flowmesh  # noqa: F401  (before torch: flowmesh sets OpenMP's wait policy)
from benchmarks.harness import Contender, Result, Settings, measure, parse_settings

_TIMEOUT = datetime.timedelta(seconds=30)


def _ours() -> tuple[Any, Callable[[], Any]]:
    from flowmesh.collective.backends.torch_dist import connect_store
    from flowmesh.distributed.auth import ClusterAuth

    job = ClusterAuth(os.urandom(32).hex().encode())
    server = connect_store("127.0.0.1", 0, True, None, 30.0, auth=job)
    return server, lambda: connect_store("127.0.0.1", server.port, False, None, 30.0, auth=job)


def _torch() -> tuple[Any, Callable[[], Any]]:
    import torch.distributed as dist

    server = dist.TCPStore("127.0.0.1", 0, None, True, timeout=_TIMEOUT, wait_for_workers=False)
    return server, lambda: dist.TCPStore("127.0.0.1", server.port, None, False, timeout=_TIMEOUT)


def _contender(name: str, build: Callable[[], tuple[Any, Callable[[], Any]]], case: str,
               keep: list) -> Contender:
    def setup(run: Settings) -> Callable[[], Any]:
        server, connect = build()
        client = connect()
        keep.extend([server, client])  # torch calls back into the Python store objects
        if case == "round trip":
            return lambda: (client.set("hb/0", b"0123456789abcdef"), client.get("hb/0"))
        if case == "connect":
            return connect
        counter = iter(range(1 << 30))
        return lambda: _gloo_group(server, client, next(counter))

    return Contender(name, setup)


def _gloo_group(a: Any, b: Any, index: int) -> None:
    import torch
    import torch.distributed as dist

    def member(rank: int, store: Any) -> None:
        group = dist.ProcessGroupGloo(dist.PrefixStore(f"g{index}", store), rank, 2, _TIMEOUT)
        group.allreduce([torch.ones(1)]).wait()

    threads = [threading.Thread(target=member, args=(r, s)) for r, s in enumerate((a, b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main(argv: list[str] | None = None) -> None:
    settings = parse_settings(__doc__.splitlines()[0], (), argv, steps=200, repeats=7, warmup=5)
    print(time.strftime("%Y-%m-%d %H:%M"), f"cpus={os.cpu_count()}",
          "(shared machine: medians of alternating rounds)")
    cases = [("round trip", settings.steps, lambda r: 1e6 / r / 2, "us/op"),
             ("connect", max(settings.steps // 10, 1), lambda r: 1e3 / r, "ms"),
             ("gloo group", max(settings.steps // 20, 1), lambda r: 1e3 / r, "ms")]
    for case, steps, scale, unit in cases:
        keep: list = []
        run = Settings(**{**settings.__dict__, "steps": steps, "quiet": True, "warmup": 2})
        results: list[Result] = measure([_contender("flowmesh", _ours, case, keep),
                                         _contender("TCPStore", _torch, case, keep)], run)
        ours, peer = (scale(r.median) for r in results)
        print(json.dumps({"bench": "rendezvous_store", "config": case, "unit": unit,
                          "value": round(ours, 2), "peer": "TCPStore", "peer_value": round(peer, 2),
                          "ratio": round(ours / peer, 3),
                          "rounds": [[round(scale(v), 2) for v in r.rates] for r in results]}))


if __name__ == "__main__":
    main()
