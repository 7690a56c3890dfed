"""Keras masks against tf-keras (tf.compat.v1.keras in graph mode): ``Masking`` and
``Embedding(mask_zero=True)`` masks carried through ``Dense``/``TimeDistributed``/merge
layers into LSTM/GRU/SimpleRNN/Bidirectional, which skip masked steps exactly as tf-keras
does (same weights -> same outputs, states and gradients), and masked losses/metrics in
``compile``/``fit``."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.keras.engine import keras_mask
from tests.rnn.oracle import compare_with_tensorflow


def _padded() -> np.ndarray:
    x = np.random.default_rng(1).standard_normal((4, 6, 3)).astype(np.float32)
    x[0, 4:] = 0.0          # padded at the end
    x[1, :2] = 0.0          # padded at the start (the previous output is still zeros)
    x[2, 2] = 0.0           # one masked step in the middle
    x[3, 1:] = 0.0          # a single valid step
    return x


X = _padded()
IDS = np.array([[4, 2, 7, 0, 0, 0], [0, 0, 3, 1, 5, 2], [6, 6, 0, 1, 0, 3],
                [1, 0, 0, 0, 0, 0]], np.int32)

LAYERS = {
    "lstm": lambda k: [k.LSTM(4, return_sequences=True, return_state=True),
                       k.LSTM(3, go_backwards=True, return_state=True),
                       k.LSTM(3, recurrent_activation="sigmoid", return_sequences=True)],
    "gru_simple_rnn": lambda k: [k.GRU(4, return_sequences=True, return_state=True),
                                 k.GRU(3, reset_after=True, go_backwards=True,
                                       recurrent_activation="sigmoid", return_sequences=True),
                                 k.SimpleRNN(3, return_state=True)],
    "bidirectional": lambda k: [k.Bidirectional(k.LSTM(3, return_sequences=True)),
                                k.Bidirectional(k.GRU(2), merge_mode="sum"),
                                k.Bidirectional(k.LSTM(2, return_sequences=True,
                                                       return_state=True), merge_mode=None)],
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_masked_recurrent_layers_match_tf_keras(name):
    """Masks at the end, at the start, in the middle; the sigmoid LSTM and reset_after GRU
    would be fused without a mask."""

    def build(lib, x):
        masked = lib.keras.layers.Masking()(x)
        return [layer(masked) for layer in LAYERS[name](lib.keras.layers)]

    compare_with_tensorflow(build, {"x": X})


def _right_padded() -> np.ndarray:
    x = np.random.default_rng(3).standard_normal((4, 6, 3)).astype(np.float32)
    for row, length in enumerate([6, 3, 0, 1]):
        x[row, length:] = 0.0
    return x


def test_right_padded_masks_take_the_fused_kernel_and_match_tf_keras():
    """Padding only at the end: sigmoid LSTMs and reset_after GRUs run the fused kernel on
    packed sequences (an empty row included); the backward half of the Bidirectional sees
    the padding first and takes the loop."""

    def build(lib, x):
        k = lib.keras.layers
        masked = k.Masking()(x)
        lstm = dict(recurrent_activation="sigmoid")
        gru = dict(recurrent_activation="sigmoid", reset_after=True)
        return [k.LSTM(3, return_sequences=True, return_state=True, **lstm)(masked),
                k.LSTM(2, **lstm)(masked),
                k.GRU(3, return_sequences=True, return_state=True, **gru)(masked),
                k.Bidirectional(k.LSTM(2, return_sequences=True, **lstm))(masked)]

    compare_with_tensorflow(build, {"x": _right_padded()})


def test_mask_through_dense_time_distributed_and_stacked_rnns():
    def build(lib, x):
        k = lib.keras.layers
        h = k.Dense(5, activation="tanh")(k.Masking()(x))
        h = k.TimeDistributed(k.Dense(4))(h)
        h = k.LSTM(4, return_sequences=True)(h)
        h = k.Concatenate()([k.GRU(2, return_sequences=True)(h), h])
        return k.SimpleRNN(3, go_backwards=True, return_sequences=True)(h)

    compare_with_tensorflow(build, {"x": X})


def test_embedding_mask_zero_matches_tf_keras():
    def build(lib, ids):
        k = lib.keras.layers
        h = k.Embedding(8, 3, mask_zero=True)(ids)
        seq = k.Bidirectional(k.LSTM(3, return_sequences=True))(h)
        pooled = k.GlobalAveragePooling1D()(seq)
        return [seq, pooled, k.GRU(2)(h)]

    compare_with_tensorflow(build, {"ids": IDS})


def test_masks_attached_like_tf_keras():
    k = tf.keras.layers
    x = tf.keras.Input((6, 3))
    masked = k.Masking()(x)
    seq = k.LSTM(2, return_sequences=True)(masked)
    last = k.LSTM(2)(masked)
    assert keras_mask.get_mask(seq) is not None and keras_mask.get_mask(last) is None
    assert keras_mask.get_mask(k.Flatten()(seq)) is None          # no masking support: dropped
    assert keras_mask.get_mask(k.GlobalAveragePooling1D()(seq)) is None
    assert keras_mask.get_mask(k.Lambda(lambda t: t * 2.0)(seq)) is None
    assert keras_mask.get_mask(k.Lambda(lambda t: t * 2.0, mask=lambda t, m: m)(seq)) is \
        keras_mask.get_mask(seq)
    out, h, c = k.LSTM(2, return_sequences=True, return_state=True)(masked)
    assert keras_mask.get_mask(out) is not None and keras_mask.get_mask(h) is None
    model = tf.keras.Model(x, k.Dense(1)(seq))
    got = model.predict(X)
    with tf.Session() as sess:  # the mask itself: any(x != 0) per step
        mask = sess.run(keras_mask.get_mask(model.outputs[0]), {x: X})
    np.testing.assert_array_equal(mask, np.any(X != 0, axis=-1))
    assert got.shape == (4, 6, 1)


def test_bad_mask_shape():
    layer = tf.keras.layers.LSTM(2)
    with pytest.raises(ValueError, match="mask must be"):
        layer(tf.constant(X), mask=tf.ones([4, 6, 1], dtype=tf.bool))


def _tagger(lib):
    k = lib.keras.layers
    model = lib.keras.Sequential([
        k.Embedding(8, 4, mask_zero=True, input_length=6),
        k.LSTM(5, return_sequences=True),
        k.TimeDistributed(k.Dense(3, activation="softmax"))])
    model.compile(optimizer=lib.keras.optimizers.SGD(0.5),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_masked_fit_follows_tf_keras():
    from tests.rnn.oracle import require_rnn_oracle

    tf1 = require_rnn_oracle()
    tf1.experimental.output_all_intermediates(True)
    y = (IDS % 3).astype(np.float32)[..., None]
    y[IDS == 0] = 2.0  # padded targets are ignored by the masked loss and accuracy
    sample_weight = np.array([1.0, 0.5, 2.0, 1.0], np.float32)
    with tf1.Graph().as_default():
        reference = _tagger(tf1)
        weights = reference.get_weights()
        expected = reference.fit(IDS, y, epochs=4, batch_size=4, shuffle=False, verbose=0,
                                 sample_weight=sample_weight).history
        expected_eval = reference.evaluate(IDS, y, verbose=0)
        # Two batches with different numbers of real steps: the epoch accuracy is the mean
        # over all real steps (tf-keras's stateful metric), the loss a per-sample mean.
        expected_two = reference.evaluate(IDS, y, batch_size=2, verbose=0)
    with tf.Graph().as_default():
        ours = _tagger(tf)
        ours.set_weights(weights)
        got = ours.fit(IDS, y, epochs=4, batch_size=4, shuffle=False, verbose=0,
                       sample_weight=sample_weight).history
        got_eval = ours.evaluate(IDS, y, verbose=0)
        got_two = ours.evaluate(IDS, y, batch_size=2, verbose=0)
    np.testing.assert_allclose(got["loss"], expected["loss"], rtol=1e-4)
    np.testing.assert_allclose(got["acc"], expected["accuracy"], atol=1e-6)
    np.testing.assert_allclose(got_eval, expected_eval, rtol=1e-4)
    np.testing.assert_allclose(got_two, expected_two, rtol=1e-4)
    assert got["loss"][-1] < got["loss"][0]
