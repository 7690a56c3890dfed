"""tf.image's quality measures (psnr, ssim, ssim_multiscale), derivative filters
(image_gradients, sobel_edges, total_variation), quarter turns and transposes,
resize_image_with_pad, gamma, YIQ/YUV and JPEG re-encoding against TensorFlow (values and
gradients), and the decode aliases."""

from __future__ import annotations

import numpy as np

import flowmesh as tf
from tests.image.helpers import assert_same, run_both

_RNG = np.random.RandomState(0)
_X = _RNG.uniform(0, 1, (2, 16, 16, 3)).astype(np.float32)
_Y = np.clip(_X + _RNG.normal(0, 0.1, _X.shape), 0, 1).astype(np.float32)


def test_quality_and_filters_match_tensorflow():
    def build(t, a, b):
        return [t.image.psnr(a, b, 1.0), t.image.ssim(a, b, 1.0, filter_size=5),
                t.image.ssim(a, b, 1.0, filter_size=3, return_index_map=True),
                t.image.ssim_multiscale(a, b, 1.0, power_factors=(0.5, 0.5), filter_size=3),
                t.image.total_variation(a), t.image.total_variation(a[0]), *t.image.image_gradients(a),
                t.image.sobel_edges(a),
                t.gradients(t.reduce_sum(t.image.ssim(a, b, 1.0, filter_size=5)), a)[0],
                t.gradients(t.reduce_sum(t.image.sobel_edges(a) ** 2), a)[0]]
    ours, theirs = run_both(build, _X, _Y)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-5)


def test_geometry_and_colour_match_tensorflow():
    def build(t, a):
        return [t.image.rot90(a), t.image.rot90(a[0], 3), t.image.rot90(a, 2), t.image.rot90(a, t.constant(3)),
                t.image.transpose(a), t.image.transpose_image(a[1]), t.image.resize_image_with_pad(a, 10, 20),
                t.image.resize_image_with_pad(a[0], 20, 9, method=1), t.image.adjust_gamma(a, 2.0, 1.5),
                t.image.rgb_to_yiq(a), t.image.yiq_to_rgb(a), t.image.rgb_to_yuv(a), t.image.yuv_to_rgb(a)]
    ours, theirs = run_both(build, _X)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-6)
    u8 = (_X * 255).astype(np.uint8)
    ours, theirs = run_both(lambda t, a: [t.image.adjust_gamma(a, 0.5), t.image.psnr(a, a[::-1], 255),
                                          t.image.ssim(a, a[::-1], 255, filter_size=5)], u8)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-5)


def test_jpeg_quality_round_trip_is_close_to_tensorflow():
    u8 = (_X[0] * 255).astype(np.uint8)
    ours, theirs = run_both(lambda t, a: [t.image.adjust_jpeg_quality(a, 50),
                                          t.image.adjust_jpeg_quality(t.image.convert_image_dtype(a, t.float32), 90)],
                            u8)
    # Pillow's libjpeg and TensorFlow's libjpeg-turbo round a few pixels differently
    assert ours[0].dtype == np.uint8 and np.abs(ours[0].astype(int) - theirs[0].astype(int)).max() <= 4
    np.testing.assert_allclose(ours[1], theirs[1], atol=4 / 255)
    with tf.Graph().as_default():
        shaky = tf.image.random_jpeg_quality(tf.constant(u8), 20, 80, seed=1)
        with tf.Session() as sess:
            assert sess.run(shaky).shape == (16, 16, 3)


def test_decode_aliases_and_names():
    assert tf.image.decode_bmp is tf.io.decode_bmp and tf.image.is_jpeg is tf.io.is_jpeg
    assert tf.image.extract_image_patches is tf.extract_image_patches
    assert getattr(tf.image.decode_jxl, "_flowmesh_unsupported", None)
    with tf.Graph().as_default():
        patches = tf.image.extract_patches(tf.zeros([1, 6, 6, 2]), [1, 3, 3, 1], [1, 3, 3, 1], [1, 1, 1, 1], "VALID")
        assert patches.shape.as_list() == [1, 2, 2, 18]
