"""Engines: the same ps job under Spark and under ``flowmesh launch``; Spark's two input
modes; a sweep against its ideal wall time.

    python -m benchmarks.engines [--repeats 5] [--quick]

1. ``startup``: seconds from ``TFCluster.run`` (Spark context already up) / from starting
   ``flowmesh launch`` to the chief's first step (1 ps + 2 workers, benchmarks/engine_job.py);
   ``steps/s``: the chief's training steps per second in the same job. Repeats alternate.
2. ``input``: examples/s of 2 workers training an MLP (784-256-10, batch 128) for one epoch
   of the same rows, fed from an RDD (InputMode.SPARK, DataFeed) vs read from .npy shards
   by each worker (InputMode.TENSORFLOW).
3. ``sweep``: 8 trials of ``examples/digits_mlp.py`` on 2 slots; wall time vs the ideal,
   the sum of the trials' times / 2 (``ratio``: the whole ``flowmesh sweep`` process, its
   own start-up included; ``loop_ratio``: from its first trial to its last).
Prints a table and one JSON line per figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ROWS, BATCH = 12_800, 128


def spark_context(slots: int):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master(f"local[{slots}]").appName("flowmesh-bench")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_job(sc) -> dict:
    from benchmarks import engine_job
    from flowmesh.spark import TFCluster

    start = time.time()
    cluster = TFCluster.run(sc, engine_job.map_fun, None, 3, 1)
    cluster.shutdown(timeout=600)
    result = cluster.results[("worker", 0)]
    return {"startup_s": result["first_step"] - start, "steps_per_s": result["steps_per_s"]}


def launch_job() -> dict:
    start = time.time()
    out = subprocess.run([sys.executable, "-m", "flowmesh.cli.main", "launch", "--ps", "1", "--workers", "2",
                          "--timeout", "600", "python", "-m", "benchmarks.engine_job"], cwd=ROOT,
                         capture_output=True, text=True, timeout=660)
    match = re.search(r"RESULT (\{.*\})", out.stdout)
    if out.returncode != 0 or not match:
        raise RuntimeError(f"flowmesh launch failed:\n{out.stdout[-3000:]}{out.stderr[-2000:]}")
    result = json.loads(match.group(1))
    return {"startup_s": result["first_step"] - start, "steps_per_s": result["steps_per_s"]}


def input_worker(args, ctx) -> dict:
    """Trains on one epoch of rows: fed (SPARK) or from this worker's .npy shard."""
    import flowmesh as tf
    from flowmesh.spark import TFNode

    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int64, [None])
    logits = tf.layers.dense(tf.layers.dense(x, 256, activation=tf.nn.relu), 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    count, start = 0, None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if args["mode"] == "spark":
            feed = TFNode.DataFeed(ctx.mgr)
            batches = iter(lambda: feed.next_batch(BATCH), [])
            prepare = lambda rows: (np.stack([r[0] for r in rows]), np.array([r[1] for r in rows]))  # noqa: E731
        else:
            shard_x = np.load(f"{args['dir']}/x{ctx.task_index}.npy", mmap_mode="r")
            shard_y = np.load(f"{args['dir']}/y{ctx.task_index}.npy", mmap_mode="r")
            batches = (slice(i, i + BATCH) for i in range(0, len(shard_x), BATCH))
            prepare = lambda s: (np.asarray(shard_x[s]), np.asarray(shard_y[s]))  # noqa: E731
        for batch in batches:
            bx, by = prepare(batch)
            start = start or time.time()
            sess.run(train_op, {x: bx, y: by})
            count += len(bx)
    return {"start": start, "end": time.time(), "examples": count}


def input_rate(sc, mode: str, rows: list, shards: str) -> float:
    from flowmesh.spark import TFCluster

    input_mode = TFCluster.InputMode.SPARK if mode == "spark" else TFCluster.InputMode.TENSORFLOW
    cluster = TFCluster.run(sc, input_worker, {"mode": mode, "dir": shards}, 2, 0, input_mode=input_mode)
    if mode == "spark":
        cluster.train(sc.parallelize(rows, 8), num_epochs=1, timeout=600)
    cluster.shutdown(timeout=600)
    parts = list(cluster.results.values())
    assert sum(p["examples"] for p in parts) == len(rows)
    return len(rows) / (max(p["end"] for p in parts) - min(p["start"] for p in parts))


def sweep_ratio(trials: int, steps: int) -> dict:
    out = tempfile.mkdtemp(prefix="flowmesh-sweep-bench-")
    try:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "flowmesh.cli.main", "sweep", "--grid",
                               f"batch={','.join(str(32 + i) for i in range(trials))}", "--metric", "accuracy",
                               "--parallel", "2", "--out", out, str(ROOT / "examples" / "digits_mlp.py"),
                               "--", "--steps", str(steps)], capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - start
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        seconds = [float(line.split(",")[3]) for line in open(f"{out}/results.csv").read().splitlines()[1:]]
        loop = float(re.search(r"trial\(s\) in ([0-9.]+) s", done.stdout).group(1))
        ideal = sum(seconds) / 2
        return {"wall_s": wall, "sweep_loop_s": loop, "ideal_s": ideal, "ratio": wall / ideal,
                "loop_ratio": loop / ideal}
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one repeat of everything, small sizes")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    spark = spark_context(3)
    jobs = {"spark": [], "launch": []}
    for r in range(repeats):
        for name in (["spark", "launch"] if r % 2 == 0 else ["launch", "spark"]):
            jobs[name].append(spark_job(spark.sparkContext) if name == "spark" else launch_job())
    for metric in ("startup_s", "steps_per_s"):
        ours = statistics.median(j[metric] for j in jobs["spark"])
        peer = statistics.median(j[metric] for j in jobs["launch"])
        _emit("engine_ps_job", metric, "spark", ours, "flowmesh launch", peer)
    rng = np.random.default_rng(0)
    features = rng.standard_normal((ROWS, 784)).astype(np.float32)
    labels = rng.integers(0, 10, ROWS)
    rows = [(features[i], int(labels[i])) for i in range(ROWS)]
    shards = tempfile.mkdtemp(prefix="flowmesh-input-bench-")
    for i, part in enumerate((slice(0, ROWS // 2), slice(ROWS // 2, ROWS))):
        np.save(f"{shards}/x{i}.npy", features[part])
        np.save(f"{shards}/y{i}.npy", labels[part])
    rates = {"spark": [], "tensorflow": []}
    for r in range(repeats):
        for mode in (["spark", "tensorflow"] if r % 2 == 0 else ["tensorflow", "spark"]):
            rates[mode].append(input_rate(spark.sparkContext, mode, rows, shards))
    shutil.rmtree(shards, ignore_errors=True)
    _emit("spark_input_mode", "examples_per_s", "InputMode.SPARK", statistics.median(rates["spark"]),
          "InputMode.TENSORFLOW", statistics.median(rates["tensorflow"]))
    spark.stop()
    sweep = sweep_ratio(8 if not args.quick else 4, 300 if not args.quick else 100)
    print(json.dumps({"bench": "sweep", "config": "8 trials, 2 slots", **sweep}))


def _emit(bench: str, metric: str, ours_name: str, ours: float, peer_name: str, peer: float) -> None:
    print(f"{bench:<18} {metric:<15} {ours_name}: {ours:10.3f}   {peer_name}: {peer:10.3f}   ratio {ours / peer:.3f}")
    print(json.dumps({"bench": bench, "config": metric, "flowmesh": ours_name, "value": ours,
                      "peer": peer_name, "peer_value": peer, "ratio": ours / peer}), flush=True)


if __name__ == "__main__":
    main()
