"""tf.lookup.experimental.MutableHashTable and DenseHashTable against TensorFlow: insert,
lookup (scalar and tensor values), remove, export, size, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _steps(tf, build):
    """Runs the list of fetches ``build(tf)`` returns one after the other; their results."""
    with tf.Graph().as_default():
        steps = build(tf)
        with tf.Session(config=None if tf is fm else session_config(tf)) as sess:
            return [sess.run(step) for step in steps]


def _both(build):
    return _steps(fm, build), _steps(require_tensorflow(), build)


def _sorted_export(keys, values):
    order = np.argsort(keys)
    return keys[order], values[order]


def test_mutable_hash_table_scalar_values():
    def build(tf):
        table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
        words = tf.constant([b"a", b"b", b"zz"])
        return [table.size(), table.insert(["a", "b", "c"], tf.constant([1, 2, 3], tf.int64)), table.lookup(words),
                table.remove(tf.constant(["b", "nope"])), table.lookup(words), table.size(), table.export(),
                table.lookup(words, dynamic_default_values=tf.constant(-5, tf.int64))]

    ours, theirs = _both(build)
    assert ours[0] == theirs[0] == 0 and ours[5] == theirs[5] == 2
    for i in (2, 4, 7):
        np.testing.assert_array_equal(ours[i], theirs[i])
    for a, b in zip(_sorted_export(*ours[6]), _sorted_export(*theirs[6]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_mutable_hash_table_tensor_values():
    def build(tf):
        table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=[0.0, -1.0])
        keys = tf.constant([[3, 4], [9, 3]], tf.int64)
        return [table.insert(tf.constant([3, 4], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]])), table.lookup(keys),
                table.export()]

    ours, theirs = _both(build)
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[1].shape == (2, 2, 2)
    for a, b in zip(_sorted_export(*ours[2]), _sorted_export(*theirs[2]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_mutable_hash_table_errors():
    with fm.Graph().as_default():
        table = fm.lookup.experimental.MutableHashTable(fm.int64, fm.float32, default_value=[0.0, 0.0])
        with pytest.raises(TypeError, match="int64"):
            table.lookup(fm.constant(["a"]))
        bad = table.insert(fm.constant([1, 2], fm.int64), fm.constant([1.0, 2.0]))
        with fm.Session() as sess, pytest.raises(fm.errors.InvalidArgumentError, match="expected 2 values of shape"):
            sess.run(bad)


def test_dense_hash_table():
    def build(tf):
        table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0,
                                                      deleted_key=-1, initial_num_buckets=8)
        keys = tf.constant([11, 12, 13], tf.int64)
        return [table.insert(keys, keys * 10), table.lookup(tf.constant([12, 5], tf.int64)),
                table.remove(tf.constant([11], tf.int64)), table.size(), table.lookup(keys)]

    ours, theirs = _both(build)
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[3] == theirs[3] == 2
    np.testing.assert_array_equal(ours[4], theirs[4])
    for tf in (fm, require_tensorflow()):
        with tf.Graph().as_default():
            table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0,
                                                          deleted_key=-1)
            insert_empty = table.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64))
            with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="empty_key"):
                sess.run(insert_empty)


def test_dense_hash_table_export_holds_every_bucket():
    with fm.Graph().as_default():
        table = fm.lookup.experimental.DenseHashTable(fm.int64, fm.int64, default_value=-1, empty_key=0,
                                                      deleted_key=-1, initial_num_buckets=4)
        insert = table.insert(fm.constant([5, 6, 7, 8], fm.int64), fm.constant([1, 2, 3, 4], fm.int64))
        keys, values = table.export()
        with fm.Session() as sess:
            sess.run(insert)
            k, v = sess.run([keys, values])
    assert len(k) == 8 and sorted(k[k != 0].tolist()) == [5, 6, 7, 8] and sorted(v[k != 0].tolist()) == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="power of 2"):
        fm.lookup.experimental.DenseHashTable(fm.int64, fm.int64, -1, 0, -1, initial_num_buckets=6)
