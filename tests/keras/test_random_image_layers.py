"""RandomFlip, RandomContrast, RandomBrightness, RandomCrop, RandomHeight, RandomWidth:
tf-keras's configs and inference outputs; while training, the properties of each
augmentation (flowmesh's random streams are not tf-keras's)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import compare_config, require_tf_keras

L = tf.keras.layers
IMAGES = np.random.default_rng(0).uniform(100, 150, (4, 8, 10, 3)).astype(np.float32)

MAKERS = {
    "flip": lambda layers: layers.RandomFlip("horizontal", seed=3),
    "contrast": lambda layers: layers.RandomContrast((0.2, 0.5), seed=1),
    "brightness": lambda layers: layers.RandomBrightness(0.2, value_range=(0, 1)),
    "crop": lambda layers: layers.RandomCrop(5, 6, seed=2),
    "crop_up": lambda layers: layers.RandomCrop(12, 9),
    "height": lambda layers: layers.RandomHeight(0.3, interpolation="nearest"),
    "width": lambda layers: layers.RandomWidth((0.1, 0.4)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_config_and_inference_equal_tf_keras(name):
    compare_config(MAKERS[name], (8, 10, 3))
    tf1, tf_keras = require_tf_keras()
    with tf1.Graph().as_default(), tf1.Session() as sess:
        expected = sess.run(MAKERS[name](tf_keras.layers)(tf1.constant(IMAGES), training=False))
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(MAKERS[name](L)(tf.constant(IMAGES), training=False))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


def _train(layer, images=IMAGES):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(layer(tf.constant(images), training=True))


def test_training_augmentations_have_their_properties():
    flipped = _train(L.RandomFlip("horizontal_and_vertical", seed=4))
    for image, out in zip(IMAGES, flipped):
        assert any(np.array_equal(out, v) for v in (image, image[:, ::-1], image[::-1], image[::-1, ::-1]))
    contrasted = _train(L.RandomContrast(0.5, seed=5))
    np.testing.assert_allclose(contrasted.mean(axis=(1, 2)), IMAGES.mean(axis=(1, 2)), rtol=1e-4)
    brightened = _train(L.RandomBrightness(0.2, value_range=(0, 255)))
    delta = (brightened - IMAGES).reshape(4, -1)
    np.testing.assert_allclose(delta, delta[:, :1] * np.ones_like(delta), atol=1e-3)
    assert np.all(np.abs(delta) <= 0.2 * 255 + 1e-3)
    cropped = _train(L.RandomCrop(5, 6, seed=6))
    windows = [IMAGES[:, i:i + 5, j:j + 6] for i in range(4) for j in range(5)]
    assert any(np.array_equal(cropped, w) for w in windows)
    taller = _train(L.RandomHeight((0.5, 1.0)))
    assert 12 <= taller.shape[1] <= 16 and taller.shape[2] == 10
    narrower = _train(L.RandomWidth((-0.5, -0.2)))
    assert narrower.shape[1] == 8 and 5 <= narrower.shape[2] <= 8


def test_the_learning_phase_decides_in_a_model():
    with tf.Graph().as_default():
        model = tf.keras.Sequential([tf.keras.Input((8, 10, 3)), L.RandomFlip("vertical", seed=1),
                                     L.RandomCrop(6, 6), L.Conv2D(2, 3)])
        assert np.array_equal(model.predict(IMAGES), model.predict(IMAGES))  # inference: deterministic
        with pytest.raises(ValueError, match="unknown mode"):
            L.RandomFlip("diagonal")
        with pytest.raises(ValueError, match="range"):
            L.RandomBrightness(1.5)


# A bound pair with lower == upper makes the warp deterministic: the same in both.
WARPS = {
    "rotation_quarter": lambda layers: layers.RandomRotation((0.25, 0.25)),
    "rotation_wrap_nearest": lambda layers: layers.RandomRotation((0.1, 0.1), fill_mode="wrap", interpolation="nearest"),
    "translation_constant": lambda layers: layers.RandomTranslation((0.2, 0.2), (-0.3, -0.3), fill_mode="constant",
                                                                   fill_value=7.0),
    "zoom_in": lambda layers: layers.RandomZoom((-0.4, -0.4)),
    "zoom_xy_nearest_fill": lambda layers: layers.RandomZoom((0.5, 0.5), (0.2, 0.2), fill_mode="nearest"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(WARPS))
def test_warps_equal_tf_keras(name):
    compare_config(WARPS[name], (8, 10, 3))
    tf1, tf_keras = require_tf_keras()
    with tf1.Graph().as_default(), tf1.Session() as sess:
        expected = sess.run(WARPS[name](tf_keras.layers)(tf1.constant(IMAGES), training=True))
    with tf.Graph().as_default(), tf.Session() as sess:
        layer = WARPS[name](L)
        got, same = sess.run([layer(tf.constant(IMAGES), training=True), layer(tf.constant(IMAGES), training=False)])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(same, IMAGES)


def test_random_rotation_varies_per_image():
    with tf.Graph().as_default(), tf.Session() as sess:
        out = sess.run(L.RandomRotation(0.5, seed=1)(tf.constant(np.repeat(IMAGES[:1], 4, 0)), training=True))
    assert out.shape == IMAGES.shape and len({out[i].tobytes() for i in range(4)}) == 4
    with pytest.raises(NotImplementedError, match="fill_mode"):
        L.RandomZoom(0.1, fill_mode="mirror")


@pytest.mark.oracle
@pytest.mark.parametrize("interpolation", ["BILINEAR", "NEAREST"])
@pytest.mark.parametrize("fill_mode", ["REFLECT", "WRAP", "CONSTANT", "NEAREST"])
def test_projective_transform_op_equals_tensorflow(interpolation, fill_mode):
    from flowmesh.ops.image_transform_ops import image_projective_transform_v3

    tf1, _ = require_tf_keras()
    images = np.random.default_rng(1).uniform(0, 1, (2, 5, 7, 2)).astype(np.float32)
    c, s = np.cos(0.7), np.sin(0.7)
    transforms = np.array([[c, -s, 2.0, s, c, -1.5, 0.0, 0.0], [1.3, 0.2, -4.0, -0.1, 0.8, 3.0, 0.01, -0.02]],
                          np.float32)
    for shape in [(5, 7), (6, 4)]:
        with tf1.Graph().as_default(), tf1.Session() as sess:
            expected = sess.run(tf1.raw_ops.ImageProjectiveTransformV3(
                images=images, transforms=transforms, output_shape=shape, fill_value=0.5,
                interpolation=interpolation, fill_mode=fill_mode))
        with tf.Graph().as_default(), tf.Session() as sess:
            got = sess.run(image_projective_transform_v3(images, transforms, shape, 0.5, interpolation, fill_mode))
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
