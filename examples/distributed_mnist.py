"""The seeds' ``distributed_mnist.py``: between-graph training with parameter servers.

    flowmesh launch --ps 2 --workers 3 examples/distributed_mnist.py          # asynchronous
    flowmesh launch --ps 2 --workers 3 examples/distributed_mnist.py --sync   # synchronous

or by hand, one process per task, exactly as in the seeds::

    python examples/distributed_mnist.py --ps_hosts=localhost:2222,localhost:2223 \\
        --worker_hosts=localhost:2224,localhost:2225,localhost:2226 --job_name=ps --task_index=0
    ... (ps task 1, then worker tasks 0, 1, 2 with --job_name=worker)

Without ``--ps_hosts``/``--worker_hosts`` the cluster and this task come from
``TF_CONFIG`` (``flowmesh launch`` sets both). ps tasks serve until they are stopped.
Each worker builds the same graph under ``tf.train.replica_device_setter``, which spreads
the variables over the ps tasks (round robin); the worker computes gradients on its own
mini-batches of the handwritten digits (64 pixels -> 128 ReLU units -> 10 classes) and:

* asynchronous (default): applies them on the ps right away (Adam, rate 0.01 decaying to
  0.001 along a cosine over the run);
* ``--sync``: ``SyncReplicasOptimizer`` averages ``--replicas_to_aggregate`` gradients
  (default: all workers; fewer makes the others backup workers) per global step.

Worker 0 is the chief: it initializes the variables and, after ``--steps`` global steps,
reports the test accuracy on the 360 held-out digits. Stated accuracy: >= 95% in both modes
from the defaults (400 async / 150 sync global steps; typically 97-98%), in a few seconds
of training (plus process start-up) on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import flowmesh as tf
from flowmesh.datasets import load_digits

STATED_ACCURACY = 0.95


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ps_hosts", default="", help="comma-separated host:port of the ps tasks")
    parser.add_argument("--worker_hosts", default="", help="comma-separated host:port of the workers")
    parser.add_argument("--job_name", default="", help="'ps' or 'worker'")
    parser.add_argument("--task_index", type=int, default=0, help="index of this task in its job")
    parser.add_argument("--sync", action="store_true", help="synchronous training (SyncReplicasOptimizer)")
    parser.add_argument("--replicas_to_aggregate", type=int, default=0,
                        help="gradients per synchronous step (default: every worker)")
    parser.add_argument("--steps", type=int, default=0,
                        help="global steps to train (default 400 async, 150 sync)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=0.01)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--checkpoint_dir", default=None,
                        help="where the chief saves checkpoints and TensorBoard summaries")
    parser.add_argument("--save_checkpoint_steps", type=int, default=100,
                        help="the chief checkpoints every N global steps (killing the ps loses "
                             "at most that much; TensorFlow's default is every 600 s)")
    parser.add_argument("--json", action="store_true", help="print the chief's result as a JSON line")
    return parser.parse_args(argv)


def cluster_and_task(args: argparse.Namespace) -> tuple[tf.train.ClusterSpec, str, int]:
    """The cluster and this task, from the classic flags or else from TF_CONFIG.

    Raises:
        ValueError: neither the flags nor TF_CONFIG describe a ps/worker cluster.
    """
    if args.ps_hosts or args.worker_hosts:
        cluster = tf.train.ClusterSpec({"ps": [h for h in args.ps_hosts.split(",") if h],
                                        "worker": [h for h in args.worker_hosts.split(",") if h]})
        return cluster, args.job_name, args.task_index
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    cluster = resolver.cluster_spec()
    if not cluster.jobs or resolver.task_type is None:
        raise ValueError("No cluster: pass --ps_hosts/--worker_hosts/--job_name/--task_index, set "
                         "TF_CONFIG, or run `flowmesh launch --ps 2 --workers 3 examples/distributed_mnist.py`")
    return cluster, resolver.task_type, int(resolver.task_id or 0)


def last_step(args: argparse.Namespace) -> int:
    """The global step training stops at."""
    return args.steps or (150 if args.sync else 400)


def build_model(args: argparse.Namespace, cluster: tf.train.ClusterSpec, task_index: int) -> dict[str, Any]:
    """The worker's graph: variables on the ps tasks, everything else on this worker."""
    num_workers = cluster.num_tasks("worker")
    tf.set_random_seed(args.seed)
    setter = tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{task_index}")
    with tf.device(setter):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        with tf.variable_scope("hidden"):
            w1 = tf.get_variable("weights", [64, args.hidden])
            b1 = tf.get_variable("biases", [args.hidden], initializer=tf.zeros_initializer())
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
        with tf.variable_scope("output"):
            w2 = tf.get_variable("weights", [args.hidden, 10])
            b2 = tf.get_variable("biases", [10], initializer=tf.zeros_initializer())
            logits = tf.matmul(h, w2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        # cosine decay to a tenth over the run: a steady last iterate despite stale gradients
        rate = tf.train.cosine_decay(args.learning_rate, global_step, last_step(args), alpha=0.1)
        opt = tf.train.AdamOptimizer(rate)
        if args.sync:
            aggregate = args.replicas_to_aggregate or num_workers
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=aggregate,
                                                 total_num_replicas=num_workers)
        train_op = opt.minimize(loss, global_step=global_step)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        tf.summary.scalar("loss", loss)  # the chief writes them to --checkpoint_dir for TensorBoard
        tf.summary.scalar("batch_accuracy", accuracy)
        tf.summary.histogram("hidden_weights", w1)
    return {"x": x, "y": y, "loss": loss, "train_op": train_op, "accuracy": accuracy,
            "global_step": global_step, "opt": opt, "placement": {v.op.name: v.device for v in (w1, b1, w2, b2)}}


