"""tf.random.experimental: index_shuffle (TensorFlow's values exactly), stateless_shuffle
(a seeded permutation), and the names shared with tf.random."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _run(tf, build):
    with tf.Graph().as_default():
        fetches = build(tf)
        with tf.Session(config=None if tf is fm else session_config(tf)) as sess:
            return sess.run(fetches)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint64"])
def test_index_shuffle_matches_tensorflow(dtype):
    def build(tf):
        index = tf.constant(np.arange(20), getattr(tf, dtype))
        return tf.random.experimental.index_shuffle(index, seed=tf.constant([7, 11], tf.int64),
                                                    max_index=tf.constant(19, getattr(tf, dtype)))

    ours, theirs = _run(fm, build), _run(require_tensorflow(), build)
    np.testing.assert_array_equal(ours, theirs)
    assert sorted(ours.tolist()) == list(range(20))


def test_stateless_shuffle_is_a_seeded_permutation():
    def build(tf, seed):
        value = tf.reshape(tf.range(30), [10, 3])
        return tf.random.experimental.stateless_shuffle(value, seed=tf.constant(seed, tf.int64))

    ours = _run(fm, lambda tf: build(tf, [1, 2]))
    theirs = _run(require_tensorflow(), lambda tf: build(tf, [1, 2]))
    assert ours.shape == theirs.shape == (10, 3) and ours.dtype == theirs.dtype
    assert sorted(map(tuple, ours.tolist())) == sorted(map(tuple, theirs.tolist()))
    np.testing.assert_array_equal(ours, _run(fm, lambda tf: build(tf, [1, 2])))
    assert not np.array_equal(ours, _run(fm, lambda tf: build(tf, [3, 4])))
    with fm.Graph().as_default(), pytest.raises(ValueError, match="rank >= 1"):
        fm.random.experimental.stateless_shuffle(fm.constant(3), seed=[1, 2])


def test_shared_names():
    x = fm.random.experimental
    assert x.stateless_fold_in is fm.random.fold_in and x.stateless_split is fm.random.split
    assert x.Generator is fm.random.Generator and x.Algorithm.PHILOX.value == 1
    np.testing.assert_array_equal(x.create_rng_state(5, "philox"), [5, 0, 0])
    with fm.Graph().as_default():
        generator = x.get_global_generator()
        x.set_global_generator(generator)
        assert x.get_global_generator() is generator
        seeds = x.stateless_split(fm.constant([1, 2], fm.int64), num=3)
        folded = x.stateless_fold_in(fm.constant([1, 2], fm.int64), 5)
        with fm.Session() as sess:
            s, f = sess.run([seeds, folded])
    assert s.shape == (3, 2) and f.shape == (2,) and f[1] == 5
