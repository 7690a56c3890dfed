"""A custom model_fn: a small CNN with tf.layers on the 8x8 digits, as a tf.estimator.Estimator.

    python examples/estimator_custom_cnn.py --model_dir /tmp/cnn --steps 300
"""

from __future__ import annotations

import argparse
import logging

import flowmesh as tf
from flowmesh.datasets import load_digits


def model_fn(features, labels, mode, params):
    net = tf.reshape(features["image"], [-1, 8, 8, 1])
    net = tf.layers.conv2d(net, 16, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.conv2d(net, 32, 3, padding="same", activation=tf.nn.relu)
    net = tf.layers.flatten(net)
    net = tf.layers.dropout(net, rate=0.2, training=mode == tf.estimator.ModeKeys.TRAIN)
    logits = tf.layers.dense(net, 10)
    classes = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"classes": classes,
                                                             "probabilities": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(params["learning_rate"]).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        "accuracy": tf.metrics.accuracy(labels, classes)})


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", default=None)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    (x_train, y_train), (x_test, y_test) = load_digits()

    def train_input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"image": x_train}, y_train))
        return data.shuffle(len(x_train)).repeat().batch(64)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"image": x_test}, y_test)).batch(200)

    estimator = tf.estimator.Estimator(model_fn, model_dir=args.model_dir, params={"learning_rate": 0.01},
                                       config=tf.estimator.RunConfig(log_step_count_steps=100))
    estimator.train(train_input_fn, steps=args.steps)
    result = estimator.evaluate(eval_input_fn)
    print("test accuracy:", result["accuracy"])
    return result


if __name__ == "__main__":
    main()
