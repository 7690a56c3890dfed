"""tf.experimental.RowPartition against TensorFlow: every factory, every encoding."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

FACTORIES = {
    "row_splits": lambda rp: rp.from_row_splits([0, 2, 2, 5]),
    "row_lengths": lambda rp: rp.from_row_lengths([2, 0, 3]),
    "value_rowids": lambda rp: rp.from_value_rowids([0, 0, 2, 2, 2], nrows=4),
    "row_starts": lambda rp: rp.from_row_starts([0, 2, 2], nvals=5),
    "row_limits": lambda rp: rp.from_row_limits([2, 2, 5]),
    "uniform": lambda rp: rp.from_uniform_row_length(3, nvals=9),
    "int32": lambda rp: rp.from_row_lengths([1, 2], dtype="int32"),
}


def _encodings(tf, build):
    with tf.Graph().as_default() as graph:
        rp = build(tf.experimental.RowPartition)
        fetches = [rp.row_splits(), rp.row_lengths(), rp.value_rowids(), rp.row_starts(), rp.row_limits(),
                   rp.nrows(), rp.nvals()]
        statics = (rp.static_nrows, rp.dtype.name, rp.is_uniform())
        with tf.Session(graph=graph, config=None if tf is flowmesh else session_config(tf)) as sess:
            return sess.run(fetches), statics


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_row_partition_matches_tensorflow(name):
    tf1 = require_tensorflow()
    (ours, our_static), (theirs, their_static) = _encodings(flowmesh, FACTORIES[name]), _encodings(
        tf1, FACTORIES[name])
    assert our_static == their_static
    for a, b in zip(ours, theirs):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


def test_row_partition_rejects_bad_input():
    with flowmesh.Graph().as_default():
        with pytest.raises(ValueError, match="factory"):
            flowmesh.experimental.RowPartition(flowmesh.constant([0, 1], flowmesh.int64))
        with pytest.raises(flowmesh.errors.InvalidArgumentError), flowmesh.Session() as sess:
            sess.run(flowmesh.experimental.RowPartition.from_row_splits([1, 2]).row_splits())
        with pytest.raises(ValueError, match="nvals or nrows"):
            flowmesh.experimental.RowPartition.from_uniform_row_length(2)
