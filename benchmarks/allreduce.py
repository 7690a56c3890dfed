"""All-reduce bus bandwidth and tensor fusion, 2 processes on loopback, side by side.

    python -m benchmarks.allreduce [--repeats 5] [--sizes 4KB,64KB,1MB,4MB,16MB,64MB]
    python -m benchmarks.allreduce --hosts 1gbit --sizes 4MB,16MB,64MB --fp16   # between hosts

Launches 2 ranks (``flowmesh run``); both alternate the contenders round by round, rank 0
reports. Threads: 1 torch intra-op thread per rank. ``--hosts RATE`` puts each rank on a
host of its own (a namespace bed, :mod:`flowmesh.testing.hosts`, links shaped to RATE),
started as ``flowmesh run --nnodes`` on every host, and reports the bus bandwidth against
the link rate too. ``--fp16`` adds ``flowmesh_fp16``: the graph op with
``Compression.fp16`` (float16 on the wire; its bandwidth counts the float32 bytes reduced).

1. ``allreduce_busbw`` (sum of a float32 tensor): bus bandwidth
   ``2 (n-1)/n * bytes / time`` (MB/s) of
   * ``flowmesh``: the collective engine (negotiation, then the gloo all-reduce into a
     pooled output buffer; the input is never modified);
   * ``flowmesh_donated``: the engine with a donated input (``Request(donated=True)``,
     what the graph op gets when its input is dead: in place, like raw gloo, also on the
     speculative path of two ranks, see ``collective/speculation.py``);
   * ``flowmesh_graph``: the same through the graph op (``Session.run`` of an all-reduce
     of a variable's value, result not fetched; a live input, so out of place);
   * ``gloo``: raw ``torch.distributed.all_reduce`` (gloo, in place), the practical limit.
   Target (issue 6): flowmesh >= 0.9x gloo at >= 4 MB. A second table
   (``allreduce_busbw_in_place``) compares the like-for-like pair, ``flowmesh_donated``
   and ``gloo``, both in place, with its paired ratio.
2. ``fusion``: 100 float32 gradients of 10 KB through ``Session.run``: one fused grouped
   all-reduce (``fused``) vs one all-reduce op per tensor (``one_each``). Target >= 3x.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

from benchmarks.harness import Contender, Settings, measure, report

SIZES = {"4KB": 4 << 10, "64KB": 64 << 10, "1MB": 1 << 20, "4MB": 4 << 20, "16MB": 16 << 20,
         "64MB": 64 << 20}


def _steps_for(nbytes: int) -> int:
    """About 256 MB moved per round (at least 4 steps, at most 200)."""
    return int(min(200, max(4, (256 << 20) // max(nbytes, 1))))


def _raw_gloo() -> Any:
    """A plain torch.distributed gloo group on the launcher's store (the peer). The store
    is flowmesh's authenticated one, so the peer connects with flowmesh's client (a
    ``torch.distributed.Store``); torch's own TCPStore client is refused by it."""
    import torch.distributed as dist

    from flowmesh import config
    from flowmesh.collective.backends.torch_dist import connect_store
    from flowmesh.collective.world import split_address

    host, port = split_address(config.RENDEZVOUS.get(), "FLOWMESH_RENDEZVOUS")
    store = connect_store(host, port, False, None, 60.0)
    dist.init_process_group("gloo", store=dist.PrefixStore("bench-gloo", store),
                            rank=config.RANK.get(), world_size=config.SIZE.get())
    return dist


def _busbw(result: Any, nbytes: int, size: int) -> None:
    factor = 2 * (size - 1) / size * nbytes / 1e6
    result.rates = [rate * factor for rate in result.rates]


def bench_bandwidth(label: str, nbytes: int, settings: Settings, rank: int, size: int,
                    fp16: bool = False, link: str = "") -> None:
    import torch

    import flowmesh as tf
    from flowmesh.collective import context
    from flowmesh.collective.request import Request
    from flowmesh.ops import collective_ops

    dist = sys.modules["torch.distributed"]
    numel = nbytes // 4
    engine = context.world_engine()
    source = torch.rand(numel)
    peer = source.clone()
    donated = source.clone()
    graph = tf.Graph()
    with graph.as_default():
        var = tf.Variable(tf.zeros([numel]), name="payload")
        reduced = collective_ops.all_reduce(var.value(), name=f"bench_{label}")
        if fp16:
            import flowmesh.collective as hvd

            halved = hvd.allreduce(var.value(), op=hvd.Sum, compression=hvd.Compression.fp16,
                                   name=f"bench_{label}_fp16")
        sess = tf.Session(graph=graph)
        sess.run(var.initializer)

    contenders = [
        Contender("flowmesh", lambda s: lambda: engine.run(
            Request("allreduce", f"bench/{label}", "bench", [source], "sum"))),
        Contender("flowmesh_donated", lambda s: lambda: engine.run(
            Request("allreduce", f"bench/{label}/donated", "bench", [donated], "sum", donated=True))),
        Contender("flowmesh_graph", lambda s: lambda: sess.run(reduced.op)),
        Contender("gloo", lambda s: lambda: dist.all_reduce(peer)),
    ]
    if fp16:
        contenders.insert(3, Contender("flowmesh_fp16", lambda s: lambda: sess.run(halved.op)))
    run_settings = Settings(threads=1, repeats=settings.repeats, steps=_steps_for(nbytes),
                            warmup=2, quiet=rank != 0)
    results = measure(contenders, run_settings)
    for r in results:
        _busbw(r, nbytes, size)
    if rank == 0:
        where = f", {size} hosts at {link}" if link else ""
        report("allreduce_busbw", f"{label} float32 sum, {size} ranks{where}", results, run_settings,
               unit="MB/s")
        if link:
            limit = _rate_mb(link)
            print("link " + " ".join(f"{r.name}={r.median / limit:.3f}" for r in results)
                  + f" of {limit:.0f} MB/s", flush=True)
        by_name = {r.name: r for r in results}  # both in place: the like-for-like ratio
        report("allreduce_busbw_in_place", f"{label} float32 sum, {size} ranks, donated input",
               [by_name["flowmesh_donated"], by_name["gloo"]], run_settings, unit="MB/s")
    sess.close()


