"""Parameter-server training steps: flowmesh vs TensorFlow's own ps/worker runtime.

    python -m benchmarks.ps_step [--repeats 5] [--steps 200] [--models null,dense10m]
    python -m benchmarks.ps_step --models pull1m --hosts 1gbit     # between hosts (root)

For each system, 1 ps + 2 worker processes on loopback (one intra-op thread each). Each
worker builds the same between-graph model with the variables on ``/job:ps/task:0``
and trains asynchronously; the driver asks both workers to run ``--steps`` steps at the
same time, alternating systems round by round, and reports per system the median and
p90 step time (over every step of both workers) and the updates/s of the pair.

* ``null``: a scalar variable, ``loss = v * v``, SGD. The step is all coordination:
  client -> master -> ps and back, one tiny tensor each way.
* ``dense10m``: a 1000 x 10000 float32 weight (10M parameters) on the ps, a batch of
  16 on the worker, ``loss = mean((x @ W) ** 2)``, SGD: 40 MB to the worker and 40 MB of
  gradient back per step.

* ``pull1m``: a 1M-float variable on the ps, ``loss = sum(v * v) / 2`` on the worker,
  SGD: each step pulls the variable (4 MB) to the worker and pushes the gradient (4 MB)
  back.

``--hosts RATE`` runs the three tasks on three hosts of a multi-host bed
(:mod:`flowmesh.testing.hosts`: network namespaces with their own addresses), every link
shaped to RATE (``1gbit``, ``10gbit``), and reports the updates/s against what the ps's
link can carry (4 MB each way per update).

Targets (issue 5): null-model step time <= 1.5x TensorFlow's (goal 1.0x); dense 10M
updates/s >= 1.0x TensorFlow's. Issue 28: pull1m between hosts at 1 Gbit/s >= 1.0x
TensorFlow's updates/s (goal >= 97% of the link).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"null": (200, 20), "dense10m": (8, 2), "pull1m": (40, 5)}  # steps per round, warm-up
PULL_FLOATS = 1_000_000


# --- the agent: one task of one system ------------------------------------------------------
def build(tf: Any, model: str, index: int) -> Any:
    """The worker's graph: returns the train op."""
    import numpy as np

    with tf.device("/job:ps/task:0"):
        if model == "null":
            v = tf.get_variable("v", [], initializer=tf.constant_initializer(1.0))
        elif model == "pull1m":
            v = tf.get_variable("v", [PULL_FLOATS], initializer=tf.constant_initializer(1.0))
        else:
            v = tf.get_variable("w", [1000, 10000], initializer=tf.constant_initializer(0.001))
    with tf.device(f"/job:worker/task:{index}"):
        if model == "null":
            loss = v * v
        elif model == "pull1m":
            loss = tf.reduce_sum(v * v) / 2.0  # its gradient is v itself: pulled, then pushed
        else:
            x = tf.constant(np.random.RandomState(index).rand(16, 1000).astype(np.float32))
            loss = tf.reduce_mean(tf.square(tf.matmul(x, v)))
        train = tf.train.GradientDescentOptimizer(0.001).minimize(loss)
    return train, v


def agent(system: str, model: str, cluster: dict[str, list[str]], job: str, index: int,
          one_thread: bool = True) -> None:
    if system == "tensorflow":
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
        config = (tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=2)
                  if one_thread else None)
        server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name=job, task_index=index, config=config)
    else:
        import flowmesh as tf  # noqa: I001 - before torch: it sets OpenMP's wait policy torch reads once
        import torch

        config = tf.ConfigProto(intra_op_parallelism_threads=1) if one_thread else None
        if one_thread:
            torch.set_num_threads(1)
        server = tf.train.Server(cluster, job_name=job, task_index=index, config=config)
    if job == "ps":
        print("ready", flush=True)
        sys.stdin.read()
        return
    train, v = build(tf, model, index)
    with tf.Session(server.target) as sess:
        if index == 0:
            sess.run(tf.global_variables_initializer())
        while len(sess.run(tf.report_uninitialized_variables())):
            time.sleep(0.05)
        print("ready", flush=True)
        for line in sys.stdin:
            n = int(line.split()[1])
            times = []
            start = time.perf_counter()
            for _ in range(n):
                t0 = time.perf_counter()
                sess.run(train)
                times.append(time.perf_counter() - t0)
            elapsed = time.perf_counter() - start
            print(json.dumps({"elapsed": elapsed, "times": times}), flush=True)


