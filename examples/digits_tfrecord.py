"""Digits written to TFRecord shards once, then trained from them with ``tf.data``.

    python examples/digits_tfrecord.py [--data_dir DIR] [--shards 4] [--steps 300]
    flowmesh launch --ps 1 --workers 2 --flags never examples/digits_tfrecord.py --data_dir DIR

The first run writes the 1437 training digits round-robin into ``--shards`` files
``train-0000i-of-0000N.tfrecord`` (``tf.train.Example``: 64 floats + a label) and the 360
test digits into ``test.tfrecord``; later runs reuse them (each file is written to a
temporary name and renamed, so workers starting together never see half a file).

Training reads the shards with ``list_files -> interleave(TFRecordDataset) ->
map(parse_single_example) -> shuffle -> repeat -> batch -> prefetch``: the input pipeline
runs in the graph, ahead of the training step. Under ``flowmesh launch`` (``TF_CONFIG``)
each worker reads its own shards (``tf.data.experimental.auto_shard``: FILE policy when
there are at least as many shards as workers, DATA otherwise, said in a log line) and
trains an asynchronous parameter-server model (variables on the ps); the chief reports
the test accuracy, parsed from ``test.tfrecord``. Stated accuracy: >= 95% (64 -> 128 ReLU
-> 10, Adam 0.01, batch 64, 300 steps single process / 600 global steps distributed, where
asynchronous updates on a loaded machine need the extra steps).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import flowmesh as tf
from flowmesh.datasets import load_digits

STATED_ACCURACY = 0.95
FEATURES = {"image": tf.FixedLenFeature([64], tf.float32), "label": tf.FixedLenFeature([], tf.int64)}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", default=os.path.join(tempfile.gettempdir(), "digits_tfrecord"))
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--steps", type=int, default=0, help="(global) steps; default 300 / 600")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", action="store_true", help="print the result as a JSON line")
    return parser.parse_args(argv)


def _example(image: Any, label: Any) -> bytes:
    train = tf.train
    return train.Example(features=train.Features(feature={
        "image": train.Feature(float_list=train.FloatList(value=image)),
        "label": train.Feature(int64_list=train.Int64List(value=[int(label)]))})).SerializeToString()


def _write(path: str, rows: Any) -> None:
    temp = f"{path}.tmp-{os.getpid()}"
    with tf.io.TFRecordWriter(temp) as writer:
        for image, label in rows:
            writer.write(_example(image, label))
    os.replace(temp, path)


def write_shards(data_dir: str, shards: int) -> tuple[str, str]:
    """Writes the shards and the test file unless they exist; returns (train glob, test path)."""
    (x_train, y_train), (x_test, y_test) = load_digits()
    os.makedirs(data_dir, exist_ok=True)
    names = [os.path.join(data_dir, f"train-{i:05d}-of-{shards:05d}.tfrecord") for i in range(shards)]
    for i, name in enumerate(names):
        if not os.path.exists(name):
            _write(name, zip(x_train[i::shards], y_train[i::shards]))
    test = os.path.join(data_dir, "test.tfrecord")
    if not os.path.exists(test):
        _write(test, zip(x_test, y_test))
    return os.path.join(data_dir, f"train-*-of-{shards:05d}.tfrecord"), test


def input_fn(pattern: str, batch: int, seed: int, num_workers: int = 1, index: int = 0) -> Any:
    """(images, labels) batches from the shards this worker reads."""
    files = tf.data.Dataset.list_files(pattern, shuffle=False)
    dataset = files.interleave(tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=2) \
        .map(lambda record: tf.parse_single_example(record, FEATURES)) \
        .map(lambda parsed: (parsed["image"], parsed["label"]))
    dataset = tf.data.experimental.auto_shard(dataset, num_workers, index)
    dataset = dataset.shuffle(1000, seed=seed).repeat().batch(batch).prefetch(2)
    return dataset.make_one_shot_iterator().get_next()


def build_model(images: Any, labels: Any) -> dict[str, Any]:
    """64 -> 128 ReLU -> 10, Adam; also the accuracy on the test file."""
    with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
        hidden = tf.layers.dense(images, 128, tf.nn.relu, name="hidden")
        logits = tf.layers.dense(hidden, 10, name="output")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
    return {"loss": loss, "train_op": train_op, "global_step": global_step}


def test_accuracy(test_path: str) -> Any:
    """The accuracy op on every record of the test file (parse_example of one batch)."""
    records = tf.data.TFRecordDataset(test_path).batch(10_000).make_one_shot_iterator().get_next()
    parsed = tf.parse_example(records, FEATURES)
    with tf.variable_scope("model", reuse=True):
        hidden = tf.layers.dense(parsed["image"], 128, tf.nn.relu, name="hidden")
        logits = tf.layers.dense(hidden, 10, name="output")
    return tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), parsed["label"]), tf.float32))


def run_single(args: argparse.Namespace, pattern: str, test_path: str) -> dict[str, Any]:
    """Trains in this process from every shard; returns the result."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)
        images, labels = input_fn(pattern, args.batch, args.seed)
        model = build_model(images, labels)
        accuracy = test_accuracy(test_path)
        steps = args.steps or 300
        start = time.perf_counter()
        with tf.train.MonitoredTrainingSession() as sess:
            for _ in range(steps):
                _, step, loss = sess.run([model["train_op"], model["global_step"], model["loss"]])
                if step % 100 == 0:
                    print(f"step {step:4d}  loss {loss:.4f}", flush=True)
            elapsed = time.perf_counter() - start
            value = float(sess.run(accuracy))
    return {"mode": "single", "accuracy": value, "steps": steps, "seconds": round(elapsed, 2)}


