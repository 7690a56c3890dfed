"""A TensorFlow checkpoint of RNN variables restores into flowmesh by name, and back."""

from __future__ import annotations

import numpy as np

import flowmesh as tf
from flowmesh.testing.tf_oracle import session_config
from tests.rnn.oracle import require_rnn_oracle


def _graph(lib):
    x = lib.placeholder(lib.float32, [2, 4, 3])
    cell = lib.nn.rnn_cell.MultiRNNCell([lib.nn.rnn_cell.LSTMCell(5),
                                         lib.nn.rnn_cell.GRUCell(3)])
    out, _ = lib.nn.dynamic_rnn(cell, x, sequence_length=[4, 2], dtype=lib.float32)
    (fw, bw), _ = lib.nn.bidirectional_dynamic_rnn(
        lib.nn.rnn_cell.BasicLSTMCell(2), lib.nn.rnn_cell.BasicRNNCell(2), out, dtype=lib.float32)
    return x, lib.concat([fw, bw], 2)


def test_tensorflow_checkpoint_round_trip(tmp_path):
    tf1 = require_rnn_oracle()
    value = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    with tf1.Graph().as_default() as graph:
        x, y = _graph(tf1)
        with tf1.Session(graph=graph, config=session_config(tf1)) as sess:
            sess.run(tf1.global_variables_initializer())
            expected = sess.run(y, {x: value})
            path = tf1.train.Saver().save(sess, str(tmp_path / "tf" / "model.ckpt"))
            names = sorted(v.op.name for v in tf1.global_variables())
    with tf.Graph().as_default():
        x, y = _graph(tf)
        assert sorted(v.op.name for v in tf.global_variables()) == names
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_allclose(sess.run(y, {x: value}), expected, rtol=1e-5, atol=1e-6)
            back = tf.train.Saver(write_version=tf.train.SaverDef.V2).save(
                sess, str(tmp_path / "fm" / "model.ckpt"))
    with tf1.Graph().as_default() as graph:
        x, y = _graph(tf1)
        with tf1.Session(graph=graph, config=session_config(tf1)) as sess:
            tf1.train.Saver().restore(sess, back)
            np.testing.assert_allclose(sess.run(y, {x: value}), expected, rtol=1e-5, atol=1e-6)
