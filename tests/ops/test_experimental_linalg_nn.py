"""tf.linalg.experimental.conjugate_gradient against TensorFlow, and the properties of
tf.nn.experimental.stateless_dropout / general_dropout."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.RandomState(3)
M = RNG.rand(2, 4, 4)
SPD = M @ np.transpose(M, (0, 2, 1)) + 4 * np.eye(4)
RHS = RNG.rand(2, 4)


def _cg(tf, preconditioned, x0):
    with tf.Graph().as_default() as graph:
        op = tf.linalg.LinearOperatorFullMatrix(SPD, is_self_adjoint=True, is_positive_definite=True)
        pre = tf.linalg.LinearOperatorDiag(1.0 / np.diagonal(SPD, axis1=1, axis2=2), is_self_adjoint=True,
                                           is_positive_definite=True) if preconditioned else None
        state = tf.linalg.experimental.conjugate_gradient(op, tf.constant(RHS), preconditioner=pre,
                                                          x=None if x0 is None else tf.constant(x0), max_iter=3)
        with tf.Session(graph=graph, config=None if tf is flowmesh else session_config(tf)) as sess:
            return sess.run(list(state))


@pytest.mark.parametrize("preconditioned,x0", [(False, None), (True, None), (False, np.ones((2, 4)))])
def test_conjugate_gradient_matches_tensorflow(preconditioned, x0):
    tf1 = require_tensorflow()
    ours, theirs = _cg(flowmesh, preconditioned, x0), _cg(tf1, preconditioned, x0)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_conjugate_gradient_solves_and_rejects_unknown_operators():
    with flowmesh.Graph().as_default():
        op = flowmesh.linalg.LinearOperatorFullMatrix(SPD, is_self_adjoint=True, is_positive_definite=True)
        state = flowmesh.linalg.experimental.conjugate_gradient(op, RHS, tol=1e-12, max_iter=50)
        with flowmesh.Session() as sess:
            x = sess.run(state.x)
        np.testing.assert_allclose(x, np.linalg.solve(SPD, RHS[..., None])[..., 0], rtol=1e-8)
        with pytest.raises(ValueError, match="self-adjoint, positive definite"):
            flowmesh.linalg.experimental.conjugate_gradient(flowmesh.linalg.LinearOperatorFullMatrix(SPD), RHS)


def test_stateless_and_general_dropout():
    x = np.ones((200, 50), np.float32)
    with flowmesh.Graph().as_default():
        a = flowmesh.nn.experimental.stateless_dropout(x, rate=0.3, seed=[1, 2])
        b = flowmesh.nn.experimental.stateless_dropout(x, rate=0.3, seed=[1, 2])
        c = flowmesh.nn.experimental.stateless_dropout(x, rate=0.3, seed=[7, 2], noise_shape=[200, 1])
        same = flowmesh.nn.experimental.stateless_dropout(x, rate=0.0, seed=[1, 2])
        sampler = lambda shape, dtype: flowmesh.random.stateless_uniform(shape, seed=[4, 4], dtype=dtype)  # noqa: E731
        g = flowmesh.nn.experimental.general_dropout(x, 0.5, sampler)
        with flowmesh.Session() as sess:
            va, vb, vc, vs, vg = sess.run([a, b, c, same, g])
        with pytest.raises(flowmesh.errors.InvalidArgumentError):
            flowmesh.nn.experimental.stateless_dropout(x, rate=1.0, seed=[1, 2])
    np.testing.assert_array_equal(va, vb)  # deterministic in the seed
    assert set(np.unique(va)) <= {0.0, np.float32(1 / 0.7)} and abs((va == 0).mean() - 0.3) < 0.02
    assert all(len(set(row)) == 1 for row in vc)  # noise_shape [200, 1]: whole rows kept or dropped
    np.testing.assert_array_equal(vs, x)
    assert set(np.unique(vg)) <= {0.0, 2.0} and abs((vg == 0).mean() - 0.5) < 0.03
