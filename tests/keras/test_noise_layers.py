"""Noise layers while training (random, so checked by their statistics) and the activity
regularization loss (against tf-keras: divided by the batch size)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras
X = np.random.default_rng(0).standard_normal((400, 50)).astype(np.float32)


def _train(layer, x=X):
    with tf.Graph().as_default():
        out = layer(tf.constant(x), training=True)
        with tf.Session() as sess:
            return sess.run(out)


def test_gaussian_noise_and_dropout_statistics():
    noise = _train(K.layers.GaussianNoise(0.5, seed=1)) - X
    assert abs(noise.mean()) < 0.01 and abs(noise.std() - 0.5) < 0.01
    ratio = _train(K.layers.GaussianDropout(0.2, seed=1), np.ones_like(X))
    assert abs(ratio.mean() - 1.0) < 0.01 and abs(ratio.std() - np.sqrt(0.2 / 0.8)) < 0.01


def test_alpha_dropout_keeps_mean_and_variance():
    out = _train(K.layers.AlphaDropout(0.2, seed=3))
    assert abs(out.mean() - X.mean()) < 0.03 and abs(out.std() - X.std()) < 0.03
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p**2)) ** -0.5
    dropped = np.isclose(out, a * alpha_p - a * alpha_p * 0.2, atol=1e-5)
    assert 0.17 < dropped.mean() < 0.23


def test_spatial_dropout_drops_whole_channels():
    images = np.ones((20, 4, 4, 8), np.float32)
    out = _train(K.layers.SpatialDropout2D(0.5, seed=2), images)
    per_channel = out.reshape(20, 16, 8)
    assert np.all(per_channel.min(axis=1) == per_channel.max(axis=1))  # a channel is all kept or all dropped
    assert set(np.unique(out)) <= {0.0, 2.0} and 0.3 < (out == 0).mean() < 0.7
    sequences = _train(K.layers.SpatialDropout1D(0.5, seed=2), np.ones((20, 6, 8), np.float32))
    assert np.all(sequences.min(axis=1) == sequences.max(axis=1))


def test_noise_is_off_at_inference_and_under_predict():
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.GaussianNoise(1.0, input_shape=(50,)), K.layers.AlphaDropout(0.5)])
        np.testing.assert_array_equal(model.predict(X[:8]), X[:8])


@pytest.mark.oracle
def test_activity_regularization_loss_is_per_sample_as_tf_keras():
    from flowmesh.testing.keras_oracle import require_tf_keras

    tf1, tf_keras = require_tf_keras()
    values = []
    for lib, keras in ((tf1, tf_keras), (tf, K)):
        with lib.Graph().as_default():
            x = keras.Input((50,))
            model = keras.Model(x, keras.layers.ActivityRegularization(l1=0.01, l2=0.02)(
                keras.layers.Dense(3, kernel_initializer="ones", activity_regularizer="l2")(x)))
            loss = lib.add_n(model.losses)
            with lib.Session() as sess:
                sess.run(lib.global_variables_initializer())
                values.append(sess.run(loss, {x: X[:16]}))
    np.testing.assert_allclose(values[1], values[0], rtol=1e-5)
