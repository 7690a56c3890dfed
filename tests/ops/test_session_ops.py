"""Session tensor handles: keep a value between runs, read it back, delete it (the flow of
TensorFlow's documented example, run by flowmesh and TensorFlow)."""

from __future__ import annotations

import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow


def _flow(lib, config=None):
    with lib.Graph().as_default() as g, lib.Session(graph=g, config=config) as sess:
        x = lib.placeholder(lib.float32, [2])
        handle = sess.run(lib.get_session_handle(x * 2.0), {x: [1.0, 3.0]})
        holder, kept = lib.get_session_tensor(handle.handle, lib.float32)
        first = sess.run(kept * 10.0, {holder: handle.handle})
        kept_value = handle.eval().tolist()
        dholder, delete = lib.delete_session_tensor(handle.handle)
        sess.run(delete, {dholder: handle.handle})
        with pytest.raises(lib.errors.InvalidArgumentError, match="not in the session store"):
            sess.run(kept, {holder: handle.handle})
        return first.tolist(), kept_value, handle.handle.count(";")


def test_session_handles_keep_values_between_runs_as_tensorflow():
    tf1 = require_tensorflow()
    assert _flow(tf) == _flow(tf1) == ([20.0, 60.0], [2.0, 6.0], 2)


def test_a_kept_value_is_read_by_several_runs_until_deleted():
    with tf.Graph().as_default(), tf.Session() as sess:
        handle = sess.run(tf.get_session_handle(tf.constant([1.0, 2.0])))
        holder, kept = tf.get_session_tensor(handle.handle, tf.float32)
        assert sess.run(kept * 2.0, {holder: handle.handle}).tolist() == [2.0, 4.0]
        assert sess.run(kept + 1.0, {holder: handle.handle}).tolist() == [2.0, 3.0]
        with pytest.raises(ValueError, match="not a session tensor handle"):
            tf.get_session_tensor("nonsense", tf.float32)
