"""Resize ops against TensorFlow: every method and pixel-alignment mode, up and down, values,
dtypes, static shapes and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from tests.image.helpers import assert_same, run_both

_IMAGES = np.random.RandomState(0).uniform(-3, 300, (2, 5, 7, 3)).astype(np.float32)
_SIZES = [(9, 4), (3, 13), (1, 1), (10, 14)]
_MODES = [(False, False), (True, False), (False, True)]


def _op(tf_mod, method):
    return getattr(tf_mod.image, method)


@pytest.mark.parametrize("method", ["resize_bilinear", "resize_nearest_neighbor", "resize_bicubic"])
@pytest.mark.parametrize("align,half", _MODES)
def test_values_match_tensorflow(method, align, half):
    def build(t, x):
        outs = [_op(t, method)(x, list(size), align_corners=align, half_pixel_centers=half)
                for size in _SIZES]
        return outs + [o.shape.as_list() for o in outs[:1]]
    ours, theirs = run_both(lambda t, x: build(t, x)[:-1], _IMAGES)
    assert_same(ours, theirs, rtol=2e-6, atol=1e-4)


@pytest.mark.parametrize("align", [False, True])
def test_area_matches_tensorflow(align):
    ours, theirs = run_both(lambda t, x: [t.image.resize_area(x, list(s), align_corners=align)
                                          for s in _SIZES], _IMAGES)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float64])
def test_input_dtypes(dtype):
    images = np.random.RandomState(1).randint(0, 255, (1, 4, 6, 2)).astype(dtype)
    ours, theirs = run_both(lambda t, x: [t.image.resize_bilinear(x, [7, 3]),
                                          t.image.resize_nearest_neighbor(x, [7, 3])], images)
    assert_same(ours, theirs)


@pytest.mark.parametrize("method", ["resize_bilinear", "resize_nearest_neighbor", "resize_bicubic"])
@pytest.mark.parametrize("align,half", _MODES)
def test_gradients_match_tensorflow(method, align, half):
    weights = np.random.RandomState(2).randn(2, 8, 11, 3).astype(np.float32)
    shrink = np.random.RandomState(3).randn(2, 3, 4, 3).astype(np.float32)

    def build(t, x):
        up = _op(t, method)(x, [8, 11], align_corners=align, half_pixel_centers=half)
        down = _op(t, method)(x, [3, 4], align_corners=align, half_pixel_centers=half)
        loss = t.reduce_sum(up * weights) + t.reduce_sum(down * shrink)
        return t.gradients(loss, x)
    ours, theirs = run_both(build, _IMAGES)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("method", [0, 1, 2, 3])
@pytest.mark.parametrize("align", [False, True])
def test_resize_images_v1(method, align):
    def build(t, x):
        return [t.image.resize_images(x, [6, 10], method=method, align_corners=align),
                t.image.resize_images(x[0], [3, 3], method=method, align_corners=align),
                t.image.resize_images(x, [5, 7], method=method), t.image.resize(x, [4, 4])]
    ours, theirs = run_both(build, _IMAGES)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("size", [(10, 10), (3, 20), (12, 5)])
def test_preserve_aspect_ratio(size):
    ours, theirs = run_both(lambda t, x: [
        t.image.resize_images(x, list(size), preserve_aspect_ratio=True),
        t.image.resize_images(x[0], list(size), method=1, preserve_aspect_ratio=True)], _IMAGES)
    assert_same(ours, theirs)


def test_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.uint8, [None, 5, 7, 3])
        assert tf.image.resize_bilinear(x, [9, 4]).shape.as_list() == [None, 9, 4, 3]
        assert tf.image.resize_bilinear(x, [9, 4]).dtype == tf.float32
        assert tf.image.resize_nearest_neighbor(x, [2, 2]).dtype == tf.uint8
        assert tf.image.resize_images(x[0], [6, 6]).shape.as_list() == [6, 6, 3]


def test_bad_input_names_the_op_and_shapes():
    with tf.Graph().as_default():
        with pytest.raises(InvalidArgumentError, match=r"ResizeBilinear.*4-dimensional.*\(5, 7, 3\)"):
            tf.image.resize_bilinear(tf.zeros([5, 7, 3]), [2, 2])
        with pytest.raises(InvalidArgumentError, match="half_pixel_centers"):
            tf.image.resize_bilinear(tf.zeros([1, 5, 7, 3]), [2, 2], align_corners=True,
                                     half_pixel_centers=True)
        with pytest.raises(InvalidArgumentError, match="resize_images.*3-D.*4-D"):
            tf.image.resize_images(tf.zeros([5, 7]), [2, 2])
        size = tf.placeholder(tf.int32, [2])
        out = tf.image.resize_bilinear(tf.zeros([1, 5, 7, 3]), size)
        with tf.Session() as sess, pytest.raises(InvalidArgumentError, match=r"ResizeBilinear.*\[0, 3\]"):
            sess.run(out, {size: [0, 3]})


@pytest.mark.parametrize("method", ["resize_bilinear", "resize_bicubic", "resize_area"])
def test_larger_images_match_tensorflow(method):
    """Sizes where the fast engines' axis order, padding and tap counts all vary."""
    images = np.random.RandomState(4).uniform(0, 255, (2, 48, 64, 3)).astype(np.float32)
    weights = np.random.RandomState(5).randn(2, 29, 97, 3).astype(np.float32)
    modes = [(False, False), (True, False)] + ([] if method == "resize_area" else [(False, True)])

    def build(t, x):
        outs = []
        for align, half in modes:
            kw = {"align_corners": align} | ({"half_pixel_centers": half} if half else {})
            outs += [_op(t, method)(x, [24, 16], **kw)]  # integer factors: bilinear picks
            outs += [_op(t, method)(x, [29, 97], **kw), _op(t, method)(x, [61, 23], **kw)]
            if method != "resize_area":
                outs += t.gradients(t.reduce_sum(outs[-2] * weights), x)
        return outs
    ours, theirs = run_both(build, images)
    # Area's overlap weights are exact here and float32 arithmetic in TensorFlow (~1e-4 apart).
    assert_same(ours, theirs, rtol=1e-5, atol=1e-3 if method == "resize_area" else 3e-4)
