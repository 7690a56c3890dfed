"""Initializers by name and their distributions (TensorFlow's definitions)."""

import numpy as np
import pytest

import flowmesh as tf


def _sample(init, shape):
    with tf.Graph().as_default():
        value = init(shape)
        with tf.Session() as sess:
            return sess.run(value)


@pytest.mark.parametrize("name, shape, bound", [
    ("glorot_uniform", (200, 300), np.sqrt(6 / 500)),
    ("he_uniform", (200, 300), np.sqrt(6 / 200)),
    ("lecun_uniform", (200, 300), np.sqrt(3 / 200)),
])
def test_uniform_limits(name, shape, bound):
    value = _sample(tf.keras.initializers.get(name), shape)
    assert np.abs(value).max() <= bound + 1e-6 and np.abs(value).max() > 0.95 * bound


@pytest.mark.parametrize("name, std", [("glorot_normal", np.sqrt(2 / 500)), ("he_normal", np.sqrt(2 / 200)),
                                       ("lecun_normal", np.sqrt(1 / 200))])
def test_truncated_normal_stddev(name, std):
    value = _sample(tf.keras.initializers.get(name), (200, 300))
    assert value.std() == pytest.approx(std, rel=0.03)
    assert np.abs(value).max() <= 2 * std / 0.87962566103423978 + 1e-6


def test_conv_fans_and_orthogonal_and_identity():
    value = _sample(tf.initializers.variance_scaling(2.0, "fan_in", "uniform"), (3, 3, 16, 8))
    assert np.abs(value).max() <= np.sqrt(6 / (9 * 16)) + 1e-6
    q = _sample(tf.keras.initializers.Orthogonal(seed=1), (6, 4))
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    np.testing.assert_allclose(_sample(tf.keras.initializers.Identity(gain=2.0), (3, 3)), 2 * np.eye(3))


def test_unknown_name_lists_valid_ones():
    with pytest.raises(ValueError, match="glorot_uniform"):
        tf.keras.initializers.get("glorot")
    with pytest.raises(ValueError, match="l1_l2"):
        tf.keras.regularizers.get("l3")
    config = tf.keras.initializers.serialize(tf.keras.initializers.VarianceScaling(2.0, "fan_out"))
    assert tf.keras.initializers.get(config).mode == "fan_out"
