"""Preprocessing layers against tf-keras (graph mode): the same outputs for the same inputs
(and adapted statistics), and the same configs."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import compare_config, require_tf_keras

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(5)
DATA = (RNG.standard_normal((20, 3)) * [1.0, 5.0, 0.1] + [0.0, 3.0, -2.0]).astype(np.float32)
IMG = RNG.uniform(0, 255, (2, 7, 9, 3)).astype(np.float32)
SMALL = RNG.uniform(0, 1, (2, 3, 4, 1)).astype(np.float32)
IDS = np.array([[0, 1, 1], [3, 2, 0]], np.int64)
WORDS = np.array([["cat", "dog"], ["", "a fish"]], object)


def _adapted(layer, data):
    layer.adapt(data)
    return layer


def _adapt_or_given(L, **kwargs):
    """Adapted in flowmesh; tf-keras's adapt needs eager execution, so its side gets the
    same statistics given (population mean and variance)."""
    axis = kwargs.get("axis", -1)
    if L is tf.keras.layers:
        return _adapted(L.Normalization(**kwargs), DATA)
    if axis is None:
        return L.Normalization(mean=float(DATA.mean()), variance=float(DATA.var()), **kwargs)
    return L.Normalization(mean=DATA.mean(0), variance=DATA.var(0), **kwargs)


CASES = {
    "normalization_adapt": (lambda L: _adapt_or_given(L), DATA),
    "normalization_adapt_invert": (lambda L: _adapt_or_given(L, axis=None, invert=True), DATA[:4]),
    "normalization_given": (lambda L: L.Normalization(mean=[1.0, 2.0, 3.0], variance=[4.0, 1.0, 0.25]), DATA),
    "rescaling": (lambda L: L.Rescaling(1.0 / 255, offset=-0.5), IMG),
    "resizing_bilinear": (lambda L: L.Resizing(4, 5), IMG),
    "resizing_nearest": (lambda L: L.Resizing(10, 3, interpolation="nearest"), IMG),
    "resizing_crop": (lambda L: L.Resizing(4, 4, crop_to_aspect_ratio=True), IMG),
    "resizing_single_image": (lambda L: L.Resizing(3, 3), IMG[0]),
    "center_crop": (lambda L: L.CenterCrop(4, 5), IMG),
    "center_crop_upsize": (lambda L: L.CenterCrop(6, 6), SMALL),
    "category_one_hot": (lambda L: L.CategoryEncoding(4, output_mode="one_hot"), IDS[0]),
    "category_multi_hot": (lambda L: L.CategoryEncoding(5), IDS),
    "category_count": (lambda L: L.CategoryEncoding(5, output_mode="count"), IDS),
    "hashing_strings": (lambda L: L.Hashing(7), WORDS),
    "hashing_ints_mask": (lambda L: L.Hashing(5, mask_value=0), IDS),
    "hashing_salt": (lambda L: L.Hashing(11, salt=133), WORDS),
    "hashing_one_hot": (lambda L: L.Hashing(4, output_mode="multi_hot"), WORDS),
    "discretization": (lambda L: L.Discretization(bin_boundaries=[-1.0, 0.0, 2.5]), DATA),
    "discretization_one_hot": (lambda L: L.Discretization(bin_boundaries=[0.0, 1.0], output_mode="one_hot"),
                               DATA[:, :1]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_preprocessing_layer_matches_tf_keras(case):
    tf1, tf_keras = require_tf_keras()
    make, value = CASES[case]
    with tf1.Graph().as_default() as graph:
        from tf_keras.src import backend as tf_keras_backend

        tf_keras_backend.set_session(tf1.Session(graph=graph))
        layer = make(tf_keras.layers)
        theirs = tf_keras_backend.get_session().run(layer(tf1.constant(value)))
    with tf.Graph().as_default():
        layer = make(tf.keras.layers)
        ours = tf.keras.backend.get_session().run(layer(tf.constant(value)))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype, ours.shape)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-4)


def test_normalization_adapt_weights_and_config():
    with tf.Graph().as_default():
        layer = tf.keras.layers.Normalization(axis=-1)
        layer.adapt(DATA)
        mean, variance, count = layer.get_weights()
        np.testing.assert_allclose(mean, DATA.mean(0), rtol=1e-5)
        np.testing.assert_allclose(variance, DATA.var(0), rtol=1e-5)
        assert count == 20 and [w.name for w in layer.weights] == [
            "normalization/mean:0", "normalization/variance:0", "normalization/count:0"]


def test_discretization_adapt_gives_quantile_boundaries():
    with tf.Graph().as_default():
        layer = tf.keras.layers.Discretization(num_bins=4)
        layer.adapt(np.arange(100, dtype=np.float32))
        assert layer.bin_boundaries == [24.0, 49.0, 74.0]
        out = tf.keras.backend.get_session().run(layer(tf.constant([[0.0, 30.0, 99.0]])))
        np.testing.assert_array_equal(out, [[0, 1, 3]])


CONFIGS = {
    "normalization": (lambda L: L.Normalization(axis=(1, 2), mean=1.0, variance=2.0), (2, 3)),
    "rescaling": (lambda L: L.Rescaling(0.5, 1.0), (3,)),
    "resizing": (lambda L: L.Resizing(2, 3, "nearest", True), (4, 4, 1)),
    "center_crop": (lambda L: L.CenterCrop(2, 2), (4, 4, 1)),
    "category_encoding": (lambda L: L.CategoryEncoding(4, "count"), (3,)),
    "discretization": (lambda L: L.Discretization([0.0, 1.0], output_mode="one_hot"), (1,)),
}


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_preprocessing_config_matches_tf_keras(case):
    make, shape = CONFIGS[case]
    compare_config(make, shape)


def test_hashing_config_matches_tf_keras():
    from flowmesh.testing.keras_oracle import _plain

    _, tf_keras = require_tf_keras()
    configs = [_plain(layers.Hashing(3, mask_value=-1, salt=[1, 2], name="h").get_config())
               for layers in (tf_keras.layers, tf.keras.layers)]
    assert configs[1] == configs[0]
