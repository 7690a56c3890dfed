"""Digits trained from TFRecord shards with TensorFlow 1's queue-based input pipeline.

    python examples/digits_queues.py [--data_dir DIR] [--epochs 20]

The shards are ``examples/digits_tfrecord.py``'s (written once, reused). The input is the
pre-``tf.data`` pattern: ``match_filenames_once`` -> ``string_input_producer(num_epochs)``
-> ``TFRecordReader.read_up_to`` -> ``parse_example`` -> ``shuffle_batch`` with two
enqueueing threads, all driven by the queue runners ``MonitoredTrainingSession`` starts.
Training ends by itself: after ``--epochs`` passes over the files the producer's
``OutOfRangeError`` closes the queues and the session's ``should_stop()`` turns true. The
model is ``digits_tfrecord``'s (64 -> 128 ReLU -> 10, Adam 0.01, batch 64). Stated
accuracy: >= 95% after 20 epochs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import flowmesh as tf

STATED_ACCURACY = 0.95


def _sibling(name: str) -> Any:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


digits_tfrecord = _sibling("digits_tfrecord")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data_dir", default=os.path.join(tempfile.gettempdir(), "digits_tfrecord"))
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args(argv)


def queue_input(pattern: str, epochs: int, batch: int, seed: int) -> tuple[Any, Any]:
    """(images, labels) batches from the shards through queues and queue runners."""
    files = tf.train.match_filenames_once(pattern)
    filename_queue = tf.train.string_input_producer(files, num_epochs=epochs, shuffle=True, seed=seed)
    _, records = tf.TFRecordReader().read_up_to(filename_queue, batch)
    parsed = tf.parse_example(records, digits_tfrecord.FEATURES)
    return tf.train.shuffle_batch([parsed["image"], parsed["label"]], batch, capacity=1000 + 3 * batch,
                                  min_after_dequeue=1000, num_threads=2, seed=seed, enqueue_many=True)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    pattern, test_path = digits_tfrecord.write_shards(args.data_dir, args.shards)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)
        images, labels = queue_input(pattern, args.epochs, args.batch, args.seed)
        model = digits_tfrecord.build_model(images, labels)
        accuracy = digits_tfrecord.test_accuracy(test_path)
        final = tf.train.FinalOpsHook(accuracy)  # runs when the input has ended
        steps, start = 0, time.perf_counter()
        with tf.train.MonitoredTrainingSession(hooks=[final]) as sess:
            while not sess.should_stop():  # OutOfRangeError after the last epoch ends the block
                _, loss = sess.run([model["train_op"], model["loss"]])
                steps += 1
                if steps % 100 == 0:
                    print(f"step {steps:4d}  loss {loss:.4f}", flush=True)
        elapsed = time.perf_counter() - start
        value = float(final.final_ops_values)
    print(f"test accuracy {value:.4f} after {steps} steps ({args.epochs} epochs)", flush=True)
    return {"accuracy": value, "steps": steps, "seconds": round(elapsed, 2)}


if __name__ == "__main__":
    main()
