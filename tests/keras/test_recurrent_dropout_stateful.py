"""``dropout``/``recurrent_dropout`` of the Keras recurrent layers (masks drawn once per
call and shared by every time step, ones outside training, never the fused kernel with
recurrent dropout) and ``stateful=True`` layers against tf-keras (states carried across
batches, ``reset_states()``)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras


def _ops(graph) -> set[str]:
    return {op.type for op in graph.get_operations()}


def _linear_rnn(recurrent: bool, **kwargs):
    """SimpleRNN with kernel I, recurrent kernel I (or 0), no bias, linear: the outputs show
    the masks themselves."""
    layer = K.layers.SimpleRNN(4, activation="linear", use_bias=False, return_sequences=True,
                               **kwargs)
    x = tf.ones([64, 5, 4])
    y = layer(x, training=True)
    layer.set_weights([np.eye(4, dtype=np.float32),
                       np.eye(4, dtype=np.float32) * float(recurrent)])
    return K.backend.get_session().run(y)


def test_input_dropout_mask_is_shared_by_all_time_steps():
    with tf.Graph().as_default():
        out = _linear_rnn(False, dropout=0.5)
    np.testing.assert_array_equal(out, np.repeat(out[:, :1], 5, axis=1))
    assert set(np.unique(out)) == {0.0, 2.0}
    assert 0.3 < (out == 0).mean() < 0.7


def test_recurrent_dropout_masks_the_previous_output_at_every_step():
    with tf.Graph().as_default():
        out = _linear_rnn(True, recurrent_dropout=0.5)
    kept = np.array([1.0, 3.0, 7.0, 15.0, 31.0])        # h_t = 1 + 2 h_{t-1}
    dropped = np.ones(5)                                 # h_t = 1 + 0 h_{t-1}
    per_unit = out.transpose(0, 2, 1).reshape(-1, 5)
    is_kept = np.all(per_unit == kept, axis=1)
    assert np.all(is_kept | np.all(per_unit == dropped, axis=1))
    assert 0.3 < is_kept.mean() < 0.7


@pytest.mark.parametrize("make", [
    lambda d: K.layers.LSTM(3, dropout=d, recurrent_dropout=d, return_sequences=True),
    lambda d: K.layers.GRU(3, dropout=d, recurrent_dropout=d, reset_after=True),
    lambda d: K.layers.SimpleRNN(3, dropout=d, recurrent_dropout=d),
    lambda d: K.layers.Bidirectional(K.layers.LSTM(2, dropout=d, recurrent_dropout=d)),
])
def test_dropout_is_the_identity_outside_training(make):
    x = np.random.default_rng(0).standard_normal((3, 5, 4)).astype(np.float32)
    outputs = []
    for rate in (0.4, 0.0):
        with tf.Graph().as_default():
            layer = make(rate)
            inputs = K.Input((5, 4))
            model = K.Model(inputs, layer(inputs))
            trained = layer(tf.constant(x), training=True)
            if rate:
                weights = model.get_weights()
            model.set_weights(weights)
            outputs.append((model.predict(x), K.backend.get_session().run(trained)))
    (inference, training_out), (reference, _) = outputs
    np.testing.assert_allclose(inference, reference, rtol=1e-6, atol=1e-6)
    assert not np.allclose(training_out, inference)


def test_fused_kernel_only_without_recurrent_dropout():
    x = tf.zeros([2, 4, 3])
    cases = [({"recurrent_dropout": 0.2}, False), ({"dropout": 0.2}, False),
             ({"dropout": 0.2, "implementation": 2}, True), ({}, True)]
    for kwargs, fused in cases:
        with tf.Graph().as_default() as graph:
            K.layers.LSTM(3, recurrent_activation="sigmoid", **kwargs)(tf.zeros([2, 4, 3]))
            assert ("FusedLSTM" in _ops(graph)) is fused, kwargs
        with tf.Graph().as_default() as graph:
            K.layers.GRU(3, recurrent_activation="sigmoid", reset_after=True, **kwargs)(
                tf.zeros([2, 4, 3]))
            assert ("FusedGRU" in _ops(graph)) is fused, kwargs
    del x


def test_fit_with_recurrent_dropout_learns():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 6, 2)).astype(np.float32)
    y = (x[:, :, 0].sum(axis=1) > 0).astype(np.float32)[:, None]
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.LSTM(8, dropout=0.1, recurrent_dropout=0.1,
                                            input_shape=(6, 2)),
                              K.layers.Dense(1, activation="sigmoid")])
        model.compile(K.optimizers.Adam(0.05), "binary_crossentropy")
        losses = model.fit(x, y, epochs=15, batch_size=16, verbose=0).history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < 0.8 * losses[0]


# --- stateful ---------------------------------------------------------------------------------
def _stateful_model(lib, kind):
    k = lib.keras.layers
    layers = {"lstm": lambda: k.LSTM(3, stateful=True, return_sequences=True),
              "gru": lambda: k.GRU(3, stateful=True),
              "bidirectional": lambda: k.Bidirectional(k.SimpleRNN(2, stateful=True))}
    model = lib.keras.Sequential([k.InputLayer(batch_input_shape=(2, 4, 3)), layers[kind]()])
    model.compile(lib.keras.optimizers.SGD(0.1), "mse")
    return model


def _stateful_run(lib, kind, weights):
    rng = np.random.default_rng(5)
    x1, x2 = (rng.standard_normal((2, 4, 3)).astype(np.float32) for _ in range(2))
    with lib.Graph().as_default():
        model = _stateful_model(lib, kind)
        if weights is None:
            weights = model.get_weights()
        model.set_weights(weights)
        first, second = model.predict(x1, batch_size=2), model.predict(x2, batch_size=2)
        model.reset_states()
        again = model.predict(x1, batch_size=2)
        target = np.zeros_like(first)
        losses = [model.train_on_batch(x, target) for x in (x1, x2, x1)]
    return weights, [first, second, again, np.array(losses)]


@pytest.mark.parametrize("kind", ["lstm", "gru", "bidirectional"])
def test_stateful_matches_tf_keras(kind):
    from tests.rnn.oracle import require_rnn_oracle

    tf1 = require_rnn_oracle()
    tf1.experimental.output_all_intermediates(True)  # tf-keras trains after running the loop
    weights, expected = _stateful_run(tf1, kind, None)
    _, got = _stateful_run(tf, kind, weights)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    assert not np.allclose(got[0], got[1])
    np.testing.assert_allclose(got[0], got[2], rtol=1e-6)


def test_stateful_gradient_sees_the_initial_states_not_the_assigned_ones():
    """The final states are assigned in the step that computes the gradient; the gradient
    must still use the states the step started from (a first step from zeros equals a
    non-stateful layer's)."""
    x = np.random.default_rng(5).standard_normal((2, 4, 3)).astype(np.float32)
    results = []
    for stateful in (True, False):
        with tf.Graph().as_default():
            layer = K.layers.GRU(3, stateful=stateful)
            y = layer(tf.constant(x))
            grads = tf.gradients(tf.reduce_sum(y * y), layer.trainable_weights)
            session = K.backend.get_session()
            for v in layer.trainable_weights:
                v.load(np.random.default_rng(1).uniform(-.5, .5, v.shape.as_list())
                       .astype(np.float32), session)
            results.append(session.run([y] + grads))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_stateful_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="needs to know its batch size"):
            K.layers.LSTM(2, stateful=True)(K.Input((4, 3)))
        with pytest.raises(AttributeError, match="must be stateful"):
            K.layers.LSTM(2).reset_states()
        layer = K.layers.GRU(2, stateful=True)
        layer(K.Input((4, 3), batch_size=2))
        with pytest.raises(ValueError, match="expects 1 states"):
            layer.reset_states([np.zeros((2, 2)), np.zeros((2, 2))])
        layer.reset_states([np.ones((2, 2), np.float32)])
        np.testing.assert_array_equal(K.backend.get_value(layer.states[0]), np.ones((2, 2)))