def run_worker(args: argparse.Namespace, server: Any, cluster: Any, index: int, pattern: str,
               test_path: str) -> dict[str, Any]:
    """One worker of the ps job: its own shards, variables on the ps; the chief evaluates."""
    workers = cluster.num_tasks("worker")
    setter = tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{index}")
    tf.set_random_seed(args.seed)
    with tf.device(setter):
        images, labels = input_fn(pattern, args.batch, args.seed + index, workers, index)
        model = build_model(images, labels)
        accuracy = test_accuracy(test_path)
    steps, local, start = args.steps or 600, 0, time.perf_counter()
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0,
                                           hooks=[tf.train.StopAtStepHook(last_step=steps)],
                                           stop_grace_period_secs=10) as sess:
        while not sess.should_stop():
            sess.run(model["train_op"])
            local += 1
    result = {"mode": "distributed", "task": index, "local_steps": local,
              "seconds": round(time.perf_counter() - start, 2)}
    if index == 0:
        with tf.Session(server.target) as sess:
            result["accuracy"] = float(sess.run(accuracy))
            result["global_step"] = int(sess.run(model["global_step"]))
    return result


def main(argv: Sequence[str] | None = None) -> dict[str, Any] | None:
    args = parse_args(argv)
    tf.logging.set_verbosity(tf.logging.INFO)  # shows the auto-shard policy line
    pattern, test_path = write_shards(args.data_dir, args.shards)
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    cluster = resolver.cluster_spec()
    if not cluster.jobs:
        result = run_single(args, pattern, test_path)
    else:
        job, index = resolver.task_type, int(resolver.task_id or 0)
        server = tf.train.Server(cluster, job_name=job, task_index=index)
        if job == "ps":
            print(f"ps {index}: serving at {server.target}", flush=True)
            server.join()
            return None
        result = run_worker(args, server, cluster, index, pattern, test_path)
    if "accuracy" in result:
        print(f"test accuracy {result['accuracy']:.4f} ({result['mode']})", flush=True)
    if args.json:
        print(json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    main()
