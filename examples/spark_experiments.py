"""Seed 004's parallel experiments: one Spark task per hyperparameter combination.

    python examples/spark_experiments.py            # 4 trials on local[2]

Each trial is a whole single-process flowmesh training run (a digits MLP); Spark runs
two at a time and queues the rest. The best combination is printed at the end.
"""

from __future__ import annotations

import os
import sys

from flowmesh.spark import run_experiments

ARGS = {"learning_rate": [0.01, 0.001], "hidden": [32, 128]}


STEPS = 300


def mnist(learning_rate: float, hidden: int, steps: int = STEPS) -> float:
    """One trial: trains for ``steps`` steps, returns the test accuracy."""
    import numpy as np

    import flowmesh as tf
    from flowmesh.datasets import load_digits

    (images, labels), (test_x, test_y) = load_digits()
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    h = tf.nn.relu(tf.matmul(x, tf.get_variable("w1", [64, hidden])))
    logits = tf.matmul(h, tf.get_variable("w2", [hidden, 10]))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(learning_rate).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    rng = np.random.default_rng(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            pick = rng.integers(0, len(images), 32)
            sess.run(train, {x: images[pick], y: labels[pick]})
        return float(sess.run(accuracy, {x: test_x, y: test_y}))


def main(argv: list[str] | None = None) -> list[float]:
    import argparse

    from pyspark.sql import SparkSession

    from flowmesh.spark import combinations

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=STEPS, help="training steps per trial")
    steps = parser.parse_args(argv).steps

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("flowmesh-experiments")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    results = run_experiments(spark, mnist, {**ARGS, "steps": [steps]})
    spark.stop()
    for params, accuracy in zip(combinations(ARGS), results):
        print(f"{params}: accuracy {accuracy:.3f}")
    best = max(zip(results, map(str, combinations(ARGS))), key=lambda pair: pair[0])
    print(f"best {best[1]}: accuracy {best[0]:.3f}")
    return results


if __name__ == "__main__":
    main()
