"""tf.random.Generator, Algorithm, create_rng_state, the global generator, fold_in/split and
the stateless binomial / parameterized truncated normal: TensorFlow's states, shapes and
dtypes, determinism from seeds, and moments against TensorFlow's samplers (the values are
flowmesh's own streams, not TensorFlow's Philox numbers, as for every stateless op)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


@pytest.mark.parametrize("seed,alg", [(1234, "philox"), (2**70 + 5, "threefry"), (-1, 1), ([12, 34], "threefry"),
                                      (np.array([7]), tf.random.Algorithm.PHILOX), (5, "auto_select")])
def test_create_rng_state_is_tensorflows(seed, alg):
    tf1 = require_tensorflow()
    tf_alg = alg.value if isinstance(alg, tf.random.Algorithm) else alg
    with tf1.Graph().as_default() as g, tf1.Session(graph=g, config=session_config(tf1)) as sess:
        expected = sess.run(tf1.random.create_rng_state(seed, tf_alg))
    np.testing.assert_array_equal(tf.random.create_rng_state(seed, alg), expected)


def _draws(lib, config=None):
    with lib.Graph().as_default() as g:
        gen = lib.random.Generator.from_seed(99)
        samples = {"normal": gen.normal([4000], mean=1.0, stddev=2.0),
                   "uniform": gen.uniform([4000], minval=-1.0, maxval=3.0, dtype=lib.float64),
                   "uniform_int": gen.uniform([4000], minval=2, maxval=9, dtype=lib.int64),
                   "truncated": gen.truncated_normal([4000]),
                   "binomial": gen.binomial([4000], counts=12.0, probs=0.25),
                   "stateless_binomial": lib.random.stateless_binomial([2000, 2], [3, 4], counts=[5.0, 40.0],
                                                                       probs=0.6),
                   "truncated_param": lib.random.stateless_parameterized_truncated_normal(
                       [4000], [5, 6], means=1.0, stddevs=2.0, minvals=0.0, maxvals=3.0),
                   "split": lib.random.split(lib.constant([1, 2], lib.int64), 3),
                   "fold_in": lib.random.fold_in(lib.constant([1, 2], lib.int64), 7),
                   "full_int": lib.random.stateless_uniform([2000], [1, 2], minval=None, maxval=None, dtype=lib.int32,
                                                            alg="philox")}
        with lib.Session(graph=g, config=config) as sess:
            sess.run(lib.global_variables_initializer())
            first, second = sess.run(samples), sess.run(samples)
            state = sess.run(gen.state)
        meta = {k: (v.dtype.name, v.shape.as_list()) for k, v in samples.items()}
    return first, second, state, meta, gen.algorithm


def test_generator_and_stateless_ops_match_tensorflows_distributions():
    tf1 = require_tensorflow()
    ours, again, state, meta, alg = _draws(tf)
    theirs, _, tf_state, tf_meta, tf_alg = _draws(tf1, session_config(tf1))
    assert meta == tf_meta and alg == tf_alg and state.shape == tf_state.shape == (3,)
    assert not np.array_equal(ours["normal"], again["normal"])  # each run advances the state
    np.testing.assert_array_equal(ours["stateless_binomial"], again["stateless_binomial"])
    np.testing.assert_array_equal(ours["fold_in"], again["fold_in"])
    assert ours["fold_in"][1] == 7 and len(set(map(tuple, ours["split"]))) == 3
    for key in ("normal", "uniform", "uniform_int", "truncated", "binomial", "truncated_param"):
        a, b = ours[key].astype(np.float64), theirs[key].astype(np.float64)
        assert abs(a.mean() - b.mean()) < 0.12 * max(1.0, abs(b.mean())), key
        assert abs(a.std() - b.std()) < 0.12 * b.std(), key
        assert a.min() >= b.min() - 0.5 * b.std() and a.max() <= b.max() + 0.5 * b.std(), key
    assert ours["uniform_int"].min() >= 2 and ours["uniform_int"].max() < 9
    assert ours["full_int"].min() < -2**30 and ours["full_int"].max() > 2**30
    assert 0.0 <= ours["truncated_param"].min() and ours["truncated_param"].max() <= 3.0
    means = ours["stateless_binomial"].mean(axis=0)
    np.testing.assert_allclose(means, [3.0, 24.0], rtol=0.08)


def test_generator_reproduces_from_its_seed_and_resets():
    with tf.Graph().as_default(), tf.Session() as sess:
        a, b = tf.random.Generator.from_seed(5), tf.random.Generator.from_seed(5)
        xa, xb = a.normal([3]), b.normal([3])
        sess.run(tf.global_variables_initializer())
        first = sess.run(xa)
        np.testing.assert_array_equal(first, sess.run(xb))
        sess.run(a.reset_from_seed(5))
        np.testing.assert_array_equal(sess.run(xa), first)
        children = a.split(2)
        sess.run([c.state.initializer for c in children])
        draws = [sess.run(c.normal([3])) for c in children]
        assert not np.array_equal(draws[0], draws[1])
        assert sess.run(a.make_seeds(4)).shape == (2, 4)


def test_global_generator_is_per_graph_and_replaceable():
    with tf.Graph().as_default():
        gen = tf.random.get_global_generator()
        assert tf.random.get_global_generator() is gen
        mine = tf.random.Generator.from_seed(1)
        tf.random.set_global_generator(mine)
        assert tf.random.get_global_generator() is mine
    with tf.Graph().as_default():
        assert tf.random.get_global_generator() is not mine
    with pytest.raises(ValueError, match="Unsupported RNG algorithm"):
        tf.random.create_rng_state(1, "mersenne")
