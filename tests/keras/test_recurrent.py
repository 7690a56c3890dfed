"""Keras LSTM / GRU / SimpleRNN / Bidirectional against tf-keras (tf.compat.v1.keras in graph
mode): same weights give the same variable names, outputs, final states and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from tests.rnn.oracle import compare_with_tensorflow

X = np.random.default_rng(0).standard_normal((3, 5, 4)).astype(np.float32)

LAYERS = {
    "lstm_sequences_state": lambda k: k.LSTM(6, return_sequences=True, return_state=True),
    "lstm_sigmoid_backwards": lambda k: k.LSTM(5, recurrent_activation="sigmoid",
                                               go_backwards=True, return_state=True),
    "lstm_no_forget_bias": lambda k: k.LSTM(3, unit_forget_bias=False, use_bias=False),
    "gru": lambda k: k.GRU(4, return_sequences=True, return_state=True),
    "gru_reset_after": lambda k: k.GRU(4, reset_after=True, recurrent_activation="sigmoid",
                                       go_backwards=True, return_sequences=True),
    "simple_rnn": lambda k: k.SimpleRNN(3, activation="relu", go_backwards=True,
                                        return_sequences=True, return_state=True),
    "bidirectional_lstm": lambda k: k.Bidirectional(k.LSTM(3, return_sequences=True)),
    "bidirectional_gru_sum_state": lambda k: k.Bidirectional(
        k.GRU(3, return_state=True), merge_mode="sum"),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_tf_keras(name):
    def build(lib, x):
        return LAYERS[name](lib.keras.layers)(x)

    compare_with_tensorflow(build, {"x": X})


def test_stacked_lstm_and_gru_fused_equal_loop(monkeypatch):
    def run():
        tf.reset_default_graph()
        x = tf.constant(X)
        h = tf.keras.layers.LSTM(6, recurrent_activation="sigmoid", return_sequences=True)(x)
        h = tf.keras.layers.GRU(5, recurrent_activation="sigmoid", reset_after=True,
                                return_sequences=True)(h)
        out = tf.keras.layers.LSTM(2, recurrent_activation="sigmoid")(h)
        grads = tf.gradients(tf.reduce_sum(out * [1.0, -2.0]), tf.trainable_variables())
        types = {op.type for op in tf.get_default_graph().get_operations()}
        rng = np.random.default_rng(4)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in tf.global_variables():
                v.load(rng.uniform(-0.5, 0.5, v.shape.as_list()).astype(np.float32), sess)
            return types, sess.run([out] + grads)

    types, fused = run()
    assert "FusedLSTM" in types and "FusedGRU" in types
    monkeypatch.setenv("FLOWMESH_FUSED_RNN", "0")
    types, loop = run()
    assert "FusedLSTM" not in types and "FusedGRU" not in types
    for a, b in zip(fused, loop):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="Invalid merge mode"):
        tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="recurrent layer"):
        tf.keras.layers.Bidirectional(tf.keras.layers.Dense(2))
    with pytest.raises(ValueError, match="expected ndim=3"):
        tf.keras.layers.LSTM(2)(tf.zeros([2, 3]))


def test_lstm_classifier_fit_follows_tf_keras_loss_curve():
    from flowmesh.datasets import load_digits
    from tests.rnn.oracle import require_rnn_oracle

    tf1 = require_rnn_oracle()
    # tf-keras builds the training gradient after the session ran the forward While loop.
    tf1.experimental.output_all_intermediates(True)
    (x, y), _ = load_digits()
    x, y = x[:192].reshape(-1, 8, 8), y[:192]

    def model(lib):
        m = lib.keras.Sequential([lib.keras.layers.LSTM(8, input_shape=(8, 8)),
                                  lib.keras.layers.Dense(10, activation="softmax")])
        m.compile(optimizer=lib.keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
        return m

    with tf1.Graph().as_default():
        reference = model(tf1)
        weights = reference.get_weights()
        expected = reference.fit(x, y, epochs=3, batch_size=32, shuffle=False,
                                 verbose=0).history["loss"]
    with tf.Graph().as_default():
        ours = model(tf)
        ours.set_weights(weights)
        got = ours.fit(x, y, epochs=3, batch_size=32, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert got[-1] < got[0]
