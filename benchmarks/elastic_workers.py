"""The training processes of ``benchmarks/elastic_recovery.py`` (flowmesh and torchrun).

Both train the same model on the same data with the same global batch: an MLP
784-256-256-10 (ReLU, momentum SGD) on fixed random data, global batch 120 split over the
ranks. Every process appends JSON records ``{"t": wall clock, "kind": ...}`` to
``<out>/<tag>_<pid>.jsonl``: ``start`` (ready to train), ``step`` (a completed step, with
the rank, size and step number) and, for flowmesh, ``reset`` (the group was re-formed,
with the failure-caught and group-formed times). Both stop at the step number written to
``<out>/stop_at`` (read at every commit / checkpoint, so every rank stops at the same step).

* ``flowmesh``: ``hvd.elastic`` under ``flowmesh run --min-np ...``; ``state.commit()``
  every ``--commit`` steps (in memory).
* ``torchrun``: ``DistributedDataParallel`` on gloo under ``torchrun --max-restarts``;
  rank 0 saves a checkpoint every ``--commit`` steps (``torch.save`` to a temporary file,
  then rename) and every (re)started rank loads it: torchrun's own recovery recipe.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

LAYERS = (784, 256, 256, 10)
GLOBAL_BATCH = 120
EXAMPLES = 3840


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    return (rng.rand(EXAMPLES, LAYERS[0]).astype(np.float32),
            rng.randint(0, LAYERS[-1], EXAMPLES).astype(np.int64))


def local_slice(step: int, rank: int, size: int) -> np.ndarray:
    """Example indices of this rank's part of global batch ``step``."""
    start = (step * GLOBAL_BATCH) % (EXAMPLES - GLOBAL_BATCH + 1)
    return np.array_split(np.arange(start, start + GLOBAL_BATCH), size)[rank]


class Recorder:
    """Appends JSON records to ``<out>/<tag>_<pid>.jsonl`` (one line each, flushed)."""

    def __init__(self, out: str, tag: str):
        self.out = out
        self._file = open(os.path.join(out, f"{tag}_{os.getpid()}.jsonl"), "a", buffering=1)  # noqa: SIM115

    def __call__(self, kind: str, **fields: Any) -> None:
        self._file.write(json.dumps({"t": time.time(), "kind": kind, "pid": os.getpid(), **fields}) + "\n")

    def stop_at(self, default: int) -> int:
        path = os.path.join(self.out, "stop_at")
        return int(open(path).read()) if os.path.exists(path) else default  # noqa: SIM115


def flowmesh_worker(args: argparse.Namespace) -> None:
    import flowmesh as tf
    import flowmesh.collective as hvd

    record = Recorder(args.out, "flowmesh")
    hvd.init()
    x_all, y_all = data()
    x = tf.placeholder(tf.float32, [None, LAYERS[0]])
    y = tf.placeholder(tf.int64, [None])
    tf.set_random_seed(0)
    h = x
    for i, (n_in, n_out) in enumerate(zip(LAYERS[:-1], LAYERS[1:])):
        h = tf.matmul(h, tf.get_variable(f"w{i}", [n_in, n_out])) + tf.get_variable(
            f"b{i}", [n_out], initializer=tf.zeros_initializer())
        h = tf.nn.relu(h) if i < len(LAYERS) - 2 else h
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
    train_op = hvd.DistributedOptimizer(tf.train.MomentumOptimizer(0.01, 0.9)).minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    state = hvd.elastic.TensorFlowState(session=sess, step=0)
    state.register_reset_callbacks([lambda: record("reset", **_last_reset(hvd))])
    limit = [args.steps]
    record("start", member=os.environ.get("FLOWMESH_ELASTIC_ID", ""))

    @hvd.elastic.run
    def train(state: Any) -> None:
        while state.step < limit[0]:
            mine = local_slice(state.step, hvd.rank(), hvd.size())
            sess.run(train_op, {x: x_all[mine], y: y_all[mine]})
            state.step += 1
            record("step", step=state.step, rank=hvd.rank(), size=hvd.size())
            if state.step % args.commit == 0:
                limit[0] = record.stop_at(limit[0])
                state.commit()

    train(state)


def _last_reset(hvd: Any) -> dict[str, Any]:
    event = hvd.elastic.reset_log.events[-1]
    return {"began": event["began"], "formed": event["formed"], "size": event["new"][1],
            "rank": event["new"][0]}


def torchrun_worker(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    record = Recorder(args.out, "torchrun")
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    # One store namespace per restart: with torchrun's default (the agent's store, no
    # namespace) a restarted group read the dead group's gloo addresses and failed to connect.
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), size, False)
    dist.init_process_group("gloo", store=dist.PrefixStore(f"restart_{restart}", store),
                            rank=rank, world_size=size)
    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(LAYERS[:-1], LAYERS[1:])):
        layers += [torch.nn.Linear(n_in, n_out)] + ([torch.nn.ReLU()] if i < len(LAYERS) - 2 else [])
    model = DistributedDataParallel(torch.nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    ckpt = os.path.join(args.out, "torchrun_ckpt.pt")
    step = 0
    if os.path.exists(ckpt):
        saved = torch.load(ckpt)
        model.module.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        step = saved["step"]
    x_all, y_all = (torch.from_numpy(a) for a in data())
    limit = args.steps
    record("start", restart=restart, rank=rank)
    while step < limit:
        mine = torch.from_numpy(local_slice(step, rank, size))
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x_all[mine]), y_all[mine]).backward()
        opt.step()
        step += 1
        record("step", step=step, rank=rank, size=size, restart=restart)
        if step % args.commit == 0:
            limit = record.stop_at(limit)
            if rank == 0:
                torch.save({"model": model.module.state_dict(), "opt": opt.state_dict(),
                            "step": step}, ckpt + ".tmp")
                os.replace(ckpt + ".tmp", ckpt)
    dist.destroy_process_group()


WORKERS: dict[str, Callable[[argparse.Namespace], None]] = {
    "flowmesh": flowmesh_worker, "torchrun": torchrun_worker}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=sorted(WORKERS))
    p.add_argument("--out", required=True)
    p.add_argument("--commit", type=int, default=10)
    p.add_argument("--steps", type=int, default=10 ** 9)
    args = p.parse_args(argv)
    WORKERS[args.kind](args)


if __name__ == "__main__":
    main()
