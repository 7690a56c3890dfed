"""tf.train.AdagradDAOptimizer and tf.train.noisy_linear_cosine_decay against TensorFlow 2.21's
tf.compat.v1 (ApplyAdagradDA / SparseApplyAdagradDA over several steps, with L1 and L2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

W0 = np.array([[0.5, -1.0, 2.0], [0.1, 0.0, -0.3], [1.5, 0.7, -2.0], [0.2, 0.2, 0.2]], np.float32)
TARGET = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)


def _train(t, sparse, l1, l2, steps=4):
    step = t.train.get_or_create_global_step()
    w = t.Variable(W0, name="w")
    if sparse:
        rows = t.gather(w, [2, 0, 2])
        loss = t.reduce_sum((rows - TARGET[:3]) ** 2)
    else:
        loss = t.reduce_sum((w * w * 0.5 - TARGET) ** 2) + t.reduce_sum(t.sin(w))
    opt = t.train.AdagradDAOptimizer(0.3, step, initial_gradient_squared_accumulator_value=0.2,
                                     l1_regularization_strength=l1, l2_regularization_strength=l2)
    train = opt.minimize(loss, global_step=step)
    slots = [opt.get_slot(w, n) for n in opt.get_slot_names()]
    return train, [w] + slots, steps


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("l1,l2", [(0.0, 0.0), (0.05, 0.0), (0.0, 0.1), (0.3, 0.2)])
def test_adagrad_da_matches_tensorflow(sparse, l1, l2):
    tf1 = require_tensorflow()
    results = []
    for t, config in ((tf, None), (tf1, session_config(tf1))):
        with t.Graph().as_default() as g, t.Session(graph=g, config=config) as sess:
            train, fetch, steps = _train(t, sparse, l1, l2)
            sess.run(t.global_variables_initializer())
            trace = []
            for _ in range(steps):
                sess.run(train)
                trace.append(sess.run(fetch))
            results.append(trace)
    for ours, theirs in zip(*results):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_adagrad_da_slots_and_errors():
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(W0, name="w")
        opt = tf.train.AdagradDAOptimizer(0.1, step)
        opt.minimize(tf.reduce_sum(w), global_step=step)
        assert sorted(opt.get_slot_names()) == ["gradient_accumulator",
                                                "gradient_squared_accumulator"]
        assert opt.get_slot(w, "gradient_accumulator").op.name == "w/AdagradDA"
        with pytest.raises(ValueError, match="must be positive"):
            tf.train.AdagradDAOptimizer(0.1, step, initial_gradient_squared_accumulator_value=0)
        with pytest.raises(ValueError, match="needs global_step"):
            tf.train.AdagradDAOptimizer(0.1, None)


def _decay(t, step, variance):
    return t.train.noisy_linear_cosine_decay(0.5, step, 40, initial_variance=variance,
                                             variance_decay=0.6, num_periods=1.5, alpha=0.1,
                                             beta=0.01)


def test_noisy_linear_cosine_decay_without_noise_matches_tensorflow():
    tf1 = require_tensorflow()
    steps = [0, 3, 17, 40, 55]
    values = []
    for t in (tf, tf1):
        with t.Graph().as_default() as g, t.Session(graph=g) as sess:
            step = t.placeholder(t.int64, [])
            out = _decay(t, step, 0.0)
            values.append([sess.run(out, {step: s}) for s in steps])
    np.testing.assert_allclose(values[0], values[1], rtol=1e-6, atol=1e-7)


def test_noisy_linear_cosine_decay_noise_has_tensorflows_distribution():
    """Mean and spread over 4000 draws at one step, against the formula TensorFlow
    documents (eps ~ N(0, v0 / (1 + s) ** d)); bounds at 6 standard errors."""
    s, v0, d, n = 7.0, 1.0, 0.6, 4000
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.set_random_seed(3)
        out = _decay(tf, tf.constant(int(s), tf.int64), v0)
        draws = np.array([sess.run(out) for _ in range(n)], np.float64)
    cosine = 0.5 * (1 + math.cos(math.pi * 2 * 1.5 * s / 40))
    mean = 0.5 * ((0.1 + (40 - s) / 40) * cosine + 0.01)
    std = 0.5 * abs(cosine) * math.sqrt(v0 / (1 + s) ** d)
    assert abs(draws.mean() - mean) < 6 * std / math.sqrt(n)
    assert abs(draws.std() - std) < 6 * std / math.sqrt(2 * n)
