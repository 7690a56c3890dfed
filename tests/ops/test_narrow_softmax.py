"""Softmax, log-softmax and the softmax cross-entropies over few classes (fewer than one
AVX-512 vector: computed over the transposed view) and DivNoNan's scalar-divisor path:
the same values as float64 NumPy, row-major results, TensorFlow's errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.kernels import nn_ops


def _softmax64(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.float64) - x.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


# Narrow (transposed path), at the row threshold, wide, rank 3 and a single class.
SHAPES = [(128, 10), (64, 2), (63, 10), (32, 15), (128, 16), (4, 33, 5), (256, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_and_log_softmax_match_float64(shape):
    x = np.random.RandomState(len(shape) * 100 + shape[-1]).randn(*shape).astype(np.float32) * 4
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None] * len(shape))
        with tf.Session() as sess:
            soft, log_soft = sess.run([tf.nn.softmax(p), tf.nn.log_softmax(p)], {p: x})
    want = _softmax64(x)
    assert soft.shape == shape and soft.flags.c_contiguous and log_soft.flags.c_contiguous
    np.testing.assert_allclose(soft, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(log_soft, np.log(want), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows,classes", [(128, 10), (8, 10), (96, 3)])
def test_sparse_cross_entropy_loss_and_gradient(rows, classes):
    rng = np.random.RandomState(rows + classes)
    logits = (rng.randn(rows, classes) * 3).astype(np.float32)
    labels = rng.randint(0, classes, rows).astype(np.int64)
    with tf.Graph().as_default():
        lp = tf.placeholder(tf.float32, [None, classes])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(labels), logits=lp)
        grad = tf.gradients(tf.reduce_sum(loss), lp)[0]
        with tf.Session() as sess:
            got_loss, got_grad = sess.run([loss, grad], {lp: logits})
    soft = _softmax64(logits)
    np.testing.assert_allclose(got_loss, -np.log(soft[np.arange(rows), labels]), rtol=1e-5, atol=1e-6)
    onehot = np.eye(classes)[labels]
    assert got_grad.flags.c_contiguous
    np.testing.assert_allclose(got_grad, soft - onehot, rtol=1e-5, atol=1e-6)


def test_sparse_cross_entropy_rejects_out_of_range_labels():
    import torch

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"label value of 10 .*\[0, 10\)"):
        nn_ops._sparse_xent(torch.zeros(128, 10), torch.full((128,), 10))


def test_div_no_nan_scalar_and_tensor_divisors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None)
        y = tf.placeholder(tf.float32, None)
        out = tf.div_no_nan(x, y)
        with tf.Session() as sess:
            assert sess.run(out, {x: 3.0, y: 2.0}) == np.float32(1.5)
            assert sess.run(out, {x: np.nan, y: 0.0}) == 0.0
            np.testing.assert_array_equal(sess.run(out, {x: [1.0, np.inf], y: 0.0}), [0.0, 0.0])
            np.testing.assert_array_equal(sess.run(out, {x: [1.0, 4.0], y: [0.0, 2.0]}), [0.0, 2.0])
