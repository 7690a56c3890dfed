"""Bessel I0/I1 (scaled and not), incomplete gamma and beta functions, Hurwitz zeta,
nextafter and Sobol points: values against torch/NumPy references and TensorFlow, gradients
against finite differences (including ``dP(a, x)/da``, which torch lacks) and TensorFlow."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

X = Input((2, 3), low=-4.0, high=4.0, kind="nonzero")
POS = Input((2, 3), low=0.5, high=5.0)
SHAPE = Input((3,), low=0.6, high=4.0)
UNIT = Input((2, 3), low=0.05, high=0.95)
INT_SHAPE = Input((2, 3), maker=lambda rng: rng.integers(1, 7, (2, 3)), diff=False)
FRACTION = Input((2, 3), low=0.3, high=6.0, diff=False)


def _torch(fn):
    return lambda *a: fn(*[torch.from_numpy(np.asarray(v, np.float64)) for v in a]).numpy()


def _betainc_integer(a, b, x):
    """``I_x(a, b)`` for integer ``a, b``: the binomial tail ``P(Binomial(a+b-1, x) >= a)``."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        n = int(a[idx] + b[idx]) - 1
        out[idx] = sum(math.comb(n, j) * x[idx] ** j * (1.0 - x[idx]) ** (n - j) for j in range(int(a[idx]), n + 1))
    return out


SPECS = [
    OpSpec("bessel_i0", lambda tf, x: tf.math.bessel_i0(x), (X,), reference=_torch(torch.special.i0),
           second_order=True),
    OpSpec("bessel_i0e", lambda tf, x: tf.math.bessel_i0e(x), (X,), reference=_torch(torch.special.i0e)),
    OpSpec("bessel_i1", lambda tf, x: tf.math.bessel_i1(x), (X,), reference=_torch(torch.special.i1)),
    OpSpec("bessel_i1e", lambda tf, x: tf.math.bessel_i1e(x), (X,), reference=_torch(torch.special.i1e)),
    OpSpec("igamma", lambda tf, a, x: tf.math.igamma(a, x), (SHAPE, POS),
           reference=_torch(torch.special.gammainc), fd_tolerance=(1e-5, 1e-7)),
    OpSpec("igammac/large_x", lambda tf, a, x: tf.igammac(a, 3.0 * x), (SHAPE, POS),
           reference=lambda a, x: _torch(torch.special.gammaincc)(a, 3.0 * x), fd_tolerance=(1e-5, 1e-7)),
    OpSpec("betainc", lambda tf, a, b, x: tf.math.betainc(a, b, x), (INT_SHAPE, INT_SHAPE, UNIT),
           reference=_betainc_integer),
    OpSpec("betainc/fractional", lambda tf, a, b, x: tf.betainc(a, b, x), (FRACTION, FRACTION, UNIT)),
    OpSpec("zeta", lambda tf, x, q: tf.zeta(x + 1.5, q), (Input((2, 3), low=0.5, high=5.0, diff=False), POS),
           reference=lambda x, q: _torch(torch.special.zeta)(x + 1.5, q)),
    OpSpec("nextafter", lambda tf, x, y: tf.math.nextafter(x, y), (Input((2, 3)), Input((3,))),
           reference=lambda x, y: np.nextafter(x, y), dynamic=False),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_special_function(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_special_function_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


@pytest.mark.parametrize("dim,num,skip", [(1, 4, 0), (5, 7, 3), (40, 3, 100)])
def test_sobol_sample_is_tensorflows_sequence(dim, num, skip):
    import flowmesh as tf

    tf1 = require_tensorflow()
    values = []
    for lib in (tf, tf1):
        with lib.Graph().as_default() as g, lib.Session(graph=g) as sess:
            out = lib.math.sobol_sample(dim, num, skip=skip, dtype=lib.float64)
            assert out.shape.as_list() == [num, dim]
            values.append(sess.run(out))
    np.testing.assert_array_equal(values[0], values[1])


def test_bad_arguments_are_named():
    import flowmesh as tf

    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(TypeError, match="Igamma"):
            tf.math.igamma(tf.constant([1, 2]), tf.constant([1, 2]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="dim"):
            sess.run(tf.math.sobol_sample(0, 3))
    assert np.isnan(_run_betainc(-1.0, 2.0, 0.5))


def _run_betainc(a, b, x):
    import flowmesh as tf

    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(tf.math.betainc(a, b, x))


def test_tensorflow_runs_flowmeshs_graph_def_of_these_ops():
    """A GraphDef with decompositions and special functions, written by flowmesh, imported
    and run by TensorFlow, gives flowmesh's values (TensorFlow's op types and attrs)."""
    import flowmesh as tf

    tf1 = require_tensorflow()
    with tf.Graph().as_default() as g:
        a = tf.constant(np.arange(12.0).reshape(3, 4) % 5 + np.eye(3, 4))
        outs = [tf.linalg.svd(a, compute_uv=False), tf.abs(tf.linalg.qr(a)[1]), *tf.linalg.lu(a[:, :3]),
                tf.math.betainc(2.0 + a * 0, 3.0 + a * 0, a / 10.0), tf.math.igamma(a + 1.0, a),
                tf.math.bessel_i0e(a), tf.math.zeta(a + 2.0, a + 1.0), tf.math.sobol_sample(3, 4),
                tf.linalg.sqrtm(4.0 * tf.eye(3, dtype=tf.float64)), tf.math.nextafter(a, a + 1.0),
                tf.linalg.tridiagonal_solve(a[:, :3] + 5.0, a[:, :2]), tf.linalg.tridiagonal_matmul(a[:, :3], a[:, :2])]
        graph_def = g.as_graph_def()
        with tf.Session() as sess:
            ours = sess.run(outs)
    with tf1.Graph().as_default() as g2:
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with tf1.Session(graph=g2) as sess:
            theirs = sess.run([t.name for t in outs])
    for t, x, y in zip(outs, ours, theirs):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, err_msg=t.name)
