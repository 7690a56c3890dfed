"""State ops (``tf.assign*``, ``tf.scatter_*``) give the values TensorFlow gives."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _updates(tf, config=None):
    """Runs a fixed sequence of state updates; returns every op's result and the final value."""
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2), name="v")
        ops = [
            tf.assign(v, tf.ones([4, 2]) * 2.0),
            tf.assign_add(v, [[1.0, 1.0]] * 4),
            tf.assign_sub(v, tf.fill([4, 2], 0.5)),
            tf.scatter_update(v, [3, 0], [[9.0, 9.0], [7.0, 7.0]]),
            tf.scatter_add(v, [1, 1, 2], tf.ones([3, 2])),
            tf.scatter_sub(v, tf.constant([2]), [[0.25, 0.5]]),
        ]
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            results = [np.asarray(sess.run(op)) for op in ops]
            results.append(np.asarray(sess.run(v)))
    return results


def test_state_updates_follow_the_expected_values():
    results = _updates(flowmesh)
    expected_final = np.array([[7.0, 7.0], [4.5, 4.5], [3.25, 3.0], [9.0, 9.0]], np.float32)
    np.testing.assert_array_equal(results[0], np.full((4, 2), 2.0))
    np.testing.assert_array_equal(results[2], np.full((4, 2), 2.5))
    np.testing.assert_array_equal(results[-1], expected_final)
    np.testing.assert_array_equal(results[-2], expected_final)  # scatter_sub returns the variable


def test_assign_rejects_tensors_and_incompatible_shapes():
    x = flowmesh.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="only variables can be assigned"):
        flowmesh.assign(x, [3.0, 4.0])
    v = flowmesh.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        flowmesh.assign(v, [1.0, 2.0, 3.0])


@pytest.mark.oracle
def test_state_updates_match_tensorflow():
    tf1 = require_tensorflow()
    for mine, theirs in zip(_updates(flowmesh), _updates(tf1, session_config(tf1))):
        np.testing.assert_allclose(mine, theirs)


@pytest.mark.parametrize("update", ["assign_add", "scatter_add"])
def test_concurrent_steps_lose_no_increment(update):
    # torch releases the interpreter lock inside in-place adds; without the variable's
    # lock two steps adding at once would each write back their own sum (the race that
    # made a ps lose a global-step increment). Large tensors widen the window.
    tf, size, threads, steps = flowmesh, 200_000, 4, 100
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(tf.zeros([size]))
        if update == "assign_add":
            op = tf.assign_add(v, tf.ones([size])).op
        else:
            op = tf.scatter_add(v, tf.range(size), tf.ones([size])).op
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())

            def run_steps():
                for _ in range(steps):
                    sess.run(op)

            workers = [threading.Thread(target=run_steps) for _ in range(threads)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join(timeout=120)
            final = sess.run(v)
    np.testing.assert_array_equal(final, np.full(size, threads * steps, np.float32))
