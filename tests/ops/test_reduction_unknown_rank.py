"""Reduction gradients with an unknown-rank input fed scalars and higher ranks.

Regression: ``gradients(reduce_sum(pow(x * w, 2)))`` with ``x = placeholder(float32)`` fed a
scalar raised ``Integer division by zero`` (the Sum gradient's ``FloorMod`` of an empty
axis list by rank 0). Gradients are compared with float64 central differences of a NumPy
reference and with TensorFlow's own gradients when it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow

REDUCTIONS = {
    "reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max,
    "reduce_min": np.min, "reduce_prod": np.prod,
}
SHAPES = [(), (3,), (2, 3), (2, 1, 3)]
W = 0.7


def _value(shape: tuple) -> np.ndarray:
    # Distinct magnitudes keep max/min unique and finite differences well away from ties.
    n = int(np.prod(shape, dtype=np.int64))
    return (np.linspace(0.4, 1.6, max(n, 1))[:n] * np.where(np.arange(n) % 2, -1, 1)).reshape(shape)


def _build(lib, name: str, axis):
    x = lib.placeholder(lib.float64, name="x")  # unknown rank
    w = lib.constant(W, dtype=lib.float64)
    reduce_axis = None if axis is None else lib.placeholder_with_default(
        np.array(axis, np.int32), shape=None)
    y = getattr(lib, name)(lib.pow(x * w, 2), axis=reduce_axis)
    return x, y, lib.gradients(y, [x])[0]


def _numeric_grad(ref, x: np.ndarray, axis) -> np.ndarray:
    f = lambda v: float(np.sum(ref((v * W) ** 2, axis=axis)))  # noqa: E731
    grad = np.zeros_like(x)
    eps = 1e-6
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def _cases():
    for name in REDUCTIONS:
        for shape in SHAPES:
            yield name, shape, None
            if shape:
                yield name, shape, -1


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_unknown_rank_gradient_matches_finite_differences(name):
    ref = REDUCTIONS[name]
    with tf.Graph().as_default():
        graphs = {axis: _build(tf, name, axis) for axis in (None, -1)}
        with tf.Session() as sess:
            for shape in SHAPES:
                value = _value(shape)
                for axis, (x, y, g) in graphs.items():
                    if axis is not None and not shape:
                        continue
                    out, grad = sess.run([y, g], {x: value})
                    np.testing.assert_allclose(out, ref((value * W) ** 2, axis=axis), rtol=1e-12)
                    assert grad.shape == value.shape, (name, shape, axis)
                    np.testing.assert_allclose(grad, _numeric_grad(ref, value, axis),
                                               rtol=1e-6, atol=1e-8, err_msg=f"{name} {shape} {axis}")


def test_unknown_rank_gradients_match_tensorflow():
    tf1 = require_tensorflow()
    for name, shape, axis in _cases():
        value = _value(shape)
        results = []
        for lib in (tf, tf1):
            with lib.Graph().as_default(), lib.Session() as sess:
                x, y, g = _build(lib, name, axis)
                results.append(sess.run([y, g], {x: value}))
        for ours, theirs in zip(results[0], results[1]):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=f"{name} {shape} axis={axis}")


def test_scalar_regression_from_the_issue():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        w = tf.Variable(2.0)
        grads = tf.gradients(tf.reduce_sum(tf.pow(x * w, 2)), [x, w])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(grads, {x: 3.0}) == [pytest.approx(24.0), pytest.approx(36.0)]


def test_floormod_by_zero_still_raises_for_nonempty_values():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.int32)
        out = tf.math.floormod(a, 0)
        with tf.Session() as sess:
            assert sess.run(out, {a: np.zeros([0], np.int32)}).shape == (0,)
            with pytest.raises(tf.errors.InvalidArgumentError, match="division by zero"):
                sess.run(out, {a: np.ones([2], np.int32)})
