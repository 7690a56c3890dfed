"""Crops, pads, flips, colour adjustments and dtype conversions against TensorFlow (values,
dtypes, static shapes, gradients), and their bad-input errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from tests.image.helpers import assert_same, run_both

_RNG = np.random.RandomState(0)
_FLOAT = _RNG.uniform(0, 1, (2, 6, 8, 3)).astype(np.float32)
_UINT8 = _RNG.randint(0, 256, (2, 6, 8, 3)).astype(np.uint8)


def _geometry(t, x):
    return [t.image.crop_to_bounding_box(x, 1, 2, 4, 5), t.image.crop_to_bounding_box(x[0], 0, 0, 6, 8),
            t.image.pad_to_bounding_box(x, 1, 2, 9, 11), t.image.pad_to_bounding_box(x[1], 0, 0, 6, 8),
            t.image.resize_image_with_crop_or_pad(x, 4, 11), t.image.resize_image_with_crop_or_pad(x[0], 9, 3),
            t.image.central_crop(x, 0.5), t.image.central_crop(x[0], 0.33), t.image.central_crop(x, 1.0),
            t.image.flip_left_right(x), t.image.flip_up_down(x[0]), t.image.flip_up_down(x)]


def _colour(t, x):
    return [t.image.adjust_brightness(x, 0.3), t.image.adjust_brightness(x, -70),
            t.image.adjust_contrast(x, 1.7), t.image.adjust_contrast(x[0], 0.4),
            t.image.per_image_standardization(x), t.image.per_image_standardization(x[0]),
            t.image.rgb_to_grayscale(x), t.image.grayscale_to_rgb(t.image.rgb_to_grayscale(x))]


@pytest.mark.parametrize("images", [_FLOAT, _UINT8], ids=["float32", "uint8"])
def test_geometry_and_colour_match_tensorflow(images):
    ours, theirs = run_both(lambda t, x: _geometry(t, x) + _colour(t, x), images)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("source,target", [
    ("uint8", "float32"), ("uint8", "int32"), ("uint8", "uint16"), ("int32", "uint8"),
    ("uint16", "uint8"), ("float32", "uint8"), ("float32", "int32"), ("float32", "float64"),
    ("int16", "float64"), ("float64", "int16")])
def test_convert_image_dtype_matches_tensorflow(source, target):
    if source.startswith("float"):
        values = np.array([-0.5, 0.0, 0.2, 0.5, 0.999, 1.0, 1.7], dtype=source)
    else:
        info = np.iinfo(source)
        values = np.array([info.min, 0, 1, 127, 255, info.max], dtype=np.int64).astype(source)
    ours, theirs = run_both(lambda t, x: [t.image.convert_image_dtype(x, getattr(t, target)),
                                          t.image.convert_image_dtype(x, getattr(t, target), saturate=True)],
                            values)
    assert_same(ours, theirs, rtol=1e-7, atol=0)


def test_gradients_match_tensorflow():
    weights = _RNG.randn(2, 9, 11, 3).astype(np.float32)

    def build(t, x):
        y = t.image.pad_to_bounding_box(t.image.crop_to_bounding_box(t.image.flip_left_right(x), 1, 1, 4, 6),
                                        2, 3, 9, 11)
        y = t.image.adjust_brightness(t.image.flip_up_down(y), 0.1)
        return t.gradients(t.reduce_sum(y * weights), x) + [
            t.gradients(t.reduce_sum(t.image.central_crop(x, 0.5) ** 2), x)[0]]
    ours, theirs = run_both(build, _FLOAT)
    assert_same(ours, theirs)


def test_static_shapes_and_dtypes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.uint8, [None, 6, 8, 3])
        assert tf.image.crop_to_bounding_box(x, 1, 2, 4, 5).shape.as_list() == [None, 4, 5, 3]
        assert tf.image.pad_to_bounding_box(x, 1, 2, 9, 11).shape.as_list() == [None, 9, 11, 3]
        assert tf.image.central_crop(x, 0.5).shape.as_list() == [None, 4, 4, 3]
        assert tf.image.rgb_to_grayscale(x).shape.as_list() == [None, 6, 8, 1]
        assert tf.image.per_image_standardization(x).dtype == tf.float32
        assert tf.image.adjust_contrast(x, 2.0).dtype == tf.uint8


def test_bad_input_names_the_function_and_shapes():
    with tf.Graph().as_default():
        x = tf.zeros([6, 8, 3])
        with pytest.raises(InvalidArgumentError, match=r"crop_to_bounding_box.*height 6.*target 5.*offset 2.*\(6, 8, 3\)"):
            tf.image.crop_to_bounding_box(x, 2, 0, 5, 8)
        with pytest.raises(InvalidArgumentError, match=r"pad_to_bounding_box.*width 8.*target_width 7"):
            tf.image.pad_to_bounding_box(x, 0, 0, 6, 7)
        with pytest.raises(InvalidArgumentError, match=r"flip_left_right.*\(8, 3\)"):
            tf.image.flip_left_right(tf.zeros([8, 3]))
        with pytest.raises(InvalidArgumentError, match="central_fraction"):
            tf.image.central_crop(x, 1.5)
        with pytest.raises(InvalidArgumentError, match=r"rgb_to_grayscale.*\(6, 8, 4\)"):
            tf.image.rgb_to_grayscale(tf.zeros([6, 8, 4]))


def test_dynamic_shapes_are_checked_when_the_step_runs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, 3])
        crop = tf.image.crop_to_bounding_box(x, 1, 1, 5, 3)
        pad = tf.image.pad_to_bounding_box(x, 1, 0, 4, 6)
        with tf.Session() as sess:
            image = np.zeros((4, 4, 3), np.float32)
            with pytest.raises(InvalidArgumentError, match=r"crop_to_bounding_box: height.*\[4 4 3\]"):
                sess.run(crop, {x: image})
            with pytest.raises(InvalidArgumentError, match=r"pad_to_bounding_box: height.*\[4 4 3\]"):
                sess.run(pad, {x: image})
            assert sess.run(crop, {x: np.zeros((6, 4, 3), np.float32)}).shape == (5, 3, 3)
            assert sess.run(pad, {x: np.zeros((3, 6, 3), np.float32)}).shape == (4, 6, 3)


def test_adjust_contrast_of_unknown_shape_matches_known_shape():
    images = np.random.RandomState(6).uniform(0, 1, (2, 5, 7, 3)).astype(np.float32)
    with tf.Graph().as_default():
        known = tf.placeholder(tf.float32, images.shape)
        unknown = tf.placeholder(tf.float32)
        outs = [tf.image.adjust_contrast(known, 1.6), tf.image.adjust_contrast(unknown, 1.6)]
        assert outs[0].shape.as_list() == list(images.shape)
        with tf.Session() as sess:
            a, b = sess.run(outs, {known: images, unknown: images})
    np.testing.assert_array_equal(a, b)
