"""The ``map_fun`` programs the flowmesh.spark tests run on their nodes (shipped by value)."""

from __future__ import annotations

import os
import signal

import numpy as np


def count_rows(args, ctx):
    """Consumes the feed in batches; returns ``{epoch: [row, ...]}`` and whether any batch
    mixed two epochs."""
    from flowmesh.spark import TFNode

    feed = TFNode.DataFeed(ctx.mgr)
    seen: dict[int, list[int]] = {}
    mixed = False
    while not feed.should_stop():
        epoch = feed.epoch
        batch = feed.next_batch(args["batch"])
        if batch and feed.epoch not in (epoch, epoch + 1):
            mixed = True
        seen.setdefault(epoch, []).extend(batch)
    return {"seen": seen, "mixed": mixed, "job": ctx.job_name, "num_workers": ctx.num_workers}


def double_rows(args, ctx):
    """Answers every row with twice its value (cluster.inference)."""
    from flowmesh.spark import TFNode

    feed = TFNode.DataFeed(ctx.mgr, train_mode=False)
    while not feed.should_stop():
        feed.batch_results([2 * x for x in feed.next_batch(7)])


def _softmax_model(tf, cluster):
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 64])
        y = tf.placeholder(tf.int64, [None])
        w = tf.get_variable("w", [64, 10], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
        logits = tf.matmul(x, w) + b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        step = tf.train.get_or_create_global_step()
        train = tf.train.AdamOptimizer(0.02).minimize(loss, global_step=step)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    return x, y, train, step, accuracy


def train_digits(args, ctx):
    """Asynchronous ps training on the digits; the chief returns the test accuracy.

    In SPARK mode the rows ``(pixels, label)`` come from the feed, else from the dataset.
    """
    import flowmesh as tf
    from flowmesh.datasets import load_digits
    from flowmesh.spark import TFNode

    cluster, server = TFNode.start_cluster_server(ctx, num_gpus=0)
    if ctx.job_name == "ps":
        server.join()
    (images, labels), (test_x, test_y) = load_digits()
    x, y, train, step, accuracy = _softmax_model(tf, cluster)
    feed = TFNode.DataFeed(ctx.mgr) if ctx.mgr is not None else None
    rng = np.random.default_rng(ctx.task_index)
    hooks = [tf.train.StopAtStepHook(last_step=args["steps"])]
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=ctx.task_index == 0,
                                           hooks=hooks) as sess:
        while not sess.should_stop():
            if feed is not None:
                if feed.should_stop():
                    break
                rows = feed.next_batch(32)
                bx, by = np.stack([r[0] for r in rows]), np.array([r[1] for r in rows])
            else:
                pick = rng.integers(0, len(images), 32)
                bx, by = images[pick], labels[pick]
            sess.run(train, {x: bx, y: by})
    if ctx.task_index != 0:
        return None
    with tf.Session(server.target) as sess:  # the variables live on the ps
        return float(sess.run(accuracy, {x: test_x, y: test_y}))


def fail_on_worker_one(args, ctx):
    if ctx.job_name == "worker" and ctx.task_index == 1:
        raise ValueError("worker one cannot go on")
    return ctx.task_index


def kill_own_task(args, ctx):
    """Kills the Spark task (the Python worker) hosting this node."""
    if ctx.executor_id == 1:
        os.kill(os.getppid(), signal.SIGKILL)
    return ctx.executor_id


def trial(a, b):
    return a * b


def failing_trial(a):
    if a == 2:
        raise RuntimeError(f"trial with a={a} diverged")
    return a


def whoami(args, ctx):
    return (ctx.executor_id, args)


def secret_of_node(args, ctx):
    return os.environ.get("FLOWMESH_CLUSTER_SECRET")
