"""The job the engine benchmarks run: asynchronous ps training of an MLP (784-256-10,
batch 64, synthetic data), the same code under ``flowmesh launch`` (as a script reading
``TF_CONFIG``) and under Spark (as a TensorFlowOnSpark ``map_fun``).

The chief reports when its first step finished (wall clock, to time start-up) and its
own steps/s after ``WARMUP`` steps; every worker stops at global step
``2 * (WARMUP + TIMED)``, when the chief has taken about ``WARMUP + TIMED`` of them.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np

WARMUP, TIMED = 20, 200


def train(server: Any, cluster: Any, job: str, index: int) -> dict | None:
    import flowmesh as tf

    if job == "ps":
        server.join()
    rng = np.random.default_rng(index)
    data_x = rng.standard_normal((1024, 784)).astype(np.float32)
    data_y = rng.integers(0, 10, 1024)
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 784])
        y = tf.placeholder(tf.int64, [None])
        logits = tf.layers.dense(tf.layers.dense(x, 256, activation=tf.nn.relu), 10)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
    # every worker stops at a global step by which the chief has taken its timed steps
    hooks = [tf.train.StopAtStepHook(last_step=2 * (WARMUP + TIMED))]
    first, start, done = None, 0.0, 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0, hooks=hooks) as sess:
        while not sess.should_stop() and not (index == 0 and done == WARMUP + TIMED):
            pick = rng.integers(0, 1024, 64)
            sess.run(train_op, {x: data_x[pick], y: data_y[pick]})
            done += 1
            if first is None:
                first = time.time()
            if done == WARMUP:
                start = time.perf_counter()
    if index != 0:
        return None
    return {"first_step": first, "steps_per_s": (done - WARMUP) / (time.perf_counter() - start)}


def map_fun(args: Any, ctx: Any) -> dict | None:
    """Under Spark (TensorFlowOnSpark style)."""
    from flowmesh.spark import TFNode

    cluster, server = TFNode.start_cluster_server(ctx, num_gpus=0)
    return train(server, cluster, ctx.job_name, ctx.task_index)


def main() -> None:
    """Under ``flowmesh launch``: the chief prints its result as one JSON line."""
    import flowmesh as tf
    from flowmesh.distributed import tf_config

    cfg = tf_config.current()
    server = tf.train.Server(cfg.cluster, job_name=cfg.task_type, task_index=cfg.task_index)
    result = train(server, cfg.cluster, cfg.task_type, cfg.task_index)
    if result is not None:
        print("RESULT " + json.dumps(result), flush=True)
        sys.exit(0)


if __name__ == "__main__":
    main()
