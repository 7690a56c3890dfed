"""Random augmentations: ranges and distributions, reproducibility under graph/op seeds,
and their bad-input errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError

_IMAGE = np.arange(2 * 6 * 8 * 3, dtype=np.float32).reshape(2, 6, 8, 3) / 288.0


def _runs(build, n=40, graph_seed=None):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        out = build(tf.constant(_IMAGE))
        with tf.Session() as sess:
            return [sess.run(out) for _ in range(n)]


def test_random_crop_takes_every_offset_uniformly():
    crops = _runs(lambda x: tf.image.random_crop(x[0], [4, 5, 3]), n=300)
    offsets = [(np.argwhere(_IMAGE[0] == c[0, 0, 0])[0][:2]) for c in crops]
    for c, (oy, ox) in zip(crops, offsets):
        np.testing.assert_array_equal(c, _IMAGE[0, oy:oy + 4, ox:ox + 5])
    counts = np.zeros((3, 4))
    for oy, ox in offsets:
        counts[oy, ox] += 1
    assert counts.min() >= 8, counts  # 12 offsets, 25 expected each


def test_random_flips_are_either_identity_or_mirror():
    for fn, axis in ((tf.image.random_flip_left_right, 1), (tf.image.random_flip_up_down, 0)):
        singles = _runs(lambda x, fn=fn: fn(x[0]))
        flipped = [not np.array_equal(s, _IMAGE[0]) for s in singles]
        for s, f in zip(singles, flipped):
            np.testing.assert_array_equal(s, np.flip(_IMAGE[0], axis) if f else _IMAGE[0])
        assert 8 <= sum(flipped) <= 32
        batches = _runs(lambda x, fn=fn: fn(x))
        per_image = [[not np.array_equal(b[i], _IMAGE[i]) for i in range(2)] for b in batches]
        for b, flags in zip(batches, per_image):
            for i, f in enumerate(flags):
                np.testing.assert_array_equal(b[i], np.flip(_IMAGE[i], axis) if f else _IMAGE[i])
        assert any(f[0] != f[1] for f in per_image)  # images of a batch flip independently


def test_random_brightness_and_contrast_ranges():
    deltas = [r - _IMAGE for r in _runs(lambda x: tf.image.random_brightness(x, 0.25))]
    for d in deltas:
        assert np.ptp(d) < 1e-5 and -0.25 <= d.flat[0] < 0.25
    assert np.std([d.flat[0] for d in deltas]) > 0.08
    mean = _IMAGE.mean(axis=(1, 2), keepdims=True)
    for r in _runs(lambda x: tf.image.random_contrast(x, 0.5, 1.5)):
        factor = (r - mean)[0, 0, 0, 0] / (_IMAGE - mean)[0, 0, 0, 0]
        assert 0.5 <= factor < 1.5
        np.testing.assert_allclose(r, (_IMAGE - mean) * factor + mean, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("graph_seed,op_seed", [(7, None), (None, 3), (7, 3)])
def test_seeded_sequences_repeat_across_sessions(graph_seed, op_seed):
    def build(x):
        y = tf.image.random_flip_left_right(tf.image.random_crop(x, [2, 4, 4, 3], seed=op_seed),
                                            seed=op_seed)
        return tf.image.random_contrast(tf.image.random_brightness(y, 0.2, seed=op_seed), 0.2, 1.8,
                                        seed=op_seed)
    first, second = _runs(build, 5, graph_seed), _runs(build, 5, graph_seed)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not all(np.array_equal(first[0], f) for f in first[1:])


def test_bad_arguments():
    with tf.Graph().as_default():
        x = tf.zeros([6, 8, 3])
        with pytest.raises(InvalidArgumentError, match=r"random_crop.*\(6, 8, 3\).*\[7, 2, 3\]"):
            tf.image.random_crop(x, [7, 2, 3])
        with pytest.raises(InvalidArgumentError, match="max_delta"):
            tf.image.random_brightness(x, -1.0)
        with pytest.raises(InvalidArgumentError, match="upper"):
            tf.image.random_contrast(x, 0.8, 0.5)
        dynamic = tf.placeholder(tf.float32, [None, None, 3])
        crop = tf.image.random_crop(dynamic, [4, 4, 3])
        with tf.Session() as sess, pytest.raises(InvalidArgumentError, match="Need value.shape >= size"):
            sess.run(crop, {dynamic: np.zeros((3, 9, 3), np.float32)})
