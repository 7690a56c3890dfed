"""tf.nondifferentiable_batch_function: calls from concurrent steps run the function once on
their concatenation and each gets its own rows; padding to allowed sizes, splitting of large
calls, no gradient; a single call equals TensorFlow 2.21's result."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

W = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2)


def _model(t, seen=None):
    def fn(x, y):
        if seen is not None:
            x = t.py_func(lambda v: (seen.append(v.shape[0]), v)[1], [x], t.float32)
            x.set_shape([None, 3])
        return t.matmul(x, t.constant(W)) + y, t.reduce_sum(x, axis=1)

    return fn


def test_single_call_matches_tensorflow():
    tf1 = require_tensorflow()
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.ones((4, 2), np.float32)
    values = []
    for t, config in ((tf, None), (tf1, session_config(tf1))):
        with t.Graph().as_default() as g, t.Session(graph=g, config=config) as sess:
            batched = t.nondifferentiable_batch_function(1, 8, 1000)(_model(t))
            values.append(sess.run(batched(t.constant(x), t.constant(y))))
    for a, b in zip(*values):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_concurrent_steps_share_one_run():
    seen: list[int] = []
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 3])
        batched = tf.nondifferentiable_batch_function(1, 8, 10_000_000)(_model(tf, seen))
        out, total = batched(x, tf.zeros([tf.shape(x)[0], 2]))
        inputs = [np.full((2, 3), i, np.float32) for i in range(4)]
        results: dict[int, tuple] = {}
        start = threading.Barrier(4)

        def call(i):
            start.wait(timeout=30)
            results[i] = sess.run([out, total], {x: inputs[i]})

        threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert len(results) == 4
    for i, (o, s) in results.items():  # every caller got its own rows
        np.testing.assert_allclose(o, inputs[i] @ W, rtol=1e-6)
        np.testing.assert_allclose(s, inputs[i].sum(1), rtol=1e-6)
    assert seen == [8]  # the four 2-row calls ran as one batch


def test_padding_and_splitting():
    seen: list[int] = []
    with tf.Graph().as_default(), tf.Session() as sess:
        x = np.arange(30, dtype=np.float32).reshape(10, 3)
        padded = tf.nondifferentiable_batch_function(1, 4, 100, allowed_batch_sizes=[2, 4])(
            _model(tf, seen))
        out, _ = padded(tf.constant(x[:3]), tf.zeros([3, 2]))
        np.testing.assert_allclose(sess.run(out), x[:3] @ W, rtol=1e-6)
        assert seen == [4]
        seen.clear()
        out, _ = padded(tf.constant(x), tf.zeros([10, 2]))
        np.testing.assert_allclose(sess.run(out), x @ W, rtol=1e-6)
        assert seen == [4, 4, 2]
        strict = tf.nondifferentiable_batch_function(1, 4, 100,
                                                     enable_large_batch_splitting=False)(_model(tf))
        with pytest.raises(tf.errors.InvalidArgumentError, match="larger than maximum"):
            sess.run(strict(tf.constant(x), tf.zeros([10, 2])))


def test_no_gradient_and_bad_sizes():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((2, 3), np.float32))
        out, _ = tf.nondifferentiable_batch_function(1, 4, 100)(_model(tf))(x, tf.zeros([2, 2]))
        assert tf.gradients(tf.reduce_sum(out), x) == [None]
        with pytest.raises(ValueError, match="monotonically increasing"):
            tf.nondifferentiable_batch_function(1, 4, 100, allowed_batch_sizes=[4, 2])
        with pytest.raises(ValueError, match="must equal max_batch_size"):
            tf.nondifferentiable_batch_function(1, 8, 100, allowed_batch_sizes=[2, 4])
