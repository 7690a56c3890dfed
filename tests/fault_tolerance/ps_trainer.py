"""A small between-graph parameter-server trainer that records what happened to it.

Run by the fault-tolerance tests and ``benchmarks/recovery.py`` through the launcher::

    flowmesh launch --ps 1 --workers 3 --max-restarts 2 tests/fault_tolerance/ps_trainer.py \\
        --log_dir LOGS --checkpoint_dir CKPT --steps 150

The cluster and this task come from ``TF_CONFIG``. Workers train a linear model (variables
on the ps tasks via ``replica_device_setter``) with ``MonitoredTrainingSession``; worker 0
is the chief and checkpoints every ``--save_steps`` global steps. Each step's train op
ends with ``global_step.assign_add(1)``, whose value is unique per applied step, so the
logs show exactly which global steps were counted, by whom and when.

Every task appends JSON lines to ``LOG_DIR/<job>-<index>.jsonl`` (one ``write`` per line
on an ``O_APPEND`` descriptor, so a SIGKILL never leaves half a line)::

    {"kind": "start", "restart": 0, "began": ..., "t": ...}  flowmesh imported (FLOWMESH_RESTART_COUNT;
                                                          began: when this script started running)
    {"kind": "serving", ...}                              a ps task's server is up
    {"kind": "session", ...}                              a worker's session was (re-)created
    {"kind": "step", "restart": 0, "step": 17, "t": ...}  the global step this run counted
    {"kind": "log", "restart": 0, "message": "...", "t": ...}  flowmesh.train log records
    {"kind": "done", "restart": 0, "global_step": 150, "local_steps": 71, "t": ...}
                                       the global step read after this worker's loop ended

``--kill_in_save K`` makes the chief's first incarnation SIGKILL itself in the middle of
writing its K-th checkpoint data file (the saver is then unsharded, so the chief process
writes the data file itself).
"""

# ruff: noqa: E402 - BEGAN is taken before the other imports on purpose
from __future__ import annotations

import time

BEGAN = time.time()  # before the imports: a cold start pays for them, a warm standby does not

import argparse
import json
import logging
import os
from typing import Any

import numpy as np

import flowmesh as tf
from flowmesh import config
from flowmesh.testing import faults


class JsonLog(logging.Handler):
    """Appends records and events to this task's JSON-lines file."""

    def __init__(self, path: str, task: str):
        super().__init__(logging.INFO)
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.base = {"task": task, "restart": config.RESTART_COUNT.get(), "pid": os.getpid()}

    def write(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"kind": kind, **self.base, **fields, "t": time.time()}) + "\n"
        os.write(self.fd, line.encode())

    def emit(self, record: logging.LogRecord) -> None:
        self.write("log", message=record.getMessage(), level=record.levelname)


class SessionLogHook(tf.train.SessionRunHook):
    """Records every (re-)creation of the monitored session: the model is ready again."""

    def __init__(self, log: JsonLog):
        self.log = log

    def after_create_session(self, session: Any, coord: Any) -> None:
        self.log.write("session")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log_dir", required=True)
    p.add_argument("--checkpoint_dir", default=None)
    p.add_argument("--steps", type=int, default=150, help="last global step")
    p.add_argument("--save_steps", type=int, default=20)
    p.add_argument("--sleep", type=float, default=0.01, help="pause after each step (pacing)")
    p.add_argument("--kill_in_save", type=int, default=0)
    p.add_argument("--max_to_keep", type=int, default=0, help="checkpoints the chief keeps (0: default)")
    p.add_argument("--max_wait", type=float, default=120.0, help="non-chief max_wait_secs")
    return p.parse_known_args()[0]  # tolerate the launcher's classic --ps_hosts... flags


def build(cluster: tf.train.ClusterSpec, index: int) -> dict[str, Any]:
    rng = np.random.RandomState(0)
    x_all = rng.rand(256, 16).astype(np.float32)
    y_all = (x_all @ rng.rand(16, 1).astype(np.float32) + 0.5).astype(np.float32)
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{index}")):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 16], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", [16, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        update = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.control_dependencies([update]):
            counted = global_step.assign_add(1)  # unique per applied step
    return {"x": x, "y": y, "loss": loss, "counted": counted, "global_step": global_step,
            "data": (x_all, y_all)}


def train(args: argparse.Namespace, server: tf.train.Server, cluster: tf.train.ClusterSpec, index: int,
          log: JsonLog) -> None:
    model = build(cluster, index)
    is_chief = index == 0
    scaffold = None
    if args.kill_in_save or args.max_to_keep:
        saver = tf.train.Saver(sharded=not args.kill_in_save, max_to_keep=args.max_to_keep or 10)
        scaffold = tf.train.Scaffold(saver=saver)
        if is_chief and config.RESTART_COUNT.get() == 0:
            faults.sigkill_during_checkpoint_write(nth_file=args.kill_in_save, fraction=0.5)
    x_all, y_all = model["data"]
    rng = np.random.RandomState(index)
    local_steps = 0
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, checkpoint_dir=args.checkpoint_dir if is_chief else None,
            scaffold=scaffold, save_checkpoint_steps=args.save_steps, log_step_count_steps=None,
            hooks=[tf.train.StopAtStepHook(last_step=args.steps), SessionLogHook(log)], max_wait_secs=args.max_wait,
            stop_grace_period_secs=5) as sess:
        while not sess.should_stop():
            idx = rng.randint(0, len(x_all), 16)
            step = int(sess.run(model["counted"], {model["x"]: x_all[idx], model["y"]: y_all[idx]}))
            log.write("step", step=step)
            local_steps += 1
            time.sleep(args.sleep)
    with tf.Session(server.target) as sess:  # the last worker to read sees every increment
        final = int(sess.run(model["global_step"]))
    log.write("done", global_step=final, local_steps=local_steps)


def main() -> None:
    args = parse_args()
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    cluster, job, index = resolver.cluster_spec(), resolver.task_type, int(resolver.task_id or 0)
    log = JsonLog(os.path.join(args.log_dir, f"{job}-{index}.jsonl"), f"{job}:{index}")
    logging.getLogger("flowmesh.train").addHandler(log)
    logging.getLogger("flowmesh.train").setLevel(logging.INFO)
    log.write("start", began=BEGAN)
    server = tf.train.Server(cluster, job_name=job, task_index=index)
    if job == "ps":
        log.write("serving")
        server.join()
        return
    train(args, server, cluster, index, log)


if __name__ == "__main__":
    main()
