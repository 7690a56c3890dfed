"""tf.experimental.DynamicRaggedShape against TensorFlow: built from lengths, row partitions
and (ragged or dense) tensors; static lengths, rank, uniformity and dimension sizes."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

BUILDS = {
    "lengths_ragged": lambda tf: tf.experimental.DynamicRaggedShape.from_lengths([2, (1, 2), 3]),
    "lengths_dense": lambda tf: tf.experimental.DynamicRaggedShape.from_lengths([2, 3, 4]),
    "lengths_uniform_then_ragged": lambda tf: tf.experimental.DynamicRaggedShape.from_lengths([2, 2, (1, 0, 2, 3)]),
    "ragged_tensor": lambda tf: tf.experimental.DynamicRaggedShape.from_tensor(
        tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)),
    "nested_ragged": lambda tf: tf.experimental.DynamicRaggedShape.from_tensor(
        tf.ragged.constant([[[1], [2, 3]], [], [[4]]])),
    "dense_tensor": lambda tf: tf.experimental.DynamicRaggedShape.from_tensor(tf.zeros([3, 5])),
    "row_partitions": lambda tf: tf.experimental.DynamicRaggedShape.from_row_partitions(
        [tf.experimental.RowPartition.from_row_lengths([1, 3])]),
}


def _describe(tf, build):
    with tf.Graph().as_default() as graph:
        shape = build(tf)
        statics = (shape.static_lengths(), shape.rank, shape.num_row_partitions, shape.dtype.name,
                   [shape.is_uniform(i) for i in range(shape.rank)])
        sizes = [tf.convert_to_tensor(shape[i]) for i in range(shape.rank) if shape.is_uniform(i)]
        with tf.Session(graph=graph, config=None if tf is flowmesh else session_config(tf)) as sess:
            fetched = sess.run([shape.inner_shape] + sizes)
        return statics, fetched


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_matches_tensorflow(name):
    tf1 = require_tensorflow()
    ours, theirs = _describe(flowmesh, BUILDS[name]), _describe(tf1, BUILDS[name])
    (our_lengths, *our_rest), (their_lengths, *their_rest) = ours[0], theirs[0]
    assert our_rest == their_rest and len(our_lengths) == len(their_lengths)
    for a, b in zip(our_lengths, their_lengths):  # flowmesh also knows ragged lengths of constant splits
        assert a == b or (b is None and isinstance(a, tuple)), (our_lengths, their_lengths)
    assert len(ours[1]) == len(theirs[1])
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_array_equal(a, b)


def test_bad_input():
    shape_cls = flowmesh.experimental.DynamicRaggedShape
    with pytest.raises(ValueError, match="lengths should be a list"):
        shape_cls.from_lengths((2, 3))
    with pytest.raises(ValueError, match="int or tuple of ints"):
        shape_cls.from_lengths([2, 1.5])
    with flowmesh.Graph().as_default():
        ragged = shape_cls.from_lengths([2, (1, 2)])
        with pytest.raises(ValueError, match="not uniform"):
            ragged[1]
        with pytest.raises(IndexError):
            ragged[5]
