"""tf.nn.rnn_cell cells + static/dynamic/bidirectional rnn against TensorFlow: same initial
weights give the same variable names, outputs, final states and gradients."""

from __future__ import annotations

import numpy as np
import pytest

from tests.rnn.oracle import compare_with_tensorflow

B, T, D = 3, 5, 4
LENGTHS = np.array([5, 2, 0], dtype=np.int32)


def _inputs(time_major: bool = False) -> np.ndarray:
    x = np.random.default_rng(0).standard_normal((B, T, D)).astype(np.float32)
    return x.transpose(1, 0, 2).copy() if time_major else x


CELLS = {
    "basic_rnn": lambda tf: tf.nn.rnn_cell.BasicRNNCell(6),
    "basic_lstm": lambda tf: tf.nn.rnn_cell.BasicLSTMCell(5, forget_bias=0.5),
    "basic_lstm_concat": lambda tf: tf.nn.rnn_cell.BasicLSTMCell(5, state_is_tuple=False),
    "lstm": lambda tf: tf.nn.rnn_cell.LSTMCell(5),
    "lstm_full": lambda tf: tf.nn.rnn_cell.LSTMCell(
        5, use_peepholes=True, cell_clip=0.3, num_proj=3, proj_clip=0.2, forget_bias=0.7),
    "gru": lambda tf: tf.nn.rnn_cell.GRUCell(4),
    "multi": lambda tf: tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.GRUCell(3)]),
    "multi_lstm": lambda tf: tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.BasicLSTMCell(3)]),
    "multi_concat": lambda tf: tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.BasicRNNCell(4), tf.nn.rnn_cell.GRUCell(3)], state_is_tuple=False),
    "wrappers": lambda tf: tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.ResidualWrapper(
        tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(D))), "/cpu:0"),
}


@pytest.mark.parametrize("cell", sorted(CELLS))
@pytest.mark.parametrize("time_major,lengths", [(False, False), (True, True)])
def test_dynamic_rnn(cell, time_major, lengths):
    def build(tf, x, seq=None):
        return tf.nn.dynamic_rnn(CELLS[cell](tf), x, sequence_length=seq, dtype=tf.float32,
                                 time_major=time_major)

    feeds = {"x": _inputs(time_major)}
    if lengths:
        feeds["seq"] = LENGTHS
    compare_with_tensorflow(build, feeds)


@pytest.mark.parametrize("cell", ["basic_rnn", "lstm_full", "multi", "basic_lstm_concat"])
@pytest.mark.parametrize("lengths", [False, True])
def test_static_rnn(cell, lengths):
    def build(tf, x, seq=None):
        return tf.nn.static_rnn(CELLS[cell](tf), tf.unstack(x, axis=1), sequence_length=seq,
                                dtype=tf.float32)

    feeds = {"x": _inputs()}
    if lengths:
        feeds["seq"] = LENGTHS
    compare_with_tensorflow(build, feeds)


@pytest.mark.parametrize("time_major", [False, True])
def test_bidirectional_dynamic_rnn(time_major):
    def build(tf, x, seq):
        return tf.nn.bidirectional_dynamic_rnn(
            tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.GRUCell(3), x, sequence_length=seq,
            dtype=tf.float32, time_major=time_major)

    compare_with_tensorflow(build, {"x": _inputs(time_major), "seq": LENGTHS})


def test_bidirectional_dynamic_rnn_full_length_with_scope():
    def build(tf, x):
        return tf.nn.bidirectional_dynamic_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.BasicLSTMCell(4), x,
            dtype=tf.float32, scope="birnn")

    got = compare_with_tensorflow(build, {"x": _inputs()})
    assert "birnn/fw/basic_lstm_cell/kernel:0" in got["names"]


def test_static_bidirectional_rnn():
    def build(tf, x, seq):
        return tf.nn.static_bidirectional_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.BasicRNNCell(3),
            tf.unstack(x, axis=1), sequence_length=seq, dtype=tf.float32)

    compare_with_tensorflow(build, {"x": _inputs(), "seq": LENGTHS})


def test_initial_state_and_two_cells_in_one_graph():
    def build(tf, x, c0, h0):
        first = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(5), x,
                                  initial_state=tf.nn.rnn_cell.LSTMStateTuple(c0, h0))
        with tf.variable_scope("second"):
            second = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(5), first[0], dtype=tf.float32)
        third = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(2), tf.unstack(x, axis=1),
                                 dtype=tf.float32, scope="static")
        return first, second, third

    rng = np.random.default_rng(3)
    got = compare_with_tensorflow(build, {
        "x": _inputs(), "c0": rng.standard_normal((B, 5)).astype(np.float32),
        "h0": rng.standard_normal((B, 5)).astype(np.float32)})
    assert got["names"] == sorted([
        "rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0",
        "second/rnn/gru_cell/gates/kernel:0", "second/rnn/gru_cell/gates/bias:0",
        "second/rnn/gru_cell/candidate/kernel:0", "second/rnn/gru_cell/candidate/bias:0",
        "static/basic_lstm_cell/kernel:0", "static/basic_lstm_cell/bias:0"])
