"""Behaviour the oracle cannot pin down (random dropout) and bad-input errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_dropout_wrapper_output_and_state_masks():
    x = tf.constant(np.ones((200, 3, 4), np.float32))
    base = tf.nn.rnn_cell.BasicLSTMCell(8)
    cell = tf.nn.rnn_cell.DropoutWrapper(base, output_keep_prob=0.5, state_keep_prob=0.5, seed=3)
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    out, c, h = _run([out, state.c, state.h])
    zeros = np.mean(out == 0)
    assert 0.35 < zeros < 0.65, zeros
    assert np.mean(h == 0) > 0.35          # h is dropped (then scaled by 1/keep_prob)
    assert np.mean(c == 0) < 0.01          # c is never dropped by the default filter
    assert [v.name for v in tf.global_variables()] == [
        "rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0"]
    assert cell.trainable_weights == base.trainable_weights and len(base.trainable_weights) == 2


def test_dropout_wrapper_variational_mask_is_shared_across_time():
    x = tf.constant(np.ones((4, 6, 3), np.float32))
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(16), output_keep_prob=0.5,
                                         variational_recurrent=True, dtype=tf.float32, seed=1)
    out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    dropped = _run(out) == 0
    assert dropped.any()
    assert (dropped == dropped[:, :1, :]).all()


def test_keep_prob_out_of_range():
    with pytest.raises(ValueError, match="input_keep_prob must be between 0 and 1"):
        tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(2), input_keep_prob=1.5)


def test_bad_inputs_have_clear_errors():
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    with pytest.raises(ValueError, match="must give a dtype"):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [2, 3, 4]))
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [3]), dtype=tf.float32)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.placeholder(tf.int32, [2, 3, 4]),
                          initial_state=tf.zeros([2, 2], tf.int32))
    with pytest.raises(ValueError, match="known depth"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.placeholder(tf.float32, [2, 3, None]),
                          dtype=tf.float32)
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.placeholder(tf.float32, [2, 3, 4]),
                          sequence_length=[[1, 2]], dtype=tf.float32)
    with pytest.raises(TypeError, match="is not an RNNCell"):
        tf.nn.static_rnn(object(), [tf.zeros([2, 3])], dtype=tf.float32)
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.GRUCell(2)),
                          tf.zeros([2, 3, 4]), dtype=tf.float32)


class CustomCell(tf.nn.rnn_cell.RNNCell):
    """A user cell creating its variable in call() with tf.get_variable."""

    state_size = 3
    output_size = 3

    def call(self, inputs, state):
        w = tf.get_variable("w", [inputs.shape[-1] + 3, 3])
        return tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w)), state + 1.0


def test_custom_cell_with_get_variable_in_call():
    x = np.random.default_rng(0).standard_normal((2, 4, 5)).astype(np.float32)
    cell = CustomCell()
    dyn, dyn_state = tf.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32)
    stat, stat_state = tf.nn.static_rnn(cell, tf.unstack(tf.constant(x), axis=1), dtype=tf.float32)
    assert [v.name for v in tf.global_variables()] == ["rnn/custom_cell/w:0"]
    a, b, s1, s2 = _run([dyn, tf.stack(stat, 1), dyn_state, stat_state])
    np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(s1, np.full((2, 3), 4.0))
    np.testing.assert_allclose(s2, s1)