# --- the driver ----------------------------------------------------------------------------
class Cluster:
    """1 ps + 2 worker agent processes of one system (on hosts h1-h3 of ``bed``, if given)."""

    def __init__(self, system: str, model: str, bed: Any = None, one_thread: bool = True):
        from flowmesh.distributed.ports import free_ports

        if bed is None:
            ports = free_ports(3)
            self.cluster = {"ps": [f"localhost:{ports[0]}"],
                            "worker": [f"localhost:{ports[1]}", f"localhost:{ports[2]}"]}
        else:
            self.cluster = {"ps": [f"{bed.ip('h1')}:2222"],
                            "worker": [f"{bed.ip('h2')}:2222", f"{bed.ip('h3')}:2222"]}
        self.procs = []
        env = dict(os.environ, PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="3")
        if one_thread:
            env["OMP_NUM_THREADS"] = "1"
        for n, (job, index) in enumerate((("ps", 0), ("worker", 0), ("worker", 1)), start=1):
            argv = [sys.executable, "-m", "benchmarks.ps_step", "--agent", system, model,
                    json.dumps(self.cluster), job, str(index), "1" if one_thread else "0"]
            argv = bed.argv(f"h{n}", argv) if bed is not None else argv
            self.procs.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                               text=True, env=env, cwd=ROOT))
        # Start every task first: TensorFlow's sessions wait until all tasks are up.
        for proc, name in zip(self.procs, ("ps:0", "worker:0", "worker:1")):
            self._expect_ready(proc, f"{system} {name}")
        self.workers = self.procs[1:]

    @staticmethod
    def _expect_ready(proc: subprocess.Popen, name: str) -> None:
        line = proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"{name} did not start: {line!r}")

    def run(self, steps: int) -> dict[str, Any]:
        for proc in self.workers:
            proc.stdin.write(f"run {steps}\n")
            proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for proc in self.workers]
        times = [t for r in replies for t in r["times"]]
        return {"updates_per_s": 2 * steps / max(r["elapsed"] for r in replies),
                "median_us": statistics.median(times) * 1e6,
                "p90_us": statistics.quantiles(times, n=10)[-1] * 1e6}

    def close(self) -> None:
        for proc in self.procs:
            try:
                proc.stdin.close()
                proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()


def bench_model(model: str, systems: list[str], repeats: int, steps: int, warmup: int,
                bed: Any = None, rate: str = "", one_thread: bool = True) -> list[dict[str, Any]]:
    # between hosts, one system at a time: both would share the links (same ports, too)
    rounds: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    one_at_a_time = bed is not None
    clusters = {} if one_at_a_time else {s: Cluster(s, model, one_thread=one_thread) for s in systems}
    try:
        for cluster in clusters.values():
            cluster.run(warmup)
        for i in range(repeats):
            for system in systems if i % 2 == 0 else systems[::-1]:
                if one_at_a_time:
                    cluster = Cluster(system, model, bed, one_thread)
                    try:
                        cluster.run(warmup)
                        rounds[system].append(cluster.run(steps))
                    finally:
                        cluster.close()
                else:
                    rounds[system].append(clusters[system].run(steps))
    finally:
        for cluster in clusters.values():
            cluster.close()
    return _report(model, rounds, repeats, steps, rate, one_thread)


