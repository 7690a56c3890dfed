"""TensorFlow's own ps runtime running the same job as ``tests/fault_tolerance/ps_trainer.py``.

The peer of ``benchmarks/recovery.py``: started by ``flowmesh launch --no-standby`` (so it
gets TF_CONFIG and is restarted with the same identity, like flowmesh's tasks), it trains
the same linear model with ``tf.compat.v1`` (``replica_device_setter``,
``MonitoredTrainingSession``, chief checkpoints) and writes the same JSON records
(``start``/``serving``/``session``/``step``/``log``), so the benchmark times both systems'
recovery the same way. It never imports flowmesh.
"""

# ruff: noqa: E402 - BEGAN is taken before the other imports on purpose
from __future__ import annotations

import time

BEGAN = time.time()

import argparse
import json
import logging
import os
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


class JsonLog(logging.Handler):
    """Appends records to this task's JSON-lines file (one write per line)."""

    def __init__(self, path: str, task: str):
        super().__init__(logging.INFO)
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.base = {"task": task, "restart": int(os.environ.get("FLOWMESH_RESTART_COUNT", "0")),
                     "pid": os.getpid()}

    def write(self, kind: str, **fields: Any) -> None:
        os.write(self.fd, (json.dumps({"kind": kind, **self.base, **fields, "t": time.time()}) + "\n").encode())

    def emit(self, record: logging.LogRecord) -> None:
        self.write("log", message=record.getMessage(), level=record.levelname)


class SessionLogHook(tf.train.SessionRunHook):
    def __init__(self, log: JsonLog):
        self.log = log

    def after_create_session(self, session: Any, coord: Any) -> None:
        self.log.write("session")


def train(args: argparse.Namespace, server: Any, cluster: Any, index: int, log: JsonLog) -> None:
    rng = np.random.RandomState(0)
    x_all = rng.rand(256, 16).astype(np.float32)
    y_all = (x_all @ rng.rand(16, 1).astype(np.float32) + 0.5).astype(np.float32)
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{index}")):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 16])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [16, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        update = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.control_dependencies([update]):
            counted = global_step.assign_add(1)
    batches = np.random.RandomState(index)
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=index == 0, checkpoint_dir=args.checkpoint_dir if index == 0 else None,
            save_checkpoint_steps=args.save_steps, log_step_count_steps=None, save_summaries_steps=None,
            save_summaries_secs=None, hooks=[tf.train.StopAtStepHook(last_step=args.steps), SessionLogHook(log)],
            stop_grace_period_secs=5) as sess:
        while not sess.should_stop():
            idx = batches.randint(0, len(x_all), 16)
            log.write("step", step=int(sess.run(counted, {x: x_all[idx], y: y_all[idx]})))
            time.sleep(args.sleep)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--log_dir", required=True)
    p.add_argument("--checkpoint_dir", default=None)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--save_steps", type=int, default=20)
    p.add_argument("--sleep", type=float, default=0.01)
    args = p.parse_known_args()[0]
    config = json.loads(os.environ["TF_CONFIG"])
    job, index = config["task"]["type"], int(config["task"]["index"])
    log = JsonLog(os.path.join(args.log_dir, f"{job}-{index}.jsonl"), f"{job}:{index}")
    logging.getLogger("tensorflow").addHandler(log)
    tf.logging.set_verbosity(tf.logging.INFO)
    log.write("start", began=BEGAN)
    cluster = tf.train.ClusterSpec(config["cluster"])
    server = tf.train.Server(cluster, job_name=job, task_index=index,
                             config=tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=2))
    if job == "ps":
        log.write("serving")
        server.join()
        return
    train(args, server, cluster, index, log)


if __name__ == "__main__":
    main()
