"""Data-parallel scaling efficiency on 2 processes x 1 thread: flowmesh vs torch DDP vs TF.

    python -m benchmarks.scaling [--repeats 5] [--models mlp,cnn] [--peers torch_ddp,tf_mwms]
    python -m benchmarks.scaling --hosts 1gbit --np 3 --models cnn --peers torch_ddp  # between hosts

Efficiency = throughput(2 processes) / (2 x throughput(1 process)) with the same batch per
process (weak scaling) = steps/s of a rank in the 2-process job / steps/s of the process
alone. Every framework trains the same model on the same data with plain SGD:

* ``flowmesh``: TF1 graph, ``hvd.DistributedOptimizer`` (fused, overlapped all-reduce);
* ``torch_ddp``: ``torch.nn.parallel.DistributedDataParallel`` on a gloo process group;
* ``tf_mwms``: TensorFlow 2 ``MultiWorkerMirroredStrategy`` (``strategy.run`` in a
  ``tf.function``, gradients summed with the replica context's all-reduce).

Models: MLP 784-256-256-10 (batch 128 per process) and the LeNet-style CNN of
``benchmarks.cnn_step`` (28x28x1, batch 64 per process). One launch of 2 ranks runs all
frameworks; each round alternates their order. A framework's single-process rate is
measured on rank 0 while rank 1 waits at a barrier; its 2-process rate with both ranks
stepping. Target (issue 6): flowmesh >= torch DDP - 5 points; goal >= both peers.

``--hosts RATE --np N`` runs one rank on each of N hosts of a namespace bed
(:mod:`flowmesh.testing.hosts`, links shaped to RATE), started as ``flowmesh run --nnodes``
on every host: efficiency = a rank's steps/s in the N-rank job / the process alone. The
hosts share this machine's cores, so beyond its core count the ranks compete for CPU as
well as for the links (every framework alike).

flowmesh raises glibc's malloc thresholds when its first session starts
(``runtime/host_memory.py``), for the whole process: the peers measured in the same launch
run with them too. ``--no-flowmesh`` times the peers in processes that never start a
flowmesh session (malloc's defaults, as in a plain peer job); alternate the two launches
to compare against both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

LR = 0.01
MLP = (784, 256, 256, 10)
PEERS = ("torch_ddp", "tf_mwms")
Step = Callable[[], Any]


# --- data -------------------------------------------------------------------------------------
def model_data(model: str, rank: int) -> tuple[Any, list[tuple[np.ndarray, np.ndarray]]]:
    """Identical initial weights on every rank; each rank its own batches."""
    if model == "mlp":
        from benchmarks.mlp_step import make_data as mlp_data

        params, _ = mlp_data(MLP, 128, batches=1, seed=0)
        _, data = mlp_data(MLP, 128, batches=4, seed=1 + rank)
        return params, data
    from benchmarks.cnn_step import make_data as cnn_data

    params, _ = cnn_data(64, batches=1, seed=0)
    _, data = cnn_data(64, batches=4, seed=1 + rank)
    return params, data


# --- flowmesh ---------------------------------------------------------------------------------
def flowmesh_step(model: str, params: Any, data: list[Any], distributed: bool) -> Step:
    import flowmesh as tf
    import flowmesh.collective as hvd

    graph = tf.Graph()
    with graph.as_default():
        forward = _flowmesh_mlp if model == "mlp" else _flowmesh_lenet
        x, y, logits = forward(tf, params)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        opt = tf.train.GradientDescentOptimizer(LR)
        train_op = (hvd.DistributedOptimizer(opt) if distributed else opt).minimize(loss)
        sess = tf.Session(graph=graph)
        sess.run(tf.global_variables_initializer())
    feeds = [{x: xs, y: ys} for xs, ys in data]
    counter = [0]

    def step() -> Any:
        counter[0] += 1
        return sess.run(train_op, feeds[counter[0] % len(feeds)])

    return step


def _flowmesh_mlp(tf: Any, params: list[np.ndarray]) -> tuple[Any, Any, Any]:
    x = tf.placeholder(tf.float32, [None, MLP[0]])
    h = x
    for i in range(len(MLP) - 1):
        h = tf.matmul(h, tf.Variable(params[2 * i])) + tf.Variable(params[2 * i + 1])
        h = tf.nn.relu(h) if i < len(MLP) - 2 else h
    return x, tf.placeholder(tf.int64, [None]), h


def _flowmesh_lenet(tf: Any, params: dict[str, np.ndarray]) -> tuple[Any, Any, Any]:
    """The network of ``benchmarks.cnn_step`` (conv-pool-conv-pool-fc-fc)."""
    v = {name: tf.Variable(value) for name, value in params.items()}
    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, v["conv1/w"], [1, 1, 1, 1], "SAME"), v["conv1/b"]))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, v["conv2/w"], [1, 1, 1, 1], "VALID"), v["conv2/b"]))
    h = tf.reshape(tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), [-1, 1250])
    h = tf.nn.relu(tf.matmul(h, v["fc1/w"]) + v["fc1/b"])
    return x, tf.placeholder(tf.int64, [None]), tf.matmul(h, v["fc2/w"]) + v["fc2/b"]


# --- torch DDP --------------------------------------------------------------------------------
def torch_step(model: str, params: Any, data: list[Any], distributed: bool) -> Step:
    import torch
    import torch.nn as nn

    if model == "mlp":
        layers: list[nn.Module] = []
        for i in range(len(MLP) - 1):
            linear = nn.Linear(MLP[i], MLP[i + 1])
            with torch.no_grad():
                linear.weight.copy_(torch.from_numpy(params[2 * i].T.copy()))
                linear.bias.copy_(torch.from_numpy(params[2 * i + 1]))
            layers += [linear, nn.ReLU()] if i < len(MLP) - 2 else [linear]
        net: nn.Module = nn.Sequential(*layers)
        batches = [(torch.from_numpy(xs), torch.from_numpy(ys)) for xs, ys in data]
    else:
        net = _torch_lenet(params)
        batches = [(torch.from_numpy(xs.transpose(0, 3, 1, 2).copy()), torch.from_numpy(ys))
                   for xs, ys in data]
    if distributed:
        net = nn.parallel.DistributedDataParallel(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=LR)
    counter = [0]

    def step() -> Any:
        counter[0] += 1
        xs, ys = batches[counter[0] % len(batches)]
        loss = nn.functional.cross_entropy(net(xs), ys)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    return step


def _torch_lenet(params: dict[str, np.ndarray]) -> Any:
    import torch
    import torch.nn as nn

    class LeNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 20, 5, padding=2)
            self.conv2 = nn.Conv2d(20, 50, 5)
            self.fc1 = nn.Linear(1250, 500)
            self.fc2 = nn.Linear(500, 10)
            with torch.no_grad():
                for layer, name in ((self.conv1, "conv1"), (self.conv2, "conv2")):
                    layer.weight.copy_(torch.from_numpy(params[f"{name}/w"].transpose(3, 2, 0, 1).copy()))
                    layer.bias.copy_(torch.from_numpy(params[f"{name}/b"]))
                for layer, name in ((self.fc1, "fc1"), (self.fc2, "fc2")):
                    layer.weight.copy_(torch.from_numpy(params[f"{name}/w"].T.copy()))
                    layer.bias.copy_(torch.from_numpy(params[f"{name}/b"]))

        def forward(self, x: Any) -> Any:
            f = nn.functional
            h = f.max_pool2d(torch.relu(self.conv1(x)), 2)
            h = f.max_pool2d(torch.relu(self.conv2(h)), 2)
            h = torch.relu(self.fc1(h.permute(0, 2, 3, 1).reshape(-1, 1250)))
            return self.fc2(h)

    return LeNet()


# --- TensorFlow MultiWorkerMirroredStrategy ------------------------------------------------------
def tf_step(tf2: Any, strategy: Any, model: str, params: Any, data: list[Any],
            distributed: bool) -> Step:
    scope = strategy.scope() if distributed else _NullContext()
    with scope:
        if model == "mlp":
            variables = [tf2.Variable(p) for p in params]
        else:
            order = ["conv1/w", "conv1/b", "conv2/w", "conv2/b", "fc1/w", "fc1/b", "fc2/w", "fc2/b"]
            variables = [tf2.Variable(params[name]) for name in order]

    def forward(x: Any) -> Any:
        v = variables
        if model == "mlp":
            h = tf2.nn.relu(tf2.matmul(x, v[0]) + v[1])
            h = tf2.nn.relu(tf2.matmul(h, v[2]) + v[3])
            return tf2.matmul(h, v[4]) + v[5]
        h = tf2.nn.relu(tf2.nn.bias_add(tf2.nn.conv2d(x, v[0], 1, "SAME"), v[1]))
        h = tf2.nn.max_pool2d(h, 2, 2, "VALID")
        h = tf2.nn.relu(tf2.nn.bias_add(tf2.nn.conv2d(h, v[2], 1, "VALID"), v[3]))
        h = tf2.reshape(tf2.nn.max_pool2d(h, 2, 2, "VALID"), [-1, 1250])
        return tf2.matmul(tf2.nn.relu(tf2.matmul(h, v[4]) + v[5]), v[6]) + v[7]

    def replica_step(x: Any, y: Any) -> Any:
        with tf2.GradientTape() as tape:
            logits = forward(x)
            loss = tf2.reduce_mean(tf2.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, variables)
        if distributed:
            ctx = tf2.distribute.get_replica_context()
            grads = ctx.all_reduce(tf2.distribute.ReduceOp.MEAN, grads)
        for v, g in zip(variables, grads):
            v.assign_sub(LR * g)
        return loss

    if distributed:
        fn = tf2.function(lambda x, y: strategy.run(replica_step, args=(x, y)))
    else:
        fn = tf2.function(replica_step)
    batches = [(tf2.constant(xs), tf2.constant(ys)) for xs, ys in data]
    counter = [0]

    def step() -> Any:
        counter[0] += 1
        return fn(*batches[counter[0] % len(batches)])

    return step


class _NullContext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


# --- measurement ------------------------------------------------------------------------------
def _rate(step: Step, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - start)


def measure_model(model: str, builders: dict[str, Callable[..., Step]], repeats: int,
                  rank: int, barrier: Callable[[], None]) -> dict[str, dict[str, list[float]]]:
    params, data = model_data(model, rank)
    steps = 30 if model == "mlp" else 10
    single = {name: build(model, params, data, False) for name, build in builders.items()}
    dist = {name: build(model, params, data, True) for name, build in builders.items()}
    for name in builders:  # warm-up (tracing, plan building, first collectives)
        if rank == 0:
            _rate(single[name], 3)
        barrier()
        _rate(dist[name], 3)
        barrier()
    rates = {name: {"single": [], "dist": []} for name in builders}
    names = list(builders)
    for r in range(repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            barrier()
            if rank == 0:
                rates[name]["single"].append(_rate(single[name], steps))
            barrier()
            rates[name]["dist"].append(_rate(dist[name], steps))
    barrier()
    return rates


def report(model: str, rates: dict[str, dict[str, list[float]]], repeats: int, size: int = 2,
           link: str = "") -> None:
    where = f" on {size} hosts at {link}" if link else ""
    config = ("MLP 784-256-256-10 batch 128/process" if model == "mlp"
              else "LeNet-style CNN 28x28x1 batch 64/process") + f", {size} processes x 1 thread{where}, SGD"
    eff = {name: statistics.median(r["dist"]) / statistics.median(r["single"])
           for name, r in rates.items()}
    best = {name: max(r["dist"]) / max(r["single"]) for name, r in rates.items()}
    print(f"\nscaling: {config} (rounds={repeats}, cpus={os.cpu_count()})")
    print(f"{'system':<12}{'1 proc steps/s':>16}{f'{size} proc steps/s':>16}{'efficiency':>12}{'best':>8}")
    for name, r in rates.items():
        print(f"{name:<12}{statistics.median(r['single']):>16.1f}{statistics.median(r['dist']):>16.1f}"
              f"{eff[name]:>12.1%}{best[name]:>8.1%}")
    for peer in [n for n in rates if n != "flowmesh" and "flowmesh" in rates]:
        print(json.dumps({"bench": "scaling", "config": config, "unit": "efficiency",
                          "flowmesh": round(eff["flowmesh"], 3), "peer": peer,
                          "peer_value": round(eff[peer], 3),
                          "ratio": round(eff["flowmesh"] / eff[peer], 3),
                          "points": round(100 * (eff["flowmesh"] - eff[peer]), 1)}))


def worker(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    import flowmesh.collective as hvd
    from flowmesh import config
    from flowmesh.collective.backends.torch_dist import connect_store
    from flowmesh.collective.world import split_address

    torch.set_num_threads(1)
    hvd.init()
    rank = hvd.rank()
    host, port = split_address(config.RENDEZVOUS.get(), "FLOWMESH_RENDEZVOUS")
    store = connect_store(host, port, False, None, 60.0)  # flowmesh's authenticated store
    dist.init_process_group("gloo", store=dist.PrefixStore("scaling-ddp", store), rank=rank,
                            world_size=hvd.size())
    peers = [p for p in args.peers.split(",") if p]
    builders: dict[str, Callable[..., Step]] = {} if args.no_flowmesh else {"flowmesh": flowmesh_step}
    if "torch_ddp" in peers:
        builders["torch_ddp"] = torch_step
    if "tf_mwms" in peers:
        tf2, strategy = _tensorflow(rank, args.tf_workers)
        builders["tf_mwms"] = lambda m, p, d, distributed: tf_step(tf2, strategy, m, p, d, distributed)
    for model in args.models.split(","):
        rates = measure_model(model, builders, args.repeats, rank, dist.barrier)
        if rank == 0:
            report(model, rates, args.repeats, hvd.size(), args.link)


def _tensorflow(rank: int, addresses: str) -> tuple[Any, Any]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    workers = addresses.split(",")
    os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": workers},
                                          "task": {"type": "worker", "index": rank}})
    import tensorflow as tf2

    tf2.config.threading.set_intra_op_parallelism_threads(1)
    tf2.config.threading.set_inter_op_parallelism_threads(1)
    strategy = tf2.distribute.MultiWorkerMirroredStrategy()
    del os.environ["TF_CONFIG"]  # flowmesh must not read TensorFlow's cluster
    return tf2, strategy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default="mlp,cnn")
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--no-flowmesh", action="store_true",
                        help="time the peers in processes that never start a flowmesh session "
                             "(so glibc's malloc keeps its defaults, as in a plain peer job)")
    parser.add_argument("--np", type=int, default=2, help="ranks (with --hosts: hosts)")
    parser.add_argument("--hosts", metavar="RATE", default="",
                        help="one rank per host of a namespace bed, links shaped to RATE (root)")
    parser.add_argument("--tf-workers", default="", help=argparse.SUPPRESS)
    parser.add_argument("--link", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if "FLOWMESH_RANK" in os.environ:
        worker(args)
        return 0
    command = [sys.executable, "-m", "benchmarks.scaling", "--repeats", str(args.repeats),
               "--models", args.models, "--peers", args.peers]
    command += ["--no-flowmesh"] if args.no_flowmesh else []
    env = {"OMP_NUM_THREADS": "1", "FLOWMESH_COLLECTIVE_TIMEOUT_S": "600",
           "TF_CPP_MIN_LOG_LEVEL": "2"}
    if args.hosts:
        return _between_hosts(args, command, env)
    from flowmesh.cli.run import launch
    from flowmesh.distributed.ports import free_ports

    workers = ",".join(f"127.0.0.1:{p}" for p in free_ports(args.np))
    return launch(args.np, command + ["--tf-workers", workers], env=env, prefix=False).returncode


def _between_hosts(args: argparse.Namespace, command: list[str], env: dict[str, str]) -> int:
    from flowmesh.testing.hosts import HostBed

    with HostBed(args.np, rate=args.hosts) as bed:
        hosts = [f"h{i + 1}" for i in range(args.np)]
        workers = ",".join(f"{bed.ip(h)}:2223" for h in hosts)
        command = command + ["--tf-workers", workers, "--link", args.hosts]
        nodes = [bed.spawn(h, [sys.executable, "-m", "flowmesh.cli.main", "run", "--nnodes", str(args.np),
                               "--node-rank", str(i), "--rdzv-endpoint", f"{bed.ip('h1')}:29400",
                               "--nproc-per-node", "1", "--no-prefix", *command], env=env, label=h)
                 for i, h in enumerate(hosts)]
        codes = [node.wait(3600) for node in nodes]
        print(nodes[0].output())
        return next((c for c in codes if c), 0)


if __name__ == "__main__":
    sys.exit(main())