def _report(model: str, rounds: dict[str, list[dict[str, Any]]], repeats: int, steps: int,
            rate: str = "", one_thread: bool = True) -> list[dict[str, Any]]:
    where = f", 3 hosts, links at {rate}" if rate else ", loopback"
    threads = "1 intra-op thread" if one_thread else "each system's default threads"
    print(f"\nps_step/{model}: 1 ps + 2 workers{where}, async, {threads}, {repeats} rounds x "
          f"{steps} steps per worker")
    print(f"{'system':<12}{'median step us':>16}{'p90 us':>10}{'updates/s':>12}{'best upd/s':>12}")
    summary = {}
    for system, rs in rounds.items():
        summary[system] = {key: statistics.median(r[key] for r in rs) for key in rs[0]}
        summary[system]["best"] = max(r["updates_per_s"] for r in rs)
        s = summary[system]
        print(f"{system:<12}{s['median_us']:>16.0f}{s['p90_us']:>10.0f}{s['updates_per_s']:>12.1f}{s['best']:>12.1f}")
    fm = summary["flowmesh"]
    records = []
    for peer in [p for p in summary if p != "flowmesh"] or [None]:
        pv = summary.get(peer) if peer else None
        config = ("1 ps + 2 workers async, step time us" + (f", 3 hosts at {rate}" if rate else "")
                  + ("" if one_thread else ", default threads"))
        record = {"bench": f"ps_step/{model}", "config": config,
                  "flowmesh": round(fm["median_us"], 1), "flowmesh_p90": round(fm["p90_us"], 1),
                  "flowmesh_updates_per_s": round(fm["updates_per_s"], 1), "peer": peer,
                  "peer_value": None if pv is None else round(pv["median_us"], 1),
                  "peer_p90": None if pv is None else round(pv["p90_us"], 1),
                  "peer_updates_per_s": None if pv is None else round(pv["updates_per_s"], 1),
                  "ratio": None if pv is None else round(fm["median_us"] / pv["median_us"], 3),
                  "updates_ratio": None if pv is None else round(fm["updates_per_s"] / pv["updates_per_s"], 3)}
        if rate and model == "pull1m":  # the ps's link carries 4 MB each way per update
            limit = _rate_bits(rate) / 8 / (4 * PULL_FLOATS)
            record["link_limit_updates_per_s"] = round(limit, 2)
            record["flowmesh_link_fraction"] = round(fm["updates_per_s"] / limit, 3)
            if pv is not None:
                record["peer_link_fraction"] = round(pv["updates_per_s"] / limit, 3)
        print(json.dumps(record))
        records.append(record)
    return records


def _rate_bits(rate: str) -> float:
    """``"1gbit"`` -> 1e9 (tc's units: kbit, mbit, gbit)."""
    units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
    for unit, scale in units.items():
        if rate.endswith(unit):
            return float(rate[:-len(unit)]) * scale
    raise ValueError(f"rate {rate!r}: give kbit, mbit or gbit (e.g. 1gbit)")


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--agent"]:
        system, model, cluster, job, index, one_thread = argv[1:7]
        agent(system, model, json.loads(cluster), job, int(index), one_thread == "1")
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=0, help="steps per worker per round (0: per model)")
    parser.add_argument("--models", default="null,dense10m")
    parser.add_argument("--peers", default="tensorflow", help="'' to run flowmesh only")
    parser.add_argument("--hosts", metavar="RATE", default="",
                        help="run the tasks on 3 hosts of a namespace bed, links shaped to RATE")
    parser.add_argument("--threads", type=int, choices=(0, 1), default=1,
                        help="1: one intra-op thread per task (default); 0: each system's defaults")
    args = parser.parse_args(argv)
    systems = ["flowmesh"] + [p for p in args.peers.split(",") if p]
    print(time.strftime("%Y-%m-%d %H:%M"), f"cpus={os.cpu_count()}")
    bed = None
    if args.hosts:
        from flowmesh.testing.hosts import HostBed

        _rate_bits(args.hosts)
        bed = HostBed(3, rate=args.hosts)
    try:
        for model in args.models.split(","):
            default_steps, warmup = MODELS[model]
            bench_model(model, systems, args.repeats, args.steps or default_steps, warmup, bed,
                        args.hosts, args.threads == 1)
    finally:
        if bed is not None:
            bed.close()


if __name__ == "__main__":
    main()
