"""Keras optimizers Nadam/Adamax (against tf-keras's legacy optimizers in graph mode), AdamW,
Lion, Adafactor (against their update formulas in NumPy: tf-keras runs them eagerly only),
and learning-rate schedules (against tf-keras's)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras
RNG = np.random.default_rng(8)
X = RNG.standard_normal((16, 3)).astype(np.float32)
Y = RNG.standard_normal((16, 2)).astype(np.float32)
W0 = RNG.standard_normal((3, 2)).astype(np.float32)


def _train(keras, optimizer, steps=3):
    model = keras.Sequential([keras.layers.Dense(2, use_bias=False, input_shape=(3,))])
    model.set_weights([W0])
    model.compile(optimizer, "mse")
    for _ in range(steps):
        model.train_on_batch(X, Y)
    return model.get_weights()[0]


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["Nadam", "Adamax"])
def test_legacy_optimizers_match_tf_keras(name):
    from flowmesh.testing.keras_oracle import require_tf_keras

    tf1, tf_keras = require_tf_keras()
    with tf1.Graph().as_default() as graph:
        from tf_keras.src import backend as tf_keras_backend

        tf_keras_backend.set_session(tf1.Session(graph=graph))
        theirs = _train(tf_keras, getattr(tf_keras.optimizers.legacy, name)(0.05))
    with tf.Graph().as_default():
        ours = _train(K, getattr(K.optimizers, name)(0.05))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def _grad(w):
    return 2.0 * X.T @ (X @ w - Y) / Y.size


def _numpy_adamw(lr, wd, steps=3, b1=0.9, b2=0.999, eps=1e-7):
    w, m, v = W0.astype(np.float64), 0.0, 0.0
    for t in range(1, steps + 1):
        g = _grad(w)
        w = w - w * wd * lr
        m, v = m + (g - m) * (1 - b1), v + (g * g - v) * (1 - b2)
        w = w - m * (lr * np.sqrt(1 - b2**t) / (1 - b1**t)) / (np.sqrt(v) + eps)
    return w


def _numpy_lion(lr, steps=3, b1=0.9, b2=0.99):
    w, m = W0.astype(np.float64), 0.0
    for _ in range(steps):
        g = _grad(w)
        w = w - lr * np.sign(m * b1 + g * (1 - b1))
        m = m * b2 + g * (1 - b2)
    return w


def _numpy_adafactor(lr, steps=3, decay=-0.8, eps1=1e-30, eps2=1e-3, clip=1.0):
    w = W0.astype(np.float64)
    r, c = np.zeros(3), np.zeros(2)
    for t in range(1, steps + 1):
        g = _grad(w)
        rate = min(lr, 1 / np.sqrt(t))
        alpha = max(eps2, np.sqrt(np.mean(w * w))) * min(rate, 1 / np.sqrt(t))
        sq = g * g + eps1
        beta = 1 - t ** decay
        r = beta * r + (1 - beta) * sq.mean(-1)
        c = beta * c + (1 - beta) * sq.mean(-2)
        v = (r / r.mean())[:, None] * c[None, :]
        u = g / np.sqrt(v)
        u = u / max(1.0, np.sqrt(np.mean(u * u)) / clip)
        w = w - alpha * u
    return w


@pytest.mark.parametrize("make,expected", [
    (lambda: K.optimizers.AdamW(0.05, weight_decay=0.1), lambda: _numpy_adamw(0.05, 0.1)),
    (lambda: K.optimizers.Lion(0.01), lambda: _numpy_lion(0.01)),
    (lambda: K.optimizers.Adafactor(0.1), lambda: _numpy_adafactor(0.1)),
])
def test_newer_optimizers_follow_their_formulas(make, expected):
    with tf.Graph().as_default():
        ours = _train(K, make())
    np.testing.assert_allclose(ours, expected(), rtol=1e-4, atol=1e-6)


SCHEDULES = {
    "exponential": lambda s: s.ExponentialDecay(0.1, 10, 0.5),
    "exponential_staircase": lambda s: s.ExponentialDecay(0.1, 10, 0.5, staircase=True),
    "piecewise": lambda s: s.PiecewiseConstantDecay([5, 20], [1.0, 0.5, 0.1]),
    "polynomial": lambda s: s.PolynomialDecay(0.1, 30, 0.01, power=2.0),
    "polynomial_cycle": lambda s: s.PolynomialDecay(0.1, 12, cycle=True),
    "inverse_time": lambda s: s.InverseTimeDecay(0.1, 10, 0.5, staircase=True),
    "cosine": lambda s: s.CosineDecay(0.1, 40, alpha=0.1),
    "cosine_warmup": lambda s: s.CosineDecay(0.0, 30, warmup_target=0.1, warmup_steps=10),
    "cosine_restarts": lambda s: s.CosineDecayRestarts(0.1, 8, t_mul=2.0, m_mul=0.5, alpha=0.05),
    "cosine_restarts_fixed": lambda s: s.CosineDecayRestarts(0.1, 7, t_mul=1.0),
}
STEPS = np.array([0, 1, 4, 5, 6, 9, 10, 11, 19, 20, 25, 35, 50], np.float32)


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(SCHEDULES))
def test_schedules_match_tf_keras(case):
    from flowmesh.testing.keras_oracle import _plain, require_tf_keras

    tf1, tf_keras = require_tf_keras()
    values, configs = [], []
    for lib, schedules in ((tf1, tf_keras.optimizers.schedules), (tf, K.optimizers.schedules)):
        with lib.Graph().as_default():
            schedule = SCHEDULES[case](schedules)
            rates = [schedule(lib.constant(step)) for step in STEPS]
            with lib.Session() as sess:
                values.append(sess.run(rates))
            configs.append(_plain(schedules.serialize(schedule)))
    np.testing.assert_allclose(values[1], values[0], rtol=1e-5, atol=1e-7)
    assert configs[1]["config"] == configs[0]["config"]


def test_optimizer_with_a_schedule_trains_and_saves(tmp_path):
    schedule = K.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5, staircase=True)
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(2, input_shape=(3,))])
        model.compile(K.optimizers.SGD(schedule), "mse")
        model.fit(X, Y, epochs=2, batch_size=4, verbose=0)
        rate = K.backend.get_value(model.optimizer._rate())
        np.testing.assert_allclose(rate, 0.1 * 0.5 ** 4, rtol=1e-6)  # 8 steps: floor(8 / 2) halvings
        model.save(str(tmp_path / "m.h5"))
    with tf.Graph().as_default():
        loaded = K.models.load_model(str(tmp_path / "m.h5"))
        assert isinstance(loaded.optimizer._schedule, K.optimizers.schedules.ExponentialDecay)
