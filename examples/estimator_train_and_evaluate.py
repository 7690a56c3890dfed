"""A premade DNNClassifier on the digits through tf.data with tf.estimator.train_and_evaluate.

Locally:            python examples/estimator_train_and_evaluate.py --model_dir /tmp/run
On a local cluster: flowmesh launch --chief --ps 1 --workers 2 --evaluator \\
                        examples/estimator_train_and_evaluate.py --model_dir /tmp/run

Every task runs this same script; TF_CONFIG (set by the launcher) gives each its role. The
chief and workers train asynchronously through the ps, the evaluator evaluates every new
checkpoint and prints the metrics, and every task exits when training is done.
"""

from __future__ import annotations

import argparse
import json
import logging

import numpy as np

import flowmesh as tf
from flowmesh.datasets import load_digits


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--max_steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--save_steps", type=int, default=40)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    (x_train, y_train), (x_test, y_test) = load_digits()

    def train_input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"pixels": x_train}, y_train))
        return data.shuffle(len(x_train)).repeat().batch(args.batch)

    def eval_input_fn():   # finite: each evaluation reads the test set once
        return tf.data.Dataset.from_tensor_slices(({"pixels": x_test}, y_test)).batch(200)

    columns = [tf.feature_column.numeric_column("pixels", shape=(64,))]
    config = tf.estimator.RunConfig(model_dir=args.model_dir, save_checkpoints_steps=args.save_steps,
                                    log_step_count_steps=50, save_summary_steps=50)
    estimator = tf.estimator.DNNClassifier([64, 32], columns, n_classes=10, optimizer="Adam",
                                           config=config)
    result, _ = tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(train_input_fn, max_steps=args.max_steps),
        tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0))
    if result is not None:
        print("EVAL " + json.dumps({k: float(np.asarray(v)) for k, v in result.items()}), flush=True)
    return result


if __name__ == "__main__":
    main()
