"""HSV conversions and hue/saturation adjustments against TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from tests.image.helpers import assert_same, run_both

_RGB = np.random.RandomState(7).uniform(0, 1, (2, 6, 9, 3)).astype(np.float32)
_RGB[0, 0] = [0.5, 0.5, 0.5]  # grey: no hue, no saturation
_RGB[0, 1] = [0.0, 0.0, 0.0]  # black
_RGB[0, 2] = [1.0, 0.0, 0.0]  # pure red (hue 0)
_RGB[0, 3] = [0.2, 0.9, 0.9]  # two channels at the maximum


def test_rgb_to_hsv_and_back_match_tensorflow():
    hsv = np.random.RandomState(8).uniform(0, 1, (2, 6, 9, 3)).astype(np.float32)
    ours, theirs = run_both(lambda t, x, y: [t.image.rgb_to_hsv(x), t.image.hsv_to_rgb(y),
                                             t.image.hsv_to_rgb(t.image.rgb_to_hsv(x))],
                            _RGB, hsv)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[2], _RGB, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_hue_and_saturation_adjustments_match_tensorflow(dtype):
    images = _RGB if dtype == np.float32 else (_RGB * 255).astype(np.uint8)
    ours, theirs = run_both(lambda t, x: [
        t.image.adjust_hue(x, 0.2), t.image.adjust_hue(x, -0.45), t.image.adjust_hue(x[0], 0.9),
        t.image.adjust_saturation(x, 0.4), t.image.adjust_saturation(x, 1.7)], images)
    if dtype == np.uint8:  # a rounding boundary may fall either side of a float ulp
        for a, b in zip(ours, theirs):
            assert a.dtype == b.dtype and np.abs(a.astype(int) - b).max() <= 1
    else:
        assert_same(ours, theirs, rtol=1e-5, atol=2e-6)


def test_random_hue_and_saturation_stay_in_their_ranges():
    with tf.Graph().as_default():
        x = tf.constant(_RGB)
        hue, sat = tf.image.random_hue(x, 0.1, seed=3), tf.image.random_saturation(x, 0.5, 0.6, seed=4)
        with tf.Session() as sess:
            for _ in range(5):
                h, s = sess.run([hue, sat])
                assert h.shape == _RGB.shape and 0 <= h.min() and h.max() <= 1 + 1e-6
                sat_in = sess.run(tf.image.rgb_to_hsv(x))[..., 1]
                ratio = sess.run(tf.image.rgb_to_hsv(s))[..., 1][sat_in > 0.1] / sat_in[sat_in > 0.1]
                assert 0.5 - 1e-4 <= ratio.min() and ratio.max() <= 0.6 + 1e-4
                assert np.ptp(ratio) < 1e-3  # one factor per call


def test_bad_input_names_the_function():
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match="rgb_to_hsv.*last dimension must be 3"):
            tf.image.rgb_to_hsv(tf.zeros([2, 2, 4]))
        with pytest.raises(TypeError, match="hsv_to_rgb.*float"):
            tf.image.hsv_to_rgb(tf.zeros([2, 2, 3], tf.int32))
        with pytest.raises(InvalidArgumentError, match="random_hue.*max_delta"):
            tf.image.random_hue(tf.zeros([2, 2, 3]), 0.7)
        with pytest.raises(InvalidArgumentError, match="random_saturation.*upper"):
            tf.image.random_saturation(tf.zeros([2, 2, 3]), 0.5, 0.5)


def test_unknown_rank_gives_the_same_values():
    with tf.Graph().as_default():
        known, unknown = tf.placeholder(tf.float32, _RGB.shape), tf.placeholder(tf.float32)
        outs = [f(x) for x in (known, unknown)
                for f in (tf.image.rgb_to_hsv, tf.image.hsv_to_rgb,
                          lambda y: tf.image.adjust_hue(y, 0.3))]
        with tf.Session() as sess:
            values = sess.run(outs, {known: _RGB, unknown: _RGB})
    for a, b in zip(values[:3], values[3:]):
        np.testing.assert_array_equal(a, b)
