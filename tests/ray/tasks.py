"""The ``train_fn`` programs of the flowmesh.ray tests (shipped to the actors by value)."""

from __future__ import annotations

import os

import numpy as np


def ps_digits(steps: int = 300, crash_worker: int | None = None):
    """A softmax model on the digits with ps training; worker 0 returns the test accuracy.

    ``crash_worker`` kills that worker's actor process on its first attempt.
    """

    def train() -> float | None:
        import flowmesh as tf
        from flowmesh import config
        from flowmesh.datasets import load_digits
        from tests.spark.nodes import _softmax_model

        cfg = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        job, index = cfg.task_type, cfg.task_id
        server = tf.train.Server(cfg.cluster_spec(), job_name=job, task_index=index)
        if job == "ps":
            server.join()
        if index == crash_worker and config.RESTART_COUNT.get() == 0:
            os._exit(17)  # the actor's process dies mid-job
        (images, labels), (test_x, test_y) = load_digits()
        x, y, train_op, _, accuracy = _softmax_model(tf, cfg.cluster_spec())
        rng = np.random.default_rng(index)
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0,
                                               hooks=[tf.train.StopAtStepHook(last_step=steps)]) as sess:
            while not sess.should_stop():
                pick = rng.integers(0, len(images), 32)
                sess.run(train_op, {x: images[pick], y: labels[pick]})
        if index != 0:
            return None
        with tf.Session(server.target) as sess:
            return float(sess.run(accuracy, {x: test_x, y: test_y}))

    return train


def allreduce_digits() -> dict:
    """Horovod-style training on 2 ranks; returns the world size and whether the ranks
    ended with the same weights."""
    import flowmesh as tf
    import flowmesh.collective as hvd
    from flowmesh.datasets import load_digits

    hvd.init()
    (images, labels), _ = load_digits()
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    w = tf.get_variable("w", [64, 10])
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w)))
    train_op = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.5)).minimize(loss)
    total = tf.reduce_sum(w)
    spread = hvd.allreduce(total, op=hvd.Max) - hvd.allreduce(total, op=hvd.Min)
    rng = np.random.default_rng(hvd.rank())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(hvd.broadcast_global_variables(0))
        for _ in range(30):
            pick = rng.integers(0, len(images), 32)
            sess.run(train_op, {x: images[pick], y: labels[pick]})
        return {"size": hvd.size(), "spread": float(sess.run(spread))}


def always_fails() -> None:
    raise RuntimeError("this task cannot start")
