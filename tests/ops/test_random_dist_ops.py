"""Gamma/Poisson sampling (moments and the gamma reparameterization gradient, against
TensorFlow's on the same statistics) and the stateless ops (determinism, ranges, moments,
TensorFlow's shapes and dtypes; their values are not TensorFlow's Philox streams)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

ALPHA = np.array([0.5, 2.0, 5.0], np.float32)


def _gamma_stats(lib, config=None):
    with lib.Graph().as_default() as g:
        alpha = lib.constant(ALPHA)
        sample = lib.random.gamma([20000], alpha, beta=2.0, seed=7)
        grad = lib.gradients(lib.reduce_mean(sample, axis=0), alpha, grad_ys=lib.ones([3]))[0]
        poisson = lib.random.poisson([1.5, 4.0], [20000], seed=3)
        with lib.Session(graph=g, config=config) as sess:
            s, gr, p = sess.run([sample, grad, poisson])
    return s.mean(0), s.var(0), gr, p.mean(0), s.shape, p.dtype


def test_gamma_and_poisson_moments_and_gradient_match_tensorflow():
    tf1 = require_tensorflow()
    ours, theirs = _gamma_stats(tf), _gamma_stats(tf1, session_config(tf1))
    np.testing.assert_allclose(ours[0], ALPHA / 2.0, rtol=0.05)
    np.testing.assert_allclose(ours[1], ALPHA / 4.0, rtol=0.1)
    np.testing.assert_allclose(ours[2], np.full(3, 0.5), rtol=0.05)  # d E[x] / d alpha = 1 / beta
    np.testing.assert_allclose(ours[3], [1.5, 4.0], rtol=0.05)
    for a, b in zip(ours[:4], theirs[:4]):
        np.testing.assert_allclose(a, b, rtol=0.1)
    assert ours[4:] == theirs[4:]


STATELESS = {
    "uniform": lambda lib, seed: lib.random.stateless_uniform([4, 3], seed, minval=-1.0, maxval=2.0),
    "uniform_int": lambda lib, seed: lib.random.stateless_uniform([5], seed, minval=3, maxval=9, dtype=lib.int32),
    "normal": lambda lib, seed: lib.random.stateless_normal([1000], seed, mean=1.0, stddev=2.0),
    "truncated": lambda lib, seed: lib.random.stateless_truncated_normal([1000], seed),
    "categorical": lambda lib, seed: lib.random.stateless_categorical([[0.0, 2.0], [2.0, 0.0]], 500, seed),
    "gamma": lambda lib, seed: lib.random.stateless_gamma([500, 2], seed, alpha=[1.0, 3.0]),
    "poisson": lambda lib, seed: lib.random.stateless_poisson([500], seed, lam=3.0),
}


def _run(lib, build, seed, config=None):
    with lib.Graph().as_default() as g:
        out = build(lib, lib.constant(seed, lib.int64))
        with lib.Session(graph=g, config=config) as sess:
            return sess.run(out), out.dtype.name, out.shape.as_list()


@pytest.mark.parametrize("name", list(STATELESS))
def test_stateless_ops(name):
    tf1 = require_tensorflow()
    build = STATELESS[name]
    first, dtype, shape = _run(tf, build, [1, 2])
    again, _, _ = _run(tf, build, [1, 2])
    other, _, _ = _run(tf, build, [3, 4])
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    theirs, tf_dtype, tf_shape = _run(tf1, build, [1, 2], session_config(tf1))
    assert (dtype, shape, first.shape) == (tf_dtype, tf_shape, theirs.shape)
    if name == "uniform":
        assert first.min() >= -1.0 and first.max() < 2.0
    elif name == "uniform_int":
        assert first.min() >= 3 and first.max() < 9
    elif name == "normal":
        assert abs(first.mean() - 1.0) < 0.2 and abs(first.std() - 2.0) < 0.2
    elif name == "truncated":
        assert np.abs(first).max() <= 2.0
    elif name == "categorical":
        assert (first[0] == 1).mean() > 0.8 and (first[1] == 0).mean() > 0.8
    elif name == "gamma":
        np.testing.assert_allclose(first.mean(0), theirs.mean(0), rtol=0.2)
    else:
        assert abs(first.mean() - theirs.mean()) < 0.4