def run_worker(args: argparse.Namespace, server: tf.train.Server, cluster: tf.train.ClusterSpec,
               task_index: int) -> dict[str, Any]:
    """Trains until the global step reaches ``--steps``; the chief then evaluates."""
    (x_train, y_train), (x_test, y_test) = load_digits()
    model = build_model(args, cluster, task_index)
    is_chief = task_index == 0
    hooks = [tf.train.StopAtStepHook(last_step=last_step(args))]
    if args.sync:
        hooks.append(model["opt"].make_session_run_hook(is_chief))
    rng = np.random.RandomState(args.seed + task_index)
    start, local_steps, step = time.perf_counter(), 0, 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks,
                                           checkpoint_dir=args.checkpoint_dir if is_chief else None,
                                           save_checkpoint_steps=args.save_checkpoint_steps,
                                           save_checkpoint_secs=None,
                                           stop_grace_period_secs=10) as sess:
        while not sess.should_stop():
            idx = rng.randint(0, len(x_train), args.batch)
            _, loss_value, step = sess.run([model["train_op"], model["loss"], model["global_step"]],
                                           {model["x"]: x_train[idx], model["y"]: y_train[idx]})
            local_steps += 1
            if is_chief and local_steps % 50 == 0:
                print(f"worker {task_index}: global step {step:4d}  loss {loss_value:.4f}", flush=True)
    elapsed = time.perf_counter() - start
    result: dict[str, Any] = {"task": task_index, "local_steps": local_steps, "seconds": round(elapsed, 2),
                              "mode": "sync" if args.sync else "async"}
    if is_chief:
        with tf.Session(server.target) as sess:  # the trained variables live on the ps tasks
            result["accuracy"] = float(sess.run(model["accuracy"], {model["x"]: x_test, model["y"]: y_test}))
            result["global_step"] = int(sess.run(model["global_step"]))
        result["placement"] = model["placement"]
        print(f"test accuracy {result['accuracy']:.4f} after {result['global_step']} global steps "
              f"({result['mode']}, {cluster.num_tasks('worker')} workers, {elapsed:.1f}s)", flush=True)
    else:
        print(f"worker {task_index}: done after {local_steps} local steps ({elapsed:.1f}s)", flush=True)
    if args.json:
        print(json.dumps(result), flush=True)
    return result


def main(argv: Sequence[str] | None = None) -> dict[str, Any] | None:
    args = parse_args(argv)
    cluster, job_name, task_index = cluster_and_task(args)
    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        print(f"ps {task_index}: serving at {server.target}", flush=True)
        server.join()
        return None
    if job_name != "worker":
        raise ValueError(f"--job_name must be 'ps' or 'worker', got {job_name!r}")
    return run_worker(args, server, cluster, task_index)


if __name__ == "__main__":
    main()
