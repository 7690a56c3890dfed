"""Proximal optimizers: trajectories equal TensorFlow's (dense and sparse gradients)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

W0 = np.array([[0.5, -0.2], [0.05, 1.0], [-0.7, 0.3]], np.float32)
X = np.array([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0]], np.float32)


def _train(lib, make_opt, sparse: bool, config=None) -> list[np.ndarray]:
    with lib.Graph().as_default() as g:
        w = lib.get_variable("w", initializer=lib.constant(W0), use_resource=True)
        if sparse:
            rows = lib.nn.embedding_lookup(w, [0, 2, 0])
            loss = lib.reduce_sum(lib.square(rows - 0.1))
        else:
            loss = lib.reduce_sum(lib.square(lib.matmul(X, w) - 1.0))
        train = make_opt(lib).minimize(loss)
        with lib.Session(graph=g, config=config) as sess:
            sess.run(lib.global_variables_initializer())
            out = []
            for _ in range(3):
                sess.run(train)
                out.append(sess.run(w))
            return out


OPTIMIZERS = {
    "pgd": lambda lib: lib.train.ProximalGradientDescentOptimizer(0.05, 0.1, 0.2),
    "pgd_no_l1": lambda lib: lib.train.ProximalGradientDescentOptimizer(0.05, 0.0, 0.3),
    "padagrad": lambda lib: lib.train.ProximalAdagradOptimizer(0.3, 0.2, 0.05, 0.1),
}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_proximal_matches_tensorflow(name, sparse):
    tf1 = require_tensorflow()
    ours = _train(tf, OPTIMIZERS[name], sparse)
    theirs = _train(tf1, OPTIMIZERS[name], sparse, session_config(tf1))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not np.allclose(ours[-1], W0)


def test_initial_accumulator_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