def bench_fusion(settings: Settings, rank: int, size: int) -> None:
    import flowmesh as tf
    from flowmesh.ops import collective_ops

    values = [np.random.RandomState(i).rand(2560).astype(np.float32) for i in range(100)]  # 10 KB
    graph = tf.Graph()
    with graph.as_default():
        grads = [tf.Variable(v, name=f"grad_{i}").value() for i, v in enumerate(values)]
        fused = collective_ops.grouped_all_reduce(grads, name="fused")
        one_each = [collective_ops.all_reduce(g, name=f"single_{i}") for i, g in enumerate(grads)]
        fused_op = tf.group(*fused)
        each_op = tf.group(*one_each)
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
    contenders = [Contender("fused", lambda s: lambda: sess.run(fused_op)),
                  Contender("one_each", lambda s: lambda: sess.run(each_op))]
    run_settings = Settings(threads=1, repeats=settings.repeats, steps=10, warmup=2,
                            quiet=rank != 0)
    results = measure(contenders, run_settings)
    if rank == 0:
        report("allreduce_fusion", f"100 x 10 KB float32 gradients, {size} ranks", results,
               run_settings)
    sess.close()


def _rate_mb(rate: str) -> float:
    """A tc rate (``1gbit``) in MB/s."""
    from benchmarks.ps_step import _rate_bits

    return _rate_bits(rate) / 8 / 1e6


def worker(args: argparse.Namespace) -> None:
    import flowmesh.collective as hvd

    os.environ["FLOWMESH_FUSION_THRESHOLD_MB"] = "64"
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    _raw_gloo()
    settings = Settings(threads=1, repeats=args.repeats)
    for label in args.sizes.split(","):
        bench_bandwidth(label, SIZES[label], settings, rank, size, args.fp16, args.link)
    if not args.link:
        bench_fusion(settings, rank, size)


def between_hosts(args: argparse.Namespace) -> int:
    """Runs the ranks on ``args.np`` hosts of a bed, one ``flowmesh run`` node each."""
    from flowmesh.testing.hosts import HostBed

    _rate_mb(args.hosts)
    command = ["-m", "benchmarks.allreduce", "--repeats", str(args.repeats), "--sizes", args.sizes,
               "--link", args.hosts] + (["--fp16"] if args.fp16 else [])
    env = {"OMP_NUM_THREADS": "1", "FLOWMESH_COLLECTIVE_TIMEOUT_S": "300"}
    with HostBed(args.np, rate=args.hosts) as bed:
        endpoint = f"{bed.ip('h1')}:29400"
        nodes = [bed.spawn(f"h{i + 1}", [sys.executable, "-m", "flowmesh.cli.main", "run", "--nnodes",
                                         str(args.np), "--node-rank", str(i), "--rdzv-endpoint", endpoint,
                                         "--nproc-per-node", "1", "--no-prefix", sys.executable, *command],
                           env=env, label=f"node{i}") for i in range(args.np)]
        codes = [node.wait(3600) for node in nodes]
        print(nodes[0].output())
        return next((c for c in codes if c), 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--hosts", metavar="RATE", default="",
                        help="one rank per host of a namespace bed, links shaped to RATE (root)")
    parser.add_argument("--fp16", action="store_true", help="add the Compression.fp16 contender")
    parser.add_argument("--link", default="", help=argparse.SUPPRESS)  # set on the hosts' ranks
    args = parser.parse_args(argv)
    unknown = [s for s in args.sizes.split(",") if s not in SIZES]
    if unknown:
        parser.error(f"unknown sizes {unknown}; choose from {list(SIZES)}")
    if "FLOWMESH_RANK" in os.environ:
        worker(args)
        return 0
    if args.hosts:
        return between_hosts(args)
    from flowmesh.cli.run import launch

    command = [sys.executable, "-m", "benchmarks.allreduce", "--repeats", str(args.repeats),
               "--sizes", args.sizes] + (["--fp16"] if args.fp16 else [])
    env = {"OMP_NUM_THREADS": "1", "FLOWMESH_COLLECTIVE_TIMEOUT_S": "300"}
    return launch(args.np, command, env=env, prefix=False).returncode


if __name__ == "__main__":
    sys.exit(main())
