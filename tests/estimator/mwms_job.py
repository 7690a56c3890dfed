"""A train_and_evaluate job with RunConfig(train_distribute=MultiWorkerMirroredStrategy()),
run by every task of `flowmesh launch --chief --ps 0 --workers 2 --evaluator` (see
tests/estimator/test_estimator_multi_worker.py). Each trainer prints its final weights
(``WEIGHTS {...}``) so the test can check that every worker holds the same model; the
evaluator prints its last result (``EVAL {...}``)."""

import argparse
import json
import logging

import numpy as np

import flowmesh as tf

FEATURES = 4


def data():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((240, FEATURES)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.3).astype(np.float32)
    return x, y


def model_fn(features, labels, mode):
    hidden = tf.layers.dense(features["x"], 3, activation=tf.nn.tanh, name="hidden",
                             kernel_initializer=tf.constant_initializer(0.1))
    pred = tf.layers.dense(hidden, 1, name="out", kernel_initializer=tf.constant_initializer(0.2))
    loss = tf.losses.mean_squared_error(labels, pred)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "mae": tf.metrics.mean_absolute_error(labels, pred)})
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def make_input_fn(per_replica_batch):
    def input_fn(input_context):
        x, y = data()
        ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        ds = ds.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return ds.batch(per_replica_batch).repeat()
    return input_fn


def eval_input_fn():
    x, y = data()
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(60)


class PrintWeights(tf.train.SessionRunHook):
    """Prints this worker's trainable variables when training ends."""

    def begin(self):
        self._vars = {v.op.name: v for v in tf.trainable_variables()}

    def end(self, session):
        values = session.run(self._vars)
        print("WEIGHTS " + json.dumps({k: np.asarray(v).ravel().tolist() for k, v in values.items()}),
              flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--max_steps", type=int, default=12)
    parser.add_argument("--batch", type=int, default=8, help="per-worker batch")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    config = tf.estimator.RunConfig(model_dir=args.model_dir, train_distribute=strategy,
                                    save_checkpoints_steps=4, log_step_count_steps=0, save_summary_steps=0)
    est = tf.estimator.Estimator(model_fn, config=config)
    result, _ = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(make_input_fn(args.batch), max_steps=args.max_steps,
                                    hooks=[PrintWeights()]),
        tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0, start_delay_secs=0))
    if result is not None:
        print("EVAL " + json.dumps({k: float(np.asarray(v)) for k, v in result.items()}), flush=True)


if __name__ == "__main__":
    main()
