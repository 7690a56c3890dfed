"""tf.data.experimental.dense_to_ragged_batch and RaggedTensorStructure, against TensorFlow."""

from __future__ import annotations

import numpy as np

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _parts(tf, value):
    if isinstance(value, tf.RaggedTensor):
        return value.flat_values, value.nested_row_splits
    if isinstance(value, tuple):
        return tuple(_parts(tf, v) for v in value)
    return value


def _batches(tf, make, count):
    with tf.Graph().as_default():
        ds = make(tf)
        nxt = _parts(tf, tf.data.make_one_shot_iterator(ds).get_next())
        config = session_config(tf) if tf is not fm else None
        with tf.Session(config=config) as sess:
            return ds.element_spec, [sess.run(nxt) for _ in range(count)]


def _describe(spec):
    if isinstance(spec, tuple):
        return tuple(_describe(s) for s in spec)
    return (type(spec).__name__, spec.shape.as_list(), spec.dtype.name, getattr(spec, "ragged_rank", None),
            getattr(getattr(spec, "row_splits_dtype", None), "name", None))


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        x, y = np.asarray(a), np.asarray(b)
        assert x.shape == y.shape and x.dtype == y.dtype, (x, y)
        np.testing.assert_array_equal(x, y)


def _vectors(tf):
    return tf.data.Dataset.range(5).map(lambda x: tf.range(x))


def _matrices_with_labels(tf):
    def element(x):
        width = 1 + x % 2
        rows = tf.reshape(tf.cast(tf.range(x * width), tf.float32), tf.stack([x, width]))
        return rows, x, tf.fill(tf.reshape(x + 1, [1]), "w")
    return tf.data.Dataset.range(1, 6).map(element)


CASES = [
    (lambda tf: _vectors(tf).apply(tf.data.experimental.dense_to_ragged_batch(2)), 3),
    (lambda tf: _vectors(tf).apply(tf.data.experimental.dense_to_ragged_batch(
        2, drop_remainder=True, row_splits_dtype=tf.int32)), 2),
    (lambda tf: _matrices_with_labels(tf).apply(tf.data.experimental.dense_to_ragged_batch(3)), 2),
]


def test_dense_to_ragged_batch_matches_tensorflow():
    tf1 = require_tensorflow()
    for make, count in CASES:
        spec, ours = _batches(fm, make, count)
        tf_spec, theirs = _batches(tf1, make, count)
        _same(ours, theirs)
        assert _describe(spec) == _describe(tf_spec)


def test_dense_to_ragged_batch_fetches_ragged_tensor_values():
    with fm.Graph().as_default():
        ds = _vectors(fm).apply(fm.data.experimental.dense_to_ragged_batch(2))
        assert ds.element_spec == fm.RaggedTensorSpec([None, None], fm.int64, 1, fm.int64)
        nxt = fm.data.make_one_shot_iterator(ds).get_next()
        assert isinstance(nxt, fm.RaggedTensor)
        with fm.Session() as sess:
            got = [sess.run(nxt) for _ in range(3)]
    assert all(isinstance(v, fm.ragged.RaggedTensorValue) for v in got)
    assert [v.to_list() for v in got] == [[[], [0]], [[0, 1], [0, 1, 2]], [[0, 1, 2, 3]]]


def test_ragged_tensor_structure_is_a_ragged_tensor_spec():
    spec = fm.data.experimental.RaggedTensorStructure(fm.int32, [None, None], 1)
    assert spec == fm.RaggedTensorSpec([None, None], fm.int32, 1, fm.int64)
    tf1 = require_tensorflow()
    theirs = tf1.data.experimental.RaggedTensorStructure(tf1.int32, [None, None], 1)
    assert (theirs.shape.as_list(), theirs.ragged_rank, theirs.row_splits_dtype.name) == \
        (spec.shape.as_list(), spec.ragged_rank, spec.row_splits_dtype.name)


def test_unbatch_of_ragged_batches_matches_tensorflow():
    tf1 = require_tensorflow()

    def make(tf):
        batched = _matrices_with_labels(tf).apply(tf.data.experimental.dense_to_ragged_batch(2))
        return batched.unbatch()

    spec, ours = _batches(fm, make, 5)
    tf_spec, theirs = _batches(tf1, make, 5)
    _same(ours, theirs)
    assert _describe(spec) == _describe(tf_spec)
