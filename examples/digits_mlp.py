"""A seed-style multi-layer perceptron on the handwritten digits, in TensorFlow 1.x style.

    python examples/digits_mlp.py [--steps 300] [--batch 64] [--optimizer adam]

64 pixels -> 128 ReLU units -> 10 logits, trained with mini-batches fed through
placeholders. From the fixed seed it reaches >= 95% test accuracy on the 360 held-out
digits in a few seconds on 2 CPU cores (``--optimizer sgd`` with rate 0.5 does too).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import flowmesh as tf
from flowmesh.datasets import load_digits

OPTIMIZERS = {
    "adam": lambda lr: tf.train.AdamOptimizer(lr),
    "sgd": lambda lr: tf.train.GradientDescentOptimizer(lr),
    "momentum": lambda lr: tf.train.MomentumOptimizer(lr, 0.9),
}
DEFAULT_RATES = {"adam": 0.01, "sgd": 0.5, "momentum": 0.05}


def build_model(optimizer: str = "adam", learning_rate: float | None = None,
                hidden: int = 128) -> dict[str, Any]:
    """The graph: placeholders, the network, loss, train op and accuracy."""
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    with tf.variable_scope("hidden"):
        w1 = tf.get_variable("weights", [64, hidden])
        b1 = tf.get_variable("biases", [hidden], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf.variable_scope("output"):
        w2 = tf.get_variable("weights", [hidden, 10])
        b2 = tf.get_variable("biases", [10], initializer=tf.zeros_initializer())
        logits = tf.matmul(h, w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    global_step = tf.train.get_or_create_global_step()
    rate = DEFAULT_RATES[optimizer] if learning_rate is None else learning_rate
    train_op = OPTIMIZERS[optimizer](rate).minimize(loss, global_step=global_step)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    return {"x": x, "y": y, "loss": loss, "train_op": train_op, "accuracy": accuracy,
            "global_step": global_step}


def train(steps: int = 300, batch: int = 64, optimizer: str = "adam",
          learning_rate: float | None = None, seed: int = 42, log_every: int = 100) -> float:
    """Trains from a fixed seed in a fresh graph; returns the test accuracy."""
    (x_train, y_train), (x_test, y_test) = load_digits()
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        model = build_model(optimizer, learning_rate)
        init = tf.global_variables_initializer()
    rng = np.random.RandomState(seed)
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for step in range(1, steps + 1):
            idx = rng.randint(0, len(x_train), batch)
            _, loss_value = sess.run([model["train_op"], model["loss"]],
                                     {model["x"]: x_train[idx], model["y"]: y_train[idx]})
            if log_every and step % log_every == 0:
                print(f"step {step:4d}  loss {loss_value:.4f}")
        return float(sess.run(model["accuracy"], {model["x"]: x_test, model["y"]: y_test}))


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="adam")
    parser.add_argument("--learning-rate", type=float, default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    accuracy = train(args.steps, args.batch, args.optimizer, args.learning_rate)
    print(f"test accuracy {accuracy:.4f}  ({time.perf_counter() - start:.1f}s)")
    print(f"accuracy: {accuracy}")  # the line `flowmesh sweep --metric accuracy` reads
    return accuracy


if __name__ == "__main__":
    main()
