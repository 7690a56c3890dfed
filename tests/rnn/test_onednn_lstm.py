"""The fused LSTM's direct oneDNN path (``kernels/cpu/onednn_lstm.py``) against torch's LSTM under
autograd (``FLOWMESH_ONEDNN_LSTM=0``): the same outputs, final states and gradients, for
TensorFlow's ``i, j, f, o`` layout (dynamic_rnn) and Keras's ``i, f, c, o`` layout."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.kernels.cpu import onednn_lstm


def _dynamic_rnn(x):
    c0, h0 = tf.tile(x[:, 0, :1], [1, 5]) * 0.5 + 0.1, tf.tile(x[:, 1, 1:2], [1, 5]) - 0.2
    out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(5, forget_bias=0.7), x, dtype=tf.float32,
                                   initial_state=tf.nn.rnn_cell.LSTMStateTuple(c0, h0))
    return [out, state.c, state.h]


def _keras(x):
    layer = tf.keras.layers.LSTM(5, recurrent_activation="sigmoid", return_sequences=True,
                                 return_state=True, unit_forget_bias=True)
    return list(layer(x))


def _run(build, monkeypatch, direct):
    monkeypatch.setenv("FLOWMESH_ONEDNN_LSTM", "1" if direct else "0")
    rng = np.random.default_rng(3)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 6, 3])
        outputs = build(x)
        assert "FusedLSTM" in {op.type for op in tf.get_default_graph().get_operations()}
        loss = tf.add_n([tf.reduce_sum(t * rng.standard_normal(t.shape.as_list()).astype(np.float32))
                         for t in outputs])
        variables = tf.trainable_variables()
        grads = tf.gradients(loss, [x] + variables)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v in variables:
                v.load(rng.uniform(-0.6, 0.6, v.shape.as_list()).astype(np.float32), sess)
            feed = {x: rng.standard_normal((4, 6, 3)).astype(np.float32)}
            inference = sess.run(outputs, feed)
            return inference, sess.run(outputs + grads, feed)


@pytest.mark.parametrize("build", [_dynamic_rnn, _keras], ids=["ijfo", "ifco"])
def test_direct_onednn_path_equals_autograd_path(build, monkeypatch):
    import torch

    if not onednn_lstm.usable(torch.zeros(1, 1, 1), torch.zeros(1, 1), None):
        pytest.skip("oneDNN is not available in this torch build")
    inference, direct = _run(build, monkeypatch, True)
    _, reference = _run(build, monkeypatch, False)
    for i, (a, b) in enumerate(zip(direct, reference)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=f"fetch {i}")
    for a, b in zip(inference, direct):  # inference (no reserve) == training forward
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
