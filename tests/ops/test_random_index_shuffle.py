"""tf.random_index_shuffle: the same values as TensorFlow 2.21 (its Simon-cipher cycle walk),
for every block size, dtypes, batched seeds and indices, and rounds; a bijection per seed."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.default_rng(11)
MAX_INDICES = [1, 2, 9, 1000, 65535, 65536, 70000, 2**20 + 3, 2**31 - 1, 2**40 + 17, 2**62 + 5]


def _cases(t):
    out = []
    for max_index in MAX_INDICES:
        index = RNG.integers(0, max_index + 1, size=6, dtype=np.int64)
        seed = RNG.integers(-2**40, 2**40, size=3, dtype=np.int64)
        out.append(t.random_index_shuffle(t.constant(index), t.constant(seed), max_index))
    seeds = RNG.integers(0, 2**31, size=(5, 3), dtype=np.int32)
    out.append(t.random_index_shuffle(t.constant(np.arange(5, dtype=np.int32)),
                                      t.constant(seeds), t.constant(np.int32(40)), rounds=8))
    out.append(t.random_index_shuffle(t.constant(7, t.int64), t.constant([1, 2, 3], t.int64),
                                      t.constant(np.array([9, 99, 999, 9999], np.int64)),
                                      rounds=6))
    out.append(t.random_index_shuffle(t.constant(3, t.int32), t.constant([4, 5, 6]), 12))
    return out


def test_values_match_tensorflow():
    tf1 = require_tensorflow()
    with tf.Graph().as_default(), tf.Session() as sess:
        ours = sess.run(_cases(tf))
    global RNG
    RNG = np.random.default_rng(11)
    with tf1.Graph().as_default() as g, tf1.Session(graph=g, config=session_config(tf1)) as sess:
        theirs = sess.run(_cases(tf1))
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("max_index", [0, 5, 300])
def test_is_a_permutation(max_index):
    with tf.Graph().as_default(), tf.Session() as sess:
        out = sess.run(tf.random_index_shuffle(tf.range(max_index + 1, dtype=tf.int64),
                                               [7, 8, 9], max_index))
    assert sorted(out.tolist()) == list(range(max_index + 1))


def test_bad_arguments():
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(ValueError, match="rounds must be an even number"):
            tf.random_index_shuffle(1, [1, 2, 3], 10, rounds=5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Seed must be a vector of size"):
            sess.run(tf.random_index_shuffle(tf.constant([1, 2], tf.int64),
                                             tf.placeholder_with_default([1, 2], None), 10))
