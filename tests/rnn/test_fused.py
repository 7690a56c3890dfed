"""The fused LSTM path of dynamic_rnn: taken exactly when the math equals torch's LSTM,
equal to the While loop (values and gradients) and to TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from tests.rnn.oracle import compare_with_tensorflow


def _op_types():
    return {op.type for op in tf.get_default_graph().get_operations()}


def _build(cell_fn, dtype=np.float32, lengths=None, time_major=False, concat_state=False):
    x = tf.placeholder(dtype, [4, 6, 3] if not time_major else [6, 4, 3])
    cell = cell_fn()
    out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=dtype,
                                   time_major=time_major)
    if isinstance(state, tuple) and not hasattr(state, "c"):
        state = state[-1]
    c, h = (tf.split(state, 2, axis=1) if concat_state else state)
    rng = np.random.default_rng(5)
    loss = tf.reduce_sum(out * rng.standard_normal(out.shape.as_list()).astype(dtype)) + \
        tf.reduce_sum(c * 3.0) - tf.reduce_sum(h)
    grads = tf.gradients(loss, [x] + tf.trainable_variables())
    return x, [out, c, h] + grads


def _run(x, fetches, dtype):
    rng = np.random.default_rng(1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for v in tf.global_variables():
            v.load(rng.uniform(-0.5, 0.5, v.shape.as_list()).astype(dtype), sess)
        return sess.run(fetches, {x: rng.standard_normal(x.shape.as_list()).astype(dtype)})


CASES = [
    ("lstm", lambda: tf.nn.rnn_cell.LSTMCell(5, forget_bias=0.25), np.float32, None, False, False),
    ("basic_lstm_lengths", lambda: tf.nn.rnn_cell.BasicLSTMCell(5), np.float32, [6, 3, 0, 1],
     True, False),
    ("concat_state_f64", lambda: tf.nn.rnn_cell.BasicLSTMCell(5, state_is_tuple=False),
     np.float64, [2, 6, 9, 4], False, True),
    ("multi", lambda: tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.LSTMCell(5), tf.nn.rnn_cell.BasicLSTMCell(5, forget_bias=0.0)]),
     np.float32, [6, 3, 0, 1], False, False),
]


@pytest.mark.parametrize("name,cell_fn,dtype,lengths,time_major,concat", CASES,
                         ids=[c[0] for c in CASES])
def test_fused_equals_loop(monkeypatch, name, cell_fn, dtype, lengths, time_major, concat):
    results = {}
    for fused in ("1", "0"):
        monkeypatch.setenv("FLOWMESH_FUSED_RNN", fused)
        tf.reset_default_graph()
        x, fetches = _build(cell_fn, dtype, lengths, time_major, concat)
        assert ("FusedLSTM" in _op_types()) == (fused == "1")
        assert ("While" in _op_types()) == (fused == "0")
        results[fused] = _run(x, fetches, dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    for a, b in zip(results["1"], results["0"]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("cell_fn", [
    lambda: tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True),
    lambda: tf.nn.rnn_cell.LSTMCell(4, num_proj=2),
    lambda: tf.nn.rnn_cell.LSTMCell(4, cell_clip=1.0),
    lambda: tf.nn.rnn_cell.BasicLSTMCell(4, activation=tf.nn.relu),
    lambda: tf.nn.rnn_cell.GRUCell(4),
    lambda: tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.LSTMCell(4)),
    lambda: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.GRUCell(4)]),
    lambda: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2, state_is_tuple=False)],
                                        state_is_tuple=False),
])
def test_other_math_takes_the_loop(cell_fn):
    tf.nn.dynamic_rnn(cell_fn(), tf.zeros([2, 3, 4]), dtype=tf.float32)
    assert "FusedLSTM" not in _op_types() and "While" in _op_types()


@pytest.mark.parametrize("time_major,lengths", [(False, True), (True, False)])
def test_fused_matches_tensorflow(time_major, lengths):
    def build(lib, x, seq=None):
        cell = lib.nn.rnn_cell.LSTMCell(5, forget_bias=0.5)
        result = lib.nn.dynamic_rnn(cell, x, sequence_length=seq, dtype=lib.float32,
                                    time_major=time_major)
        if lib is tf:
            assert "FusedLSTM" in _op_types()
        return result

    x = np.random.default_rng(2).standard_normal((6, 3, 4) if time_major else (3, 6, 4))
    feeds = {"x": x.astype(np.float32)}
    if lengths:
        feeds["seq"] = np.array([6, 1, 0], np.int32)
    compare_with_tensorflow(build, feeds)


def test_fused_gradient_twice_and_inference_without_gradient():
    x = tf.constant(np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32))
    out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(3), x, dtype=tf.float32)
    g1 = tf.gradients(tf.reduce_sum(out), x)[0]
    g2 = tf.gradients(tf.reduce_sum(out * 2.0), x)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([g1, g2])
        np.testing.assert_allclose(b, 2 * a, rtol=1e-5)
        assert sess.run(out).shape == (2, 3, 3)
    with pytest.raises(LookupError, match="second-order"):
        tf.gradients(tf.reduce_sum(g1), x)
